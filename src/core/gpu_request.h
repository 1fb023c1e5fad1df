// What a pod asks of GPUs: nothing, N whole devices, or a fraction of one device given as a
// portion (milli-GPU, like the trace's gpu_milli) or as an amount of device memory.
#pragma once

#include <cstdint>

namespace tessera {

inline constexpr int kMilliPerGpu = 1000;

struct GpuRequest {
  enum class Kind : uint8_t { kNone, kWhole, kPortion, kMemory };

  Kind kind = Kind::kNone;
  int whole_gpus = 0;              // kWhole: number of exclusive devices
  int portion_milli = 0;           // kPortion: 1..999 of one device
  int64_t memory_bytes = 0;        // kMemory: device memory to reserve
  int64_t memory_limit_bytes = 0;  // kMemory: burst limit enforced at run time (>= request)

  static GpuRequest none() { return {}; }
  static GpuRequest whole(int count) { return {.kind = Kind::kWhole, .whole_gpus = count}; }
  static GpuRequest portion(int milli) { return {.kind = Kind::kPortion, .portion_milli = milli}; }
  static GpuRequest memory(int64_t request_bytes, int64_t limit_bytes) {
    return {.kind = Kind::kMemory, .memory_bytes = request_bytes, .memory_limit_bytes = limit_bytes};
  }

  bool wants_gpu() const { return kind != Kind::kNone; }
  bool is_fractional() const { return kind == Kind::kPortion || kind == Kind::kMemory; }

  // The portion of a device of `device_memory_bytes` this request occupies, in milli. Memory
  // requests round up so the memory sum on a device can never exceed its capacity.
  int milli_on_device(int64_t device_memory_bytes) const {
    switch (kind) {
      case Kind::kNone:
        return 0;
      case Kind::kWhole:
        return kMilliPerGpu;
      case Kind::kPortion:
        return portion_milli;
      case Kind::kMemory:
        if (device_memory_bytes <= 0) return kMilliPerGpu + 1;  // unknown memory: cannot fit
        return static_cast<int>((memory_bytes * kMilliPerGpu + device_memory_bytes - 1) / device_memory_bytes);
    }
    return 0;
  }

  // What the request's limit occupies of such a device, in milli: a memory request's burst limit
  // (rounded up, like the request), the request itself for the other kinds. Held against the
  // device's overcommit cap (NodeSpec::gpu_memory_overcommit_milli), never against its memory.
  int limit_milli_on_device(int64_t device_memory_bytes) const {
    if (kind != Kind::kMemory || memory_limit_bytes <= memory_bytes) return milli_on_device(device_memory_bytes);
    if (device_memory_bytes <= 0) return kMilliPerGpu + 1;
    return static_cast<int>((memory_limit_bytes * kMilliPerGpu + device_memory_bytes - 1) / device_memory_bytes);
  }
  // The limit's share beyond the request on such a device, in milli: 0 but for a memory request
  // that may burst.
  int burst_milli_on_device(int64_t device_memory_bytes) const {
    return kind == Kind::kMemory && memory_limit_bytes > memory_bytes
               ? limit_milli_on_device(device_memory_bytes) - milli_on_device(device_memory_bytes)
               : 0;
  }

  // Total GPU amount in milli, as counted for allocation ratios. Memory requests count the
  // portion of the device they were placed on, so this is only the nominal amount.
  int64_t nominal_milli() const {
    switch (kind) {
      case Kind::kNone:
        return 0;
      case Kind::kWhole:
        return int64_t{whole_gpus} * kMilliPerGpu;
      case Kind::kPortion:
        return portion_milli;
      case Kind::kMemory:
        return 0;
    }
    return 0;
  }

  // What a request counts for before it is placed, in milli: a memory request as the portion it
  // would take of a device of `typical_device_memory_bytes`, the others their nominal amount.
  int64_t pending_milli(int64_t typical_device_memory_bytes) const {
    return kind == Kind::kMemory ? milli_on_device(typical_device_memory_bytes) : nominal_milli();
  }

  friend bool operator==(const GpuRequest&, const GpuRequest&) = default;
};

}  // namespace tessera
