// tessera: the command-line entry point.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU-aware batch scheduler and policy lab"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
