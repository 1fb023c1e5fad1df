#!/usr/bin/env bash
# The GPU memory interposer's figures against the fake driver (docs/results.md, "GPU memory on
# the node"): per-call overhead of an intercepted cuMemAlloc+cuMemFree against the fake driver
# alone, the largest overshoot of the device under 64 processes allocating at once (with and
# without the interposer), how soon a waiting allocation is granted after a free, what a swap pod
# waiting in host memory costs, and how busy swap pods share a device under time slices.
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

# A swap pod whose allocation waits in host memory (a plain pod holds the device, so nothing can
# move out for it) for 10 s: how often its process wakes and how much CPU it takes meanwhile,
# from the kernel's counts for its threads (voluntary context switches; schedstat's run time).
# TESSERA_GPUMEM_COMPARE_INTERPOSER: another build of libtessera-gpumem.so to measure the same way.
waiting_in_host() {  # waiting_in_host LABEL INTERPOSER
  local label=$1 library=$2 step="host-wait-$1"
  mkfifo "$work/$step.holder" "$work/$step.swapper"
  local common=(TESSERA_FAKE_CUDA_STATE="$work/$step.device" TESSERA_FAKE_CUDA_DEVICE_MEMORY=$((3 * GiB / 2))
    TESSERA_GPUMEM_LEDGER="$work/$step.ledger" LD_PRELOAD="$library" TESSERA_GPU_MEMORY_LIMIT=$GiB)
  env "${common[@]}" TESSERA_POD_UID=holder "$bin/gpumem_workload" hold $GiB <"$work/$step.holder" >"$work/$step.holder.out" &
  local holder=$!
  exec 7>"$work/$step.holder"
  until grep -q '^held=' "$work/$step.holder.out" 2>/dev/null; do sleep 0.05; done
  env "${common[@]}" TESSERA_POD_UID=swapper TESSERA_GPU_MEMORY_RESOLVER=swap "$bin/gpumem_workload" swap-hold $GiB \
    <"$work/$step.swapper" >"$work/$step.swapper.out" 7>&- &
  local swapper=$!
  exec 8>"$work/$step.swapper"
  until grep -q '^held=' "$work/$step.swapper.out" 2>/dev/null; do sleep 0.05; done
  sample() {  # context switches and run time (ns) over the swapper's threads
    local switches=0 run=0 task
    for task in /proc/$swapper/task/*; do
      switches=$((switches + $(sed -n 's/^voluntary_ctxt_switches:\s*//p' "$task/status")))
      run=$((run + $(cut -d' ' -f1 "$task/schedstat")))
    done
    echo "$switches $run"
  }
  read -r switches_before run_before < <(sample)
  sleep 10
  read -r switches_after run_after < <(sample)
  exec 8>&- 7>&-
  wait $swapper $holder
  echo "waiting in host memory for 10 s ($label): $((switches_after - switches_before)) wake-ups, $(((run_after - run_before) / 1000)) us of CPU"
}
waiting_in_host "this build" "$bin/libtessera-gpumem.so"
if [ -n "${TESSERA_GPUMEM_COMPARE_INTERPOSER:-}" ]; then waiting_in_host "compared build" "$TESSERA_GPUMEM_COMPARE_INTERPOSER"; fi

# Three busy swap pods that never free, of 600 MiB on a 1 GiB device, for 10 s at each time slice:
# how many turns (moves back to the device) each got.
for slice in 0 100 1000; do
  step="slices-$slice"
  pids=()
  for pod in a b c; do
    mkfifo "$work/$step.$pod"
    env TESSERA_FAKE_CUDA_STATE="$work/$step.device" TESSERA_FAKE_CUDA_DEVICE_MEMORY=$GiB \
      TESSERA_GPUMEM_LEDGER="$work/$step.ledger" LD_PRELOAD="$bin/libtessera-gpumem.so" \
      TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPU_MEMORY_RESOLVER=swap TESSERA_GPU_MEMORY_SWAP_SLICE_MS=$slice \
      TESSERA_POD_UID=$pod "$bin/gpumem_workload" swap-hold $((600 * MiB)) <"$work/$step.$pod" >"$work/$step.$pod.out" 7>&- 8>&- 9>&- &
    pids+=($!)
    case $pod in a) exec 7>"$work/$step.$pod" ;; b) exec 8>"$work/$step.$pod" ;; c) exec 9>"$work/$step.$pod" ;; esac
    until grep -q '^held=' "$work/$step.$pod.out" 2>/dev/null; do sleep 0.05; done
  done
  sleep 10
  report=$("$build/gpumem/tessera-gpumem-ledger" --no-reclaim "$work/$step.ledger")
  exec 7>&- 8>&- 9>&-
  wait "${pids[@]}"
  turns=$(for pod in a b c; do sed -n "s/.*uid=$pod .* swap_ins=\([0-9]*\).*/\1/p" <<<"$report" | head -n1; done | tr '\n' ' ')
  echo "slices of $slice ms: three busy swap pods of 600 MiB on a 1 GiB device, turns in 10 s: $turns"
done
