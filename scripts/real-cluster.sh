#!/usr/bin/env bash
# A real Kubernetes control plane on loopback, with the nodes of a Tessera cluster file faked by
# KWOK: etcd, kube-apiserver (TLS, Node,RBAC authorization, service-account tokens),
# kube-controller-manager and kwok, built from source by scripts/build-control-plane.sh. No
# kube-scheduler runs: pods that name `schedulerName: tessera` wait for `tessera scheduler`.
#
#   scripts/real-cluster.sh up --nodes FILE [--dir DIR] [--no-crds]
#       Starts everything (random free ports on 127.0.0.1), creates the nodes from
#       `tessera dev nodes --nodes FILE` and Tessera's CRDs (deploy/crds), waits until every node is
#       Ready, and prints `kubeconfig: PATH` (an admin kubeconfig) last. The processes keep running;
#       their pids and logs are under DIR. Run on a DIR left by `down`, it restarts that cluster
#       with its data.
#   scripts/real-cluster.sh down [--dir DIR]
#       Stops the processes (TERM, then KILL after a grace period); keeps DIR (data, logs).
#   scripts/real-cluster.sh status [--dir DIR]
#
# DIR defaults to build/real-cluster. Environment: TESSERA (default build/tessera),
# CONTROL_PLANE_BIN (a folder with the binaries; default: what build-control-plane.sh prints),
# READY_TIMEOUT (seconds to wait for each component; default 180), KUBE_APISERVER_EXTRA_ARGS (more
# kube-apiserver flags, split on spaces; the tests use it to shorten watches).
# A bound pod becomes Running; one annotated scheduling.tessera.dev/duration (such as "10m" or
# "30") becomes Succeeded that long afterwards (tools/control-plane/kwok/kwok.yaml).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
components=(etcd kube-apiserver kube-controller-manager kwok)
ready_timeout=${READY_TIMEOUT:-180}
grace_seconds=15

die() {
  echo "real-cluster: error: $*" >&2
  exit 1
}
say() { echo "real-cluster: $*" >&2; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

command=${1:-}
[[ -n $command && $command != -h && $command != --help ]] || usage
shift
dir=$root/build/real-cluster
nodes_file=""
install_crds=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --dir) dir=${2:?--dir needs a value}; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    --nodes) nodes_file=${2:?--nodes needs a value}; shift 2 ;;
    --nodes=*) nodes_file=${1#--nodes=}; shift ;;
    --no-crds) install_crds=0; shift ;;
    -h|--help) usage ;;
    *) die "unknown argument: $1 (see $0 --help)" ;;
  esac
done
case $command in
  up) [[ -n $nodes_file ]] || die "up needs --nodes FILE (a cluster file as tessera sim reads it)" ;;
  down | status) ;;
  *) die "unknown command: $command (expected up, down or status)" ;;
esac
if [[ $command == up ]]; then
  mkdir -p "$dir" || die "cannot create $dir"
elif [[ ! -d $dir ]]; then
  [[ $command == down || $command == status ]] && { say "no cluster in $dir"; exit 0; }
fi
dir=$(cd "$dir" && pwd)
pki=$dir/pki
logs=$dir/logs
pids=$dir/pids

# The pid of a running component, or nothing: the pid file must name a live process whose command
# line mentions DIR (so a recycled pid is never taken for ours).
live_pid() {
  local file=$pids/$1.pid pid
  [[ -f $file ]] || return 0
  pid=$(< "$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$dir/"; then
    echo "$pid"
  fi
}

stop_all() {
  local component pid waited any=0
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    component=${components[i]}
    pid=$(live_pid "$component")
    if [[ -z $pid ]]; then
      rm -f "$pids/$component.pid"
      continue
    fi
    any=1
    say "stopping $component (pid $pid)"
    kill -TERM "$pid" 2> /dev/null || true
    waited=0
    while kill -0 "$pid" 2> /dev/null && [[ $waited -lt $((grace_seconds * 10)) ]]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2> /dev/null; then
      say "$component (pid $pid) did not stop within ${grace_seconds}s; sending KILL"
      kill -KILL "$pid" 2> /dev/null || true
      sleep 0.2
    fi
    rm -f "$pids/$component.pid"
  done
  [[ $any == 1 ]] || say "nothing was running in $dir"
}

status() {
  local component pid
  for component in "${components[@]}"; do
    pid=$(live_pid "$component")
    printf '%-24s %s\n' "$component" "${pid:+running (pid $pid)}${pid:-stopped}"
  done
  [[ -f $dir/admin.kubeconfig ]] && echo "kubeconfig: $dir/admin.kubeconfig"
  return 0
}

case $command in
  down)
    stop_all
    say "stopped; data, certificates and logs are kept in $dir (remove it for a fresh cluster)"
    exit 0
    ;;
  status)
    status
    exit 0
    ;;
esac

# ---------------------------------------------------------------------------------------------
# up

for component in "${components[@]}"; do
  if [[ -n $(live_pid "$component") ]]; then
    die "$component is already running from $dir (pid $(live_pid "$component")); run: $0 down --dir $dir"
  fi
done
for tool in openssl curl base64 python3 setsid; do
  command -v "$tool" > /dev/null || die "$tool is needed but not installed"
done

tessera=${TESSERA:-$root/build/tessera}
[[ -x $tessera ]] || die "no tessera binary at $tessera (build it, or set TESSERA=/path/to/tessera)"

if [[ -n ${CONTROL_PLANE_BIN:-} ]]; then
  bin=$CONTROL_PLANE_BIN
else
  say "finding the control-plane binaries (scripts/build-control-plane.sh; the first build takes a while)"
  bin=$("$root/scripts/build-control-plane.sh" | tail -n 1) || die "scripts/build-control-plane.sh failed"
fi
for b in etcd kube-apiserver kube-controller-manager kubectl kwok; do
  [[ -x $bin/$b ]] || die "no $b in $bin"
done
kubectl=$bin/kubectl

mkdir -p "$pki" "$logs" "$pids"

# The nodes first: a bad cluster file should fail before anything starts.
if ! "$tessera" dev nodes --nodes "$nodes_file" --output yaml > "$dir/nodes.yaml.tmp" 2> "$dir/nodes.err"; then
  cat "$dir/nodes.err" >&2
  rm -f "$dir/nodes.yaml.tmp"
  die "tessera dev nodes --nodes $nodes_file failed"
fi
mv "$dir/nodes.yaml.tmp" "$dir/nodes.yaml"
rm -f "$dir/nodes.err"
node_count=$(grep -cE '^ *kind: "?Node"?$' "$dir/nodes.yaml" || true)

# --- certificates (kept across restarts) ---
openssl_quiet() {
  local out
  if ! out=$(openssl "$@" 2>&1); then
    echo "$out" >&2
    die "openssl $1 failed"
  fi
}

# client_cert NAME CN [O]
client_cert() {
  local name=$1 cn=$2 org=${3:-}
  [[ -f $pki/$name.crt ]] && return 0
  local subject="/CN=$cn"
  [[ -n $org ]] && subject="/O=$org/CN=$cn"
  openssl_quiet req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -out "$pki/$name.csr" -subj "$subject"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
    > "$pki/$name.ext"
  openssl_quiet x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt"
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

(
  umask 077
  if [[ ! -f $pki/ca.crt ]]; then
    say "making certificates in $pki"
    openssl_quiet req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 \
      -sha256 -subj "/CN=tessera-real-cluster-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  fi
  if [[ ! -f $pki/apiserver.crt ]]; then
    openssl_quiet req -new -newkey rsa:2048 -nodes -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" \
      -subj "/CN=kube-apiserver"
    {
      echo "basicConstraints=CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=serverAuth"
      echo "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    } > "$pki/apiserver.ext"
    openssl_quiet x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -sha256 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt"
    rm -f "$pki/apiserver.csr" "$pki/apiserver.ext"
  fi
  client_cert admin tessera-admin system:masters
  client_cert controller-manager system:kube-controller-manager
  # kwok acts for every fake kubelet (node status, leases, pod status, deletions).
  client_cert kwok kwok system:masters
  if [[ ! -f $pki/sa.key ]]; then
    openssl_quiet genrsa -out "$pki/sa.key" 2048
    openssl_quiet rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
  fi
)

# --- ports: etcd keeps its own across restarts (its member URLs live in its data) ---
free_ports() {
  python3 - "$1" << 'EOF'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
}
port_free() {
  python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2> /dev/null
}
read -r etcd_client_port etcd_peer_port apiserver_port kcm_port kwok_port < <(free_ports 5)
if [[ -f $dir/ports.env ]]; then
  # shellcheck disable=SC1091
  previous_client=$(sed -n 's/^etcd_client_port=//p' "$dir/ports.env")
  previous_peer=$(sed -n 's/^etcd_peer_port=//p' "$dir/ports.env")
  if [[ -n $previous_client && -n $previous_peer ]] && port_free "$previous_client" && port_free "$previous_peer"; then
    etcd_client_port=$previous_client
    etcd_peer_port=$previous_peer
  fi
fi
cat > "$dir/ports.env" << EOF
etcd_client_port=$etcd_client_port
etcd_peer_port=$etcd_peer_port
apiserver_port=$apiserver_port
kube_controller_manager_port=$kcm_port
kwok_port=$kwok_port
EOF
server=https://127.0.0.1:$apiserver_port

# kubeconfig FILE USER: client-certificate credentials, everything embedded.
write_kubeconfig() {
  local file=$1 user=$2
  (
    umask 077
    cat > "$file.tmp" << EOF
apiVersion: v1
kind: Config
clusters:
- name: real-cluster
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 < "$pki/$user.crt")
    client-key-data: $(base64 -w0 < "$pki/$user.key")
contexts:
- name: real-cluster
  context:
    cluster: real-cluster
    user: $user
    namespace: default
current-context: real-cluster
preferences: {}
EOF
    mv "$file.tmp" "$file"
  )
}
write_kubeconfig "$dir/admin.kubeconfig" admin
write_kubeconfig "$dir/controller-manager.kubeconfig" controller-manager
write_kubeconfig "$dir/kwok.kubeconfig" kwok

# --- processes ---
started=()
on_failure() {
  local status=$?
  if [[ $status -ne 0 && ${#started[@]} -gt 0 ]]; then
    say "up failed; stopping what it started (logs stay in $logs)"
    stop_all || true
  fi
}
trap on_failure EXIT

# start NAME COMMAND...: in a session of its own, so ^C in this terminal does not reach it.
start() {
  local name=$1
  shift
  local log=$logs/$name.log
  echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) real-cluster.sh up: $*" >> "$log"
  setsid "$@" >> "$log" 2>&1 < /dev/null &
  echo $! > "$pids/$name.pid"
  started+=("$name")
}

# still_running NAME: whether the process just started for NAME is alive. Not live_pid: until the
# forked shell has exec'd the component its command line is this script's, not the component's,
# which a busy machine makes last long enough for the first check to see (and stop with a false
# "exited while starting"). A dead child not yet reaped is a zombie, which counts as gone.
still_running() {
  local pid state
  pid=$(< "$pids/$1.pid")
  [[ -r /proc/$pid/stat ]] || return 1
  state=$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)
  [[ $state != Z ]]
}

# wait_for NAME DESCRIPTION COMMAND...: until COMMAND succeeds, the process dies, or the time is up.
wait_for() {
  local name=$1 what=$2
  shift 2
  local deadline=$((SECONDS + ready_timeout))
  until "$@" > /dev/null 2>&1; do
    if ! still_running "$name"; then
      tail -n 20 "$logs/$name.log" >&2
      die "$name exited while starting; read $logs/$name.log"
    fi
    if [[ $SECONDS -ge $deadline ]]; then
      tail -n 20 "$logs/$name.log" >&2
      die "$name: $what not within ${ready_timeout}s; read $logs/$name.log"
    fi
    sleep 0.5
  done
}

say "starting etcd on 127.0.0.1:$etcd_client_port"
start etcd "$bin/etcd" --name=real-cluster --data-dir="$dir/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_client_port" \
  --advertise-client-urls="http://127.0.0.1:$etcd_client_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="real-cluster=http://127.0.0.1:$etcd_peer_port" \
  --auto-compaction-retention=1 --quota-backend-bytes=8589934592
wait_for etcd "health" curl -fsS "http://127.0.0.1:$etcd_client_port/health"

say "starting kube-apiserver on $server"
# shellcheck disable=SC2086 # the extra flags are split on spaces on purpose
start kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$etcd_client_port" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$apiserver_port" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 \
  --endpoint-reconciler-type=none \
  --allow-privileged=true \
  --cert-dir="$pki/apiserver-generated" \
  --profiling=false ${KUBE_APISERVER_EXTRA_ARGS:-}
curl_admin() {
  curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$@"
}
wait_for kube-apiserver "/readyz" curl_admin "$server/readyz"

say "starting kube-controller-manager"
controllers=job-controller,replicaset-controller,deployment-controller,statefulset-controller,daemonset-controller
controllers+=,cronjob-controller,disruption-controller,garbage-collector-controller,namespace-controller
controllers+=,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller
controllers+=,pod-garbage-collector-controller,ttl-after-finished-controller,endpointslice-controller
controllers+=,resourcequota-controller,clusterrole-aggregation-controller
# Takes off the not-ready taint the API server puts on every new node once KWOK reports it Ready.
controllers+=,node-lifecycle-controller
start kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$dir/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$dir/controller-manager.kubeconfig" \
  --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$kcm_port" \
  --cert-dir="$pki/controller-manager-generated" \
  --controllers="$controllers" \
  --use-service-account-credentials=true \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --leader-elect=false --profiling=false
wait_for kube-controller-manager "/healthz" curl -fsSk "https://127.0.0.1:$kcm_port/healthz"

say "starting kwok"
start kwok "$bin/kwok" --kubeconfig="$dir/kwok.kubeconfig" \
  --config="$root/tools/control-plane/kwok/kwok.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --server-address="127.0.0.1:$kwok_port" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --node-ip=127.0.0.1
kwok_healthy() {
  curl -fsSk "https://127.0.0.1:$kwok_port/healthz" || curl -fsS "http://127.0.0.1:$kwok_port/healthz"
}
wait_for kwok "/healthz" kwok_healthy

k() { "$kubectl" --kubeconfig="$dir/admin.kubeconfig" "$@"; }

if [[ $install_crds == 1 ]]; then
  say "creating Tessera's CRDs (deploy/crds)"
  k apply --server-side --field-manager=real-cluster -f "$root/deploy/crds/" > "$logs/crds.log" 2>&1 ||
    { cat "$logs/crds.log" >&2; die "creating the CRDs in deploy/crds failed; see $logs/crds.log"; }
  k wait --for=condition=Established --timeout="${ready_timeout}s" -f "$root/deploy/crds/" >> "$logs/crds.log" 2>&1 ||
    { cat "$logs/crds.log" >&2; die "the CRDs in deploy/crds were not established; see $logs/crds.log"; }
fi

say "creating $node_count nodes from $nodes_file"
k apply --server-side --field-manager=real-cluster -f "$dir/nodes.yaml" > "$logs/nodes.log" 2>&1 ||
  { cat "$logs/nodes.log" >&2; die "creating the nodes failed; see $logs/nodes.log"; }
# Ready, and schedulable: the node lifecycle controller takes the not-ready taint off a few seconds
# after Ready, one node at a time, and until then a scheduler sees fewer nodes than the cluster has.
nodes_ready() {
  local ready
  ready=$(k get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  [[ $ready -ge $node_count ]] &&
    ! k get nodes -o jsonpath='{range .items[*]}{.spec.taints[*].key}{"\n"}{end}' |
      grep -qE 'node\.kubernetes\.io/(not-ready|unreachable)'
}
wait_for kwok "all $node_count nodes Ready and without the not-ready taint" nodes_ready
# Pods need their namespace's default service account (the ServiceAccount admission plugin).
wait_for kube-controller-manager "the default service account" k get serviceaccount default -n default

trap - EXIT
{
  for component in "${components[@]}"; do
    printf '  %-24s pid %-8s log %s\n' "$component" "$(live_pid "$component")" "$logs/$component.log"
  done
} >&2
say "up: $node_count nodes Ready; $server; stop with: $0 down --dir $dir"
echo "kubeconfig: $dir/admin.kubeconfig"
