#!/usr/bin/env bash
# Debian's kubectl 1.20 (a client written elsewhere) against `tessera dev cluster` over TLS with
# a bearer token: discovery, apply (create, then patch), get with server-side tables, -o json,
# watch, binding, label, events, delete. Exit 77 (skipped) when no kubectl 1.20 is installed.
set -uo pipefail
: "${TESSERA:?set TESSERA to the tessera binary}"
root="$(cd "$(dirname "$0")/../.." && pwd)"

find_kubectl() {
  local candidate
  for candidate in "${KUBECTL:-}" "${TESSERA_BUILD_DIR:-}/tools/kubernetes-client/usr/bin/kubectl" \
                   /tmp/kdeb/root/usr/bin/kubectl "$(command -v kubectl 2>/dev/null)"; do
    [[ -n "$candidate" && -x "$candidate" ]] || continue
    if "$candidate" version --client 2>/dev/null | grep -q 'GitVersion:"v1\.20\.'; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
if ! KUBECTL="$(find_kubectl)"; then
  echo "SKIP: no kubectl 1.20 found (set KUBECTL, or install Debian's kubernetes-client)"
  exit 77
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The server picks a free port (--listen 127.0.0.1:0) and prints its URL once it serves.
"$TESSERA" dev cluster --listen 127.0.0.1:0 --nodes "$root/clusters/dev-cluster.yaml" \
  --kubeconfig "$work/kubeconfig" --pod-start-seconds 0.2 --termination-seconds 0.3 \
  > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^kubeconfig:' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^kubeconfig:' "$work/server.out" || { echo "FAIL: the dev cluster did not start: $(cat "$work/server.err")"; exit 1; }
server_url="$(sed -n 's/^server: //p' "$work/server.out")"
[[ "$server_url" == https://127.0.0.1:* ]] || fail "server URL: $server_url"

export KUBECONFIG="$work/kubeconfig" HOME="$work/home"  # HOME: kubectl's discovery cache
k() { "$KUBECTL" --request-timeout=30s "$@"; }

# 1. Discovery and server-side tables.
out="$(k get nodes 2>&1)" || fail "get nodes: $out"
[[ "$(head -1 <<<"$out")" =~ ^NAME\ +STATUS\ +ROLES\ +AGE\ +VERSION ]] || fail "node headers: $out"
[[ "$(grep -c ' Ready ' <<<"$out")" == 7 ]] || fail "expected 7 Ready nodes: $out"
out="$(k get node a100-0 -o jsonpath='{.status.capacity.nvidia\.com/gpu} {.metadata.labels.nvidia\.com/gpu\.product}')"
[[ "$out" == "8 A100" ]] || fail "node capacity and labels: $out"
k version > "$work/version" 2>&1 || fail "version: $(cat "$work/version")"
grep -q 'Server Version' "$work/version" || fail "no server version: $(cat "$work/version")"

# 2. The CRDs are preinstalled; applying them again patches them (with client-side validation on).
out="$(k apply -f "$root/deploy/crds/" 2>&1)" || fail "apply CRDs: $out"
grep -q 'customresourcedefinition.apiextensions.k8s.io/queues.scheduling.tessera.dev' <<<"$out" || fail "apply CRDs: $out"

# 3. Apply creates, and re-applying a change patches (strategic merge for pods, merge for CRs).
manifest() {
  cat <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: scheduling.tessera.dev/v1alpha1
kind: Queue
metadata:
  name: research
spec:
  resources:
    gpu: {deserved: $1, overQuotaWeight: 1}
---
apiVersion: scheduling.tessera.dev/v1alpha1
kind: PodGroup
metadata:
  name: gang
  namespace: team-a
spec:
  minMember: 2
  queue: research
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: team-a
  labels: {app: trainer, scheduling.tessera.dev/pod-group: gang}
spec:
  schedulerName: tessera
  containers:
  - name: main
    image: $2
    resources:
      limits: {nvidia.com/gpu: 1}
  - name: sidecar
    image: proxy:1
---
apiVersion: v1
kind: Event
metadata:
  name: trainer.demo
  namespace: team-a
involvedObject: {kind: Pod, name: trainer, namespace: team-a}
reason: Demo
message: applied by the kubectl test
type: Normal
YAML
}
manifest 8 busybox:1.36 > "$work/apply.yaml"
out="$(k apply -f "$work/apply.yaml" 2>&1)" || fail "apply: $out"
for created in namespace/team-a queue.scheduling.tessera.dev/research podgroup.scheduling.tessera.dev/gang pod/trainer event/trainer.demo; do
  grep -q "$created created" <<<"$out" || fail "expected '$created created' in: $out"
done
manifest 16 busybox:1.37 > "$work/apply.yaml"
out="$(k apply -f "$work/apply.yaml" 2>&1)" || fail "re-apply: $out"
grep -q 'pod/trainer configured' <<<"$out" || fail "pod not patched: $out"
grep -q 'queue.scheduling.tessera.dev/research configured' <<<"$out" || fail "queue not patched: $out"
[[ "$(k get queue research -o jsonpath='{.spec.resources.gpu.deserved}')" == 16 ]] || fail "queue patch not applied"
images="$(k get pod trainer -n team-a -o jsonpath='{.spec.containers[*].image}')"
[[ "$images" == "busybox:1.37 proxy:1" ]] || fail "strategic merge of containers: $images"

# 4. Printer columns of the CRDs and the pod table.
out="$(k get queues 2>&1)"
[[ "$(head -1 <<<"$out")" =~ ^NAME\ +PARENT\ +GPU-DESERVED\ +GPU-LIMIT\ +GPU-ALLOCATED\ +GPU-FAIRSHARE\ +PENDING\ +ACCEPTED\ +AGE ]] || fail "queue columns: $out"
grep -q '^research  *16 ' <<<"$out" || fail "queue row: $out"
out="$(k get pg -n team-a 2>&1)"
[[ "$(head -1 <<<"$out")" =~ ^NAME\ +QUEUE\ +MINMEMBER\ +PHASE\ +RUNNING\ +REASON\ +AGE ]] || fail "podgroup columns: $out"
grep -q '^gang  *research  *2 ' <<<"$out" || fail "podgroup row: $out"
out="$(k get pods -n team-a 2>&1)"
[[ "$(head -1 <<<"$out")" =~ ^NAME\ +READY\ +STATUS\ +RESTARTS\ +AGE ]] || fail "pod columns: $out"
grep -q '^trainer  *0/2  *Pending ' <<<"$out" || fail "pod row: $out"
out="$(k get pods -A -o wide 2>&1)"
grep -q 'NOMINATED NODE' <<<"$out" || fail "wide columns: $out"
out="$(k get events -n team-a 2>&1)"
grep -q 'pod/trainer' <<<"$out" && grep -q 'Demo' <<<"$out" || fail "events: $out"

# 5. -o json and -o yaml.
k get pods -A -o json > "$work/pods.json" || fail "get -o json"
python3 - "$work/pods.json" <<'PY' || fail "pods JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "List", d["kind"]
pods = [p for p in d["items"] if p["metadata"]["name"] == "trainer"]
assert len(pods) == 1, d["items"]
p = pods[0]
assert p["spec"]["schedulerName"] == "tessera"
assert p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1", p["spec"]["containers"][0]
assert p["status"]["phase"] == "Pending"
PY
k get podgroup gang -n team-a -o yaml | grep -q 'minMember: 2' || fail "get -o yaml"

# 6. A watch sees the pod bound (a Binding created with kubectl, as a scheduler would) and started.
timeout 20 "$KUBECTL" get pods -n team-a -w > "$work/watch.txt" 2>&1 &
watch_pid=$!
sleep 1
cat > "$work/binding.yaml" <<'YAML'
apiVersion: v1
kind: Binding
metadata: {name: trainer, namespace: team-a}
target: {kind: Node, name: a100-2}
YAML
k create -f "$work/binding.yaml" > "$work/binding.out" 2>&1 || fail "binding: $(cat "$work/binding.out")"
out="$(k create -f "$work/binding.yaml" 2>&1)" && fail "second binding accepted"
grep -q 'already assigned to node "a100-2"' <<<"$out" || fail "second binding: $out"
for _ in $(seq 100); do
  [[ "$(k get pod trainer -n team-a -o jsonpath='{.status.phase}')" == Running ]] && break
  sleep 0.1
done
[[ "$(k get pod trainer -n team-a -o jsonpath='{.spec.nodeName} {.status.phase}')" == "a100-2 Running" ]] || fail "pod not running"
for _ in $(seq 50); do grep -q 'Running' "$work/watch.txt" && break; sleep 0.1; done
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null
grep -q '^trainer  *0/2  *Pending' "$work/watch.txt" || fail "watch: no Pending row: $(cat "$work/watch.txt")"
grep -q '^trainer  *2/2  *Running' "$work/watch.txt" || fail "watch: no Running row: $(cat "$work/watch.txt")"

# 7. label, create namespace, delete (kubectl waits for the graceful deletion to finish).
k label pod trainer -n team-a tier=gpu > /dev/null || fail "label"
[[ "$(k get pods -n team-a -l tier=gpu -o name)" == pod/trainer ]] || fail "label selector"
k create namespace scratch > /dev/null || fail "create namespace"
[[ "$(k get ns scratch -o jsonpath='{.status.phase}')" == Active ]] || fail "namespace status"
out="$(k delete pod trainer -n team-a 2>&1)" || fail "delete pod: $out"
out="$(k get pod trainer -n team-a 2>&1)" && fail "pod still there: $out"
grep -q 'Error from server (NotFound): pods "trainer" not found' <<<"$out" || fail "NotFound message: $out"
out="$(k delete -f "$work/apply.yaml" 2>&1)"
grep -q 'queue.scheduling.tessera.dev "research" deleted' <<<"$out" || fail "delete -f: $out"
out="$(k get queues 2>&1)"
grep -q 'No resources found' <<<"$out" || fail "queues left: $out"

# 8. The deploy manifests and examples apply as shipped.
out="$(k apply -f "$root/deploy/rbac.yaml" -f "$root/deploy/scheduler.yaml" 2>&1)" || fail "apply deploy: $out"
for created in 'clusterrole.rbac.authorization.k8s.io/tessera-scheduler' 'deployment.apps/tessera-scheduler'; do
  grep -q "$created" <<<"$out" || fail "apply deploy: no $created in: $out"
done
[[ "$(k get deployment tessera-scheduler -n tessera-system -o jsonpath='{.spec.replicas}')" == 2 ]] ||
  fail "the Deployment should run two replicas"
out="$(k apply -f "$root/deploy/examples/" 2>&1)" || fail "apply examples: $out"
for created in 'queue.scheduling.tessera.dev/research' 'podgroup.scheduling.tessera.dev/' \
               'poddisruptionbudget.policy/'; do
  grep -q "$created" <<<"$out" || fail "apply examples: no $created in: $out"
done
# Re-applying what did not change patches nothing. (Bare pods are left out: as on a real server,
# the tolerations admission adds make a re-applied pod an illegal update.)
out="$(k apply -f "$root/deploy/rbac.yaml" -f "$root/deploy/scheduler.yaml" -f "$root/deploy/examples/queues.yaml" 2>&1)" ||
  fail "re-apply: $out"
grep -qv 'unchanged' <<<"$out" && fail "re-applying unchanged manifests should leave them unchanged: $out"

# 9. Without the right token: 401.
out="$("$KUBECTL" --token=wrong get nodes 2>&1)" && fail "wrong token accepted"
grep -qi 'Unauthorized' <<<"$out" || fail "wrong token: $out"

if [[ $failures -gt 0 ]]; then
  echo "--- server log"; tail -20 "$work/server.err"
  echo "$failures failure(s)"
  exit 1
fi
echo "kubectl end to end: all checks passed ($("$KUBECTL" version --client --short 2>/dev/null || echo kubectl))"
