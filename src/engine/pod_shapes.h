// Interns what placement looks at in a pod (resources, GPU request, models, selector,
// tolerations) to a small id, so verdicts can be cached per (node group, pod shape).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/pod.h"

namespace tessera {

class PodShapes {
 public:
  uint32_t intern(const PodSpec& pod);
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::string key_;  // intern's, kept to reuse its buffer
};

}  // namespace tessera
