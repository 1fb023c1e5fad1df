#!/usr/bin/env bash
# Runs the GPU memory interposer against a real NVIDIA driver and prints a summary: per-call
# overhead (direct against interposed), limit enforcement, cuMemGetInfo, every allocation function,
# no overshoot under N concurrent processes, how soon a waiting allocation is granted after a free,
# the priority resolver, the reclaim of a process that died holding memory, and the swap resolver
# (a colliding allocation placed in host memory; swap pods moving each other out and back, for
# cuMemAlloc, cuMemAllocPitch, cuMemAllocAsync and cuMemAllocFromPoolAsync allocations; three busy
# swap pods taking turns on one device under a time slice).
#
# Self-contained: builds the interposer and the test programs with plain g++ (libc, libdl and
# pthreads only; no CMake, no project libraries), or takes them prebuilt from
# $TESSERA_GPUMEM_PREBUILT (a folder with libtessera-gpumem.so, gpumem_workload and
# tessera-gpumem-ledger). Every step runs under a hard time limit; the whole script stays under
# 6 minutes. Results go to stdout and $TESSERA_GPUMEM_RESULTS/summary.txt (default: $OUT if set,
# else build/gpumem-real-gpu).
#
#   bash scripts/gpumem-real-gpu.sh [LIBCUDA]
# LIBCUDA: the libcuda.so.1 to load (default: the one the loader finds); tests/gpumem's fake driver
#   (build/gpumem/fake-driver/libcuda.so.1) makes it a dry run on a machine without a GPU.
# Environment: TESSERA_GPUMEM_PROCESSES (concurrency check, default 32),
#   TESSERA_GPUMEM_FAKE_DRIVER_DIR (the folder of such a libcuda.so.1: the same as passing it).
set -uo pipefail

script_started=$(date +%s)
repo=$(cd "$(dirname "$0")/.." && pwd)
results=${TESSERA_GPUMEM_RESULTS:-${OUT:-$repo/build/gpumem-real-gpu}}
mkdir -p "$results"
work=$(mktemp -d /tmp/tessera-gpumem.XXXXXX)
trap 'rm -rf "$work"' EXIT
summary="$results/summary.txt"
: >"$summary"
processes=${TESSERA_GPUMEM_PROCESSES:-32}
GiB=$((1024 * 1024 * 1024))
MiB=$((1024 * 1024))

say() { echo "$*" | tee -a "$summary"; }
# Every step's time limit is cut to what is left of the script's budget (330 s), so the whole
# script ends within 6 minutes however the steps go; a step with under 5 s left is skipped.
deadline=$((script_started + ${TESSERA_GPUMEM_BUDGET_SECONDS:-330}))
limit_for() {  # limit_for SECONDS: prints the step's limit, or 0 when the budget is spent
  local left=$((deadline - $(date +%s)))
  if [ $left -lt 5 ]; then echo 0; elif [ $left -lt "$1" ]; then echo $left; else echo "$1"; fi
}
guarded() {  # guarded SECONDS COMMAND...: the command under the step's limit (status 125: not run)
  local seconds
  seconds=$(limit_for "$1")
  shift
  [ "$seconds" = 0 ] && return 125
  timeout -k 5 "$seconds" "$@"
}
value() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1; }  # value FILE KEY
verdict() {  # verdict NAME CONDITION-RESULT DETAIL
  if [ "$2" = 0 ]; then say "PASS  $1: $3"; else say "FAIL  $1: $3"; failures=$((failures + 1)); fi
}
failures=0

# --- the driver -----------------------------------------------------------------------------------
if [ $# -ge 1 ]; then
  if [ "$(basename "$1")" != libcuda.so.1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 [PATH/libcuda.so.1]: $1 is not a file named libcuda.so.1" >&2
    exit 2
  fi
  TESSERA_GPUMEM_FAKE_DRIVER_DIR=$(cd "$(dirname "$1")" && pwd)
fi
if [ -n "${TESSERA_GPUMEM_FAKE_DRIVER_DIR:-}" ]; then
  export LD_LIBRARY_PATH="$TESSERA_GPUMEM_FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TESSERA_FAKE_CUDA_STATE="$work/fake-device"  # read by the fake driver only
  driver="$TESSERA_GPUMEM_FAKE_DRIVER_DIR/libcuda.so.1"
else
  driver=$( (ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}'); true)
  if [ -z "$driver" ]; then
    for candidate in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 \
      /usr/lib/aarch64-linux-gnu/libcuda.so.1 /usr/local/cuda/compat/libcuda.so.1; do
      if [ -e "$candidate" ]; then driver=$candidate; break; fi
    done
    [ -n "$driver" ] && export LD_LIBRARY_PATH="$(dirname "$driver")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  if [ -z "$driver" ]; then
    say "FAIL  no libcuda.so.1 found (ldconfig -p, /usr/lib*/, /usr/local/nvidia/lib64): is the NVIDIA driver installed?"
    exit 1
  fi
fi
say "driver: $driver"
command -v nvidia-smi >/dev/null && say "gpu: $(timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n1)"

# --- build ----------------------------------------------------------------------------------------
bin=${TESSERA_GPUMEM_PREBUILT:-$work/bin}
if [ -z "${TESSERA_GPUMEM_PREBUILT:-}" ]; then
  mkdir -p "$bin"
  flags=(-std=c++20 -O2 -Wall -Wextra -I"$repo/src" -I"$repo/tests/gpumem")
  core=("$repo"/src/gpumem/{ledger,charge_rules,futex,allocation_gate,pod_settings}.cc)
  build_started=$(date +%s)
  build_limit=$(limit_for 120)
  timeout "$build_limit" g++ "${flags[@]}" -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden "${core[@]}" \
    "$repo"/src/gpumem/interposer/*.cc -o "$bin/libtessera-gpumem.so" -ldl -lpthread 2>"$work/build-interposer.log" &
  interposer_build=$!
  timeout "$build_limit" g++ "${flags[@]}" "$repo/tests/gpumem/gpumem_workload.cc" -o "$bin/gpumem_workload" -ldl -lpthread \
    2>"$work/build-workload.log" &
  workload_build=$!
  timeout "$build_limit" g++ "${flags[@]}" "$repo"/src/gpumem/{ledger,charge_rules,futex,ledger_report,ledger_main}.cc \
    -o "$bin/tessera-gpumem-ledger" -lpthread 2>"$work/build-ledger.log" &
  ledger_build=$!
  built=0
  wait $interposer_build || built=1
  wait $workload_build || built=1
  wait $ledger_build || built=1
  if [ $built != 0 ]; then
    say "FAIL  build (g++ $(g++ -dumpversion 2>/dev/null)):"
    tail -n 30 "$work"/build-*.log | tee -a "$summary"
    exit 1
  fi
  say "built in $(($(date +%s) - build_started)) s with g++ $(g++ -dumpversion)"
fi
interposer="$bin/libtessera-gpumem.so"
workload="$bin/gpumem_workload"
ledger_tool="$bin/tessera-gpumem-ledger"

# run STEP SECONDS [VAR=VALUE...] -- ARGS: the workload, interposed, with a fresh ledger per step.
run() {
  local step=$1 seconds
  seconds=$(limit_for "$2")
  shift 2
  if [ "$seconds" = 0 ]; then say "SKIP  $step: the script's time budget is spent"; return 125; fi
  local environment=()
  while [ "$1" != "--" ]; do environment+=("$1"); shift; done
  shift
  env TESSERA_GPUMEM_LEDGER="$work/$step.ledger" LD_PRELOAD="$interposer" "${environment[@]}" \
    timeout -k 5 "$seconds" "$workload" "$@" >"$work/$step.out" 2>"$work/$step.err"
  local status=$?
  [ $status = 124 ] || [ $status = 137 ] && say "      ($step ran past its $seconds s limit)"
  return $status
}
direct() {
  local step=$1 seconds
  seconds=$(limit_for "$2")
  shift 2
  if [ "$seconds" = 0 ]; then say "SKIP  $step: the script's time budget is spent"; return 125; fi
  timeout -k 5 "$seconds" "$workload" "$@" >"$work/$step.out" 2>"$work/$step.err"
}

# --- 1. overhead: cuMemAlloc + cuMemFree, direct against interposed, both lookup paths --------------
for path in dlsym proc; do
  option=()
  [ $path = proc ] && option=(--proc)
  direct "direct-$path" 40 "${option[@]}" overhead 20000 $MiB
  run "interposed-$path" 40 TESSERA_POD_UID=overhead TESSERA_GPU_MEMORY_LIMIT=$((4 * GiB)) -- "${option[@]}" overhead 20000 $MiB
  d=$(value "$work/direct-$path.out" overhead_ns_median)
  i=$(value "$work/interposed-$path.out" overhead_ns_median)
  if [ -n "$d" ] && [ -n "$i" ]; then
    say "      overhead ($path): cuMemAlloc+cuMemFree of 1 MiB, median of 20000 pairs: direct $d ns, interposed $i ns, added $((i - d)) ns"
  else
    verdict "overhead ($path)" 1 "no figure: $(tail -n 3 "$work/direct-$path.err" "$work/interposed-$path.err" | tr '\n' ' ')"
  fi
done

# --- 2. the limit: allocations past it refused with CUDA_ERROR_OUT_OF_MEMORY; cuMemGetInfo shows it
run limit 40 TESSERA_POD_UID=limit TESSERA_GPU_MEMORY_LIMIT=$GiB -- limit $((64 * MiB))
granted=$(value "$work/limit.out" granted_bytes)
refusal=$(value "$work/limit.out" refusal)
total=$(value "$work/limit.out" reported_total)
free_full=$(value "$work/limit.out" reported_free_full)
[ "${granted:-0}" -eq $GiB ] && [ "$refusal" = 2 ]
verdict "limit" $? "limit 1 GiB, 64 MiB at a time: granted ${granted:-?} bytes, then CUDA error ${refusal:-?} (2 = out of memory)"
[ "$total" = $GiB ] && [ "$free_full" = 0 ]
verdict "cuMemGetInfo" $? "total ${total:-?} (the limit), free ${free_full:-?} when full"

# --- 3. every allocation function: granted within the limit, refused past it, freed --------------
run variants 40 TESSERA_POD_UID=variants TESSERA_GPU_MEMORY_LIMIT=$GiB -- --proc variants $((600 * MiB))
while IFS= read -r line; do
  name=${line%%=*}
  result=${line#*=}
  if [ "$result" = unavailable ]; then say "      ${name#variant_}: not exported by this driver"; continue; fi
  [ "$result" = "granted:0,second:2,freed:0" ]
  verdict "${name#variant_}" $? "600 MiB granted, 600 MiB more refused past the 1 GiB limit, freed ($result)"
done < <(grep '^variant_' "$work/variants.out")
[ -s "$work/variants.out" ] || verdict variants 1 "no output: $(tail -n 3 "$work/variants.err" | tr '\n' ' ')"

# --- 4. concurrency: N pods bursting at once on a device the ledger says holds 2 GiB ---------------
capacity=$((2 * GiB))
run burst 90 TESSERA_GPU_DEVICE_MEMORY=$capacity TESSERA_GPU_MEMORY_LIMIT=$((512 * MiB)) TESSERA_GPUMEM_WAIT_TIMEOUT_MS=200 \
  -- burst "$processes" 10 $((128 * MiB)) 1 4
status=$?
guarded 20 "$ledger_tool" "$work/burst.ledger" >"$work/burst.ledger.txt" 2>&1
peak=$(sed -n 's/^device=0 .*peak_used=\([0-9]*\).*/\1/p' "$work/burst.ledger.txt")
used_after=$(sed -n 's/^device=0 .*capacity=[0-9]* used=\([0-9]*\).*/\1/p' "$work/burst.ledger.txt")
[ $status = 0 ] && [ -n "$peak" ] && [ "$peak" -le $capacity ] && [ "$used_after" = 0 ]
verdict "concurrency" $? "$processes processes x 4 threads: $(value "$work/burst.out" burst_grants) grants, $(value "$work/burst.out" burst_refusals) refused after waiting, $(value "$work/burst.out" burst_corrupt) corrupted, $(value "$work/burst.out" burst_errors) driver errors; ledger peak ${peak:-?} of $capacity bytes (overshoot $(( ${peak:-0} > capacity ? ${peak:-0} - capacity : 0 ))), ${used_after:-?} left charged"

# --- 5. wait and retry: how soon a waiting allocation is granted after the free that makes room ----
run wait 60 TESSERA_GPU_DEVICE_MEMORY=$((3 * GiB / 2)) TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPUMEM_WAIT_TIMEOUT_MS=10000 \
  -- wait-latency 30 $GiB
status=$?
[ $status = 0 ] && [ "$(value "$work/wait.out" wait_granted)" = 30 ]
verdict "wait" $? "30 rounds of 1 GiB on a 1.5 GiB device: $(value "$work/wait.out" wait_granted) granted after the free, $(value "$work/wait.out" wait_granted_before_free) before it, $(value "$work/wait.out" wait_refused) refused; latency median $(value "$work/wait.out" wait_latency_us_median) us, p90 $(value "$work/wait.out" wait_latency_us_p90) us"

# --- 6. priority: a higher-priority pod's allocation ends the lower-priority pod's process ---------
ledger="$work/priority.ledger"
common=(TESSERA_GPUMEM_LEDGER="$ledger" LD_PRELOAD="$interposer" TESSERA_GPU_DEVICE_MEMORY=$((3 * GiB / 2))
  TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPU_MEMORY_RESOLVER=priority TESSERA_GPUMEM_WAIT_TIMEOUT_MS=20000)
mkfifo "$work/low.in"
guarded 60 env "${common[@]}" TESSERA_POD_UID=low TESSERA_POD_PRIORITY=10 "$workload" hold $GiB \
  <"$work/low.in" >"$work/low.out" 2>"$work/low.err" &
low=$!
exec 7>"$work/low.in"
for _ in $(seq 1 200); do
  grep -q '^held=' "$work/low.out" 2>/dev/null || ! kill -0 $low 2>/dev/null || [ "$(limit_for 5)" = 0 ] && break
  sleep 0.1
done
guarded 40 env "${common[@]}" TESSERA_POD_UID=high TESSERA_POD_PRIORITY=100 "$workload" alloc $GiB \
  >"$work/high.out" 2>"$work/high.err" 7>&-
exec 7>&-  # end of input: a low-priority process still alive frees and exits 0
wait $low
low_status=$?
[ "$(value "$work/low.out" held)" = 1 ] && [ "$(value "$work/high.out" result)" = 0 ] && [ $low_status = 137 ]
verdict "priority" $? "low-priority pod held 1 GiB; high-priority pod's 1 GiB: CUDA result $(value "$work/high.out" result) after $(value "$work/high.out" elapsed_ms) ms; low pod's process ended with status $low_status (137 = killed)"

# --- 7. a process that dies holding memory: its charge is reclaimed --------------------------------
run death 30 TESSERA_POD_UID=crash TESSERA_GPU_MEMORY_LIMIT=$GiB -- hold $((256 * MiB)) die
guarded 20 "$ledger_tool" "$work/death.ledger" >"$work/death.ledger.txt" 2>&1
reclaimed=$(value "$work/death.ledger.txt" reclaimed)
[ "$reclaimed" = $((256 * MiB)) ]
verdict "reclaim" $? "a process ended holding 256 MiB; the ledger reclaimed ${reclaimed:-?} bytes"

# --- 8. swap: a colliding allocation placed in host memory, moved back when room frees ------------
ledger="$work/swap.ledger"
common=(TESSERA_GPUMEM_LEDGER="$ledger" LD_PRELOAD="$interposer" TESSERA_GPU_DEVICE_MEMORY=$((3 * GiB / 2))
  TESSERA_GPU_MEMORY_LIMIT=$GiB)
wait_for_line() {  # wait_for_line FILE PATTERN COUNT: until FILE has COUNT lines matching, or 20 s
  for _ in $(seq 1 200); do
    [ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] || [ "$(limit_for 5)" = 0 ] && break
    sleep 0.1
  done
}
mkfifo "$work/holder.in" "$work/swapper.in"
guarded 60 env "${common[@]}" TESSERA_POD_UID=holder "$workload" hold $GiB <"$work/holder.in" >"$work/holder.out" 2>&1 &
holder=$!
exec 8>"$work/holder.in"
wait_for_line "$work/holder.out" '^held=1' 1
guarded 60 env "${common[@]}" TESSERA_POD_UID=swapper TESSERA_GPU_MEMORY_RESOLVER=swap "$workload" swap-hold $GiB \
  <"$work/swapper.in" >"$work/swapper.out" 2>&1 8>&- &  # not holding the holder's input open
swapper=$!
exec 9>"$work/swapper.in"
wait_for_line "$work/swapper.out" '^held=' 1
echo check >&9
wait_for_line "$work/swapper.out" '^intact=' 1
guarded 20 "$ledger_tool" --no-reclaim "$ledger" >"$work/swap-before.txt" 2>&1
exec 8>&-  # the holder frees and ends
wait $holder
echo check >&9
wait_for_line "$work/swapper.out" '^intact=' 2
guarded 20 "$ledger_tool" --no-reclaim "$ledger" >"$work/swap-after.txt" 2>&1
exec 9>&-
wait $swapper
swapper_status=$?
in_host_before=$(sed -n 's/.*uid=swapper .* in_host=\([0-9]*\).*/\1/p' "$work/swap-before.txt")
in_host_after=$(sed -n 's/.*uid=swapper .* in_host=\([0-9]*\).*/\1/p' "$work/swap-after.txt")
swap_ins=$(sed -n 's/.*uid=swapper .* swap_ins=\([0-9]*\).*/\1/p' "$work/swap-after.txt")
intact=$(grep -c '^intact=1' "$work/swapper.out" 2>/dev/null)
[ "$in_host_before" = $GiB ] && [ "$in_host_after" = 0 ] && [ "$swap_ins" = 1 ] && [ "$intact" = 2 ] && [ $swapper_status = 0 ]
verdict "swap" $? "1 GiB colliding on a 1.5 GiB device: ${in_host_before:-?} bytes placed in host memory, ${in_host_after:-?} left there after the holder freed (${swap_ins:-?} moved back); contents intact at ${intact:-0} of 2 checks; exit $swapper_status"

# --- 9. swap pods time-share: a newcomer moves a swap pod out; it comes back when room returns ---
# For each kind of allocation a swap pod can move (docs/gpu-memory.md §Resolvers): the first pod's
# allocation is of that kind, the newcomer's a cuMemAlloc.
entry_field() { sed -n "s/.*uid=$2 .* $3=\([0-9]*\).*/\1/p" "$1"; }  # entry_field REPORT UID FIELD
swap_turns() {  # swap_turns KIND
  local kind=$1 ledger="$work/swap-turns-$1.ledger" first second first_status second_status
  # Slices of an hour: here the newcomer moves the first pod out, and no slice ends meanwhile.
  local common=(TESSERA_GPUMEM_LEDGER="$ledger" LD_PRELOAD="$interposer" TESSERA_GPU_DEVICE_MEMORY=$((3 * GiB / 2))
    TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPU_MEMORY_RESOLVER=swap TESSERA_GPU_MEMORY_SWAP_SLICE_MS=3600000)
  mkfifo "$work/first-$kind.in" "$work/second-$kind.in"
  guarded 60 env "${common[@]}" TESSERA_POD_UID=first "$workload" swap-hold $GiB "$kind" <"$work/first-$kind.in" \
    >"$work/first-$kind.out" 2>&1 &
  first=$!
  exec 8>"$work/first-$kind.in"
  wait_for_line "$work/first-$kind.out" '^held=' 1
  guarded 60 env "${common[@]}" TESSERA_POD_UID=second "$workload" swap-hold $GiB <"$work/second-$kind.in" \
    >"$work/second-$kind.out" 2>&1 8>&- &
  second=$!
  exec 9>"$work/second-$kind.in"
  wait_for_line "$work/second-$kind.out" '^held=' 1  # granted once `first` moved out
  echo check >&8
  echo check >&9
  wait_for_line "$work/first-$kind.out" '^intact=' 1
  wait_for_line "$work/second-$kind.out" '^intact=' 1
  guarded 20 "$ledger_tool" --no-reclaim "$ledger" >"$work/turns-out-$kind.txt" 2>&1
  exec 9>&-  # `second` frees and ends; `first`'s helper thread moves it back
  wait $second
  second_status=$?
  for _ in $(seq 1 100); do  # until `first` is back on the device, or 10 s
    guarded 20 "$ledger_tool" --no-reclaim "$ledger" >"$work/turns-back-$kind.txt" 2>&1
    [ "$(entry_field "$work/turns-back-$kind.txt" first in_host)" = 0 ] || [ "$(limit_for 5)" = 0 ] && break
    sleep 0.1
  done
  echo check >&8
  wait_for_line "$work/first-$kind.out" '^intact=' 2
  exec 8>&-
  wait $first
  first_status=$?
  local out_while second_used back_used peak intact
  out_while=$(entry_field "$work/turns-out-$kind.txt" first in_host)
  second_used=$(entry_field "$work/turns-out-$kind.txt" second used)
  back_used=$(entry_field "$work/turns-back-$kind.txt" first used)
  peak=$(sed -n 's/^device=0 .* peak_used=\([0-9]*\).*/\1/p' "$work/turns-back-$kind.txt")
  intact=$(($(grep -c '^intact=1' "$work/first-$kind.out" 2>/dev/null) + $(grep -c '^intact=1' "$work/second-$kind.out" 2>/dev/null)))
  # A pitched allocation is charged at its rows' pitch: at least the GiB asked for.
  [ "${out_while:-0}" -ge $GiB ] && [ "$second_used" = $GiB ] && [ "${back_used:-0}" = "$out_while" ] &&
    [ "${peak:-0}" -le $((3 * GiB / 2)) ] && [ "$intact" = 3 ] && [ "$first_status" = 0 ] && [ "$second_status" = 0 ]
  verdict "swap turns ($kind)" $? "two swap pods of 1 GiB on a 1.5 GiB device, the first's allocation by $kind: while the second held its GiB on the device the first had ${out_while:-?} bytes moved to host memory, and ${back_used:-?} back on the device after the second ended; ledger peak ${peak:-?} bytes; contents intact at $intact of 3 checks; exits $first_status, $second_status"
}
for kind in alloc pitch async pool; do swap_turns $kind; done

# --- 10. time slices: three busy swap pods that never free take turns on a device that holds one --
ledger="$work/swap-slices.ledger"
slice_ms=${TESSERA_GPUMEM_SLICE_MS:-200}
common=(TESSERA_GPUMEM_LEDGER="$ledger" LD_PRELOAD="$interposer" TESSERA_GPU_DEVICE_MEMORY=$((3 * GiB / 2))
  TESSERA_GPU_MEMORY_LIMIT=$GiB TESSERA_GPU_MEMORY_RESOLVER=swap TESSERA_GPU_MEMORY_SWAP_SLICE_MS=$slice_ms)
sliced=()
for pod in a b c; do
  mkfifo "$work/slice-$pod.in"
  guarded 90 env "${common[@]}" TESSERA_POD_UID=slice-$pod "$workload" swap-hold $GiB <"$work/slice-$pod.in" \
    >"$work/slice-$pod.out" 2>&1 7>&- 8>&- 9>&- &
  sliced+=($!)
  case $pod in a) exec 7>"$work/slice-$pod.in" ;; b) exec 8>"$work/slice-$pod.in" ;; c) exec 9>"$work/slice-$pod.in" ;; esac
  wait_for_line "$work/slice-$pod.out" '^held=' 1
done
turns_wanted=12
slices_started=$(date +%s)
for _ in $(seq 1 300); do  # until the pods had $turns_wanted turns between them, or 30 s
  guarded 20 "$ledger_tool" --no-reclaim "$ledger" >"$work/slices.txt" 2>&1
  turns=0
  for pod in a b c; do turns=$((turns + $(entry_field "$work/slices.txt" slice-$pod swap_ins | head -n1))); done
  [ $turns -ge $turns_wanted ] || [ "$(limit_for 5)" = 0 ] && break
  sleep 0.1
done
slices_seconds=$(($(date +%s) - slices_started))
counts=()
for pod in a b c; do counts+=("$(entry_field "$work/slices.txt" slice-$pod swap_ins | head -n1)"); done
for fd in 7 8 9; do echo check >&$fd; done
for pod in a b c; do wait_for_line "$work/slice-$pod.out" '^intact=' 1; done
exec 7>&- 8>&- 9>&-
slice_statuses=()
for pid in "${sliced[@]}"; do wait "$pid"; slice_statuses+=($?); done
intact=$(cat "$work"/slice-?.out 2>/dev/null | grep -c '^intact=1')
total_turns=$((${counts[0]:-0} + ${counts[1]:-0} + ${counts[2]:-0}))
fair=0
for count in "${counts[@]}"; do [ $((${count:-0} * 6)) -ge $total_turns ] || fair=1; done
[ $total_turns -ge $turns_wanted ] && [ $fair = 0 ] && [ "$intact" = 3 ] && [ "${slice_statuses[*]}" = "0 0 0" ]
verdict "swap slices" $? "three busy swap pods of 1 GiB on a 1.5 GiB device, slice $slice_ms ms: turns (moves back to the device) ${counts[*]} in about $slices_seconds s (each at least half its share: $([ $fair = 0 ] && echo yes || echo no)); contents intact at $intact of 3 checks; exits ${slice_statuses[*]}"

say "total $(($(date +%s) - script_started)) s; $failures failed"
say "logs: $results (summary.txt); step outputs were in $work"
cp "$work"/*.out "$work"/*.err "$work"/*.txt "$results/" 2>/dev/null
[ $failures = 0 ]
