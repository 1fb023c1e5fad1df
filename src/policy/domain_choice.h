// Which topology domain a gang goes to (docs/topology.md): among the domains of one level with
// room for the gang, the best by a rule. Pure functions over per-domain free and total GPUs.
//  1. kFragmentation (Tessera's): FGD ("Beware of Fragmentation", ATC'23) lifted from GPUs on a
//     node to GPUs in a domain. A domain's fragmentation against the mix of gang sizes seen is
//     the expected number of its free GPUs that cannot serve a gang drawn from the mix:
//     sum over sizes s of p_s * (free mod s) (all of free when free < s). The domain whose
//     fragmentation grows least when the gang takes its GPUs wins; then the one left fullest.
//  2. kFullest (a peer's rule): the domain with the largest share of its GPUs in use.
//  3. kBestFit (a peer's rule): the domain with the fewest free GPUs that still hold the gang.
// Ties go to the lower domain index, so choices are deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

enum class DomainRule : uint8_t { kFragmentation, kFullest, kBestFit };

// "fragmentation", "fullest", "best-fit"; parse_domain_rule takes the same names.
std::string_view domain_rule_name(DomainRule rule);
std::optional<DomainRule> parse_domain_rule(std::string_view name);

struct DomainRoom {
  int64_t free_milli = 0;
  int64_t capacity_milli = 0;
};

// The sizes (GPU milli) of the gangs seen and how often each occurs.
class GangSizeMix {
 public:
  void add(int64_t gang_milli, double weight = 1);
  // (size, share) pairs whose shares sum to 1; empty when nothing was added.
  std::vector<std::pair<int64_t, double>> shares() const;
  bool empty() const { return sizes_.empty(); }

 private:
  std::vector<std::pair<int64_t, double>> sizes_;  // (size, weight), sorted by size
  double total_ = 0;
};

// Expected free GPU milli of a domain that a gang drawn from the mix could not use.
double domain_fragmentation(int64_t free_milli, std::span<const std::pair<int64_t, double>> shares);

// The indices of the rooms with at least `need_milli` free, best first by the rule.
std::vector<int32_t> order_domains(std::span<const DomainRoom> rooms, int64_t need_milli, DomainRule rule,
                                   const GangSizeMix& mix);

}  // namespace tessera
