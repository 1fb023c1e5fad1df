#include "sim/csv_records.h"

#include <csv.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>
#include <utility>

namespace tessera {

namespace {

struct CsvCollector {
  std::vector<CsvRow> rows;
  CsvRow current;
  int row_start_line = 0;  // 0 while no row is in progress
  bool out_of_memory = false;
};

int is_csv_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' ? 1 : 0; }
int is_csv_terminator(unsigned char c) { return c == '\n' ? 1 : 0; }

bool is_blank_line(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return is_csv_space(static_cast<unsigned char>(c)) || c == '\n'; });
}

// libcsv calls these from C: they must not throw.
void on_csv_field(void* data, size_t size, void* context) noexcept {
  auto* collector = static_cast<CsvCollector*>(context);
  try {
    if (size == 0) {
      collector->current.fields.emplace_back();
    } else {
      collector->current.fields.emplace_back(static_cast<const char*>(data), size);
    }
  } catch (...) {
    collector->out_of_memory = true;
  }
}

void on_csv_row(int /*terminator*/, void* context) noexcept {
  auto* collector = static_cast<CsvCollector*>(context);
  try {
    collector->current.line = collector->row_start_line;
    collector->rows.push_back(std::move(collector->current));
  } catch (...) {
    collector->out_of_memory = true;
  }
  collector->current = CsvRow{};
  collector->row_start_line = 0;
}

// Owns a libcsv parser so it is freed on every path.
class CsvParser {
 public:
  CsvParser() : ready_(csv_init(&parser_, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) == 0) {
    if (ready_) {
      csv_set_space_func(&parser_, is_csv_space);
      csv_set_term_func(&parser_, is_csv_terminator);
    }
  }
  ~CsvParser() {
    if (ready_) csv_free(&parser_);
  }
  CsvParser(const CsvParser&) = delete;
  CsvParser& operator=(const CsvParser&) = delete;

  bool ready() const { return ready_; }
  csv_parser* get() { return &parser_; }

 private:
  csv_parser parser_{};
  bool ready_;
};

std::string column_label(const std::vector<CsvRow>& rows, size_t field_index) {
  if (!rows.empty() && field_index < rows.front().fields.size()) return rows.front().fields[field_index];
  return fmt::format("#{}", field_index + 1);
}

std::string column_list(std::span<const ColumnSpec> wanted) {
  std::string names;
  for (const ColumnSpec& column : wanted) {
    if (!column.required) continue;
    if (!names.empty()) names += ',';
    names += column.name;
  }
  return names;
}

std::string expectation(const IntegerRule& rule) {
  if (rule.max == std::numeric_limits<int64_t>::max()) {
    return fmt::format("expected {}, a whole number >= {}", rule.meaning, rule.min);
  }
  return fmt::format("expected {}, a whole number from {} to {}", rule.meaning, rule.min, rule.max);
}

bool looks_like_decimal(std::string_view text) {
  double ignored = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ignored);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<std::vector<CsvRow>> read_csv_rows(std::string_view text, std::string_view source) {
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());

  CsvParser parser;
  if (!parser.ready()) return Error{fmt::format("{}: cannot start the CSV parser (out of memory)", source)};
  CsvCollector collector;
  int line_number = 0;
  size_t position = 0;
  while (position < text.size()) {
    size_t end = text.find('\n', position);
    end = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(position, end - position);
    position = end;
    ++line_number;
    if (collector.row_start_line == 0 && !is_blank_line(line)) collector.row_start_line = line_number;
    if (csv_parse(parser.get(), line.data(), line.size(), on_csv_field, on_csv_row, &collector) != line.size()) {
      if (csv_error(parser.get()) != CSV_EPARSE) {
        return Error{fmt::format("{}:{}: {}", source, line_number, csv_strerror(csv_error(parser.get())))};
      }
      return Error{
          fmt::format("{}:{}: column '{}': malformed quoting (expected a field either without '\"' or wholly inside "
                      "\"...\", with \"\" for a quote inside it)",
                      source, line_number, column_label(collector.rows, collector.current.fields.size()))};
    }
    if (collector.out_of_memory) return Error{fmt::format("{}:{}: out of memory", source, line_number)};
  }
  const int open_row_line = collector.row_start_line;
  if (csv_fini(parser.get(), on_csv_field, on_csv_row, &collector) != 0) {
    return Error{fmt::format("{}:{}: column '{}': quoted field never closed (expected a closing '\"')", source,
                             open_row_line, column_label(collector.rows, collector.current.fields.size()))};
  }
  if (collector.out_of_memory) return Error{fmt::format("{}: out of memory", source)};
  return std::move(collector.rows);
}

Result<ColumnLayout> locate_columns(const std::vector<CsvRow>& rows, std::span<const ColumnSpec> wanted,
                                    std::string_view source) {
  if (rows.empty()) {
    return Error{fmt::format("{}:1: column '{}': missing, the file is empty (expected a header row: {})", source,
                             wanted.front().name, column_list(wanted))};
  }
  const std::vector<std::string>& header = rows.front().fields;
  const int header_line = rows.front().line;
  std::unordered_map<std::string_view, size_t> index_of;
  for (size_t i = 0; i < header.size(); ++i) {
    if (!index_of.emplace(header[i], i).second) {
      return Error{fmt::format("{}:{}: column '{}': appears twice in the header (expected each column once)", source,
                               header_line, header[i])};
    }
  }
  ColumnLayout layout{.wanted = wanted, .position = {}, .header = header};
  for (const ColumnSpec& column : wanted) {
    auto found = index_of.find(column.name);
    if (found == index_of.end() && column.required) {
      return Error{fmt::format("{}:{}: column '{}': missing from the header (expected a header row with {})", source,
                               header_line, column.name, column_list(wanted))};
    }
    layout.position.push_back(found == index_of.end() ? std::nullopt : std::optional<size_t>(found->second));
  }
  return layout;
}

Result<int64_t> CsvRecord::integer(size_t column, const IntegerRule& rule) const {
  std::string_view value = text(column);
  if (value.empty()) return error(column, fmt::format("is empty ({})", expectation(rule)));
  int64_t number = 0;
  auto [end, status] = std::from_chars(value.data(), value.data() + value.size(), number);
  const bool whole_text = end == value.data() + value.size();
  if (status == std::errc::result_out_of_range && whole_text) {
    std::string_view problem = value.starts_with('-') ? "is negative" : "is too large";
    return error(column, fmt::format("'{}' {} ({})", value, problem, expectation(rule)));
  }
  if (status != std::errc() || !whole_text) {
    std::string_view problem = looks_like_decimal(value) ? "is not a whole number" : "is not a number";
    return error(column, fmt::format("'{}' {} ({})", value, problem, expectation(rule)));
  }
  if (number < 0 && rule.min >= 0) {
    return error(column, fmt::format("{} is negative ({})", number, expectation(rule)));
  }
  if (number < rule.min || number > rule.max) {
    return error(column, fmt::format("{} is out of range ({})", number, expectation(rule)));
  }
  return number;
}

}  // namespace tessera
