// The GPU models a pod may run on, from the two ways a pod names them: a nodeSelector on
// nvidia.com/gpu.product, and a required node affinity with a single term whose expression on
// that label uses `In` (several models). When both are given the pod may use the models both
// allow. Other node affinity (several terms, other operators, other labels, preferred terms)
// does not restrict models and is not read: pods that need it should use a nodeSelector.
#pragma once

#include "adapter/object_fields.h"
#include "core/gpu_model.h"
#include "core/node.h"
#include "core/result.h"

namespace tessera::adapter {

// The set a pod gets when none of the models it names is in the catalog. GpuModelSet has no
// empty "nothing allowed" value (empty means any model), so it holds only the last id, which
// the catalog hands out only to a cluster's 64th model: the pod fits no device rather than
// every device. A nodeSelector also stays in node_selector, so it keeps the pod off other
// nodes even then.
inline constexpr GpuModelId kNoKnownGpuModel = GpuModelSet::kMaxModels - 1;

// `pod` reads the Pod; `node_selector` is its spec.nodeSelector. Models are looked up in
// `models` (the catalog of the cluster's nodes), never added.
Result<GpuModelSet> allowed_gpu_models(const ObjectFields& pod, const Labels& node_selector,
                                       const GpuModelCatalog& models);

}  // namespace tessera::adapter
