# SPDX-License-Identifier: Apache-2.0
# Shared by the security shell tests (sourced). Runs the openssl CLI with
# gpursa preferred, checks each hostile case ends in an error exit with an
# OpenSSL error, and never in a crash, a hang, a sanitizer report or a
# silent wrong answer.
OPENSSL=${OPENSSL:-openssl}
# gpursa first for every operation it offers; the default provider decodes keys.
GP="-provider gpursa -provider default -propquery ?provider=gpursa"
TIMEOUT=${GPURSA_TEST_TIMEOUT:-60}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-sec.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
failures=0
cases=0

if [ -z "${OPENSSL_MODULES:-}" ] || [ ! -e "$OPENSSL_MODULES/gpursa.so" ]; then
    echo "gpursa.so not found in OPENSSL_MODULES=${OPENSSL_MODULES:-}: run through make check"
    exit 77
fi

# Backends here: cpu and host always; cuda only with a working GPU.
backends() {
    echo cpu host
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        echo cuda
    fi
}

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# A crash, hang or sanitizer report in the last run (rc and $T/err)?
bad_exit() { # name rc
    if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
        fail "$1: hung (killed after ${TIMEOUT}s)"
    elif [ "$2" -ge 125 ]; then
        fail "$1: crashed (exit $2)"
    elif grep -q 'Sanitizer\|runtime error:' "$T/err"; then
        fail "$1: sanitizer report"; sed 's/^/    /' "$T/err" | head -40
    else
        return 1
    fi
    return 0
}

# expect_error NAME CMD...: must exit 1..123 with an OpenSSL error on stderr
# (ERROR_PATTERN, a grep pattern, may widen what counts as one).
ERROR_PATTERN=':error:'
expect_error() {
    name=$1; shift
    cases=$((cases + 1))
    timeout "$TIMEOUT" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    bad_exit "$name" $rc && return 1
    if [ $rc -eq 0 ]; then
        fail "$name: succeeded, must fail"; return 1
    fi
    if ! grep -q "$ERROR_PATTERN" "$T/err"; then
        fail "$name: exit $rc without an OpenSSL error"; sed 's/^/    /' "$T/err" | head -5
        return 1
    fi
    return 0
}

# expect_ok NAME CMD...: must succeed (output in $T/out).
expect_ok() {
    name=$1; shift
    cases=$((cases + 1))
    timeout "$TIMEOUT" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    bad_exit "$name" $rc && return 1
    if [ $rc -ne 0 ]; then
        fail "$name: exit $rc, must succeed"; sed 's/^/    /' "$T/err" | head -10
        return 1
    fi
    return 0
}

# Byte files: n (the modulus of key $1) as k bytes.
modulus_bytes() { # key.pem out
    "$OPENSSL" rsa -in "$1" -noout -modulus | sed 's/^Modulus=//' | xxd -r -p >"$2"
}

# Operations gpursa counted in the GPURSA_STATS=1 line of the last run (0 if none).
gpursa_ops() {
    sed -n 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\).*/\1 \2 \3/p' "$T/err" |
        awk '{ s += $1 + $2 + $3 } END { print s + 0 }'
}

finish() {
    echo "$cases cases, $failures failures"
    [ "$failures" -eq 0 ]
    exit $?
}
