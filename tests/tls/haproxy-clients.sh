#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# haproxy with gpursa: full TLS 1.2 and 1.3 handshakes from openssl s_client, curl and h2load,
# all signed through gpursa (its stats count exactly one operation per handshake).
. "${srcdir:-$(dirname "$0")}/servers.sh"
tls_setup haproxy
tls_test_clients
