#!/usr/bin/env bash
# Play-tests of the `once` command: each case runs the real binary on real files and
# pipes and checks its output bytes, exit status and state files.
# Usage: cli_test.sh ONCE_BINARY CASE
set -u
ONCE=$1
CASE=$2
SOURCE_DIR=$(cd "$(dirname "$0")/../.." && pwd)
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
  # The seed is a string, so a 64-bit seed past 2^53 reads back exactly.
  "$ONCE" --seed 13523203425581917361 --stats=json in > /dev/null 2> err
  [ "$(jq -r .seed err)" = 13523203425581917361 ] || fail "seed in stats json: $(cat err)"
  "$ONCE" --seed 0xffffffffffffffff --stats=json in > /dev/null 2> err
  [ "$(jq -r .seed err)" = 18446744073709551615 ] || fail "seed 2^64-1 in stats json: $(cat err)"
  "$ONCE" --stats in > /dev/null 2> err
  grep -q '4 lines, 3 distinct, 1 duplicate in' err || fail "human stats: $(cat err)"
  # A window holds its window's keys, not every key it took: both are said, and its
  # bits per key are over the keys it holds.  A near-empty filter's bits per key are
  # at its design size.
  seq 1 5000 > many
  "$ONCE" --window 1000 --seed 7 --stats=json many > /dev/null 2> err
  jq -e '.items == 5000 - .duplicates and .window_keys >= 800 and .window_keys <= 1250
         and (.bits_per_key / (.bytes * 8 / ([.window_keys, .window] | max)) - 1 | fabs) < 0.001' \
    err > /dev/null \
    || fail "window stats: $(cat err)"
  "$ONCE" --window 1000 --stats many > /dev/null 2> err
  grep -q 'keys added, about [0-9]* in the window (capacity 1000 at error' err \
    || fail "window stats, human: $(cat err)"
  echo a | "$ONCE" --capacity 1M --stats=json > /dev/null 2> err
  jq -e '.items == 1 and (.bits_per_key - .bytes * 8 / 1000000 | fabs) < 0.01' err > /dev/null \
    || fail "near-empty bits per key: $(cat err)"
  "$ONCE" in > /dev/null 2> err
  [ ! -s err ] || fail "stderr not quiet without --stats: $(cat err)"
}

# --stats says how many threads worked and where the time went: reading, keys and
# times, deciding (the filter's calls, which hash the keys on one thread), writing.
# Each phase is a part of the run, so together they fit in its seconds.
case_stats_phases() {
  seq 1 200000 > in
  "$ONCE" --stats=json in > /dev/null 2> err
  jq -e '.threads == 1 and .phases.hash == null
         and ([.phases.read, .phases.keys, .phases.decide, .phases.write] | all(. >= 0))
         and (.phases.read + .phases.keys + .phases.decide + .phases.write) <= .seconds + 1e-3' \
    err > /dev/null || fail "phases in stats json: $(cat err)"
  "$ONCE" --stats in > /dev/null 2> err
  grep -q '^once: 1 thread; time reading [0-9.]* s, keys and times [0-9.]* s, deciding (with hashing) [0-9.]* s, writing [0-9.]* s$' err \
    || fail "phases in human stats: $(cat err)"
  # A sliced filter and a time window say the same.
  "$ONCE" --slicing horizontal --slices 4 --capacity 1M --stats=json in > /dev/null 2> err
  jq -e '.threads == 1 and .phases.decide >= 0 and .phases.hash == null' err > /dev/null \
    || fail "phases of a sliced filter: $(cat err)"
  "$ONCE" --span 1h --stats=json in > /dev/null 2> err
  jq -e '.threads == 1 and .phases.read >= 0 and .phases.write >= 0' err > /dev/null \
    || fail "phases of a time window: $(cat err)"
}

# --threads T runs the lines on T threads and prints what a run without --threads
# prints, byte for byte, and saves the same state: every structure, all time and both
# windows, event times with bad, late and far-future lines, -D, field keys.  A low
# capacity puts every growing structure past its first sub-filter, so that growth falls
# inside the threaded run.
case_threads_same_output() {
  awk 'BEGIN { srand(7); for (i = 0; i < 30000; i++) {
      t = 1700000000 + int(i / 10) - (i % 97 == 0 ? 400 : 0)
      if (i % 1009 == 0) printf "x%d\tbad-%d\n", i, i % 5
      else printf "%d\tk%d\tv%d\n", t, int(rand() * 12000), i % 3 } }' > in
  printf '4102444800\tfar\tv\n' >> in # 2100: past the wall clock by more than a day
  runs=(
    "--seed 3"
    "--seed 3 --capacity 3000 -f 2"
    "--seed 3 --filter standard --capacity 3000 -f 2,3"
    "--seed 3 --filter partitioned --capacity 3000"
    "--seed 3 --filter counting --capacity 3000 -f 2"
    "--seed 3 --filter dbf --capacity 2000 -f 2"
    "--seed 3 --filter bpbf --capacity 3000 -f 2"
    "--seed 3 --filter dbpbf --capacity 2000 -f 2"
    "--seed 3 --filter scalable --capacity 1000 -f 2 -D"
    "--seed 3 --window 2000 -f 2"
    "--seed 3 --filter apbbf --window 2000 -f 2"
    "--seed 3 --span 60s -f 2 --time-field 1 --on-bad-time keep"
    "--seed 3 --span 60s -f 2 --time-field 1 --on-bad-time skip --capacity 100"
    "--seed 3 --filter tlbf --span 60s -f 2 --time-field 1 --on-bad-time skip"
    "--seed 3 --filter timer --span 60s -f 2 --time-field 1 --on-bad-time keep -D"
    "--seed 3 --capacity 3000 -f 2 --shards 4"
    "--seed 3 --filter scalable --capacity 300 -f 2 -D --shards 5"
    "--seed 3 --filter dbf --capacity 2000 -f 2 --shards 3"
  )
  for args in "${runs[@]}"; do
    rm -f want.state
    # shellcheck disable=SC2086 # the options are words
    "$ONCE" $args --state want.state in > want 2> want.err
    for t in 1 2 3 8; do
      rm -f got.state
      # shellcheck disable=SC2086
      "$ONCE" $args --threads "$t" --stats=json --state got.state in > got 2> err
      same_file got want
      same_file got.state want.state
      grep '^{' err | jq -e --argjson t "$t" '.threads == $t and ($t == 1 or .phases.hash >= 0)' > /dev/null \
        || fail "$args --threads $t stats: $(cat err)"
    done
  done
  # Inputs of several reader buffers (1 MiB): the reader refills its buffer while the
  # batches read before wait for their keys and answers, which hold their own lines.
  awk 'BEGIN { srand(11); for (i = 0; i < 400000; i++)
      printf "%d\tkey-%d-padding-to-forty-bytes\n", 1700000000 + int(i / 50), int(rand() * 150000) }' > big
  for args in "--seed 3" "--seed 3 --span 60s -f 2 --time-field 1" "--seed 3 --capacity 200000 -D"; do
    # shellcheck disable=SC2086
    "$ONCE" $args big > want
    for t in 1 2 4; do
      # shellcheck disable=SC2086
      "$ONCE" $args --threads "$t" big > got
      same_file got want
    done
  done
  # A bad line under --on-bad-time fail stops every thread count at the same line, with
  # the lines before it delivered.
  expect_status 2 "$ONCE" --span 60s -f 2 --time-field 1 in > want 2> want.err
  for t in 1 2 8; do
    expect_status 2 "$ONCE" --span 60s -f 2 --time-field 1 --threads "$t" in > got 2> err
    same_file got want
    same_file err want.err
  done
}

# --shards: a filter in P shards prints the same lines on any number of threads (above);
# it says so in --stats; count windows and sliced filters refuse it, and so does a value
# out of range.  A new time window has 16 shards with --threads or without (fewer for a
# --capacity under 16384: one a 1024 keys), a filter one.
case_shards() {
  seq 1 20000 > in
  for threads in "" "--threads 2"; do
    # shellcheck disable=SC2086 # the options are words
    "$ONCE" --seed 1 --span 1h $threads --stats=json in 2> err > /dev/null
    jq -e '.shards == 16' err > /dev/null || fail "a time window's shards ($threads): $(cat err)"
    # shellcheck disable=SC2086
    "$ONCE" --seed 1 $threads --stats=json in 2> err > /dev/null
    jq -e '.shards == 1' err > /dev/null || fail "a filter's shards ($threads): $(cat err)"
  done
  "$ONCE" --seed 1 --span 1h --capacity 5000 --stats=json in 2> err > /dev/null
  jq -e '.shards == 4' err > /dev/null || fail "a small time window's shards: $(cat err)"
  "$ONCE" --seed 1 --span 1h --capacity 1000 --stats=json in 2> err > /dev/null
  jq -e '.shards == 1' err > /dev/null || fail "a tiny time window's shards: $(cat err)"
  "$ONCE" --seed 1 --capacity 30000 --shards 8 --stats in 2> err > /dev/null
  grep -q 'blocked filter in 8 shards' err || fail "--stats of a sharded filter: $(cat err)"
  expect_usage_error "once: --filter apbf keeps the stream's last N keys, which shards cannot share out: drop --shards" \
    --window 100 --shards 4
  expect_usage_error "once: --shards shares one filter's keys out on this host; a sliced filter spreads them over its sites: drop one of them" \
    --slicing vertical --slices 4 --capacity 1000 --shards 4
  expect_usage_error "once: invalid shards '0' (1 to 256)" --shards 0
  expect_usage_error "once: invalid shards '257' (1 to 256)" --shards 257
  # A count window with --threads stays in one piece.
  "$ONCE" --seed 1 --window 1000 --threads 2 --stats=json in 2> err > /dev/null
  jq -e '.shards == 1' err > /dev/null || fail "a count window's shards: $(cat err)"
}

# A state saved by a threaded run resumes on one thread and the other way round: the
# same lines as one run on one thread.  The state keeps its shards: a threaded run goes
# on with a time window saved in one piece (--shards 1, or an earlier version's).
case_threads_state_resume() {
  awk 'BEGIN { srand(5); for (i = 0; i < 40000; i++) print int(rand() * 20000) }' > in
  head -n 15000 in > p1; sed -n '15001,30000p' in > p2; tail -n +30001 in > p3
  "$ONCE" --seed 9 --threads 1 in > want
  "$ONCE" --seed 9 --state st --threads 4 p1 > got
  "$ONCE" --state st p2 >> got
  "$ONCE" --state st --threads 2 < p3 >> got
  same_file got want
  rm -f st
  "$ONCE" --seed 9 --span 1h --shards 1 --state st p1 > want1
  "$ONCE" --state st --threads 3 p2 >> want1
  "$ONCE" --seed 9 --span 1h --shards 1 p1 p2 > got1
  same_file got1 want1
  rm -f st
  "$ONCE" --seed 9 --span 1h --state st --threads 3 p1 > got1
  "$ONCE" --state st p2 >> got1
  "$ONCE" --seed 9 --span 1h --threads 1 p1 p2 > want1
  same_file got1 want1
  # The state says how many shards: --shards may repeat it, not change it.
  "$ONCE" --state st --shards 16 p3 > /dev/null
  expect_status 1 "$ONCE" --state st --shards 4 p3 > /dev/null 2> err
  grep -q -- '--shards conflicts with state file' err || fail "shards conflict: $(cat err)"
  # A refusal (a memory cap) in a threaded run keeps what was delivered before it, and
  # the same state as one thread.
  "$ONCE" --seed 9 --filter scalable --capacity 1000 --max-memory 64K --state st1 --threads 1 in \
    > want 2> /dev/null
  "$ONCE" --seed 9 --filter scalable --capacity 1000 --max-memory 64K --state st2 --threads 4 in \
    > got 2> /dev/null
  [ $? -eq 2 ] || fail "threaded run past its cap did not fail"
  same_file got want
  same_file st2 st1
}

# Without --capacity the filter grows: no warning, the error target holds, and the
# output is exactly awk's when the target is strict enough to make a false positive
# improbable (expected false positives here: under 0.03).
case_scalable_default() {
  seq 1 2500000 > in
  # From a pipe the filter cannot know the lines to come: it starts at 10^6 keys and grows.
  cat in | "$ONCE" --error 1e-8 --seed 11 --stats=json > got 2> err # a fixed seed: deterministic
  cmp -s got in || fail "scalable filter dropped or changed lines"
  [ "$(wc -l < err)" -eq 1 ] || fail "unexpected stderr: $(cat err)"
  jq -e '.structure == "scalable" and .filters == 2 and .items == 2500000
         and .capacity == 3000000' err > /dev/null || fail "stats: $(cat err)"
  # From files it starts with room for their lines (bytes over the first lines' mean,
  # and an eighth; seq's first lines are its shortest): one sub-filter, no growth.
  "$ONCE" --error 1e-8 --seed 11 --stats=json in > got 2> err
  cmp -s got in || fail "scalable filter sized from the file dropped or changed lines"
  jq -e '.filters == 1 and .items == 2500000 and .capacity >= 2500000
         and .capacity <= 5000000' err > /dev/null || fail "stats, sized from the file: $(cat err)"
  head -n 1000 in > small
  "$ONCE" --stats=json small in > /dev/null 2> err
  jq -e '.filters == 1 and .capacity >= 2501000' err > /dev/null \
    || fail "stats, sized from two files: $(cat err)"
  "$ONCE" --stats=json < in > /dev/null 2> err
  jq -e '.filters == 1' err > /dev/null || fail "stats, sized from standard input, a file: $(cat err)"
  # --max-memory caps the growth: the run stops with exit 2 and a clear message.  A
  # first guess past half the cap is not taken.
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
  "$ONCE" card --json --state sa --state sb > got
  [ "$(wc -l < got)" -eq 2 ] || fail "one line per state file: $(cat got)"
  jq -se '.[0].name == "sa" and .[0].low <= 50000 and 50000 <= .[0].high
          and .[1].structure == "standard" and .[1].low <= 40000 and 40000 <= .[1].high' got \
    > /dev/null || fail "card over state files: $(cat got)"
  same_file sa sa.before
  # Refusals: a damaged state file, state files mixed with streams, bad options.
  head -c 100 sa > damaged
  expect_status 2 "$ONCE" card --state damaged > /dev/null 2> err
  grep -q "damaged" err || fail "no message naming the damaged file: $(cat err)"
  expect_status 1 "$ONCE" card --state sa a > /dev/null 2> err
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

# once card --state names the saved filters; a FILE is always a stream, whatever its
# first bytes (a text starting with "ONCE" was once taken for a truncated state file).
# The man page's example: a saved filter is estimated with --state; given as a stream
# it would be counted as text, so that is refused with what was meant.
case_card_of_a_saved_filter_needs_state() {
  seq 1 100 > in
  "$ONCE" --state seen.once in > /dev/null
  expect_status 1 "$ONCE" card --json seen.once > out 2> err
  grep -q "seen.once is a saved filter, not a stream of lines: once card --state seen.once" err \
    || fail "card of a saved filter as a stream: $(cat err)"
  [ ! -s out ] || fail "an estimate of a saved filter read as text: $(cat out)"
  "$ONCE" card --json --state seen.once > out || fail "card --state exited $?"
  jq -e '.estimate >= 90 and .estimate <= 110' out > /dev/null || fail "card --state: $(cat out)"
  grep -q 'once card \\-\\-json \\-\\-state seen.once' "$SOURCE_DIR/programs/once.1" \
    || fail "the man page's example lacks --state"
}

case_card_state_named() {
  printf 'ONCE upon a time\nfoo\nfoo\nbar\n' > story
  "$ONCE" card --json story > got 2> err || fail "text starting with ONCE refused: $(cat err)"
  jq -e '.name == "story" and .items == 3 and .low <= 3 and 3 <= .high' got > /dev/null \
    || fail "text starting with ONCE not counted as text: $(cat got)"
  "$ONCE" story > got; printf 'ONCE upon a time\nfoo\nbar\n' > want; same_file got want
  # A saved filter given as a FILE would be counted as text: refused, naming --state
  # (case card_of_a_saved_filter_needs_state); text that only starts with ONCE is text.
  seq 1 3000 > a; seq 1 500 > b
  "$ONCE" --capacity 10000 --state sa a > /dev/null
  "$ONCE" --window 1000 --state sb b > /dev/null
  expect_status 1 "$ONCE" card --json sa > got 2> err
  grep -q "once card --state sa" err || fail "a state file as input: $(cat err)"
  # Options that build a filter or read input mean nothing to a saved one: refused.
  for opt in "--capacity 10" "--error 0.1" "--seed 3" "--window 10" "--span 1h" "-f 2" \
    "--ws" "-i" "-z" "--filter blocked" "--max-memory 1G" "--refresh --window 5"; do
    # shellcheck disable=SC2086
    expect_status 1 "$ONCE" card $opt --state sa > got 2> err
    grep -q "estimates saved filters as they were made" err || fail "card $opt: $(cat err)"
  done
  # Several --state files: one estimate each, in order, files unchanged.
  cp sa sa.before; cp sb sb.before
  "$ONCE" card --state sb --state sa > got
  [ "$(wc -l < got)" -eq 2 ] || fail "one line per state file: $(cat got)"
  head -n 1 got | grep -q '^sb: [0-9]* distinct keys (90% interval .*apbf filter)$' \
    || fail "first estimate: $(cat got)"
  tail -n 1 got | grep -q '^sa: [0-9]* distinct keys (90% interval .*blocked filter)$' \
    || fail "second estimate: $(cat got)"
  same_file sa sa.before; same_file sb sb.before
  # No input is read: a pipe on stdin is left alone.
  seq 1 10 | "$ONCE" card --json --state sa > got
  jq -e '.name == "sa" and .items == 3000' got > /dev/null || fail "stdin read: $(cat got)"
  # A corrupt or truncated state, or a missing one, is refused (exit 2, naming it),
  # after the estimates of the good ones.
  head -c 64 sa > truncated
  printf 'ONCE upon a time\n' > text.once
  for bad in truncated text.once missing; do
    expect_status 2 "$ONCE" card --state sa --state "$bad" > got 2> err
    grep -q "'$bad'" err || fail "$bad: no message naming the file: $(cat err)"
    grep -q '^sa: ' got || fail "$bad: the good state was not estimated: $(cat got)"
  done
  # --state with input files is a usage error; plain `once` keeps one state file.
  expect_status 1 "$ONCE" card --state sa story > got 2> err
  grep -q "not both ('story')" err || fail "mixed --state and input: $(cat err)"
  [ ! -s got ] || fail "output despite a usage error"
  expect_status 1 "$ONCE" --state sa --state sb story > got 2> err
  grep -q -- '--state given twice' err || fail "two states for a run: $(cat err)"
  same_file sa sa.before; same_file sb sb.before
}

case_capacity_warning() {
  seq 1 500 > in
  "$ONCE" --capacity 100 in > got 2> err
  [ "$(grep -c 'warning' err)" -eq 1 ] || fail "expected one capacity warning: $(cat err)"
  seq 1 50 > small
  "$ONCE" --capacity 100 small > got 2> err
  [ ! -s err ] || fail "warning below capacity: $(cat err)"
  # The growing filters whose rows each keep --error: their rates add up once a second
  # row (batch) opens, which is warned of once; the scalable filter keeps --error.
  for f in dbf dbpbf; do
    "$ONCE" --capacity 100 --filter $f in > got 2> err
    [ "$(grep -c 'warning: more than 100 distinct keys, one .* their rates add up' err)" -eq 1 ] \
      || fail "$f: expected one warning: $(cat err)"
    "$ONCE" --capacity 100 --filter $f small > got 2> err
    [ ! -s err ] || fail "$f: warning below capacity: $(cat err)"
  done
  "$ONCE" --capacity 100 --filter scalable in > got 2> err
  [ ! -s err ] || fail "scalable warned: $(cat err)"
}

# A timer filter saved when timer filters kept their size (format 1) keeps it: resumed
# on more keys a span than its capacity, it warns once that its rate rises; the same
# options in a new state make a timer filter that grows, and no warning.
case_fixed_timer_warns_once() {
  sed -n 15001,30000p "$SOURCE_DIR/data/events.tsv" > half2
  cp "$SOURCE_DIR/tests/golden/v1/cli/timer.once" state.once
  local opts="--span 10m --filter timer --capacity 1000 -f 3 --time-field 1 --time-format iso8601 --error 0.01"
  # shellcheck disable=SC2086
  "$ONCE" --state state.once $opts half2 > got 2> err || fail "resuming exited $?: $(cat err)"
  [ "$(grep -c 'warning' err)" -eq 1 ] || fail "expected one warning: $(cat err)"
  grep -q 'more than 1000 distinct keys in a span, .* keeps its size' err ||
    fail "the warning does not say why: $(cat err)"
  # shellcheck disable=SC2086
  "$ONCE" --state fresh.once $opts "$SOURCE_DIR/data/events.tsv" > got 2> err ||
    fail "a new state exited $?: $(cat err)"
  [ ! -s err ] || fail "a timer filter that grows warned: $(cat err)"
}

# --capacity with --span is a first guess of keys per span: the timer filter grows past
# it and keeps --error.  20,000 distinct keys at 2,000 a span, twenty times the guess:
# at --error 0.001 about 20 are dropped as false positives; 60 is past any chance.
case_timer_grows_past_its_guess() {
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "key%d\t%.0f\n", i, 1700000000000 + int(i * 2.5) }' > in
  "$ONCE" --span 5s --filter timer --capacity 100 -f 1 --time-field 2 \
    --time-format epoch_ms --seed 5 in > got 2> err || fail "exited $?: $(cat err)"
  local delivered; delivered=$(wc -l < got)
  [ "$delivered" -ge 19940 ] || fail "timer --capacity 100: $delivered of 20000 new keys delivered"
  [ ! -s err ] || fail "a growing window warns: $(cat err)"
}

# One outlier time must not carry a window's clock ahead: a time more than
# --max-time-jump ahead of the wall clock is a bad time, on the first line too.  Lines
# older than the clock minus the span are counted as late, and many of them warned of.
case_outlier_times_and_late_lines() {
  { printf '2100-01-01T00:00:00Z\tfuture\n'
    for i in $(seq 0 99); do printf '2023-01-01T%02d:%02d:00Z\tev%d\n' $((i / 60)) $((i % 60)) $i; done
  } > in
  expect_status 2 "$ONCE" --span 10s -f 2 --time-field 1 --time-format iso8601 in > got 2> err
  grep -q "in:1: time 2100-01-01T00:00:00Z is more than --max-time-jump ahead of the wall clock" err \
    || fail "outlier message: $(cat err)"
  [ ! -s got ] || fail "lines after a failed first line"
  "$ONCE" --span 10s -f 2 --time-field 1 --time-format iso8601 --on-bad-time skip \
    --stats=json in > got 2> err || fail "skip exited $?"
  [ "$(wc -l < got)" -eq 100 ] || fail "one outlier froze the window: $(wc -l < got) of 100 delivered"
  jq -e '.bad_time == 1 and .late == 0' err > /dev/null || fail "outlier stats: $(cat err)"
  # The limit is the wall clock: 0 lifts it, as it lifts the bound on the latest time.
  "$ONCE" --span 10s -f 2 --time-field 1 --time-format iso8601 --max-time-jump 0 in > got \
    || fail "--max-time-jump 0 exited $?"
  # Milliseconds read as seconds are far in the future: the message says so.
  printf '1700000000000\ta\n' > ms
  expect_status 2 "$ONCE" --span 10s -f 2 --time-field 1 ms > got 2> err
  grep -q "use --time-format epoch_ms" err || fail "no hint at epoch_ms: $(cat err)"
  "$ONCE" --span 10s -f 2 --time-field 1 --time-format epoch_ms ms > got || fail "epoch_ms exited $?"
  # Late lines: two of four are older than the clock minus the span.
  printf '1000\ta\n1100\tb\n5\tc\n1\td\n' > late
  "$ONCE" --span 10s -f 2 --time-field 1 --stats=json late > got 2> err
  grep '^{' err | jq -e '.late == 2 and .bad_time == 0' > /dev/null || fail "late count: $(cat err)"
  [ "$(grep -c 'warning: 2 of 4 lines (50.0%) were late' err)" -eq 1 ] || fail "late warning: $(cat err)"
  "$ONCE" --span 10s -f 2 --time-field 1 --stats late > got 2> err
  grep -q "^once: 2 lines were late (older than the latest event time minus the span)" err \
    || fail "late summary: $(cat err)"
  printf '1000\ta\n1001\tb\n' | "$ONCE" --span 10s -f 2 --time-field 1 > got 2> err
  [ ! -s err ] || fail "in-order lines warned: $(cat err)"
}

# A day of events replayed at a short span, into a large window: a line costs what it
# costs, not the window's size at every tick (the passes sweep the buckets the writes
# logged).  100,000 lines once took 2 minutes here at 10M; the bound is far above what
# they take now (docs/BENCHMARKS.md).  Against an exact window of the same span the
# window prints no line that it should drop, and misses few it should print: those a
# tick past their span or false positives.
case_a_day_replayed_at_a_short_span() {
  awk 'BEGIN { srand(7); t = 1700000000000
               for (i = 0; i < 100000; i++) { t += int(rand() * 1728); printf "%d\tk%d\n", t, int(rand() * 20000) } }' > day
  awk -F '\t' '!($2 in at) || $1 - at[$2] >= 10000 { at[$2] = $1; n++ } END { print n }' day > exact
  for capacity in 1000 10M; do
    timeout 30 "$ONCE" --span 10s --capacity "$capacity" --time-field 1 --time-format epoch_ms \
      -f 2 day > got || fail "--capacity $capacity: exit $? (30 s is far past its time)"
    got=$(wc -l < got) exact=$(cat exact)
    [ "$got" -le "$exact" ] && [ "$got" -ge $((exact * 99 / 100)) ] \
      || fail "--capacity $capacity: $got lines, $exact in an exact window"
  done
}

# One range for a target rate, named when refused.
case_error_rate_range() {
  for bad in 1e-20 1e-400 0 1 2 -0.1 abc; do
    expect_status 1 "$ONCE" --error "$bad" < /dev/null 2> err
    grep -q "a target rate is at least 1e-09 and below 1" err || fail "--error $bad: $(cat err)"
  done
  echo a | "$ONCE" --error 1e-9 > got || fail "--error 1e-9 refused"
}

# --progress to a file or a pipe writes plain lines, without the terminal's escapes.
case_progress_to_a_file_is_plain_lines() {
  { seq 1 70000; sleep 1; seq 70001 140000; } | "$ONCE" --progress > /dev/null 2> err
  grep -q '^once: [0-9]* lines, .* distinct, .* MiB$' err || fail "no progress line: $(od -c err | head -3)"
  if LC_ALL=C grep -q "$(printf '[\r\033]')" err; then fail "escapes in progress to a file: $(od -c err | head -3)"; fi
}

# A cap given on a resumed run applies (and is saved); one below what the state holds
# is refused before any input is read.
case_resumed_run_takes_max_memory() {
  seq 1 100000 > in
  "$ONCE" --state st --max-memory 256K --filter scalable --capacity 1000 in > /dev/null 2> err
  [ $? -eq 2 ] && grep -q "max-memory cap of 256 KiB" err || fail "first run: $(cat err)"
  seq 100001 300000 > more
  "$ONCE" --state st --max-memory 64M more > got 2> err || fail "the larger cap did not apply: $(cat err)"
  [ "$(wc -l < got)" -gt 199000 ] || fail "resumed run stopped early: $(wc -l < got) lines"
  "$ONCE" --state st --stats=json < /dev/null > /dev/null 2> err
  bytes=$(jq .bytes err)
  expect_status 1 "$ONCE" --state st --max-memory 64K < /dev/null > /dev/null 2> err
  grep -q "holds $bytes bytes, more than --max-memory 65536" err || fail "cap below the state: $(cat err)"
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

# signal_then_resume SIGNAL STATUS: a run reading a live pipe is stopped by SIGNAL after
# answering the first half; it must exit STATUS having saved its state, so that a
# second run over the other half gives the one-run output.
signal_then_resume() {
  local signal=$1 status=$2
  shift 2 # the rest: options of the stopped run and of the runs it is held to
  awk 'BEGIN { for (i = 0; i < 40000; i++) print i % 25000 }' > in
  head -n 20000 in > p1; tail -n +20001 in > p2
  "$ONCE" --seed 4 "$@" in > want
  want1=$("$ONCE" --seed 4 "$@" p1 | wc -l)
  rm -f st lines answers; mkfifo lines answers
  "$ONCE" --seed 4 --state st "$@" < lines > answers &
  local pid=$!
  exec 3> lines 4< answers
  cat p1 >&3
  # Every line of p1 is answered before the signal: the output is flushed whenever the
  # input would block, so reading the expected number of lines is the handshake.
  head -n "$want1" <&4 > out1
  kill -"$signal" "$pid"
  wait "$pid"; local code=$?
  cat <&4 >> out1
  exec 3>&- 4<&-
  [ "$code" -eq "$status" ] || fail "SIG$signal exit status $code, expected $status"
  [ -s st ] || fail "no state saved on SIG$signal"
  "$ONCE" --state st p2 > out2
  cat out1 out2 > got
  same_file got want
}

case_sigterm_then_resume() {
  signal_then_resume TERM 143
}

case_sighup_then_resume() {
  signal_then_resume HUP 129
}

case_sigterm_then_resume_threads() {
  signal_then_resume TERM 143 --threads 3
}

# A time window in 16 shards (--threads): the state the signal saved resumes on one
# thread, its shards kept.
case_sigterm_then_resume_sharded_window() {
  signal_then_resume TERM 143 --threads 3 --span 1h
}

# A state path is what it names: a link is followed (its target saved, replaced and
# locked, the link left a link), a link to nothing is refused rather than taken for a
# new filter, a FIFO or a directory is refused at once (a FIFO once hung in open), and
# the temporary files of saves that never finished are removed by the next run.
case_state_links_fifos_and_leftovers() {
  seq 1 100 > a; seq 1 150 > b
  mkdir data; "$ONCE" --state data/real.once a > /dev/null
  ln -s data/real.once link.once
  "$ONCE" --state link.once b > got
  seq 101 150 > want; same_file got want
  [ -L link.once ] || fail "the save replaced the link by a file"
  "$ONCE" --state data/real.once b > got; [ ! -s got ] || fail "the target missed the keys"
  ln -s /nonexistent/disk/t.once dangling.once
  expect_status 2 "$ONCE" --state dangling.once a > got 2> err
  grep -qx "once: state file 'dangling.once' is a symbolic link to '/nonexistent/disk/t.once', which does not exist: refused rather than start a new filter there" err \
    || fail "dangling link: $(cat err)"
  [ ! -s got ] && [ -L dangling.once ] || fail "a dangling link's run printed or replaced it"
  mkfifo fifo.once; mkdir dir.once
  expect_status 2 timeout 10 "$ONCE" --state fifo.once a > got 2> err
  grep -qx "once: state file 'fifo.once' is a FIFO, not a saved filter" err || fail "FIFO: $(cat err)"
  expect_status 2 "$ONCE" --state dir.once a > got 2> err
  grep -qx "once: state file 'dir.once' is a directory, not a saved filter" err \
    || fail "directory: $(cat err)"
  expect_status 2 timeout 10 "$ONCE" card --state fifo.once > got 2> err
  # A run through the link and one on the target share one lock.
  rm -f lines answers; mkfifo lines answers
  "$ONCE" --state data/real.once < lines > answers &
  local pid=$!
  exec 3> lines 4< answers
  echo 1000 >&3
  read -r line <&4
  [ "$line" = 1000 ] || fail "first answer: '$line'"
  expect_status 2 "$ONCE" --state link.once a > got 2> err
  grep -q "is in use by another once process (pid $pid)" err || fail "link not locked: $(cat err)"
  exec 3>&-; cat <&4 > /dev/null; exec 4<&-
  wait "$pid" || fail "the holder exited $?"
  # Leftovers of a kill -9 mid-save: removed; a name that only looks alike is kept.
  : > data/real.once.tmp.4242; : > data/real.once.tmp.4243; : > data/real.once.tmp.x1
  "$ONCE" --state link.once a > got 2> err
  [ ! -e data/real.once.tmp.4242 ] && [ ! -e data/real.once.tmp.4243 ] \
    || fail "temporary files left: $(ls data)"
  [ -e data/real.once.tmp.x1 ] || fail "a file not of a save was removed"
  grep -q "removed 2 temporary files of '.*real.once' left by a save that never finished" err \
    || fail "no word of the removal: $(cat err)"
}

# A closed output: the state records the lines written, not those answered after.  From
# a file the input is read again up to the first line not written; from a pipe the state
# is left as it was (the lines written will be delivered again).  No line is lost: what
# the reader got and what a rerun prints cover the input, but false positives.
case_closed_output_records_only_the_lines_written() {
  seq 1 1000000 > in
  local opts="--capacity 2000000 --error 0.0001 --seed 4"
  "$ONCE" $opts --state st in 2> err | head -300000 > got
  grep -q "write error: Broken pipe" err || fail "no write error: $(cat err)"
  local kept
  kept=$(sed -n 's/.*after the \([0-9]*\) input lines before the first line not written.*/\1/p' err)
  [ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$kept" -le 300000 ] || fail "lines recorded: '$kept': $(cat err)"
  "$ONCE" $opts --state st in > again
  # Nothing recorded past the lines written; everything after them printed again.
  awk -v k="$kept" '$1 <= k' again > early
  [ ! -s early ] || fail "$(wc -l < early) lines written before the cut printed again"
  [ "$(wc -l < again)" -ge $((1000000 - kept - 50)) ] || fail "lost: $(wc -l < again) printed after $kept"
  sort -n -u got again | wc -l > covered
  [ "$(cat covered)" -ge $((1000000 - 50)) ] || fail "lines lost: $(cat covered) of 1000000"
  # The same from stdin, a file: read again from where the run began.
  rm -f st
  "$ONCE" $opts --state st < in 2> err | head -5 > got
  grep -q "state saved to 'st' after the" err || fail "stdin file: $(cat err)"
  # From a pipe: the state is left as it was.
  "$ONCE" $opts --state st < in > /dev/null
  cp st before
  seq 1000001 1200000 | "$ONCE" $opts --state st 2> err | head -5 > got
  grep -q "state not saved: 'st' is as it was before this run" err || fail "pipe: $(cat err)"
  same_file st before
}

# A run holds its state from before the load to after the save: a second run on the
# same state is refused at once (exit 2, naming the file and the holder) instead of
# saving over the first run's keys when it ends.
case_state_locked() {
  seq 1 100 > a; seq 101 200 > b; seq 201 300 > c
  "$ONCE" --seed 2 --state st a > /dev/null
  cp st saved
  rm -f lines answers; mkfifo lines answers
  "$ONCE" --state st < lines > answers &
  local pid=$!
  exec 3> lines 4< answers
  # Handshake: the lock is taken before any input is read, so once a line is answered
  # the first run provably holds it (and keeps it until it has saved).
  echo 101 >&3
  read -r line <&4
  [ "$line" = 101 ] || fail "first answer: '$line'"
  [ -e st.lock ] || fail "no lock file beside the state while it is in use"
  expect_status 2 "$ONCE" --state st c > out 2> err
  grep -qx "once: state file 'st' is in use by another once process (pid $pid)" err \
    || fail "refusal of a second run: $(cat err)"
  [ ! -s out ] || fail "the refused run wrote output"
  same_file st saved
  # once card only reads the last saved state: it needs no lock.
  expect_status 0 "$ONCE" card --state st > out 2> err
  grep -q '^st: ' out || fail "card while the state is in use: $(cat out err)"
  tail -n +2 b >&3
  exec 3>&-
  cat <&4 > out1
  exec 4<&-
  wait "$pid"; local code=$?
  [ "$code" -eq 0 ] || fail "the first run exited $code"
  tail -n +2 b > want; same_file out1 want
  [ ! -e st.lock ] || fail "lock file left behind"
  # The first run saved every key it saw; the next run takes the lock in turn.
  cat a b c | "$ONCE" --state st > got; same_file got c
  # A run killed outright leaves its lock file, but flock(2) locks die with their
  # process: the next run goes ahead.
  rm -f lines answers; mkfifo lines answers
  "$ONCE" --state st < lines > answers &
  pid=$!
  exec 3> lines 4< answers
  echo 301 >&3
  read -r line <&4
  kill -KILL "$pid"
  wait "$pid" 2> /dev/null
  exec 3>&- 4<&-
  [ -e st.lock ] || fail "no lock file left by a killed run"
  seq 300 302 | "$ONCE" --state st > got 2> err || fail "stale lock refused: $(cat err)"
  printf '301\n302\n' > want; same_file got want
  [ ! -e st.lock ] || fail "stale lock file left behind"
}

# A state path that cannot be saved is refused before any input is read (exit 2,
# naming the path, no output), not after the whole stream went by unsaved.
case_state_path_checked_first() {
  seq 1 100 > in
  for path in /nonexistent/x.once in/st; do
    expect_status 2 "$ONCE" --state "$path" in > out 2> err
    grep -qF "'$path'" err || fail "$path: message does not name it: $(cat err)"
    [ ! -s out ] || fail "$path: output before the state path was checked"
  done
  # A directory that takes no new files: the save writes a temporary file beside the
  # state.  Root writes anywhere, so this part runs only as another user.
  mkdir ro
  "$ONCE" --state ro/st in > /dev/null
  cp ro/st saved
  chmod 555 ro
  if [ "$(id -u)" -ne 0 ]; then
    seq 101 200 > more # new keys for ro/st too, so an unchecked run would print them
    for path in ro/st ro/new; do
      expect_status 2 "$ONCE" --state "$path" more > out 2> err
      grep -qF "'$path'" err || fail "$path: message does not name it: $(cat err)"
      [ ! -s out ] || fail "$path: output before the state path was checked"
    done
    same_file ro/st saved
    [ "$(ls ro)" = st ] || fail "files left in the read-only directory: $(ls ro)"
  fi
  chmod 755 ro
}

# A slice of a sliced filter (the module's SLICE.* keys save as one) holds positions,
# not keys: as --state it is refused by name, before any line, and left as it was; and
# --filter does not offer it.
case_slice_state_refused() {
  cp "$SOURCE_DIR/tests/golden/v2/slice.once" st
  seq 1 10 > in
  expect_status 2 "$ONCE" --state st in > out 2> err
  grep -q "one slice of a sliced filter" err || fail "message: $(cat err)"
  [ ! -s out ] || fail "lines written before the state was refused"
  same_file st "$SOURCE_DIR/tests/golden/v2/slice.once"
  expect_status 1 "$ONCE" --filter slice in > out 2> err
  grep -q "unknown filter 'slice'" err || fail "--filter slice: $(cat err)"
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

# Whatever stops a run, the state is saved as of the last line answered: the lines
# written are the lines it holds as delivered, so a rerun on the rest of the input
# delivers none twice, and the run says whether and where it saved.
case_stopped_run_keeps_what_was_delivered() {
  # A bad time under --on-bad-time fail, at line 3001 of 5000.
  awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%d\tk%d\n", 1000 + i, i % 3500 }' > in
  sed -i '3001s/^[0-9]*/bad/' in
  expect_status 2 "$ONCE" --state st --span 1h --time-field 1 -f 2 in > got 2> err
  [ "$(wc -l < got)" -eq 3000 ] || fail "lines before the bad one: $(wc -l < got)"
  grep -q "^once: state saved to 'st' after 3000 lines" err || fail "no saved message: $(cat err)"
  sed '1,3001d' in > rest
  "$ONCE" --state st --span 1h --time-field 1 -f 2 rest > got2 || fail "rerun exited $?"
  cat got got2 > all
  sed '3001d' in | awk -F '\t' '!seen[$2]++' > want
  same_file all want
  # Output that cannot be written: exit 2, the state saved as of the lines written
  # (none of this run's: the input read again up to there), and said.
  seq 1 100 > in
  "$ONCE" --state st2 in > /dev/null
  seq 101 200 > more
  expect_status 2 "$ONCE" --state st2 more > /dev/full 2> err
  grep -q 'write error' err || fail "no write error message: $(cat err)"
  grep -q "^once: state saved to 'st2' after the 0 input lines before the first line not written" err \
    || fail "no saved message: $(cat err)"
  "$ONCE" --state st2 more > got
  same_file got more # none of them was delivered: none was recorded
  "$ONCE" --state st2 in > got
  [ ! -s got ] || fail "the state lost the lines of the run before"
  # A closed pipe: the reader took one line; the state holds what was written before
  # the first line not written, and a rerun on the rest prints every line of it.
  seq 1 200000 > big
  "$ONCE" --state st3 big 2> err | head -1 > got
  lines=$(sed -n "s/^once: state saved to 'st3' after the \([0-9]*\) input lines.*/\1/p" err)
  [ -n "$lines" ] || fail "closed pipe messages: $(cat err)"
  sed "1,${lines}d" big | "$ONCE" --state st3 > got
  sed "1,${lines}d" big > want
  same_file got want
  # A memory cap reached: the lines before the refused one are written and held (a
  # few of them false positives of the filter, answered and not printed).
  expect_status 2 "$ONCE" --state st4 --max-memory 256K --filter scalable --capacity 1000 \
    big > got 2> err
  lines=$(sed -n "s/^once: state saved to 'st4' after \([0-9]*\) lines.*/\1/p" err)
  [ -n "$lines" ] && [ "$lines" -gt 1000 ] && [ "$lines" -lt 200000 ] || fail "memory cap: $(cat err)"
  grep -q "stopping before line $((lines + 1)) is answered" err || fail "refused line: $(cat err)"
  comm -13 <(head -n "$lines" big | sort) <(sort got) > extra
  [ ! -s extra ] && [ "$(wc -l < got)" -gt $((lines * 99 / 100)) ] \
    || fail "memory cap: $(wc -l < got) lines written of $lines answered"
  "$ONCE" --state st4 got > again
  [ ! -s again ] || fail "the state lacks lines written before the cap: $(wc -l < again)"
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
  # The run fails, but keeps what it delivered: the state holds the lines written.
  expect_status 2 "$ONCE" --state st in1 nosuch in2 > got 2> err
  same_file got want
  grep -q "^once: state saved to 'st' after 4 lines" err || fail "missing input, state: $(cat err)"
  "$ONCE" --state st in1 in2 > got
  [ ! -s got ] || fail "a rerun delivered again: $(cat got)"
  # No summary either: it would count a run that did not happen as asked.
  expect_status 2 "$ONCE" --stats in1 nosuch > /dev/null 2> err
  grep -q 'lines' err && fail "a summary after a missing input: $(cat err)"
  # once card over streams prints no estimate (it would lack the missing input); over
  # saved filters (--state) it prints each one it can read.  Both exit 2.
  expect_status 2 "$ONCE" card in1 nosuch in2 > out 2> err
  [ ! -s out ] || fail "an estimate despite a missing input: $(cat out)"
  grep -q '^once: nosuch: No such file or directory$' err || fail "card stderr: $(cat err)"
  expect_status 2 "$ONCE" card --state st --state nosuch --state dir > out 2> err
  grep -q '^st: 3 distinct keys' out || fail "card of a state file: $(cat out)"
  [ "$(wc -l < out)" -eq 1 ] || fail "card printed $(wc -l < out) estimates"
  printf "%s\n" "once: cannot open state file 'nosuch': No such file or directory" \
    "once: state file 'dir' is a directory, not a saved filter" > want_err
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
  [ "$(awk 'length > 80' out | wc -l)" -eq 0 ] || fail "--help has lines over 80 columns"
  expect_status 0 "$ONCE" --version > out; grep -q '^once ' out || fail "version text"
  expect_status 0 "$ONCE" --capacity 10k --error 1e-4 < /dev/null
}

# expect_usage_error WANT_FIRST_LINE ARGS...: exit 1 and exactly this first line on stderr.
expect_usage_error() {
  local want=$1; shift
  "$ONCE" "$@" < /dev/null > /dev/null 2> err; local got=$?
  [ "$got" -eq 1 ] || fail "'once $*' exited $got, expected 1"
  [ "$(head -n 1 err)" = "$want" ] || fail "'once $*' said '$(head -n 1 err)', expected '$want'"
}

case_option_errors() {
  # The option is named as typed: a short one inside a group, a long one without its value.
  expect_usage_error "once: unknown option '-x'" -x2
  expect_usage_error "once: unknown option '-k'" -k2
  expect_usage_error "once: unknown option '-x'" -Dx
  expect_usage_error "once: unknown option '-x'" --progress -x2
  expect_usage_error "once: unknown option '-x'" card -x2
  expect_usage_error "once: unknown option '--frobnicate'" --frobnicate
  expect_usage_error "once: unknown option '--frobnicate'" --frobnicate=3
  # An ambiguous prefix lists what it could mean.
  expect_usage_error "once: option '--st' is ambiguous: --state, --stats" --st
  expect_usage_error "once: option '--stat' is ambiguous: --state, --stats" --stat=json
  expect_usage_error "once: option '--time-f' is ambiguous: --time-field, --time-format" --time-f 1
  # A missing value, and a value given to an option that takes none.
  expect_usage_error "once: option '-f' needs a value" -f
  expect_usage_error "once: option '-f' needs a value" -Df
  expect_usage_error "once: option '--field' needs a value" --field
  expect_usage_error "once: option '--fie' needs a value" --fie
  expect_usage_error "once: option '--help' takes no value" --help=1
  expect_usage_error "once: option '--progress' takes no value" --progress=yes
  # An unambiguous prefix still works.
  printf 'a\na\n' | "$ONCE" --dup > got; printf 'a\n' > want; same_file got want
}

case_refused_combinations() {
  # Options that mean nothing together are refused, not ignored.
  expect_usage_error "once: --level does not apply to --filter timer (it has no levels): drop it" \
    --span 1h --filter timer --level 2
  expect_usage_error "once: -D/--duplicates selects lines to print, and \`once card\` prints a count instead of lines: drop one of them" \
    card -D
  expect_usage_error "once: -D/--duplicates selects lines to print, and \`once card\` prints a count instead of lines: drop one of them" \
    card --duplicates
  expect_status 0 "$ONCE" --span 1h --filter tlbf --level 2 < /dev/null
  "$ONCE" --help | tr -s ' \n' ' ' | grep -q '(default 2, and 0 for apbbf; the' || fail "--help: the --level default"
}

# --slicing: vertical slicing prints exactly what the standard filter of the same
# capacity, error and seed prints, on any number of slices and threads; every slicing
# prints no line twice and misses a first occurrence only by a false positive; threads
# change nothing; --stats adds the slices' loads; contradictions are refused.
case_sliced() {
  seq 1 30000 | awk '{ print ($1 * 7919) % 9000 }' > in
  awk_dedup in > want_all
  "$ONCE" --filter standard --capacity 10000 --error 0.01 --seed 9 in > want
  for slices in 1 3 8 64; do
    for threads in 0 1 3; do
      extra=(); [ "$threads" -gt 0 ] && extra=(--threads "$threads")
      "$ONCE" --slicing vertical --slices "$slices" "${extra[@]}" --capacity 10000 \
        --error 0.01 --seed 9 in > got || fail "vertical $slices/$threads exited $?"
      same_file got want
    done
  done
  for mode in "horizontal --slices 8" "diced --slices 4x3" "diced --slices 4x3 --dicing v-h" \
              "diced --slices 2x8 --dicing h-v"; do
    # shellcheck disable=SC2086
    "$ONCE" --slicing $mode --capacity 10000 --error 0.01 --seed 9 in > got || fail "$mode: exit"
    [ -z "$(sort got | uniq -d)" ] || fail "$mode printed a line twice"
    [ "$(comm -23 <(sort got) <(sort want_all) | wc -l)" -eq 0 ] || fail "$mode: a line not in the input"
    [ "$(wc -l < got)" -ge 8900 ] || fail "$mode lost $((9000 - $(wc -l < got))) first occurrences"
    # shellcheck disable=SC2086
    "$ONCE" --slicing $mode --threads 2 --capacity 10000 --error 0.01 --seed 9 in > got2
    same_file got2 got
  done
  "$ONCE" --slicing diced --slices 4x2 --dicing v-h --threads 2 --capacity 10000 --seed 1 \
    --stats=json in > /dev/null 2> err
  jq -e '.structure == "sliced" and .slicing == "diced v-h" and .slices == 4 and .parts == 2
         and .sites == 8 and (.loads | length) == 8 and (.loads | add) >= 30000
         and .max_load == (.loads | max) and .fairness > 0.9 and .fairness <= 1
         and .messages_per_event >= 1 and .messages_per_event <= .hashes
         and .lines == 30000 and .distinct + .duplicates == 30000
         and .fill > 0.3 and .fill < 0.7 and .fpr_estimate > 0 and .fpr_estimate < 0.01' err > /dev/null \
    || fail "sliced stats json: $(cat err)"
  "$ONCE" --slicing horizontal --slices 5 --stats in > /dev/null 2> err
  grep -q 'sliced horizontal over 5 sites' err || fail "human sliced stats: $(cat err)"
  grep -q '^once: events per site: [0-9]* [0-9]* [0-9]* [0-9]* [0-9]*$' err \
    || fail "per-site loads: $(cat err)"
  expect_usage_error "once: --slicing needs --slices S (SxP for diced slicing)" --slicing vertical
  expect_usage_error "once: --slices, --dicing and --slice-growth shape a sliced filter: add --slicing horizontal, vertical or diced" --slices 2
  expect_usage_error "once: unknown slicing 'diagonal' (horizontal, vertical or diced)" --slicing diagonal
  expect_usage_error "once: invalid slices '0' (a number of slices from 1 to 4096, or SxP for diced slicing, e.g. 4x2)" --slicing vertical --slices 0
  expect_usage_error "once: invalid slices '4x' (a number of slices from 1 to 4096, or SxP for diced slicing, e.g. 4x2)" --slicing diced --slices 4x
  expect_usage_error "once: --slicing diced needs --slices SxP (S slices of P parts)" --slicing diced --slices 4
  expect_usage_error "once: --slices 100x100: at most 4096 sites in all" --slicing diced --slices 100x100
  expect_usage_error "once: --slices SxP applies to --slicing diced: give a number of slices" --slicing vertical --slices 4x2
  expect_usage_error "once: --dicing applies to --slicing diced" --slicing vertical --slices 4 --dicing v-h
  expect_usage_error "once: unknown dicing 'x-y' (h-v or v-h)" --dicing x-y
  expect_usage_error "once: invalid threads '0' (1 to 256)" --slicing vertical --slices 2 --threads 0
  expect_usage_error "once: --slicing slices a standard filter: drop --filter blocked" --slicing vertical --slices 2 --filter blocked
  expect_usage_error "once: --capacity and --window exclude each other (the window is the capacity)" --slicing vertical --slices 2 --window 100 --capacity 100
  expect_usage_error "once: --level lays out the slices of a window filter; a sliced filter's windows are timers: drop --level" --slicing vertical --slices 2 --span 1h --level 2
  expect_usage_error "once: --refresh and --level apply to windows: add --window or --span" --slicing vertical --slices 2 --refresh
  expect_usage_error "once: --slicing has no saved form: drop --state" --slicing vertical --slices 2 --state s
  expect_usage_error "once: --max-memory caps a sliced filter that grows, with --span; without it the slices keep the size of --capacity and --error (of N keys with --window N)" --slicing vertical --slices 2 --max-memory 1G
}

# --slicing with --span: the paper's timers on every site; a line is printed iff its
# key was not delivered in the span before its time (Definition 4), exactly as an
# exact model says when the filter is large enough to make false positives improbable,
# late lines included (they expire at their own time plus the span).
case_sliced_span() {
  awk 'BEGIN { srand(7); t = 1000000; for (i = 0; i < 20000; i++) {
         t += int(rand() * 20); late = (rand() < 0.05) ? int(rand() * 500) : 0;
         printf "%d\tk%d\n", t - late, int(rand() * 3000) } }' > in
  awk -F'\t' '{ if (!($2 in last) || $1 - last[$2] >= 2000) { print; last[$2] = $1 } }' in > want
  for mode in "vertical --slices 8" "horizontal --slices 4 --threads 2" "diced --slices 2x3 --dicing v-h --threads 3"; do
    # shellcheck disable=SC2086
    "$ONCE" --slicing $mode --span 2s --time-field 1 --time-format epoch_ms -f 2 \
      --capacity 20000 --error 1e-7 --seed 3 in > got || fail "$mode --span exited $?"
    same_file got want
  done
  [ "$(wc -l < want)" -gt 5000 ] && [ "$(wc -l < want)" -lt 19000 ] || fail "the stream has repeats on both sides of the span"
  # --refresh: a repeat restarts its key's span, delivered or not (the later time stays).
  awk -F'\t' '{ if (!($2 in last) || $1 - last[$2] >= 2000) print
                 if (!($2 in last) || $1 > last[$2]) last[$2] = $1 }' in > want
  "$ONCE" --slicing horizontal --slices 4 --span 2s --refresh --time-field 1 \
    --time-format epoch_ms -f 2 --capacity 20000 --error 1e-7 --seed 3 in > got
  same_file got want
  "$ONCE" --slicing vertical --slices 2 --span 2s --time-field 1 --time-format epoch_ms -f 2 \
    --stats=json in > /dev/null 2> err
  jq -e '.window == 2000 and .window_unit == "ms" and .bad_time == 0' err > /dev/null || fail "sliced span stats: $(cat err)"
  printf '1000\ta\nsoon\tb\n' | "$ONCE" --slicing vertical --slices 2 --span 2s --time-field 1 \
    --time-format epoch_ms -f 2 --on-bad-time skip --stats=json > /dev/null 2> err
  jq -e '.bad_time == 1 and .distinct == 1' err > /dev/null || fail "sliced bad times: $(cat err)"
  printf '1000\ta\nsoon\tb\n' | "$ONCE" --slicing vertical --slices 2 --span 2s --time-field 1 \
    --time-format epoch_ms -f 2 --on-bad-time skip --stats > /dev/null 2> err
  grep -q '^once: 1 line had a bad time (unreadable, before 1970, or too far ahead)$' err || fail "sliced bad times, human: $(cat err)"
  # --max-memory caps the sites' growth: a stream at 100x the capacity a span stops with
  # exit 2 once a site needs a sub-filter past the cap, every line before the failing
  # batch written; a cap below the first sub-filters is refused at the start.
  awk 'BEGIN { for (i = 0; i < 300000; i++) printf "%d\tk%d\n", i, i }' > fast
  "$ONCE" --slicing horizontal --slices 4 --span 100s --time-field 1 --time-format epoch_ms \
    -f 2 --capacity 1000 --max-memory 1M fast > got 2> err
  [ $? -eq 2 ] && grep -q 'a site needs another for the keys of its span, past the memory cap of 1 MiB' err ||
    fail "sliced memory cap: $(cat err)"
  [ "$(wc -l < got)" -gt 1000 ] && [ "$(wc -l < got)" -lt 100000 ] || fail "sliced memory cap printed $(wc -l < got) lines"
  # Under a larger cap a site stops at its most sub-filters, 64: a larger --capacity fits.
  "$ONCE" --slicing horizontal --slices 4 --span 100s --time-field 1 --time-format epoch_ms \
    -f 2 --capacity 1000 --max-memory 64M fast > got 2> err
  [ $? -eq 2 ] && grep -q 'past the 64 a site holds (a larger --capacity grows less)' err ||
    fail "sliced sub-filter limit: $(cat err)"
  "$ONCE" --slicing horizontal --slices 4 --span 100s --time-field 1 --time-format epoch_ms \
    -f 2 --capacity 100000 --max-memory 64M fast > got 2> err || fail "sliced under a larger cap: $(cat err)"
  [ "$(wc -l < got)" -ge 299000 ] || fail "sliced under a larger cap printed $(wc -l < got) lines (all distinct, at error 0.001)"
  expect_status 1 "$ONCE" --slicing vertical --slices 4 --span 1s --capacity 1000000 --max-memory 1M < /dev/null 2> err
  grep -q "first sub-filters alone need" err || fail "sliced cap at creation: $(cat err)"
  # A time too far ahead is a bad time, as for every window.
  printf '1000\ta\n999999999999\tb\n' | "$ONCE" --slicing vertical --slices 2 --span 1s \
    --time-field 1 --time-format epoch_ms -f 2 > /dev/null 2> err
  [ $? -eq 2 ] && grep -q 'more than --max-time-jump' err || fail "time jump on slices: $(cat err)"
}

# --slicing with --window N: timers on the count of keys delivered.  Each line carries
# its number, so the check follows the filter's own answers: a line whose key is among
# the last N printed must not be printed (no false negatives, ever), and one whose key
# is not must be, but for false positives.  Without --refresh the filter holds at most
# N keys, so at the target of 1e-7 the 6,000 or so fresh lines expect 0.0006 of them:
# at most 1.  With --refresh a repeat keeps its key alive without a delivery, so the
# filter holds more keys than N (all 2,500 of this stream at times) and its rate is
# what its fill gives: at most its own estimate's share, with room for chance.
# --slice-growth: through a 5x burst of new keys (every line distinct, so every line
# held back is a false positive), per-site growth lets a vertical filter pass --error
# many times over, and bounded growth keeps it under.
case_sliced_growth() {
  awk 'BEGIN { n = 0; for (t = 0; t < 5000; t++) { c = (t >= 2000 && t < 4000) ? 10 : 2
         for (j = 0; j < c; j++) printf "%d\tk%d\n", 1000000 + t, n++ } }' > burst
  lines=$(wc -l < burst)
  "$ONCE" --slicing vertical --slices 8 --span 1s --time-field 1 --time-format epoch_ms -f 2 \
    --capacity 4000 --error 0.01 --seed 5 burst > per_site || fail "per-site growth exited $?"
  "$ONCE" --slicing vertical --slices 8 --span 1s --slice-growth bounded --time-field 1 \
    --time-format epoch_ms -f 2 --capacity 4000 --error 0.01 --seed 5 burst > bounded ||
    fail "bounded growth exited $?"
  held_per_site=$((lines - $(wc -l < per_site)))
  held_bounded=$((lines - $(wc -l < bounded)))
  [ "$held_per_site" -gt 1000 ] || fail "per-site growth held back only $held_per_site of $lines lines"
  [ "$held_bounded" -lt $((lines / 100)) ] || fail "bounded growth held back $held_bounded of $lines lines"
  "$ONCE" --slicing vertical --slices 8 --span 1s --slice-growth per-site --time-field 1 \
    --time-format epoch_ms -f 2 --capacity 4000 --error 0.01 --seed 5 burst > again
  same_file again per_site
  expect_status 1 "$ONCE" --slicing vertical --slices 8 --slice-growth bounded < /dev/null 2> err
  grep -q -- '--slice-growth is how a sliced time window grows: add --span' err || fail "growth without --span: $(cat err)"
  expect_status 1 "$ONCE" --slicing vertical --slices 8 --span 1s --slice-growth bounded \
    --threads 2 < /dev/null 2> err
  grep -q -- '--slice-growth bounded opens its generations between events, in the reading thread: drop --threads' err ||
    fail "bounded growth with threads: $(cat err)"
  expect_status 1 "$ONCE" --slicing vertical --slices 8 --span 1s --slice-growth sometimes < /dev/null 2> err
  grep -q "unknown slice growth 'sometimes' (per-site or bounded)" err || fail "unknown growth: $(cat err)"
  expect_status 1 "$ONCE" --slice-growth bounded --span 1s < /dev/null 2> err
  grep -q -- 'shape a sliced filter: add --slicing' err || fail "growth without --slicing: $(cat err)"
}

case_sliced_window() {
  awk 'BEGIN { srand(11); for (i = 0; i < 20000; i++) printf "k%d\t%d\n", int(rand() * 2500), i }' > in
  # With --refresh a repeat restarts its key's window, at the count of its time.
  for mode in "vertical --slices 8" "horizontal --slices 4 --threads 2" \
              "diced --slices 2x3 --dicing v-h --threads 3" "vertical --slices 4 --refresh"; do
    refresh=0
    case $mode in *--refresh) refresh=1 ;; esac
    # shellcheck disable=SC2086
    "$ONCE" --slicing $mode --window 1000 -f 1 --error 1e-7 --seed 3 --stats=json in > got 2> stats ||
      fail "$mode --window exited $?"
    awk -F'\t' -v n=1000 -v refresh=$refresh '
      NR == FNR { printed_line[$2] = 1; next }
      { inside = ($1 in at) && printed - at[$1] <= n
        if (inside && ($2 in printed_line)) missed++
        if (!inside && !($2 in printed_line)) kept++
        if (!inside) fresh++
        if ($2 in printed_line) at[$1] = printed++
        else if (refresh) at[$1] = printed }
      END { printf "%d %d %d\n", missed, kept, fresh }' got in > counts
    read -r missed kept fresh < counts
    [ "$missed" -eq 0 ] || fail "$mode --window: $missed keys inside the window printed again"
    allowed=1
    [ $refresh -eq 1 ] &&
      allowed=$(jq -r --argjson fresh "$fresh" '.fpr_estimate * $fresh | . + 4 * (. | sqrt) + 2 | floor' stats)
    [ "$kept" -le "$allowed" ] || fail "$mode --window: $kept keys outside the window dropped (at most $allowed)"
    [ "$fresh" -gt 5000 ] && [ "$fresh" -lt 19000 ] || fail "the stream has repeats on both sides of the window ($fresh)"
  done
  "$ONCE" --slicing horizontal --slices 4 --window 1000 -f 1 --stats=json in > /dev/null 2> err
  jq -e '.window == 1000 and .window_unit == "events" and .filters == 4' err > /dev/null ||
    fail "sliced count window stats: $(cat err)"
  # The edge, exactly: with --window 2 a key is kept while one other follows it (a
  # fixed seed: a filter this small answers a fresh key present 1 time in about 300).
  printf 'a\nb\na\nc\na\nb\n' | "$ONCE" --slicing vertical --slices 2 --window 2 --seed 3 > got
  printf 'a\nb\nc\na\nb\n' > want
  same_file got want
}

# expect_refused WANT ARGS...: exit 1, WANT (a fixed string) on stderr, nothing on stdout.
expect_refused() {
  local want=$1; shift
  "$ONCE" "$@" < /dev/null > out 2> err; local got=$?
  [ "$got" -eq 1 ] || fail "'once $*' exited $got, expected 1: $(head -n 1 err)"
  grep -qF -- "$want" err || fail "'once $*' said '$(head -n 1 err)', expected '$want'"
  [ ! -s out ] || fail "'once $*' wrote to stdout"
}

# --cluster and its options: contradictions are refused while the options are parsed,
# before any connection.  The address given is a loopback port nobody listens on, so a
# run that went as far as the network would end with exit 2 ("cannot reach"), not 1.
case_cluster_usage_errors() {
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2> /dev/null) ||
    port=1
  local node=127.0.0.1:$port
  local cluster=(--cluster "$node" --key f --slicing vertical --slices 3)
  local needs_cluster="--key, --on-failed-slice, --local-filter, --wait and --failover-hold apply to a filter over a cluster: add --cluster HOST:PORT"
  expect_refused "$needs_cluster" --key f
  expect_refused "$needs_cluster" --wait
  expect_refused "$needs_cluster" --failover-hold 5s
  expect_refused "$needs_cluster" --local-filter
  expect_refused "$needs_cluster" --on-failed-slice duplicate
  expect_refused "--cluster needs --key NAME" --cluster "$node"
  expect_refused "a slice is a whole filter of an all-time or time-window structure, not apbf" \
    --cluster "$node" --key f --filter apbf
  expect_refused "--slices SxP applies to --slicing diced" --cluster "$node" --key f --slices 3x2
  expect_refused "--dicing and --slice-growth shape a sliced filter of cells" \
    --cluster "$node" --key f --dicing v-h
  expect_refused "a whole slice's events are duplicate or distinct" \
    --cluster "$node" --key f --on-failed-slice threshold:2
  expect_refused "the cluster's nodes answer for the slices: drop --threads" "${cluster[@]}" --threads 2
  expect_refused "--lag judges late lines at their own time in the tagged time window" \
    "${cluster[@]}" --span 1h --lag 5m
  expect_refused "--lag is at most twice --span" --cluster "$node" --key f --span 1h --lag 3h
  expect_refused "a local filter this run's alone: drop --local-filter" \
    "${cluster[@]}" --window 100 --local-filter
  expect_refused "the slices keep their size: drop --slice-growth" \
    "${cluster[@]}" --slice-growth bounded --span 1h
  expect_refused "the slices keep the size of --capacity and --error: drop --max-memory" \
    "${cluster[@]}" --max-memory 1G --span 1h
  expect_refused "the filter is kept in the cluster under --key, not in a file: drop --state" \
    "${cluster[@]}" --state st
  [ ! -e st ] && [ ! -e st.lock ] || fail "a refused --state made a file"
  expect_refused "invalid --on-failed-slice 'threshold:abc' (threshold:X, X from 0 to k" \
    "${cluster[@]}" --on-failed-slice threshold:abc
  expect_refused "unknown --on-failed-slice policy 'maybe' (distinct, duplicate or threshold:X)" \
    "${cluster[@]}" --on-failed-slice maybe
  expect_refused "invalid --on-failed-slice 'threshold:65'" "${cluster[@]}" --on-failed-slice threshold:65
  expect_refused "invalid failover hold '5 parsecs' (a duration such as 15s or 1m, at most 1d, or 0 for no hold)" \
    "${cluster[@]}" --failover-hold "5 parsecs"
  expect_refused "invalid failover hold '2d'" "${cluster[@]}" --failover-hold 2d
  expect_refused "--leaf is this run's leaf of a Bloom tree: add --tree LxF" "${cluster[@]}" --leaf 1
  expect_refused "--tree is a Bloom tree over the cluster, --slicing a sliced filter" \
    "${cluster[@]}" --tree 3x2
  expect_refused "--leaf 4: the tree has 4 leaves (0 to 3)" --cluster "$node" --key f --tree 3x2 --leaf 4
  expect_refused "invalid tree '1x2'" --cluster "$node" --key f --tree 1x2
  # A filter whose slices would pass 32 MiB each is refused before any connection, with
  # the slices it needs (a slot's key moves whole, stalling its node meanwhile).
  expect_refused "past the 33554432 a slice may take (moving a larger key stalls its node): use 54 slices" \
    "${cluster[@]}" --capacity 1G
  # Past the options, a cluster that cannot be reached is exit 2, at once.
  timeout 20 "$ONCE" --cluster "$node" --key f --slicing horizontal --slices 2 < /dev/null > out 2> err
  local status=$?
  [ "$status" -eq 2 ] || fail "an unreachable cluster exited $status, expected 2: $(cat err)"
  grep -qF -- "once: --cluster $node --key f: cannot reach the cluster" err ||
    fail "an unreachable cluster said: $(cat err)"
  [ ! -s out ] || fail "an unreachable cluster wrote to stdout"
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
  jq -e '.bad_time == 1 and .lines == 3 and .structure == "tagged" and .window == 3600000
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

case_memory_cap_messages() {
  # Past --max-memory the run stops (exit 2) and says what needs how much: here the
  # scalable filter's second sub-filter, for 2000000 keys, does not fit in 3 MiB.
  seq 1 1000100 > in
  expect_status 2 "$ONCE" --max-memory 3M in > got 2> err
  grep -q '^once: in: the scalable filter needs [0-9.]* MiB to grow past 1000000 keys ([0-9.]* MiB held, [0-9.]* MiB more for its next sub-filter, of 2000000 keys), more than the --max-memory cap of 3 MiB; stopping before line [0-9]* is answered$' err \
    || fail "scalable growth past the cap: $(cat err)"
  [ "$(wc -l < got)" -le 1000000 ] || fail "lines past the cap were written"
  # The need stated is the one the cap is held to: a cap of it lets the growth through.
  need_mib=$(sed -n 's/.* needs \([0-9.]*\) MiB to grow.*/\1/p' err)
  "$ONCE" --max-memory "$(awk -v m="$need_mib" 'BEGIN { printf "%d", m * 1024 }')K" in \
    > got || fail "--max-memory ${need_mib} MiB still refuses"
  # At creation: the first sub-filter alone is past the cap.
  expect_status 1 "$ONCE" --max-memory 1M < /dev/null 2> err
  grep -q "^once: the scalable filter's first sub-filter alone needs [0-9.]* MiB, more than --max-memory 1 MiB (for --capacity 1000000 at --error 0.001)$" err \
    || fail "scalable creation past the cap: $(cat err)"
  # The cap counts the bytes that record the options in the filter: a cap that holds the
  # filter without them is refused at the start.
  bytes=$("$ONCE" --stats=json --max-memory 1G < /dev/null 2>&1 > /dev/null | jq -r .bytes)
  expect_status 1 "$ONCE" --max-memory "$((bytes - 1))" < /dev/null 2> err
  grep -q '^once: the scalable filter and the [0-9]* bytes that record its options need more than its memory cap (--max-memory)$' err \
    || fail "options past the cap: $(cat err)"
  "$ONCE" --max-memory "$bytes" < /dev/null || fail "a cap of the filter's bytes refuses"
  expect_status 1 "$ONCE" --span 1h --max-memory 1K < /dev/null 2> err
  grep -q '^once: the tagged filter needs [0-9.]* MiB to start, more than --max-memory 1 KiB' err \
    || fail "tagged creation past the cap: $(cat err)"
  expect_status 1 "$ONCE" --span 1h --filter tlbf --max-memory 1K < /dev/null 2> err
  grep -q '^once: the tlbf filter needs [0-9.]* MiB to start, more than --max-memory 1 KiB' err \
    || fail "tlbf creation past the cap: $(cat err)"
  expect_status 1 "$ONCE" --span 1h --filter timer --max-memory 1K < /dev/null 2> err
  grep -q '^once: the timer filter needs [0-9.]* MiB to start, more than --max-memory 1 KiB' err \
    || fail "timer creation past the cap: $(cat err)"
  # A time window that must hold more keys in its span than the cap allows (every line
  # at the same event time).
  awk 'BEGIN { for (i = 0; i < 100000; i++) print 1000, i }' > burst
  expect_status 2 "$ONCE" --span 1h --filter tlbf --time-field 1 -t ' ' -f 2 --capacity 1000 \
    --max-memory 1M --seed 1 burst > /dev/null 2> err
  grep -q '^once: burst: the tlbf time window holds [0-9.]* KiB and needs more for the keys of its span, past the --max-memory cap of 1 MiB; stopping before line [0-9]* is answered$' err \
    || fail "tlbf growth past the cap: $(cat err)"
  expect_status 2 "$ONCE" --span 1h --time-field 1 -t ' ' -f 2 --capacity 1000 --max-memory 128K \
    --seed 1 burst > /dev/null 2> err
  grep -q '^once: burst: the tagged time window holds [0-9.]* KiB and needs more for the keys of its span, past the --max-memory cap of 128 KiB; stopping before line [0-9]* is answered$' err \
    || fail "tagged growth past the cap: $(cat err)"
}

case_times_before_1970() {
  # The windows' times are unsigned milliseconds since 1970: an earlier time is a bad
  # time, and the message says why rather than "cannot read".
  printf '1970-01-01T00:00:00Z\ta\n1969-12-31T23:59:59Z\tb\n1970-01-01T00:00:01Z\tc\n' > iso
  expect_status 2 "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 iso > got 2> err
  printf '1970-01-01T00:00:00Z\ta\n' > want; same_file got want
  [ "$(cat err)" = "once: iso:2: the time in field 1 is before 1970, which the windows' clock cannot hold (--on-bad-time skip or keep to go on)" ] \
    || fail "before 1970 not explained: $(cat err)"
  "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 --on-bad-time skip \
    --stats=json iso > got 2> err
  printf '1970-01-01T00:00:00Z\ta\n1970-01-01T00:00:01Z\tc\n' > want; same_file got want
  jq -e '.bad_time == 1' err > /dev/null || fail "before 1970 not counted: $(cat err)"
  # A zone can put a 1970 date before 1970 in UTC, or a 1969 date after it.
  printf '1970-01-01T00:30:00+01:00\ta\n' > east
  expect_status 2 "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 east > /dev/null 2> err
  grep -q 'before 1970' err || fail "+01:00 zone: $(cat err)"
  printf '1969-12-31T23:30:00-01:00\ta\n' > west
  "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 west > got; same_file got west
  # Negative epoch times too; garbage is still "cannot read".
  for format in epoch epoch_ms; do
    printf -- '-5 a\n' > neg
    expect_status 2 "$ONCE" --span 1h --time-field 1 --time-format "$format" -t ' ' -f 2 neg \
      > /dev/null 2> err
    grep -q 'neg:1: the time in field 1 is before 1970' err || fail "$format negative: $(cat err)"
  done
  printf '1969-13-01T00:00:00Z\ta\n' > nonsense
  expect_status 2 "$ONCE" --span 1h --time-field 1 --time-format iso8601 -f 2 nonsense \
    > /dev/null 2> err
  grep -q 'cannot read a time from field 1' err || fail "month 13: $(cat err)"
  "$ONCE" --help | tr -s ' \n' ' ' | grep -q 'milliseconds since 1970: an earlier one is a bad time' \
    || fail "--help does not say times before 1970 are bad times"
}

case_durations() {
  # Compound and decimal durations, exact to the millisecond (a span's stats report it
  # as the window, in ms).
  for pair in 1h30m:5400000 1.5h:5400000 90s:90000 90:90000 1.5:1500 500ms:500 \
              2d12h:216000000 1m30s500ms:90500 1.000h:3600000 0.001s:1 0h1ms:1 1min:60000; do
    "$ONCE" --span "${pair%%:*}" --stats=json < /dev/null 2> err
    [ "$(jq -r .window err)" = "${pair##*:}" ] || fail "--span ${pair%%:*}: $(cat err)"
  done
  # Garbage, units out of order or repeated, parts of a millisecond, overflow.
  for bad in 1h-30m h 1.5.2h 1e400h 30m1h 1m1m 1h30 1.h .5h 0.5ms 1.0005s 0 0s '' \
             '1h 30m' 99999999999999999999h 1000000000000d; do
    expect_usage_error "once: invalid span '$bad' (a duration such as 90s, 1h30m, 1.5h or 7d, in whole milliseconds)" \
      --span "$bad"
  done
  expect_usage_error "once: invalid time jump '1h-30m' (a duration such as 6h, 1h30m or 2d, or 0 for no bound)" \
    --span 10s --time-field 1 --max-time-jump 1h-30m
  # --max-time-jump takes them too: B is exactly 1.5 h past A (allowed), C 1.5 h and
  # 1 s past B (a bad time, skipped).
  printf '1000 A\n6400 B\n11801 C\n' > jumps
  printf '1000 A\n6400 B\n' > want
  for jump in 1.5h 1h30m 90m 5400; do
    "$ONCE" --span 10s --time-field 1 -t ' ' -f 2 --max-time-jump "$jump" --on-bad-time skip \
      jumps > got
    same_file got want
  done
  "$ONCE" --span 10s --time-field 1 -t ' ' -f 2 --max-time-jump 1h30m1s jumps > got
  cp jumps want; same_file got want
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

case_key_options() {
  # Several fields: the key is the fields joined, whatever order they are listed in.
  printf 'a\tX\t1\nb\tx\t1\nc\tX\t2\nd\tX\t1\n' > in
  printf 'a\tX\t1\nb\tx\t1\nc\tX\t2\n' > want
  "$ONCE" -f 2,3 in > got; same_file got want
  "$ONCE" -f 3,2 in > got; same_file got want
  # -i: keys differing in ASCII case only are one key; the first spelling is printed.
  printf 'a\tX\t1\nc\tX\t2\n' > want
  "$ONCE" -f 2,3 -i in > got; same_file got want
  printf 'Foo\nfoo\nFOO\nbar\n\xc3\x89t\xc3\xa9\n\xc3\xa9t\xc3\xa9\n' > case
  printf 'Foo\nbar\n\xc3\x89t\xc3\xa9\n\xc3\xa9t\xc3\xa9\n' > want # bytes past ASCII as they are
  "$ONCE" --ignore-case case > got; same_file got want
  "$ONCE" -i -D case > got; printf 'foo\nFOO\n' > want; same_file got want
  # Ranges, in awk's whitespace splitting: runs of blanks, ends ignored.
  printf '1 2 3 4\n9  2\t3 4\n9 2 3 5\n  0 2 3 5  \n' > ws
  printf '1 2 3 4\n9 2 3 5\n' > want
  "$ONCE" --ws -f 2-4 ws > got; same_file got want
  awk '!seen[$2 " " $3 " " $4]++' ws > want; same_file got want
  # -t ' ' is one literal space, as in sort and cut: two spaces make an empty field.
  printf 'a  b\na b\n' > sp
  "$ONCE" -t ' ' -f 2 sp > got; same_file got sp
  "$ONCE" --ws -f 2 sp > got; printf 'a  b\n' > want; same_file got want
  # Time fields are split the same way.
  printf '1000   A\n1001 A\n5000 A\n' > times
  "$ONCE" --span 2s --time-field 1 --ws -f 2 times > got
  printf '1000   A\n5000 A\n' > want; same_file got want
  # Bad lists are usage errors.
  for bad in 0 1,0 3-2 a 1, ,1 1-2-3 -1 1000001 1-65; do
    expect_status 1 "$ONCE" -f "$bad" < /dev/null 2> err
    grep -q "invalid field list '$bad'" err || fail "-f $bad: $(cat err)"
  done
  expect_status 1 "$ONCE" --ws -t , < /dev/null 2> /dev/null
  expect_status 1 "$ONCE" -t , --ws < /dev/null 2> /dev/null
}

case_state_keeps_options() {
  # The options that shape keys and the layout are kept in the state file: a resumed
  # run uses them, and one that contradicts them is refused (exit 1) with the state as
  # it was.
  printf 'a,1\nb,1\n' > p1; printf 'c,1\nd,2\n' > p2
  "$ONCE" -f 2 -t , --seed 1 --state st p1 > got
  printf 'a,1\n' > want; same_file got want
  cp st st.before
  for opt in "-f 1" "-f 2,3" "-t ;" "--ws" "-i"; do
    # shellcheck disable=SC2086
    expect_status 1 "$ONCE" $opt --state st p2 > got 2> err
    [ ! -s got ] || fail "$opt: output from a refused run"
    grep -q "conflicts with state file 'st', made with -f 2 -t ','" err || fail "$opt: $(cat err)"
  done
  same_file st st.before
  "$ONCE" --state st p2 > got; printf 'd,2\n' > want; same_file got want
  "$ONCE" -f 2 -t , --state st p2 > got; [ ! -s got ] || fail "restated options: new lines"
  # A whole-line state stays whole-line: -f on it is refused.
  printf 'x\ty\n' > line
  "$ONCE" --state whole line > /dev/null
  expect_status 1 "$ONCE" -f 2 --state whole line > /dev/null 2> err
  grep -q "made with the whole line as the key" err || fail "whole line: $(cat err)"
  # Case folding is kept.
  printf 'K\n' | "$ONCE" -i --state folded > /dev/null
  printf 'k\n' | "$ONCE" --state folded > got; [ ! -s got ] || fail "-i not kept"
  # The window layout's level, and the refresh policy, are kept.
  seq 10 | "$ONCE" --window 100 --state w > /dev/null
  expect_status 1 "$ONCE" --window 100 --level 3 --state w < /dev/null 2> err
  grep -q -- "--level conflicts .*made with --level 2" err || fail "level: $(cat err)"
  expect_status 0 "$ONCE" --window 100 --level 2 --state w < /dev/null
  expect_status 1 "$ONCE" --window 100 --refresh --state w < /dev/null 2> /dev/null
  seq 10 | "$ONCE" --window 100 --refresh --state wr > /dev/null
  expect_status 0 "$ONCE" --window 100 --state wr < /dev/null
  # Where times come from: a state on event times from field 1 resumes on them; the
  # clock at reading, or another field, contradicts it.
  printf '1000 a\n' > t1; printf '1001 a\n1002 b\n' > t2
  "$ONCE" --span 1h --time-field 1 -t ' ' -f 2 --state ts t1 > /dev/null
  "$ONCE" --span 1h --state ts t2 > got; printf '1002 b\n' > want; same_file got want
  expect_status 1 "$ONCE" --span 1h --time-field 2 --state ts t2 > /dev/null 2> err
  grep -q -- "--time-field conflicts .*made with --time-field 1 --time-format epoch" err ||
    fail "time field: $(cat err)"
  expect_status 1 "$ONCE" --span 1h --level 5 --state ts t2 > /dev/null 2> /dev/null
  "$ONCE" --span 1h --state tc < /dev/null
  expect_status 1 "$ONCE" --span 1h --time-field 1 --state tc < /dev/null 2> err
  grep -q "made with the clock at reading" err || fail "clock: $(cat err)"
}

# match_output EXPECTED ACTUAL: the same lines, where "..." in an expected line stands
# for any text (timings) and each number may differ by 0.5% (a random seed moves an
# estimate by a few keys; a stale example is off by far more).
match_output() {
  perl -e '
    open(my $e, "<", $ARGV[0]) or die; open(my $a, "<", $ARGV[1]) or die;
    my @e = <$e>; my @a = <$a>; chomp(@e, @a);
    my $ok = @e == @a;
    print STDERR "expected ", scalar(@e), " lines, got ", scalar(@a), "\n" unless $ok;
    for my $i (0 .. ($#e < $#a ? $#e : $#a)) {
      my @parts = split /(\.\.\.|\d+(?:\.\d+)?(?:e-?\d+)?)/, $e[$i];
      my ($re, @want) = ("");
      for my $p (@parts) {
        if ($p eq "...") { $re .= ".*?" }
        elsif ($p =~ /^\d/) { $re .= "(\\d+(?:\\.\\d+)?(?:e-?\\d+)?)"; push @want, $p }
        else { $re .= quotemeta $p }
      }
      my @got = $a[$i] =~ /^$re$/;
      my $line_ok = @got == @want;
      for my $j (0 .. $#want) {
        last unless $line_ok;
        my $tol = 0.005 * abs($want[$j]);
        $line_ok = abs($got[$j] - $want[$j]) <= $tol;
      }
      print STDERR "expected: $e[$i]\n     got: $a[$i]\n" unless $line_ok;
      $ok &&= $line_ok;
    }
    exit($ok ? 0 : 1);
  ' "$1" "$2"
}

# A state saved by the last `once` of format 1 (tests/golden/v1/cli: its expected.txt
# says how each was made) resumes here exactly as that `once` resumed it: the same
# lines printed and the same state left (the filter keeps format 1 and its probe, and
# --stats says so).
case_format1_state_resumes() {
  sed -n 15001,30000p "$SOURCE_DIR/data/events.tsv" > half2
  local dir="$SOURCE_DIR/tests/golden/v1/cli" resumed=0
  while read -r name lines output state options; do
    case $name in '#'*|'') continue ;; esac
    cp "$dir/$name.once" state.once
    # shellcheck disable=SC2086
    "$ONCE" --state state.once --stats=json $options half2 > got 2> stats ||
      fail "$name: resuming a format-1 state exited $?: $(cat stats)"
    [ "$(wc -l < got)" -eq "$lines" ] || fail "$name: printed $(wc -l < got) lines, format 1 printed $lines"
    [ "$(sha256sum < got | cut -c1-64)" = "$output" ] || fail "$name: prints other lines than format 1"
    [ "$(sha256sum < state.once | cut -c1-64)" = "$state" ] || fail "$name: leaves another state than format 1"
    grep '^{' stats | jq -e '.format == 1 and (.probe == "linear" or .probe == "blocked")' > /dev/null ||
      fail "$name: stats do not say format 1: $(cat stats)"
    "$ONCE" --state state.once --stats $options < /dev/null 2>&1 > /dev/null |
      grep -q 'saved in format 1' || fail "$name: the human stats do not name format 1"
    resumed=$((resumed + 1))
  done < "$dir/expected.txt"
  [ "$resumed" -eq 4 ] || fail "resumed $resumed format-1 states, not 4"
}

case_options_listed_alike_everywhere() {
  # The options `once` accepts are the rows of its option table that parse a value
  # (programs/options.c; a row without a function only adds help); --help, the manual
  # page and the README's table each describe them in their own words, and each must
  # list exactly that set: an option added, renamed or dropped in one place and not
  # the others fails here by name.
  sed -n '/static const cli_option options\[\] = {/,/^};/p' "$SOURCE_DIR/programs/options.c" |
    tr '\n' ' ' | grep -oE '\{"[a-z][a-z0-9-]*", [^,]+, [a-z_]+, [^,]+, [a-z_]+' |
    grep -v ', NULL$' | grep -oE '^\{"[a-z][a-z0-9-]*"' | sed 's/{"/--/; s/"$//' |
    sort -u > accepted
  [ "$(wc -l < accepted)" -ge 30 ] || fail "found only $(wc -l < accepted) options in options.c"
  "$ONCE" --help | grep -oE -- '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' |
    grep -oE -- '--[a-z0-9-]+' | sort -u > help
  grep -A1 '^\.TP' "$SOURCE_DIR/programs/once.1" | grep -oE -- '\\-\\-[a-z]([a-z0-9]|\\-)*' |
    sed 's/\\//g' | sort -u > manual
  grep -E '^\| `-' "$SOURCE_DIR/README.md" | cut -d'|' -f2 |
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u > readme
  for place in help manual readme; do
    if ! cmp -s accepted "$place"; then
      fail "$place lists other options than options.c accepts:"
      diff accepted "$place" | sed -n 's/^</  not in '"$place"':/p; s/^>/  only in '"$place"':/p' >&2
    fi
  done
}

case_readme_examples() {
  # Every README block that opens with a "$ " command is a session: its commands run in
  # order, in one directory holding the sample stream as events.tsv, with `once` on the
  # PATH, and each must exit 0 and print what the README shows (stdout and stderr).
  mkdir bin && ln -s "$ONCE" bin/once
  cp "$SOURCE_DIR/data/events.tsv" events.tsv
  awk -v dir="$WORK" '
    /^```/ && mode == "" { mode = "opening"; next }
    /^```/ { mode = ""; next }
    mode == "opening" { mode = /^\$ / ? "session" : "other" }
    mode == "session" && /^\$ / {
      n++; want = dir "/want." n
      print substr($0, 3) > (dir "/cmd." n); printf "" > want; next
    }
    mode == "session" { print > want }
  ' "$SOURCE_DIR/README.md"
  local n=0
  while [ -f "cmd.$((n + 1))" ]; do
    n=$((n + 1))
    PATH="$WORK/bin:$PATH" bash -c "$(cat "cmd.$n")" > "got.$n" 2>&1 ||
      fail "README example exited $?: $(cat "cmd.$n")"
    match_output "want.$n" "got.$n" || fail "README example prints otherwise: $(cat "cmd.$n")"
  done
  [ "$n" -ge 8 ] || fail "only $n README examples found"
}

if ! declare -F "case_$CASE" > /dev/null; then
  echo "no such case: $CASE" >&2
  exit 2
fi
"case_$CASE"
[ "$failures" -eq 0 ] && echo "PASS $CASE" || echo "FAIL $CASE ($failures)"
[ "$failures" -eq 0 ]
