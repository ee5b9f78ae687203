#!/usr/bin/env bash
# Play-tests of the `once` command: each case runs the real binary on real files and
# pipes and checks its output bytes, exit status and state files.
# Usage: cli_test.sh ONCE_BINARY CASE
set -u
ONCE=$1
CASE=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/once-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect_status WANT COMMAND...: run, compare the exit status.
expect_status() {
  local want=$1; shift
  "$@"; local got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}
same_file() { cmp -s "$1" "$2" || { fail "$1 differs from $2"; diff <(od -c "$1" | head -20) <(od -c "$2" | head -20) >&2; }; }
awk_dedup() { awk '!seen[$0]++' "$@"; }

case_golden_small() {
  printf 'b\na\nb\nc\na\nd\n' > in
  printf 'b\na\nc\nd\n' > want
  "$ONCE" in > got; same_file got want
  "$ONCE" < in > got; same_file got want
  printf 'b\na\n' > want_dups
  "$ONCE" -D in > got; same_file got want_dups
  "$ONCE" --duplicates < in > got; same_file got want_dups
}

case_every_filter_same_output() {
  seq 1 20000 | awk '{print $1 % 7000 "-key"}' > in
  awk_dedup in > want
  for f in standard partitioned blocked; do
    "$ONCE" --filter "$f" --capacity 10000 --error 1e-6 --seed 5 in > got
    same_file got want
  done
}

case_field_selection() {
  printf 'x\t1\ty\nz\t1\tw\nq\t2\n\t3\nonly\n' > in
  # Field 2 keys: 1, 1, 2, 3, "" (a missing field is the empty key, like awk's $2).
  printf 'x\t1\ty\nq\t2\n\t3\nonly\n' > want
  "$ONCE" -f 2 in > got; same_file got want
  printf 'a,k1\nb,k1\nc,k2\n' > csv
  printf 'a,k1\nc,k2\n' > want
  "$ONCE" -f 2 -t , csv > got; same_file got want
  "$ONCE" --field=2 --delimiter=, csv > got; same_file got want
  # Field 1 with CRLF: the CR is not part of the key.
  printf 'k\r\nk\n' > crlf
  printf 'k\r\n' > want
  "$ONCE" -f 1 crlf > got; same_file got want
}

case_awkward_bytes() {
  # NUL bytes, invalid UTF-8, CRLF endings, empty lines and a last line without newline.
  printf 'a\0b\na\0c\na\0b\n\xff\xfe\n\xff\xfe\nx\r\nx\n\n\nlast' > in
  printf 'a\0b\na\0c\n\xff\xfe\nx\r\n\nlast\n' > want
  "$ONCE" in > got; same_file got want
  : > empty
  "$ONCE" empty > got; [ ! -s got ] || fail "empty input gave output"
  expect_status 0 "$ONCE" empty
  printf 'no newline' > one
  printf 'no newline\n' > want
  "$ONCE" one > got; same_file got want
}

case_zero_terminated() {
  # -z: NUL ends a line on input and output, as sort -z and uniq -z; newlines are
  # ordinary bytes inside a line; a last line without its NUL gets one.
  printf 'a\0b\0a\0' | "$ONCE" -z > got
  printf 'a\0b\0' > want; same_file got want
  printf 'x\ny\0x\nz\0x\ny\0last' > in
  printf 'x\ny\0x\nz\0last\0' > want
  "$ONCE" -z in > got; same_file got want
  "$ONCE" --zero-terminated < in > got; same_file got want
  printf 'x\ny\0' > want
  "$ONCE" -z -D in > got; same_file got want
  # A CR before the NUL is part of the key: it is no CRLF line end.
  printf 'a\r\0a\0a\r\0' | "$ONCE" -z > got
  printf 'a\r\0a\0' > want; same_file got want
  # Fields, also split by a newline (refused as a delimiter without -z).
  printf 'k1\tA\0k2\tA\0k1\tB\0' | "$ONCE" -z -f 1 > got
  printf 'k1\tA\0k2\tA\0' > want; same_file got want
  printf 'id1\nbody\0id2\nbody\0id1\nother\0' | "$ONCE" -z -t $'\n' -f 1 > got
  printf 'id1\nbody\0id2\nbody\0' > want; same_file got want
  expect_status 1 "$ONCE" -t $'\n' -f 1 < /dev/null 2> /dev/null
  # A long line: past the read buffer, in writes through a pipe.
  head -c 3145728 /dev/zero | tr '\0' '\n' > long
  { cat long; printf '\0'; cat long; printf '\0'; } | "$ONCE" -z > got
  { cat long; printf '\0'; } > want; same_file got want
}

case_long_lines() {
  # Lines of 3 MiB (past the 1 MiB read buffer) that differ only in their last byte.
  head -c 3145728 /dev/zero | tr '\0' 'x' > long
  { cat long; echo A; cat long; echo B; cat long; echo A; echo short; } > in
  { cat long; echo A; cat long; echo B; echo short; } > want
  "$ONCE" in > got; same_file got want
  "$ONCE" < in > got; same_file got want
}

case_long_line_from_pipe() {
  # A 64 MiB line that arrives through a pipe in short reads comes out byte-exact.  That
  # it costs linear time is tested without a clock in test_lines.c (cli.lines.*), which
  # counts the reader's work.
  head -c 67108864 /dev/zero | tr '\0' 'y' > long
  printf '\nshort\n' >> long
  cat long long | "$ONCE" > got; same_file got long
  # A line past 1 GiB is refused (exit 2, nothing written) from a pipe too.
  head -c 1100000000 /dev/zero | "$ONCE" > out 2> err
  local status=${PIPESTATUS[1]}
  [ "$status" -eq 2 ] || fail "a line past 1 GiB from a pipe exited $status, expected 2"
  grep -q '^once: -: a line is longer than 1073741824 bytes$' err || fail "too long: $(cat err)"
  [ ! -s out ] || fail "output for a line past 1 GiB"
}

case_multiple_inputs() {
  printf '1\n2\n' > f1
  printf '2\n3\n' > f2
  printf '3\n4\n' | "$ONCE" f1 - f2 > got
  printf '1\n2\n3\n4\n' > want
  same_file got want
  # Lines do not run across files: a file without a final newline ends its line.
  printf 'ab' > g1
  printf 'cd\n' > g2
  "$ONCE" g1 g2 > got
  printf 'ab\ncd\n' > want; same_file got want
}

case_matches_awk_on_large_input() {
  awk 'BEGIN { srand(7); for (i = 0; i < 300000; i++) print int(rand() * 120000) "\tpayload" int(rand()*3) }' > in
  awk_dedup in > want
  "$ONCE" --capacity 1M --error 1e-7 --seed 11 in > got
  same_file got want
  awk -F'\t' '!seen[$1]++' in > want
  "$ONCE" -f 1 --capacity 1M --error 1e-7 --seed 11 in > got
  same_file got want
}

case_stats_json() {
  printf 'a\nb\na\nc\n' > in
  "$ONCE" --stats=json in > /dev/null 2> err
  [ "$(wc -l < err)" -eq 1 ] || fail "stats json is not one line"
  jq -e '.lines == 4 and .distinct == 3 and .duplicates == 1 and .bytes > 0
         and .bits_per_key > 0 and .fpr_estimate >= 0 and .seconds >= 0
         and .lines_per_second >= 0 and .structure == "scalable" and .capacity == 1000000
         and .error == 0.001 and .filters == 1
         and .cardinality_low <= 3 and 3 <= .cardinality_high
         and .cardinality_estimate >= .cardinality_low
         and .cardinality_estimate <= .cardinality_high' err > /dev/null || fail "stats json: $(cat err)"
  "$ONCE" --capacity 1000 --stats=json in > /dev/null 2> err
  jq -e '.structure == "blocked" and .capacity == 1000 and .filters == 0
         and .cardinality_low <= 3 and 3 <= .cardinality_high' err > /dev/null \
    || fail "stats json with --capacity: $(cat err)"
  "$ONCE" --stats in > /dev/null 2> err
  grep -q '4 lines, 3 distinct, 1 duplicates' err || fail "human stats: $(cat err)"
  "$ONCE" in > /dev/null 2> err
  [ ! -s err ] || fail "stderr not quiet without --stats: $(cat err)"
}

# Without --capacity the filter grows: no warning, the error target holds, and the
# output is exactly awk's when the target is strict enough to make a false positive
# improbable (expected false positives here: under 0.03).
case_scalable_default() {
  seq 1 2500000 > in
  "$ONCE" --error 1e-8 --stats=json in > got 2> err
  cmp -s got in || fail "scalable filter dropped or changed lines"
  [ "$(wc -l < err)" -eq 1 ] || fail "unexpected stderr: $(cat err)"
  jq -e '.structure == "scalable" and .filters == 2 and .items == 2500000
         and .capacity == 3000000' err > /dev/null || fail "stats: $(cat err)"
  # --max-memory caps the growth: the run stops with exit 2 and a clear message.
  expect_status 2 "$ONCE" --max-memory 4M in > /dev/null 2> err
  grep -q 'memory' err || fail "no memory-cap message: $(cat err)"
}

# once card: distinct keys of a stream or of saved filters, with an interval.
case_card() {
  seq 1 50000 > a
  seq 30001 70000 > b
  "$ONCE" card a > got || fail "card exited non-zero"
  grep -q '^a: [0-9]* distinct keys (90% interval' got || fail "card output: $(cat got)"
  cat a a | "$ONCE" card --json > got
  jq -e '.name == "-" and .low <= 50000 and 50000 <= .high and .items == 50000
         and .confidence == 0.9' got > /dev/null || fail "card json: $(cat got)"
  "$ONCE" card --json --confidence 0.5 a b > got
  jq -e '.low <= 70000 and 70000 <= .high and .confidence == 0.5' got > /dev/null \
    || fail "card over two inputs: $(cat got)"
  # From saved state files: one line each, and the files are left as they were.
  "$ONCE" --capacity 100000 --state sa a > /dev/null
  "$ONCE" --filter standard --capacity 100000 --state sb b > /dev/null
  cp sa sa.before
  "$ONCE" card --json sa sb > got
  [ "$(wc -l < got)" -eq 2 ] || fail "one line per state file: $(cat got)"
  jq -se '.[0].name == "sa" and .[0].low <= 50000 and 50000 <= .[0].high
          and .[1].structure == "standard" and .[1].low <= 40000 and 40000 <= .[1].high' got \
    > /dev/null || fail "card over state files: $(cat got)"
  same_file sa sa.before
  # Refusals: a damaged state file, state files mixed with streams, bad options.
  head -c 100 sa > damaged
  expect_status 2 "$ONCE" card damaged > /dev/null 2> err
  grep -q "damaged" err || fail "no message naming the damaged file: $(cat err)"
  expect_status 1 "$ONCE" card sa a > /dev/null 2> err
  expect_status 1 "$ONCE" card --confidence 1.5 a > /dev/null 2> err
  expect_status 1 "$ONCE" --json a > /dev/null 2> err
  # A count window counts the keys of its window: the last N delivered, not the
  # generations around them (a million-key window over 3M lines, scaled down).
  for f in apbf apbbf; do
    for level in 0 2; do
      seq 1 300000 | "$ONCE" card --json --window 100k --filter "$f" --level "$level" --seed 4 > got
      jq -e '.low <= 100000 and 100000 <= .high' got > /dev/null \
        || fail "card --window 100k ($f, level $level): $(cat got)"
    done
  done
}

case_capacity_warning() {
  seq 1 500 > in
  "$ONCE" --capacity 100 in > got 2> err
  [ "$(grep -c 'warning' err)" -eq 1 ] || fail "expected one capacity warning: $(cat err)"
  seq 1 50 > small
  "$ONCE" --capacity 100 small > got 2> err
  [ ! -s err ] || fail "warning below capacity: $(cat err)"
}

case_state_resume() {
  awk 'BEGIN { srand(3); for (i = 0; i < 60000; i++) print int(rand() * 30000) }' > in
  head -n 20000 in > p1; sed -n '20001,45000p' in > p2; tail -n +45001 in > p3
  "$ONCE" --seed 9 in > want
  "$ONCE" --seed 9 --state st p1 > got
  "$ONCE" --state st p2 >> got
  "$ONCE" --state st < p3 >> got
  same_file got want
  # The saved parameters win; restating them is fine, contradicting them is an error.
  expect_status 0 "$ONCE" --state st --seed 9 --filter scalable p1 > /dev/null
  expect_status 1 "$ONCE" --state st --capacity 5000 p1 > /dev/null 2> err
  grep -q 'conflicts with state file' err || fail "conflict message: $(cat err)"
  expect_status 1 "$ONCE" --state st --filter standard p1 > /dev/null 2>&1
  expect_status 1 "$ONCE" --state st --seed 10 p1 > /dev/null 2>&1
  # The state file is replaced atomically: no temporary files remain.
  [ "$(ls | grep -c '^st')" -eq 1 ] || fail "stray state files: $(ls)"
}

case_sigterm_then_resume() {
  awk 'BEGIN { for (i = 0; i < 40000; i++) print i % 25000 }' > in
  head -n 20000 in > p1; tail -n +20001 in > p2
  "$ONCE" --seed 4 in > want
  want1=$("$ONCE" --seed 4 p1 | wc -l)
  mkfifo fifo
  "$ONCE" --seed 4 --state st < fifo > out1 &
  pid=$!
  exec 3> fifo
  cat p1 >&3
  # Wait (bounded) until every line of p1 has been answered: the output is flushed
  # whenever the input would block.
  for _ in $(seq 1 200); do
    [ "$(wc -l < out1)" -ge "$want1" ] && break
    sleep 0.05
  done
  kill -TERM "$pid"
  wait "$pid"; code=$?
  exec 3>&-
  [ "$code" -eq 143 ] || fail "SIGTERM exit status $code, expected 143"
  [ -s st ] || fail "no state saved on SIGTERM"
  "$ONCE" --state st p2 > out2
  cat out1 out2 > got
  same_file got want
}

case_corrupt_state_refused() {
  seq 1 1000 > in
  "$ONCE" --state st --capacity 2000 in > /dev/null
  cp st good
  # Flip every bit of one byte in the middle (so it surely changes, whatever the random
  # seed put there): the checksum catches it.
  size=$(stat -c %s st)
  byte=$(od -An -tu1 -j $((size / 2)) -N 1 st | tr -d ' ')
  printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of=st bs=1 seek=$((size / 2)) conv=notrunc status=none
  cmp -s st good && fail "the byte flip changed nothing"
  cp st corrupt
  expect_status 2 "$ONCE" --state st in > out 2> err
  grep -q "'st'" err || fail "error does not name the file: $(cat err)"
  [ ! -s out ] || fail "output written despite a bad state"
  same_file st corrupt
  # Truncated, empty and foreign files are refused the same way.
  head -c 100 good > st
  expect_status 2 "$ONCE" --state st in > /dev/null 2>&1
  : > st
  expect_status 2 "$ONCE" --state st in > /dev/null 2>&1
  echo "not a filter" > st
  expect_status 2 "$ONCE" --state st in > /dev/null 2>&1
  same_file good good
}

case_failed_run_keeps_old_state() {
  seq 1 100 > in
  "$ONCE" --state st in > /dev/null
  cp st before
  seq 101 200 > more
  # Output that cannot be written: exit 2, and the state is not advanced.
  expect_status 2 "$ONCE" --state st more > /dev/full 2> err
  grep -q 'write error' err || fail "no write error message: $(cat err)"
  same_file st before
  # A missing input: the others are read and written, but the run fails and saves
  # nothing (case missing_input).
  expect_status 2 "$ONCE" --state st more missing-file > out 2> err
  same_file out more
  same_file st before
}

case_missing_input() {
  # As cat: a missing input or a directory is reported, the other inputs are read
  # and written, and the run exits 2 at the end.
  printf '1\n2\n' > in1
  printf '2\n3\n' > in2
  mkdir dir
  printf '1\n2\n3\n' > want
  expect_status 2 "$ONCE" in1 nosuch in2 > got 2> err
  same_file got want
  [ "$(cat err)" = "once: nosuch: No such file or directory" ] || fail "stderr: $(cat err)"
  printf '3\n4\n' > piped
  expect_status 2 "$ONCE" nosuch in1 dir - in2 nosuch2 < piped > got 2> err
  printf '1\n2\n3\n4\n' > want4; same_file got want4
  printf 'once: nosuch: No such file or directory\nonce: dir: Is a directory\n' > want_err
  printf 'once: nosuch2: No such file or directory\n' >> want_err
  same_file err want_err
  # A failed run saves no state: none is created, an old one stays as it was.
  expect_status 2 "$ONCE" --state st in1 nosuch in2 > got 2> /dev/null
  same_file got want
  [ ! -e st ] || fail "a run with a missing input created its state file"
  "$ONCE" --state st in1 > /dev/null
  cp st before
  expect_status 2 "$ONCE" --state st in2 dir > got 2> /dev/null
  printf '3\n' > want3; same_file got want3
  same_file st before
  # No summary either: it would count a run that did not happen as asked.
  expect_status 2 "$ONCE" --stats in1 nosuch > /dev/null 2> err
  grep -q 'lines' err && fail "a summary after a missing input: $(cat err)"
  # once card over streams prints no estimate (it would lack the missing input); over
  # state files it prints each one it can read.  Both exit 2.
  expect_status 2 "$ONCE" card in1 nosuch in2 > out 2> err
  [ ! -s out ] || fail "an estimate despite a missing input: $(cat out)"
  grep -q '^once: nosuch: No such file or directory$' err || fail "card stderr: $(cat err)"
  expect_status 2 "$ONCE" card st nosuch dir > out 2> err
  grep -q '^st: 2 distinct keys' out || fail "card of a state file: $(cat out)"
  [ "$(wc -l < out)" -eq 1 ] || fail "card printed $(wc -l < out) estimates"
  printf 'once: nosuch: No such file or directory\nonce: dir: Is a directory\n' > want_err
  same_file err want_err
}

case_usage_errors() {
  expect_status 1 "$ONCE" --no-such-option < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --capacity 0 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --capacity -5 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --capacity 12x < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --error 0 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --error 1.5 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --error abc < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --filter cuckoo < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" -f 0 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" -t ab < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --stats=xml < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --seed < /dev/null 2> /dev/null
  expect_status 2 "$ONCE" no-such-file 2> err
  grep -q 'no-such-file' err || fail "missing file not named"
  expect_status 2 "$ONCE" . 2> /dev/null
  expect_status 0 "$ONCE" --help > out; grep -q 'Usage' out || fail "help text"
  expect_status 0 "$ONCE" --version > out; grep -q '^once ' out || fail "version text"
  expect_status 0 "$ONCE" --capacity 10k --error 1e-4 < /dev/null
}

case_count_window() {
  # 3000 distinct keys; then the last 500 again (inside a window of 1000 deliveries:
  # all dropped); then the first 200 again (3000 deliveries ago, past the window and
  # its slack: delivered again).  A tight --error keeps false positives, which would
  # drop a new key at the target rate, out of this golden output.
  seq 1 3000 > a; seq 2501 3000 > b; seq 1 200 > c
  cat a b c > in
  cat a c > want
  for f in apbf apbbf; do
    "$ONCE" --window 1000 --error 1e-6 --filter "$f" --seed 3 in > got; same_file got want
    "$ONCE" --window 1000 --error 1e-6 --filter "$f" --seed 3 --level 2 in > got; same_file got want
  done
  # Without a window the first 200 stay duplicates.
  "$ONCE" --seed 3 in > got; same_file got a
  # Refresh: a key repeated inside the window restarts its window.  Key 1 recurs every
  # 500 lines, so it never leaves a window of 1000; without refresh its window counts
  # from its first delivery and it comes back.
  awk 'BEGIN { n = 10000; for (i = 1; i <= 6000; i++) { if (i % 500 == 0) print "hot"; else print n++ } }' > hot
  "$ONCE" --window 1000 --seed 3 --refresh hot | grep -c '^hot$' > count
  [ "$(cat count)" -eq 1 ] || fail "refresh: hot delivered $(cat count) times"
  "$ONCE" --window 1000 --seed 3 hot | grep -c '^hot$' > count
  [ "$(cat count)" -gt 1 ] || fail "first-delivery window: hot delivered $(cat count) times"
  # The state keeps the window's position: split runs give the one-run output.
  "$ONCE" --window 1000 --error 1e-6 --seed 3 --state st a > got
  "$ONCE" --window 1000 --state st b >> got
  "$ONCE" --state st c >> got
  same_file got want
  expect_status 1 "$ONCE" --window 2000 --state st c > /dev/null 2>&1
  expect_status 1 "$ONCE" --filter blocked --state st c > /dev/null 2>&1
  "$ONCE" --window 1000 --stats=json in > /dev/null 2> err
  jq -e '.structure == "apbf" and .window >= 1000 and .slack > 0 and .k > 0 and .l > 0
         and .slices == .k + .l and .window_unit == "events"' err > /dev/null || fail "window stats: $(cat err)"
  expect_status 1 "$ONCE" --filter apbf in > /dev/null 2>&1
  expect_status 1 "$ONCE" --window 10 --filter blocked in > /dev/null 2>&1
  expect_status 1 "$ONCE" --window 10 --capacity 10 in > /dev/null 2>&1
  expect_status 1 "$ONCE" --refresh in > /dev/null 2>&1
  expect_status 1 "$ONCE" --window 0 in > /dev/null 2>&1
  expect_status 1 "$ONCE" --window 10 --level 9 in > /dev/null 2>&1
  # The window reported is the one asked for, also when small; past it and its slack
  # a key is new again.
  for level in 0 2 8; do
    "$ONCE" --window 5 --level "$level" --stats=json in > /dev/null 2> err
    jq -e '.window == 5 and .slack <= 8' err > /dev/null || fail "window 5, level $level: $(cat err)"
  done
  printf 'k\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\nk\n' > short
  "$ONCE" --window 5 --seed 3 short > got; same_file got short
}

case_time_window() {
  # Event times from field 1; keys from field 2.  With a one-hour span (level 2: slack
  # 12/13 of the span), "a" at 00:30 repeats the 00:00 delivery; at 03:00 it is new.
  printf '2026-01-01T00:00:00Z\ta\n2026-01-01T00:30:00.250+00:00\ta\n2026-01-01T03:00:00Z\ta\n2026-01-01T03:00:00Z\tb\n2026-01-01T03:10:00Z\tb\n' > iso
  printf '2026-01-01T00:00:00Z\ta\n2026-01-01T03:00:00Z\ta\n2026-01-01T03:00:00Z\tb\n' > want
  for f in tlbf timer; do
    "$ONCE" --span 1h --filter "$f" --time-field 1 --time-format iso8601 -f 2 --seed 1 iso > got
    same_file got want
  done
  # The same events in epoch seconds (with a fraction) and epoch milliseconds.
  printf '1767225600 a\n1767227400.25 a\n1767236400 a\n1767236400 b\n1767237000 b\n' > epoch
  printf '1767225600 a\n1767236400 a\n1767236400 b\n' > want
  "$ONCE" --span 60m --time-field 1 -t ' ' -f 2 epoch > got; same_file got want
  awk '{ printf "%d000 %s\n", $1, $2 }' epoch > epoch_ms
  awk '{ printf "%d000 %s\n", $1, $2 }' want > want_ms
  "$ONCE" --span 3600s --time-field 1 --time-format epoch_ms -t ' ' -f 2 epoch_ms > got
  same_file got want_ms
  # Out of order within the span: a late event still finds its key.
  printf '100 x\n4000 y\n200 x\n' > late
  printf '100 x\n4000 y\n' > want
  "$ONCE" --span 2h --time-field 1 -t ' ' -f 2 late > got; same_file got want
  # Unparsable times: fail (exit 2, lines before it still written), skip, keep.
  printf '10 a\nnever a\n20 b\n' > bad
  expect_status 2 "$ONCE" --span 1h --time-field 1 -t ' ' -f 2 bad > got 2> err
  printf '10 a\n' > want; same_file got want
  grep -q 'bad:2' err || fail "bad time not located: $(cat err)"
  "$ONCE" --span 1h --time-field 1 -t ' ' -f 2 --on-bad-time skip --stats=json bad > got 2> err
  printf '10 a\n20 b\n' > want; same_file got want
  jq -e '.bad_time == 1 and .lines == 3 and .structure == "tlbf" and .window == 3600000
         and .window_unit == "ms" and .slack > 0' err > /dev/null || fail "span stats: $(cat err)"
  "$ONCE" --span 1h --time-field 1 -t ' ' -f 2 --on-bad-time keep bad > got
  printf '10 a\nnever a\n20 b\n' > want; same_file got want
  # Wall-clock time: a repeat within the same run is a duplicate.
  printf 'x\ny\nx\n' | "$ONCE" --span 10m > got
  printf 'x\ny\n' > want; same_file got want
  # State across runs keeps the clock: tomorrow's run still knows today's keys.
  head -n 2 iso > p1; tail -n +3 iso > p2
  "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 --seed 1 --state st p1 > got
  "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 --state st p2 >> got
  "$ONCE" --span 1h --filter tlbf --time-field 1 --time-format iso8601 -f 2 --seed 1 iso > whole
  same_file got whole
  expect_status 1 "$ONCE" --span 2h --time-field 1 --time-format iso8601 -f 2 --state st p2 > /dev/null 2>&1
  # Usage errors.
  expect_status 1 "$ONCE" --span 0 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 5x < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --window 10 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --time-field 1 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --time-format iso8601 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --time-field 1 --time-format rfc822 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --filter apbf < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --filter tlbf < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --max-memory 12Q < /dev/null 2> /dev/null
}

case_event_time() {
  # One clock for the stream (README, "Event time"), the same for both time windows.
  for f in tlbf timer; do
    # An outlier far ahead is a bad time: skipped, it does not move the clock.
    printf '1000 A\n4102444800 X\n1002 B\n1003 B\n5000 B\n90000 B\n' > outlier
    "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 --on-bad-time skip \
      --stats=json outlier > got 2> err
    printf '1000 A\n1002 B\n5000 B\n90000 B\n' > want; same_file got want
    jq -e '.bad_time == 1' err > /dev/null || fail "$f: outlier not counted: $(cat err)"
    # By default it stops the run (exit 2) after the lines before it, naming the line.
    expect_status 2 "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 outlier \
      > got 2> err
    printf '1000 A\n' > want; same_file got want
    grep -q 'outlier:2.*max-time-jump' err || fail "$f: jump not explained: $(cat err)"
    # keep prints it unfiltered; a larger bound, or none, takes it (and the clock moves).
    "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 --on-bad-time keep outlier > got
    printf '1000 A\n4102444800 X\n1002 B\n5000 B\n90000 B\n' > want; same_file got want
    "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 --max-time-jump 0 outlier > got
    printf '1000 A\n4102444800 X\n1002 B\n' > want; same_file got want
    # A clock going backwards: late lines are taken at the latest time, so Y is a
    # repeat the second time.
    printf '1000 A\n1100 X\n1006 Y\n1007 Y\n' > back
    "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 back > got
    printf '1000 A\n1100 X\n1006 Y\n' > want; same_file got want
    # The boundary: the window at t is (t - T, t]; a repeat exactly T later is new.
    printf '1000000 K\n1009999 K\n1010000 K\n' > edge
    "$ONCE" --span 10s --filter "$f" --time-field 1 --time-format epoch_ms -t ' ' -f 2 edge > got
    printf '1000000 K\n1010000 K\n' > want; same_file got want
    # The clock carries over in a state file; the bound is the run's own.
    printf '1000 A\n' > p1; printf '200000 A\n1000 A\n' > p2
    rm -f st
    "$ONCE" --span 10s --filter "$f" --time-field 1 -t ' ' -f 2 --state st p1 > got
    expect_status 2 "$ONCE" --span 10s --time-field 1 -t ' ' -f 2 --max-time-jump 1m \
      --state st p2 >> got 2> /dev/null
    "$ONCE" --span 10s --time-field 1 -t ' ' -f 2 --max-time-jump 3d --state st p2 >> got
    printf '1000 A\n200000 A\n' > want; same_file got want
  done
  expect_status 1 "$ONCE" --span 1h --max-time-jump 1h < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --max-time-jump 1h --time-field 1 < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" --span 1h --time-field 1 --max-time-jump soon < /dev/null 2> /dev/null
}

if ! declare -F "case_$CASE" > /dev/null; then
  echo "no such case: $CASE" >&2
  exit 2
fi
"case_$CASE"
[ "$failures" -eq 0 ] && echo "PASS $CASE" || echo "FAIL $CASE ($failures)"
[ "$failures" -eq 0 ]
