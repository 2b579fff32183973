#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/multi-gpu-run.sh OUTDIR [--build DIR] - how gpursa scales from one GPU to all of
# them (`devices` selects them; work spreads across them), in one go.
#
# On a machine with two or more NVIDIA GPUs and a CUDA build tree (--build DIR or
# GPURSA_BUILD, default _devbuild; it needs bench/gpursa-bench, bench/gpursa-latency and
# provider/.libs/gpursa.so). Each step runs with GPURSA_DEVICES=0 (one GPU) and then
# GPURSA_DEVICES=all, in the same run, next to the default provider:
#   (a) the kernels alone: gpursa-bench on each device (RSA-2048, AUTO, batch MG_BATCH)
#   (b) openssl speed -multi P -async_jobs N rsa2048 (P = cores) under NVIDIA MPS
#       (nvidia-cuda-mps-control -d, pipe and log folders under /tmp, stopped after)
#   (c) one process: gpursa-latency --peak, P threads x MG_LT_JOBS ASYNC jobs
#   (d) the default provider: openssl speed -multi P rsa2048
# Results: OUTDIR/summary.txt (table printed last), OUTDIR/*.txt raw outputs.
set -u
out=${1:?usage: bench/multi-gpu-run.sh OUTDIR [--build DIR]}
shift
build=${GPURSA_BUILD:-_devbuild}
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?--build needs a folder}; shift ;;
    *) echo "multi-gpu-run: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
build=$(cd "$build" && pwd) || exit 1
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
P=$(nproc)
secs=${MG_SECONDS:-5}
jobs=${MG_JOBS:-256}
lt_jobs=${MG_LT_JOBS:-128}
batch=${MG_BATCH:-32768}
export OPENSSL_MODULES=$build/provider/.libs GPURSA_BACKEND=cuda
ulimit -n "$(ulimit -Hn)" 2>/dev/null
summary=$out/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
rate() { awk '/^rsa +[0-9]+ bits/ { r = $6 } END { print r }' "$1"; }
stats() { awk '/^gpursa: ops / { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] } }
               END { printf "gpu=%d cpu=%d batches=%d", v["gpu"], v["cpu"], v["batches"] }' "$1"; }

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(cat "$build/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
    echo "cpu: $P x$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    openssl version
} | tee -a "$summary"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say "GPUs: $ngpu"

# (a) each device alone
for d in $(seq 0 $((ngpu - 1))); do
    timeout 120 "$build/bench/gpursa-bench" --backend cuda --device "$d" --bits 2048 --batch "$batch" \
        --seconds 2 --no-cpu > "$out/kernel_dev$d.txt" 2>&1
    say "(a) kernel, device $d, batch $batch: $(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $3 " ops/s, kernel " $4 " ms, " $8 " " $9 }' "$out/kernel_dev$d.txt")"
done

# (d) the default provider
timeout 120 openssl speed -elapsed -seconds "$secs" -multi "$P" rsa2048 > "$out/default.txt" 2>&1
def=$(rate "$out/default.txt")
say "(d) default provider, openssl speed -multi $P rsa2048: $def sign/s"

# (b) all cores under MPS, one GPU then all
mps=/tmp/gpursa-mg-mps.$$
mkdir -p "$mps/pipe" "$mps/log"
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
if timeout 20 nvidia-cuda-mps-control -d; then
    for devs in 0 all; do
        GPURSA_DEVICES=$devs GPURSA_STATS=1 timeout $((secs + 90)) openssl speed -elapsed -seconds "$secs" \
            -provider gpursa -provider default -propquery '?provider=gpursa' -multi "$P" \
            -async_jobs "$jobs" rsa2048 > "$out/mps_$devs.txt" 2> "$out/mps_$devs.err"
        say "(b) MPS, -multi $P -async_jobs $jobs, GPURSA_DEVICES=$devs: $(rate "$out/mps_$devs.txt") sign/s ($(stats "$out/mps_$devs.err"))"
    done
    echo quit | timeout 10 nvidia-cuda-mps-control
else
    say "(b) MPS could not start"
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
rm -rf "$mps"

# (c) one process, every core's thread with ASYNC jobs
for devs in 0 all; do
    GPURSA_DEVICES=$devs timeout $((secs + 90)) "$build/bench/gpursa-latency" --peak --threads "$P" \
        --async-jobs "$lt_jobs" --seconds "$secs" --no-compare --modules "$OPENSSL_MODULES" \
        > "$out/latency_$devs.txt" 2>&1
    say "(c) one process, $P threads x $lt_jobs jobs, GPURSA_DEVICES=$devs: $(grep -m1 '^gpursa' "$out/latency_$devs.txt" | cut -c1-200)"
done
