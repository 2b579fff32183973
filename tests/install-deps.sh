#!/bin/sh
# Install what building and testing gpursa needs on Debian/Ubuntu (run as root or with sudo).
set -e
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  build-essential autoconf automake libtool pkg-config \
  libssl-dev openssl check libgmp-dev valgrind ca-certificates \
  haproxy nginx curl nghttp2-client python3
