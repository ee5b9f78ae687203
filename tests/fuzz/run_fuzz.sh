#!/bin/sh
# run_fuzz.sh FUZZER SEED_TOOL CORPUS_DIR WORKDIR [SECONDS]
#
# FUZZER is a libFuzzer target (fuzz_load, fuzz_delta), SEED_TOOL the program that writes
# its seeds into a directory (fuzz_corpus, fuzz_delta_corpus).
#
# Without SECONDS (the fuzz stage of `make test`), deterministic: every input of the
# committed corpus CORPUS_DIR and every seed fuzz_corpus writes is replayed once, then
# a fixed-seed run of a fixed number of inputs mutates them.  The same build gives the
# same run, so a change fails only on what it breaks, not on what a new random seed
# happens to find.
#
# With SECONDS (`make fuzz`): open-ended fuzzing from a random seed for that long.
# Inputs that widen coverage go to WORKDIR/corpus; a failing input is left in
# WORKDIR/artifacts/ (crash-*, timeout-*, oom-*).  Add each failing input to the
# committed corpus, under a name that says what it broke, once it is fixed.
#
# Everything the run writes stays in WORKDIR, inside the build tree.
set -eu

fuzzer=$1
corpus_tool=$2
committed=$3
work=$4
seconds=${5:-}

# Fixed for `make test`: change them only together with the committed corpus.  A target
# whose inputs cost more sets fewer runs (FUZZ_RUNS, from its CTest registration).
FIXED_SEED=20240101
FIXED_RUNS=${FUZZ_RUNS:-1000000}

# The seeds are rewritten every run; in the deterministic run so are the artifacts,
# so that what is there comes from this run.
if [ -z "$seconds" ]; then
    rm -rf "$work/artifacts"
fi
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
rm -f "$work/seeds"/*
"$corpus_tool" "$work/seeds"

common="-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$work/artifacts/"

status=0
if [ -z "$seconds" ]; then
    # Replay: each input once, as it is (the directories are only read).
    # shellcheck disable=SC2086
    "$fuzzer" $common -runs=0 "$committed" "$work/seeds" >"$work/replay.log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$work/replay.log"
        echo "$(basename "$fuzzer"): a corpus input fails (exit $status); see $work/artifacts/" >&2
        exit 1
    fi
    # Then a bounded run from a fixed seed, its new inputs in a scratch corpus so the
    # next run starts from the same place.
    rm -rf "$work/fixed"
    mkdir -p "$work/fixed"
    # shellcheck disable=SC2086
    "$fuzzer" $common -seed=$FIXED_SEED -runs=$FIXED_RUNS "$work/fixed" "$committed" \
        "$work/seeds" >"$work/fuzz.log" 2>&1 || status=$?
else
    # shellcheck disable=SC2086
    "$fuzzer" $common -max_total_time="$seconds" "$work/corpus" "$committed" "$work/seeds" \
        >"$work/fuzz.log" 2>&1 || status=$?
fi
if [ "$status" -ne 0 ]; then
    tail -n 60 "$work/fuzz.log"
    echo "$(basename "$fuzzer") failed (exit $status); inputs kept in $work/artifacts/" >&2
    exit 1
fi
tail -n 15 "$work/fuzz.log"
