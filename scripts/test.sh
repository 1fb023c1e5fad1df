#!/usr/bin/env bash
# Runs every test (unit, property, parser fuzz, CLI end to end) of an existing build.
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j"$(nproc)"
