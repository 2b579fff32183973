#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/mont-proto/build.sh [OUTDIR]: builds mont-proto (the GPU program, sm_90)
# and tc-model (the host model, checked against GMP here) into OUTDIR
# (default: bench/mont-proto/_build). Standalone: not part of gpursa's make.
# Needs nvcc (CUDA 12+; NVCC overrides), g++ and GMP (gmp.h, libgmp).
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$here/_build}
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
mkdir -p "$out"
flags="-O3 -std=c++17 -arch=sm_90 -lineinfo"
# today's FP64 form in the shapes of the kernels of 1024-, 1536- and 2048-bit halves
for s in 1024:2048f2 1536:3072fw 2048:4096f; do
    bits=${s%%:*} file=${s#*:}
    "$nvcc" $flags -I"$top" -DFPB_SHAPE=gpursa_shape_"$file" -DFPB_SFX="$bits" \
        -c "$here/fp64_shape.cu" -o "$out/fp64_$bits.o"
done
"$nvcc" $flags -I"$here" -c "$here/mont-proto.cu" -o "$out/mont-proto.o"
"$nvcc" -arch=sm_90 -o "$out/mont-proto" "$out/mont-proto.o" "$out/fp64_1024.o" "$out/fp64_1536.o" \
    "$out/fp64_2048.o" -lgmp
g++ -O2 -std=c++17 -Wall -Wextra -I"$here" -o "$out/tc-model" "$here/tc_model.cc" -lgmp -pthread
echo "built $out/mont-proto and $out/tc-model"
