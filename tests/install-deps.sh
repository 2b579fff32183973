#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install what building and testing gpursa needs on Debian/Ubuntu (run as root or with sudo);
# with --build, only what building it needs.
# clang with its sanitizer and libFuzzer runtimes, and gcc's (libasan, libtsan: part of
# build-essential), are for tests/ci-security.sh; xxd is for the hostile-input CLI tests;
# debootstrap makes the Debian 13 root in which tests/ci-openssl35.sh tests OpenSSL 3.5.
# libpcre2-dev and zlib1g-dev are for building asynch_mode_nginx (bench/build-async-nginx.sh:
# the nginx-async tests in tests/tls and bench/tls-handshake.sh).
# debhelper, lintian and debootstrap are for tests/ci-deb.sh (dpkg-dev comes with
# build-essential; debian/rules needs no fakeroot: Rules-Requires-Root: no).
set -e
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

# apt-get ARGS, waiting while another apt or dpkg holds their locks: a fresh
# cloud machine often runs its own package updates for minutes after boot,
# and apt-get update does not wait for the lists' lock by itself. Up to 15
# minutes, then the last error stands.
apt_get() {
    err=$(mktemp)
    waited=0
    while :; do
        if $SUDO apt-get -o DPkg::Lock::Timeout=60 "$@" 2>"$err"; then
            cat "$err" >&2; rm -f "$err"; return 0
        fi
        if ! grep -q "Could not get lock" "$err" || [ "$waited" -ge 900 ]; then
            cat "$err" >&2; rm -f "$err"; return 1
        fi
        [ "$waited" -gt 0 ] || echo "install-deps.sh: another apt or dpkg holds the package locks; waiting" >&2
        sleep 10; waited=$((waited + 10))
    done
}

apt_get update -q
# --build: only what building gpursa and bench/run-speed.sh need (the quick start's main job).
if [ "${1:-}" = --build ]; then
    apt_get install -y -q --no-install-recommends \
      build-essential autoconf automake libtool pkg-config libssl-dev openssl ca-certificates
    exit 0
fi
# Debian 12 ships clang's runtimes (libclang_rt.asan, .fuzzer, ...) in libclang-rt-dev;
# Ubuntu 22.04 has them in clang's own dependencies and no such package.
rt=""
apt-cache show libclang-rt-dev >/dev/null 2>&1 && rt=libclang-rt-dev
apt_get install -y -q --no-install-recommends \
  build-essential autoconf automake libtool pkg-config \
  libssl-dev openssl check libgmp-dev valgrind ca-certificates \
  haproxy nginx curl nghttp2-client python3 libpcre2-dev zlib1g-dev \
  clang $rt xxd \
  debhelper lintian debootstrap
