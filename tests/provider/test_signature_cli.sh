#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# RSA signatures through the openssl CLI with the build-tree gpursa module:
# pkeyutl and dgst sign through gpursa and the default provider verifies,
# and the reverse; PKCS#1 v1.5 and salt-0 PSS signatures are byte-identical
# to the default provider's; a corrupted signature or message does not
# verify; gpursa signs with no default provider in the application; the
# stats line shows gpursa did each private op, exactly one per signature.
set -eu

. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
cd "$TMP"
# run a gpursa command with the stats line on, and check it counted exactly $1 ops
gp_ops() {
    want=$1; shift
    GPURSA_STATS=1 "$@" 2> stats.txt || { cat stats.txt >&2; fail "$*"; }
    ops=$(stats_ops stats.txt)
    [ "$ops" -eq "$want" ] || { cat stats.txt >&2; fail "gpursa counted $ops private ops, wanted $want: $*"; }
}

for bits in 1024 2048 3072; do
    $OPENSSL genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:$bits -out key.pem 2>/dev/null
    $OPENSSL pkey -in key.pem -pubout -out pub.pem
    head -c 12345 /dev/urandom > msg

    # (a 1024-bit key has no room for a PSS salt as long as SHA-512's digest)
    mds="sha1 sha256 sha384 sha512"
    [ $bits != 1024 ] || mds="sha1 sha256 sha384"
    for md in $mds; do
        $OPENSSL dgst -$md -binary -out msg.h msg
        # pkeyutl, PKCS#1 v1.5: identical signatures, each side verifies the other
        gp_ops 1 $OPENSSL pkeyutl -sign $GP -inkey key.pem -in msg.h -out sig.g -pkeyopt digest:$md
        $OPENSSL pkeyutl -sign -inkey key.pem -in msg.h -out sig.d -pkeyopt digest:$md
        cmp -s sig.g sig.d || fail "pkeyutl $bits $md: signatures differ"
        $OPENSSL pkeyutl -verify -pubin -inkey pub.pem -in msg.h -sigfile sig.g \
            -pkeyopt digest:$md > /dev/null || fail "default rejects gpursa pkeyutl $bits $md"
        $OPENSSL pkeyutl -verify $GP -pubin -inkey pub.pem -in msg.h -sigfile sig.d \
            -pkeyopt digest:$md > /dev/null || fail "gpursa rejects default pkeyutl $bits $md"

        # pkeyutl, PSS with the largest salt and with none
        for salt in max digest 0; do
            opts="-pkeyopt digest:$md -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:$salt"
            gp_ops 1 $OPENSSL pkeyutl -sign $GP -inkey key.pem -in msg.h -out pss.g $opts
            $OPENSSL pkeyutl -verify -pubin -inkey pub.pem -in msg.h -sigfile pss.g $opts \
                > /dev/null || fail "default rejects gpursa PSS $bits $md $salt"
            $OPENSSL pkeyutl -sign -inkey key.pem -in msg.h -out pss.d $opts
            $OPENSSL pkeyutl -verify $GP -pubin -inkey pub.pem -in msg.h -sigfile pss.d $opts \
                > /dev/null || fail "gpursa rejects default PSS $bits $md $salt"
            if [ $salt = 0 ]; then
                cmp -s pss.g pss.d || fail "PSS salt 0 $bits $md: signatures differ"
            fi
        done

        # dgst: digest-sign of the whole message
        gp_ops 1 $OPENSSL dgst -$md $GP -sign key.pem -out dsig.g msg
        $OPENSSL dgst -$md -sign key.pem -out dsig.d msg
        cmp -s dsig.g dsig.d || fail "dgst $bits $md: signatures differ"
        $OPENSSL dgst -$md -verify pub.pem -signature dsig.g msg > /dev/null \
            || fail "default rejects gpursa dgst $bits $md"
        $OPENSSL dgst -$md $GP -verify pub.pem -signature dsig.d msg > /dev/null \
            || fail "gpursa rejects default dgst $bits $md"
        gp_ops 1 $OPENSSL dgst -$md $GP -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:-1 \
            -sign key.pem -out dpss.g msg
        $OPENSSL dgst -$md -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:-1 \
            -verify pub.pem -signature dpss.g msg > /dev/null || fail "default rejects gpursa dgst PSS $bits $md"
    done

    # a corrupted PSS signature (the last one of default's) does not verify through
    # gpursa: the low bit of byte 10 flipped (a fixed byte written there would leave
    # one signature in 256 as it was)
    cp pss.d pss.bad
    byte=$(od -An -tu1 -j10 -N1 pss.bad | tr -d ' ')
    printf "\\$(printf %o $((byte ^ 1)))" | dd of=pss.bad bs=1 seek=10 conv=notrunc 2>/dev/null
    cmp -s pss.bad pss.d && fail "the corruption left the PSS signature as it was ($bits)"
    if $OPENSSL pkeyutl -verify $GP -pubin -inkey pub.pem -in msg.h -sigfile pss.bad $opts \
        > /dev/null 2>&1; then
        fail "gpursa accepted a corrupted PSS signature ($bits)"
    fi

    # a tampered message does not verify through gpursa
    printf 'x' >> msg
    if $OPENSSL dgst -sha256 $GP -verify pub.pem -signature dsig.d msg > /dev/null 2>&1; then
        fail "gpursa accepted a signature over another message"
    fi
done

$OPENSSL dgst -sha256 -binary -out msg.h msg
# No default provider in the application (base decodes the PEM into gpursa's key
# management): gpursa's fallback loads default into a library context of its own.
gp_ops 1 env OPENSSL_CONF=/dev/null $OPENSSL pkeyutl -sign -provider base -provider gpursa \
    -inkey key.pem -in msg.h -pkeyopt digest:sha256 -out sig.nodef
$OPENSSL pkeyutl -sign -inkey key.pem -in msg.h -pkeyopt digest:sha256 -out sig.d
cmp -s sig.nodef sig.d || fail "the signature without the default provider differs from default's"

# absurd parameters: an error, not a crash and not a signature
# a salt longer than the key allows is, as OpenSSL says, data too large for the key
ERROR_PATTERN='gpursa: invalid salt length\|gpursa: data too large for key size'
for opt in rsa_pss_saltlen:-100 rsa_pss_saltlen:100000 rsa_pss_saltlen:junk; do
    expect_error "pkeyutl -pkeyopt $opt" $OPENSSL pkeyutl -sign $GP -inkey key.pem -in msg.h \
        -out bad.sig -pkeyopt digest:sha256 -pkeyopt rsa_padding_mode:pss -pkeyopt $opt || exit 1
done
ERROR_PATTERN=gpursa
expect_error "pkeyutl, X9.31 padding" $OPENSSL pkeyutl -sign $GP -inkey key.pem -in msg.h \
    -out bad.sig -pkeyopt rsa_padding_mode:x931 || exit 1
pass "openssl CLI signatures through gpursa"
