// A Queue custom resource read into a QueueSpec (deploy/crds/queues.yaml).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "kube/informer.h"
#include "wire/duration.h"
#include "wire/quantity.h"

namespace tessera::adapter {

namespace {

// The unit the engine counts a resource in.
enum class QuotaUnit : uint8_t { kGpus, kMillicores, kBytes };

constexpr std::string_view kQuotaTerms[] = {"deserved", "overQuotaWeight", "limit"};

// A quota amount, written as a quantity string ("2.5", "64", "512Gi") or a JSON number.
Result<std::optional<double>> quota_amount(const ObjectFields& fields, std::string_view path, QuotaUnit unit) {
  auto text_or_empty = fields.quantity_text(path);
  if (!text_or_empty) return text_or_empty.error();
  if (!text_or_empty->has_value()) return std::optional<double>();
  const std::string& text = **text_or_empty;
  const bool whole_units = unit == QuotaUnit::kBytes;
  auto parsed = whole_units ? wire::parse_quantity(text) : wire::parse_quantity_milli(text);
  if (!parsed) return fields.error(path, parsed.error().message);
  if (*parsed < 0) return fields.error(path, fmt::format("'{}' is negative", text));
  const double number = static_cast<double>(*parsed);
  return std::optional<double>(unit == QuotaUnit::kGpus ? number / kMilliPerGpu : number);
}

Result<double> over_quota_weight(const ObjectFields& fields, std::string_view path) {
  auto value = fields.find(path);
  if (!value) return value.error();
  if (*value == nullptr) return QueueQuota{}.over_quota_weight;
  if (!(*value)->is_number()) {
    return fields.error(path, fmt::format("expected a number, got {}", (*value)->type_name()));
  }
  const double weight = (*value)->get<double>();
  if (!std::isfinite(weight) || weight < 0) return fields.error(path, fmt::format("{} is negative", weight));
  return weight;
}

// The terms of spec.resources.NAME or spec.gpuModels.MODEL, read by `fields` (keys may hold
// dots, so each is read as a part of its own rather than by a dotted path).
Result<QueueQuota> quota_from(const ObjectFields& fields, const nlohmann::json& terms, QuotaUnit unit) {
  if (!terms.is_object()) {
    return fields.error(
        "", fmt::format("expected an object with deserved, overQuotaWeight and limit, got {}", terms.type_name()));
  }
  for (const auto& [key, term] : terms.items()) {
    if (std::find(std::begin(kQuotaTerms), std::end(kQuotaTerms), key) == std::end(kQuotaTerms)) {
      return fields.error(key, "unknown field: expected deserved, overQuotaWeight or limit");
    }
  }
  QueueQuota quota;
  auto deserved = quota_amount(fields, "deserved", unit);
  if (!deserved) return deserved.error();
  quota.deserved = deserved->value_or(0);
  auto weight = over_quota_weight(fields, "overQuotaWeight");
  if (!weight) return weight.error();
  quota.over_quota_weight = *weight;
  auto limit = quota_amount(fields, "limit", unit);
  if (!limit) return limit.error();
  quota.limit = *limit;
  if (quota.limit && *quota.limit < quota.deserved) {
    return fields.error("limit", fmt::format("{} is below deserved ({})", *quota.limit, quota.deserved));
  }
  return quota;
}

Result<std::optional<double>> min_runtime(const ObjectFields& fields, std::string_view path) {
  auto text = fields.string(path);
  if (!text) return text.error();
  if (text->empty()) return std::optional<double>();
  auto seconds = wire::parse_duration_seconds(*text);
  if (!seconds) return fields.error(path, seconds.error().message);
  if (*seconds < 0) return fields.error(path, fmt::format("'{}' is negative", *text));
  return std::optional<double>(*seconds);
}

// The object at `path` (spec.resources, spec.gpuModels); nullptr when absent.
Result<const nlohmann::json*> object_at(const ObjectFields& fields, std::string_view path) {
  auto object = fields.find(path);
  if (!object) return object.error();
  if (*object != nullptr && !(*object)->is_object()) {
    return fields.error(path, fmt::format("expected an object, got {}", (*object)->type_name()));
  }
  return *object;
}

Result<QuotaUnit> resource_unit(const ObjectFields& fields, std::string_view resource) {
  if (resource == kGpuResource) return QuotaUnit::kGpus;
  if (resource == kCpuResource) return QuotaUnit::kMillicores;
  if (resource == kMemoryResource) return QuotaUnit::kBytes;
  return fields.error(fmt::format("spec.resources.{}", resource),
                      "unknown resource: expected gpu, cpu or memory (quotas per GPU model go under spec.gpuModels)");
}

}  // namespace

Result<QueueSpec> queue_from_object(const nlohmann::json& queue, ResourceNames& resources) {
  QueueSpec spec;
  spec.name = kube::object_key(queue);
  const ObjectFields fields(queue, fmt::format("queue {}", spec.name));
  if (spec.name.empty()) return fields.error("metadata.name", "is empty");

  auto parent = fields.string("spec.parent");
  if (!parent) return parent.error();
  spec.parent = std::move(*parent);
  auto priority = fields.integer("spec.priority");
  if (!priority) return priority.error();
  if (priority->value_or(0) < std::numeric_limits<int>::min() ||
      priority->value_or(0) > std::numeric_limits<int>::max()) {
    return fields.error("spec.priority", "is out of the range of a 32-bit integer");
  }
  spec.priority = static_cast<int>(priority->value_or(0));

  for (std::string_view resource : {kGpuResource, kCpuResource, kMemoryResource}) resources.add(resource);
  auto by_resource = object_at(fields, "spec.resources");
  if (!by_resource) return by_resource.error();
  auto by_model = object_at(fields, "spec.gpuModels");
  if (!by_model) return by_model.error();
  if (*by_model != nullptr) {
    for (const auto& [model, terms] : (*by_model)->items()) resources.add(gpu_model_resource(model));
  }
  spec.quota.assign(resources.size(), QueueQuota{});

  if (*by_resource != nullptr) {
    for (const auto& [resource, terms] : (*by_resource)->items()) {
      auto unit = resource_unit(fields, resource);
      if (!unit) return unit.error();
      auto quota = quota_from(fields.child(terms, fmt::format("spec.resources.{}", resource)), terms, *unit);
      if (!quota) return quota.error();
      spec.quota[*resources.find(resource)] = *quota;
    }
  }
  if (*by_model != nullptr) {
    for (const auto& [model, terms] : (*by_model)->items()) {
      auto quota = quota_from(fields.child(terms, fmt::format("spec.gpuModels.{}", model)), terms, QuotaUnit::kGpus);
      if (!quota) return quota.error();
      spec.quota[*resources.find(gpu_model_resource(model))] = *quota;
    }
  }

  auto preempt = min_runtime(fields, "spec.preemptMinRuntime");
  if (!preempt) return preempt.error();
  spec.preempt_min_runtime_seconds = *preempt;
  auto reclaim = min_runtime(fields, "spec.reclaimMinRuntime");
  if (!reclaim) return reclaim.error();
  spec.reclaim_min_runtime_seconds = *reclaim;
  auto rules = work_rules_from(fields);
  if (!rules) return rules.error();
  spec.work_rules = *rules;
  return spec;
}

}  // namespace tessera::adapter
