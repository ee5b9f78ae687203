#!/usr/bin/env bash
# redis_bench.sh - the Redis module against the dedup Redis users run today.
#
# Usage: bench/redis_bench.sh MODULE_SO [REQUESTS] [EXTRA_MODULE_SO NAME]
#
# Throughput: one redis-server with the module, pinned to CPU 0 (taskset), and
# redis-benchmark pinned to CPU 1, 50 clients, REQUESTS requests per command (default
# 1000000) on random keys out of 10^7 (__rand_int__), without pipelining and with
# -P 16.  Commands: SET; `SET key 1 NX EX 3600` (the exact dedup users run today);
# BF.ADD, BF.EXISTS, BF.MADD of 10 items; ONCE.ADD on a count window (10^6 keys) and a
# time window (1 hour, the server's clock: the default, tagged, and the TLBF at level
# 2).  Every filter is created for 10^6 keys at 0.1% before the run.  Reported as requests/s and as a ratio to SET's in the same run.
#
# Memory: a fresh server per method, 10^6 distinct keys (redis-cli --pipe) into a
# 1-hour window at 0.1%: `SET k 1 NX EX 3600` against ONCE.ADD on a time window (the
# tagged window, the default; the TLBF at level 2 and 5; the timer filter; event times
# spread over the hour with AT, and for the tagged window and the TLBF also in a burst
# of the first 10 s), and BF.ADD (all time), as the growth of INFO used_memory from
# before the filter is created.  Servers run with --latency-tracking no: with it, each
# command's first call makes its latency histogram (about 24 KB), which is the server's
# statistics, not the keys' memory (it weighed 1.5% of the tagged window's growth).
#
# An EXTRA_MODULE_SO (another Bloom module, e.g. RedisBloom, built locally) with its
# NAME adds BF.ADD / BF.EXISTS / BF.MADD rows for it in the same run.
#
# Prints Markdown tables on stdout; progress on stderr.
set -euo pipefail

usage() {
  echo "usage: $0 MODULE_SO [REQUESTS] [EXTRA_MODULE_SO NAME]" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 4 ] || usage
module=$(realpath -- "$1")
requests=${2:-1000000}
extra=${3:+$(realpath -- "$3")}
extra_name=${4:-other}
[ -f "$module" ] || usage
ncpu=$(nproc)
server_cpu=0
client_cpu=$((ncpu > 1 ? 1 : 0))

work=$(mktemp -d "${TMPDIR:-/tmp}/once-redis-bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server MODULE_OR_EMPTY -> sets $port; the server is pinned to $server_cpu.
start_server() {
  local so=$1 dir
  port=$(free_port)
  dir="$work/$port"
  mkdir -p "$dir"
  local load=()
  [ -n "$so" ] && load=(--loadmodule "$so")
  taskset -c "$server_cpu" redis-server --port "$port" --bind 127.0.0.1 --save '' \
      --appendonly no --latency-tracking no --daemonize yes --dir "$dir" \
      --pidfile "$dir/pid" --logfile "$dir/log" "${load[@]}"
  for _ in $(seq 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.05
  done
  redis-cli -p "$port" ping >/dev/null
  pids+=("$(cat "$dir/pid")")
}

stop_server() {
  local pid=${pids[-1]}
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null && [ "$(awk '/^State:/{print $2}' /proc/$pid/status 2>/dev/null)" != Z ]; do
    sleep 0.05
  done
  unset 'pids[-1]'
}

cli() { redis-cli -p "$port" "$@" >/dev/null; }

# bench NAME PIPELINE COMMAND... -> requests/s
bench() {
  local pipeline=$1
  shift
  taskset -c "$client_cpu" redis-benchmark -p "$port" -c 50 -n "$requests" -r 10000000 \
      -P "$pipeline" --csv "$@" 2>/dev/null | awk -F'"' 'NR == 2 { print $4 }'
}

madd10() {
  local args=()
  for i in $(seq 10); do args+=("key:__rand_int__"); done
  echo "${args[@]}"
}

declare -A rps
rows=("SET" "SET NX EX 3600" "BF.ADD" "BF.EXISTS" "BF.MADD x10" "ONCE.ADD count window"
      "ONCE.ADD time window" "ONCE.ADD time window, tlbf")
run_set() { # run_set ROW-PREFIX PIPELINE: SET's baseline in this server run
  local prefix=$1 p=$2
  rps["${prefix}SET,$p"]=$(bench "$p" SET key:__rand_int__ 1)
  rps["${prefix}SET NX EX 3600,$p"]=$(bench "$p" SET key:__rand_int__ 1 NX EX 3600)
}

echo "throughput: once.so, $requests requests per command" >&2
start_server "$module"
cli BF.RESERVE bf 0.001 1000000
cli ONCE.RESERVE count WINDOW 1000000 ERROR 0.001
cli ONCE.RESERVE time SPAN 3600000 ERROR 0.001 CAPACITY 1000000
cli ONCE.RESERVE timel SPAN 3600000 ERROR 0.001 CAPACITY 1000000 FILTER tlbf LEVEL 2
for p in 1 16; do
  echo "  pipeline $p" >&2
  run_set "" "$p"
  rps["BF.ADD,$p"]=$(bench "$p" BF.ADD bf key:__rand_int__)
  rps["BF.EXISTS,$p"]=$(bench "$p" BF.EXISTS bf key:__rand_int__)
  # shellcheck disable=SC2046
  rps["BF.MADD x10,$p"]=$(bench "$p" BF.MADD bf $(madd10))
  rps["ONCE.ADD count window,$p"]=$(bench "$p" ONCE.ADD count key:__rand_int__)
  rps["ONCE.ADD time window,$p"]=$(bench "$p" ONCE.ADD time key:__rand_int__)
  rps["ONCE.ADD time window, tlbf,$p"]=$(bench "$p" ONCE.ADD timel key:__rand_int__)
done
stop_server

if [ -n "$extra" ]; then
  echo "throughput: $extra_name, $requests requests per command" >&2
  start_server "$extra"
  cli BF.RESERVE bf 0.001 1000000
  for p in 1 16; do
    run_set "$extra_name " "$p"
    rps["$extra_name BF.ADD,$p"]=$(bench "$p" BF.ADD bf key:__rand_int__)
    rps["$extra_name BF.EXISTS,$p"]=$(bench "$p" BF.EXISTS bf key:__rand_int__)
    # shellcheck disable=SC2046
    rps["$extra_name BF.MADD x10,$p"]=$(bench "$p" BF.MADD bf $(madd10))
  done
  stop_server
  rows+=("$extra_name SET" "$extra_name SET NX EX 3600" "$extra_name BF.ADD"
         "$extra_name BF.EXISTS" "$extra_name BF.MADD x10")
fi

echo "## Throughput (requests/s; ratio to SET in the same server run)"
echo
echo "| command | no pipeline | ratio | -P 16 | ratio |"
echo "|---|---:|---:|---:|---:|"
for row in "${rows[@]}"; do
  base="SET"
  if [ -n "$extra" ] && [[ $row == "$extra_name "* ]]; then base="$extra_name SET"; fi
  line="| $row |"
  for p in 1 16; do
    v=${rps["$row,$p"]}
    b=${rps["$base,$p"]}
    line+=" $(printf '%.0f' "$v") | $(awk -v v="$v" -v b="$b" 'BEGIN { printf "%.2f", v / b }') |"
  done
  echo "$line"
done
echo

# Memory: 10^6 distinct keys, each method on a fresh server.
keys=1000000
protocol() { # protocol COMMAND-PREFIX... : RESP for each key k0 .. k(keys-1) appended
  /usr/bin/python3 - "$keys" "$@" <<'EOF'
import sys
n = int(sys.argv[1])
words = [w.encode() for w in sys.argv[2:]]
out = sys.stdout.buffer
for i in range(n):
    args = list(words)
    key = b"event:%d" % i
    # The key goes where "{}" is, and where "{t}" is an event time: the keys arrive
    # evenly over the hour (3.6 ms apart), as 10^6 distinct keys in a 1-hour window do;
    # where "{b}" is, they arrive in the first 10 s (a burst).
    at = b"%d" % (1700000000000 + i * 36 // 10)
    burst = b"%d" % (1700000000000 + i * 10000 // n)
    args = [key if w == b"{}" else at if w == b"{t}" else burst if w == b"{b}" else w
            for w in args]
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
EOF
}

used_memory() { redis-cli -p "$port" info memory | awk -F: '/^used_memory:/ { print $2 + 0 }'; }

declare -A mem
measure() { # measure MODULE_SO NAME SETUP-COMMAND... -- COMMAND-PREFIX...
  local so=$1 name=$2
  shift 2
  local setup=()
  while [ "$1" != "--" ]; do setup+=("$1"); shift; done
  shift
  start_server "$so"
  local before after
  before=$(used_memory)
  [ ${#setup[@]} -gt 0 ] && cli "${setup[@]}"
  protocol "$@" | redis-cli -p "$port" --pipe >/dev/null
  after=$(used_memory)
  mem[$name]=$((after - before))
  stop_server
}
echo "memory: $keys distinct keys" >&2
measure "$module" "SET k 1 NX EX 3600" -- SET "{}" 1 NX EX 3600
window_rows=()
for times in t b; do
  for filter in tagged tlbf; do
    name="ONCE.ADD, 1-hour window at 0.1%, $filter"
    [ "$filter" = tlbf ] && name+=" level 2"
    [ "$times" = b ] && name+=", in 10 s"
    [ "$times" = t ] && [ "$filter" = tlbf ] && continue # below, with level 5
    measure "$module" "$name" ONCE.RESERVE w SPAN 3600000 ERROR 0.001 CAPACITY 1000000 \
        FILTER "$filter" -- ONCE.ADD w "{}" AT "{$times}"
    window_rows+=("$name")
  done
done
for level in 2 5; do
  for filter in tlbf timer; do
    [ "$filter" = timer ] && [ "$level" != 2 ] && continue
    name="ONCE.ADD, 1-hour window at 0.1%, $filter"
    args=(ONCE.RESERVE w SPAN 3600000 ERROR 0.001 CAPACITY 1000000 FILTER "$filter")
    if [ "$filter" = tlbf ]; then
      name+=" level $level"
      args+=(LEVEL "$level")
    fi
    measure "$module" "$name" "${args[@]}" -- ONCE.ADD w "{}" AT "{t}"
    window_rows+=("$name")
  done
done
measure "$module" "BF.ADD, all time at 0.1%" BF.RESERVE b 0.001 1000000 -- BF.ADD b "{}"
memory_rows=("SET k 1 NX EX 3600" "${window_rows[@]}" "BF.ADD, all time at 0.1%")
if [ -n "$extra" ]; then
  measure "$extra" "$extra_name BF.ADD, all time at 0.1%" BF.RESERVE b 0.001 1000000 -- \
      BF.ADD b "{}"
  memory_rows+=("$extra_name BF.ADD, all time at 0.1%")
fi

echo "## Memory for $keys distinct keys (growth of INFO used_memory)"
echo
echo "| method | bytes | bytes/key | SET NX EX / method |"
echo "|---|---:|---:|---:|"
base=${mem["SET k 1 NX EX 3600"]}
for name in "${memory_rows[@]}"; do
  v=${mem[$name]}
  echo "| $name | $v | $(awk -v v="$v" -v n="$keys" 'BEGIN { printf "%.1f", v / n }') | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.1fx", b / v }') |"
done
