#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Download (not install) the Debian packages bench/tls-handshake.sh --debs carries to a
# machine without the servers: HAProxy, nginx, h2load, the openssl CLI and the libraries
# they need that a CUDA image may lack. Run on Debian 12 (the versions the benchmark was
# tested with); the folder must not be committed (/_debs/ is in .git/info/exclude).
#   bench/tls/fetch-debs.sh [DIR]     (default: _debs at the top of the checkout)
# Left out on purpose: libc6, libstdc++6, libgcc-s1 and libssl3, which the target's own
# gpursa.so and CUDA runtime need in the target's versions.
set -e
dir=${1:-$(dirname "$0")/../../_debs}
mkdir -p "$dir"
cd "$dir"
apt-get download \
  haproxy liblua5.3-0 libpcre2-8-0 libopentracing-c-wrapper0 libopentracing1 libsystemd0 \
  libcap2 libgcrypt20 libgpg-error0 liblzma5 libzstd1 liblz4-1 libcrypt1 zlib1g \
  nginx \
  nghttp2-client libnghttp2-14 libjemalloc2 libev4 \
  openssl
ls -l
