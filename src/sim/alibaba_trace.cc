#include "sim/alibaba_trace.h"

#include <csv.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

namespace tessera {

namespace {

// Per-row bounds. They are far above anything in the trace and keep sums over thousands of rows
// well inside int64.
constexpr int64_t kMaxCpuMilli = 1'000'000'000;      // a million cores
constexpr int64_t kMaxMemoryMiB = int64_t{1} << 30;  // 1 PiB
constexpr int64_t kMaxGpusPerRow = 64;               // devices per node or per pod
constexpr int64_t kMaxSeconds = 1'000'000'000'000;   // exact as a double

// ---------------------------------------------------------------------------------------------
// CSV rows with their line numbers.
//
// libcsv reports fields and rows but not where they are, so the text is fed to it one physical
// line at a time; a row starts on the first non-blank line fed after the previous row ended (a
// quoted field may span lines). Only '\n' ends a row; '\r' counts as trailing space, so CRLF files
// work and the line count stays the plain count of '\n'.

struct CsvRow {
  int line = 0;
  std::vector<std::string> fields;
};

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

// ---------------------------------------------------------------------------------------------
// Columns looked up by name in the header.

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

std::string column_list(std::span<const ColumnSpec> wanted) {
  std::string names;
  for (const ColumnSpec& column : wanted) {
    if (!column.required) continue;
    if (!names.empty()) names += ',';
    names += column.name;
  }
  return names;
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

struct IntegerRule {
  int64_t min;
  int64_t max;
  std::string_view meaning;  // "millicores", "seconds", ...
};

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

  Result<int64_t> integer(size_t column, const IntegerRule& rule) const {
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

// Remembers the line where each name was first seen.
class NameRegistry {
 public:
  // Returns the earlier line when `name` was already seen.
  std::optional<int> add(const std::string& name, int line) {
    auto [entry, inserted] = first_line_.emplace(name, line);
    if (inserted) return std::nullopt;
    return entry->second;
  }

 private:
  std::unordered_map<std::string, int> first_line_;
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Node list.

enum NodeColumn : size_t { kSn, kNodeCpuMilli, kNodeMemoryMib, kNodeGpu, kNodeModel };
constexpr ColumnSpec kNodeColumns[] = {
    {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", true}};

constexpr IntegerRule kCpuMilliRule{0, kMaxCpuMilli, "millicores"};
constexpr IntegerRule kMemoryMibRule{0, kMaxMemoryMiB, "mebibytes"};
constexpr IntegerRule kGpuCountRule{0, kMaxGpusPerRow, "a GPU count"};

// Trace files re-exported through pandas write "nan" for an empty field.
constexpr std::string_view kPandasEmpty = "nan";

Result<GpuModelId> intern_model(const CsvRecord& record, std::string_view model, GpuModelCatalog& catalog) {
  if (model.find('|') != std::string_view::npos) {
    return record.error(kNodeModel, fmt::format("'{}' contains '|' (expected a GPU model name)", model));
  }
  std::optional<GpuModelId> id = catalog.intern(model);
  if (!id) {
    return record.error(kNodeModel, fmt::format("'{}' would be GPU model number {} (expected at most {} models)", model,
                                                catalog.size() + 1, GpuModelSet::kMaxModels));
  }
  return *id;
}

Status read_node(const CsvRecord& record, ClusterSpec& cluster, NameRegistry& names) {
  auto name = record.non_empty_text(kSn, "a node name");
  if (!name) return name.error();
  if (std::optional<int> earlier = names.add(*name, record.line())) {
    return record.error(
        kSn, fmt::format("duplicate node name '{}' (expected unique names; first on line {})", *name, *earlier));
  }
  auto cpu_milli = record.integer(kNodeCpuMilli, kCpuMilliRule);
  if (!cpu_milli) return cpu_milli.error();
  auto memory_mib = record.integer(kNodeMemoryMib, kMemoryMibRule);
  if (!memory_mib) return memory_mib.error();
  auto gpu_count = record.integer(kNodeGpu, kGpuCountRule);
  if (!gpu_count) return gpu_count.error();

  NodeSpec node;
  node.name = std::move(*name);
  node.allocatable = Resources{.cpu_milli = *cpu_milli, .memory_bytes = *memory_mib * kMiB};
  // A CPU-only node's model column is meaningless (the trace leaves it empty); it is ignored.
  if (*gpu_count > 0) {
    std::string_view model = record.text(kNodeModel);
    if (model.empty() || model == kPandasEmpty) {
      return record.error(kNodeModel,
                          fmt::format("is empty but the node has {} GPUs (expected a GPU model name)", *gpu_count));
    }
    auto model_id = intern_model(record, model, cluster.models);
    if (!model_id) return model_id.error();
    node.gpus.assign(static_cast<size_t>(*gpu_count),
                     GpuDevice{.model = *model_id, .memory_bytes = alibaba_gpu_memory_bytes(model)});
    node.labels.emplace(kGpuModelLabel, model);
  }
  cluster.nodes.push_back(std::move(node));
  return Ok{};
}

// ---------------------------------------------------------------------------------------------
// Pod list.

enum PodColumn : size_t {
  kPodName,
  kPodCpuMilli,
  kPodMemoryMib,
  kNumGpu,
  kGpuMilli,
  kGpuSpec,
  kCreationTime,
  kDeletionTime,
  kQos,
  kPodPhase,
  kScheduledTime,
};
constexpr ColumnSpec kPodColumns[] = {
    {"name", true},      {"cpu_milli", true},  {"memory_mib", true},      {"num_gpu", true},
    {"gpu_milli", true}, {"gpu_spec", false},  {"creation_time", true},   {"deletion_time", true},
    {"qos", false},      {"pod_phase", false}, {"scheduled_time", false},
};
// The same, for an experiment that needs no times (arrival mode).
constexpr ColumnSpec kUntimedPodColumns[] = {
    {"name", true},      {"cpu_milli", true},  {"memory_mib", true},      {"num_gpu", true},
    {"gpu_milli", true}, {"gpu_spec", false},  {"creation_time", false},  {"deletion_time", false},
    {"qos", false},      {"pod_phase", false}, {"scheduled_time", false},
};

constexpr IntegerRule kGpuMilliRule{1, kMilliPerGpu, "milli-GPUs of the one GPU"};
constexpr IntegerRule kAnyGpuMilliRule{0, std::numeric_limits<int64_t>::max(), "milli-GPUs"};
constexpr IntegerRule kSecondsRule{0, kMaxSeconds, "seconds"};

Result<GpuRequest> read_gpu_request(const CsvRecord& record) {
  auto num_gpu = record.integer(kNumGpu, kGpuCountRule);
  if (!num_gpu) return num_gpu.error();
  if (*num_gpu == 1) {
    auto gpu_milli = record.integer(kGpuMilli, kGpuMilliRule);
    if (!gpu_milli) return gpu_milli.error();
    if (*gpu_milli == kMilliPerGpu) return GpuRequest::whole(1);
    return GpuRequest::portion(static_cast<int>(*gpu_milli));
  }
  // gpu_milli only qualifies a single GPU; otherwise it is ignored, but must still be a number.
  if (!record.text(kGpuMilli).empty()) {
    if (auto ignored = record.integer(kGpuMilli, kAnyGpuMilliRule); !ignored) return ignored.error();
  }
  if (*num_gpu == 0) return GpuRequest::none();
  return GpuRequest::whole(static_cast<int>(*num_gpu));
}

Result<GpuModelSet> read_gpu_spec(const CsvRecord& record, const GpuModelCatalog& catalog) {
  GpuModelSet allowed = GpuModelSet::any();
  std::string_view spec = record.text(kGpuSpec);
  if (spec.empty() || spec == kPandasEmpty) return allowed;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    if (bar == std::string_view::npos) bar = spec.size();
    std::string_view model = trim(spec.substr(start, bar - start));
    start = bar + 1;
    if (model.empty()) {
      return record.error(kGpuSpec, fmt::format("'{}' has an empty model name (expected names separated by '|', "
                                                "like V100M16|V100M32)",
                                                spec));
    }
    std::optional<GpuModelId> id = catalog.find(model);
    if (!id) {
      return record.error(kGpuSpec, fmt::format("unknown GPU model '{}' in gpu_spec; {} (expected one of them)", model,
                                                catalog.description()));
    }
    allowed.add(*id);
  }
  return allowed;
}

Result<WorkloadSpec> read_pod(const CsvRecord& record, const ClusterSpec& cluster, NameRegistry& names) {
  auto name = record.non_empty_text(kPodName, "a pod name");
  if (!name) return name.error();
  if (std::optional<int> earlier = names.add(*name, record.line())) {
    return record.error(
        kPodName, fmt::format("duplicate pod name '{}' (expected unique names; first on line {})", *name, *earlier));
  }
  auto cpu_milli = record.integer(kPodCpuMilli, kCpuMilliRule);
  if (!cpu_milli) return cpu_milli.error();
  auto memory_mib = record.integer(kPodMemoryMib, kMemoryMibRule);
  if (!memory_mib) return memory_mib.error();
  auto gpu = read_gpu_request(record);
  if (!gpu) return gpu.error();
  auto allowed_models = read_gpu_spec(record, cluster.models);
  if (!allowed_models) return allowed_models.error();
  // Without times (arrival mode) every pod arrives at 0 and never ends.
  auto creation = record.has(kCreationTime) ? record.integer(kCreationTime, kSecondsRule) : Result<int64_t>(0);
  if (!creation) return creation.error();
  const bool timed = record.has(kCreationTime) && record.has(kDeletionTime);
  auto deletion = record.has(kDeletionTime) ? record.integer(kDeletionTime, kSecondsRule) : Result<int64_t>(*creation);
  if (!deletion) return deletion.error();
  if (*deletion < *creation) {
    return record.error(kDeletionTime, fmt::format("{} is before creation_time {} (expected deletion_time >= "
                                                   "creation_time)",
                                                   *deletion, *creation));
  }

  PodSpec pod;
  pod.name = *name;
  pod.request = Resources{.cpu_milli = *cpu_milli, .memory_bytes = *memory_mib * kMiB};
  pod.gpu = *gpu;
  // A model restriction only matters where there is a GPU to choose.
  if (pod.gpu.wants_gpu()) pod.allowed_models = *allowed_models;

  WorkloadSpec workload;
  workload.name = std::move(*name);
  workload.kind = WorkloadKind::kTrain;
  workload.preemptible = pod.preemptible;
  workload.priority = pod.priority;
  workload.pods.push_back(std::move(pod));
  workload.min_member = 1;
  workload.arrival_seconds = static_cast<double>(*creation);
  workload.duration_seconds = timed ? static_cast<double>(*deletion - *creation) : -1;
  return workload;
}

}  // namespace

int64_t alibaba_gpu_memory_bytes(std::string_view model) {
  struct ModelMemory {
    std::string_view model;
    int64_t gib;
  };
  constexpr ModelMemory kKnown[] = {{"V100M16", 16}, {"V100M32", 32}, {"P100", 16}, {"T4", 16},
                                    {"A10", 24},     {"G1", 32},      {"G2", 32},   {"G3", 32}};
  for (const ModelMemory& known : kKnown) {
    if (known.model == model) return known.gib * kGiB;
  }
  return 0;  // unknown: memory-based GPU requests cannot be placed on it (see GpuRequest)
}

Result<ClusterSpec> parse_alibaba_nodes(std::string_view csv_text, std::string_view source) {
  try {
    ClusterSpec cluster;
    NameRegistry names;
    Status status = for_each_record(csv_text, source, kNodeColumns,
                                    [&](const CsvRecord& record) { return read_node(record, cluster, names); });
    if (!status) return status.error();
    return cluster;
  } catch (const std::exception& error) {
    return Error{fmt::format("{}: {}", source, error.what())};
  }
}

Result<std::vector<WorkloadSpec>> parse_alibaba_pods(std::string_view csv_text, std::string_view source,
                                                     const ClusterSpec& cluster, std::string* untimed) {
  try {
    std::vector<WorkloadSpec> workloads;
    NameRegistry names;
    if (untimed != nullptr) untimed->clear();
    const std::span<const ColumnSpec> columns = untimed != nullptr ? std::span<const ColumnSpec>(kUntimedPodColumns)
                                                                   : std::span<const ColumnSpec>(kPodColumns);
    Status status = for_each_record(csv_text, source, columns, [&](const CsvRecord& record) -> Status {
      if (untimed != nullptr && untimed->empty()) {
        for (size_t column : {size_t{kCreationTime}, size_t{kDeletionTime}}) {
          if (record.has(column) || !untimed->empty()) continue;
          *untimed = fmt::format("{}: column '{}': missing from the header (a timeline replay needs "
                                 "creation_time and deletion_time; arrival mode needs neither)",
                                 source, record.header_name(column));
        }
      }
      auto workload = read_pod(record, cluster, names);
      if (!workload) return workload.error();
      workloads.push_back(std::move(*workload));
      return Ok{};
    });
    if (!status) return status.error();
    std::stable_sort(workloads.begin(), workloads.end(), [](const WorkloadSpec& a, const WorkloadSpec& b) {
      return a.arrival_seconds < b.arrival_seconds;
    });
    return workloads;
  } catch (const std::exception& error) {
    return Error{fmt::format("{}: {}", source, error.what())};
  }
}

}  // namespace tessera
