#include "engine/statement.h"

namespace tessera {

void Statement::allocate(PodId pod, Binding binding) {
  cluster_.bind(pod, binding);
  operations_.push_back({Operation::Kind::kAllocate, pod, std::move(binding)});
}

void Statement::evict(PodId pod) {
  Binding previous = cluster_.unbind(pod);
  operations_.push_back({Operation::Kind::kEvict, pod, std::move(previous)});
}

void Statement::rollback(Checkpoint checkpoint) {
  while (operations_.size() > checkpoint) {
    Operation& last = operations_.back();
    if (last.kind == Operation::Kind::kAllocate) {
      cluster_.unbind(last.pod);
    } else {
      cluster_.bind(last.pod, std::move(last.binding));
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
