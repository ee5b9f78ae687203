#!/usr/bin/env bash
# Instructions per operation, counted by callgrind (valgrind): bench/once_ops.c at N and
# 2N keys, the difference over N, so the set-up cancels; a query's count has the N
# inserts that fill its filter taken off.  Deterministic for one binary, whatever else
# the machine runs: the measure to compare two builds on a shared machine.
# Usage: bench/instructions.sh ONCE_OPS [N] [STRUCTURE...]
set -euo pipefail
ops=$1
n=${2:-100000}
shift $(( $# >= 2 ? 2 : 1 ))
structures=("$@")
[ ${#structures[@]} -gt 0 ] || structures=(standard partitioned counting bpbf dbpbf apbf apbbf tlbf timer dbf blocked)
count() { # STRUCTURE OP KEYS: instructions of the whole run
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$ops" "$1" "$2" "$3" 2>&1 |
    awk '/Collected/ { print $4 }'
}
per_op() { # STRUCTURE OP: instructions per operation
  local a b
  a=$(count "$1" "$2" "$n")
  b=$(count "$1" "$2" $((2 * n)))
  echo $(( (b - a) / n ))
}
echo "| structure | insert | query | test_and_add | insert_batch | query_batch | test_and_add_batch |"
echo "|---|---|---|---|---|---|---|"
for s in "${structures[@]}"; do
  insert=$(per_op "$s" insert)
  row="| $s | $insert"
  for op in query test_and_add insert_batch query_batch test_and_add_batch; do
    v=$(per_op "$s" "$op")
    case $op in query*) v=$((v - insert)) ;; esac
    row="$row | $v"
  done
  echo "$row |"
done
