#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints the configure flag that builds the CUDA backend for exactly the GPUs of this
# machine, as the NVIDIA driver reports them (nvidia-smi):
#   --with-cuda-arch=LIST  the distinct compute capabilities ("9.0" is 90), ascending,
#                          comma-separated so that the flag stays one word;
#   --without-cuda         no GPU, no driver or no nvidia-smi: no CUDA compile at all;
#   nothing                a GPU whose compute capability the driver does not report
#                          (a driver older than the compute_cap field): configure's default.
# bench/run-speed.sh builds with it; tests/cuda-flags.sh checks it with a fake nvidia-smi.
caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null) || caps=""
archs=$(printf '%s\n' "$caps" | tr -d ' .\r' | grep -E '^[1-9][0-9]{1,2}$' | sort -n -u | paste -s -d, -)
if [ -n "$archs" ]; then
    echo "--with-cuda-arch=$archs"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
    echo "--without-cuda"
fi
