#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# nginx with gpursa survives clients that hang up mid-handshake or send garbage, and leaks
# no fds or memory over many handshakes (thresholds in servers.sh).
. "${srcdir:-$(dirname "$0")}/servers.sh"
# gpursa's queue with CPU workers (its host backend with batches always "too small"):
# every signature goes through the queue and, in HAProxy, pauses its ASYNC job, at the
# CPU's speed, so that many handshakes fit in the test's time.
export GPURSA_MIN_GPU_BATCH=${GPURSA_MIN_GPU_BATCH:-1048576}
export GPURSA_CPU_FALLBACK=${GPURSA_CPU_FALLBACK:-always}   # even on a busy test machine
tls_setup nginx
tls_test_abuse_and_leaks
