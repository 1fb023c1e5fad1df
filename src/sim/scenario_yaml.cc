#include "sim/scenario_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion; yaml.h does not include it
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/node_pool.h"
#include "policy/fair_share.h"
#include "policy/queue_validation.h"
#include "scheduler/work_limits.h"
#include "sim/alibaba_trace.h"
#include "wire/quantity.h"
#include "wire/taint_effect.h"

namespace tessera {

// ---------------------------------------------------------------------------------------------
// Kubernetes quantities, as the API server reads them; a scenario has no use for negative ones.

std::optional<int64_t> parse_cpu_milli(std::string_view text) {
  Result<int64_t> milli = wire::parse_quantity_milli(text);
  if (!milli || *milli < 0) return std::nullopt;
  return *milli;
}

std::optional<int64_t> parse_memory_bytes(std::string_view text) {
  Result<int64_t> bytes = wire::parse_quantity(text);
  if (!bytes || *bytes < 0) return std::nullopt;
  return *bytes;
}

// ---------------------------------------------------------------------------------------------
// Scenario YAML.

namespace {

// Bounds that keep a mistyped number from asking for billions of objects.
constexpr int64_t kMaxCount = 100'000;
constexpr int64_t kMaxNodes = 100'000;
constexpr int64_t kMaxGpusPerNode = 64;
constexpr int64_t kMaxGpusPerPod = 64;
constexpr int64_t kMaxPodsPerWorkload = 10'000;
constexpr int64_t kMaxPodsInScenario = 1'000'000;
constexpr size_t kMaxQueues = 10'000;
constexpr size_t kMaxLeafNamesShown = 6;
constexpr size_t kMaxQuotedLength = 40;

constexpr std::string_view kTopKeys[] = {"name", "cluster", "queues", "workloads"};
constexpr std::string_view kClusterKeys[] = {"alibaba_nodes", "nodes", "gpu_memory_overcommit"};
constexpr std::string_view kNodeKeys[] = {"name",      "count",      "cpu",    "memory", "gpus",
                                          "gpu_model", "gpu_memory", "labels", "taints", "schedulable"};
constexpr std::string_view kTaintKeys[] = {"key", "value", "effect"};
constexpr std::string_view kWorkloadSourceKeys[] = {"alibaba_pods"};
constexpr std::string_view kQueueKeys[] = {"name",  "parent", "priority", "preempt_min_runtime", "reclaim_min_runtime",
                                           "quota", "rules"};
constexpr std::string_view kRuleKindKeys[] = {"train", "interactive", "inference"};
constexpr std::string_view kRuleKeys[] = {"max_runtime",   "idle_limit",   "on_expiry",      "notice",
                                          "requeue_delay", "warmup_grace", "idle_threshold", "idle_window"};
constexpr std::string_view kUtilisationKeys[] = {"profile", "busy", "after", "burst", "period"};
constexpr std::string_view kQuotaKeys[] = {"deserved", "weight", "limit"};
constexpr std::string_view kWorkloadKeys[] = {"name",        "count",
                                              "queue",       "kind",
                                              "priority",    "preemptible",
                                              "arrival",     "arrival_interval",
                                              "duration",    "checkpoint_interval",
                                              "time_limit",  "pods",
                                              "min_member",  "pod",
                                              "max_runtime", "idle_limit",
                                              "utilisation"};  // what
constexpr std::string_view kPodKeys[] = {"cpu",         "memory",        "gpus",
                                         "gpu_portion", "gpu_memory",    "gpu_memory_limit",
                                         "gpu_models",  "node_selector", "tolerations"};
constexpr std::string_view kTolerationKeys[] = {"key", "operator", "value", "effect"};

std::string join_names(std::span<const std::string_view> names) { return fmt::format("{}", fmt::join(names, ", ")); }

std::string child_path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string item_path(std::string_view path, size_t index) { return fmt::format("{}[{}]", path, index); }

// yaml-cpp marks are 0-based (and -1 when unknown); messages are 1-based.
std::string location(std::string_view source, const YAML::Mark& mark) {
  return fmt::format("{}:{}:{}", source, std::max(mark.line, 0) + 1, std::max(mark.column, 0) + 1);
}

std::string in_quotes(std::string_view text) {
  if (text.size() <= kMaxQuotedLength) return fmt::format("'{}'", text);
  return fmt::format("'{}...'", text.substr(0, kMaxQuotedLength));
}

// What a node is, for "is ... (expected ...)".
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Scalar:
      return in_quotes(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      break;
  }
  return "missing";
}

// Keeps the first problem found while reading a scenario. Readers go on after a problem with
// harmless defaults, so the reading code needs no check after every field; whoever uses what
// was read checks failed() first.
class Problems {
 public:
  explicit Problems(std::string_view source) : source_(source) {}

  void report(const YAML::Mark& mark, std::string_view field, std::string_view what) {
    if (!first_) first_ = Error{fmt::format("{}: field '{}': {}", location(source_, mark), field, what)};
  }
  bool failed() const { return first_.has_value(); }
  const Error& first() const { return *first_; }
  std::string_view source() const { return source_; }

 private:
  std::string_view source_;
  std::optional<Error> first_;
};

// Where a value is, for messages: its field path and its mark. An empty value (`key:`) has no
// place of its own (yaml-cpp marks the next token), so it is placed at its key.
struct Place {
  std::string field;
  YAML::Mark mark;
};

Place place_of(const YAML::Node& value, const YAML::Mark& key_mark, std::string field) {
  return Place{std::move(field), value.IsNull() ? key_mark : value.Mark()};
}

Place place_of(const YAML::Node& item, std::string field) { return Place{std::move(field), item.Mark()}; }

// ----- Scalars -----

std::optional<std::string> read_string(Problems& problems, const YAML::Node& node, const Place& place,
                                       std::string_view expected) {
  if (!node.IsScalar()) {
    problems.report(place.mark, place.field, fmt::format("is {} (expected {})", describe(node), expected));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::string> read_name(Problems& problems, const YAML::Node& node, const Place& place,
                                     std::string_view expected) {
  auto text = read_string(problems, node, place, expected);
  if (text && text->empty()) {
    problems.report(place.mark, place.field, fmt::format("is an empty string (expected {})", expected));
    return std::nullopt;
  }
  return text;
}

std::optional<int64_t> read_integer(Problems& problems, const YAML::Node& node, const Place& place, int64_t min,
                                    int64_t max, std::string_view meaning) {
  const std::string expected = fmt::format("{}, a whole number from {} to {}", meaning, min, max);
  auto text = read_string(problems, node, place, expected);
  if (!text) return std::nullopt;
  int64_t value = 0;
  auto [end, status] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (status != std::errc() || end != text->data() + text->size()) {
    problems.report(place.mark, place.field,
                    fmt::format("{} is not a whole number (expected {})", in_quotes(*text), expected));
    return std::nullopt;
  }
  if (value < min || value > max) {
    std::string_view problem = value < 0 && min >= 0 ? "is negative" : "is out of range";
    problems.report(place.mark, place.field, fmt::format("{} {} (expected {})", value, problem, expected));
    return std::nullopt;
  }
  return value;
}

std::optional<double> read_number(Problems& problems, const YAML::Node& node, const Place& place,
                                  std::string_view expected) {
  auto text = read_string(problems, node, place, expected);
  if (!text) return std::nullopt;
  double value = 0;
  auto [end, status] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (status != std::errc() || end != text->data() + text->size() || !std::isfinite(value)) {
    problems.report(place.mark, place.field,
                    fmt::format("{} is not a number (expected {})", in_quotes(*text), expected));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> read_bool(Problems& problems, const YAML::Node& node, const Place& place) {
  constexpr std::string_view kExpected = "true or false";
  auto text = read_string(problems, node, place, kExpected);
  if (!text) return std::nullopt;
  if (*text == "true" || *text == "True" || *text == "TRUE") return true;
  if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  problems.report(place.mark, place.field,
                  fmt::format("{} is not a boolean (expected {})", in_quotes(*text), kExpected));
  return std::nullopt;
}

enum class QuantityKind { kCpu, kMemory };

std::optional<int64_t> read_quantity(Problems& problems, const YAML::Node& node, const Place& place,
                                     QuantityKind kind) {
  const std::string_view expected = kind == QuantityKind::kCpu
                                        ? "a CPU quantity such as 8, 1.5 or 500m"
                                        : "a memory quantity such as 64Gi, 512Mi, 1G or a number of bytes";
  auto text = read_string(problems, node, place, expected);
  if (!text) return std::nullopt;
  std::optional<int64_t> value = kind == QuantityKind::kCpu ? parse_cpu_milli(*text) : parse_memory_bytes(*text);
  if (!value) {
    std::string_view problem = text->starts_with('-') ? "is negative" : "is not a valid quantity";
    problems.report(place.mark, place.field, fmt::format("{} {} (expected {})", in_quotes(*text), problem, expected));
  }
  return value;
}

std::vector<YAML::Node> read_list(Problems& problems, const YAML::Node& node, const Place& place,
                                  std::string_view expected) {
  if (!node.IsSequence()) {
    problems.report(place.mark, place.field, fmt::format("is {} (expected {})", describe(node), expected));
    return {};
  }
  return std::vector<YAML::Node>(node.begin(), node.end());
}

// ----- Maps with a fixed set of keys -----

// A YAML map whose keys have been checked: each is one of `allowed`, and appears once.
class YamlMap {
 public:
  YamlMap(Problems& problems, const YAML::Node& node, const Place& place, std::span<const std::string_view> allowed)
      : problems_(problems), node_(node), path_(place.field) {
    if (!node.IsMap()) {
      problems.report(place.mark, path_.empty() ? "(top level)" : path_,
                      fmt::format("is {} (expected a map with keys: {})", describe(node), join_names(allowed)));
      return;
    }
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      const std::string name = key.IsScalar() ? key.Scalar() : describe(key);
      if (!key.IsScalar() || std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        problems.report(key.Mark(), child_path(path_, name),
                        fmt::format("unknown field (expected one of: {})", join_names(allowed)));
        continue;
      }
      if (find(name)) {
        problems.report(key.Mark(), child_path(path_, name), "appears twice (expected each field once)");
        continue;
      }
      entries_.push_back(Entry{name, key.Mark(), entry.second});
    }
  }

  Problems& problems() const { return problems_; }
  YAML::Mark mark() const { return node_.Mark(); }
  std::string field(std::string_view key) const { return child_path(path_, key); }
  bool has(std::string_view key) const { return find(key).has_value(); }

  std::optional<YAML::Node> find(std::string_view key) const {
    const Entry* entry = entry_of(key);
    return entry ? std::optional<YAML::Node>(entry->value) : std::nullopt;
  }

  // Where the key's value is; the map itself when the key is absent.
  Place value_place(std::string_view key) const {
    const Entry* entry = entry_of(key);
    return entry ? place_of(entry->value, entry->key_mark, field(key)) : Place{field(key), mark()};
  }

  // Reports a problem with a key's value.
  void report(std::string_view key, std::string_view what) const {
    const Place place = value_place(key);
    problems_.report(place.mark, place.field, what);
  }

  // Reports a key that should not be there, at the key.
  void report_key(std::string_view key, std::string_view what) const {
    const Entry* entry = entry_of(key);
    problems_.report(entry ? entry->key_mark : mark(), field(key), what);
  }

  // Reports a missing required field at the map.
  void require(std::string_view key, std::string_view expected) const {
    if (!has(key)) problems_.report(mark(), field(key), fmt::format("is missing (expected {})", expected));
  }

  std::optional<std::string> string(std::string_view key, std::string_view expected) const {
    const Entry* entry = entry_of(key);
    return entry ? read_string(problems_, entry->value, value_place(key), expected) : std::nullopt;
  }
  std::optional<std::string> name(std::string_view key, std::string_view expected) const {
    const Entry* entry = entry_of(key);
    return entry ? read_name(problems_, entry->value, value_place(key), expected) : std::nullopt;
  }
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max, std::string_view meaning) const {
    const Entry* entry = entry_of(key);
    return entry ? read_integer(problems_, entry->value, value_place(key), min, max, meaning) : std::nullopt;
  }
  std::optional<double> number(std::string_view key, std::string_view expected) const {
    const Entry* entry = entry_of(key);
    return entry ? read_number(problems_, entry->value, value_place(key), expected) : std::nullopt;
  }
  std::optional<bool> boolean(std::string_view key) const {
    const Entry* entry = entry_of(key);
    return entry ? read_bool(problems_, entry->value, value_place(key)) : std::nullopt;
  }
  std::optional<int64_t> quantity(std::string_view key, QuantityKind kind) const {
    const Entry* entry = entry_of(key);
    return entry ? read_quantity(problems_, entry->value, value_place(key), kind) : std::nullopt;
  }
  std::vector<YAML::Node> list(std::string_view key, std::string_view expected) const {
    const Entry* entry = entry_of(key);
    return entry ? read_list(problems_, entry->value, value_place(key), expected) : std::vector<YAML::Node>();
  }

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
  };

  const Entry* entry_of(std::string_view key) const {
    for (const Entry& entry : entries_) {
      if (entry.key == key) return &entry;
    }
    return nullptr;
  }

  Problems& problems_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
};

// ----- Labels, taints, tolerations -----

// Calls visit(name, value node, value place, key mark) for each entry of the map at `key`, whose
// names read as `name_meaning`; a value that is not a map is reported as not `expected`.
template <typename Visit>
void for_each_entry(const YamlMap& parent, std::string_view key, std::string_view name_meaning,
                    std::string_view expected, Visit visit) {
  auto node = parent.find(key);
  if (!node) return;
  const std::string path = parent.field(key);
  if (!node->IsMap()) {
    parent.report(key, fmt::format("is {} (expected {})", describe(*node), expected));
    return;
  }
  for (const auto& entry : *node) {
    auto name = read_name(parent.problems(), entry.first, place_of(entry.first, path), name_meaning);
    if (!name) continue;
    visit(*name, entry.second, place_of(entry.second, entry.first.Mark(), child_path(path, *name)), entry.first.Mark());
  }
}

Labels read_labels(const YamlMap& parent, std::string_view key) {
  Labels labels;
  Problems& problems = parent.problems();
  for_each_entry(parent, key, "a label name", "a map of label names to values",
                 [&](const std::string& name, const YAML::Node& value_node, const Place& place, const YAML::Mark& at) {
                   auto value = read_string(problems, value_node, place, "a label value (\"\" for an empty one)");
                   if (value && !labels.emplace(name, *value).second) {
                     problems.report(at, place.field, "appears twice (expected each label once)");
                   }
                 });
  return labels;
}

std::optional<TaintEffect> read_effect(const YamlMap& map, std::string_view key) {
  auto text = map.string(key, wire::kTaintEffectNames);
  if (!text) return std::nullopt;
  if (std::optional<TaintEffect> effect = wire::parse_taint_effect(*text)) return effect;
  map.report(key, fmt::format("{} is not a taint effect (expected {})", in_quotes(*text), wire::kTaintEffectNames));
  return std::nullopt;
}

std::vector<Taint> read_taints(const YamlMap& parent, std::string_view key) {
  std::vector<Taint> taints;
  const std::vector<YAML::Node> items = parent.list(key, "a list of taints {key, value, effect}");
  for (size_t i = 0; i < items.size(); ++i) {
    YamlMap map(parent.problems(), items[i], place_of(items[i], item_path(parent.field(key), i)), kTaintKeys);
    map.require("key", "the taint's key");
    map.require("effect", wire::kTaintEffectNames);
    Taint taint;
    taint.key = map.name("key", "the taint's key").value_or("");
    taint.value = map.string("value", "the taint's value").value_or("");
    taint.effect = read_effect(map, "effect").value_or(TaintEffect::kNoSchedule);
    taints.push_back(std::move(taint));
  }
  return taints;
}

std::vector<Toleration> read_tolerations(const YamlMap& parent, std::string_view key) {
  std::vector<Toleration> tolerations;
  const std::vector<YAML::Node> items = parent.list(key, "a list of tolerations {key, operator, value, effect}");
  for (size_t i = 0; i < items.size(); ++i) {
    YamlMap map(parent.problems(), items[i], place_of(items[i], item_path(parent.field(key), i)), kTolerationKeys);
    Toleration toleration;
    toleration.key = map.string("key", "the key of the taints tolerated").value_or("");
    toleration.value = map.string("value", "the value of the taints tolerated").value_or("");
    if (auto op = map.string("operator", "Equal or Exists")) {
      if (*op == "Exists") {
        toleration.op = Toleration::Operator::kExists;
      } else if (*op != "Equal") {
        map.report("operator", fmt::format("{} is not an operator (expected Equal or Exists)", in_quotes(*op)));
      }
    }
    if (map.has("effect")) toleration.effect = read_effect(map, "effect");
    // The rules Kubernetes applies to tolerations.
    if (toleration.op == Toleration::Operator::kExists && !toleration.value.empty()) {
      map.report_key("value", "is set with operator Exists (expected no value: Exists matches any value)");
    }
    if (toleration.op == Toleration::Operator::kEqual && toleration.key.empty()) {
      map.report("key",
                 "is missing or empty with operator Equal (expected a key, or operator Exists to tolerate "
                 "every taint)");
    }
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

// ----- References to Alibaba CSV files -----

struct ResolvedText {
  std::string reference;
  std::string text;
};

std::optional<ResolvedText> resolve_reference(const YamlMap& map, std::string_view key, const TextResolver& resolve) {
  auto reference = map.name(key, "a file path or builtin:NAME");
  if (!reference) return std::nullopt;
  if (!resolve) {
    map.report(key, "cannot be read here (expected the data inline)");
    return std::nullopt;
  }
  auto text = resolve(*reference);
  if (!text) {
    map.report(key, text.error().message);
    return std::nullopt;
  }
  return ResolvedText{std::move(*reference), std::move(*text)};
}

// ----- Cluster -----

struct ClusterPart {
  std::shared_ptr<const ClusterSpec> spec;
  std::string source;
};

std::string expanded_name(const std::string& name, int64_t count, int64_t index) {
  return count > 1 ? fmt::format("{}-{}", name, index) : name;
}

// Names already taken, and which entry took each, so a clash can name both.
class TakenNames {
 public:
  std::optional<std::string> take(const std::string& name, const std::string& entry) {
    auto [found, inserted] = owners_.emplace(name, entry);
    if (inserted) return std::nullopt;
    return found->second;
  }

 private:
  std::unordered_map<std::string, std::string> owners_;
};

void read_inline_node(Problems& problems, const YAML::Node& node, const std::string& path, ClusterSpec& cluster,
                      TakenNames& names) {
  YamlMap map(problems, node, place_of(node, path), kNodeKeys);
  map.require("name", "the node's name");
  map.require("cpu", "the node's allocatable CPU, such as 64");
  map.require("memory", "the node's allocatable memory, such as 512Gi");
  const std::string name = map.name("name", "the node's name").value_or("");
  const int64_t count = map.integer("count", 1, kMaxCount, "the number of such nodes").value_or(1);
  const int64_t cpu_milli = map.quantity("cpu", QuantityKind::kCpu).value_or(0);
  const int64_t memory_bytes = map.quantity("memory", QuantityKind::kMemory).value_or(0);
  const int64_t gpus = map.integer("gpus", 0, kMaxGpusPerNode, "the number of GPUs").value_or(0);
  std::string gpu_model;
  int64_t gpu_memory = 0;
  if (gpus > 0) {
    map.require("gpu_model", "the GPUs' model, such as A100, since gpus > 0");
    map.require("gpu_memory", "the memory of each GPU, such as 80Gi, since gpus > 0");
    gpu_model = map.name("gpu_model", "a GPU model name").value_or("");
    gpu_memory = map.quantity("gpu_memory", QuantityKind::kMemory).value_or(0);
    if (map.has("gpu_memory") && gpu_memory == 0) map.report("gpu_memory", "is 0 (expected more than 0 bytes)");
  } else {
    for (std::string_view key : {"gpu_model", "gpu_memory"}) {
      if (map.has(key)) map.report_key(key, "is given but the node has no GPUs (expected gpus > 0 with it)");
    }
  }
  Labels labels = read_labels(map, "labels");
  const std::vector<Taint> taints = read_taints(map, "taints");
  const bool schedulable = map.boolean("schedulable").value_or(true);
  if (problems.failed()) return;

  if (static_cast<int64_t>(cluster.nodes.size()) + count > kMaxNodes) {
    map.report("count",
               fmt::format("makes more than {} nodes (expected at most {} in a cluster)", kMaxNodes, kMaxNodes));
    return;
  }
  std::vector<GpuDevice> devices;
  if (gpus > 0) {
    std::optional<GpuModelId> model = cluster.models.intern(gpu_model);
    if (!model) {
      map.report("gpu_model", fmt::format("{} would be GPU model number {} (expected at most {} models)",
                                          in_quotes(gpu_model), cluster.models.size() + 1, GpuModelSet::kMaxModels));
      return;
    }
    devices.assign(static_cast<size_t>(gpus), GpuDevice{.model = *model, .memory_bytes = gpu_memory});
    labels.emplace(kGpuModelLabel, gpu_model);  // as for Alibaba nodes, unless the file sets it
  }
  for (int64_t i = 0; i < count; ++i) {
    NodeSpec spec;
    spec.name = expanded_name(name, count, i);
    if (auto owner = names.take(spec.name, path)) {
      map.report("name", fmt::format("makes node name {} that {} also makes (expected unique node names)",
                                     in_quotes(spec.name), *owner));
      return;
    }
    spec.allocatable = Resources{.cpu_milli = cpu_milli, .memory_bytes = memory_bytes};
    spec.gpus = devices;
    spec.labels = labels;
    spec.taints = taints;
    spec.schedulable = schedulable;
    cluster.nodes.push_back(std::move(spec));
  }
}

// A map of node pools (the label scheduling.tessera.dev/node-pool, "default" without it) to the
// ratio the GPU memory limits of a device's pods may reach of its memory.
GpuMemoryOvercommit read_overcommit(const YamlMap& parent, std::string_view key) {
  GpuMemoryOvercommit overcommit;
  Problems& problems = parent.problems();
  constexpr std::string_view kExpected = "a ratio from 1 to 8, such as 1.5";
  for_each_entry(parent, key, "a node pool name", "a map of node pools to ratios, such as {default: 1.5}",
                 [&](const std::string& pool, const YAML::Node& value_node, const Place& place, const YAML::Mark& at) {
                   auto ratio = read_number(problems, value_node, place, kExpected);
                   if (!ratio) return;
                   auto milli = gpu_memory_overcommit_milli(*ratio);
                   if (!milli) {
                     problems.report(place.mark, place.field,
                                     fmt::format("{} (expected {})", milli.error().message, kExpected));
                   } else if (!overcommit.milli_by_pool.emplace(pool, *milli).second) {
                     problems.report(at, place.field, "appears twice (expected each pool once)");
                   }
                 });
  return overcommit;
}

ClusterPart read_cluster(Problems& problems, const YAML::Node& node, const Place& place, const TextResolver& resolve) {
  YamlMap map(problems, node, place, kClusterKeys);
  const GpuMemoryOvercommit overcommit = read_overcommit(map, "gpu_memory_overcommit");
  const bool from_alibaba = map.has("alibaba_nodes");
  if (from_alibaba == map.has("nodes")) {
    map.report_key(from_alibaba ? "nodes" : "alibaba_nodes",
                   from_alibaba ? "is given together with alibaba_nodes (expected one of them)"
                                : "is missing (expected either alibaba_nodes or nodes)");
    return {};
  }
  if (from_alibaba) {
    auto resolved = resolve_reference(map, "alibaba_nodes", resolve);
    if (!resolved) return {};
    auto cluster = parse_alibaba_nodes(resolved->text, resolved->reference);
    if (!cluster) {
      map.report("alibaba_nodes", cluster.error().message);
      return {};
    }
    overcommit.apply_to(cluster->nodes);
    return {std::make_shared<const ClusterSpec>(std::move(*cluster)), std::move(resolved->reference)};
  }
  const std::vector<YAML::Node> items = map.list("nodes", "a list of nodes");
  if (items.empty()) map.report("nodes", "is an empty list (expected at least one node)");
  auto cluster = std::make_shared<ClusterSpec>();
  TakenNames names;
  for (size_t i = 0; i < items.size() && !problems.failed(); ++i) {
    read_inline_node(problems, items[i], item_path(map.field("nodes"), i), *cluster, names);
  }
  if (problems.failed()) return {};
  overcommit.apply_to(cluster->nodes);
  return {std::move(cluster), ""};
}

// ----- Queues -----

// A number >= 0, or nullopt when absent or wrong.
std::optional<double> non_negative_number(const YamlMap& map, std::string_view key, std::string_view expected) {
  auto value = map.number(key, expected);
  if (value && *value < 0) {
    map.report(key, fmt::format("{} is negative (expected {})", *value, expected));
    return std::nullopt;
  }
  return value;
}

// A number > 0, or nullopt when absent or wrong.
std::optional<double> positive_number(const YamlMap& map, std::string_view key, std::string_view expected) {
  auto value = map.number(key, expected);
  if (value && !(*value > 0)) {
    map.report(key, fmt::format("{} is not positive (expected {})", *value, expected));
    return std::nullopt;
  }
  return value;
}

// A percentage in [0, 100], or nullopt when absent or wrong.
std::optional<double> percentage(const YamlMap& map, std::string_view key, std::string_view expected) {
  auto value = non_negative_number(map, key, expected);
  if (value && *value > 100) {
    map.report(key, fmt::format("{} is more than 100 (expected {})", *value, expected));
    return std::nullopt;
  }
  return value;
}

WorkRules read_work_rule(Problems& problems, const YAML::Node& node, const Place& place) {
  YamlMap map(problems, node, place, kRuleKeys);
  WorkRules rules;
  rules.max_runtime_seconds =
      non_negative_number(map, "max_runtime", "the longest one run may last in seconds; 0: none");
  rules.idle_limit_seconds =
      non_negative_number(map, "idle_limit", "the longest its GPUs may stay idle in seconds; 0: none");
  if (auto action = map.string("on_expiry", "stop, requeue or preemptible")) {
    rules.on_expiry = parse_expiry_action(*action);
    if (!rules.on_expiry) {
      map.report("on_expiry",
                 fmt::format("{} is not an action (expected stop, requeue or preemptible)", in_quotes(*action)));
    }
  }
  rules.notice_seconds = non_negative_number(map, "notice", "seconds of notice before a limit acts, >= 0");
  rules.requeue_delay_seconds =
      non_negative_number(map, "requeue_delay", "seconds a requeued workload waits before it may run, >= 0");
  rules.warmup_grace_seconds =
      non_negative_number(map, "warmup_grace", "seconds after a start during which idle time is not counted, >= 0");
  rules.idle_threshold_pct =
      percentage(map, "idle_threshold", "the GPU utilisation in percent under which a GPU is idle");
  rules.idle_window_seconds =
      positive_number(map, "idle_window", "the seconds over which GPU utilisation is averaged, > 0");
  return rules;
}

// A queue's `rules`: per workload kind (train, interactive, inference), its time and idle limits.
WorkRulesByKind read_work_rules(const YamlMap& queue) {
  WorkRulesByKind rules;
  auto node = queue.find("rules");
  if (!node) return rules;
  YamlMap kinds(queue.problems(), *node, queue.value_place("rules"), kRuleKindKeys);
  for (size_t kind = 0; kind < kWorkloadKindCount; ++kind) {
    const std::string_view name = workload_kind_name(static_cast<WorkloadKind>(kind));
    if (auto rule = kinds.find(name)) rules[kind] = read_work_rule(queue.problems(), *rule, kinds.value_place(name));
  }
  return rules;
}

// How a quota's amounts are written and counted.
enum class QuotaUnit { kGpus, kCpu, kMemory };

std::string amount_text(double amount, QuotaUnit unit) {
  switch (unit) {
    case QuotaUnit::kGpus:
      return fmt::format("{} GPUs", amount);
    case QuotaUnit::kCpu:
      return fmt::format("{} millicores", amount);
    case QuotaUnit::kMemory:
      break;
  }
  return fmt::format("{} bytes", amount);
}

std::optional<double> quota_amount(const YamlMap& map, std::string_view key, QuotaUnit unit) {
  switch (unit) {
    case QuotaUnit::kGpus:
      return non_negative_number(map, key, "a number of GPUs >= 0, such as 8 or 0.5");
    case QuotaUnit::kCpu:
      if (auto milli = map.quantity(key, QuantityKind::kCpu)) return static_cast<double>(*milli);
      return std::nullopt;
    case QuotaUnit::kMemory:
      break;
  }
  if (auto bytes = map.quantity(key, QuantityKind::kMemory)) return static_cast<double>(*bytes);
  return std::nullopt;
}

QueueQuota read_quota_entry(Problems& problems, const YAML::Node& node, const Place& place, QuotaUnit unit) {
  YamlMap map(problems, node, place, kQuotaKeys);
  QueueQuota quota;
  quota.deserved = quota_amount(map, "deserved", unit).value_or(0);
  quota.over_quota_weight =
      non_negative_number(map, "weight", "an over-quota weight >= 0 (0: never more than deserved)").value_or(1);
  quota.limit = quota_amount(map, "limit", unit);
  if (quota.limit && *quota.limit < quota.deserved) {
    map.report("limit", fmt::format("{} is less than deserved, {} (expected a limit >= deserved)",
                                    amount_text(*quota.limit, unit), amount_text(quota.deserved, unit)));
  }
  return quota;
}

// The resource a quota key names, interned into `resources`, or nullopt after reporting why not.
std::optional<std::pair<ResourceId, QuotaUnit>> quota_resource(Problems& problems, const YAML::Node& key,
                                                               const std::string& field, const ClusterSpec* cluster,
                                                               ResourceNames& resources) {
  constexpr std::string_view kExpected = "gpu, cpu, memory or gpu/MODEL";
  const std::string& name = key.Scalar();
  if (name == kGpuResource) return std::pair{*resources.find(kGpuResource), QuotaUnit::kGpus};
  if (name == kCpuResource) return std::pair{*resources.find(kCpuResource), QuotaUnit::kCpu};
  if (name == kMemoryResource) return std::pair{*resources.find(kMemoryResource), QuotaUnit::kMemory};
  const std::string prefix = gpu_model_resource("");
  if (!name.starts_with(prefix)) {
    problems.report(key.Mark(), field, fmt::format("unknown resource (expected {})", kExpected));
    return std::nullopt;
  }
  const std::string_view model = std::string_view(name).substr(prefix.size());
  if (model.empty()) {
    problems.report(key.Mark(), field, "names no GPU model (expected gpu/MODEL, such as gpu/H100)");
    return std::nullopt;
  }
  if (cluster != nullptr && !cluster->models.find(model)) {
    problems.report(key.Mark(), field,
                    fmt::format("unknown GPU model {}; {} (expected one of them)", in_quotes(model),
                                cluster->models.description()));
    return std::nullopt;
  }
  const size_t standard = ResourceNames::standard().size();
  if (!resources.find(name) && resources.size() - standard >= static_cast<size_t>(GpuModelSet::kMaxModels)) {
    problems.report(key.Mark(), field,
                    fmt::format("would be GPU model resource number {} (expected at most {} models)",
                                resources.size() - standard + 1, GpuModelSet::kMaxModels));
    return std::nullopt;
  }
  return std::pair{resources.add(name), QuotaUnit::kGpus};
}

std::vector<QueueQuota> read_quota(const YamlMap& queue, const ClusterSpec* cluster, ResourceNames& resources) {
  std::vector<QueueQuota> quota;
  auto node = queue.find("quota");
  if (!node) return quota;
  Problems& problems = queue.problems();
  const std::string path = queue.field("quota");
  if (!node->IsMap()) {
    queue.report("quota", fmt::format("is {} (expected a map of resources (gpu, cpu, memory, gpu/MODEL) to "
                                      "{{deserved, weight, limit}})",
                                      describe(*node)));
    return quota;
  }
  std::vector<std::string> seen;
  for (const auto& entry : *node) {
    auto name =
        read_name(problems, entry.first, place_of(entry.first, path), "a resource: gpu, cpu, memory or gpu/MODEL");
    if (!name) continue;
    const std::string field = child_path(path, *name);
    if (std::find(seen.begin(), seen.end(), *name) != seen.end()) {
      problems.report(entry.first.Mark(), field, "appears twice (expected each resource once)");
      continue;
    }
    seen.push_back(*name);
    auto resource = quota_resource(problems, entry.first, field, cluster, resources);
    if (!resource) continue;
    const QueueQuota terms =
        read_quota_entry(problems, entry.second, place_of(entry.second, entry.first.Mark(), field), resource->second);
    if (quota.size() <= resource->first) quota.resize(resource->first + 1);
    quota[resource->first] = terms;
  }
  return quota;
}

// Where a queue entry and the fields a tree error can be about are, for messages.
struct QueuePlaces {
  Place entry;
  Place name;
  Place parent;
};

QueueSpec read_queue(Problems& problems, const YAML::Node& node, const std::string& path, const ClusterSpec* cluster,
                     ResourceNames& resources, std::vector<QueuePlaces>& places) {
  YamlMap map(problems, node, place_of(node, path), kQueueKeys);
  map.require("name", "the queue's name");
  QueueSpec spec;
  spec.name = map.name("name", "the queue's name").value_or("");
  spec.parent = map.string("parent", "the name of the parent queue, or \"\" for a top-level queue").value_or("");
  constexpr int64_t kIntMin = std::numeric_limits<int>::min();
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  spec.priority = static_cast<int>(map.integer("priority", kIntMin, kIntMax, "a priority").value_or(0));
  spec.preempt_min_runtime_seconds =
      non_negative_number(map, "preempt_min_runtime", "seconds a workload runs before it may be preempted, >= 0");
  spec.reclaim_min_runtime_seconds =
      non_negative_number(map, "reclaim_min_runtime", "seconds a workload runs before it may be reclaimed, >= 0");
  spec.quota = read_quota(map, cluster, resources);
  spec.work_rules = read_work_rules(map);
  places.push_back(QueuePlaces{place_of(node, path), map.value_place("name"), map.value_place("parent")});
  return spec;
}

// QueueTree::build's messages read "queue 'NAME': what was wrong"; reports one at the entry it
// names (for a duplicate, the second entry of that name).
void report_tree_error(Problems& problems, const Error& error, const std::vector<QueueSpec>& specs,
                       const std::vector<QueuePlaces>& places, const Place& section) {
  const std::string& message = error.message;
  std::vector<size_t> named;
  size_t prefix_length = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string prefix = fmt::format("queue '{}': ", specs[i].name);
    if (!message.starts_with(prefix) || prefix.size() < prefix_length) continue;
    if (prefix.size() > prefix_length) named.clear();
    prefix_length = prefix.size();
    named.push_back(i);
  }
  if (named.empty()) {
    problems.report(section.mark, section.field, message);
    return;
  }
  const size_t queue = named.size() > 1 ? named[1] : named[0];
  const std::string_view what = std::string_view(message).substr(prefix_length);
  if (what == "duplicate name") {
    problems.report(places[queue].name.mark, places[queue].name.field,
                    fmt::format("{} is the name of {} too (expected unique queue names)", in_quotes(specs[queue].name),
                                places[named[0]].entry.field));
  } else if (what.starts_with("parent forms a cycle")) {
    problems.report(places[queue].parent.mark, places[queue].parent.field,
                    fmt::format("{} (expected parents that lead up to a top-level queue)", what));
  } else if (what.starts_with("parent")) {
    problems.report(
        places[queue].parent.mark, places[queue].parent.field,
        fmt::format("{} (expected the name of a queue in this section, or \"\" for a top-level queue)", what));
  } else {
    problems.report(places[queue].entry.mark, places[queue].entry.field, message);
  }
}

struct QueuePart {
  std::vector<QueueSpec> specs;
  ResourceNames resources = ResourceNames::standard();
  std::optional<QueueTree> tree;  // set when the section is valid
  std::vector<std::string> warnings;
};

QueuePart read_queues(Problems& problems, const YAML::Node& node, const Place& place, const ClusterSpec* cluster) {
  QueuePart part;
  const std::vector<YAML::Node> items =
      read_list(problems, node, place, "a list of queues {name, parent, priority, quota, ...}");
  if (items.size() > kMaxQueues) {
    problems.report(place.mark, place.field,
                    fmt::format("has {} queues (expected at most {})", items.size(), kMaxQueues));
    return part;
  }
  std::vector<QueuePlaces> places;
  for (size_t i = 0; i < items.size() && !problems.failed(); ++i) {
    part.specs.push_back(read_queue(problems, items[i], item_path("queues", i), cluster, part.resources, places));
  }
  if (problems.failed()) return part;
  for (QueueSpec& spec : part.specs) spec.quota.resize(part.resources.size());
  auto tree = QueueTree::build(part.specs, part.resources);
  if (!tree) {
    report_tree_error(problems, tree.error(), part.specs, places, place);
    return part;
  }
  for (const QueueProblem& warning : quota_warnings(*tree)) {
    const auto queue = tree->find(warning.queue);
    const Place& entry = places[queue.value_or(0)].entry;
    part.warnings.push_back(
        fmt::format("{}: field '{}': {}", location(problems.source(), entry.mark), entry.field, warning.message));
  }
  part.tree.emplace(std::move(*tree));
  return part;
}

// "a, b, c" or "a, b, c, ... (40 in all)".
std::string leaf_names(const QueueTree& tree) {
  std::vector<std::string_view> names;
  for (QueueIndex leaf : tree.leaves()) {
    if (names.size() == kMaxLeafNamesShown) break;
    names.push_back(tree.spec(leaf).name);
  }
  std::string text = fmt::format("{}", fmt::join(names, ", "));
  if (tree.leaves().size() > names.size()) text += fmt::format(", ... ({} in all)", tree.leaves().size());
  return text;
}

// Why `queue` cannot hold workloads, or nullopt when it is a leaf of the tree.
std::optional<std::string> not_a_leaf(const QueueTree& tree, const std::string& queue) {
  auto index = tree.find(queue);
  if (index && tree.is_leaf(*index)) return std::nullopt;
  const std::string_view problem = index ? "has child queues" : "is not in the queues section";
  return fmt::format("queue {} {} (expected a leaf queue: {})", in_quotes(queue), problem, leaf_names(tree));
}

// ----- Workloads -----

GpuModelSet read_gpu_models(const YamlMap& pod, const GpuModelCatalog* catalog) {
  GpuModelSet allowed = GpuModelSet::any();
  const std::string path = pod.field("gpu_models");
  const std::vector<YAML::Node> items = pod.list("gpu_models", "a list of GPU model names");
  if (!items.empty() && catalog == nullptr) {
    pod.report("gpu_models",
               "no cluster to resolve GPU models against (expected a cluster section in this file or "
               "a cluster given alongside it)");
    return allowed;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    auto model = read_name(pod.problems(), items[i], place_of(items[i], item_path(path, i)), "a GPU model name");
    if (!model) continue;
    std::optional<GpuModelId> id = catalog->find(*model);
    if (!id) {
      pod.problems().report(
          items[i].Mark(), item_path(path, i),
          fmt::format("unknown GPU model {}; {} (expected one of them)", in_quotes(*model), catalog->description()));
      continue;
    }
    allowed.add(*id);
  }
  return allowed;
}

GpuRequest read_gpu_request(const YamlMap& pod) {
  constexpr std::string_view kGpuKeys[] = {"gpus", "gpu_portion", "gpu_memory"};
  std::optional<std::string_view> first_given;
  for (std::string_view key : kGpuKeys) {
    if (!pod.has(key)) continue;
    if (first_given) {
      pod.report_key(key, fmt::format("is given together with {} (expected at most one of: gpus, gpu_portion, "
                                      "gpu_memory)",
                                      *first_given));
      return GpuRequest::none();
    }
    first_given = key;
  }
  if (pod.has("gpu_memory_limit") && !pod.has("gpu_memory")) {
    pod.report_key("gpu_memory_limit", "is given without gpu_memory (expected gpu_memory with it)");
  }
  if (auto gpus = pod.integer("gpus", 1, kMaxGpusPerPod, "whole GPUs"))
    return GpuRequest::whole(static_cast<int>(*gpus));
  if (auto portion = pod.number("gpu_portion", "a portion of one GPU, 0 < p < 1, such as 0.5")) {
    if (*portion <= 0 || *portion >= 1) {
      pod.report("gpu_portion", fmt::format("{} is not between 0 and 1 (expected 0 < p < 1, such as 0.5; use gpus "
                                            "for whole GPUs)",
                                            *portion));
      return GpuRequest::none();
    }
    // Portions are kept in thousandths of a GPU, like the trace's gpu_milli.
    const long milli = std::lround(*portion * kMilliPerGpu);
    if (milli < 1 || milli >= kMilliPerGpu) {
      pod.report("gpu_portion",
                 fmt::format("{} rounds to {} thousandths of a GPU (expected 0.001 to 0.999)", *portion, milli));
      return GpuRequest::none();
    }
    return GpuRequest::portion(static_cast<int>(milli));
  }
  if (auto memory = pod.quantity("gpu_memory", QuantityKind::kMemory)) {
    if (*memory == 0) pod.report("gpu_memory", "is 0 (expected more than 0 bytes)");
    const int64_t limit = pod.quantity("gpu_memory_limit", QuantityKind::kMemory).value_or(*memory);
    if (limit < *memory) {
      pod.report("gpu_memory_limit", fmt::format("{} bytes is less than gpu_memory, {} bytes (expected a limit >= "
                                                 "the request)",
                                                 limit, *memory));
    }
    return GpuRequest::memory(*memory, limit);
  }
  return GpuRequest::none();
}

PodSpec read_pod_template(Problems& problems, const YAML::Node& node, const Place& place,
                          const GpuModelCatalog* catalog) {
  YamlMap map(problems, node, place, kPodKeys);
  PodSpec pod;
  pod.request.cpu_milli = map.quantity("cpu", QuantityKind::kCpu).value_or(0);
  pod.request.memory_bytes = map.quantity("memory", QuantityKind::kMemory).value_or(0);
  pod.gpu = read_gpu_request(map);
  if (map.has("gpu_models") && !pod.gpu.wants_gpu() && !problems.failed()) {
    map.report_key("gpu_models",
                   "is given but the pod asks for no GPU (expected gpus, gpu_portion or gpu_memory "
                   "with it)");
  }
  pod.allowed_models = read_gpu_models(map, catalog);
  pod.node_selector = read_labels(map, "node_selector");
  pod.tolerations = read_tolerations(map, "tolerations");
  return pod;
}

struct WorkloadBudget {
  TakenNames names;
  int64_t pods_left = kMaxPodsInScenario;
};

// A workload's `utilisation`: {profile: busy | idle_after | bursty | warmup, busy: percent,
// after: seconds (idle_after, warmup), burst and period: seconds (bursty)}.
UtilisationProfile read_utilisation(Problems& problems, const YAML::Node& node, const Place& place) {
  YamlMap map(problems, node, place, kUtilisationKeys);
  map.require("profile", "busy, idle_after, bursty or warmup");
  UtilisationProfile profile;
  if (auto text = map.string("profile", "busy, idle_after, bursty or warmup")) {
    if (auto shape = parse_utilisation_shape(*text)) {
      profile.shape = *shape;
    } else {
      map.report("profile", fmt::format("{} is not a utilisation profile (expected busy, idle_after, bursty or warmup)",
                                        in_quotes(*text)));
    }
  }
  profile.busy_pct = percentage(map, "busy", "the GPU utilisation in percent while busy").value_or(profile.busy_pct);
  const bool timed = profile.shape == UtilisationShape::kIdleAfter || profile.shape == UtilisationShape::kWarmup;
  if (timed) map.require("after", "the seconds of run time before it goes idle (idle_after) or busy (warmup)");
  profile.after_seconds = non_negative_number(map, "after", "seconds of run time, >= 0").value_or(0);
  if (profile.shape == UtilisationShape::kBursty) {
    map.require("burst", "the busy seconds at the start of each period");
    map.require("period", "the seconds between the starts of two bursts");
  }
  profile.burst_seconds = non_negative_number(map, "burst", "seconds, >= 0").value_or(0);
  profile.period_seconds = positive_number(map, "period", "seconds, > 0").value_or(0);
  if (profile.burst_seconds > profile.period_seconds && profile.period_seconds > 0) {
    map.report("burst", fmt::format("{} is longer than period, {} (expected at most the period)", profile.burst_seconds,
                                    profile.period_seconds));
  }
  for (std::string_view key : {"after", "burst", "period"}) {
    const bool used = key == "after" ? timed : profile.shape == UtilisationShape::kBursty;
    if (map.has(key) && !used) {
      map.report_key(
          key, fmt::format("does not apply to profile {} (expected it only with {})",
                           utilisation_shape_name(profile.shape), key == "after" ? "idle_after or warmup" : "bursty"));
    }
  }
  return profile;
}

void read_workload(Problems& problems, const YAML::Node& node, const std::string& path, const GpuModelCatalog* catalog,
                   const QueueTree* queues, WorkloadBudget& budget, std::vector<WorkloadSpec>& workloads) {
  YamlMap map(problems, node, place_of(node, path), kWorkloadKeys);
  map.require("name", "the workload's name");
  map.require("pod", "the pod template {cpu, memory, gpus, ...}");
  const std::string name = map.name("name", "the workload's name").value_or("");
  const int64_t count = map.integer("count", 1, kMaxCount, "the number of such workloads").value_or(1);
  const std::string queue = map.name("queue", "the name of a leaf queue").value_or("default");
  if (queues != nullptr && !problems.failed()) {
    if (auto problem = not_a_leaf(*queues, queue)) {
      map.report("queue", map.has("queue") ? *problem : fmt::format("is missing, so the workload is in {}", *problem));
    }
  }
  WorkloadKind kind = WorkloadKind::kTrain;
  if (auto text = map.string("kind", "train, interactive or inference")) {
    if (*text == "interactive") {
      kind = WorkloadKind::kInteractive;
    } else if (*text == "inference") {
      kind = WorkloadKind::kInference;
    } else if (*text != "train") {
      map.report("kind",
                 fmt::format("{} is not a workload kind (expected train, interactive or inference)", in_quotes(*text)));
    }
  }
  constexpr int64_t kIntMin = std::numeric_limits<int>::min();
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  const int priority = static_cast<int>(map.integer("priority", kIntMin, kIntMax, "a priority").value_or(0));
  const bool preemptible = map.boolean("preemptible").value_or(kind == WorkloadKind::kTrain);
  const double arrival = non_negative_number(map, "arrival", "seconds since the start, >= 0").value_or(0);
  const double arrival_interval =
      non_negative_number(map, "arrival_interval", "seconds between the arrivals of the count copies, >= 0")
          .value_or(0);
  if (!std::isfinite(arrival + static_cast<double>(count - 1) * arrival_interval)) {
    map.report("arrival_interval",
               fmt::format("{} makes arrival times too large to count (expected fewer seconds)", arrival_interval));
  }
  const double duration = map.number("duration", "seconds of run time, > 0").value_or(-1);
  if (map.has("duration") && duration <= 0 && !problems.failed()) {
    map.report("duration", fmt::format("{} is not positive (expected seconds of run time, > 0; omit it to run to "
                                       "the end)",
                                       duration));
  }
  const double checkpoint_interval = map.number("checkpoint_interval", "seconds of run time, > 0").value_or(0);
  if (map.has("checkpoint_interval") && checkpoint_interval <= 0 && !problems.failed()) {
    map.report("checkpoint_interval",
               fmt::format("{} is not positive (expected seconds of run time between checkpoints, > 0; omit it for "
                           "no checkpoints)",
                           checkpoint_interval));
  }
  const double time_limit = map.number("time_limit", "seconds of run time, > 0").value_or(0);
  if (map.has("time_limit") && time_limit <= 0 && !problems.failed()) {
    map.report("time_limit",
               fmt::format("{} is not positive (expected the longest a run may last in seconds, > 0; omit it for "
                           "no limit)",
                           time_limit));
  }
  const std::optional<double> max_runtime =
      positive_number(map, "max_runtime", "a shorter maximum runtime than its queue's, in seconds, > 0");
  const std::optional<double> idle_limit =
      positive_number(map, "idle_limit", "a shorter idle-GPU limit than its queue's, in seconds, > 0");
  UtilisationProfile utilisation;
  if (auto profile = map.find("utilisation"))
    utilisation = read_utilisation(problems, *profile, map.value_place("utilisation"));
  const int64_t pods = map.integer("pods", 1, kMaxPodsPerWorkload, "the number of pods in the group").value_or(1);
  const int64_t min_member =
      map.integer("min_member", 1, kMaxPodsPerWorkload, "pods that must run together").value_or(pods);
  if (min_member > pods) {
    map.report("min_member", fmt::format("{} is more than pods, {} (expected 1 to {})", min_member, pods, pods));
  }
  PodSpec pod;
  if (auto pod_node = map.find("pod")) pod = read_pod_template(problems, *pod_node, map.value_place("pod"), catalog);
  if (problems.failed()) return;

  if (count * pods > budget.pods_left) {
    map.report(map.has("count") ? "count" : "pods",
               fmt::format("makes the scenario larger than {} pods (expected fewer)", kMaxPodsInScenario));
    return;
  }
  budget.pods_left -= count * pods;
  pod.priority = priority;
  pod.preemptible = preemptible;
  for (int64_t i = 0; i < count; ++i) {
    WorkloadSpec workload;
    workload.name = expanded_name(name, count, i);
    if (auto owner = budget.names.take(workload.name, path)) {
      map.report("name", fmt::format("makes workload name {} that {} also makes (expected unique workload names)",
                                     in_quotes(workload.name), *owner));
      return;
    }
    workload.queue = queue;
    workload.kind = kind;
    workload.priority = priority;
    workload.preemptible = preemptible;
    workload.min_member = static_cast<int>(min_member);
    workload.arrival_seconds = arrival + static_cast<double>(i) * arrival_interval;
    workload.duration_seconds = duration;
    workload.checkpoint_interval_seconds = checkpoint_interval;
    workload.time_limit_seconds = time_limit;
    workload.max_runtime_seconds = max_runtime;
    workload.idle_limit_seconds = idle_limit;
    workload.utilisation = utilisation;
    workload.pods.reserve(static_cast<size_t>(pods));
    for (int64_t p = 0; p < pods; ++p) {
      PodSpec copy = pod;
      copy.name = fmt::format("{}-p{}", workload.name, p);
      workload.pods.push_back(std::move(copy));
    }
    workloads.push_back(std::move(workload));
  }
}

// A workload that asks for a longer limit than its queue allows gets the queue's; a warning says so.
void clamped_limit_warnings(const QueueTree& tree, const std::vector<WorkloadSpec>& workloads, std::string_view source,
                            std::vector<std::string>& warnings) {
  for (const WorkloadSpec& workload : workloads) {
    if (!workload.max_runtime_seconds && !workload.idle_limit_seconds) continue;
    const std::optional<QueueIndex> leaf = tree.find(workload.queue);
    if (!leaf) continue;
    for (const std::string& note : resolve_limits(tree, *leaf, workload).clamped)
      warnings.push_back(fmt::format("{}: workload '{}' {}", source, workload.name, note));
  }
}

struct WorkloadPart {
  std::vector<WorkloadSpec> workloads;
  std::string source;
};

WorkloadPart read_workloads(Problems& problems, const YAML::Node& node, const Place& place, const ClusterSpec* cluster,
                            const QueueTree* queues, const TextResolver& resolve) {
  WorkloadPart part;
  if (node.IsMap()) {
    YamlMap map(problems, node, place, kWorkloadSourceKeys);
    map.require("alibaba_pods", "a reference to an Alibaba pod list, such as builtin:default");
    auto resolved = problems.failed() ? std::nullopt : resolve_reference(map, "alibaba_pods", resolve);
    if (!resolved) return part;
    const ClusterSpec no_cluster;
    auto workloads = parse_alibaba_pods(resolved->text, resolved->reference, cluster ? *cluster : no_cluster);
    if (!workloads) {
      map.report("alibaba_pods", workloads.error().message);
      return part;
    }
    if (queues != nullptr) {
      for (const WorkloadSpec& workload : *workloads) {
        if (auto problem = not_a_leaf(*queues, workload.queue)) {
          map.report("alibaba_pods", fmt::format("workload {}: {}", in_quotes(workload.name), *problem));
          return part;
        }
      }
    }
    part.workloads = std::move(*workloads);
    part.source = std::move(resolved->reference);
    return part;
  }
  const std::vector<YAML::Node> items =
      read_list(problems, node, place, "a list of workloads, or a map with alibaba_pods");
  const GpuModelCatalog* catalog = cluster ? &cluster->models : nullptr;
  WorkloadBudget budget;
  for (size_t i = 0; i < items.size() && !problems.failed(); ++i) {
    read_workload(problems, items[i], item_path("workloads", i), catalog, queues, budget, part.workloads);
  }
  std::stable_sort(part.workloads.begin(), part.workloads.end(),
                   [](const WorkloadSpec& a, const WorkloadSpec& b) { return a.arrival_seconds < b.arrival_seconds; });
  return part;
}

// ----- The document -----

Result<ScenarioParts> read_scenario(const YAML::Node& root, std::string_view source, const TextResolver& resolve,
                                    const ClusterSpec* cluster_hint) {
  Problems problems(source);
  if (root.IsNull()) {
    problems.report(root.Mark(), "(top level)",
                    fmt::format("the file is empty (expected a map with keys: {})", join_names(kTopKeys)));
    return problems.first();
  }
  YamlMap top(problems, root, Place{"", root.Mark()}, kTopKeys);
  if (problems.failed()) return problems.first();

  ScenarioParts parts;
  parts.name =
      top.name("name", "the scenario's name").value_or(std::filesystem::path(std::string(source)).stem().string());
  if (auto node = top.find("cluster")) {
    ClusterPart cluster = read_cluster(problems, *node, top.value_place("cluster"), resolve);
    parts.cluster = std::move(cluster.spec);
    parts.cluster_source = std::move(cluster.source);
  }
  if (problems.failed()) return problems.first();
  const ClusterSpec* cluster = parts.cluster ? parts.cluster.get() : cluster_hint;
  QueuePart queues;
  if (auto node = top.find("queues")) {
    queues = read_queues(problems, *node, top.value_place("queues"), cluster);
    if (problems.failed()) return problems.first();
    parts.queues = queues.specs;
    parts.resources = queues.resources;
    parts.warnings = queues.warnings;
  }
  if (auto node = top.find("workloads")) {
    const QueueTree* tree = queues.tree ? &*queues.tree : nullptr;
    WorkloadPart workloads = read_workloads(problems, *node, top.value_place("workloads"), cluster, tree, resolve);
    parts.workloads = std::move(workloads.workloads);
    parts.workload_source = std::move(workloads.source);
    if (tree != nullptr && parts.workloads) clamped_limit_warnings(*tree, *parts.workloads, source, parts.warnings);
  }
  if (problems.failed()) return problems.first();
  return parts;
}

}  // namespace

Result<ScenarioParts> parse_scenario_yaml(std::string_view yaml_text, std::string_view source,
                                          const TextResolver& resolve, const ClusterSpec* cluster_hint) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    return read_scenario(root, source, resolve, cluster_hint);
  } catch (const YAML::DeepRecursion& error) {
    // yaml-cpp's own message for this is "bad file".
    return Error{
        fmt::format("{}: invalid YAML: nested more than {} levels deep (expected a scenario; see "
                    "docs/scenario-format.md)",
                    location(source, error.mark), error.depth() - 1)};
  } catch (const YAML::Exception& error) {
    // Syntax errors: there is no field yet, only a place.
    return Error{fmt::format("{}: invalid YAML: {} (expected well-formed YAML; see docs/scenario-format.md)",
                             location(source, error.mark), error.msg)};
  } catch (const std::exception& error) {
    return Error{fmt::format("{}: {}", source, error.what())};
  } catch (...) {
    return Error{fmt::format("{}: unexpected error while reading the scenario", source)};
  }
}

}  // namespace tessera
