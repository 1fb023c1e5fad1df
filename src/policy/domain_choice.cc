#include "policy/domain_choice.h"

#include <algorithm>

namespace tessera {

std::string_view domain_rule_name(DomainRule rule) {
  switch (rule) {
    case DomainRule::kFragmentation:
      return "fragmentation";
    case DomainRule::kFullest:
      return "fullest";
    case DomainRule::kBestFit:
      return "best-fit";
  }
  return "fragmentation";
}

std::optional<DomainRule> parse_domain_rule(std::string_view name) {
  for (DomainRule rule : {DomainRule::kFragmentation, DomainRule::kFullest, DomainRule::kBestFit}) {
    if (domain_rule_name(rule) == name) return rule;
  }
  return std::nullopt;
}

void GangSizeMix::add(int64_t gang_milli, double weight) {
  if (gang_milli <= 0 || weight <= 0) return;
  auto it = std::lower_bound(sizes_.begin(), sizes_.end(), gang_milli,
                             [](const std::pair<int64_t, double>& entry, int64_t size) { return entry.first < size; });
  if (it != sizes_.end() && it->first == gang_milli) {
    it->second += weight;
  } else {
    sizes_.insert(it, {gang_milli, weight});
  }
  total_ += weight;
}

std::vector<std::pair<int64_t, double>> GangSizeMix::shares() const {
  std::vector<std::pair<int64_t, double>> shares;
  shares.reserve(sizes_.size());
  for (auto [size, weight] : sizes_) shares.emplace_back(size, weight / total_);
  return shares;
}

double domain_fragmentation(int64_t free_milli, std::span<const std::pair<int64_t, double>> shares) {
  double fragmented = 0;
  for (auto [size, share] : shares) fragmented += share * static_cast<double>(free_milli % size);
  return fragmented;
}

std::vector<int32_t> order_domains(std::span<const DomainRoom> rooms, int64_t need_milli, DomainRule rule,
                                   const GangSizeMix& mix) {
  struct Candidate {
    int32_t index;
    double primary;    // lower is better
    double secondary;  // lower is better
  };
  const auto shares = mix.shares();
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < rooms.size(); ++i) {
    const DomainRoom& room = rooms[i];
    if (room.free_milli < need_milli || room.capacity_milli <= 0) continue;
    const int64_t left = room.free_milli - need_milli;
    Candidate candidate{static_cast<int32_t>(i), 0, 0};
    switch (rule) {
      case DomainRule::kFragmentation:
        candidate.primary = domain_fragmentation(left, shares) - domain_fragmentation(room.free_milli, shares);
        candidate.secondary = static_cast<double>(left) / static_cast<double>(room.capacity_milli);
        break;
      case DomainRule::kFullest:
        candidate.primary = static_cast<double>(room.free_milli) / static_cast<double>(room.capacity_milli);
        break;
      case DomainRule::kBestFit:
        candidate.primary = static_cast<double>(left);
        break;
    }
    candidates.push_back(candidate);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.primary != b.primary) return a.primary < b.primary;
    if (a.secondary != b.secondary) return a.secondary < b.secondary;
    return a.index < b.index;
  });
  std::vector<int32_t> order;
  order.reserve(candidates.size());
  for (const Candidate& candidate : candidates) order.push_back(candidate.index);
  return order;
}

}  // namespace tessera
