#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run each libFuzzer harness for a bounded time from the committed seeds and
# regression inputs; fail on any crash, sanitizer report, oracle abort, hang
# (-timeout per input) or out-of-memory. New interesting inputs go to a work
# corpus (never into the source tree); a crashing input is kept under
# WORKDIR/artifacts: copy it to tests/fuzz/regress/<harness>/ and `make check`
# replays it from then on (replay_<harness>).
#
# usage: run-fuzzers.sh BUILD_FUZZ_DIR [SECONDS_EACH] [HARNESS...]
#   BUILD_FUZZ_DIR: tests/fuzz of a tree configured with CC=clang --enable-fuzzers
#   SECONDS_EACH:   default 30
#   environment: FUZZ_WORKDIR (default BUILD_FUZZ_DIR/fuzz-work), FUZZ_JOBS
#   (above 1: all harnesses at once; default 1, one after another), FUZZ_ARGS
set -u
here=$(cd "$(dirname "$0")" && pwd)
bdir=${1:?usage: run-fuzzers.sh BUILD_FUZZ_DIR [SECONDS_EACH] [HARNESS...]}
secs=${2:-30}
[ $# -ge 2 ] && shift 2 || shift $#
harnesses=${*:-decrypt sign_params key_import config}
work=${FUZZ_WORKDIR:-$bdir/fuzz-work}
jobs=${FUZZ_JOBS:-1}
mkdir -p "$work/artifacts"

# LeakSanitizer runs once at exit; malloc limits catch runaway allocations.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

run_one() { # harness
    h=$1
    bin=$bdir/fuzz_$h
    if [ ! -x "$bin" ]; then
        echo "FAIL $h: $bin not built (configure CC=clang --enable-fuzzers)"
        return 1
    fi
    mkdir -p "$work/corpus/$h"
    # the first directory receives new inputs; the committed ones are read only
    "$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$h-" ${FUZZ_ARGS:-} \
        "$work/corpus/$h" "$here/corpus/$h" $( [ -d "$here/regress/$h" ] && echo "$here/regress/$h" ) \
        >"$work/$h.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log")
    cov=$(grep -o 'cov: [0-9]*' "$work/$h.log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "FAIL $h: exit $rc after ${runs:-?} runs; last lines of $work/$h.log:"
        grep -v '^#[0-9]' "$work/$h.log" | tail -40 | sed 's/^/    /'
        ls "$work/artifacts/$h-"* 2>/dev/null | sed "s|^|    crashing input: |;s|\$| -> copy to tests/fuzz/regress/$h/|"
        return 1
    fi
    echo "ok   $h: ${runs:-?} runs in ${secs}s, $cov, corpus $(ls "$work/corpus/$h" | wc -l) new inputs"
}

failed=0
if [ "$jobs" -gt 1 ]; then
    pids=""
    for h in $harnesses; do
        run_one "$h" >"$work/$h.result" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || failed=1; done
    for h in $harnesses; do cat "$work/$h.result"; done
else
    for h in $harnesses; do run_one "$h" || failed=1; done
fi
exit $failed
