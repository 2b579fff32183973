#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Async-mode nginx with gpursa under `nginx -s reload` and `nginx -s quit` while clients
# keep making handshakes whose signatures are queued (paused ASYNC jobs) at each signal:
# - every connection the clients made was answered or closed by the server (none hung,
#   none got a TLS error), and service went on after each reload;
# - after each reload the old workers exit within worker_shutdown_timeout and the new
#   ones serve; the master never runs gpursa's threads (it signs nothing), so none are
#   left over from the reloads;
# - after the quit the master and every worker that ever ran are gone, the exit is clean,
#   and every worker printed gpursa's stats line (it unloaded gpursa: no paused job kept
#   it referenced), together counting a signature for every answered connection.
. "${srcdir:-$(dirname "$0")}/servers.sh"
# Each signature waits up to 50 ms in the queue: the signals find handshakes paused.
export GPURSA_MAX_WAIT_US=${GPURSA_MAX_WAIT_US:-50000}
TLS_WORKERS=2
reloads=2
tls_setup_nginx_async
tls_start
master=$TLS_PID
workers=$(tls_children "$master" | sort)
all_workers=$workers
tls_clients_start "$(tls_scaled 16 4)"
sleep 1
for r in $(seq "$reloads"); do
    tls_nginx_signal reload
    # the old workers finish their handshakes and exit; two new ones serve
    for i in $(seq 150); do
        new=$(tls_children "$master" | sort)
        [ -z "$(comm -12 <(echo "$workers") <(echo "$new"))" ] &&
            [ "$(echo "$new" | wc -w)" = "$TLS_WORKERS" ] && break
        sleep 0.1
    done
    [ -z "$(comm -12 <(echo "$workers") <(echo "$new"))" ] ||
        tls_fail "reload $r: old workers $(echo $workers) still running 15 s after the reload"
    [ "$(echo "$new" | wc -w)" = "$TLS_WORKERS" ] ||
        tls_fail "reload $r: workers $(echo $new), not $TLS_WORKERS new ones"
    tls_alive
    tls_note "reload $r: old workers $(echo $workers) exited, new workers $(echo $new)"
    workers=$new
    all_workers="$all_workers $new"
    n=$(tls_gpursa_threads "$master")
    [ "$n" = 0 ] || tls_fail "reload $r: the master runs $n gpursa threads"
    tls_curl 1.3    # the new workers serve
    sleep 1
done
tls_nginx_signal quit
tls_wait_exit "nginx -s quit" 20
tls_clients_stop
[ "$TLS_STATUS" = 0 ] || tls_fail "nginx exit status $TLS_STATUS"
for p in $all_workers; do
    ! kill -0 "$p" 2>/dev/null || tls_fail "worker $p still running after the quit"
done
tls_note "no process of nginx left"
read -r lines gpu host cpu <<<"$(tls_stats)"
# one line per worker of the three generations, one for the master
[ "$lines" = $((1 + TLS_WORKERS * (reloads + 1))) ] ||
    tls_fail "$lines gpursa stats lines, not $((1 + TLS_WORKERS * (reloads + 1))): a process kept gpursa loaded"
[ "$TLS_CLIENTS_OK" -gt 0 ] || tls_fail "no connection was answered"
# a signature for each answered connection (and each curl), at most one for each other
tls_expect_ops $((TLS_CLIENTS_OK + reloads)) \
    $((TLS_CLIENTS_OK + TLS_CLIENTS_CLOSED + TLS_CLIENTS_RESET + reloads))
tls_expect_batches
