#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# s_server with gpursa (conf/openssl.cnf) and s_client handshakes: TLS 1.3,
# TLS 1.2 ECDHE-RSA and TLS 1.2 RSA key exchange. The server's stats line
# shows its private-key operations went through gpursa.
set -u
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
use_conf
expect_op signature
expect_op asymcipher

ossl_default req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null || fail "cannot make a certificate"

# port 0: the kernel picks a free port, s_server prints it
# -www: the server answers HTTP and never reads its own stdin (which is /dev/null here)
GPURSA_STATS=1 timeout "$TIMEOUT" "$OPENSSL" s_server -www -accept 127.0.0.1:0 -naccept 3 \
    -cert "$TMP/cert.pem" -key "$TMP/key.pem" > "$TMP/server.out" 2> "$TMP/server.err" &
server=$!
BG_PIDS="$server"
port=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    port=$(sed -n 's/^ACCEPT .*:\([0-9][0-9]*\)$/\1/p' "$TMP/server.out")
    [ -n "$port" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.25
done
[ -n "$port" ] || { cat "$TMP/server.out" "$TMP/server.err"; fail "s_server did not start"; }

# handshake NAME ARGS...: one s_client connection with the reference provider only.
handshake() {
    name=$1
    shift
    printf 'GET / HTTP/1.0\r\n\r\n' | ossl_default s_client -connect "127.0.0.1:$port" -servername localhost \
        -CAfile "$TMP/cert.pem" -verify_return_error -brief "$@" > "$TMP/client" 2>&1 \
        || { cat "$TMP/client" "$TMP/server.err"; fail "$name handshake"; }
    grep -q 'Verification: OK' "$TMP/client" || { cat "$TMP/client"; fail "$name: server not verified"; }
}

handshake "TLS 1.3" -tls1_3
grep -q 'Protocol version: TLSv1.3' "$TMP/client" || { cat "$TMP/client"; fail "not TLS 1.3"; }
pass "TLS 1.3 handshake"
handshake "TLS 1.2 ECDHE-RSA" -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256
grep -q 'Ciphersuite: ECDHE-RSA-AES128-GCM-SHA256' "$TMP/client" || { cat "$TMP/client"; fail "not ECDHE-RSA"; }
pass "TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256 handshake"
handshake "TLS 1.2 RSA key exchange" -tls1_2 -cipher AES128-GCM-SHA256
grep -q 'Ciphersuite: AES128-GCM-SHA256' "$TMP/client" || { cat "$TMP/client"; fail "not RSA key exchange"; }
pass "TLS 1.2 AES128-GCM-SHA256 (RSA key exchange) handshake"

# -naccept 3: the server exits now and prints gpursa's stats at unload
wait "$server" || { cat "$TMP/server.err"; fail "s_server failed"; }
BG_PIDS=""
ops=$(stats_ops "$TMP/server.err")
[ "$ops" -ge 3 ] || { cat "$TMP/server.err"; fail "server's gpursa did $ops private operations, expected >= 3"; }
pass "server private ops through gpursa: $ops ($(grep '^gpursa: ops' "$TMP/server.err"))"
