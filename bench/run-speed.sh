#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Quick start, main job: install dependencies, build gpursa, and compare RSA signing with
# `openssl speed`: gpursa against OpenSSL's default provider, on the GPU when there is one
# and on the CPU fallback otherwise (the summary says which backend ran).
#
#   bench/run-speed.sh [rsa2048|rsa3072|rsa4096 ...]
# Environment: SECONDS_PER_TEST (default 5), ASYNC_JOBS (default 64), MULTI (default 1),
#   GPURSA_BACKEND and the other GPURSA_* keys (see README), GPURSA_CONFIGURE_FLAGS (default:
#   bench/cuda-flags.sh's, the CUDA kernels for the GPUs present only, none without a GPU),
#   SKIP_DEPS=1, SKIP_BUILD=1.
set -e
cd "$(dirname "$0")/.."
top=$(pwd)
algs=${*:-rsa2048}
secs=${SECONDS_PER_TEST:-5}
jobs=${ASYNC_JOBS:-64}
multi=${MULTI:-1}

[ -n "$SKIP_DEPS" ] || tests/install-deps.sh --build
if [ -z "$SKIP_BUILD" ]; then
    # Build only what this machine runs (bench/cuda-flags.sh): the CUDA kernels for the
    # compute capabilities of the GPUs present, as the driver reports them; no CUDA without
    # a GPU (the comparison then runs on the CPU fallback, as its summary says).
    # GPURSA_CONFIGURE_FLAGS, when set (even empty), goes to configure as it is.
    if [ -z "${GPURSA_CONFIGURE_FLAGS+set}" ]; then
        GPURSA_CONFIGURE_FLAGS=$(bench/cuda-flags.sh)
        case "$GPURSA_CONFIGURE_FLAGS" in
        --without-cuda) echo "run-speed: no NVIDIA GPU (nvidia-smi): building without the CUDA backend; gpursa will run on its CPU fallback" ;;
        "") echo "run-speed: the driver does not report the GPU's compute capability: building configure's default CUDA architectures" ;;
        *) echo "run-speed: the GPUs' compute capabilities: configure $GPURSA_CONFIGURE_FLAGS" ;;
        esac
    fi
    ./autogen.sh >/dev/null
    mkdir -p _build
    (cd _build && ../configure -q $GPURSA_CONFIGURE_FLAGS && make -s -j"$(nproc)")
    # what configure built, in the provider's own words (config.h), e.g. "(cuda: yes 90)"
    echo "run-speed: built $(sed -n 's/^#define GPURSA_BUILD_INFO "\(.*\)"$/\1/p' _build/config.h)"
fi
export OPENSSL_MODULES="$top/_build/provider/.libs"
unset OPENSSL_CONF
[ -f "$OPENSSL_MODULES/gpursa.so" ] || { echo "run-speed: $OPENSSL_MODULES/gpursa.so not built" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
multiopt=""; [ "$multi" -gt 1 ] && multiopt="-multi $multi"

echo "== default provider: openssl speed -elapsed -seconds $secs $multiopt $algs"
openssl speed -elapsed -seconds "$secs" $multiopt $algs 2>/dev/null | tee "$out/default.txt" | grep -E '^(rsa|  *sign|[0-9]+:rsa)' || true

echo "== gpursa: openssl speed -elapsed -seconds $secs $multiopt -async_jobs $jobs -provider gpursa -provider default -propquery '?provider=gpursa' $algs"
GPURSA_STATS=1 GPURSA_LOG_LEVEL=${GPURSA_LOG_LEVEL:-2} \
    openssl speed -elapsed -seconds "$secs" $multiopt -async_jobs "$jobs" \
    -provider gpursa -provider default -propquery '?provider=gpursa' $algs \
    >"$out/gpursa.txt" 2>"$out/gpursa.err" || { cat "$out/gpursa.err" >&2; exit 1; }
grep -E '^(rsa|  *sign|[0-9]+:rsa)' "$out/gpursa.txt" || true

# "BITS SIGN/S" per key size, from OpenSSL 3.0's table or 3.5's wider one.
rate() { awk -f "$top/bench/speed-rates.awk" "$1"; }
stats=$(grep '^gpursa: ops' "$out/gpursa.err" | tail -n 1)
backend="CPU fallback (OpenSSL default provider inside gpursa)"
case "$stats" in
    *"gpu=0 "*) case "$stats" in *"host=0 "*) ;; *) backend="host backend (gpursa kernel arithmetic on CPU threads)";; esac ;;
    *"gpu="*) backend="GPU (CUDA)";;
esac
grep -i 'gpursa.*\(device\|backend\)' "$out/gpursa.err" | head -n 3 || true
echo
echo "== summary (sign/s, wall clock)"
printf '%-10s %14s %14s %8s\n' key default gpursa ratio
rate "$out/default.txt" > "$out/d"; rate "$out/gpursa.txt" > "$out/g"
join "$out/d" "$out/g" | awk '{ printf "%-10s %14.1f %14.1f %7.2fx\n", "rsa" $1, $2, $3, ($2 > 0 ? $3 / $2 : 0) }'
echo "gpursa ran on: $backend"
echo "${stats:-gpursa: no stats line (GPURSA_STATS=1 had no effect?)}"
