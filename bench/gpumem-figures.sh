#!/usr/bin/env bash
# The GPU memory interposer's figures against the fake driver (docs/results.md, "GPU memory on
# the node"): per-call overhead of an intercepted cuMemAlloc+cuMemFree against the fake driver
# alone, the largest overshoot of the device under 64 processes allocating at once (with and
# without the interposer), and how soon a waiting allocation is granted after a free.
#   cmake --build build --target tessera-gpumem gpumem_workload tessera_fake_cuda tessera-gpumem-ledger
#   bash bench/gpumem-figures.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
bin=$build/gpumem
work=$(mktemp -d /tmp/tessera-gpumem-figures.XXXXXX)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$bin/fake-driver
GiB=$((1024 * 1024 * 1024))
MiB=$((1024 * 1024))
value() { sed -n "s/^$2=//p" <<<"$1" | head -n1; }
interposed() {  # interposed STEP VAR=VALUE... -- ARGS
  local step=$1
  shift
  local environment=()
  while [ "$1" != "--" ]; do environment+=("$1"); shift; done
  shift
  env TESSERA_FAKE_CUDA_STATE="$work/$step.device" TESSERA_GPUMEM_LEDGER="$work/$step.ledger" \
    LD_PRELOAD="$bin/libtessera-gpumem.so" "${environment[@]}" "$bin/gpumem_workload" "$@"
}

echo "machine: $(nproc) cores, $(uname -r)"
# Direct and interposed runs alternate, five of each, so that a busy spell of the machine falls on
# both; each run prints its median, and the figure is the median of the five.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for path in dlsym proc; do
  option=()
  [ $path = proc ] && option=(--proc)
  : >"$work/direct-$path" && : >"$work/interposed-$path"
  for run in 1 2 3 4 5; do
    value "$(TESSERA_FAKE_CUDA_STATE="$work/direct-$path.device" "$bin/gpumem_workload" "${option[@]}" overhead 100000 4096)" \
      overhead_ns_median >>"$work/direct-$path"
    value "$(interposed "overhead-$path" TESSERA_POD_UID=bench TESSERA_GPU_MEMORY_LIMIT=$GiB -- "${option[@]}" overhead 100000 4096)" \
      overhead_ns_median >>"$work/interposed-$path"
  done
  d=$(median <"$work/direct-$path")
  i=$(median <"$work/interposed-$path")
  echo "overhead ($path): cuMemAlloc+cuMemFree of 4 KiB, median of 5 runs of 100000 pairs: fake driver alone $d ns, interposed $i ns, added $((i - d)) ns (runs: direct $(tr '\n' ' ' <"$work/direct-$path"); interposed $(tr '\n' ' ' <"$work/interposed-$path"))"
done

capacity=$((4 * GiB))
for mode in without with; do
  state="$work/burst-$mode.device"
  common=(TESSERA_FAKE_CUDA_STATE="$state" TESSERA_FAKE_CUDA_DEVICE_MEMORY=$capacity TESSERA_FAKE_CUDA_OVERCOMMIT=1
    TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPUMEM_WAIT_TIMEOUT_MS=200 TESSERA_GPUMEM_LEDGER="$work/burst-$mode.ledger")
  if [ $mode = with ]; then common+=(LD_PRELOAD="$bin/libtessera-gpumem.so"); fi
  burst=$(env "${common[@]}" "$bin/gpumem_workload" burst 64 10 $((128 * MiB)) 1 4)
  stats=$(TESSERA_FAKE_CUDA_STATE="$state" "$bin/gpumem_workload" fake-stats)
  peak=$(value "$stats" fake_peak_used)
  overshoot=$((peak > capacity ? peak - capacity : 0))
  echo "overshoot $mode the interposer: 64 processes x 4 threads x 10 bursts of 1-4 allocations up to 128 MiB on a 4 GiB device: peak $peak bytes, overshoot $overshoot bytes ($(value "$burst" burst_grants) grants, $(value "$burst" burst_refusals) refused after waiting 200 ms, $(value "$burst" burst_corrupt) corrupted)"
done

wait_out=$(interposed wait TESSERA_FAKE_CUDA_DEVICE_MEMORY=$((3 * GiB / 2)) TESSERA_GPU_MEMORY_LIMIT=$GiB \
  TESSERA_GPUMEM_WAIT_TIMEOUT_MS=10000 -- wait-latency 200 $GiB)
echo "wait: 200 rounds, a 1 GiB allocation waiting on a 1.5 GiB device until the holder frees 1 GiB: granted $(value "$wait_out" wait_granted), before the free $(value "$wait_out" wait_granted_before_free); from free to grant median $(value "$wait_out" wait_latency_us_median) us, p90 $(value "$wait_out" wait_latency_us_p90) us"
