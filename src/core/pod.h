// A pod's requirements: resources, GPU request, allowed GPU models, node selector, tolerations.
#pragma once

#include <string>
#include <vector>

#include "core/gpu_model.h"
#include "core/gpu_request.h"
#include "core/node.h"
#include "core/resources.h"
#include "core/taint.h"

namespace tessera {

using PodId = int32_t;

struct PodSpec {
  std::string name;
  Resources request;
  GpuRequest gpu;
  GpuModelSet allowed_models = GpuModelSet::any();
  Labels node_selector;
  std::vector<Toleration> tolerations;
  int priority = 0;
  bool preemptible = true;
  // The subgroup of its workload it joins: an index into WorkloadSpec::subgroups() (on
  // Kubernetes, the one its label names); -1: none.
  int16_t subgroup = -1;
};

}  // namespace tessera
