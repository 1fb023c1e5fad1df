#!/usr/bin/env bash
# Installs Tessera's build dependencies (Debian 12 packages only) and builds into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config nlohmann-json3-dev libyaml-cpp-dev libfmt-dev libcli11-dev libcsv-dev
          libcpp-httplib-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
          python3 python3-kubernetes)
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

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTESSERA_WARNINGS_AS_ERRORS=ON
cmake --build build -j"$(nproc)"
echo "Built: build/tessera"
