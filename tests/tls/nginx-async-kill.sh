#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Async-mode nginx with gpursa: a worker killed with SIGKILL while clients keep making
# handshakes (its signatures queued in its gpursa queue) is replaced by the master, and
# service goes on: the clients' connections are answered, closed or reset (none hangs),
# new handshakes all succeed and both workers sign through gpursa, and the server then
# stops cleanly with the stats lines of the master and the two live workers.
. "${srcdir:-$(dirname "$0")}/servers.sh"
export GPURSA_MAX_WAIT_US=${GPURSA_MAX_WAIT_US:-50000}
TLS_WORKERS=2
tls_setup_nginx_async
tls_start
workers=$(tls_children "$TLS_PID" | sort)
tls_clients_start "$(tls_scaled 16 4)"
sleep 1
victim=$(echo "$workers" | head -1)
kill -KILL "$victim" || tls_fail "cannot kill worker $victim"
TLS_KILLED=$victim
for i in $(seq 100); do
    now=$(tls_children "$TLS_PID" | sort)
    ! echo "$now" | grep -qx "$victim" && [ "$(echo "$now" | wc -w)" = "$TLS_WORKERS" ] && break
    sleep 0.1
done
! echo "$now" | grep -qx "$victim" && [ "$(echo "$now" | wc -w)" = "$TLS_WORKERS" ] ||
    tls_fail "workers after killing $victim: $(echo $now), not $TLS_WORKERS others"
grep -q "worker process $victim exited on signal 9" "$TLS_WORK/server.err" ||
    tls_fail "the master did not see worker $victim die"
tls_note "worker $victim killed; workers now $(echo $now)"
sleep 2
tls_alive
n=$(tls_scaled 40 8)
tls_h2load 1.3 "$n" "$n"
tls_h2load 1.2 "$n" "$n"
tls_clients_stop
[ "$TLS_CLIENTS_OK" -gt 0 ] || tls_fail "no connection was answered"
tls_stop QUIT
[ "$TLS_STATUS" = 0 ] || tls_fail "nginx exit status $TLS_STATUS"
read -r lines gpu host cpu <<<"$(tls_stats)"
[ "$lines" = $((1 + TLS_WORKERS)) ] ||
    tls_fail "$lines gpursa stats lines, not $((1 + TLS_WORKERS)) (the master and the live workers)"
signers=$(grep -c '^gpursa: ops gpu=[0-9]* host=[1-9]' "$TLS_WORK/server.err")
[ "$signers" = "$TLS_WORKERS" ] || tls_fail "$signers workers signed, not $TLS_WORKERS"
tls_expect_ops $((2 * n))
tls_expect_batches
