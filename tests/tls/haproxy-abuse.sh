#!/bin/bash
# haproxy with gpursa survives clients that hang up mid-handshake or send garbage, and leaks
# no fds or memory over many handshakes (thresholds in common.sh).
. "${srcdir:-$(dirname "$0")}/common.sh"
tls_setup haproxy
tls_test_abuse_and_leaks
