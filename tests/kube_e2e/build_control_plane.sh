#!/usr/bin/env bash
# The fixture of the tests against a real control plane. Where it is built already
# (build/control-plane/, or CONTROL_PLANE_BIN) there is nothing to do. Otherwise it is built from
# source here (scripts/build-control-plane.sh) only with TESSERA_REAL_CLUSTER=1: from an empty Go
# cache that takes longer than the rest of the build and tests together on two cores. Without it, or
# without a Go toolchain, this and the tests that need it exit 77 (skipped) saying why.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -n ${CONTROL_PLANE_BIN:-} ]]; then
  echo "using the control plane in $CONTROL_PLANE_BIN"
  exit 0
fi
if ! command -v "${GO:-go}" > /dev/null && [[ ! -x /usr/local/go/bin/go ]]; then
  echo "SKIP: no Go toolchain (go on PATH, GO or /usr/local/go/bin/go) to build the real control plane with"
  exit 77
fi
if bin=$(bash "$root/scripts/build-control-plane.sh" --built); then
  echo "control plane: $bin"
elif [[ ${TESSERA_REAL_CLUSTER:-} == 1 ]]; then
  bin=$(bash "$root/scripts/build-control-plane.sh" | tail -n 1)
  echo "control plane built: $bin"
else
  echo "SKIP: the real control plane is not built; run scripts/build-control-plane.sh, or the tests with" \
    "TESSERA_REAL_CLUSTER=1 to build it first"
  exit 77
fi
cat "$(dirname "$bin")/versions.txt"
