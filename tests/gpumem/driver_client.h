// How the test programs reach the CUDA driver: like a CUDA runtime does, by dlopen("libcuda.so.1")
// and then either dlsym on its handle or (CUDA 12's way) cuGetProcAddress for every entry point.
// Header-only and free of project libraries: scripts/gpumem-real-gpu.sh builds the programs with
// plain g++ on a GPU machine.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "gpumem/cuda_driver_api.h"

namespace tessera::gpumem::testing {

struct DriverClient {
  CUcontext context = nullptr;  // the device's primary context, current on the opening thread
  PFN_cuInit init = nullptr;
  PFN_cuDeviceGet device_get = nullptr;
  PFN_cuDevicePrimaryCtxRetain primary_ctx_retain = nullptr;
  PFN_cuCtxSetCurrent ctx_set_current = nullptr;
  PFN_cuCtxSynchronize ctx_synchronize = nullptr;
  PFN_cuMemAlloc_v2 mem_alloc = nullptr;
  PFN_cuMemAllocPitch_v2 mem_alloc_pitch = nullptr;
  PFN_cuMemAllocManaged mem_alloc_managed = nullptr;
  PFN_cuMemAllocAsync mem_alloc_async = nullptr;
  PFN_cuMemAllocFromPoolAsync mem_alloc_from_pool_async = nullptr;
  PFN_cuDeviceGetDefaultMemPool device_get_default_mem_pool = nullptr;
  PFN_cuMemFree_v2 mem_free = nullptr;
  PFN_cuMemFreeAsync mem_free_async = nullptr;
  PFN_cuMemGetInfo_v2 mem_get_info = nullptr;
  PFN_cuMemcpyHtoD_v2 memcpy_htod = nullptr;
  PFN_cuMemcpyDtoH_v2 memcpy_dtoh = nullptr;
  PFN_cuMemCreate mem_create = nullptr;
  PFN_cuMemRelease mem_release = nullptr;
  PFN_cuMemGetAllocationGranularity mem_get_allocation_granularity = nullptr;
};

// Loads the driver and makes device `ordinal`'s primary context current. Exits with a message when
// the driver or an entry point it needs is missing.
inline DriverClient open_driver(bool via_proc_address, int ordinal = 0) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
    std::exit(3);
  }
  DriverClient client;
  PFN_cuGetProcAddress_v2 get_proc = nullptr;
  if (via_proc_address) {
    get_proc = reinterpret_cast<PFN_cuGetProcAddress_v2>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
      std::fprintf(stderr, "libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than CUDA 12)\n");
      std::exit(3);
    }
  }
  // By base name through cuGetProcAddress (the driver picks the version), by exported name through dlsym.
  auto find = [&](const char* base, const char* exported, auto& target, bool required) {
    void* function = nullptr;
    if (get_proc != nullptr) {
      CUdriverProcAddressQueryResult status = 0;
      if (get_proc(base, &function, 12000, 0, &status) != CUDA_SUCCESS) function = nullptr;
    } else {
      function = dlsym(library, exported);
    }
    if (function == nullptr && required) {
      std::fprintf(stderr, "libcuda.so.1 lacks %s\n", exported);
      std::exit(3);
    }
    target = reinterpret_cast<std::remove_reference_t<decltype(target)>>(function);
  };
  find("cuInit", "cuInit", client.init, true);
  find("cuDeviceGet", "cuDeviceGet", client.device_get, true);
  find("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", client.primary_ctx_retain, true);
  find("cuCtxSetCurrent", "cuCtxSetCurrent", client.ctx_set_current, true);
  find("cuCtxSynchronize", "cuCtxSynchronize", client.ctx_synchronize, true);
  find("cuMemAlloc", "cuMemAlloc_v2", client.mem_alloc, true);
  find("cuMemAllocPitch", "cuMemAllocPitch_v2", client.mem_alloc_pitch, true);
  find("cuMemAllocManaged", "cuMemAllocManaged", client.mem_alloc_managed, false);
  find("cuMemAllocAsync", "cuMemAllocAsync", client.mem_alloc_async, false);
  find("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", client.mem_alloc_from_pool_async, false);
  find("cuDeviceGetDefaultMemPool", "cuDeviceGetDefaultMemPool", client.device_get_default_mem_pool, false);
  find("cuMemFree", "cuMemFree_v2", client.mem_free, true);
  find("cuMemFreeAsync", "cuMemFreeAsync", client.mem_free_async, false);
  find("cuMemGetInfo", "cuMemGetInfo_v2", client.mem_get_info, true);
  find("cuMemcpyHtoD", "cuMemcpyHtoD_v2", client.memcpy_htod, true);
  find("cuMemcpyDtoH", "cuMemcpyDtoH_v2", client.memcpy_dtoh, true);
  find("cuMemCreate", "cuMemCreate", client.mem_create, false);
  find("cuMemRelease", "cuMemRelease", client.mem_release, false);
  find("cuMemGetAllocationGranularity", "cuMemGetAllocationGranularity", client.mem_get_allocation_granularity, false);
  CUdevice device = 0;
  CUresult status = client.init(0);
  if (status == CUDA_SUCCESS) status = client.device_get(&device, ordinal);
  if (status == CUDA_SUCCESS) status = client.primary_ctx_retain(&client.context, device);
  if (status == CUDA_SUCCESS) status = client.ctx_set_current(client.context);
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr, "cannot open device %d: CUDA error %d\n", ordinal, status);
    std::exit(3);
  }
  return client;
}

}  // namespace tessera::gpumem::testing
