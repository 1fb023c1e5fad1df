#!/usr/bin/env bash
set -euo pipefail
"$TESSERA" --help >/dev/null
