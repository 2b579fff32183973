#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Async-mode nginx (asynch_mode_nginx, conf/nginx-async.conf) with gpursa: full TLS 1.2
# and 1.3 handshakes with RSA-2048 and RSA-4096 keys from openssl s_client, curl and
# h2load; each signs exactly once through gpursa, and the signatures of handshakes in
# flight together in a worker run in one batch (mean batch above 1).
. "${srcdir:-$(dirname "$0")}/servers.sh"
# A signature waits up to 20 ms for others to join its batch: handshakes that a worker has
# in flight together then share a batch even where the clients' connections trickle in
# (the sanitizer trees). Stock nginx, one handshake at a time per worker, still makes
# batches of one.
export GPURSA_MAX_WAIT_US=${GPURSA_MAX_WAIT_US:-20000}
# No handshake timeout here: under TSan the host backend takes seconds per RSA-4096 batch.
TLS_RENDER_SED=${TLS_RENDER_SED:-s/client_header_timeout 5s;/client_header_timeout 120s;/}
tls_setup_nginx_async
for TLS_BITS in 2048 4096; do
    [ "$TLS_BITS" = 2048 ] || tls_make_cert "$TLS_BITS"
    tls_start
    tls_s_client 1.2
    tls_s_client 1.3
    tls_curl 1.2
    tls_curl 1.3
    # 2 x 40 (RSA-2048) or 2 x 20 connections at once, one handshake each
    n=$(tls_scaled $((TLS_BITS == 2048 ? 40 : 20)) 8)
    tls_h2load 1.3 "$n" "$n"
    tls_h2load 1.2 "$n" "$n"
    tls_stop QUIT
    [ "$TLS_STATUS" = 0 ] || tls_fail "nginx exit status $TLS_STATUS"
    tls_expect_ops $((4 + 2 * n)) $((4 + 2 * n))
    tls_expect_batches
done
