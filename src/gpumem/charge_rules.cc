#include "gpumem/charge_rules.h"

#include <algorithm>

namespace tessera::gpumem {

ChargeDecision decide_charge(std::uint64_t capacity, std::uint64_t committed, EntryUse entry, std::uint64_t bytes) {
  const std::uint64_t held = entry.used + entry.in_host;
  if (bytes > entry.limit || held > entry.limit - bytes) {
    return {ChargeVerdict::kOverLimit};
  }
  const std::uint64_t after = entry.used + bytes;
  const std::uint64_t increase = std::max(after, entry.request) - std::max(entry.used, entry.request);
  if (increase == 0) {
    return {ChargeVerdict::kGrant, 0};
  }
  const std::uint64_t room = committed >= capacity ? 0 : capacity - committed;
  if (increase <= room) {
    return {ChargeVerdict::kGrant, increase};
  }
  return {ChargeVerdict::kCollision, 0, increase - room};
}

std::uint64_t commit_decrease(EntryUse entry, std::uint64_t bytes) {
  const std::uint64_t after = entry.used - std::min(bytes, entry.used);
  return std::max(entry.used, entry.request) - std::max(after, entry.request);
}

namespace {

// The fewest of `ordered` (most expendable first) whose `used` covers `shortfall`: take them in
// order, then spare the chosen ones, most valuable first (latest chosen), that the others already
// cover. Empty when all of them together fall short.
std::vector<int> cover_shortfall(const std::vector<VictimCandidate>& ordered, std::uint64_t shortfall) {
  std::vector<VictimCandidate> chosen;
  std::uint64_t freed = 0;
  for (const VictimCandidate& candidate : ordered) {
    if (freed >= shortfall) break;
    chosen.push_back(candidate);
    freed += candidate.used;
  }
  if (freed < shortfall) return {};
  for (auto it = chosen.rbegin(); it != chosen.rend();) {
    if (freed - it->used >= shortfall) {
      freed -= it->used;
      it = std::make_reverse_iterator(chosen.erase(std::next(it).base()));
    } else {
      ++it;
    }
  }
  std::vector<int> victims;
  for (const VictimCandidate& candidate : chosen) victims.push_back(candidate.entry);
  return victims;
}

}  // namespace

std::vector<int> choose_victims(const std::vector<VictimCandidate>& candidates, std::int32_t priority,
                                std::uint64_t shortfall) {
  std::vector<VictimCandidate> eligible;
  for (const VictimCandidate& candidate : candidates) {
    if (candidate.used > 0 && (candidate.priority < priority || candidate.idle)) {
      eligible.push_back(candidate);
    }
  }
  std::sort(eligible.begin(), eligible.end(), [](const VictimCandidate& a, const VictimCandidate& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.idle != b.idle) return a.idle;
    if (a.used != b.used) return a.used > b.used;
    return a.entry < b.entry;
  });
  return cover_shortfall(eligible, shortfall);
}

std::vector<int> choose_swap_outs(const std::vector<VictimCandidate>& candidates, std::int32_t priority,
                                  std::uint64_t shortfall) {
  std::vector<VictimCandidate> eligible;
  for (const VictimCandidate& candidate : candidates) {
    if (candidate.used > 0 && candidate.priority <= priority) eligible.push_back(candidate);
  }
  std::sort(eligible.begin(), eligible.end(), [](const VictimCandidate& a, const VictimCandidate& b) {
    if (a.idle != b.idle) return a.idle;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.used != b.used) return a.used > b.used;
    return a.entry < b.entry;
  });
  return cover_shortfall(eligible, shortfall);
}

}  // namespace tessera::gpumem
