#!/usr/bin/env bash
# Two builds of the catalog service compared in the same minutes: rounds of, for each build in
# turn, bench/catalog_http_bench.sh (create-brand commands through HTTP with wrk, then in process
# with catalog_load_bench, each on a fresh SQLite file, synchronous=full). This machine's speed
# drifts, so a ratio is read within one round. docs/PERFORMANCE.md quotes the figures.
#
#   bash bench/catalog_ab_bench.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Defaults: 3 rounds, 10 s, 64 connections (and as many threads in process). Each build directory
# needs bin/wow-catalog and bin/catalog_load_bench; wrk (Debian package wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rounds=${3:-3}
seconds=${4:-10}
connections=${5:-64}
for round in $(seq "$rounds"); do
  for side in old new; do
    echo "==== round $round, $side: ${!side}"
    bash bench/catalog_http_bench.sh "${!side}" "$connections" "$seconds" full
  done
done
