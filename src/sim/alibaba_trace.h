// Readers for the Alibaba GPU cluster trace (2023, "openb"): a node list
// (sn,cpu_milli,memory_mib,gpu,model) and a pod list (name,cpu_milli,memory_mib,num_gpu,
// gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time).
//
// Mapping: memory MiB -> bytes; num_gpu >= 2, or num_gpu == 1 with gpu_milli == 1000, is a
// whole-GPU request; num_gpu == 1 with gpu_milli < 1000 is a portion; gpu_spec "A|B" restricts
// the GPU models (each must be a model of the cluster); a pod is a one-pod workload arriving at
// creation_time and running until deletion_time. GPU nodes carry the label
// "tessera.dev/gpu-model" with their model.
//
// Errors name the source, the 1-based line and the column, and say what was expected.
#pragma once

#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/result.h"
#include "core/workload.h"

namespace tessera {

// GPU memory per device for the trace's models (the trace gives none): V100M16 16 GiB, V100M32
// 32 GiB, P100 16 GiB, T4 16 GiB, A10 24 GiB, G1/G2/G3 (undisclosed) 32 GiB. Other models get 0,
// so GPU-memory requests never fit on them (portions and whole GPUs do).
// An empty field may also be written "nan" (as pandas exports it).
int64_t alibaba_gpu_memory_bytes(std::string_view model);

Result<ClusterSpec> parse_alibaba_nodes(std::string_view csv_text, std::string_view source);

// `cluster` resolves gpu_spec model names. Only name, cpu_milli, memory_mib, num_gpu and gpu_milli
// are required (the dataset's multi-GPU lists have no more): without gpu_spec a pod may use any
// model. creation_time and deletion_time are required unless `untimed` is given; then a file
// without them gives pods that all arrive at 0 and never end, and `untimed` says which is missing
// and why a timeline replay cannot use them (arrival mode needs neither). It is left empty when
// both are there.
Result<std::vector<WorkloadSpec>> parse_alibaba_pods(std::string_view csv_text, std::string_view source,
                                                     const ClusterSpec& cluster, std::string* untimed = nullptr);

}  // namespace tessera
