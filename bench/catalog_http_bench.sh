#!/usr/bin/env bash
# Create-brand commands per second through HTTP (wrk) on a fresh SQLite file, and the same
# commands in process (catalog_load_bench), on this machine. docs/PERFORMANCE.md quotes the figures.
#
#   bash bench/catalog_http_bench.sh [BUILD_DIR] [CONNECTIONS] [SECONDS] [SYNCHRONOUS]
#
# Defaults: build, 64 connections, 10 s, full. The database lives under $WOW_BENCH_DIR (default
# /tmp) and is removed afterwards. Needs wrk (Debian package wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
connections=${2:-64}
seconds=${3:-10}
synchronous=${4:-full}
work=$(mktemp -d "${WOW_BENCH_DIR:-/tmp}/wow-catalog-http-XXXXXX")
service_pid=
cleanup() {
  if [[ -n $service_pid ]]; then kill "$service_pid" 2>/dev/null || true; wait "$service_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== $(nproc) cores, $(uname -r), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== HTTP: wrk -t2 -c$connections -d${seconds}s, synchronous=$synchronous"
"$build_dir/bin/wow-catalog" --db "$work/catalog.db" --listen 127.0.0.1:0 --log-level warn \
  --synchronous "$synchronous" --threads "$((connections + 8))" >"$work/out.txt" 2>"$work/err.txt" &
service_pid=$!
for _ in $(seq 100); do grep -q listening "$work/out.txt" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/out.txt")
wrk -t2 -c"$connections" -d"${seconds}s" --latency -s bench/catalog_create_brand.lua "$url"
curl -s "$url/metrics" | grep -E '^wow_catalog_(commands|appends)_total'
kill "$service_pid"; wait "$service_pid" || true; service_pid=

if [[ -x $build_dir/bin/catalog_load_bench ]]; then
  # The service runs the catalog's projection; so does the run it is compared with.
  echo "== In process: catalog_load_bench --threads $connections --seconds $seconds --projection"
  WOW_BENCH_DIR=$work "$build_dir/bin/catalog_load_bench" --threads "$connections" \
    --seconds "$seconds" --synchronous "$synchronous" --projection
fi
