#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and starts the catalog service on the
# embedded SQLite store (var/catalog.db in the checkout). Extra arguments go to wow-catalog
# (for example --listen 127.0.0.1:9090). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DWOW_BUILD_TESTS=OFF -DWOW_BUILD_BENCHMARKS=OFF
mkdir -p var
exec "${BUILD_DIR:-build}/bin/wow-catalog" --store sqlite:var/catalog.db "$@"
