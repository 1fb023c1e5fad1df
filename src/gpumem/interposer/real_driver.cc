#include "gpumem/interposer/real_driver.h"

#include <dlfcn.h>

#include <initializer_list>

namespace tessera::gpumem {

DlsymFunction real_dlsym() {
  // glibc 2.34 moved dlsym into libc under a new version; older ones export only the first.
  static const DlsymFunction function = [] {
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"}) {
      if (void* found = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFunction>(found);
    }
    return static_cast<DlsymFunction>(nullptr);
  }();
  return function;
}

namespace {

template <typename Function>
void look_up(void* library, const char* name, Function& target) {
  target = reinterpret_cast<Function>(real_dlsym()(library, name));
}

}  // namespace

RealDriver load_real_driver() {
  RealDriver driver;
  if (real_dlsym() == nullptr) return driver;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) return driver;
  look_up(library, "cuCtxGetDevice", driver.ctx_get_device);
  look_up(library, "cuCtxGetCurrent", driver.ctx_get_current);
  look_up(library, "cuCtxSetCurrent", driver.ctx_set_current);
  look_up(library, "cuCtxSynchronize", driver.ctx_synchronize);
  look_up(library, "cuStreamSynchronize", driver.stream_synchronize);
  look_up(library, "cuStreamSynchronize_ptsz", driver.stream_synchronize_ptsz);
  look_up(library, "cuStreamIsCapturing", driver.stream_is_capturing);
  look_up(library, "cuStreamIsCapturing_ptsz", driver.stream_is_capturing_ptsz);
  look_up(library, "cuDeviceTotalMem_v2", driver.device_total_mem);
  look_up(library, "cuMemAlloc_v2", driver.mem_alloc);
  look_up(library, "cuMemAllocPitch_v2", driver.mem_alloc_pitch);
  look_up(library, "cuMemAllocManaged", driver.mem_alloc_managed);
  look_up(library, "cuMemAllocAsync", driver.mem_alloc_async);
  look_up(library, "cuMemAllocAsync_ptsz", driver.mem_alloc_async_ptsz);
  look_up(library, "cuMemAllocFromPoolAsync", driver.mem_alloc_from_pool_async);
  look_up(library, "cuMemAllocFromPoolAsync_ptsz", driver.mem_alloc_from_pool_async_ptsz);
  look_up(library, "cuMemFree_v2", driver.mem_free);
  look_up(library, "cuMemFreeAsync", driver.mem_free_async);
  look_up(library, "cuMemFreeAsync_ptsz", driver.mem_free_async_ptsz);
  look_up(library, "cuMemGetInfo_v2", driver.mem_get_info);
  look_up(library, "cuMemAdvise", driver.mem_advise);
  look_up(library, "cuMemPrefetchAsync", driver.mem_prefetch_async);
  look_up(library, "cuMemCreate", driver.mem_create);
  look_up(library, "cuMemRelease", driver.mem_release);
  look_up(library, "cuGetProcAddress", driver.get_proc_address);
  look_up(library, "cuGetProcAddress_v2", driver.get_proc_address_v2);
  driver.loaded = driver.mem_alloc != nullptr && driver.mem_free != nullptr && driver.ctx_get_device != nullptr;
  return driver;
}

}  // namespace tessera::gpumem
