#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Async-mode nginx with gpursa survives clients that hang up or reset while their
# handshake's ASYNC job is paused on its queued signature (and those that send garbage),
# and leaks no fds (sockets, gpursa's eventfds) or memory (SSL objects, paused jobs and
# their stacks) over many handshakes (thresholds in servers.sh); every process prints
# gpursa's stats line at its graceful exit, so none kept a job holding gpursa.
. "${srcdir:-$(dirname "$0")}/servers.sh"
# Each signature waits 20 ms in the queue for its batch to fill, so a client that sends
# its ClientHello and hangs up leaves while its job is paused.
export GPURSA_MAX_WAIT_US=${GPURSA_MAX_WAIT_US:-20000}
TLS_WARMUP=${TLS_WARMUP:-1200}
tls_setup_nginx_async
tls_test_abuse_and_leaks
tls_expect_batches
