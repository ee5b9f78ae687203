#!/bin/sh
# run_fuzz.sh FUZZ_LOAD FUZZ_CORPUS WORKDIR
#
# One time-boxed libFuzzer run of the loader from a fresh seed corpus.  Everything the
# run writes (corpus growth, crash and timeout artifacts, the log) stays in WORKDIR,
# inside the build tree; a failing input is left there as WORKDIR/artifacts/crash-*.
set -eu

fuzzer=$1
corpus_tool=$2
work=$3

rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
"$corpus_tool" "$work/corpus"

status=0
"$fuzzer" -max_total_time=30 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    tail -n 60 "$work/fuzz.log"
    echo "fuzz_load failed (exit $status); inputs kept in $work/artifacts/" >&2
    exit 1
fi
tail -n 15 "$work/fuzz.log"
