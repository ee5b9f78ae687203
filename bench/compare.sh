#!/usr/bin/env bash
# Two builds of once-bench timed against each other on a machine that other jobs share.
# Each round runs every structure once with each build, back to back, the order of the
# two builds swapped every round, so that what else the machine runs falls on both
# alike; a round's ratio (B over A) compares two runs seconds apart.  Prints, per
# structure and operation, each build's median ns/op and the median and spread
# (quartiles) of the per-round ratios.  Run the blocked filter beside the others as a
# control when its code did not change: its ratios show what noise alone does.
# Usage: bench/compare.sh BENCH_A BENCH_B ROUNDS N STRUCTURE...
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 BENCH_A BENCH_B ROUNDS N STRUCTURE..." >&2
  exit 2
fi
a=$1 b=$2 rounds=$3 n=$4
shift 4
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for s in "$@"; do
    if ((r % 2)); then order="a b"; else order="b a"; fi
    for which in $order; do
      if [ "$which" = a ]; then bench=$a; else bench=$b; fi
      "$bench" --n "$n" --structures "$s" --reps 1 |
        awk -v w="$which" -v r="$r" -v s="$s" '!/^#/ && $1 == s && NF >= 4 { print w, r, $1, $2, $4 }' >>"$raw"
    done
  done
done
# Lines of raw: build round structure op ns.
awk '
function median(list, n,   i, j, t, v) {
  split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function quartile(list, n, q,   i, j, t, v) {
  split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return v[int((n - 1) * q + 0.5) + 1]
}
{ key = $3 " " $4; ns[$1, key, $2] = $5; if (!(key in seen)) { seen[key] = 1; order[++keys] = key } rounds[$2] = 1 }
END {
  print "| structure | op | A ns/op | B ns/op | B/A median | B/A quartiles |"
  print "|---|---|---:|---:|---:|---|"
  for (k = 1; k <= keys; k++) {
    key = order[k]; la = lb = lr = ""; na = nb = nr = 0
    for (r in rounds) {
      if (("a", key, r) in ns) { la = la " " ns["a", key, r]; na++ }
      if (("b", key, r) in ns) { lb = lb " " ns["b", key, r]; nb++ }
      if (("a", key, r) in ns && ("b", key, r) in ns && ns["a", key, r] > 0) {
        lr = lr " " ns["b", key, r] / ns["a", key, r]; nr++
      }
    }
    split(key, part, " ")
    printf "| %s | %s | %.1f | %.1f | %.2fx | %.2f-%.2f |\n", part[1], part[2], median(la, na),
      median(lb, nb), median(lr, nr), quartile(lr, nr, 0.25), quartile(lr, nr, 0.75)
  }
}' "$raw"
