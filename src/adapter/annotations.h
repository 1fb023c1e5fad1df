// The labels and annotations through which Kubernetes objects talk to Tessera
// (docs/kubernetes.md lists them with examples).
#pragma once

#include <string_view>

namespace tessera::adapter {

inline constexpr std::string_view kSchedulerName = "tessera";
inline constexpr std::string_view kApiGroup = "scheduling.tessera.dev";
inline constexpr std::string_view kApiVersion = "scheduling.tessera.dev/v1alpha1";

// Pod labels.
inline constexpr std::string_view kQueueLabel = "scheduling.tessera.dev/queue";
inline constexpr std::string_view kPodGroupLabel = "scheduling.tessera.dev/pod-group";
// The subgroup of its PodGroup a pod joins (PodGroup spec.subGroups[].name).
inline constexpr std::string_view kSubGroupLabel = "scheduling.tessera.dev/subgroup";

// Pod annotations a user sets.
// A portion of one GPU, "0.5" (0 < x < 1).
inline constexpr std::string_view kGpuFractionAnnotation = "scheduling.tessera.dev/gpu-fraction";
// An amount of one GPU's memory, a quantity ("20Gi"), with an optional burst limit.
inline constexpr std::string_view kGpuMemoryAnnotation = "scheduling.tessera.dev/gpu-memory";
inline constexpr std::string_view kGpuMemoryLimitAnnotation = "scheduling.tessera.dev/gpu-memory-limit";
// What the node does when pods on one device burst past its memory together: "wait" (default: the
// allocation waits until memory frees), "priority" (processes of lower-priority or idle pods end),
// "swap" (allocations move to host memory and back).
inline constexpr std::string_view kGpuMemoryResolverAnnotation = "scheduling.tessera.dev/gpu-memory-resolver";
// With the swap resolver: milliseconds the pod keeps device room while other swap pods wait
// (docs/gpu-memory.md §Resolvers, time slices); the node reads it, the scheduler does not.
inline constexpr std::string_view kGpuMemorySwapSliceAnnotation = "scheduling.tessera.dev/gpu-memory-swap-slice-ms";
// "train" (default: preemptible), "interactive" or "inference" (default: not preemptible); which of
// its queue's rules (spec.rules) apply.
inline constexpr std::string_view kWorkloadTypeAnnotation = "scheduling.tessera.dev/workload-type";
// Shorter limits than its queue's rules give, durations ("2h", "30m"); a longer one is clamped to
// the queue's, and an event says so. On any pod of a workload; the shortest applies.
inline constexpr std::string_view kMaxRuntimeAnnotation = "scheduling.tessera.dev/max-runtime";
inline constexpr std::string_view kIdleLimitAnnotation = "scheduling.tessera.dev/idle-limit";
// "true" or "false": overrides the workload type's default.
inline constexpr std::string_view kPreemptibleAnnotation = "scheduling.tessera.dev/preemptible";
// How long the pod runs once started, a duration ("90s", "10m", "2h"). Read by
// `tessera dev cluster`, which completes the pod after it; a real cluster ignores it.
inline constexpr std::string_view kDurationAnnotation = "scheduling.tessera.dev/duration";
// How busy the pod keeps its GPUs: "busy", "idle_after 2m", "warmup 20m", "bursty 15m/1h". Read
// by `tessera dev gpu-metrics`, which serves dcgm-exporter's metrics for such pods; a real
// cluster's dcgm-exporter measures instead.
inline constexpr std::string_view kGpuUtilisationAnnotation = "scheduling.tessera.dev/gpu-utilisation";

// Pod annotations the scheduler writes before it binds a GPU pod.
// Device indices on the node, comma-separated ("3", "0,1,2,3").
inline constexpr std::string_view kGpuIndexAnnotation = "scheduling.tessera.dev/gpu-index";
// For a fractional pod: its portion of the device in thousandths ("500").
inline constexpr std::string_view kGpuPortionAnnotation = "scheduling.tessera.dev/gpu-portion";
// The same as environment lines, ready for a downward-API volume:
// "NVIDIA_VISIBLE_DEVICES=3\nTESSERA_GPU_PORTION=0.25\nTESSERA_GPU_MEMORY_REQUEST=21474836480\n
// TESSERA_GPU_MEMORY_LIMIT=42949672960\nTESSERA_GPU_MEMORY_RESOLVER=wait\n" (the last three for a
// pod with GPU memory only).
inline constexpr std::string_view kGpuEnvAnnotation = "scheduling.tessera.dev/gpu-env";
// For a pod with GPU memory: its request and limit in bytes on the device it was bound to, as the
// node agent reads them (with the resolver above and the pod's spec.priority) to fill its ledger.
inline constexpr std::string_view kGpuMemoryRequestBytesAnnotation = "scheduling.tessera.dev/gpu-memory-request-bytes";
inline constexpr std::string_view kGpuMemoryLimitBytesAnnotation = "scheduling.tessera.dev/gpu-memory-limit-bytes";

// Namespace label naming the queue of pods that name none.
inline constexpr std::string_view kNamespaceQueueLabel = "scheduling.tessera.dev/queue";

// Node labels (as NVIDIA GPU feature discovery publishes them).
inline constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr std::string_view kGpuMemoryLabel = "nvidia.com/gpu.memory";  // MiB per device

}  // namespace tessera::adapter
