#!/usr/bin/env bash
# Builds the controllers of the workloads users submit — JobSet (sigs.k8s.io/jobset), Kubeflow
# Trainer v2 (github.com/kubeflow/trainer/v2), LeaderWorkerSet (sigs.k8s.io/lws), KubeRay
# (github.com/ray-project/kuberay/ray-operator) and the Kubeflow Training Operator
# (github.com/kubeflow/training-operator, for PyTorchJob) — from source through the Go module proxy,
# at the versions pinned by tools/workload-controllers/*/go.mod and go.sum, and copies their CRDs
# (crds/<controller>/) and the JobSet and LeaderWorkerSet webhook configurations out of the same
# modules, for the end-to-end tests on a real control plane.
#
#   scripts/build-workload-controllers.sh            build if needed; the last line of stdout is the dir
#   scripts/build-workload-controllers.sh --built    print the dir and exit 0 if it is built, else exit 1
#
# The result goes to build/workload-controllers/<key>/ (bin/, crds/, webhooks/, versions.txt), <key>
# hashing the go.mod/go.sum files, the Go version and the recipe below; when it is all there nothing is
# built. Progress goes to stderr, build logs to <key>/logs/. Go builds run under `nice -n 19`.
# Environment: GO (the go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=build-workload-controllers
# shellcheck source=scripts/go-cache-lib.sh
source "$root/scripts/go-cache-lib.sh"
find_go

src=$root/tools/workload-controllers
# Bump when the way the binaries are built changes, so old cache entries are not reused.
recipe="v2 CGO_ENABLED=0 -trimpath -ldflags=-s -w crds/<controller>/"

# module folder, Go module, main package, binary name
controllers=(
  "jobset sigs.k8s.io/jobset sigs.k8s.io/jobset jobset-controller"
  "trainer github.com/kubeflow/trainer/v2 github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager trainer-controller-manager"
  "lws sigs.k8s.io/lws sigs.k8s.io/lws/cmd lws-controller"
  "kuberay github.com/ray-project/kuberay/ray-operator github.com/ray-project/kuberay/ray-operator ray-operator"
  "training-operator github.com/kubeflow/training-operator github.com/kubeflow/training-operator/cmd/training-operator.v1 training-operator"
)
for entry in "${controllers[@]}"; do
  read -r folder _ _ _ <<< "$entry"
  [[ -f $src/$folder/go.mod && -f $src/$folder/go.sum ]] || die "missing $src/$folder/go.mod or go.sum"
done

[[ $# -eq 0 || $1 == --built ]] || die "unknown argument: $1 (usage: $0 [--built])"
key=$({
  echo "$recipe"
  echo "$go_version $go_os/$go_arch"
  for entry in "${controllers[@]}"; do
    read -r folder _ _ _ <<< "$entry"
    cat "$src/$folder/go.mod" "$src/$folder/go.sum"
  done
} | sha256sum | cut -c1-16)
out=$root/build/workload-controllers/$key

complete() { [[ -f $out/versions.txt ]]; }

take_cache_entry "$out" "$out" "${1:-}"

tmp=$out/tmp.$$
rm -rf "$tmp" "$out/logs/"*.log
mkdir -p "$tmp/bin" "$tmp/crds" "$tmp/webhooks"
trap 'rm -rf "$tmp"' EXIT
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -mod=readonly -buildvcs=false"

total_started=$SECONDS
for entry in "${controllers[@]}"; do
  read -r folder module package binary <<< "$entry"
  log=$out/logs/$folder.log
  started=$SECONDS
  echo "build-workload-controllers: building $package ($go_version; log: $log)" >&2
  if ! (cd "$src/$folder" && nice -n 19 "$GO" build -ldflags="-s -w" -o "$tmp/bin/$binary" "$package") >> "$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "building $package failed; see $log"
  fi
  echo "build-workload-controllers: built $binary in $((SECONDS - started))s" >&2
  # The module's own files: `go mod download -json` names its folder in the module cache.
  dir=$(cd "$src/$folder" && "$GO" mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -d $dir ]] || die "go mod download -json $module gave no module folder"
  (cd "$src/$folder" && "$GO" list -m "$module") >> "$tmp/versions.txt"
  crds=$tmp/crds/$folder
  mkdir -p "$crds"
  case $folder in
    jobset)
      cp "$dir/config/components/crd/bases/"*.yaml "$crds/"
      cp "$dir/config/components/webhook/manifests.yaml" "$tmp/webhooks/jobset.yaml"
      ;;
    trainer) cp "$dir/manifests/base/crds/trainer.kubeflow.org_"*.yaml "$crds/" ;;
    lws)
      cp "$dir/config/crd/bases/"*.yaml "$crds/"
      cp "$dir/config/webhook/manifests.yaml" "$tmp/webhooks/lws.yaml"
      ;;
    # KubeRay's webhook only validates RayClusters, and is off unless ENABLE_WEBHOOKS=true.
    kuberay) cp "$dir/config/crd/bases/ray.io_"*.yaml "$crds/" ;;
    # PyTorchJob's only: the operator runs with --enable-scheme=pytorchjob.
    training-operator) cp "$dir/manifests/base/crds/kubeflow.org_pytorchjobs.yaml" "$crds/" ;;
  esac
done
chmod -R u+w "$tmp"
rm -rf "$out/bin" "$out/crds" "$out/webhooks"
mv "$tmp/bin" "$tmp/crds" "$tmp/webhooks" "$out/"
mv "$tmp/versions.txt" "$out/versions.txt"
echo "build-workload-controllers: built in $((SECONDS - total_started))s: $(du -sh "$out/bin" | cut -f1) in $out" >&2
echo "$out"
