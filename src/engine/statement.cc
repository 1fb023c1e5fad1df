#include "engine/statement.h"

#include <cassert>

namespace tessera {

void Statement::allocate(PodId pod, Binding binding) {
  assert(!cluster_.binding(pod) && cluster_.fits(pod, binding) && "an unbound pod and a binding that fits");
  cluster_.bind(pod, binding);
  if (listener_ != nullptr) listener_->bound(pod, binding);
  operations_.push_back({Operation::Kind::kAllocate, pod, std::move(binding)});
}

void Statement::evict(PodId pod) {
  assert(cluster_.binding(pod) && "a bound pod");
  Binding previous = cluster_.unbind(pod);
  if (listener_ != nullptr) listener_->unbound(pod, previous);
  operations_.push_back({Operation::Kind::kEvict, pod, std::move(previous)});
}

void Statement::rollback(Checkpoint checkpoint) {
  while (operations_.size() > checkpoint) {
    Operation& last = operations_.back();
    if (last.kind == Operation::Kind::kAllocate) {
      cluster_.unbind(last.pod);
      if (listener_ != nullptr) listener_->unbound(last.pod, last.binding);
    } else {
      cluster_.bind(last.pod, std::move(last.binding));
      if (listener_ != nullptr) listener_->bound(last.pod, *cluster_.binding(last.pod));
    }
    operations_.pop_back();
  }
}

std::vector<Operation> Statement::commit() {
  std::vector<Operation> committed;
  committed.swap(operations_);
  return committed;
}

}  // namespace tessera
