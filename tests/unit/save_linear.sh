#!/usr/bin/env bash
# A dump in chunks costs a few walks of the save, however many chunks it has: each chunk
# pays for its own bytes, not for every byte before it (the first and the last walk the
# whole stream, for its checksum).  Instructions counted by callgrind, deterministic:
# the same save in four times as many chunks must cost about the same, where a walk a
# chunk would cost about four times as much.
# Usage: save_linear.sh SAVE_WALK
set -eu
WALK=$1
count() { # STRUCTURE MODE: instructions of the run
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$WALK" "$1" "$2" 2>&1 |
    awk '/Collected/ { print $4 }'
}
status=0
for s in timer timer-dynamic blocked; do
  none=$(count "$s" none)
  whole=$(( $(count "$s" whole) - none ))
  chunked=$(( $(count "$s" chunked) - none ))
  small=$(( $(count "$s" small-chunks) - none ))
  ratio=$(awk -v a="$small" -v b="$chunked" 'BEGIN { printf "%.2f", a / b }')
  echo "$s: whole save $whole instructions; in 256 KiB chunks $chunked, in 64 KiB chunks $small ($ratio x)"
  if ! awk -v r="$ratio" 'BEGIN { exit !(r < 1.5) }'; then
    echo "FAIL: $s's dump costs $ratio times as much in four times as many chunks"
    status=1
  fi
done
exit $status
