// GPU model names (V100M32, A100, H100...) interned to small ids, and sets of allowed models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

using GpuModelId = uint8_t;

// The node label that carries a node's GPU model in the clusters Tessera reads and writes.
inline constexpr std::string_view kGpuModelLabel = "tessera.dev/gpu-model";

// A set of GPU models a pod may run on. Empty means "any model".
class GpuModelSet {
 public:
  static constexpr int kMaxModels = 64;

  static GpuModelSet any() { return GpuModelSet(); }
  void add(GpuModelId id) { bits_ |= uint64_t{1} << id; }
  bool is_any() const { return bits_ == 0; }
  bool allows(GpuModelId id) const { return is_any() || (bits_ >> id & 1U) != 0; }
  uint64_t bits() const { return bits_; }
  friend bool operator==(const GpuModelSet&, const GpuModelSet&) = default;

 private:
  uint64_t bits_ = 0;
};

// Interns model names seen in a cluster; ids are dense so a model set is a bit mask.
class GpuModelCatalog {
 public:
  std::optional<GpuModelId> find(std::string_view name) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return static_cast<GpuModelId>(i);
    }
    return std::nullopt;
  }
  // Returns nullopt when the catalog already holds kMaxModels names.
  std::optional<GpuModelId> intern(std::string_view name) {
    if (auto id = find(name)) return id;
    if (names_.size() >= GpuModelSet::kMaxModels) return std::nullopt;
    names_.emplace_back(name);
    return static_cast<GpuModelId>(names_.size() - 1);
  }
  const std::string& name(GpuModelId id) const { return names_.at(id); }
  size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  // "the cluster has: A100, H100", for errors about a model that is not among them.
  std::string description() const {
    if (names_.empty()) return "the cluster has no GPU models";
    std::string text = "the cluster has: ";
    for (size_t i = 0; i < names_.size(); ++i) text += (i == 0 ? "" : ", ") + names_[i];
    return text;
  }

 private:
  std::vector<std::string> names_;
};

}  // namespace tessera
