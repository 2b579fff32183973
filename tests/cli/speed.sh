#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl speed -provider gpursa -provider default rsa2048 runs, and the
# stats line shows the private-key operations went through gpursa. The sign/s
# figure is read with bench/speed-rates.awk, the parser of bench/run-speed.sh,
# which must read the tables of OpenSSL 3.0 and of 3.5 alike.
set -u
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
use_conf
expect_op signature
rates() { awk -f "$GPURSA_TOP_SRCDIR/bench/speed-rates.awk" "$@"; }

# Both table formats, as OpenSSL 3.0.19 and 3.5.9 print them.
cat >"$TMP/t30" <<'TABLE'
                  sign    verify    sign/s verify/s
rsa 2048 bits 0.000843s 0.000024s   1186.7  41621.4
rsa 4096 bits 0.005880s 0.000091s    170.1  10988.0
TABLE
cat >"$TMP/t35" <<'TABLE'
                   sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s
rsa  2048 bits 0.000772s 0.000025s 0.000025s 0.000773s   1296.2  39386.4  40096.6   1293.3
                               keygen    encaps    decaps keygens/s  encaps/s  decaps/s
                    rsa2048 0.062500s 0.000026s 0.000909s      16.0   38292.9    1100.0
                               keygen     signs    verify keygens/s    sign/s  verify/s
                    rsa2048 0.050000s 0.000901s 0.000025s      20.0    1110.3   40634.8
TABLE
[ "$(rates "$TMP/t30" | tr '\n' ' ')" = "2048 1186.7 4096 170.1 " ] ||
    fail "OpenSSL 3.0 table read as: $(rates "$TMP/t30")"
[ "$(rates "$TMP/t35" | tr '\n' ' ')" = "2048 1296.2 " ] ||
    fail "OpenSSL 3.5 table read as: $(rates "$TMP/t35")"

# Plain `openssl speed rsa2048` with gpursa loaded, plus conf/openssl.cnf for ?provider=gpursa.
GPURSA_STATS=1 ossl speed -seconds 1 -provider gpursa -provider default rsa2048 \
    > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "openssl speed"; }
signs=$(rates "$TMP/out" | sed -n 's/^2048 //p')
[ -n "$signs" ] || { cat "$TMP/out"; fail "no rsa 2048 result line"; }
ops=$(stats_ops "$TMP/err")
[ "$ops" -gt 0 ] || { cat "$TMP/err"; fail "gpursa did no private operations"; }
pass "rsa2048 $signs sign/s, gpursa private ops: $ops ($(grep '^gpursa: ops' "$TMP/err"))"
