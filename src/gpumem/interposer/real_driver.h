// The real CUDA driver beneath the interposer: libcuda.so.1 opened by name (whatever the loader
// finds: the NVIDIA driver, or the project's fake one in tests), its entry points looked up with
// the real dlsym — never through the interposer's own dlsym, which would hand back the wrappers.
#pragma once

#include "gpumem/cuda_driver_api.h"

namespace tessera::gpumem {

struct RealDriver {
  bool loaded = false;
  PFN_cuCtxGetDevice ctx_get_device = nullptr;
  // The swap resolver's helper thread moves a process's allocations in the context they were made in.
  PFN_cuCtxGetCurrent ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent ctx_set_current = nullptr;
  PFN_cuCtxSynchronize ctx_synchronize = nullptr;
  // A swap pod's stream-ordered allocation is managed memory, freed once its stream is done with it.
  PFN_cuStreamSynchronize stream_synchronize = nullptr;
  PFN_cuStreamSynchronize stream_synchronize_ptsz = nullptr;
  PFN_cuStreamIsCapturing stream_is_capturing = nullptr;
  PFN_cuStreamIsCapturing stream_is_capturing_ptsz = nullptr;
  PFN_cuDeviceTotalMem_v2 device_total_mem = nullptr;
  PFN_cuMemAlloc_v2 mem_alloc = nullptr;
  PFN_cuMemAllocPitch_v2 mem_alloc_pitch = nullptr;
  PFN_cuMemAllocManaged mem_alloc_managed = nullptr;
  PFN_cuMemAllocAsync mem_alloc_async = nullptr;
  PFN_cuMemAllocAsync mem_alloc_async_ptsz = nullptr;
  PFN_cuMemAllocFromPoolAsync mem_alloc_from_pool_async = nullptr;
  PFN_cuMemAllocFromPoolAsync mem_alloc_from_pool_async_ptsz = nullptr;
  PFN_cuMemFree_v2 mem_free = nullptr;
  PFN_cuMemFreeAsync mem_free_async = nullptr;
  PFN_cuMemFreeAsync mem_free_async_ptsz = nullptr;
  PFN_cuMemGetInfo_v2 mem_get_info = nullptr;
  PFN_cuMemAdvise mem_advise = nullptr;
  PFN_cuMemPrefetchAsync mem_prefetch_async = nullptr;
  PFN_cuMemCreate mem_create = nullptr;
  PFN_cuMemRelease mem_release = nullptr;
  PFN_cuGetProcAddress get_proc_address = nullptr;
  PFN_cuGetProcAddress_v2 get_proc_address_v2 = nullptr;
};

// The libc dlsym, found through dlvsym so that the interposer's own dlsym is bypassed.
using DlsymFunction = void* (*)(void*, const char*);
DlsymFunction real_dlsym();

// Opens libcuda.so.1 and looks up every entry point above; `loaded` false when it is missing.
RealDriver load_real_driver();

}  // namespace tessera::gpumem
