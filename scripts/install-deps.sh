#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the benchmark need, if missing,
# and the npm packages of the JavaScript client tests (tests/module/node, pinned by its
# package-lock.json).
# Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make gcc clang libclang-rt-14-dev libxxhash-dev libbloom-dev libzstd-dev pkg-config jq
          groff-base libhiredis-dev redis-server redis-tools python3-redis python3-xxhash valgrind
          python3-dev python3-setuptools python3-pytest python3-numpy "$@")
# Node.js may come from elsewhere than Debian (a newer release); Debian's otherwise.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
install_npm_packages() {
  local dir=tests/module/node
  if [ ! -d "$dir/node_modules/redis" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "installing npm packages in $dir" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  install_npm_packages
  exit 0
fi

echo "installing Debian packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_npm_packages
