#include "cli/user/bash_completion.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace tessera::cli {

namespace {

struct CommandWords {
  std::string path;  // the command's words after the program, space-separated; "" for the program
  std::vector<std::string> subcommands;
  std::vector<std::string> flags;                                   // every option name
  std::vector<std::pair<std::string, std::string>> value_choices;   // option name -> "a b c", "" for files
};

// The choices of an option checked with CLI::IsMember, from its type name ("TEXT:{a,b,c}").
std::string choices_of(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const size_t open = type.find('{'), close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  std::string choices = type.substr(open + 1, close - open - 1);
  std::replace(choices.begin(), choices.end(), ',', ' ');
  return choices;
}

void collect(const CLI::App& app, const std::string& path, std::vector<CommandWords>& out) {
  CommandWords words{path, {}, {}, {}};
  const std::vector<const CLI::App*> subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* subcommand : subcommands) {
    words.subcommands.push_back(subcommand->get_name());
    for (const std::string& alias : subcommand->get_aliases()) words.subcommands.push_back(alias);
  }
  for (const CLI::Option* option : app.get_options()) {
    if (!option->nonpositional()) continue;
    std::vector<std::string> names;
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    for (const std::string& name : names) {
      words.flags.push_back(name);
      if (option->get_expected_min() > 0) words.value_choices.emplace_back(name, choices_of(*option));
    }
  }
  out.push_back(words);
  for (const CLI::App* subcommand : subcommands) {
    collect(*subcommand, path.empty() ? subcommand->get_name() : path + " " + subcommand->get_name(), out);
    for (const std::string& alias : subcommand->get_aliases()) {
      collect(*subcommand, path.empty() ? alias : path + " " + alias, out);
    }
  }
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

std::string bash_completion_script(const CLI::App& app, const std::string& program) {
  std::vector<CommandWords> commands;
  collect(app, "", commands);
  const std::string function = "_" + program + "_complete";
  std::string known_paths, words_of, values_of;
  for (const CommandWords& command : commands) {
    if (!command.path.empty()) known_paths += fmt::format("      \"{}\") ;;\n", command.path);
    words_of += fmt::format("    \"{}\") words=\"{}\" ;;\n", command.path,
                            joined(command.subcommands) + (command.subcommands.empty() ? "" : " ") + joined(command.flags));
    for (const auto& [flag, choices] : command.value_choices) {
      values_of += fmt::format("    \"{}|{}\") {} ;;\n", command.path, flag,
                               choices.empty() ? "COMPREPLY=($(compgen -f -- \"$cur\"))"
                                               : fmt::format("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))", choices));
    }
  }
  return fmt::format(R"(# bash completion for {program}, made by `{program} completion bash` from its own commands.
# Load it with: source <({program} completion bash)
{function}() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" path="" word candidate i
  # The command so far: each word that names a subcommand of the words before it.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${{COMP_WORDS[i]}}"
    candidate="${{path:+$path }}$word"
    case "$candidate" in
{known_paths}      *) continue ;;
    esac
    path="$candidate"
  done
  # An option that takes a value: its choices, or file names.
  case "$path|$prev" in
{values_of}  esac
  [[ -n "${{COMPREPLY[*]}}" ]] && return 0
  local words=""
  case "$path" in
{words_of}  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -F {function} {program}
complete -F {function} kubectl-{program}
)",
                     fmt::arg("program", program), fmt::arg("function", function), fmt::arg("known_paths", known_paths),
                     fmt::arg("values_of", values_of), fmt::arg("words_of", words_of));
}

}  // namespace tessera::cli
