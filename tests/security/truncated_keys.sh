#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Truncated and corrupted private keys through the openssl CLI on every
# backend. A key file cut at any point (PEM and DER, PKCS#8 and PKCS#1) must
# give an error exit with an OpenSSL error, never a crash or a hang. A key
# with one byte changed may still parse (the change may land in a part that
# stays consistent); then signing must fail with an error or produce a
# signature that verifies under the key's own public part: never a silent
# wrong signature.
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp

key=$TMP/key.pem
"$OPENSSL" genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$key" 2>/dev/null || exit 99
"$OPENSSL" pkey -in "$key" -outform DER -out "$TMP/key.p8.der" || exit 99
"$OPENSSL" rsa -in "$key" -traditional -outform DER -out "$TMP/key.p1.der" 2>/dev/null || exit 99
"$OPENSSL" rsa -in "$key" -traditional -out "$TMP/key.p1.pem" 2>/dev/null || exit 99
printf 'to be signed' | "$OPENSSL" dgst -sha256 -binary >"$TMP/dgst"

# Cut points: fixed ones near the edges and 12 spread pseudo-randomly (fixed
# seed, so a failure reproduces), all before the PEM END line.
cut_points() { # file
    len=$(wc -c <"$1")
    end=$len
    case $1 in *.pem) end=$(grep -b -- '-----END' "$1" | cut -d: -f1) ;; esac
    { echo 0 1 2 10 27 50 $((end / 4)) $((end / 2)) $((end - 2)) $((end - 1))
      awk -v n="$end" 'BEGIN { srand(20261122); for (i = 0; i < 12; i++) print int(rand() * n) }'
    } | tr ' ' '\n' | awk -v n="$end" '$1 < n' | sort -n | uniq
}

# A cut key never reaches gpursa: the default provider's decoders refuse it,
# and pkeyutl may report that only in its own words, without an OpenSSL error
# line: "Could not read private key" (OpenSSL 3.0), "Could not find private
# key" (3.5). The exit must still be a failure, without a crash or a hang.
ERROR_PATTERN=':error:\|Could not \(read\|find\) private key'
refused=0 signed=0
for b in $(backends); do
    export GPURSA_BACKEND=$b
    expect_ok "$b: sign with the whole key (control)" \
        "$OPENSSL" pkeyutl -sign -inkey "$key" $GP -in "$TMP/dgst" -pkeyopt digest:sha256
    for f in key.pem key.p1.pem key.p8.der key.p1.der; do
        form=PEM
        case $f in *.der) form=DER ;; esac
        for at in $(cut_points "$TMP/$f"); do
            head -c "$at" "$TMP/$f" >"$TMP/cut"
            expect_error "$b: $f cut at byte $at" "$OPENSSL" pkeyutl -sign -inkey "$TMP/cut" \
                -keyform $form $GP -in "$TMP/dgst" -pkeyopt digest:sha256
        done
    done
    # one byte changed in the DER (the private parts take most of it)
    len=$(wc -c <"$TMP/key.p1.der")
    for at in $(awk -v n="$len" 'BEGIN { srand(7); for (i = 0; i < 16; i++) print 40 + int(rand() * (n - 40)) }'); do
        cp "$TMP/key.p1.der" "$TMP/bent"
        byte=$(od -An -tu1 -j "$at" -N1 "$TMP/bent" | tr -d ' ')
        printf "\\$(printf %o $((byte ^ 0x10)))" | dd of="$TMP/bent" bs=1 seek="$at" conv=notrunc 2>/dev/null
        GPURSA_STATS=1 run_case "$b: byte $at changed" "$OPENSSL" pkeyutl -sign -inkey "$TMP/bent" \
            -keyform DER $GP -in "$TMP/dgst" -pkeyopt digest:sha256 -out "$TMP/sig" || continue
        if [ $rc -ne 0 ]; then
            grep -q "$ERROR_PATTERN" "$TMP/err" || case_failed "$b: byte $at changed: exit $rc without an OpenSSL error"
            continue
        fi
        # It signed. When gpursa refused the key, EVP fell back to the default
        # provider, which signs with an inconsistent key as plain OpenSSL does
        # (not gpursa's answer). When gpursa signed, the signature must verify
        # under the bent key's own n, e.
        [ "$(stats_ops "$TMP/err")" -gt 0 ] || { refused=$((refused + 1)); continue; }
        signed=$((signed + 1))
        if "$OPENSSL" pkey -in "$TMP/bent" -inform DER -pubout -out "$TMP/bent.pub" 2>/dev/null; then
            "$OPENSSL" pkeyutl -verify -pubin -inkey "$TMP/bent.pub" -in "$TMP/dgst" -sigfile "$TMP/sig" \
                -pkeyopt digest:sha256 >/dev/null 2>&1 ||
                case_failed "$b: byte $at changed: gpursa signed, and the signature does not verify"
        fi
    done
done
echo "bent keys: $refused refused by gpursa (default provider signed), $signed signed by gpursa and verified"
finish
