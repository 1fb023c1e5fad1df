#!/usr/bin/env bash
# Builds a real Kubernetes control plane from source through the Go module proxy: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok, at the versions
# pinned by the go.mod/go.sum files under tools/control-plane/.
#
#   scripts/build-control-plane.sh            build if needed; the last line of stdout is the bin dir
#   scripts/build-control-plane.sh --key      print the cache key only
#   scripts/build-control-plane.sh --built    print the bin dir and exit 0 if it is built, else exit 1
#
# The binaries go to build/control-plane/<key>/bin, where <key> hashes the go.mod/go.sum files, the Go
# version and the build recipe below; when they are all there already nothing is built. Progress goes
# to stderr, the build logs to build/control-plane/<key>/logs/. Go builds run under `nice -n 19`.
# Environment: GO (the go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$root/tools/control-plane
cache=$root/build/control-plane

# Bump when the way the binaries are built changes, so old cache entries are not reused.
recipe="v1 CGO_ENABLED=0 -trimpath -ldflags=-s -w +k8s version stamp"

name=build-control-plane
# shellcheck source=scripts/go-cache-lib.sh
source "$root/scripts/go-cache-lib.sh"
find_go

modules=(kubernetes etcd kwok)
for m in "${modules[@]}"; do
  [[ -f $src/$m/go.mod && -f $src/$m/go.sum ]] || die "missing $src/$m/go.mod or go.sum"
done

key=$({
  echo "$recipe"
  echo "$go_version $go_os/$go_arch"
  for m in "${modules[@]}"; do
    for f in go.mod go.sum; do
      echo "== $m/$f"
      cat "$src/$m/$f"
    done
  done
} | sha256sum | cut -c1-16)

if [[ ${1:-} == --key ]]; then
  echo "$key"
  exit 0
fi
[[ $# -eq 0 || $1 == --built ]] || die "unknown argument: $1 (usage: $0 [--key | --built])"

out=$cache/$key
bin=$out/bin
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

complete() {
  local b
  for b in "${binaries[@]}"; do [[ -x $bin/$b ]] || return 1; done
}

take_cache_entry "$out" "$bin" "${1:-}"

# The version the kubernetes module pins, for the version stamp `kubectl version` and /version show.
k8s_version=$(cd "$src/kubernetes" && GOFLAGS=-mod=readonly "$GO" list -m -f '{{.Version}}' k8s.io/kubernetes) ||
  die "cannot read the k8s.io/kubernetes version from $src/kubernetes/go.mod"
[[ -n $k8s_version ]] || die "no k8s.io/kubernetes requirement in $src/kubernetes/go.mod"
k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
  stamp+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

rm -f "$out/logs/"*.log
tmp=$out/bin.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -mod=readonly -buildvcs=false"

# build MODULE LDFLAGS -o OUTPUT PACKAGE...
build() {
  local module=$1 ldflags=$2
  shift 2
  local log=$out/logs/$module.log
  local started=$SECONDS
  echo "build-control-plane: building ${*: -1} ($go_version; log: $log)" >&2
  echo "=== go build -ldflags='$ldflags' $*" >> "$log"
  if ! (cd "$src/$module" && nice -n 19 "$GO" build -ldflags="$ldflags" "$@") >> "$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "building $module failed; see $log"
  fi
  echo "build-control-plane: built ${*: -1} in $((SECONDS - started))s" >&2
}

total_started=$SECONDS
# What a cluster needs first comes first (kube-scheduler only serves comparisons); the packages the
# kubernetes builds share are compiled once (Go's build cache).
build etcd "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
build kubernetes "-s -w$stamp" -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
build kwok "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok
build kubernetes "-s -w$stamp" -o "$tmp/" k8s.io/kubernetes/cmd/kube-scheduler

for b in "${binaries[@]}"; do [[ -x $tmp/$b ]] || die "the build did not produce $b"; done
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
{
  echo "key: $key"
  echo "go: $go_version"
  for pair in kubernetes:k8s.io/kubernetes etcd:go.etcd.io/etcd/server/v3 kwok:sigs.k8s.io/kwok; do
    (cd "$src/${pair%%:*}" && GOFLAGS=-mod=readonly "$GO" list -m "${pair#*:}")
  done
} > "$out/versions.txt"
echo "build-control-plane: built in $((SECONDS - total_started))s: $(du -sh "$bin" | cut -f1) in $bin" >&2
echo "$bin"
