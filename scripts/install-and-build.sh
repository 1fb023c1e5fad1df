#!/usr/bin/env bash
# Installs Tessera's build dependencies (Debian 12 packages only) and builds into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

# prometheus: the real Prometheus the idle-GPU end-to-end test scrapes GPU metrics with.
# chromium and npm: the browser the dashboard's test drives (tests/dashboard/), and the client that
# installs its pinned playwright-core.
packages=(build-essential cmake pkg-config nlohmann-json3-dev libyaml-cpp-dev libfmt-dev libcli11-dev libcsv-dev
          libcpp-httplib-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
          python3 python3-kubernetes prometheus chromium)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# npm comes with Debian's nodejs; a machine with another Node.js (and its npm) keeps it.
command -v npm > /dev/null || missing+=(npm)
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's kubectl (kubernetes-client) drives the Kubernetes tests. Where another package already
# owns /usr/bin/kubectl, the Debian package is unpacked into build/tools instead of replacing it.
if ! dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null | grep -q "install ok installed" &&
   [[ ! -x build/tools/kubernetes-client/usr/bin/kubectl ]]; then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  if ! dpkg-query -S /usr/bin/kubectl >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends kubernetes-client
  else
    mkdir -p build/tools
    (cd build/tools && apt-get download kubernetes-client 2>/dev/null &&
     dpkg-deb -x kubernetes-client_*.deb kubernetes-client && rm -f kubernetes-client_*.deb)
  fi
fi

# playwright-core, pinned by tests/dashboard/package-lock.json, into build/dashboard-test/ (the
# dashboard's browser test drives Debian's Chromium with it; no browser is downloaded). Where npm
# has no registry to reach, the test says it is skipped (and fails under CI=true).
mkdir -p build/dashboard-test
cp tests/dashboard/package.json tests/dashboard/package-lock.json build/dashboard-test/
if ! (cd build/dashboard-test && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error); then
  [[ ${CI:-} == true ]] && { echo "npm ci failed in build/dashboard-test (CI=true: the browser test must run)"; exit 1; }
  echo "playwright-core not installed: npm ci failed in build/dashboard-test; the dashboard's browser test will be skipped"
fi

build_started=$SECONDS
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTESSERA_WARNINGS_AS_ERRORS=ON
cmake --build build -j"$(nproc)"
echo "Built: build/tessera"
build_seconds=$((SECONDS - build_started))

# The real Kubernetes control plane the end-to-end tests run against too (etcd, kube-apiserver,
# kube-controller-manager, kwok: scripts/build-control-plane.sh), built from source through the Go
# module proxy into build/control-plane: about 8 minutes on two cores from an empty Go cache, seconds
# once built. It is left out, and the tests that need it say they are skipped, without Go, with
# TESSERA_CONTROL_PLANE=0, where the C++ build above took over TESSERA_SLOW_BUILD_SECONDS (default
# 1200: a machine that slow would need hours), or where it does not finish within
# TESSERA_CONTROL_PLANE_BUDGET seconds (default 1800; a later run goes on from the Go cache).
control_plane_note() { echo "Control plane not built: $*; the tests against it will be skipped"; }
# build_within SCRIPT BUDGET LABEL NOTE: runs a build script of scripts/ for at most BUDGET seconds;
# prints LABEL and where it built, or has the function NOTE say why it did not.
build_within() {
  local script=$1 budget=$2 label=$3 note=$4 result
  if result=$(timeout "$budget" bash "$script" | tail -n 1) && bash "$script" --built > /dev/null; then
    echo "$label: $result"
  else
    "$note" "$script failed or ran past $budget s"
  fi
}
if [[ ${TESSERA_CONTROL_PLANE:-1} == 0 ]]; then
  control_plane_note "TESSERA_CONTROL_PLANE=0"
elif ! command -v go > /dev/null && [[ ! -x /usr/local/go/bin/go ]]; then
  control_plane_note "no Go toolchain"
elif bin=$(bash scripts/build-control-plane.sh --built); then
  echo "Control plane: $bin"
elif ((build_seconds > ${TESSERA_SLOW_BUILD_SECONDS:-1200})); then
  control_plane_note "the C++ build took ${build_seconds} s, so this machine would need hours"
else
  build_within scripts/build-control-plane.sh "${TESSERA_CONTROL_PLANE_BUDGET:-1800}" "Control plane" control_plane_note
fi

# The controllers of the workloads users submit, JobSet, Kubeflow Trainer, LeaderWorkerSet, KubeRay
# and the Kubeflow Training Operator, with their CRDs (scripts/build-workload-controllers.sh), for the scenarios on the real control
# plane: minutes from an empty Go cache, seconds once built. Left out, and those scenarios say they
# are skipped, where the control plane is not built, with TESSERA_WORKLOAD_CONTROLLERS=0, or where the
# build does not finish within TESSERA_WORKLOAD_CONTROLLERS_BUDGET seconds (default 2400: five controllers from an empty Go cache).
controllers_note() {
  echo "Workload controllers not built: $*; the scenarios that run them (jobset, trainjob, ...) will be skipped"
}
if [[ ${TESSERA_WORKLOAD_CONTROLLERS:-1} == 0 ]]; then
  controllers_note "TESSERA_WORKLOAD_CONTROLLERS=0"
elif ! bash scripts/build-control-plane.sh --built > /dev/null 2>&1; then
  controllers_note "the control plane they run on is not built"
else
  build_within scripts/build-workload-controllers.sh "${TESSERA_WORKLOAD_CONTROLLERS_BUDGET:-2400}" \
    "Workload controllers" controllers_note
fi
