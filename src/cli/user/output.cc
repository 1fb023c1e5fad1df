#include "cli/user/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cli/user/yaml_text.h"

namespace tessera::cli {

namespace {

// Characters on a terminal: UTF-8 continuation bytes take no column.
size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(),
                                           [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "wide") return OutputFormat::kWide;
  if (name == "json") return OutputFormat::kJson;
  if (name == "yaml") return OutputFormat::kYaml;
  return std::nullopt;
}

Table& Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns.size()) {
    throw std::logic_error(fmt::format("a table row of {} cells for {} columns", cells.size(), columns.size()));
  }
  rows.push_back(std::move(cells));
  return *this;
}

std::string render_table(const Table& table, bool wide, std::string_view empty_message) {
  if (table.rows.empty()) return fmt::format("{}\n", empty_message);
  std::vector<size_t> shown;
  for (size_t column = 0; column < table.columns.size(); ++column) {
    if (wide || !table.columns[column].wide_only) shown.push_back(column);
  }
  const auto cell = [&](const std::vector<std::string>& row, size_t column) -> std::string_view {
    return row[column].empty() ? std::string_view("<none>") : std::string_view(row[column]);
  };
  std::vector<size_t> widths(table.columns.size(), 0);
  for (size_t column : shown) {
    widths[column] = display_width(table.columns[column].header);
    for (const auto& row : table.rows) widths[column] = std::max(widths[column], display_width(cell(row, column)));
  }
  std::string out;
  const auto line = [&](const auto& text_of) {
    std::string text;
    for (size_t i = 0; i < shown.size(); ++i) {
      const std::string_view value = text_of(shown[i]);
      text += value;
      if (i + 1 < shown.size()) text.append(widths[shown[i]] - display_width(value) + 3, ' ');
    }
    out += text + "\n";
  };
  line([&](size_t column) { return std::string_view(table.columns[column].header); });
  for (const auto& row : table.rows) line([&](size_t column) { return cell(row, column); });
  return out;
}

std::optional<std::string> render_data(OutputFormat format, const nlohmann::json& data) {
  switch (format) {
    case OutputFormat::kJson:
      return data.dump(2) + "\n";
    case OutputFormat::kYaml:
      return yaml_text(data);
    case OutputFormat::kTable:
    case OutputFormat::kWide:
      break;
  }
  return std::nullopt;
}

std::string render(OutputFormat format, const Table& table, const nlohmann::json& data,
                   std::string_view empty_message) {
  if (std::optional<std::string> text = render_data(format, data)) return *text;
  return render_table(table, format == OutputFormat::kWide, empty_message);
}

std::string shorten(std::string_view text, size_t width) {
  if (display_width(text) <= width || width < 4) return std::string(text);
  std::string out;
  size_t shown = 0;
  for (char c : text) {
    const bool starts_character = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (starts_character && ++shown > width - 3) break;
    out += c;
  }
  return out + "...";
}

}  // namespace tessera::cli
