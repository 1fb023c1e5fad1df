#!/usr/bin/env bash
# Installs Tessera's build dependencies (Debian 12 packages only) and builds into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake nlohmann-json3-dev libyaml-cpp-dev libfmt-dev libcli11-dev libcsv-dev
          libgtest-dev libgmock-dev libbenchmark-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTESSERA_WARNINGS_AS_ERRORS=ON
cmake --build build -j"$(nproc)"
echo "Built: build/tessera"
