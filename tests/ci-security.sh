#!/bin/sh
# Security CI (issue 6): builds the source twice more, instrumented, and runs
# the whole test suite in each, then fuzzes for a bounded time.
#
#   asan  ASan + UBSan: clang (gcc when clang is missing) -fsanitize=address,undefined;
#         `make check` with leak detection on; any report fails the run.
#   tsan  ThreadSanitizer: gcc -fsanitize=thread; `make check` with CK_FORK=no
#         (TSan and fork() in a threaded program do not mix).
#   fuzz  a third tree, clang -fsanitize=address,undefined,fuzzer-no-link
#         --enable-fuzzers, building only what the harnesses need (gpu, queue,
#         provider, tests/fuzz), then tests/fuzz/run-fuzzers.sh: each harness
#         FUZZ_SECONDS (default 30) from the committed seeds; any crash fails.
#         Coverage instrumentation stays out of the asan tree: it would slow
#         every test there for nothing.
#
# usage: tests/ci-security.sh [asan] [tsan] [fuzz]      (default: all three)
# environment: GPURSA_SEC_BUILDDIR (default _build-security in the source tree),
#   JOBS (default nproc), FUZZ_SECONDS, FUZZ_JOBS (harnesses in parallel,
#   above 1 runs all harnesses at once; default JOBS). Exit status: 0 clean, 1 not.
#
# Notes
# - CUDA is left out of both trees (--without-cuda): nvcc code is not
#   instrumented and there is no GPU in CI; the host backend runs the same
#   kernel arithmetic.
# - libcrypto from the distribution is not instrumented. ASan still sees every
#   buffer gpursa allocates or is handed; UBSan sees our code only. For TSan,
#   OpenSSL's internal locks and atomics are invisible: TSan intercepts the
#   pthread calls libcrypto makes, but not its inline atomics, so only races in
#   gpursa's own code (provider, queue, host backend) are in scope.
# - Programs that are not ours but load the instrumented module (the openssl
#   CLI, haproxy, nginx) run through wrappers that preload the sanitizer
#   runtime; leak detection is off in haproxy and nginx (their own exit-time
#   leaks are not ours) and on everywhere else.
# - The valgrind constant-time tests cannot run under a sanitizer: VALGRIND
#   names a missing program, so they skip (exit 77) here and run in the normal
#   `make check`.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${GPURSA_SEC_BUILDDIR:-$src/_build-security}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
steps=${*:-asan tsan fuzz}
t0=$(date +%s)
status=0

say() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }

[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh) || exit 1
mkdir -p "$out"

# wrappers DIR RUNTIME: openssl, haproxy and nginx with RUNTIME preloaded
wrappers() {
    mkdir -p "$1"
    for prog in openssl haproxy nginx; do
        real=$(PATH=$PATH:/usr/sbin:/sbin command -v $prog) || continue
        case $prog in
            openssl) extra="" ;;
            *) extra="ASAN_OPTIONS=\${ASAN_OPTIONS:-}:detect_leaks=0 TSAN_OPTIONS=\${TSAN_OPTIONS:-}:die_after_fork=0" ;;
        esac
        cat >"$1/$prog" <<EOW
#!/bin/sh
# $prog with the sanitizer runtime preloaded (it loads the instrumented gpursa.so)
LD_PRELOAD="$2\${LD_PRELOAD:+:\$LD_PRELOAD}" $extra exec "$real" "\$@"
EOW
        chmod +x "$1/$prog"
    done
}

# build NAME CC RUNTIME configure-args...: configure (once) and make
build() {
    name=$1 cc=$2 rt=$3
    shift 3
    dir=$out/$name
    mkdir -p "$dir"
    say "$name: configure and build ($cc $*)"
    if [ ! -f "$dir/Makefile" ]; then
        (cd "$dir" && "$src/configure" -q --without-cuda CC="$cc" "$@") >"$dir/configure.log" 2>&1 ||
            { tail -30 "$dir/configure.log"; return 1; }
    fi
    (cd "$dir" && make -j"$jobs") >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; return 1; }
    wrappers "$dir/san-bin" "$rt"
}

# check NAME [VAR=VALUE...]: make check in the tree, wrappers first in PATH
check() {
    name=$1
    shift
    dir=$out/$name
    say "$name: make check"
    if (cd "$dir" && env PATH="$dir/san-bin:$PATH" VALGRIND=gpursa-no-valgrind "$@" \
            make -k -j"$jobs" check OPENSSL="$dir/san-bin/openssl" VALGRIND=gpursa-no-valgrind) \
            >"$dir/check.log" 2>&1; then
        grep -h '^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\)' "$dir/check.log" | awk '{ s[$2] += $3 } END {
            printf "   total %d, pass %d, skip %d, fail %d, error %d\n", s["TOTAL:"], s["PASS:"],
                s["SKIP:"], s["FAIL:"], s["ERROR:"] }'
        return 0
    fi
    echo "$name: make check FAILED; failing logs:"
    find "$dir" -name '*.log' -newer "$dir/build.log" | xargs grep -l '^\(FAIL\|ERROR\)\|^# FAIL: *[1-9]\|Sanitizer' 2>/dev/null |
        grep -v 'check.log\|test-suite.log' | head -20 | while read -r f; do
            echo "--- $f"; tail -40 "$f"
        done
    grep -h '^\(FAIL\|ERROR\):' "$dir/check.log" | head -40
    return 1
}

for step in $steps; do
    case $step in
    asan)
        if command -v clang >/dev/null 2>&1 &&
                rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so) && [ -f "$rt" ]; then
            cc=clang
        else
            cc=gcc rt=$(gcc -print-file-name=libasan.so)
        fi
        build asan $cc "$rt" --enable-sanitizers=address,undefined || { status=1; continue; }
        # No detect_stack_use_after_return: OpenSSL's ASYNC jobs switch stacks
        # with swapcontext, and ASan's fake stacks then report false
        # stack-use-after-return (the queue's async tests showed one).
        # For whole leak stacks through libcrypto add fast_unwind_on_malloc=0.
        check asan ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1:check_initialization_order=1" \
            UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" CK_TIMEOUT_MULTIPLIER=4 || status=1
        ;;
    tsan)
        rt=$(gcc -print-file-name=libtsan.so)
        build tsan gcc "$rt" --enable-sanitizers=thread || { status=1; continue; }
        check tsan TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$src/tests/security/tsan.supp" \
            CK_FORK=no CK_TIMEOUT_MULTIPLIER=10 GPURSA_TEST_SCALE=8 || status=1
        ;;
    fuzz)
        if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' |
                clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
            echo "fuzz: clang with libFuzzer not found (Debian: clang libclang-rt-14-dev)"
            status=1
            continue
        fi
        dir=$out/fuzz
        mkdir -p "$dir"
        say "fuzz: configure and build the harnesses"
        if [ ! -f "$dir/Makefile" ]; then
            (cd "$dir" && "$src/configure" -q --without-cuda CC=clang \
                --enable-sanitizers=address,undefined,fuzzer-no-link --enable-fuzzers) \
                >"$dir/configure.log" 2>&1 || { tail -30 "$dir/configure.log"; status=1; continue; }
        fi
        (cd "$dir" && for d in gpu queue provider tests/fuzz; do make -j"$jobs" -C $d || exit 1; done) \
            >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; status=1; continue; }
        say "fuzz: ${FUZZ_SECONDS:-30}s per harness"
        FUZZ_JOBS=${FUZZ_JOBS:-$jobs} "$src/tests/fuzz/run-fuzzers.sh" "$dir/tests/fuzz" \
            "${FUZZ_SECONDS:-30}" || status=1
        ;;
    *)
        echo "unknown step $step (asan, tsan, fuzz)"; exit 2 ;;
    esac
done
say "done: $( [ $status -eq 0 ] && echo clean || echo FAILED )"
exit $status
