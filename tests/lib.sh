# SPDX-License-Identifier: Apache-2.0
# The shell tests' helpers (POSIX sh, safe under set -eu). A test in tests/<folder>/
# sources it with
#   . "$(dirname "$0")/../lib.sh"
# Sourcing only defines functions and variables: no check, no trap, no change to the
# environment (bench/tls-handshake.sh sources it too, through tests/tls/servers.sh).
# make check exports OPENSSL_MODULES, GPURSA_TOP_SRCDIR, GPURSA_TOP_BUILDDIR and OPENSSL
# (tests/tests.am); run by hand from the source tree, a test finds them from its own place.

: "${GPURSA_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${OPENSSL:=openssl}"
TEST_NAME=$(basename "$0" .sh)
TIMEOUT=${GPURSA_TEST_TIMEOUT:-60}   # seconds any one openssl run may take
# Options that make gpursa the preferred provider of every operation it offers; the default
# provider decodes keys ("?provider=gpursa": a hard "provider=gpursa" would also refuse the
# default provider's file loader and decoders).
GP="-provider gpursa -provider default -propquery ?provider=gpursa"

skip() {
    echo "SKIP: $TEST_NAME: $*" >&2
    exit 77
}

fail() {
    echo "FAIL: $TEST_NAME: $*" >&2
    exit 1
}

pass() {
    echo "ok: $TEST_NAME: $*"
}

# require_module: skip unless OPENSSL_MODULES (default: the build tree's provider/.libs)
# holds gpursa.so, and timeout(1) is there to limit every run.
require_module() {
    : "${OPENSSL_MODULES:=${GPURSA_TOP_BUILDDIR:-$GPURSA_TOP_SRCDIR}/provider/.libs}"
    export OPENSSL_MODULES
    [ -f "$OPENSSL_MODULES/gpursa.so" ] || skip "no gpursa.so in OPENSSL_MODULES=$OPENSSL_MODULES"
    command -v timeout >/dev/null 2>&1 || skip "no timeout(1)"
}

# make_tmp: TMP, a fresh folder. At exit cleanup kills the processes in BG_PIDS and removes
# TMP (unless KEEP_TMP=1).
TMP=""
BG_PIDS=""
KEEP_TMP=0
make_tmp() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-$TEST_NAME.XXXXXX") || exit 99
    trap cleanup EXIT
    trap 'exit 1' INT TERM
}

cleanup() {
    for pid in $BG_PIDS; do
        kill "$pid" 2>/dev/null
    done
    if [ "$KEEP_TMP" = 1 ]; then
        echo "# work folder kept: $TMP"
    else
        rm -rf "$TMP"
    fi
}

# use_conf: every openssl run loads gpursa through conf/openssl.cnf, as an application
# configured for it does, with no GPURSA_* setting from the caller's environment.
use_conf() {
    OPENSSL_CONF=$GPURSA_TOP_SRCDIR/conf/openssl.cnf
    export OPENSSL_CONF
    unset GPURSA_STATS GPURSA_BACKEND GPURSA_MAX_BATCH GPURSA_LOG_LEVEL
}

# ossl ARGS...: the openssl CLI with a time limit (nothing here may hang).
ossl() {
    timeout "$TIMEOUT" "$OPENSSL" "$@"
}

# ossl_default ARGS...: the openssl CLI with only OpenSSL's own providers (the reference
# side: no gpursa, no config).
ossl_default() {
    OPENSSL_CONF=/dev/null timeout "$TIMEOUT" "$OPENSSL" "$@"
}

# expect_op signature|asymcipher: fail unless gpursa offers RSA for it.
expect_op() {
    case $1 in
    signature) list=-signature-algorithms ;;
    asymcipher) list=-asymcipher-algorithms ;;
    *) fail "expect_op: unknown operation $1" ;;
    esac
    ossl list $list >"$TMP/list" 2>&1 || { cat "$TMP/list"; fail "openssl list $list"; }
    grep -i "rsa" "$TMP/list" | grep -q "@ gpursa" ||
        { cat "$TMP/list"; fail "gpursa offers no RSA $1 operation"; }
}

# Backends to run on: cpu and host always; cuda only with a working GPU.
backends() {
    echo cpu host
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        echo cuda
    fi
}

# ---- gpursa's statistics line (GPURSA_STATS=1), one per process at unload ----

# stats_lines FILE: each statistics line in FILE as "gpu host cpu batches".
stats_lines() {
    sed -n 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\) batches=\([0-9]*\) .*/\1 \2 \3 \4/p' "$1"
}

# stats_ops FILE: the private-key operations (gpu + host + cpu) the lines in FILE count, 0
# without one.
stats_ops() {
    stats_lines "$1" | awk '{ s += $1 + $2 + $3 } END { print s + 0 }'
}

# ---- cases that go on after a failure: the hostile-input tests ----
# Each case runs CMD with a time limit, output in TMP/out and TMP/err; a failed case is
# counted (case_failed) and the test goes on; finish reports and sets the exit status.

CASES=0
FAILURES=0
ERROR_PATTERN=':error:'   # a grep pattern: what counts as an OpenSSL error on stderr

case_failed() {
    echo "FAIL: $TEST_NAME: $*"
    FAILURES=$((FAILURES + 1))
}

# bad_exit NAME RC: 0 (and a failed case) when the last run hung, crashed or made a
# sanitizer report.
bad_exit() {
    if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
        case_failed "$1: hung (killed after ${TIMEOUT}s)"
    elif [ "$2" -ge 125 ]; then
        case_failed "$1: crashed (exit $2)"
    elif grep -q 'Sanitizer\|runtime error:' "$TMP/err"; then
        case_failed "$1: sanitizer report"
        sed 's/^/    /' "$TMP/err" | head -40
    else
        return 1
    fi
    return 0
}

# run_case NAME CMD...: counts a case and runs CMD with a time limit, its output in TMP/out
# and TMP/err, its exit status in rc. 1 (and a failed case) when it hung, crashed or made a
# sanitizer report.
run_case() {
    name=$1
    shift
    CASES=$((CASES + 1))
    rc=0
    timeout "$TIMEOUT" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    ! bad_exit "$name" $rc
}

# expect_error NAME CMD...: CMD must exit 1..123 with ERROR_PATTERN on stderr. 1 if not.
expect_error() {
    run_case "$@" || return 1
    if [ $rc -eq 0 ]; then
        case_failed "$name: succeeded, must fail"
        return 1
    fi
    if ! grep -q "$ERROR_PATTERN" "$TMP/err"; then
        case_failed "$name: exit $rc without an error matching $ERROR_PATTERN"
        sed 's/^/    /' "$TMP/err" | head -5
        return 1
    fi
    return 0
}

# expect_ok NAME CMD...: CMD must succeed (its output in TMP/out). 1 if not.
expect_ok() {
    run_case "$@" || return 1
    if [ $rc -ne 0 ]; then
        case_failed "$name: exit $rc, must succeed"
        sed 's/^/    /' "$TMP/err" | head -10
        return 1
    fi
    return 0
}

finish() {
    echo "$CASES cases, $FAILURES failures"
    [ "$FAILURES" -eq 0 ] || exit 1
    exit 0
}
