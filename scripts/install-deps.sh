#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the benchmark need, if missing.
# Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail

packages=(cmake make gcc clang libclang-rt-14-dev libxxhash-dev libbloom-dev libzstd-dev pkg-config jq
          groff-base redis-server redis-tools python3-redis "$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
