#!/usr/bin/env bash
# Runs its arguments (a command of the MongoDB test server's Node.js tests) when Node.js and the
# server's npm packages are installed; otherwise prints why and exits 77, which ctest reports as
# skipped. scripts/install-deps.sh installs both.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null; then
  echo "skipped: Node.js is not installed (run scripts/install-deps.sh)"
  exit 77
fi
if [[ ! -d node_modules/bson || ! -d node_modules/mingo || ! -d node_modules/mongodb ]]; then
  echo "skipped: the MongoDB test server's npm packages are not installed in tests/mongo_server/node_modules (run scripts/install-deps.sh)"
  exit 77
fi
exec "$@"
