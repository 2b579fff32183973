#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu-mem-peak.sh CMD [ARG ...] - run CMD (its output to stderr) and print the GPU's
# memory.used at its peak while CMD ran, in MiB (nvidia-smi every 0.2 s; the first GPU;
# the CUDA contexts included). Used by gpu-run.sh and kernel-ab.sh.
"$@" >&2 &
pid=$!
peak=0
while kill -0 $pid 2> /dev/null; do
    u=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2> /dev/null | head -1)
    [ -n "$u" ] && [ "$u" -gt "$peak" ] && peak=$u
    sleep 0.2
done
wait $pid
echo "$peak"
