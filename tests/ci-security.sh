#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Security CI: builds the source twice more, instrumented, and runs
# the whole test suite in each, then fuzzes for a bounded time.
#
#   asan  ASan + UBSan: clang (gcc when clang is missing) -fsanitize=address,undefined;
#         `make check` in every tests/ folder with leak detection on; any report
#         fails the run. GPURSA_TEST_SCALE=4 thins the random cases of the GMP
#         suites (tests/gpu, tests/queue), never their edge cases.
#   tsan  ThreadSanitizer: gcc -fsanitize=thread; `make check` with CK_FORK=no
#         (TSan and fork() in a threaded program do not mix) and
#         GPURSA_TEST_SCALE=8, leaving out what TSan cannot add to or cannot
#         run (see the tsan_* lists below: single-threaded arithmetic, the fork
#         test, the servers' timed shutdowns).
#   fuzz  a third tree, clang -fsanitize=address,undefined,fuzzer-no-link
#         --enable-fuzzers, building only what the harnesses need (gpu, queue,
#         provider, tests/fuzz), then tests/fuzz/run-fuzzers.sh: each harness
#         FUZZ_SECONDS (default 30) from the committed seeds; any crash fails.
#         Coverage instrumentation stays out of the asan tree: it would slow
#         every test there for nothing.
# tests/run-all.sh (README's test command, what CI runs) runs all three after
# the plain `make check`.
#
# usage: tests/ci-security.sh [asan] [tsan] [fuzz]      (default: all three)
# environment: GPURSA_SEC_BUILDDIR (default _build-security in the source tree),
#   JOBS (default nproc), FUZZ_SECONDS, FUZZ_JOBS (harnesses in parallel,
#   above 1 runs all harnesses at once; default JOBS), GPURSA_SEC_FOLDERS (for
#   debugging: only these tests/ folders, e.g. "queue tls"; default all).
#   Exit status: 0 clean, 1 not.
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
#   leaks are not ours) and on everywhere else, and TSan ignores what it sees
#   only through their own uninstrumented calls (their fd handling).
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

# wrappers DIR RUNTIME: openssl, haproxy and nginx with RUNTIME preloaded, and
# san-server PROGRAM ARGS... for a server found elsewhere (tests/tls's async nginx, built
# by the tests: TLS_SERVER_WRAPPER)
wrappers() {
    mkdir -p "$1"
    server_env="ASAN_OPTIONS=\${ASAN_OPTIONS:-}:detect_leaks=0 TSAN_OPTIONS=\${TSAN_OPTIONS:-}:die_after_fork=0:ignore_noninstrumented_modules=1"
    for prog in openssl haproxy nginx san-server; do
        case $prog in
            san-server) real="" run="" ;;
            *) real=$(PATH=$PATH:/usr/sbin:/sbin command -v $prog) || continue; run="\"$real\"" ;;
        esac
        case $prog in
            openssl) extra="" ;;
            *) extra=$server_env ;;
        esac
        cat >"$1/$prog" <<EOW
#!/bin/sh
# ${real:-a server} with the sanitizer runtime preloaded (it loads the instrumented gpursa.so)
LD_PRELOAD="$2\${LD_PRELOAD:+:\$LD_PRELOAD}" $extra exec $run "\$@"
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
    # the C++ tests (tests/gpu/test_gpu_fx.cc) with the same compiler family: one
    # sanitizer runtime in every program
    case $cc in clang*) cxx=clang++ ;; *) cxx=g++ ;; esac
    say "$name: configure and build ($cc $*)"
    if [ ! -f "$dir/Makefile" ]; then
        (cd "$dir" && "$src/configure" -q --without-cuda CC="$cc" CXX="$cxx" "$@") >"$dir/configure.log" 2>&1 ||
            { tail -30 "$dir/configure.log"; return 1; }
    fi
    (cd "$dir" && make -j"$jobs") >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; return 1; }
    wrappers "$dir/san-bin" "$rt"
}

# counts DIR: one line per test folder and the sum, from the test-suite.log files
counts() {
    for f in "$1"/tests/*/test-suite.log; do
        [ -f "$f" ] || continue
        d=${f%/test-suite.log}
        awk -v d="${d##*/}" '/^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):/ { s[$2] = $3 }
            END { printf "   %-9s total %d, pass %d, skip %d, xfail %d, fail %d, xpass %d, error %d\n",
                  d, s["TOTAL:"], s["PASS:"], s["SKIP:"], s["XFAIL:"], s["FAIL:"], s["XPASS:"],
                  s["ERROR:"] }' "$f"
    done | tee "$1/counts.txt"
    awk '{ for (i = 2; i <= NF; i += 2) { k = $i; v = $(i + 1); sub(/,/, "", v); s[k] += v } }
        END { printf "   all       total %d, pass %d, skip %d, xfail %d, fail %d, xpass %d, error %d\n",
              s["total"], s["pass"], s["skip"], s["xfail"], s["fail"], s["xpass"], s["error"] }' \
        "$1/counts.txt"
}

# check NAME [VAR=VALUE...]: make check in each tests/ folder of the tree in
# turn, wrappers first in PATH. NAME_tests_FOLDER (e.g. tsan_tests_gpu), when
# set, names the only tests to run in that folder, NAME_skip_FOLDER the tests
# not to run there, NAME_env_FOLDER adds VAR=VALUE words for that folder and
# NAME_tags_FOLDER names the Check test cases' tags not to run there
# (CK_EXCLUDE_TAGS, space-separated).
# tests/tls's async nginx (not instrumented, like the distribution's servers) is built
# once for both trees into GPURSA_NGINX_ASYNC_PREFIX (default _build-security/nginx-async)
# and runs through san-bin/san-server.
# TLS_LEAK_CHECK=0: tests/tls's heap count (an LD_PRELOAD malloc counter) cannot sit
# beside a sanitizer's runtime, which owns malloc, so it is off here; it runs in the
# plain `make check`, and LeakSanitizer checks every program of ours in the asan tree.
# Folders whose test programs are built on demand, each by the test that runs it
# (check_PROGRAMS empty), not all of them before the first test starts: in
# tests/gpu the others are the valgrind constant-time tests' programs (those
# tests skip here), the emulator tests a tree leaves out and gpursa_host_speed,
# a probe run by hand; under ASan clang spent ~80 s of a core on test_gpu_fx_ct
# alone. The plain tree builds them all.
build_on_demand="gpu"
check() {
    name=$1
    shift
    dir=$out/$name
    ok=0
    : >"$dir/check.log"
    for sub in $(sed -n 's/^SUBDIRS *= *//p' "$src/Makefile.am"); do
        case $sub in tests/*) ;; *) continue ;; esac
        case " ${GPURSA_SEC_FOLDERS:-${sub#tests/}} " in *" ${sub#tests/} "*) ;; *) continue ;; esac
        eval "only=\${${name}_tests_${sub#tests/}-} extra=\${${name}_env_${sub#tests/}-}"
        eval "skip=\${${name}_skip_${sub#tests/}-} tags=\${${name}_tags_${sub#tests/}-}"
        if [ -n "$skip" ]; then
            printf 'gpursa-print-tests:\n\t@echo $(TESTS)\n' >"$dir/print-tests.mk"
            for t in $(make -s -C "$dir/$sub" -f Makefile -f "$dir/print-tests.mk" gpursa-print-tests); do
                case " $skip " in *" $t "*) ;; *) only="$only $t" ;; esac
            done
        fi
        case " $build_on_demand " in *" ${sub#tests/} "*) lazy=check_PROGRAMS= ;; *) lazy="" ;; esac
        say "$name: make check in $sub${only:+ (only $only)}"
        # shellcheck disable=SC2086 # $extra is a list of VAR=VALUE words
        (cd "$dir/$sub" && env PATH="$dir/san-bin:$PATH" VALGRIND=gpursa-no-valgrind \
            TLS_LEAK_CHECK=0 TLS_SERVER_WRAPPER="$dir/san-bin/san-server" \
            GPURSA_NGINX_ASYNC_PREFIX="${GPURSA_NGINX_ASYNC_PREFIX:-$out/nginx-async}" \
            "$@" ${tags:+"CK_EXCLUDE_TAGS=$tags"} $extra make -k -j"$jobs" check $lazy \
            ${only:+"TESTS=$only"} OPENSSL="$dir/san-bin/openssl" VALGRIND=gpursa-no-valgrind) \
            >>"$dir/check.log" 2>&1 || ok=1
    done
    if [ $ok -eq 0 ]; then
        counts "$dir"
        return 0
    fi
    counts "$dir"
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
        # The COOP emulator tests run the kernel arithmetic on an emulated
        # warp (ucontext coroutines): pure integer code, ten times slower
        # under ASan. The 1024-bit one keeps that code under ASan+UBSan here,
        # and so does RSA-3072's 3-lane one, the only shape whose items leave
        # lanes of a warp over (gpursa_coop_place); the others (the same code
        # at other lane widths, and the FP64 path, whose limb product the
        # plain tree checks against 128-bit products) run in the plain tree.
        asan_skip_gpu="test_gpu_coop_2048 test_gpu_coop_2048f test_gpu_coop_3072fn"
        asan_skip_gpu="$asan_skip_gpu test_gpu_coop_4096f test_gpu_coop_4096fn"
        # nginx's master kills a worker still exiting ~1.5 s after SIGTERM (its
        # own fixed schedule, no setting); a worker whose host-backend batches
        # run ten times slower under ASan finishes them later than that on a
        # loaded machine, and the kill is nginx's, not a gpursa fault. The
        # plain tree runs it; haproxy-shutdown.sh (hard-stop-after) runs here.
        asan_skip_tls="nginx-shutdown.sh"
        # No detect_stack_use_after_return: OpenSSL's ASYNC jobs switch stacks
        # with swapcontext, and ASan's fake stacks then report false
        # stack-use-after-return (the queue's async tests showed one).
        # For whole leak stacks through libcrypto add fast_unwind_on_malloc=0.
        check asan ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1:check_initialization_order=1" \
            UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" CK_TIMEOUT_MULTIPLIER=4 \
            GPURSA_TEST_SCALE=4 || status=1
        ;;
    tsan)
        # Single-threaded suites find nothing under TSan and are its slowest
        # (every limb access instrumented): in tests/gpu only the backend
        # suite runs here (the host backend's threads); the asan tree runs all.
        tsan_tests_gpu=test_gpu_rsa tsan_env_gpu=CK_RUN_SUITE=gpu_backend
        # TSan cannot follow a child that starts threads after a threaded
        # parent forked (it crashes in the child); the fork test runs in the
        # plain and asan trees.
        tsan_skip_queue=test_fork_provider
        tsan_tags_provider=fork         # test_metrics' fork case
        # test_cipher's short ciphertexts on the host backend at RSA-3072 and 4096
        # (tag host-large): the same single operations through the queue as its
        # RSA-1024 and 2048 runs here, whose threads TSan watches; only the
        # arithmetic is longer (177 of test_cipher's 267 s under TSan). The plain
        # and asan trees run them.
        tsan_tags_provider="$tsan_tags_provider host-large"
        # The shutdown tests time the end of handshakes in flight against the
        # servers' own deadlines (nginx's master kills a worker still exiting
        # after ~1.5 s, HAProxy hard-stops): TSan's slowdown of the host
        # backend misses them. The plain tree runs both, the asan tree HAProxy's.
        # nginx-metrics.sh: the metrics thread each worker starts after nginx's
        # master forked it is what TSan cannot follow (above; the worker dies
        # in TSan's "dup thread" at exit and leaves its %p file); the plain and
        # asan trees run it.
        # nginx-async-abuse.sh: its leak windows are 50 handshakes at once, 2,100 in all,
        # and under TSan the host backend signs them slower than nginx's handshake
        # timeout on a loaded machine; the plain and asan trees run it. The other
        # nginx-async tests thin their load by GPURSA_TEST_SCALE and run here.
        tsan_skip_tls="haproxy-shutdown.sh nginx-shutdown.sh nginx-metrics.sh nginx-async-abuse.sh"
        rt=$(gcc -print-file-name=libtsan.so)
        build tsan gcc "$rt" --enable-sanitizers=thread || { status=1; continue; }
        # atexit_sleep_ms=0: TSan's default 1 s pause at every exit costs minutes
        # over the CLI tests' hundreds of openssl runs.
        check tsan TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0:suppressions=$src/tests/security/tsan.supp" \
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
