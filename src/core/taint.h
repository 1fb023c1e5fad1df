// Kubernetes-style taints on nodes and the tolerations pods carry against them.
#pragma once

#include <optional>
#include <string>

namespace tessera {

enum class TaintEffect : uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  enum class Operator : uint8_t { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every taint
  Operator op = Operator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt tolerates every effect

  bool tolerates(const Taint& taint) const {
    if (effect && *effect != taint.effect) return false;
    if (key.empty()) return op == Operator::kExists;
    if (key != taint.key) return false;
    return op == Operator::kExists || value == taint.value;
  }
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

}  // namespace tessera
