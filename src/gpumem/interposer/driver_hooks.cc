// The CUDA driver functions libtessera-gpumem.so exports in place of libcuda.so.1's, and the two
// ways a program reaches them without linking to them: cuGetProcAddress (CUDA 12 runtimes fetch
// every entry point through it) and dlsym on libcuda's handle (older runtimes and frameworks that
// load the driver themselves). docs/gpu-memory.md §Interception lists what each path covers.
#include <dlfcn.h>

#include <cstring>

#include "gpumem/cuda_driver_api.h"
#include "gpumem/interposer/interposer.h"

#define TESSERA_EXPORT extern "C" __attribute__((visibility("default")))

namespace tessera::gpumem {
namespace {

Interposer& self() { return Interposer::instance(); }

// The swap resolver's placement: managed memory the driver keeps in host memory (the device reads
// it across the bus) until bring_back() makes the device its place again and moves it there.
CUresult allocate_in_host(CUdeviceptr* pointer, std::uint64_t bytes) {
  const RealDriver& driver = self().driver();
  const CUresult result = driver.mem_alloc_managed(pointer, bytes, CU_MEM_ATTACH_GLOBAL);
  if (result != CUDA_SUCCESS) return result;
  driver.mem_advise(*pointer, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU);
  return CUDA_SUCCESS;
}

// A swap pod's allocation granted on the device: managed memory that prefers the device and is
// moved there now, so that it can later move to host memory and back at the same address.
CUresult allocate_movable(CUdeviceptr* pointer, std::uint64_t bytes, int ordinal) {
  const RealDriver& driver = self().driver();
  const CUresult result = driver.mem_alloc_managed(pointer, bytes, CU_MEM_ATTACH_GLOBAL);
  if (result != CUDA_SUCCESS) return result;
  driver.mem_advise(*pointer, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, ordinal);
  const CUresult placed = driver.mem_prefetch_async(*pointer, bytes, ordinal, nullptr);
  if (placed != CUDA_SUCCESS) driver.mem_free(*pointer);
  return placed;
}

// Charges, calls the driver (or, for a swap pod's allocation, allocates managed memory: in host
// memory when it collides, on the device otherwise; only when `may_place_in_host`), and undoes
// the charge if the driver refused.
template <typename Function, typename... Arguments>
CUresult charged_allocation(bool may_place_in_host, int ordinal, std::uint64_t bytes, CUdeviceptr* pointer,
                            Function function, Arguments... arguments) {
  if (function == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (pointer == nullptr || bytes == 0) return function(pointer, arguments...);  // the driver names the bad argument
  Charge charge;
  if (self().charge(ordinal, bytes, &charge, may_place_in_host) != CUDA_SUCCESS) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult result = charge.in_host   ? allocate_in_host(pointer, bytes)
                          : charge.movable ? allocate_movable(pointer, bytes, ordinal)
                                           : function(pointer, arguments...);
  if (result != CUDA_SUCCESS) {
    self().uncharge(charge, bytes);
    return result;
  }
  self().remember(*pointer, bytes, charge, false);
  return result;
}

template <typename Function, typename... Arguments>
CUresult charged_free(std::uint64_t key, bool vmm_handle, Function function, Arguments... arguments) {
  if (function == nullptr) return CUDA_ERROR_NOT_FOUND;
  const std::optional<Allocation> allocation = self().take(key, vmm_handle);
  const CUresult result = function(arguments...);
  self().settle_free(allocation, key, vmm_handle, result);
  return result;
}

// cuMemFreeAsync: a swap pod's stream-ordered allocation was made as managed memory, which the
// driver frees only with cuMemFree. The free must still come after the work queued on `stream`
// before it (the stream-ordered contract; work on other streams the program orders before it
// through events on this stream), so the stream is synchronised first.
CUresult stream_ordered_free(CUdeviceptr pointer, CUstream stream, PFN_cuMemFreeAsync free_async,
                             PFN_cuStreamSynchronize synchronize) {
  if (free_async == nullptr) return CUDA_ERROR_NOT_FOUND;
  const std::optional<Allocation> allocation = self().take(pointer, false);
  CUresult result;
  if (allocation && allocation->movable) {
    result = synchronize(stream);
    if (result == CUDA_SUCCESS) result = self().driver().mem_free(pointer);
  } else {
    result = free_async(pointer, stream);
  }
  self().settle_free(allocation, pointer, false, result);
  return result;
}

constexpr std::size_t kPitchAlignment = 512;  // the widest pitch alignment devices use

// Stream-ordered allocations may be made movable (managed memory, allocated at once: usable from
// the call on, so in any stream's order too) when the driver can then free them in stream order,
// and not while `stream` is being captured into a graph: there the allocation must become the
// graph's own node, and a managed allocation or a synchronisation would end the capture.
bool async_may_move(CUstream stream, PFN_cuStreamIsCapturing is_capturing) {
  if (!self().can_free_in_stream_order()) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return is_capturing(stream, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE;
}

// A driver without the per-thread-default-stream variant gets the plain one: they differ only in
// what stream 0 means.
template <typename Function>
Function per_thread(Function per_thread_variant, Function plain) {
  return per_thread_variant != nullptr ? per_thread_variant : plain;
}

}  // namespace
}  // namespace tessera::gpumem

using namespace tessera::gpumem;

TESSERA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes) {
  return charged_allocation(true, self().current_ordinal(), bytes, dptr, self().driver().mem_alloc, bytes);
}

TESSERA_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags) {
  return charged_allocation(false, self().current_ordinal(), bytes, dptr, self().driver().mem_alloc_managed, bytes,
                            flags);
}

TESSERA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return charged_allocation(async_may_move(stream, self().driver().stream_is_capturing), self().current_ordinal(),
                            bytes, dptr, self().driver().mem_alloc_async, bytes, stream);
}

TESSERA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return charged_allocation(
      async_may_move(stream, per_thread(self().driver().stream_is_capturing_ptsz, self().driver().stream_is_capturing)),
      self().current_ordinal(), bytes, dptr,
      per_thread(self().driver().mem_alloc_async_ptsz, self().driver().mem_alloc_async), bytes, stream);
}

TESSERA_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                CUstream stream) {
  return charged_allocation(async_may_move(stream, self().driver().stream_is_capturing), self().current_ordinal(),
                            bytes, dptr, self().driver().mem_alloc_from_pool_async, bytes, pool, stream);
}

TESSERA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                     CUstream stream) {
  return charged_allocation(
      async_may_move(stream, per_thread(self().driver().stream_is_capturing_ptsz, self().driver().stream_is_capturing)),
      self().current_ordinal(), bytes, dptr,
      per_thread(self().driver().mem_alloc_from_pool_async_ptsz, self().driver().mem_alloc_from_pool_async), bytes,
      pool, stream);
}

TESSERA_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width_bytes,
                                           std::size_t height, unsigned int element_size_bytes) {
  const auto real = self().driver().mem_alloc_pitch;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (dptr == nullptr || pitch == nullptr || width_bytes == 0 || height == 0) {
    return real(dptr, pitch, width_bytes, height, element_size_bytes);
  }
  // The driver picks the pitch: charge the widest it could pick, then settle on what it picked.
  const std::size_t widest_pitch = (width_bytes + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  const std::uint64_t estimate = std::uint64_t{widest_pitch} * height;
  const int ordinal = self().current_ordinal();
  Charge charge;
  if (self().charge(ordinal, estimate, &charge, true) != CUDA_SUCCESS) return CUDA_ERROR_OUT_OF_MEMORY;
  if (charge.in_host || charge.movable) {
    // A swap pod's rows are managed memory at the widest pitch: a multiple of every device's
    // alignment, so 2D copies and textures over it work as over the driver's own pitch.
    const CUresult result =
        charge.in_host ? allocate_in_host(dptr, estimate) : allocate_movable(dptr, estimate, ordinal);
    if (result != CUDA_SUCCESS) {
      self().uncharge(charge, estimate);
      return result;
    }
    *pitch = widest_pitch;
    self().remember(*dptr, estimate, charge, false);
    return result;
  }
  const CUresult result = real(dptr, pitch, width_bytes, height, element_size_bytes);
  if (result != CUDA_SUCCESS) {
    self().uncharge(charge, estimate);
    return result;
  }
  const std::uint64_t actual = static_cast<std::uint64_t>(*pitch) * height;
  if (self().recharge(charge, estimate, actual) != CUDA_SUCCESS) {
    self().driver().mem_free(*dptr);
    self().uncharge(charge, estimate);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  self().remember(*dptr, actual, charge, false);
  return result;
}

TESSERA_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return charged_free(dptr, false, self().driver().mem_free, dptr);
}

TESSERA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return stream_ordered_free(dptr, stream, self().driver().mem_free_async, self().driver().stream_synchronize);
}

TESSERA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return stream_ordered_free(dptr, stream,
                             per_thread(self().driver().mem_free_async_ptsz, self().driver().mem_free_async),
                             per_thread(self().driver().stream_synchronize_ptsz, self().driver().stream_synchronize));
}

// Physical memory of the virtual memory management API: charged when created, whatever is mapped.
TESSERA_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t bytes,
                                    const CUmemAllocationProp* prop, unsigned long long flags) {
  const auto real = self().driver().mem_create;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (handle == nullptr || prop == nullptr || bytes == 0 || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return real(handle, bytes, prop, flags);
  }
  Charge charge;
  if (self().charge(prop->location.id, bytes, &charge) != CUDA_SUCCESS) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult result = real(handle, bytes, prop, flags);
  if (result != CUDA_SUCCESS) {
    self().uncharge(charge, bytes);
    return result;
  }
  self().remember(*handle, bytes, charge, true);
  return result;
}

TESSERA_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return charged_free(handle, true, self().driver().mem_release, handle);
}

TESSERA_EXPORT CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  const auto real = self().driver().mem_get_info;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult result = real(free, total);
  if (result == CUDA_SUCCESS && free != nullptr && total != nullptr) {
    self().pod_memory_view(self().current_ordinal(), free, total);
  }
  return result;
}

TESSERA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);
TESSERA_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status);

namespace tessera::gpumem {
namespace {

// The wrapper a driver lookup of `symbol` must return instead of the driver's own, or null.
// cuGetProcAddress names functions without their version suffix and picks the version from the
// caller's CUDA version (the _v2 memory functions since 3.2, cuGetProcAddress_v2 since 12.0) and
// the per-thread default stream flag (the _ptsz variants); dlsym names them exactly.
void* wrapper_for(const char* symbol, int cuda_version, cuuint64_t flags, bool exact_name) {
  struct Hook {
    const char* base;
    void* wrapper;
    void* per_thread_wrapper;  // the _ptsz variant, when there is one
    int since_version;         // cuGetProcAddress returns this version from this CUDA version on
    const char* exact;         // the exported name of `wrapper`
  };
  static const Hook hooks[] = {
      {"cuMemAlloc", reinterpret_cast<void*>(&cuMemAlloc_v2), nullptr, 3020, "cuMemAlloc_v2"},
      {"cuMemAllocPitch", reinterpret_cast<void*>(&cuMemAllocPitch_v2), nullptr, 3020, "cuMemAllocPitch_v2"},
      {"cuMemAllocManaged", reinterpret_cast<void*>(&cuMemAllocManaged), nullptr, 0, "cuMemAllocManaged"},
      {"cuMemAllocAsync", reinterpret_cast<void*>(&cuMemAllocAsync), reinterpret_cast<void*>(&cuMemAllocAsync_ptsz), 0,
       "cuMemAllocAsync"},
      {"cuMemAllocFromPoolAsync", reinterpret_cast<void*>(&cuMemAllocFromPoolAsync),
       reinterpret_cast<void*>(&cuMemAllocFromPoolAsync_ptsz), 0, "cuMemAllocFromPoolAsync"},
      {"cuMemFree", reinterpret_cast<void*>(&cuMemFree_v2), nullptr, 3020, "cuMemFree_v2"},
      {"cuMemFreeAsync", reinterpret_cast<void*>(&cuMemFreeAsync), reinterpret_cast<void*>(&cuMemFreeAsync_ptsz), 0,
       "cuMemFreeAsync"},
      {"cuMemGetInfo", reinterpret_cast<void*>(&cuMemGetInfo_v2), nullptr, 3020, "cuMemGetInfo_v2"},
      {"cuMemCreate", reinterpret_cast<void*>(&cuMemCreate), nullptr, 0, "cuMemCreate"},
      {"cuMemRelease", reinterpret_cast<void*>(&cuMemRelease), nullptr, 0, "cuMemRelease"},
      {"cuGetProcAddress", reinterpret_cast<void*>(&cuGetProcAddress_v2), nullptr, 12000, "cuGetProcAddress_v2"},
      {"cuGetProcAddress", reinterpret_cast<void*>(&cuGetProcAddress), nullptr, 0, "cuGetProcAddress"},
      {"cuMemAllocAsync_ptsz", reinterpret_cast<void*>(&cuMemAllocAsync_ptsz), nullptr, 0, "cuMemAllocAsync_ptsz"},
      {"cuMemAllocFromPoolAsync_ptsz", reinterpret_cast<void*>(&cuMemAllocFromPoolAsync_ptsz), nullptr, 0,
       "cuMemAllocFromPoolAsync_ptsz"},
      {"cuMemFreeAsync_ptsz", reinterpret_cast<void*>(&cuMemFreeAsync_ptsz), nullptr, 0, "cuMemFreeAsync_ptsz"},
  };
  constexpr cuuint64_t kPerThreadDefaultStream = 2;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
  for (const Hook& hook : hooks) {
    if (exact_name) {
      if (std::strcmp(symbol, hook.exact) == 0) return hook.wrapper;
      continue;
    }
    if (std::strcmp(symbol, hook.base) != 0 || cuda_version < hook.since_version) continue;
    if ((flags & kPerThreadDefaultStream) != 0 && hook.per_thread_wrapper != nullptr) return hook.per_thread_wrapper;
    return hook.wrapper;
  }
  return nullptr;
}

}  // namespace
}  // namespace tessera::gpumem

TESSERA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  const auto real = self().driver().get_proc_address;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult result = real(symbol, pfn, cuda_version, flags);
  if (result == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    if (void* wrapper = wrapper_for(symbol, cuda_version, flags, false)) *pfn = wrapper;
  }
  return result;
}

TESSERA_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  const auto real = self().driver().get_proc_address_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  const CUresult result = real(symbol, pfn, cuda_version, flags, status);
  if (result == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    if (void* wrapper = wrapper_for(symbol, cuda_version, flags, false)) *pfn = wrapper;
  }
  return result;
}

// A lookup of a wrapped driver function by its exported name gets the wrapper when the library
// asked of has the function; every other lookup goes to libc's dlsym as a tail call, so that
// RTLD_NEXT still resolves relative to the real caller.
TESSERA_EXPORT void* dlsym(void* handle, const char* symbol) {
  if (symbol[0] == 'c' && symbol[1] == 'u') {
    if (void* wrapper = wrapper_for(symbol, 0, 0, true)) {
      if (real_dlsym()(handle, symbol) != nullptr) return wrapper;
    }
  }
  return real_dlsym()(handle, symbol);
}
