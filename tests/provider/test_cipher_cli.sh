#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# RSA decryption through the openssl CLI with the build-tree gpursa module:
# the default provider encrypts (pkeyutl -encrypt) and gpursa decrypts to the
# same bytes, and the reverse, for PKCS#1 v1.5, OAEP (digests, MGF1 digest,
# label) and no padding; implicit rejection gives a stable synthetic answer,
# or an error when switched off; a ciphertext without its leading zero byte
# decrypts as the full one; bad input gets a gpursa error. The stats
# line shows that gpursa did each private operation, exactly one a decryption.
set -eu

. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
cd "$TMP"
# run a gpursa command with the stats line on; it must count one private op
gp_dec() {
    GPURSA_STATS=1 "$@" 2> stats.txt || { cat stats.txt >&2; return 1; }
    ops=$(stats_ops stats.txt)
    [ "$ops" -eq 1 ] || { cat stats.txt >&2; fail "gpursa counted $ops private ops, not 1: $*"; }
}

ERROR_PATTERN=gpursa     # each refusal below is gpursa's
for bits in 1024 2048 3072; do
    $OPENSSL genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:$bits -out key.pem 2>/dev/null
    $OPENSSL pkey -in key.pem -pubout -out pub.pem
    k=$((bits / 8))

    for opts in "-pkeyopt rsa_padding_mode:pkcs1" \
                "-pkeyopt rsa_padding_mode:oaep" \
                "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_oaep_label:0a0b0c" \
                "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha512 -pkeyopt rsa_mgf1_md:sha1" \
                "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha384 -pkeyopt rsa_mgf1_md:sha256 -pkeyopt rsa_oaep_label:ff"; do
        # (OAEP with SHA-384 or SHA-512 leaves a 1024-bit key no room for 32 bytes)
        case "$bits $opts" in 1024*sha384* | 1024*sha512*) continue ;; esac
        for len in 0 1 32; do
            head -c $len /dev/urandom > msg
            # default encrypts, gpursa decrypts
            $OPENSSL pkeyutl -encrypt -pubin -inkey pub.pem -in msg -out ct $opts
            gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in ct -out pt $opts \
                || fail "gpursa cannot decrypt $bits $opts"
            cmp -s msg pt || fail "gpursa decrypted other bytes: $bits $opts len $len"
            # gpursa encrypts (delegated), default decrypts
            $OPENSSL pkeyutl -encrypt $GP -pubin -inkey pub.pem -in msg -out ct2 $opts
            $OPENSSL pkeyutl -decrypt -inkey key.pem -in ct2 -out pt2 $opts
            cmp -s msg pt2 || fail "default decrypted other bytes: $bits $opts len $len"
        done
    done

    # no padding: both providers agree on the raw value
    { printf '\000'; head -c $((k - 1)) /dev/urandom; } > raw
    $OPENSSL pkeyutl -encrypt -pubin -inkey pub.pem -in raw -out ct -pkeyopt rsa_padding_mode:none
    gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in ct -out pt -pkeyopt rsa_padding_mode:none \
        || fail "gpursa cannot decrypt raw $bits"
    cmp -s raw pt || fail "raw decryption differs $bits"

    # a ciphertext that is not PKCS#1: implicit rejection answers the same
    # synthetic message twice and no error; switched off, an error
    { printf '\001'; head -c $((k - 1)) /dev/urandom; } > junk
    gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in junk -out s1 \
        || fail "implicit rejection gave an error ($bits)"
    gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in junk -out s2 \
        -pkeyopt implicit-rejection:1 || fail "implicit rejection gave an error ($bits)"
    cmp -s s1 s2 || fail "synthetic message differs between runs ($bits)"
    [ "$(wc -c < s1)" -le $((k - 11)) ] || fail "synthetic message too long ($bits)"
    expect_error "bad padding with implicit rejection off ($bits)" $OPENSSL pkeyutl -decrypt $GP \
        -inkey key.pem -in junk -out s3 -pkeyopt implicit-rejection:0 || exit 1

    # a ciphertext longer than the modulus: a gpursa error
    { cat junk; printf '\001'; } > long
    expect_error "a ciphertext longer than the modulus ($bits)" $OPENSSL pkeyutl -decrypt $GP \
        -inkey key.pem -in long -out pt || exit 1
    # one without its leading zero byte is the same integer: the same answer
    { printf '\000'; head -c $((k - 1)) /dev/urandom; } > full
    tail -c $((k - 1)) full > short
    gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in full -out pt -pkeyopt rsa_padding_mode:none \
        || fail "gpursa cannot decrypt raw $bits"
    gp_dec $OPENSSL pkeyutl -decrypt $GP -inkey key.pem -in short -out pt2 -pkeyopt rsa_padding_mode:none \
        || fail "gpursa refuses a $((k - 1))-byte ciphertext ($bits)"
    cmp -s pt pt2 || fail "a ciphertext without its zero byte decrypts differently ($bits)"
done
pass "openssl CLI decryption through gpursa"
