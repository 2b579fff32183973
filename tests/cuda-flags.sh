#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/cuda-flags.sh, the quick start's choice of CUDA architectures, with a fake
# nvidia-smi first on a PATH that holds nothing else of NVIDIA's: the distinct compute
# capabilities the driver reports become one --with-cuda-arch word, ascending; no GPU, no
# driver or no nvidia-smi give --without-cuda; a GPU without a reported compute capability
# leaves configure's default.
set -u
top=${GPURSA_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-cuda-flags.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
for t in tr grep sort paste cat; do   # cat: the fake nvidia-smi
    p=$(command -v "$t") || { echo "cuda-flags: no $t"; exit 99; }
    ln -s "$p" "$tmp/bin/$t"
done
sh=$(command -v sh)
fail=0

# fake_smi QUERY_OUTPUT QUERY_STATUS LIST_OUTPUT: an nvidia-smi that answers the
# compute_cap query and -L so, and fails on anything else.
fake_smi() {
    printf '%s' "$1" >"$tmp/query.out"
    printf '%s' "$3" >"$tmp/list.out"
    cat >"$tmp/bin/nvidia-smi" <<FAKE
#!$sh
case "\$*" in
"--query-gpu=compute_cap --format=csv,noheader") cat "$tmp/query.out"; exit $2 ;;
"-L") cat "$tmp/list.out"; [ -s "$tmp/list.out" ] || exit 6; exit 0 ;;
*) echo "unexpected nvidia-smi \$*" >&2; exit 2 ;;
esac
FAKE
    chmod +x "$tmp/bin/nvidia-smi"
}

# expect WHAT FLAGS: bench/cuda-flags.sh prints exactly FLAGS
expect() {
    got=$(PATH="$tmp/bin" "$sh" "$top/bench/cuda-flags.sh" 2>"$tmp/err")
    if [ "$got" = "$2" ] && [ ! -s "$tmp/err" ]; then
        echo "ok: $1: '$got'"
    else
        echo "FAIL: $1: printed '$got', expected '$2'"; cat "$tmp/err"; fail=1
    fi
}

gpus='GPU 0: NVIDIA H200 (UUID: GPU-0)
GPU 1: NVIDIA H200 (UUID: GPU-1)
'
fake_smi '9.0
9.0
' 0 "$gpus"
expect "two GPUs of one kind" "--with-cuda-arch=90"
fake_smi '9.0
8.0
8.6
8.0
' 0 "$gpus"
expect "three kinds, unordered" "--with-cuda-arch=80,86,90"
fake_smi '10.0
7.5
' 0 "$gpus"
expect "a three-digit capability" "--with-cuda-arch=75,100"
fake_smi 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.
' 9 ''
expect "nvidia-smi without a driver" "--without-cuda"
fake_smi '' 6 ''
expect "a driver without GPUs" "--without-cuda"
fake_smi 'Field "compute_cap" is not a valid field to query.
' 2 "$gpus"
expect "a driver older than compute_cap" ""
rm "$tmp/bin/nvidia-smi"
expect "no nvidia-smi" "--without-cuda"
exit $fail
