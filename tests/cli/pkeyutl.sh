#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl pkeyutl with conf/openssl.cnf: gpursa signs and the default
# provider verifies (PKCS#1 v1.5 byte-identical to default's, PSS); default
# signs and gpursa's side verifies; default encrypts and gpursa decrypts
# (PKCS#1 v1.5, OAEP). The stats line proves gpursa did each private op.
set -u
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
use_conf

expect_op signature
expect_op asymcipher

# rsa_key BITS FILE: a fresh RSA key (PKCS#8 PEM) from the default provider.
rsa_key() {
    ossl_default genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$1" -out "$2" 2>/dev/null \
        || fail "cannot generate a $1-bit key"
}

# expect_gpursa_ops ERRFILE N: gpursa's stats line counts N private operations.
expect_gpursa_ops() {
    got=$(stats_ops "$1")
    [ "$got" = "$2" ] || { cat "$1"; fail "gpursa did $got private operations, expected $2"; }
}

head -c 1000 /dev/urandom > "$TMP/data"
ossl_default dgst -sha256 -binary -out "$TMP/dgst" "$TMP/data" || fail "dgst"
echo "attack at dawn $$" > "$TMP/msg"

# (larger sizes are covered by the Check suites; key generation dominates here)
for bits in 1024 2048; do
    rsa_key "$bits" "$TMP/key.pem"
    ossl_default pkey -in "$TMP/key.pem" -pubout -out "$TMP/pub.pem" || fail "pubout"

    # PKCS#1 v1.5: deterministic, so gpursa's signature equals default's
    GPURSA_STATS=1 ossl pkeyutl -sign -inkey "$TMP/key.pem" -in "$TMP/dgst" \
        -pkeyopt digest:sha256 -out "$TMP/sig.g" 2> "$TMP/err" || { cat "$TMP/err"; fail "gpursa sign"; }
    expect_gpursa_ops "$TMP/err" 1
    ossl_default pkeyutl -verify -pubin -inkey "$TMP/pub.pem" -in "$TMP/dgst" \
        -pkeyopt digest:sha256 -sigfile "$TMP/sig.g" > /dev/null || fail "default rejects gpursa's PKCS#1 signature ($bits)"
    ossl_default pkeyutl -sign -inkey "$TMP/key.pem" -in "$TMP/dgst" \
        -pkeyopt digest:sha256 -out "$TMP/sig.d" || fail "default sign"
    cmp -s "$TMP/sig.g" "$TMP/sig.d" || fail "PKCS#1 v1.5 signatures differ from default's ($bits)"
    pass "$bits-bit PKCS#1 v1.5 sign: gpursa = default, verified"

    # PSS both ways
    GPURSA_STATS=1 ossl pkeyutl -sign -inkey "$TMP/key.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:32 -out "$TMP/pss.g" 2> "$TMP/err" \
        || { cat "$TMP/err"; fail "gpursa PSS sign"; }
    expect_gpursa_ops "$TMP/err" 1
    ossl_default pkeyutl -verify -pubin -inkey "$TMP/pub.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:32 -sigfile "$TMP/pss.g" > /dev/null \
        || fail "default rejects gpursa's PSS signature ($bits)"
    ossl_default pkeyutl -sign -inkey "$TMP/key.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:32 -out "$TMP/pss.d" || fail "default PSS sign"
    ossl pkeyutl -verify -pubin -inkey "$TMP/pub.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:32 -sigfile "$TMP/pss.d" > /dev/null \
        || fail "gpursa side rejects default's PSS signature ($bits)"
    # a corrupted signature must not verify: the low bit of byte 10 flipped (writing
    # a fixed byte there left one PSS signature in 256, whose byte 10 held it already,
    # as it was, and that one verified)
    cp "$TMP/pss.d" "$TMP/pss.orig"
    byte=$(od -An -tu1 -j10 -N1 "$TMP/pss.d" | tr -d ' ')
    printf "\\$(printf %o $((byte ^ 1)))" | dd of="$TMP/pss.d" bs=1 seek=10 conv=notrunc 2>/dev/null
    cmp -s "$TMP/pss.d" "$TMP/pss.orig" && fail "the corruption left the PSS signature as it was ($bits)"
    if ossl pkeyutl -verify -pubin -inkey "$TMP/pub.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -sigfile "$TMP/pss.d" > /dev/null 2>&1; then
        fail "a corrupted PSS signature verified ($bits)"
    fi
    pass "$bits-bit PSS sign/verify both ways"

    for mode in pkcs1 oaep; do
        opts="-pkeyopt rsa_padding_mode:$mode"
        [ $mode = oaep ] && opts="$opts -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256"
        # shellcheck disable=SC2086
        ossl_default pkeyutl -encrypt -pubin -inkey "$TMP/pub.pem" $opts -in "$TMP/msg" \
            -out "$TMP/ct" || fail "default encrypt ($mode)"
        # shellcheck disable=SC2086
        GPURSA_STATS=1 ossl pkeyutl -decrypt -inkey "$TMP/key.pem" $opts -in "$TMP/ct" \
            -out "$TMP/pt" 2> "$TMP/err" || { cat "$TMP/err"; fail "gpursa decrypt ($mode, $bits)"; }
        expect_gpursa_ops "$TMP/err" 1
        cmp -s "$TMP/msg" "$TMP/pt" || fail "gpursa decrypted something else ($mode, $bits)"
    done
    pass "$bits-bit default encrypts, gpursa decrypts (PKCS#1 v1.5, OAEP)"
done

# No default provider in the application at all (base decodes the PEM into
# gpursa's keymgmt): gpursa's fallback loads default into its own libctx.
GPURSA_STATS=1 OPENSSL_CONF=/dev/null ossl pkeyutl -sign -provider base -provider gpursa \
    -inkey "$TMP/key.pem" -in "$TMP/dgst" -pkeyopt digest:sha256 -out "$TMP/sig.nodef" \
    2> "$TMP/err" || { cat "$TMP/err"; fail "gpursa sign without the default provider"; }
expect_gpursa_ops "$TMP/err" 1
cmp -s "$TMP/sig.nodef" "$TMP/sig.d" || fail "signature without default provider differs"
pass "signs with only base + gpursa loaded (no default provider in the application)"
