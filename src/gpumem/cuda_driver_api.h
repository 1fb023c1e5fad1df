// The subset of the CUDA driver API (libcuda.so.1) that the interposer wraps and the test programs
// call, declared here because no CUDA headers are installed. These are public ABI facts of the
// driver on 64-bit Linux (cuda.h, cudaTypedefs.h): the exported symbol names with their _v2
// suffixes, argument types and the numeric result codes. A mismatch here would corrupt calls into a
// real driver, so nothing is declared that the code does not use.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

using CUresult = int;  // an enum in cuda.h: 4 bytes
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 (64-bit)
using CUmemGenericAllocationHandle = unsigned long long;
using cuuint64_t = std::uint64_t;
struct CUctx_st;
struct CUstream_st;
struct CUmemPoolHandle_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUmemoryPool = CUmemPoolHandle_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;

// cuGetProcAddress_v2's report of a lookup (CUDA 12).
using CUdriverProcAddressQueryResult = int;
inline constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SUCCESS = 0;
inline constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1;

// cuMemAllocManaged's flags.
inline constexpr unsigned int CU_MEM_ATTACH_GLOBAL = 0x1;
// cuMemAdvise's advice (CUmem_advise) and the device number that means host memory.
inline constexpr int CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3;
inline constexpr CUdevice CU_DEVICE_CPU = -1;

// The virtual memory management API's allocation properties (CUmemAllocationProp, 32 bytes).
inline constexpr int CU_MEM_ALLOCATION_TYPE_PINNED = 0x1;
inline constexpr int CU_MEM_LOCATION_TYPE_DEVICE = 0x1;
inline constexpr int CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0;
inline constexpr int CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3;
struct CUmemLocation {
  int type;  // CUmemLocationType
  int id;    // the device ordinal for CU_MEM_LOCATION_TYPE_DEVICE
};
struct CUmemAllocationProp {
  int type;                  // CUmemAllocationType
  int requestedHandleTypes;  // CUmemAllocationHandleType
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};
static_assert(sizeof(CUmemAllocationProp) == 32);
struct CUmemAccessDesc {
  CUmemLocation location;
  int flags;  // CUmemAccess_flags
};

// Entry points, by the name each is exported under.
using PFN_cuInit = CUresult (*)(unsigned int flags);
using PFN_cuDriverGetVersion = CUresult (*)(int* version);
using PFN_cuDeviceGet = CUresult (*)(CUdevice* device, int ordinal);
using PFN_cuDeviceGetCount = CUresult (*)(int* count);
using PFN_cuDeviceTotalMem_v2 = CUresult (*)(std::size_t* bytes, CUdevice device);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext* context, CUdevice device);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext context);
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext* context);
using PFN_cuCtxGetDevice = CUresult (*)(CUdevice* device);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuStreamSynchronize = CUresult (*)(CUstream stream);
// CUstreamCaptureStatus: CU_STREAM_CAPTURE_STATUS_NONE (0), _ACTIVE (1), _INVALIDATED (2).
using CUstreamCaptureStatus = int;
inline constexpr CUstreamCaptureStatus CU_STREAM_CAPTURE_STATUS_NONE = 0;
inline constexpr CUstreamCaptureStatus CU_STREAM_CAPTURE_STATUS_ACTIVE = 1;
using PFN_cuStreamIsCapturing = CUresult (*)(CUstream stream, CUstreamCaptureStatus* status);
using PFN_cuDeviceGetDefaultMemPool = CUresult (*)(CUmemoryPool* pool, CUdevice device);
using PFN_cuMemAlloc_v2 = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes);
using PFN_cuMemAllocPitch_v2 = CUresult (*)(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width_bytes,
                                            std::size_t height, unsigned int element_size_bytes);
using PFN_cuMemAllocManaged = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags);
using PFN_cuMemAllocAsync = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, CUstream stream);
using PFN_cuMemAllocFromPoolAsync = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                 CUstream stream);
using PFN_cuMemFree_v2 = CUresult (*)(CUdeviceptr dptr);
using PFN_cuMemFreeAsync = CUresult (*)(CUdeviceptr dptr, CUstream stream);
using PFN_cuMemGetInfo_v2 = CUresult (*)(std::size_t* free, std::size_t* total);
// The CUDA 8 signatures, still exported under these names (CUDA 12.2's _v2 take a CUmemLocation).
using PFN_cuMemAdvise = CUresult (*)(CUdeviceptr ptr, std::size_t bytes, int advice, CUdevice device);
using PFN_cuMemPrefetchAsync = CUresult (*)(CUdeviceptr ptr, std::size_t bytes, CUdevice destination, CUstream stream);
using PFN_cuMemcpyHtoD_v2 = CUresult (*)(CUdeviceptr dst, const void* src, std::size_t bytes);
using PFN_cuMemcpyDtoH_v2 = CUresult (*)(void* dst, CUdeviceptr src, std::size_t bytes);
using PFN_cuMemsetD8_v2 = CUresult (*)(CUdeviceptr dst, unsigned char value, std::size_t count);
using PFN_cuMemCreate = CUresult (*)(CUmemGenericAllocationHandle* handle, std::size_t bytes,
                                     const CUmemAllocationProp* prop, unsigned long long flags);
using PFN_cuMemRelease = CUresult (*)(CUmemGenericAllocationHandle handle);
using PFN_cuMemGetAllocationGranularity = CUresult (*)(std::size_t* granularity, const CUmemAllocationProp* prop,
                                                       int option);
using PFN_cuMemAddressReserve = CUresult (*)(CUdeviceptr* ptr, std::size_t bytes, std::size_t alignment,
                                             CUdeviceptr addr, unsigned long long flags);
using PFN_cuMemAddressFree = CUresult (*)(CUdeviceptr ptr, std::size_t bytes);
using PFN_cuMemMap = CUresult (*)(CUdeviceptr ptr, std::size_t bytes, std::size_t offset,
                                  CUmemGenericAllocationHandle handle, unsigned long long flags);
using PFN_cuMemUnmap = CUresult (*)(CUdeviceptr ptr, std::size_t bytes);
using PFN_cuMemSetAccess = CUresult (*)(CUdeviceptr ptr, std::size_t bytes, const CUmemAccessDesc* desc,
                                        std::size_t count);
// CUDA 11.3's signature, still exported as "cuGetProcAddress"; CUDA 12 added the status argument
// under "cuGetProcAddress_v2" (cuda.h maps the name to it).
using PFN_cuGetProcAddress = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);
using PFN_cuGetProcAddress_v2 = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status);

}  // extern "C"
