#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# nginx with gpursa's live metrics: the master and each worker (forked after gpursa loaded)
# write their own metrics file, valid while the server runs, counting handshakes under load;
# each process removes its file when it exits.
. "${srcdir:-$(dirname "$0")}/servers.sh"
tls_setup nginx
tls_test_metrics
