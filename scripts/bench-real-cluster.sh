#!/usr/bin/env bash
# Pods bound per second on a real control plane, Tessera beside the upstream kube-scheduler:
# starts scripts/real-cluster.sh with NODES fake KWOK nodes of 8 GPUs, then runs
# `tessera bench bind --kubeconfig ... --kube-scheduler ...` (PODS one-GPU pods for each
# scheduler in turn, on the same server), and stops the cluster.
#
#   scripts/bench-real-cluster.sh [--nodes 1000] [--pods 5000] [--json FILE] [--keep]
#
# --keep leaves the cluster running (build/bench-real-cluster-NODES; stop it with
# scripts/real-cluster.sh down --dir DIR). Environment: TESSERA (default build/tessera).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodes=1000
pods=5000
json=""
keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) nodes=${2:?--nodes needs a value}; shift 2 ;;
    --pods) pods=${2:?--pods needs a value}; shift 2 ;;
    --json) json=${2:?--json needs a value}; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "bench-real-cluster: error: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "bench-real-cluster: error: --nodes: a positive integer, not '$nodes'" >&2; exit 2; }
[[ $pods =~ ^[1-9][0-9]*$ ]] || { echo "bench-real-cluster: error: --pods: a positive integer, not '$pods'" >&2; exit 2; }
tessera=${TESSERA:-$root/build/tessera}
[[ -x $tessera ]] || { echo "bench-real-cluster: error: no tessera binary at $tessera" >&2; exit 1; }

bin=$("$root/scripts/build-control-plane.sh" | tail -n 1)
dir=$root/build/bench-real-cluster-$nodes
mkdir -p "$dir"
cat > "$dir/cluster.yaml" << YAML
cluster:
  nodes:
    - name: node
      count: $nodes
      cpu: 96
      memory: 768Gi
      gpus: 8
      gpu_model: A100
      gpu_memory: 80Gi
YAML
"$root/scripts/real-cluster.sh" down --dir "$dir/cluster" > /dev/null 2>&1 || true
kubeconfig=$(CONTROL_PLANE_BIN=$bin READY_TIMEOUT=600 "$root/scripts/real-cluster.sh" up --nodes "$dir/cluster.yaml" \
  --dir "$dir/cluster" | sed -n 's/^kubeconfig: //p')
[[ $keep == 1 ]] || trap '"$root/scripts/real-cluster.sh" down --dir "$dir/cluster" > /dev/null 2>&1' EXIT
"$tessera" bench bind --kubeconfig "$kubeconfig" --kube-scheduler "$bin/kube-scheduler" --pods "$pods" \
  ${json:+--json "$json"}
