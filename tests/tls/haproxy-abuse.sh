#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# haproxy with gpursa survives clients that hang up mid-handshake or send garbage, and leaks
# no fds or memory over many handshakes (thresholds in servers.sh).
. "${srcdir:-$(dirname "$0")}/servers.sh"
# gpursa's queue with CPU workers (its host backend with batches always "too small"):
# every signature goes through the queue and, in HAProxy, pauses its ASYNC job, at the
# CPU's speed, so that many handshakes fit in the test's time.
export GPURSA_MIN_GPU_BATCH=${GPURSA_MIN_GPU_BATCH:-1048576}
export GPURSA_CPU_FALLBACK=${GPURSA_CPU_FALLBACK:-always}   # even on a busy test machine
# HAProxy's object pools and OpenSSL's ASYNC job pools still grow towards their peak
# after 400 handshakes (+347, +112, +171 KiB in the next three windows, seen): warm up as
# long as async nginx does, so that the windows measure leaks, not that growth.
TLS_WARMUP=${TLS_WARMUP:-1200}
tls_setup haproxy
tls_test_abuse_and_leaks
