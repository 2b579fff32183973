#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install dependencies, build gpursa and run the whole test suite (README's test command):
# make check, then the security evidence of README's Security table (tests/ci-security.sh:
# the suites again in an ASan+UBSan tree and in a TSan tree, and each libFuzzer harness
# for a bounded time).
# GPURSA_CONFIGURE_FLAGS, when set (even empty), goes to configure as it is.
# After make check: the OpenSSL 3.5 stage (tests/ci-openssl35.sh; GPURSA_OPENSSL35=0 skips
# it) and the Debian package stage (tests/ci-deb.sh; GPURSA_DEB=0 skips it).
# GPURSA_SECURITY=0 skips the sanitizer and fuzzing steps and, unless they are asked for
# with =1, those two stages (a quick local run);
# FUZZ_SECONDS (default 45) is each harness's fuzzing time.
set -e
cd "$(dirname "$0")/.."
tests/install-deps.sh
# asynch_mode_nginx for tests/tls's nginx-async tests, built once (bench/build-async-nginx.sh)
# for make check and the sanitizer trees alike, where bench/tls-handshake.sh also looks
export GPURSA_NGINX_ASYNC_PREFIX="${GPURSA_NGINX_ASYNC_PREFIX:-$PWD/_build-nginx-async}"
./autogen.sh
# Without an NVIDIA GPU nothing here runs the CUDA backend, and building it for every
# architecture nvcc knows dominates the build: one architecture still proves it compiles.
# (configure finds nvcc on PATH or in /usr/local/cuda/bin; an nvcc without sm_90 keeps its default.)
if [ -z "${GPURSA_CONFIGURE_FLAGS+set}" ] && ! nvidia-smi -L >/dev/null 2>&1 \
   && PATH="$PATH:/usr/local/cuda/bin" nvcc --list-gpu-arch 2>/dev/null | grep -qx compute_90; then
    GPURSA_CONFIGURE_FLAGS="--with-cuda-arch=90"
    echo "run-all.sh: no NVIDIA GPU: the CUDA backend is built for sm_90 only"
fi
mkdir -p _build && cd _build
../configure ${GPURSA_CONFIGURE_FLAGS:-}
make -j"$(nproc)"
make -j"$(nproc)" check || { cat tests/*/test-suite.log 2>/dev/null; exit 1; }
cd ..
# --- OpenSSL 3.5 stage: make check again, built against Debian 13's OpenSSL 3.5 in a
# debootstrap root (tests/ci-openssl35.sh; skipped without root or debootstrap).
# GPURSA_OPENSSL35=0 leaves it out; so does GPURSA_SECURITY=0 unless GPURSA_OPENSSL35=1.
if [ "${GPURSA_OPENSSL35:-${GPURSA_SECURITY:-1}}" = 0 ]; then
    echo "run-all.sh: GPURSA_OPENSSL35=0: the OpenSSL 3.5 stage skipped"
else
    rc=0; tests/ci-openssl35.sh || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 77 ] || exit "$rc"
fi
# --- end of the OpenSSL 3.5 stage
# The Debian package: built from a copy of the sources, linted, installed into a fresh
# Debian root where it signs (tests/ci-deb.sh). GPURSA_DEB=0 leaves it out; so does
# GPURSA_SECURITY=0 unless GPURSA_DEB=1.
GPURSA_DEB="${GPURSA_DEB:-${GPURSA_SECURITY:-1}}" tests/ci-deb.sh
if [ "${GPURSA_SECURITY:-1}" = 0 ]; then
    echo "run-all.sh: GPURSA_SECURITY=0: sanitizer and fuzzing steps skipped"
    exit 0
fi
GPURSA_SEC_BUILDDIR="$PWD/_build-security" FUZZ_SECONDS="${FUZZ_SECONDS:-45}" tests/ci-security.sh
