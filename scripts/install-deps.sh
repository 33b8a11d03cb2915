#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, when missing, and the MongoDB test server's npm
# packages. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libxxhash-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libicu-dev libcli11-dev libboost1.81-dev libmongoc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  curl wrk
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done

if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The MongoDB test server (a test double, tests/mongo_server) runs on Node.js with npm packages
# pinned in its package-lock.json: installed with `npm ci` when missing or older than the lockfile.
if ! command -v node >/dev/null; then
  echo "Installing: nodejs npm"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends nodejs npm
fi
mongo_server_dir="$(dirname "$0")/../tests/mongo_server"
if [[ ! -f "$mongo_server_dir/node_modules/.package-lock.json" ||
      "$mongo_server_dir/package-lock.json" -nt "$mongo_server_dir/node_modules/.package-lock.json" ]]; then
  echo "Installing the MongoDB test server's npm packages (npm ci in tests/mongo_server)"
  (cd "$mongo_server_dir" && npm ci --no-audit --no-fund)
fi
