// Node taints and pod tolerations, read from their Kubernetes lists.
#pragma once

#include <string_view>
#include <vector>

#include "adapter/object_fields.h"
#include "core/result.h"
#include "core/taint.h"

namespace tessera::adapter {

// spec.taints of a Node: key, value, effect (NoSchedule, PreferNoSchedule or NoExecute).
Result<std::vector<Taint>> taints_at(const ObjectFields& fields, std::string_view path);

// spec.tolerations of a Pod: operator Equal (the default) or Exists, an empty key with Exists
// tolerating every taint and an empty effect every effect. tolerationSeconds only bounds how
// long a pod stays on a NoExecute node, which does not change where it may be placed.
Result<std::vector<Toleration>> tolerations_at(const ObjectFields& fields, std::string_view path);

}  // namespace tessera::adapter
