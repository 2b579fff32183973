#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# HAProxy with gpursa stops cleanly while handshakes with async operations are in flight:
# soft-stop (SIGUSR1), soft-stop ended by hard-stop-after, and SIGTERM, which HAProxy
# (not in master-worker mode) leaves to the kernel's default action: status 143.
. "${srcdir:-$(dirname "$0")}/servers.sh"
tls_setup haproxy
tls_test_shutdown USR1 0
tls_test_shutdown USR1 0 stall
tls_test_shutdown TERM 143
