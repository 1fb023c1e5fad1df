// CSV files read into rows that remember their line, with columns looked up by name in the
// header and fields read through rules that say what was expected: the one reader of the trace
// files the simulator takes (Alibaba node and pod lists, LLM request traces).
//
// libcsv reports fields and rows but not where they are, so the text is fed to it one physical
// line at a time; a row starts on the first non-blank line fed after the previous row ended (a
// quoted field may span lines). Only '\n' ends a row; '\r' counts as trailing space, so CRLF files
// work and the line count stays the plain count of '\n'. Errors name the source, the 1-based line
// and the column.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace tessera {

struct CsvRow {
  int line = 0;
  std::vector<std::string> fields;
};

Result<std::vector<CsvRow>> read_csv_rows(std::string_view text, std::string_view source);

struct ColumnSpec {
  std::string_view name;
  bool required;
};

// Where each wanted column sits in the file; nullopt for an absent optional column.
struct ColumnLayout {
  std::span<const ColumnSpec> wanted;
  std::vector<std::optional<size_t>> position;
  std::vector<std::string> header;
};

// The layout of `wanted` in the header (the first row); an error names a required column missing.
Result<ColumnLayout> locate_columns(const std::vector<CsvRow>& rows, std::span<const ColumnSpec> wanted,
                                    std::string_view source);

struct IntegerRule {
  int64_t min;
  int64_t max;
  std::string_view meaning;  // "millicores", "seconds", ...
};

// One data row, read through the header's layout. Errors name the source, line and column.
class CsvRecord {
 public:
  CsvRecord(std::string_view source, const CsvRow& row, const ColumnLayout& layout)
      : source_(source), row_(row), layout_(layout) {}

  int line() const { return row_.line; }

  Status check_width() const {
    const size_t width = row_.fields.size();
    const size_t header_width = layout_.header.size();
    if (width == header_width) return Ok{};
    // Name the first column that is missing, or the first one too many.
    const std::string column = width < header_width ? layout_.header[width] : fmt::format("#{}", header_width + 1);
    return Error{fmt::format("{}:{}: column '{}': the row has {} fields (expected {}, as in the header)", source_,
                             line(), column, width, header_width)};
  }

  // Whether the file has the column (always, for a required one).
  bool has(size_t column) const { return layout_.position[column].has_value(); }
  std::string_view header_name(size_t column) const { return layout_.wanted[column].name; }

  // The field's text; empty for an optional column the file does not have.
  std::string_view text(size_t column) const {
    const std::optional<size_t> position = layout_.position[column];
    return position ? std::string_view(row_.fields[*position]) : std::string_view();
  }

  Error error(size_t column, std::string_view what) const {
    return Error{fmt::format("{}:{}: column '{}': {}", source_, line(), layout_.wanted[column].name, what)};
  }

  Result<std::string> non_empty_text(size_t column, std::string_view meaning) const {
    std::string_view value = text(column);
    if (value.empty()) return error(column, fmt::format("is empty (expected {})", meaning));
    return std::string(value);
  }

  Result<int64_t> integer(size_t column, const IntegerRule& rule) const;

 private:
  std::string_view source_;
  const CsvRow& row_;
  const ColumnLayout& layout_;
};

// Reads the rows of a CSV file with `wanted` columns and hands each data row to `read_row`.
template <typename ReadRow>
Status for_each_record(std::string_view csv_text, std::string_view source, std::span<const ColumnSpec> wanted,
                       ReadRow read_row) {
  auto rows = read_csv_rows(csv_text, source);
  if (!rows) return rows.error();
  auto layout = locate_columns(*rows, wanted, source);
  if (!layout) return layout.error();
  for (size_t i = 1; i < rows->size(); ++i) {
    CsvRecord record(source, (*rows)[i], *layout);
    if (auto width = record.check_width(); !width) return width.error();
    if (auto status = read_row(record); !status) return status.error();
  }
  return Ok{};
}

}  // namespace tessera
