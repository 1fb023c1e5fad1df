#!/usr/bin/env bash
# The CLI as a user meets it: the embedded default, files, the outputs, and bad input.
set -uo pipefail
: "${TESSERA:?set TESSERA to the tessera binary}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error EXIT_PATTERN MESSAGE_PATTERN -- ARGS...: non-zero exit and the message on stderr.
expect_error() {
  local message="$1"; shift
  local output status
  output="$("$TESSERA" "$@" 2>&1 >/dev/null)"; status=$?
  [[ $status -ne 0 ]] || fail "exit 0 for: $* (expected an error)"
  [[ "$output" == *"$message"* ]] || fail "for: $* expected '$message' in: $output"
}

# 1. The embedded default runs (small here: two policies, one seed) and writes both outputs.
cd "$work"
"$TESSERA" sim --policy tessera,fgd --seeds 1 --json out.json > table.txt || fail "default sim failed"
grep -q "tessera" table.txt && grep -q "GPU alloc @100%" table.txt || fail "summary table missing: $(cat table.txt)"
[[ -s tessera-report/index.html && -s tessera-report/results.json && -s out.json ]] || fail "outputs not written"
python3 - out.json <<'PY' || fail "JSON schema"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tessera.sim/v1" and d["mode"] == "arrival", d.get("schema")
names = [p["policy"] for p in d["policies"]]
assert names == ["tessera", "fgd"], names
for p in d["policies"]:
    assert 50 < p["alloc_at_100_pct"] <= 100, p["alloc_at_100_pct"]
    assert p["curve"] and all({"arrived_pct", "allocated_pct"} <= set(pt) for pt in p["curve"])
PY
grep -q "<svg" tessera-report/index.html || fail "report has no chart"

# 1b. The safety invariants hold after every placement on the real trace, for every policy.
"$TESSERA" sim --seeds 1 --target-pct 60 --check-invariants --no-report > inv.txt 2>&1 || fail "invariants: $(tail -3 inv.txt)"

# 2. Timeline mode on a shipped example scenario.
"$TESSERA" sim --mode timeline --scenario "$root/examples/inference-and-training.yaml" --policy tessera,best-fit \
  --report tl > tl.txt || fail "timeline sim failed"
grep -q "wait p50" tl.txt || fail "timeline table missing: $(cat tl.txt)"
"$TESSERA" sim --mode timeline --scenario "$root/examples/inference-and-training.yaml" --check-invariants --no-report \
  > tl-inv.txt 2>&1 || fail "timeline invariants: $(tail -3 tl-inv.txt)"

# 2b. A scenario with queues runs the scheduling cycle: per-queue figures in the table and the JSON.
"$TESSERA" sim --mode timeline --scenario "$root/scenarios/susan-joe-jemma.yaml" --policy tessera --check-invariants \
  --cycle-interval 30 --json cyc.json --report cyc > cyc.txt 2>&1 || fail "cycle replay: $(tail -3 cyc.txt)"
grep -q "churn:" cyc.txt && grep -q "susan" cyc.txt || fail "queue summary missing: $(cat cyc.txt)"
python3 - cyc.json <<'PY' || fail "cycle JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["replay"] == "cycle" and d["cycle_interval_seconds"] == 30, (d["replay"], d["cycle_interval_seconds"])
p = d["policies"][0]
assert {q["name"] for q in p["queues"]} >= {"susan", "joe", "jemma"}, p["queues"]
assert [a["action"] for a in p["churn"]["by_action"]] == ["allocate", "consolidate", "reclaim", "preempt"]
PY
grep -q "Queues: allocation against fair share" cyc/index.html || fail "report has no queue section"
expect_error "--cycle-interval" sim --mode timeline --scenario "$root/scenarios/susan-joe-jemma.yaml" \
  --cycle-interval 0 --report bad-cycle
"$TESSERA" sim --mode timeline --scenario "$root/scenarios/susan-joe-jemma.yaml" --cycle-interval -5 --report bad-cycle \
  > /dev/null 2>&1; [[ $? -eq 2 ]] || fail "--cycle-interval -5 should exit 2"
[[ ! -e bad-cycle ]] || fail "a bad --cycle-interval left a report behind"

# 2c. GPU-memory mode: the static and request/limit rows on tuning and held-out seeds, and its bad input.
"$TESSERA" sim --mode gpu-memory --seeds 1 --gpu-memory-nodes 2 > gm.txt 2>&1 || fail "gpu-memory sim: $(tail -3 gm.txt)"
grep -q "^static (peak)" gm.txt && grep -q "^Chosen: overcommit" gm.txt && grep -q "^Held out: seeds 2-2" gm.txt ||
  fail "gpu-memory tables missing: $(cat gm.txt)"
printf 'ContextTokens,GeneratedTokens\n12,x\n' > requests.csv
expect_error "requests.csv:2: column 'GeneratedTokens': 'x' is not a number" sim --mode gpu-memory \
  --gpu-memory-requests requests.csv
expect_error "overcommit 9 is not between 1 and 8" sim --mode gpu-memory --gpu-memory-ratios 1.5,9
expect_error "gpu-memory mode prints its tables only" sim --mode gpu-memory --json gm.json

# 3. Bad input: clear errors naming file, line and field; non-zero exit; nothing written.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,abc,262144,2,P100\n' > nodes.csv
expect_error "nodes.csv:3: column 'cpu_milli'" sim --cluster nodes.csv --report bad1
[[ ! -e bad1 ]] || fail "a failed run left a report behind"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\np0,1000,1024,1,500,X100,0,10\n' > pods.csv
expect_error "pods.csv:2: column 'gpu_spec': unknown GPU model 'X100'" sim --workload pods.csv --report bad2
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\np0,-5,1024,1,500,,0,10\n' > neg.csv
expect_error "neg.csv:2: column 'cpu_milli'" sim --workload neg.csv --report bad3
: > empty.csv
expect_error "empty.csv" sim --workload empty.csv --report bad4
printf 'name,cpu_milli,memory_mib,gpu_milli,gpu_spec,creation_time,deletion_time\np0,1,1,500,,0,10\n' > nocol.csv
expect_error "num_gpu" sim --workload nocol.csv --report bad5
# The dataset's multi-GPU lists: five columns are enough for arrival mode; a timeline replay names
# the column it lacks.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,2,0\np1,1000,1024,1,250\n' > multi.csv
"$TESSERA" sim --workload multi.csv --policy tessera,fgd --seeds 1 --no-report > multi.out 2>&1 ||
  fail "a pod list of the five required columns should run in arrival mode: $(cat multi.out)"
expect_error "multi.csv: column 'creation_time': missing from the header (a timeline replay needs" \
  sim --mode timeline --workload multi.csv --report bad-multi
[[ ! -e bad-multi ]] || fail "a refused timeline replay left a report behind"
expect_error "no-such-file.csv: cannot open file" sim --workload no-such-file.csv --report bad6
expect_error "unknown policy 'worst-fit'" sim --policy worst-fit --seeds 1 --report bad7
expect_error "builtin:nope: no such built-in trace" sim --workload builtin:nope --report bad8
printf 'workloads:\n  - name: a\n    pod: {cpu: 1, gpu_portion: 1.5}\n' > bad.yaml
expect_error "bad.yaml:3" sim --workload bad.yaml --report bad9
for d in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8 bad9; do [[ ! -e $d ]] || fail "$d written despite the error"; done

# 4. An unwritable output is an error, not a crash.
touch blocker
expect_error "blocker" sim --policy first-fit --seeds 1 --target-pct 20 --report blocker/report

# 5. The cycle benchmarks on tiny synthetic clusters: tables, JSON, and bad arguments.
"$TESSERA" bench cycle --nodes 20 --pending 300 --running 150 --queues 6 --cycles 2 --json cycle.json > cycle.txt \
  || fail "bench cycle failed: $(tail -3 cycle.txt)"
grep -q "whole cycle" cycle.txt && grep -q "peak resident" cycle.txt || fail "bench cycle table missing: $(cat cycle.txt)"
python3 - cycle.json <<'PY' || fail "bench cycle JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tessera.bench.cycle/v1", d.get("schema")
assert len(d["runs"]) == 2 and d["cluster"]["nodes"] == 20 and d["pending"]["pods"] == 300, d["cluster"]
assert {"fair_share", "allocate", "consolidate", "reclaim", "preempt", "cycle"} <= set(d["seconds"]), d["seconds"]
assert d["memory_mib"]["peak"] > 0
digests = {run["decisions"] for run in d["runs"]}
assert len(digests) == 1 and len(digests.pop()) == 16, d["runs"]
reasons = {run["reasons"] for run in d["runs"]}
assert len(reasons) == 1 and len(reasons.pop()) == 16, d["runs"]
PY
grep -Eq "^decisions: [0-9a-f]{16} " cycle.txt || fail "bench cycle decisions digest missing: $(cat cycle.txt)"
grep -Eq "^reasons: [0-9a-f]{16} " cycle.txt || fail "bench cycle reasons digest missing: $(cat cycle.txt)"
# Nodes with less CPU: the pods, filling the GPUs, ask more CPU than the cluster has.
"$TESSERA" bench cycle --nodes 20 --pending 300 --running 150 --queues 6 --cycles 1 --node-cpu-share 0.6 \
  --json cycle-cpu.json > cycle-cpu.txt || fail "bench cycle --node-cpu-share failed: $(tail -3 cycle-cpu.txt)"
grep -q "(CPU runs out first)" cycle-cpu.txt || fail "bench cycle --node-cpu-share: $(head -4 cycle-cpu.txt)"
python3 - cycle.json cycle-cpu.json <<'PY' || fail "bench cycle --node-cpu-share JSON"
import json, sys
plain, scarce = (json.load(open(path))["cluster"] for path in sys.argv[1:])
assert plain["node_cpu_share"] == 1 and plain["cpu_asked_share"] < 1, plain
assert scarce["node_cpu_share"] == 0.6 and scarce["cpu_asked_share"] > 1, scarce
assert scarce["cpu_cores"] < plain["cpu_cores"], (plain, scarce)
PY
"$TESSERA" bench reclaim --nodes 20 --gang-pods 2 --cycles 2 --json reclaim.json > reclaim.txt \
  || fail "bench reclaim failed: $(tail -3 reclaim.txt)"
grep -q "gang started: yes" reclaim.txt || fail "bench reclaim: $(cat reclaim.txt)"
python3 - reclaim.json <<'PY' || fail "bench reclaim JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tessera.bench.reclaim/v1", d.get("schema")
assert d["gang"]["started_cycles"] == 2 and d["gang"]["needed_gpus"] == 16, d["gang"]
assert 16 <= d["evicted"]["gpus"] <= 32, d["evicted"]
PY
expect_error "unknown policy 'worst-fit'" bench cycle --nodes 10 --pending 10 --running 10 --queues 2 --policy worst-fit
expect_error "--nodes" bench cycle --nodes 0
expect_error "--node-cpu-share" bench cycle --nodes 10 --node-cpu-share 0
expect_error "does not fit 2 nodes" bench reclaim --nodes 2 --gang-pods 3
expect_error "blocker" bench reclaim --nodes 20 --gang-pods 2 --cycles 1 --json blocker/out.json
# The replay benchmark: a row per policy, in the order given; a bad name refused before any run.
"$TESSERA" bench replay --policy fgd,tessera --repeat 2 --target-pct 10 > replay.txt || fail "bench replay: $(cat replay.txt)"
[[ "$(awk '$1 == "fgd" || $1 == "tessera" { print $1 }' replay.txt | paste -sd,)" == "fgd,tessera" ]] \
  || fail "bench replay rows: $(cat replay.txt)"
output="$("$TESSERA" bench replay --policy tessera,worst-fit --repeat 1 2>&1)" && fail "bench replay took worst-fit"
[[ "$output" == *"unknown policy 'worst-fit'"* && "$output" != *"policy "*"median"* ]] \
  || fail "bench replay with worst-fit: $output"

# The Kubernetes commands: a small bind benchmark end to end, and bad input.
"$TESSERA" bench bind --nodes 4 --pods 20 --repeat 1 --json bind.json > bind.txt 2>/dev/null || fail "bench bind: $(cat bind.txt)"
python3 - bind.json <<'PY' || fail "bench bind JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tessera.bench.bind/v1", d.get("schema")
assert d["pods"] == 20 and d["median"]["pods_per_second"] > 0, d["median"]
assert 0 < d["median"]["engine_share"] < 1, d["median"]
PY
expect_error "unknown policy 'nope'" bench bind --policy nope
expect_error "kubeconfig: cannot read $work/missing.kubeconfig" scheduler --kubeconfig "$work/missing.kubeconfig"
printf 'clusters: [\n' > bad.kubeconfig
expect_error "kubeconfig $work/bad.kubeconfig: line 2" scheduler --kubeconfig "$work/bad.kubeconfig"
expect_error "needs --retry-period < --renew-deadline < --lease-duration" scheduler --leader-elect --lease-duration 2 --renew-deadline 5
expect_error "$work/missing.yaml" dev cluster --listen 127.0.0.1:0 --nodes "$work/missing.yaml"
[[ ! -e tessera-dev.kubeconfig ]] || fail "dev cluster wrote a kubeconfig for a cluster it could not start"

# Every usage error exits 2, whatever CLI11 calls it (a value out of range, an unknown option).
for args in "scheduler --retry-period 0.001" "sim --cycle-interval abc" "sim --no-such-option"; do
  # shellcheck disable=SC2086
  "$TESSERA" $args > /dev/null 2>&1; status=$?
  [[ $status -eq 2 ]] || fail "'tessera $args' exited $status (expected 2)"
done

# The lean tessera-scheduler binary: the scheduler's flags at its top level, the same errors.
if [[ -n "${TESSERA_SCHEDULER:-}" ]]; then
  "$TESSERA_SCHEDULER" --version | grep -q "tessera-scheduler 0.1.0" || fail "tessera-scheduler --version"
  "$TESSERA_SCHEDULER" --help | grep -q -- "--leader-elect" || fail "tessera-scheduler --help lists no --leader-elect"
  "$TESSERA_SCHEDULER" webhook --help | grep -q -- "--tls-cert-file" ||
    fail "tessera-scheduler webhook --help lists no --tls-cert-file"
  output="$("$TESSERA_SCHEDULER" --kubeconfig "$work/missing.kubeconfig" 2>&1)"; status=$?
  [[ $status -eq 2 && "$output" == *"kubeconfig: cannot read $work/missing.kubeconfig"* ]] ||
    fail "tessera-scheduler with a missing kubeconfig exited $status: $output"
  "$TESSERA_SCHEDULER" --retry-period 0.001 > /dev/null 2>&1; status=$?
  [[ $status -eq 2 ]] || fail "'tessera-scheduler --retry-period 0.001' exited $status (expected 2)"
  "$TESSERA_SCHEDULER" sim > /dev/null 2>&1; status=$?
  [[ $status -eq 2 ]] || fail "'tessera-scheduler sim' exited $status (it has no simulator: expected 2)"
fi

# A pod list without GPU pods cannot reach arrival mode's GPU target: an error, not a hang.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\np0,1000,1024,0,0,,0,10\n' \
  > cpu-only.csv
timeout 60 "$TESSERA" sim --workload cpu-only.csv --seeds 1 --report cpu-only > cpu-only.txt 2>&1; status=$?
[[ $status -eq 2 ]] || fail "a list without GPU pods exited $status (expected 2): $(tail -2 cpu-only.txt)"
grep -q "has no pod that requests a GPU" cpu-only.txt || fail "no GPU pods: $(cat cpu-only.txt)"

# A child queue deserving more than its parent is accepted with a warning naming the line.
cat > over-parent.yaml <<'YAML'
cluster:
  nodes:
    - {name: n, count: 2, cpu: 64, memory: 256Gi, gpus: 8, gpu_model: A100, gpu_memory: 80Gi}
queues:
  - {name: parent, quota: {gpu: {deserved: 4}}}
  - {name: child, parent: parent, quota: {gpu: {deserved: 8}}}
workloads:
  - {name: w, queue: child, arrival: 0, duration: 60, pod: {cpu: 1, memory: 1Gi, gpus: 1}}
YAML
"$TESSERA" sim --mode timeline --scenario over-parent.yaml --no-report > over.txt 2> over.err || fail "over-parent: $(cat over.err)"
grep -q "over-parent.yaml:6" over.err && grep -q "deserved quota exceeds parent 'parent'" over.err ||
  fail "no warning for a child deserving more than its parent: $(cat over.err)"

# The user commands' shell completion, made from the commands themselves, completes in bash.
completed="$(bash -c 'source <("$1" completion bash) || exit 1
  COMP_WORDS=(tessera top q); COMP_CWORD=2; _tessera_complete; echo "${COMPREPLY[*]}"
  COMP_WORDS=(tessera list -o ""); COMP_CWORD=3; COMPREPLY=(); _tessera_complete; echo "${COMPREPLY[*]}"
  COMP_WORDS=(tessera submit nb --gpu); COMP_CWORD=3; COMPREPLY=(); _tessera_complete; echo "${COMPREPLY[*]}"' \
  _ "$TESSERA" 2>&1)"
[[ "$completed" == $'queues\ntable wide json yaml\n--gpus --gpu-memory' ]] || fail "bash completion: $completed"
expect_error "zsh not in {bash}" completion zsh

# Called as kubectl-tessera (the kubectl plugin), it names itself as kubectl shows it.
ln -s "$TESSERA" kubectl-tessera
./kubectl-tessera --help | grep -q "Usage: kubectl tessera" || fail "kubectl-tessera --help: $(./kubectl-tessera --help | head -3)"

if ((failures)); then echo "$failures CLI check(s) failed"; exit 1; fi
echo "CLI end to end: all checks passed"
