#include "adapter/pod_requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace tessera::adapter {

namespace {

// The amount listed for `resource` in the resources.`list` map of a container, if any.
Result<std::optional<int64_t>> listed_amount(const ObjectFields& container, std::string_view list,
                                             std::string_view resource, QuantityParser parse) {
  const std::string path = fmt::format("resources.{}", list);
  auto amounts = container.quantity_map(path);
  if (!amounts) return amounts.error();
  auto it = amounts->find(std::string(resource));
  if (it == amounts->end()) return std::optional<int64_t>();
  const std::string field = fmt::format("{}[{}]", path, resource);
  auto amount = parse(it->second);
  if (!amount) return container.error(field, amount.error().message);
  if (*amount < 0) return container.error(field, fmt::format("'{}' is negative", it->second));
  return std::optional<int64_t>(*amount);
}

Result<int64_t> container_amount(const ObjectFields& container, std::string_view resource, AmountSource source,
                                 QuantityParser parse) {
  const bool limits_first = source == AmountSource::kLimitsThenRequests;
  for (std::string_view list : {limits_first ? "limits" : "requests", limits_first ? "requests" : "limits"}) {
    auto amount = listed_amount(container, list, resource, parse);
    if (!amount) return amount.error();
    if (amount->has_value()) return **amount;
  }
  return int64_t{0};
}

Result<int64_t> checked_sum(const ObjectFields& fields, std::string_view resource, int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return fields.error("spec", fmt::format("the pod's total request of {} overflows", resource));
  }
  return sum;
}

}  // namespace

Result<int64_t> pod_effective_request(const ObjectFields& fields, std::string_view resource, AmountSource source,
                                      QuantityParser parse) {
  int64_t total = 0;  // regular containers and sidecars
  auto containers = fields.array("spec.containers");
  if (!containers) return containers.error();
  for (size_t i = 0; *containers != nullptr && i < (*containers)->size(); ++i) {
    const ObjectFields container = fields.child((**containers)[i], fmt::format("spec.containers[{}]", i));
    auto amount = container_amount(container, resource, source, parse);
    if (!amount) return amount.error();
    auto sum = checked_sum(fields, resource, total, *amount);
    if (!sum) return sum.error();
    total = *sum;
  }

  // Init containers run one at a time before the others, each next to the sidecars (init
  // containers with restartPolicy Always) started before it; sidecars keep running afterwards.
  int64_t largest_init = 0;
  int64_t sidecars = 0;
  auto init_containers = fields.array("spec.initContainers");
  if (!init_containers) return init_containers.error();
  for (size_t i = 0; *init_containers != nullptr && i < (*init_containers)->size(); ++i) {
    const ObjectFields container = fields.child((**init_containers)[i], fmt::format("spec.initContainers[{}]", i));
    auto amount = container_amount(container, resource, source, parse);
    if (!amount) return amount.error();
    auto restart_policy = container.string("restartPolicy");
    if (!restart_policy) return restart_policy.error();
    int64_t running_alongside = 0;
    if (*restart_policy == "Always") {
      auto with_total = checked_sum(fields, resource, total, *amount);
      auto with_sidecars = checked_sum(fields, resource, sidecars, *amount);
      if (!with_total) return with_total.error();
      if (!with_sidecars) return with_sidecars.error();
      total = *with_total;
      sidecars = *with_sidecars;
      running_alongside = sidecars;
    } else {
      auto with_sidecars = checked_sum(fields, resource, sidecars, *amount);
      if (!with_sidecars) return with_sidecars.error();
      running_alongside = *with_sidecars;
    }
    largest_init = std::max(largest_init, running_alongside);
  }

  auto overhead = fields.quantity_map("spec.overhead");
  if (!overhead) return overhead.error();
  int64_t overhead_amount = 0;
  if (auto it = overhead->find(std::string(resource)); it != overhead->end()) {
    const std::string field = fmt::format("spec.overhead[{}]", resource);
    auto amount = parse(it->second);
    if (!amount) return fields.error(field, amount.error().message);
    if (*amount < 0) return fields.error(field, fmt::format("'{}' is negative", it->second));
    overhead_amount = *amount;
  }
  return checked_sum(fields, resource, std::max(total, largest_init), overhead_amount);
}

}  // namespace tessera::adapter
