#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, when missing. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libxxhash-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libicu-dev libcli11-dev libcpp-httplib-dev libmongoc-dev
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
