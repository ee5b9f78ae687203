#!/usr/bin/env bash
# cli_bench.sh - the `once` command against the usual shell idioms for dropping repeated
# lines: awk '!seen[$0]++' (exact, but holds every distinct line in a hash table) and
# sort -u (exact, holds or spills everything, and loses the input order).
#
# Usage: bench/cli_bench.sh ONCE_BINARY [LINES]
#
# Builds, in a temporary directory removed on exit,
#   unique.txt  LINES distinct 40-byte lines (39 characters + newline) in scrambled order;
#   dup50.txt   LINES lines of which half repeat an earlier line: LINES/2 distinct lines,
#               then the same lines again in a different order, so a repeat is far from
#               its first occurrence (as in a real stream) and never cache-hot;
#   long.txt    one line of 300 MB, read from the file and through a pipe (`cat | once`):
#               the reader's cost must not depend on how the bytes arrive;
# then times each command with /usr/bin/time (wall seconds and peak resident set) and
# prints Markdown tables on stdout.  Progress goes to stderr.
#
# Every command runs under LC_ALL=C: sort -u is then a byte comparison (its fastest
# mode, and the same byte-exact notion of "same line" that once and awk use), and no
# tool pays for locale-aware collation.  The inputs were just written, so all commands
# read them from the page cache.
set -euo pipefail

usage() {
  echo "usage: $0 ONCE_BINARY [LINES]   (LINES defaults to 10000000)" >&2
  exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  usage
fi
lines=${2:-10000000}
case $lines in
  '' | *[!0-9]*) usage ;;
esac
[ "$lines" -ge 2 ] || { echo "$0: LINES must be at least 2" >&2; exit 2; }

# The binary by absolute path, because the commands run inside the temporary directory.
if [[ $1 == */* ]]; then
  once_bin=$(realpath -- "$1")
else
  once_bin=$(command -v -- "$1" || true)
fi
if [ -z "$once_bin" ] || [ ! -x "$once_bin" ]; then
  echo "$0: '$1' is not an executable (build the once CLI first: make build)" >&2
  exit 2
fi

# GNU time, not the shell keyword: only it reports peak RSS (%M).
if [ ! -x /usr/bin/time ]; then
  echo "$0: /usr/bin/time missing; installing Debian's 'time' package" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends time \
    >/dev/null
fi

export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/once-cli-bench.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd "$work"

# Line text for key k: a scrambled 10-digit prefix (so sort and the hash tables see
# varied leading bytes), then the key itself, which keeps distinct keys distinct.
# Keys are visited in the order k = (i * a) mod m, a permutation of 0..m-1 whenever the
# prime multiplier a does not divide m; all products stay below 2^53, exact in awk's
# doubles, up to m of about 10^11.
generator='
function mult(m, avoid) {
  if (m % 48271 != 0 && avoid != 48271) return 48271
  if (m % 65537 != 0 && avoid != 65537) return 65537
  if (m % 69493 != 0) return 69493
  print "no multiplier for " m > "/dev/stderr"; exit 1
}
function emit(k) { printf "%010d:%028d\n", (k * 48271) % 2147483647, k }
BEGIN {
  if (dup) {
    m = int(n / 2); a = mult(m, 0); b = mult(m, a)
    for (i = 0; i < m; i++) emit((i * a) % m)
    for (i = 0; i < n - m; i++) emit((i * b + 1) % m)
  } else {
    a = mult(n, 0)
    for (i = 0; i < n; i++) emit((i * a) % n)
  }
}'
echo "generating $lines lines of 40 bytes in $work" >&2
awk -v n="$lines" -v dup=0 "$generator" > unique.txt
awk -v n="$lines" -v dup=1 "$generator" > dup50.txt

distinct_dup=$((lines / 2))
rows=()
sep=$'\x1f' # between the fields of a row: commands may hold '|'
declare -A seconds_of rss_of

# measure LABEL INPUT_LINES COMMAND: run COMMAND (a shell command line, shown verbatim
# in the table) under /usr/bin/time and record seconds and peak RSS.
measure() {
  local label=$1 input=$2 command=$3
  echo "running: $command" >&2
  if ! /usr/bin/time -f '%e %M' -o time.out bash -c "$command" 2> stderr.out; then
    echo "$0: command failed: $command" >&2
    cat stderr.out time.out >&2
    exit 1
  fi
  local seconds rss_kb
  read -r seconds rss_kb < <(tail -n 1 time.out)
  rows+=("$label$sep$input$sep${command//$once_bin/once}$sep$seconds$sep$rss_kb")
  seconds_of[$label]=$seconds
  rss_of[$label]=$rss_kb
}

measure once "$lines distinct" "$once_bin --capacity $lines --error 0.001 unique.txt > /dev/null"
measure awk "$lines distinct" "awk '!seen[\$0]++' unique.txt > /dev/null"
measure sort "$lines distinct" "sort -u unique.txt > /dev/null"
measure once_dup "$lines, 50% repeats" \
  "$once_bin --capacity $lines --error 0.001 dup50.txt > /dev/null"
# The default without --capacity: a scalable filter from 10^6 keys, grown as needed.
measure once_scalable "$lines distinct" "$once_bin --error 0.001 unique.txt > /dev/null"
# Counting instead of filtering.
measure once_card "$lines, 50% repeats" "$once_bin card dup50.txt > /dev/null"
# Windows: the last 10^6 delivered lines (APBF, level 2), and the last hour on the clock.
measure once_window "$lines, 50% repeats" \
  "$once_bin --window 1000000 --error 0.001 dup50.txt > /dev/null"
measure once_span "$lines, 50% repeats" \
  "$once_bin --span 1h --capacity $lines --error 0.001 dup50.txt > /dev/null"

awk_version=$(awk -W version 2>/dev/null | head -n 1 || true)
[ -n "$awk_version" ] || awk_version=$(awk --version 2>/dev/null | head -n 1 || echo unknown)
sort_version=$(sort --version 2>/dev/null | head -n 1 || echo unknown)
cpu=$(grep -m 1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*: //' || true)

# print_rows AMOUNT FORMAT: one table row per measured run of "${rows[@]}", with the rate
# AMOUNT / seconds / 10^6 (lines or bytes) in printf FORMAT.
print_rows() {
  local row _ input command seconds rss_kb
  for row in "${rows[@]}"; do
    IFS=$sep read -r _ input command seconds rss_kb <<< "$row"
    # Through the environment, not -v, so awk does not interpret backslashes in commands.
    CMD=$command INPUT=$input awk -v amount="$1" -v format="$2" -v s="$seconds" -v kb="$rss_kb" \
      'BEGIN {
         rate = s > 0 ? sprintf(format, amount / s / 1e6) : "n/a"
         cmd = ENVIRON["CMD"]
         gsub(/\|/, "\\|", cmd) # a pipe inside a table cell
         printf "| `%s` | %s | %.2f | %s | %.1f |\n", cmd, ENVIRON["INPUT"], s, rate, kb / 1024
       }'
  done
}

echo "## once CLI: $lines lines of 40 bytes"
echo
echo "Host: ${cpu:-unknown cpu}, $(nproc) cpus, $(uname -sr).  awk: $(readlink -f "$(command -v awk)") ($awk_version);"
echo "sort: $sort_version.  All commands under \`LC_ALL=C\`, run in the input's directory,"
echo "inputs in the page cache; times by \`/usr/bin/time -f '%e %M'\` (wall seconds, peak RSS)."
echo "The 50% file holds $distinct_dup distinct lines, each twice, repeats far apart."
echo
echo "| command | input lines | seconds | lines/s | peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|"
print_rows "$lines" "%.2fM"
echo
echo "| once vs awk, distinct lines (above 1 favours once) | ratio |"
echo "|---|---:|"
awk -v os="${seconds_of[once]}" -v as="${seconds_of[awk]}" \
  -v orss="${rss_of[once]}" -v arss="${rss_of[awk]}" \
  'BEGIN {
     printf "| speed: awk seconds / once seconds | %s |\n", (os > 0 ? sprintf("%.2fx", as / os) : "n/a")
     printf "| memory: awk peak RSS / once peak RSS | %s |\n", (orss > 0 ? sprintf("%.2fx", arss / orss) : "n/a")
   }'

# Threads: the same filters with --threads T (the same output for every T: the filter in
# 16 shards), T = 1, 2 and the powers of two up to the cpus, and without --threads (the
# filter in one piece), beside `wc -l` (reading and splitting alone: the floor).  Each
# speed-up is over --threads 1 of the same filter, in this run.
rows=()
measure wc "$lines, 50% repeats" "wc -l dup50.txt > /dev/null"
thread_counts=(1 2)
for ((t = 4; t <= $(nproc); t *= 2)); do thread_counts+=("$t"); done
declare -A thread_filter=(
  [blocked]="--capacity $lines --error 0.001"
  [scalable]="--error 0.001"
  [span]="--span 1h --capacity $lines --error 0.001"
)
for f in blocked scalable span; do
  # Without --threads the filter is one piece; with it, 16 shards whatever T.
  measure "threads_${f}_none" "$lines, 50% repeats" \
    "$once_bin ${thread_filter[$f]} dup50.txt > /dev/null"
  for t in "${thread_counts[@]}"; do
    measure "threads_${f}_$t" "$lines, 50% repeats" \
      "$once_bin ${thread_filter[$f]} --threads $t dup50.txt > /dev/null"
  done
done
echo
echo "### once CLI on threads: $lines lines of 40 bytes, 50% repeats"
echo
echo "| command | input lines | seconds | lines/s | peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|"
print_rows "$lines" "%.2fM"
echo
echo "| filter: speed-up over --threads 1 | no --threads (one piece) |$(printf -- ' --threads %s |' "${thread_counts[@]}")"
echo "|---|---:|$(printf -- '---:|%.0s' "${thread_counts[@]}")"
for f in blocked scalable span; do
  line="| $f |"
  for t in none "${thread_counts[@]}"; do
    line+=$(awk -v one="${seconds_of[threads_${f}_1]}" -v s="${seconds_of[threads_${f}_$t]}" \
      'BEGIN { printf " %s |", (s > 0 ? sprintf("%.2fx", one / s) : "n/a") }')
  done
  echo "$line"
done

# One line of 300 MB, from the file and through a pipe, which hands it over in reads of
# at most 64 KiB.  Its own table: lines/s means nothing for one line.
long_bytes=300000000
echo "generating one line of $long_bytes bytes" >&2
{ head -c "$long_bytes" /dev/zero | tr '\0' x; echo; } > long.txt
rm -f unique.txt dup50.txt
rows=()
measure long_file "1 line of $long_bytes bytes" "$once_bin long.txt > /dev/null"
measure long_pipe "1 line of $long_bytes bytes" "cat long.txt | $once_bin > /dev/null"

echo
echo "### once CLI: one line of $long_bytes bytes, from a file and from a pipe"
echo
echo "| command | input | seconds | MB/s | peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|"
print_rows "$long_bytes" "%.0f"
