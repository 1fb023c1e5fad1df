#include "policy/queue_order.h"

#include <algorithm>
#include <limits>

namespace tessera {

double dominant_share(const ResourceVector& fair_share, const ResourceVector& allocated) {
  double dominant = 0;
  for (ResourceId r = 0; r < allocated.size(); ++r) {
    if (allocated[r] <= 0) continue;
    const double fair = resource_at(fair_share, r);
    if (fair <= 0) return std::numeric_limits<double>::infinity();
    dominant = std::max(dominant, allocated[r] / fair);
  }
  return dominant;
}

std::vector<QueueIndex> order_queues(const QueueTree& tree, const FairShares& shares,
                                     std::span<const QueueLoad> loads) {
  struct Entry {
    double dominant;
    QueueIndex queue;
  };
  std::vector<Entry> entries;
  entries.reserve(tree.leaves().size());
  const ResourceVector none;
  for (QueueIndex queue : tree.leaves()) {
    const ResourceVector& fair = queue < shares.fair_share.size() ? shares.fair_share[queue] : none;
    const ResourceVector& allocated = queue < loads.size() ? loads[queue].allocated : none;
    entries.push_back({dominant_share(fair, allocated), queue});
  }
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (a.dominant != b.dominant) return a.dominant < b.dominant;
    const QueueSpec& spec_a = tree.spec(a.queue);
    const QueueSpec& spec_b = tree.spec(b.queue);
    if (spec_a.priority != spec_b.priority) return spec_a.priority > spec_b.priority;
    return spec_a.name < spec_b.name;
  });
  std::vector<QueueIndex> order;
  order.reserve(entries.size());
  for (const Entry& entry : entries) order.push_back(entry.queue);
  return order;
}

}  // namespace tessera
