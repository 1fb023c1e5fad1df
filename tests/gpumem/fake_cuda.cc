// A fake CUDA driver, built as libcuda.so.1, for running the interposer and the test programs on
// machines without a GPU. It implements the driver API subset they use with simulated devices:
// device memory is anonymous host memory (so contents survive and checksums mean something), and
// each device's use is counted in a file shared by every process that loads it, like one physical
// device shared by several containers. Environment:
//   TESSERA_FAKE_CUDA_STATE          the shared file (default /tmp/tessera-fake-cuda-<uid>)
//   TESSERA_FAKE_CUDA_DEVICES        how many devices (default 1, at most 16)
//   TESSERA_FAKE_CUDA_DEVICE_MEMORY  bytes per device (default 16 GiB)
//   TESSERA_FAKE_CUDA_OVERCOMMIT=1   grant past the capacity (and record it), so that a test can
//                                    measure how far the layer above would overshoot
// As a real driver does, it takes back what a process held when the process ends: each process
// holds a lock on a byte of the shared file, and an allocation the device cannot fit first
// reclaims the memory of processes whose lock is gone.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "gpumem/cuda_driver_api.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// The stream handle the fake reports as being captured into a graph (programs find it by dlsym).
FAKE_EXPORT CUstream tesseraFakeCapturingStream;
CUstream tesseraFakeCapturingStream = reinterpret_cast<CUstream>(std::uintptr_t{0xca97});

namespace {

constexpr int kFakeMaxDevices = 16;
constexpr int kFakeMaxProcesses = 1024;
constexpr off_t kFakeProcessLockOffset = off_t{1} << 32;

struct FakeDevice {
  std::atomic<std::uint64_t> used;
  std::atomic<std::uint64_t> peak;
  std::atomic<std::uint64_t> allocations;
  std::atomic<std::uint64_t> refusals;
};

struct FakeProcess {
  std::atomic<std::int32_t> pid;  // 0: a free slot
  std::atomic<std::uint64_t> used[kFakeMaxDevices];
};

struct FakeState {
  std::uint64_t capacity;
  std::int32_t devices;
  std::int32_t overcommit;
  FakeDevice device[kFakeMaxDevices];
  FakeProcess processes[kFakeMaxProcesses];
};

// A byte-range lock on the shared file at `slot`'s byte: held by the live process of that slot.
bool lock_slot(int fd, int slot, short type, int command) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = kFakeProcessLockOffset + slot;
  range.l_len = 1;
  if (fcntl(fd, command, &range) != 0) return false;
  return command != F_OFD_GETLK || range.l_type == F_UNLCK;  // for a query: true when nobody holds it
}

struct FakeAllocation {
  std::uint64_t bytes;
  int device;
  bool mapped;    // mmap'd (large) rather than from the heap (small)
  bool resident;  // counted on its device: always, except managed memory until prefetched there
  bool managed;   // cuMemAllocManaged's: a real driver frees it with cuMemFree only, never stream-ordered
};

// Small allocations come from the heap, so that the fake's own cost stays small beside what the
// interposer adds; large ones are mapped, backed only where touched.
constexpr std::uint64_t kLargestHeapAllocation = std::uint64_t{1} << 20;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : fallback;
}

class FakeDriver {
 public:
  static FakeDriver& instance() {
    static FakeDriver* const driver = new FakeDriver();
    return *driver;
  }

  FakeState& state() { return *state_; }

  // Managed memory (`resident` false) takes no device memory until it is prefetched there, as a
  // real driver's pages land on the device only when touched or prefetched.
  CUresult allocate(int device, std::uint64_t bytes, CUdeviceptr* pointer, bool resident = true) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (device < 0 || device >= state_->devices) return CUDA_ERROR_INVALID_CONTEXT;
    FakeDevice& record = state_->device[device];
    if (resident && !take_device_memory(device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
    record.allocations.fetch_add(1);
    // Pages are backed only when touched: a test may "allocate" gigabytes it never writes.
    const bool mapped = bytes > kLargestHeapAllocation;
    void* memory =
        mapped ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
               : std::malloc(bytes);
    if (memory == MAP_FAILED || memory == nullptr) {
      if (resident) give_device_memory(device, bytes);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pointer = reinterpret_cast<CUdeviceptr>(memory);
    std::lock_guard lock(mutex_);
    allocations_[*pointer] = {bytes, device, mapped, resident, !resident};
    return CUDA_SUCCESS;
  }

  // cuMemPrefetchAsync of a whole managed allocation: to a device (counted there, refused when it
  // does not fit) or to the host (CU_DEVICE_CPU: no longer counted).
  CUresult prefetch(CUdeviceptr pointer, std::uint64_t bytes, CUdevice destination) {
    std::lock_guard lock(mutex_);
    auto found = allocations_.find(pointer);
    if (found == allocations_.end() || found->second.bytes != bytes) return CUDA_ERROR_INVALID_VALUE;
    FakeAllocation& allocation = found->second;
    if (destination == CU_DEVICE_CPU && allocation.resident) {
      give_device_memory(allocation.device, bytes);
      allocation.resident = false;
    } else if (destination >= 0 && !allocation.resident) {
      if (destination != allocation.device) return CUDA_ERROR_INVALID_DEVICE;
      if (!take_device_memory(allocation.device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
      allocation.resident = true;
    }
    return CUDA_SUCCESS;
  }

  CUresult release(CUdeviceptr pointer, bool stream_ordered = false) {
    if (pointer == 0) return CUDA_SUCCESS;
    FakeAllocation allocation;
    {
      std::lock_guard lock(mutex_);
      auto found = allocations_.find(pointer);
      if (found == allocations_.end() || (stream_ordered && found->second.managed)) return CUDA_ERROR_INVALID_VALUE;
      allocation = found->second;
      allocations_.erase(found);
    }
    if (allocation.mapped) {
      munmap(reinterpret_cast<void*>(pointer), allocation.bytes);
    } else {
      std::free(reinterpret_cast<void*>(pointer));
    }
    if (allocation.resident) give_device_memory(allocation.device, allocation.bytes);
    return CUDA_SUCCESS;
  }

 private:
  FakeDriver() {
    std::string path = std::getenv("TESSERA_FAKE_CUDA_STATE") != nullptr
                           ? std::getenv("TESSERA_FAKE_CUDA_STATE")
                           : "/tmp/tessera-fake-cuda-" + std::to_string(getuid());
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    flock(fd, LOCK_EX);
    bool fresh = lseek(fd, 0, SEEK_END) < static_cast<off_t>(sizeof(FakeState));
    if (fresh && ftruncate(fd, sizeof(FakeState)) != 0) std::abort();
    state_ = static_cast<FakeState*>(mmap(nullptr, sizeof(FakeState), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (state_ == MAP_FAILED) std::abort();
    if (fresh || state_->capacity == 0) {
      state_->capacity = env_number("TESSERA_FAKE_CUDA_DEVICE_MEMORY", std::uint64_t{16} << 30);
      const std::uint64_t devices = env_number("TESSERA_FAKE_CUDA_DEVICES", 1);
      state_->devices = static_cast<std::int32_t>(devices < kFakeMaxDevices ? devices : kFakeMaxDevices);
      state_->overcommit = env_number("TESSERA_FAKE_CUDA_OVERCOMMIT", 0) != 0 ? 1 : 0;
    }
    flock(fd, LOCK_UN);
    query_fd_ = fd;
    lock_fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
    register_process();
  }

  bool take_device_memory(int device, std::uint64_t bytes) {
    FakeDevice& record = state_->device[device];
    if (!reserve(record, bytes) && (reclaim_dead_processes() == 0 || !reserve(record, bytes))) {
      record.refusals.fetch_add(1);
      return false;
    }
    state_->processes[slot_].used[device].fetch_add(bytes);
    return true;
  }

  void give_device_memory(int device, std::uint64_t bytes) {
    state_->device[device].used.fetch_sub(bytes);
    state_->processes[slot_].used[device].fetch_sub(bytes);
  }

  bool reserve(FakeDevice& record, std::uint64_t bytes) {
    std::uint64_t used = record.used.load();
    do {
      if (state_->overcommit == 0 && used + bytes > state_->capacity) return false;
    } while (!record.used.compare_exchange_weak(used, used + bytes));
    std::uint64_t peak = record.peak.load();
    while (used + bytes > peak && !record.peak.compare_exchange_weak(peak, used + bytes)) {
    }
    return true;
  }

  void register_process() {
    for (int pass = 0; pass < 2; ++pass) {
      for (int slot = 0; slot < kFakeMaxProcesses; ++slot) {
        std::int32_t free = 0;
        if (!state_->processes[slot].pid.compare_exchange_strong(free, getpid())) continue;
        if (lock_slot(lock_fd_, slot, F_WRLCK, F_OFD_SETLK)) {
          slot_ = slot;
          return;
        }
        state_->processes[slot].pid.store(0);
      }
      reclaim_dead_processes();
    }
    std::abort();  // more live processes than the fake has slots
  }

  // What ended processes held goes back to the devices; the bytes taken back.
  std::uint64_t reclaim_dead_processes() {
    std::uint64_t reclaimed = 0;
    for (int slot = 0; slot < kFakeMaxProcesses; ++slot) {
      FakeProcess& process = state_->processes[slot];
      std::int32_t pid = process.pid.load();
      if (pid == 0 || slot == slot_ || !lock_slot(query_fd_, slot, F_WRLCK, F_OFD_GETLK)) continue;
      if (!process.pid.compare_exchange_strong(pid, -1)) continue;  // another process reclaims it
      for (int device = 0; device < kFakeMaxDevices; ++device) {
        const std::uint64_t held = process.used[device].exchange(0);
        state_->device[device].used.fetch_sub(held);
        reclaimed += held;
      }
      process.pid.store(0);
    }
    return reclaimed;
  }

  FakeState* state_ = nullptr;
  int query_fd_ = -1;
  int lock_fd_ = -1;
  int slot_ = -1;
  std::mutex mutex_;
  std::unordered_map<CUdeviceptr, FakeAllocation> allocations_;
};

thread_local int current_device = -1;
bool initialised = false;

FakeDriver& fake() { return FakeDriver::instance(); }

CUresult check_context() {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  return current_device < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

// The variants call these, never the exported functions: a preloaded interposer would otherwise
// see (and charge) the inner call too, which a real driver's internal calls never expose.
CUresult allocate_on_current(CUdeviceptr* dptr, std::size_t bytes) {
  if (CUresult status = check_context(); status != CUDA_SUCCESS) return status;
  return fake().allocate(current_device, bytes, dptr);
}

CUresult release_any(CUdeviceptr dptr, bool stream_ordered = false) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  return fake().release(dptr, stream_ordered);
}

}  // namespace

FAKE_EXPORT CUresult cuInit(unsigned int) {
  fake();
  initialised = true;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  *version = 12040;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  *count = fake().state().devices;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= fake().state().devices) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice device) {
  if (device < 0 || device >= fake().state().devices) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = fake().state().capacity;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (device < 0 || device >= fake().state().devices) return CUDA_ERROR_INVALID_DEVICE;
  *context = reinterpret_cast<CUcontext>(static_cast<std::intptr_t>(device) + 1);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  current_device = static_cast<int>(reinterpret_cast<std::intptr_t>(context)) - 1;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext* context) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  *context = reinterpret_cast<CUcontext>(static_cast<std::intptr_t>(current_device) + 1);  // null without one
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  if (CUresult status = check_context(); status != CUDA_SUCCESS) return status;
  *device = current_device;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSynchronize() { return check_context(); }

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes) { return allocate_on_current(dptr, bytes); }

FAKE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int) {
  if (CUresult status = check_context(); status != CUDA_SUCCESS) return status;
  return fake().allocate(current_device, bytes, dptr, /*resident=*/false);
}

FAKE_EXPORT CUresult cuMemAdvise(CUdeviceptr, std::size_t, int, CUdevice) { return check_context(); }

FAKE_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr dptr, std::size_t bytes, CUdevice destination, CUstream) {
  if (CUresult status = check_context(); status != CUDA_SUCCESS) return status;
  return fake().prefetch(dptr, bytes, destination);
}

FAKE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream) {
  return allocate_on_current(dptr, bytes);
}

FAKE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream) {
  return allocate_on_current(dptr, bytes);
}

FAKE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool, CUstream) {
  return allocate_on_current(dptr, bytes);
}

FAKE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool, CUstream) {
  return allocate_on_current(dptr, bytes);
}

FAKE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width, std::size_t height,
                                        unsigned int) {
  if (pitch == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pitch = (width + 255) / 256 * 256;  // a real device aligns rows too (to 512 or less)
  return allocate_on_current(dptr, *pitch * height);
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) { return release_any(dptr); }
FAKE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream) { return release_any(dptr, true); }
FAKE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream) { return release_any(dptr, true); }

// The fake runs nothing on streams: synchronising one only checks the context. One stream handle,
// tesseraFakeCapturingStream, reads as being captured into a graph (where synchronising it is an
// error, as on a real driver). Every device has one default pool, whose handle names the device.
FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  return stream == tesseraFakeCapturingStream ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : check_context();
}
FAKE_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) { return cuStreamSynchronize(stream); }
FAKE_EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *status = stream == tesseraFakeCapturingStream ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return check_context();
}
FAKE_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream stream, CUstreamCaptureStatus* status) {
  return cuStreamIsCapturing(stream, status);
}
FAKE_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice device) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (pool == nullptr || device < 0 || device >= fake().state().devices) return CUDA_ERROR_INVALID_VALUE;
  *pool = reinterpret_cast<CUmemoryPool>(static_cast<std::uintptr_t>(0x1000 + device));
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  if (CUresult status = check_context(); status != CUDA_SUCCESS) return status;
  const FakeState& state = fake().state();
  const std::uint64_t used = state.device[current_device].used.load();
  *total = state.capacity;
  *free = used < state.capacity ? state.capacity - used : 0;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, std::size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, std::size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, std::size_t count) {
  std::memset(reinterpret_cast<void*>(dst), value, count);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemGetAllocationGranularity(std::size_t* granularity, const CUmemAllocationProp*, int) {
  *granularity = std::size_t{2} << 20;
  return CUDA_SUCCESS;
}

// A VMM handle is the address of its (host) memory.
FAKE_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t bytes,
                                 const CUmemAllocationProp* prop, unsigned long long) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr || prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return fake().allocate(prop->location.id, bytes, handle);
}

FAKE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) { return release_any(handle); }

namespace {

struct FakeEntry {
  const char* name;
  void* function;
};

// cuGetProcAddress's answer: the function of that name, the _v2 variant from CUDA 3.2 on, the _ptsz
// variant for the per-thread default stream.
void* fake_lookup(const char* symbol, int cuda_version, cuuint64_t flags);

}  // namespace

FAKE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  *pfn = fake_lookup(symbol, cuda_version, flags);
  return *pfn != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                         CUdriverProcAddressQueryResult* status) {
  *pfn = fake_lookup(symbol, cuda_version, flags);
  if (status != nullptr) *status = *pfn != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// For tests: the peak use, allocations and refusals the fake saw on a device.
FAKE_EXPORT void tesseraFakeCudaStats(int device, std::uint64_t* peak, std::uint64_t* used, std::uint64_t* refusals) {
  const FakeDevice& record = fake().state().device[device];
  *peak = record.peak.load();
  *used = record.used.load();
  *refusals = record.refusals.load();
}

namespace {

void* fake_lookup(const char* symbol, int cuda_version, cuuint64_t flags) {
#define FAKE_ENTRY(name) \
  { #name, reinterpret_cast < void*>(&name) }
  static const FakeEntry entries[] = {
      FAKE_ENTRY(cuInit),
      FAKE_ENTRY(cuDriverGetVersion),
      FAKE_ENTRY(cuDeviceGetCount),
      FAKE_ENTRY(cuDeviceGet),
      FAKE_ENTRY(cuDeviceTotalMem_v2),
      FAKE_ENTRY(cuDevicePrimaryCtxRetain),
      FAKE_ENTRY(cuCtxSetCurrent),
      FAKE_ENTRY(cuCtxGetCurrent),
      FAKE_ENTRY(cuCtxGetDevice),
      FAKE_ENTRY(cuCtxSynchronize),
      FAKE_ENTRY(cuMemAlloc_v2),
      FAKE_ENTRY(cuMemAllocManaged),
      FAKE_ENTRY(cuMemAdvise),
      FAKE_ENTRY(cuMemPrefetchAsync),
      FAKE_ENTRY(cuMemAllocAsync),
      FAKE_ENTRY(cuMemAllocAsync_ptsz),
      FAKE_ENTRY(cuMemAllocFromPoolAsync),
      FAKE_ENTRY(cuMemAllocFromPoolAsync_ptsz),
      FAKE_ENTRY(cuMemAllocPitch_v2),
      FAKE_ENTRY(cuMemFree_v2),
      FAKE_ENTRY(cuMemFreeAsync),
      FAKE_ENTRY(cuMemFreeAsync_ptsz),
      FAKE_ENTRY(cuStreamSynchronize),
      FAKE_ENTRY(cuStreamSynchronize_ptsz),
      FAKE_ENTRY(cuStreamIsCapturing),
      FAKE_ENTRY(cuStreamIsCapturing_ptsz),
      FAKE_ENTRY(cuDeviceGetDefaultMemPool),
      FAKE_ENTRY(cuMemGetInfo_v2),
      FAKE_ENTRY(cuMemcpyHtoD_v2),
      FAKE_ENTRY(cuMemcpyDtoH_v2),
      FAKE_ENTRY(cuMemsetD8_v2),
      FAKE_ENTRY(cuMemGetAllocationGranularity),
      FAKE_ENTRY(cuMemCreate),
      FAKE_ENTRY(cuMemRelease),
      FAKE_ENTRY(cuGetProcAddress),
      FAKE_ENTRY(cuGetProcAddress_v2),
  };
#undef FAKE_ENTRY
  if (symbol == nullptr) return nullptr;
  const std::string name = symbol;
  auto find = [&](const std::string& wanted) -> void* {
    for (const FakeEntry& entry : entries) {
      if (wanted == entry.name) return entry.function;
    }
    return nullptr;
  };
  if (name == "cuGetProcAddress") return find(cuda_version >= 12000 ? "cuGetProcAddress_v2" : name);
  for (const std::string& candidate : {cuda_version >= 3020 ? name + "_v2" : name, name}) {
    if ((flags & 2) != 0) {
      if (void* function = find(candidate + "_ptsz")) return function;
    }
    if (void* function = find(candidate)) return function;
  }
  return nullptr;
}

}  // namespace
