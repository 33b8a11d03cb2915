#!/usr/bin/env bash
# Two builds of the catalog service compared in the same minutes: rounds of, for each build in
# turn, create-brand commands through HTTP (wrk) and then in process (catalog_load_bench), each on a
# fresh SQLite file. This machine's speed drifts, so a ratio is read within one round.
# docs/SERVICE.md quotes the figures.
#
#   bash bench/catalog_ab_bench.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Defaults: 3 rounds, 10 s, 64 connections (and as many threads in process), synchronous=full.
# Each build directory needs bin/wow-catalog and bin/catalog_load_bench; wrk (Debian package wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rounds=${3:-3}
seconds=${4:-10}
connections=${5:-64}
work=$(mktemp -d "${WOW_BENCH_DIR:-/tmp}/wow-catalog-ab-XXXXXX")
service_pid=
cleanup() {
  if [[ -n $service_pid ]]; then kill "$service_pid" 2>/dev/null || true; wait "$service_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== $(nproc) cores, $(uname -r), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for side in old new; do
    build=${!side}
    rm -rf "$work/db" && mkdir -p "$work/db"
    echo "== round $round, $side ($build): HTTP, wrk -t2 -c$connections -d${seconds}s"
    "$build/bin/wow-catalog" --db "$work/db/catalog.db" --listen 127.0.0.1:0 --log-level warn \
      --threads "$((connections + 8))" >"$work/out.txt" 2>"$work/err.txt" &
    service_pid=$!
    for _ in $(seq 100); do grep -q listening "$work/out.txt" && break; sleep 0.1; done
    url=$(grep -o 'http://[^ ]*' "$work/out.txt")
    wrk -t2 -c"$connections" -d"${seconds}s" --latency -s bench/catalog_create_brand.lua "$url" |
      grep -E 'Requests/sec|latency p'
    kill "$service_pid"; wait "$service_pid" || true; service_pid=
    echo "== round $round, $side: in process, $connections threads, ${seconds} s"
    WOW_BENCH_DIR=$work "$build/bin/catalog_load_bench" --threads "$connections" --seconds "$seconds"
  done
done
