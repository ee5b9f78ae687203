#!/usr/bin/env bash
# Start Debian's redis-server with the module on a free loopback port, in its own
# directory, and print how to reach and stop it.
# Usage: scripts/run-redis.sh BUILD_DIR [NAME VALUE ...]   (module settings, see docs/REDIS.md)
set -euo pipefail
build=${1:?usage: scripts/run-redis.sh BUILD_DIR [NAME VALUE ...]}
shift
module=$(cd "$build/module" && pwd)/once.so
[ -x "$module" ] || { echo "run-redis: no $module: build first" >&2; exit 1; }
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dir=$(mktemp -d "${TMPDIR:-/tmp}/once-redis.XXXXXX")
redis-server --port "$port" --bind 127.0.0.1 --save '' --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
    --loadmodule "$module" "$@"
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
  echo "run-redis: the server did not start; its log:" >&2
  cat "$dir/redis.log" >&2
  exit 1
fi
echo "redis-server with once.so on 127.0.0.1:$port (directory $dir)"
echo "  connect:  redis-cli -p $port"
echo "  try:      redis-cli -p $port ONCE.RESERVE clicks SPAN 3600000"
echo "            redis-cli -p $port ONCE.ADD clicks event-42"
echo "  stop:     kill \$(cat $dir/redis.pid)"
