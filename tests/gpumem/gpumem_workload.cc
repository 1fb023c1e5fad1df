// Programs that allocate GPU memory like inference servers do — bursts of allocations of varying
// size, held a while, freed — for the interposer's tests and figures, against the fake driver here
// and the real one on a GPU machine (scripts/gpumem-real-gpu.sh). Each prints key=value lines.
//
//   gpumem_workload overhead ITERATIONS BYTES      median ns of one cuMemAlloc+cuMemFree pair
//   gpumem_workload limit CHUNK                    allocates CHUNK at a time until refused
//   gpumem_workload variants BYTES                 each allocation function: BYTES granted, then refused past the limit
//   gpumem_workload burst PROCESSES ITERATIONS MAX_BYTES SEED [THREADS]
//                                                  PROCESSES pods (TESSERA_POD_UID=burst-<i>) at once,
//                                                  each allocating from THREADS threads (default 1)
//   gpumem_workload wait-latency ROUNDS BYTES      how soon a waiting allocation is granted after a free
//   gpumem_workload hold BYTES [die|die-leaving-child]
//                                                  allocates, prints held=1, then frees at end of
//                                                  stdin — or with `die`, ends without freeing; with
//                                                  `die-leaving-child`, first forks a child that lives
//                                                  until the end of stdin
//   gpumem_workload swap-hold BYTES [KIND]         allocates and writes a pattern, prints held=1; at
//                                                  each line of stdin asks cuMemGetInfo (where a swap
//                                                  pod's allocation moves back) and checks the pattern
//                                                  (intact=1); frees at end of stdin. KIND: alloc
//                                                  (cuMemAlloc, the default), pitch (cuMemAllocPitch,
//                                                  64 rows), async (cuMemAllocAsync), pool
//                                                  (cuMemAllocFromPoolAsync, the default pool),
//                                                  async-captured (cuMemAllocAsync on the fake
//                                                  driver's stream that reads as captured)
//   gpumem_workload alloc BYTES                    one allocation: its result and how long it took
//   gpumem_workload fake-stats                     the fake driver's own count of device 0's peak use
// Options before the command: --proc (entry points through cuGetProcAddress, as CUDA 12 runtimes).
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "driver_client.h"

using namespace tessera::gpumem;
using tessera::gpumem::testing::DriverClient;
using tessera::gpumem::testing::open_driver;

namespace {

bool via_proc_address = false;

std::int64_t now_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

std::uint64_t number(const char* text) { return std::strtoull(text, nullptr, 10); }

std::int64_t percentile(std::vector<std::int64_t> values, double fraction) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(fraction * (values.size() - 1) + 0.5))];
}

void write_all(int fd, const void* data, std::size_t bytes) {
  if (write(fd, data, bytes) != static_cast<ssize_t>(bytes)) std::exit(4);
}

void read_all(int fd, void* data, std::size_t bytes) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = read(fd, static_cast<char*>(data) + done, bytes - done);
    if (got <= 0) std::exit(4);
    done += static_cast<std::size_t>(got);
  }
}

int overhead(std::uint64_t iterations, std::uint64_t bytes) {
  DriverClient cuda = open_driver(via_proc_address);
  constexpr int kBatch = 32;
  std::vector<std::int64_t> per_pair;
  for (int warm = 0; warm < 100; ++warm) {
    CUdeviceptr pointer = 0;
    if (cuda.mem_alloc(&pointer, bytes) != CUDA_SUCCESS) return 5;
    cuda.mem_free(pointer);
  }
  for (std::uint64_t done = 0; done < iterations; done += kBatch) {
    const std::int64_t start = now_ns();
    for (int i = 0; i < kBatch; ++i) {
      CUdeviceptr pointer = 0;
      if (cuda.mem_alloc(&pointer, bytes) != CUDA_SUCCESS) return 5;
      cuda.mem_free(pointer);
    }
    per_pair.push_back((now_ns() - start) / kBatch);
  }
  std::printf("overhead_pairs=%llu\noverhead_ns_median=%lld\noverhead_ns_p90=%lld\n",
              static_cast<unsigned long long>(per_pair.size() * kBatch),
              static_cast<long long>(percentile(per_pair, 0.5)), static_cast<long long>(percentile(per_pair, 0.9)));
  return 0;
}

int limit(std::uint64_t chunk) {
  DriverClient cuda = open_driver(via_proc_address);
  std::size_t free_before = 0, total = 0;
  cuda.mem_get_info(&free_before, &total);
  std::vector<CUdeviceptr> held;
  CUresult refusal = CUDA_SUCCESS;
  while (held.size() < 1000000) {
    CUdeviceptr pointer = 0;
    refusal = cuda.mem_alloc(&pointer, chunk);
    if (refusal != CUDA_SUCCESS) break;
    held.push_back(pointer);
  }
  std::size_t free_full = 0, total_full = 0;
  cuda.mem_get_info(&free_full, &total_full);
  for (CUdeviceptr pointer : held) cuda.mem_free(pointer);
  std::size_t free_after = 0, total_after = 0;
  cuda.mem_get_info(&free_after, &total_after);
  std::printf(
      "granted_bytes=%llu\nrefusal=%d\nreported_total=%zu\nreported_free_before=%zu\nreported_free_full=%zu\n"
      "reported_free_after=%zu\n",
      static_cast<unsigned long long>(held.size() * chunk), refusal, total, free_before, free_full, free_after);
  return 0;
}

// Each allocation function: BYTES is granted, then BYTES more on top of it is refused when the
// limit is below 2*BYTES, and everything is given back.
int variants(std::uint64_t bytes) {
  DriverClient cuda = open_driver(via_proc_address);
  struct Variant {
    const char* name;
    bool available;
  };
  auto allocate = [&](const char* name, std::uint64_t size, CUdeviceptr* pointer) -> CUresult {
    std::size_t pitch = 0;
    if (std::strcmp(name, "cuMemAlloc") == 0) return cuda.mem_alloc(pointer, size);
    if (std::strcmp(name, "cuMemAllocPitch") == 0) return cuda.mem_alloc_pitch(pointer, &pitch, size / 64, 64, 4);
    if (std::strcmp(name, "cuMemAllocManaged") == 0) return cuda.mem_alloc_managed(pointer, size, CU_MEM_ATTACH_GLOBAL);
    if (std::strcmp(name, "cuMemAllocAsync") == 0) {
      const CUresult result = cuda.mem_alloc_async(pointer, size, nullptr);
      cuda.ctx_synchronize();
      return result;
    }
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    std::size_t granularity = 1;
    if (cuda.mem_get_allocation_granularity != nullptr) {
      cuda.mem_get_allocation_granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    }
    return cuda.mem_create(pointer, (size + granularity - 1) / granularity * granularity, &prop, 0);
  };
  auto release = [&](const char* name, CUdeviceptr pointer) {
    if (std::strcmp(name, "cuMemCreate") == 0) return cuda.mem_release(pointer);
    if (std::strcmp(name, "cuMemAllocAsync") == 0) {
      const CUresult result = cuda.mem_free_async(pointer, nullptr);
      cuda.ctx_synchronize();
      return result;
    }
    return cuda.mem_free(pointer);
  };
  const Variant all[] = {{"cuMemAlloc", true},
                         {"cuMemAllocPitch", true},
                         {"cuMemAllocManaged", cuda.mem_alloc_managed != nullptr},
                         {"cuMemAllocAsync", cuda.mem_alloc_async != nullptr && cuda.mem_free_async != nullptr},
                         {"cuMemCreate", cuda.mem_create != nullptr && cuda.mem_release != nullptr}};
  for (const Variant& variant : all) {
    if (!variant.available) {
      std::printf("variant_%s=unavailable\n", variant.name);
      continue;
    }
    CUdeviceptr first = 0, second = 0;
    const CUresult granted = allocate(variant.name, bytes, &first);
    const CUresult refused = allocate(variant.name, bytes, &second);
    if (refused == CUDA_SUCCESS) release(variant.name, second);
    const CUresult freed = granted == CUDA_SUCCESS ? release(variant.name, first) : CUDA_SUCCESS;
    std::printf("variant_%s=granted:%d,second:%d,freed:%d\n", variant.name, granted, refused, freed);
  }
  return 0;
}

struct BurstTotals {
  std::uint64_t grants = 0;
  std::uint64_t refusals = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t errors = 0;
};

// One thread's bursts: 1-4 allocations of random size, a pattern written into each, held briefly,
// checked and freed.
BurstTotals burst_thread(const DriverClient& cuda, std::uint64_t iterations, std::uint64_t max_bytes,
                         std::uint64_t seed) {
  cuda.ctx_set_current(cuda.context);
  std::mt19937_64 random(seed);
  BurstTotals totals;
  std::vector<std::uint64_t> pattern(512), readback(512);
  for (std::uint64_t iteration = 0; iteration < iterations; ++iteration) {
    std::vector<std::pair<CUdeviceptr, std::uint64_t>> held;
    const int count = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < count; ++i) {
      const std::uint64_t bytes = std::max<std::uint64_t>(4096, random() % max_bytes);
      CUdeviceptr pointer = 0;
      const CUresult result = cuda.mem_alloc(&pointer, bytes);
      if (result == CUDA_ERROR_OUT_OF_MEMORY) {
        ++totals.refusals;
        continue;
      }
      if (result != CUDA_SUCCESS) {
        ++totals.errors;
        continue;
      }
      ++totals.grants;
      const std::uint64_t mark = random();
      for (std::size_t word = 0; word < pattern.size(); ++word) pattern[word] = mark ^ word;
      cuda.memcpy_htod(pointer, pattern.data(), 4096);
      held.emplace_back(pointer, mark);
    }
    if (random() % 2 == 0) sched_yield();
    for (auto [pointer, mark] : held) {
      cuda.memcpy_dtoh(readback.data(), pointer, 4096);
      for (std::size_t word = 0; word < readback.size(); ++word) {
        if (readback[word] != (mark ^ word)) {
          ++totals.corrupt;
          break;
        }
      }
      if (cuda.mem_free(pointer) != CUDA_SUCCESS) ++totals.errors;
    }
  }
  return totals;
}

BurstTotals burst_child(int threads, std::uint64_t iterations, std::uint64_t max_bytes, std::uint64_t seed) {
  const DriverClient cuda = open_driver(via_proc_address);
  std::vector<BurstTotals> totals(threads);
  std::vector<std::thread> running;
  for (int i = 0; i < threads; ++i) {
    running.emplace_back([&, i] { totals[i] = burst_thread(cuda, iterations, max_bytes, seed * 7919 + i); });
  }
  BurstTotals sum;
  for (int i = 0; i < threads; ++i) {
    running[i].join();
    sum.grants += totals[i].grants;
    sum.refusals += totals[i].refusals;
    sum.corrupt += totals[i].corrupt;
    sum.errors += totals[i].errors;
  }
  return sum;
}

int burst(int processes, std::uint64_t iterations, std::uint64_t max_bytes, std::uint64_t seed, int threads) {
  int results[2];
  if (pipe(results) != 0) return 4;
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      close(results[0]);
      const std::string uid = "burst-" + std::to_string(i);
      setenv("TESSERA_POD_UID", uid.c_str(), 1);
      const BurstTotals totals = burst_child(threads, iterations, max_bytes, seed * 1000003 + i);
      write_all(results[1], &totals, sizeof(totals));
      _exit(0);
    }
    children.push_back(child);
  }
  close(results[1]);
  BurstTotals sum;
  int failed = 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    BurstTotals totals;
    if (read(results[0], &totals, sizeof(totals)) != static_cast<ssize_t>(sizeof(totals))) break;
    sum.grants += totals.grants;
    sum.refusals += totals.refusals;
    sum.corrupt += totals.corrupt;
    sum.errors += totals.errors;
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::printf(
      "burst_processes=%d\nburst_threads=%d\nburst_grants=%llu\nburst_refusals=%llu\nburst_corrupt=%llu\nburst_errors=%"
      "llu\n"
      "burst_failed_processes=%d\n",
      processes, threads, static_cast<unsigned long long>(sum.grants), static_cast<unsigned long long>(sum.refusals),
      static_cast<unsigned long long>(sum.corrupt), static_cast<unsigned long long>(sum.errors), failed);
  return sum.corrupt == 0 && sum.errors == 0 && failed == 0 ? 0 : 1;
}

// The holder fills its share and frees it while the waiter's allocation, which collides with it,
// sleeps; the waiter reports when it was granted. Latency: grant time less free time.
int wait_latency(int rounds, std::uint64_t bytes) {
  int to_waiter[2], to_holder[2];
  if (pipe(to_waiter) != 0 || pipe(to_holder) != 0) return 4;
  const pid_t waiter = fork();
  if (waiter == 0) {
    setenv("TESSERA_POD_UID", "latency-waiter", 1);
    DriverClient cuda = open_driver(via_proc_address);
    for (int round = 0; round < rounds; ++round) {
      char go = 0;
      read_all(to_waiter[0], &go, 1);
      write_all(to_holder[1], "w", 1);
      CUdeviceptr pointer = 0;
      const CUresult result = cuda.mem_alloc(&pointer, bytes);
      const std::int64_t granted = result == CUDA_SUCCESS ? now_ns() : -static_cast<std::int64_t>(result);
      write_all(to_holder[1], &granted, sizeof(granted));
      if (result == CUDA_SUCCESS) cuda.mem_free(pointer);
      write_all(to_holder[1], "d", 1);
    }
    _exit(0);
  }
  setenv("TESSERA_POD_UID", "latency-holder", 1);
  DriverClient cuda = open_driver(via_proc_address);
  std::vector<std::int64_t> latencies;
  int early = 0, refused = 0;
  for (int round = 0; round < rounds; ++round) {
    CUdeviceptr pointer = 0;
    if (cuda.mem_alloc(&pointer, bytes) != CUDA_SUCCESS) return 5;
    write_all(to_waiter[1], "h", 1);
    char ready = 0;
    read_all(to_holder[0], &ready, 1);
    timespec settle{0, 20 * 1000000};  // lets the waiter reach its sleep; the figure, not the outcome, depends on it
    nanosleep(&settle, nullptr);
    const std::int64_t freed = now_ns();
    cuda.mem_free(pointer);
    std::int64_t granted = 0;
    read_all(to_holder[0], &granted, sizeof(granted));
    char done = 0;
    read_all(to_holder[0], &done, 1);
    if (granted < 0)
      ++refused;
    else if (granted < freed)
      ++early;
    else
      latencies.push_back(granted - freed);
  }
  int status = 0;
  waitpid(waiter, &status, 0);
  std::printf(
      "wait_rounds=%d\nwait_granted=%zu\nwait_refused=%d\nwait_granted_before_free=%d\n"
      "wait_latency_us_median=%.1f\nwait_latency_us_p90=%.1f\n",
      rounds, latencies.size(), refused, early, percentile(latencies, 0.5) / 1000.0,
      percentile(latencies, 0.9) / 1000.0);
  return refused == 0 && early == 0 ? 0 : 1;
}

int hold(std::uint64_t bytes, const std::string& ending) {
  DriverClient cuda = open_driver(via_proc_address);
  CUdeviceptr pointer = 0;
  const CUresult result = cuda.mem_alloc(&pointer, bytes);
  if (result == CUDA_SUCCESS && ending == "die-leaving-child" && fork() == 0) {
    // Printed after fork()'s handlers ran in this child: whoever reads it knows they did.
    std::printf("child=1\n");
    std::fflush(stdout);
    char buffer[64];
    while (read(0, buffer, sizeof(buffer)) > 0) {
    }
    _exit(0);
  }
  std::printf("held=%d\n", result == CUDA_SUCCESS ? 1 : 0);
  std::fflush(stdout);
  if (result != CUDA_SUCCESS) return 1;
  if (!ending.empty()) _exit(0);  // ends without freeing, as a crashed server does
  char buffer[64];
  while (read(0, buffer, sizeof(buffer)) > 0) {
  }
  cuda.mem_free(pointer);
  return 0;
}

// One allocation of about `bytes` by `kind` (swap-hold's KIND): where it starts and where its
// last 4096 usable bytes start (for pitch, the start of the last row), and how it is freed.
struct HeldAllocation {
  CUresult result = CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr pointer = 0;
  CUdeviceptr last = 0;
  bool stream_ordered = false;
};

HeldAllocation allocate_kind(DriverClient& cuda, std::uint64_t bytes, const std::string& kind) {
  HeldAllocation held;
  if (kind == "alloc") {
    held.result = cuda.mem_alloc(&held.pointer, bytes);
    held.last = held.pointer + bytes - 4096;
  } else if (kind == "pitch") {
    constexpr std::size_t kRows = 64;
    std::size_t pitch = 0;
    held.result = cuda.mem_alloc_pitch(&held.pointer, &pitch, bytes / kRows, kRows, 4);
    held.last = held.pointer + pitch * (kRows - 1);
  } else if (kind == "async" && cuda.mem_alloc_async != nullptr && cuda.mem_free_async != nullptr) {
    held.result = cuda.mem_alloc_async(&held.pointer, bytes, nullptr);
    held.last = held.pointer + bytes - 4096;
    held.stream_ordered = true;
  } else if (kind == "async-captured" && cuda.mem_alloc_async != nullptr && cuda.mem_free_async != nullptr) {
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    auto* capturing =
        library != nullptr ? static_cast<CUstream*>(dlsym(library, "tesseraFakeCapturingStream")) : nullptr;
    if (capturing == nullptr) {
      std::fprintf(stderr, "swap-hold: async-captured needs the fake driver\n");
      return held;
    }
    held.result = cuda.mem_alloc_async(&held.pointer, bytes, *capturing);
    held.last = held.pointer + bytes - 4096;
    held.stream_ordered = true;
  } else if (kind == "pool" && cuda.mem_alloc_from_pool_async != nullptr &&
             cuda.device_get_default_mem_pool != nullptr && cuda.mem_free_async != nullptr) {
    CUmemoryPool pool = nullptr;
    held.result = cuda.device_get_default_mem_pool(&pool, 0);
    if (held.result == CUDA_SUCCESS) held.result = cuda.mem_alloc_from_pool_async(&held.pointer, bytes, pool, nullptr);
    held.last = held.pointer + bytes - 4096;
    held.stream_ordered = true;
  } else {
    std::fprintf(stderr,
                 "swap-hold: kind %s is not alloc, pitch, async, async-captured or pool, or the driver lacks it\n",
                 kind.c_str());
  }
  if (held.stream_ordered && held.result == CUDA_SUCCESS) held.result = cuda.ctx_synchronize();
  return held;
}

int swap_hold(std::uint64_t bytes, const std::string& kind) {
  DriverClient cuda = open_driver(via_proc_address);
  const HeldAllocation held = allocate_kind(cuda, bytes, kind);
  std::printf("held=%d\n", held.result == CUDA_SUCCESS ? 1 : 0);
  std::fflush(stdout);
  if (held.result != CUDA_SUCCESS) return 1;
  const CUdeviceptr pointer = held.pointer;
  // A pattern at both ends of the allocation, written where the allocation first lies.
  std::vector<std::uint64_t> pattern(512), readback(512);
  for (std::size_t word = 0; word < pattern.size(); ++word) pattern[word] = 0x5eed0000u + word * 2654435761u;
  const CUdeviceptr ends[] = {pointer, held.last};
  for (CUdeviceptr end : ends) cuda.memcpy_htod(end, pattern.data(), 4096);
  char line[64];
  FILE* input = fdopen(0, "r");
  while (std::fgets(line, sizeof(line), input) != nullptr) {
    std::size_t free = 0, total = 0;
    cuda.mem_get_info(&free, &total);
    bool intact = true;
    for (CUdeviceptr end : ends) {
      cuda.memcpy_dtoh(readback.data(), end, 4096);
      intact = intact && readback == pattern;
    }
    std::printf("intact=%d\n", intact ? 1 : 0);
    std::fflush(stdout);
  }
  const CUresult freed = held.stream_ordered ? cuda.mem_free_async(pointer, nullptr) : cuda.mem_free(pointer);
  if (freed != CUDA_SUCCESS) std::fprintf(stderr, "swap-hold: the free failed: CUDA error %d\n", freed);
  if (freed == CUDA_SUCCESS && held.stream_ordered) cuda.ctx_synchronize();
  return freed == CUDA_SUCCESS ? 0 : 1;
}

int alloc_once(std::uint64_t bytes) {
  DriverClient cuda = open_driver(via_proc_address);
  CUdeviceptr pointer = 0;
  const std::int64_t start = now_ns();
  const CUresult result = cuda.mem_alloc(&pointer, bytes);
  std::printf("result=%d\nelapsed_ms=%lld\n", result, static_cast<long long>((now_ns() - start) / 1000000));
  if (result == CUDA_SUCCESS) cuda.mem_free(pointer);
  return 0;
}

int fake_stats() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  using Stats = void (*)(int, std::uint64_t*, std::uint64_t*, std::uint64_t*);
  auto stats = library != nullptr ? reinterpret_cast<Stats>(dlsym(library, "tesseraFakeCudaStats")) : nullptr;
  if (stats == nullptr) {
    std::fprintf(stderr, "libcuda.so.1 is not the fake driver\n");
    return 3;
  }
  std::uint64_t peak = 0, used = 0, refusals = 0;
  stats(0, &peak, &used, &refusals);
  std::printf("fake_peak_used=%llu\nfake_used=%llu\nfake_refusals=%llu\n", static_cast<unsigned long long>(peak),
              static_cast<unsigned long long>(used), static_cast<unsigned long long>(refusals));
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: gpumem_workload [--proc] overhead|limit|variants|burst|wait-latency|hold|alloc ...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 1;
  if (argc > first && std::strcmp(argv[first], "--proc") == 0) {
    via_proc_address = true;
    ++first;
  }
  if (argc <= first) return usage();
  const std::string command = argv[first];
  char** rest = argv + first + 1;
  const int count = argc - first - 1;
  if (command == "overhead" && count == 2) return overhead(number(rest[0]), number(rest[1]));
  if (command == "limit" && count == 1) return limit(number(rest[0]));
  if (command == "variants" && count == 1) return variants(number(rest[0]));
  if (command == "burst" && (count == 4 || count == 5)) {
    return burst(static_cast<int>(number(rest[0])), number(rest[1]), number(rest[2]), number(rest[3]),
                 count == 5 ? std::max(1, static_cast<int>(number(rest[4]))) : 1);
  }
  if (command == "wait-latency" && count == 2) return wait_latency(static_cast<int>(number(rest[0])), number(rest[1]));
  if (command == "hold" && (count == 1 || count == 2)) return hold(number(rest[0]), count == 2 ? rest[1] : "");
  if (command == "alloc" && count == 1) return alloc_once(number(rest[0]));
  if (command == "swap-hold" && (count == 1 || count == 2))
    return swap_hold(number(rest[0]), count == 2 ? rest[1] : "alloc");
  if (command == "fake-stats" && count == 0) return fake_stats();
  return usage();
}
