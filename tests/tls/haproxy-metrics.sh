#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# HAProxy with gpursa's live metrics: the metrics file is valid Prometheus text while the
# server runs, its operation counters rise under load, and its last write equals the stats line.
. "${srcdir:-$(dirname "$0")}/servers.sh"
tls_setup haproxy
tls_test_metrics
