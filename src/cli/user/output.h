// What the user commands print, as kubectl prints it: `-o table` (the default, aligned columns),
// `-o wide` (more columns), `-o json` and `-o yaml` (the same data, whole, for scripts).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cli {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// "table", "wide", "json", "yaml"; nullopt for anything else.
std::optional<OutputFormat> parse_output_format(std::string_view name);
inline constexpr const char* kOutputFormatNames[] = {"table", "wide", "json", "yaml"};

struct Column {
  std::string header;
  bool wide_only = false;  // shown with -o wide only
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;  // each as many cells as columns

  Table& add_row(std::vector<std::string> cells);
};

// Columns left-aligned and separated by three spaces, as kubectl does; no trailing spaces. An
// empty cell prints "<none>"; with no row at all, `empty_message` alone (kubectl's "No resources
// found in namespace x.").
std::string render_table(const Table& table, bool wide, std::string_view empty_message);

// `data` as JSON (indented two spaces) for kJson or YAML for kYaml; nullopt for the table formats.
std::optional<std::string> render_data(OutputFormat format, const nlohmann::json& data);

// The table for kTable and kWide, else `data` as JSON (indented two spaces) or YAML.
std::string render(OutputFormat format, const Table& table, const nlohmann::json& data,
                   std::string_view empty_message);

// `text` cut to `width` characters (UTF-8 aware), ending in "..." when cut.
std::string shorten(std::string_view text, size_t width);

}  // namespace tessera::cli
