#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# nginx with gpursa stops cleanly, graceful (SIGQUIT) and fast (SIGTERM), while its
# workers are in the middle of handshakes.
. "${srcdir:-$(dirname "$0")}/servers.sh"
tls_setup nginx
tls_test_shutdown QUIT 0
tls_test_shutdown QUIT 0 stall
tls_test_shutdown TERM 0
