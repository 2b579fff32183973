#!/bin/sh
# openssl speed -provider gpursa -provider default rsa2048 runs, and the
# stats line shows the private-key operations went through gpursa.
. "$(dirname "$0")/common.sh"
need_op signature

# The command of the issue, plus conf/openssl.cnf for ?provider=gpursa.
GPURSA_STATS=1 ossl speed -seconds 1 -provider gpursa -provider default rsa2048 \
    > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "openssl speed"; }
grep -q '^rsa 2048 bits' "$TMP/out" || { cat "$TMP/out"; fail "no rsa 2048 result line"; }
ops=$(stats_private_ops "$TMP/err")
[ "$ops" -gt 0 ] || { cat "$TMP/err"; fail "gpursa did no private operations"; }
signs=$(sed -n 's/^rsa 2048 bits *[0-9.]*s *[0-9.]*s *\([0-9.]*\).*/\1/p' "$TMP/out")
pass "rsa2048 $signs sign/s, gpursa private ops: $ops ($(grep '^gpursa: ops' "$TMP/err"))"
