#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hostile input through the openssl CLI (pkeyutl) on every backend: ciphertexts
# shorter and longer than the modulus, equal to and above n, all zeros and all
# ones, nonsense and absurd parameters. Each must end in an error exit with an
# OpenSSL error (or, where the math defines an answer, the right answer),
# never a crash, a hang or a sanitizer report. A valid decryption first shows
# that gpursa does the work (its GPURSA_STATS line counts the operation).
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
command -v xxd >/dev/null 2>&1 || skip "xxd not found"

# modulus_bytes KEY OUT: n, the modulus of KEY, as k bytes.
modulus_bytes() {
    "$OPENSSL" rsa -in "$1" -noout -modulus | sed 's/^Modulus=//' | xxd -r -p >"$2"
}

key=$TMP/key.pem
"$OPENSSL" genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$key" 2>/dev/null || exit 99
"$OPENSSL" pkey -in "$key" -pubout -out "$TMP/pub.pem" || exit 99
printf 'attack at dawn' >"$TMP/msg"
"$OPENSSL" pkeyutl -encrypt -pubin -inkey "$TMP/pub.pem" -in "$TMP/msg" -out "$TMP/ct.pkcs1" || exit 99
"$OPENSSL" pkeyutl -encrypt -pubin -inkey "$TMP/pub.pem" -in "$TMP/msg" -out "$TMP/ct.oaep" \
    -pkeyopt rsa_padding_mode:oaep || exit 99
modulus_bytes "$key" "$TMP/n"
k=$(wc -c <"$TMP/n")
head -c $((k - 1)) "$TMP/ct.pkcs1" >"$TMP/short"
{ cat "$TMP/ct.pkcs1"; printf 'X'; } >"$TMP/long1"
{ cat "$TMP/ct.pkcs1" "$TMP/ct.pkcs1"; } >"$TMP/long2"
: >"$TMP/empty"
head -c "$k" /dev/zero >"$TMP/zeros"
head -c "$k" /dev/zero | tr '\0' '\377' >"$TMP/ones"
{ head -c $((k - 1)) /dev/zero; printf '\001'; } >"$TMP/one"
# n + 1: n is odd, so its last byte is below 0xff
{ head -c $((k - 1)) "$TMP/n"; tail -c 1 "$TMP/n" | od -An -tu1 | awk '{ printf "%c", $1 + 1 }'; } >"$TMP/nplus1"

for b in $(backends); do
    export GPURSA_BACKEND=$b
    dec="$OPENSSL pkeyutl -decrypt -inkey $key $GP"

    # control: gpursa decrypts a valid ciphertext, and says so in its stats
    if GPURSA_STATS=1 expect_ok "$b: valid PKCS#1 v1.5" $dec -in "$TMP/ct.pkcs1"; then
        cmp -s "$TMP/out" "$TMP/msg" || case_failed "$b: valid ciphertext decrypted wrongly"
        grep -q '^gpursa: ops' "$TMP/err" || case_failed "$b: no gpursa stats line: gpursa not in use?"
    fi
    expect_ok "$b: valid OAEP" $dec -in "$TMP/ct.oaep" -pkeyopt rsa_padding_mode:oaep &&
        { cmp -s "$TMP/out" "$TMP/msg" || case_failed "$b: valid OAEP ciphertext decrypted wrongly"; }

    for pad in pkcs1 oaep none; do
        for f in long1 long2 n nplus1 ones; do
            expect_error "$b: $pad, ciphertext $f" $dec -in "$TMP/$f" -pkeyopt rsa_padding_mode:$pad
        done
    done
    # Shorter than the modulus (an integer below n without its leading zero
    # bytes) or empty: gpursa answers as the default provider does, whatever
    # the OpenSSL release (3.0 takes an empty ciphertext as 0, later ones refuse
    # it). PKCS#1 v1.5 is left to test_cipher: 3.0's default has no implicit rejection.
    for pad in oaep none; do
        for f in short empty; do
            rc_default=0
            timeout "$TIMEOUT" "$OPENSSL" pkeyutl -decrypt -inkey "$key" -in "$TMP/$f" \
                -pkeyopt rsa_padding_mode:$pad >"$TMP/out.default" 2>/dev/null || rc_default=$?
            run_case "$b: $pad, ciphertext $f" $dec -in "$TMP/$f" -pkeyopt rsa_padding_mode:$pad ||
                continue
            if [ $rc -eq 0 ] && [ $rc_default -eq 0 ]; then
                cmp -s "$TMP/out" "$TMP/out.default" || case_failed "$name: output differs from the default's"
            elif [ $rc -eq 0 ] || [ $rc_default -eq 0 ]; then
                case_failed "$name: exit $rc, the default provider's $rc_default"
            elif ! grep -q "$ERROR_PATTERN" "$TMP/err"; then
                case_failed "$name: exit $rc without an OpenSSL error"
            fi
        done
    done
    # all zeros / one: raw RSA has a defined answer (0^d = 0, 1^d = 1) ...
    expect_ok "$b: none, zeros" $dec -in "$TMP/zeros" -pkeyopt rsa_padding_mode:none &&
        { cmp -s "$TMP/out" "$TMP/zeros" || case_failed "$b: 0^d mod n is not 0"; }
    expect_ok "$b: none, one" $dec -in "$TMP/one" -pkeyopt rsa_padding_mode:none &&
        { cmp -s "$TMP/out" "$TMP/one" || case_failed "$b: 1^d mod n is not 1"; }
    # ... a padded mode must reject them (implicit rejection off for PKCS#1 v1.5)
    for f in zeros one; do
        expect_error "$b: oaep, $f" $dec -in "$TMP/$f" -pkeyopt rsa_padding_mode:oaep
        expect_error "$b: pkcs1 without implicit rejection, $f" $dec -in "$TMP/$f" \
            -pkeyopt rsa_padding_mode:pkcs1 -pkeyopt implicit-rejection:0
    done
    # implicit rejection on (the default): a synthetic message, the same each time
    if expect_ok "$b: pkcs1 implicit rejection, zeros" $dec -in "$TMP/zeros"; then
        cp "$TMP/out" "$TMP/synth1"
        expect_ok "$b: pkcs1 implicit rejection again" $dec -in "$TMP/zeros" &&
            { cmp -s "$TMP/out" "$TMP/synth1" || case_failed "$b: implicit rejection not deterministic"; }
        [ "$(wc -c <"$TMP/synth1")" -le $((k - 11)) ] || case_failed "$b: synthetic message too long"
    fi

    # nonsense and absurd parameters
    expect_error "$b: padding mode nonsense" $dec -in "$TMP/ct.pkcs1" -pkeyopt rsa_padding_mode:nonsense
    expect_error "$b: OAEP digest that does not exist" $dec -in "$TMP/ct.oaep" \
        -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:NOSUCHDIGEST
    expect_error "$b: MGF1 digest that does not exist" $dec -in "$TMP/ct.oaep" \
        -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_mgf1_md:NOSUCHDIGEST
    expect_error "$b: OAEP with the wrong digest" $dec -in "$TMP/ct.oaep" \
        -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha512
    label=$(head -c 16384 /dev/zero | tr '\0' 'a' | xxd -p | tr -d '\n')
    expect_error "$b: OAEP with a 16 KiB label that does not match" $dec -in "$TMP/ct.oaep" \
        -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_label:$label

    sign="$OPENSSL pkeyutl -sign -inkey $key $GP"
    printf 'x' | "$OPENSSL" dgst -sha256 -binary >"$TMP/dgst"
    head -c 1024 /dev/zero >"$TMP/big"
    expect_ok "$b: sign PSS (control)" $sign -in "$TMP/dgst" -pkeyopt rsa_padding_mode:pss \
        -pkeyopt digest:sha256
    expect_error "$b: PSS salt length -7" $sign -in "$TMP/dgst" -pkeyopt rsa_padding_mode:pss \
        -pkeyopt digest:sha256 -pkeyopt rsa_pss_saltlen:-7
    expect_error "$b: PSS salt length 100000" $sign -in "$TMP/dgst" -pkeyopt rsa_padding_mode:pss \
        -pkeyopt digest:sha256 -pkeyopt rsa_pss_saltlen:100000
    expect_error "$b: PSS salt length 2147483647" $sign -in "$TMP/dgst" -pkeyopt rsa_padding_mode:pss \
        -pkeyopt digest:sha256 -pkeyopt rsa_pss_saltlen:2147483647
    expect_error "$b: digest SHA1000" $sign -in "$TMP/dgst" -pkeyopt digest:SHA1000
    # pkeyutl itself refuses more than 64 bytes to sign (EVP_MAX_MD_SIZE): the
    # largest the provider can be handed; EVP tests cover 1 MiB inputs
    head -c 64 "$TMP/big" >"$TMP/in64"
    expect_error "$b: 64-byte input as a SHA-256 digest" $sign -in "$TMP/in64" -pkeyopt digest:sha256
    expect_error "$b: 64-byte input, no padding" $sign -in "$TMP/in64" -pkeyopt rsa_padding_mode:none
    head -c 31 "$TMP/big" >"$TMP/short31"
    expect_error "$b: 31-byte input as a SHA-256 digest" $sign -in "$TMP/short31" -pkeyopt digest:sha256
done
finish
