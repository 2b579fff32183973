# SPDX-License-Identifier: Apache-2.0
# Shared by the tests/cli/*.sh scripts: environment, temp dir, cleanup,
# timeouts and small checks. Source it: . "$(dirname "$0")/common.sh"
# make check exports OPENSSL_MODULES, GPURSA_TOP_SRCDIR, GPURSA_TOP_BUILDDIR, OPENSSL.

set -u
: "${GPURSA_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${GPURSA_TOP_BUILDDIR:=$GPURSA_TOP_SRCDIR}"
: "${OPENSSL_MODULES:=$GPURSA_TOP_BUILDDIR/provider/.libs}"
: "${OPENSSL:=openssl}"
export OPENSSL_MODULES
GPURSA_CNF="$GPURSA_TOP_SRCDIR/conf/openssl.cnf"
# Unless a test says otherwise, every openssl run loads gpursa through conf/openssl.cnf.
export OPENSSL_CONF="$GPURSA_CNF"
unset GPURSA_STATS GPURSA_BACKEND GPURSA_MAX_BATCH GPURSA_LOG_LEVEL

TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-$TEST_NAME.XXXXXX") || exit 99
BG_PIDS=""

cleanup() {
    for pid in $BG_PIDS; do
        kill "$pid" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL: $TEST_NAME: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $TEST_NAME: $*" >&2
    exit 77
}

pass() {
    echo "ok: $TEST_NAME: $*"
}

[ -f "$OPENSSL_MODULES/gpursa.so" ] || skip "no module at $OPENSSL_MODULES/gpursa.so"
command -v timeout >/dev/null 2>&1 || skip "no timeout(1)"

# ossl ARGS...: the openssl CLI with a time limit (nothing here may hang).
ossl() {
    timeout 60 "$OPENSSL" "$@"
}

# ossl_default ARGS...: the openssl CLI with only OpenSSL's own providers
# (the reference side: no gpursa, no config).
ossl_default() {
    OPENSSL_CONF=/dev/null timeout 60 "$OPENSSL" "$@"
}

# expect_op signature|asymcipher: fail unless gpursa offers RSA for it.
expect_op() {
    case $1 in
    signature) list=-signature-algorithms ;;
    asymcipher) list=-asymcipher-algorithms ;;
    *) fail "expect_op: unknown operation $1" ;;
    esac
    ossl list $list > "$TMP/list" 2>&1 || { cat "$TMP/list"; fail "openssl list $list"; }
    grep -i "rsa" "$TMP/list" | grep -q "@ gpursa" \
        || { cat "$TMP/list"; fail "gpursa offers no RSA $1 operation"; }
}

# stats_private_ops FILE: operations done by gpursa (gpu + host + cpu).
stats_private_ops() {
    line=$(grep '^gpursa: ops ' "$1" | tail -n 1)
    [ -n "$line" ] || { echo 0; return; }
    echo "$line" | sed 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\).*/\1 \2 \3/' |
        { read -r g h c; echo $((g + h + c)); }
}

# rsa_key BITS FILE: a fresh RSA key (PKCS#8 PEM) from the default provider.
rsa_key() {
    ossl_default genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$1" -out "$2" 2>/dev/null \
        || fail "cannot generate a $1-bit key"
}
