#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu-run.sh OUTDIR [quick|full|coop|tests] - the one script for the GPU machine.
#
# Runs, in one go, on a machine with an NVIDIA GPU: the gpu/ test suite
# against the CUDA backend, a look at the kernels' machine code (instruction
# counts per Montgomery multiplication, for doc/design.md), gpursa-bench sweeps
# of throughput against batch size for every variant, the OpenSSL default
# provider on all cores of the same host (inside gpursa-bench), device memory
# at a batch of 1,000,000 RSA-2048 items, and the plot. Results: OUTDIR/
#   summary.txt    machine (GPU, driver, CPU, OpenSSL, commit), test result,
#                  instruction counts, memory, and the table printed last
#   tests.log      the Check suite (TAP), GPURSA_TEST_BACKEND=cuda
#   sass_2048.txt.gz  cuobjdump -sass of the RSA-2048 kernels (every arch)
#   bench.csv      one row per (size, variant, batch); bench.log all output
#   batch.png      throughput against batch size (python3 + matplotlib if present)
#
# The GPU machine may lack Check, GMP headers and libtool: build on another
# machine (configure --with-cuda-arch="... 90"; make; make -C tests/gpu
# check TESTS=) and copy the build tree (GPURSA_BUILD, default _devbuild)
# and the shared libraries the GPU machine lacks (GPURSA_CARRY/lib, default
# _devlibs/lib, e.g. libsubunit.so.0) to it. Without a build tree the script builds in place
# when it can (autotools, libtool and Check present).
#
# Modes: quick  tests, RSA-2048 sweep of every variant to 2^18, the other
#               sizes at one batch size; full  sweeps of every size to 2^20;
#               coop  the COOP kernels against FAST (2048) and AUTO (other sizes),
#               sweeps to 2^17 / 2^16; tests  the test suite only.
set -u
out=${1:?usage: bench/gpu-run.sh OUTDIR [quick|full|tests]}
mode=${2:-quick}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GPURSA_BUILD:-$top/_devbuild}
carry=${GPURSA_CARRY:-$top/_devlibs}
secs=${GPURSA_BENCH_SECONDS:-}
[ -n "$secs" ] || { [ "$mode" = quick ] && secs=1 || secs=0.5; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

if [ ! -x "$build/bench/gpursa-bench" ]; then
    echo "gpu-run: no build tree at $build; building in $top/_build" >&2
    (cd "$top" && ./autogen.sh >/dev/null && mkdir -p _build && cd _build &&
        ../configure -q && make -s -j"$(nproc)" && make -s -C tests/gpu check TESTS=) || exit 1
    build=$top/_build
fi

# ---- the machine ------------------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(cat "$build/COMMIT" 2>/dev/null || cat "$carry/COMMIT" 2>/dev/null || git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv 2>&1
    echo "cpu: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    openssl version 2>&1
    uname -r
} >> "$summary"
cat "$summary"

# ---- tests --------------------------------------------------------------------------
: > "$out/tests.log"
res=$(sh "$top/bench/gpu-tests.sh" "$build" "$out/tests.log")
rc_tests=$?
say "tests (test_gpu_rsa, cuda backend): $res"
grep '^not ok' "$out/tests.log" | head -5 | tee -a "$summary"
[ "$mode" = tests ] && exit $rc_tests

# ---- machine code: the SASS of the RSA-2048 kernels (sm_90) ---------------------------
# counted afterwards (doc/design.md: instructions per Montgomery operation)
if command -v cuobjdump >/dev/null 2>&1; then
    cuobjdump -sass "$build/gpu/.libs/kernels_2048.o" 2>&1 | gzip -9 > "$out/sass_2048.txt.gz"
    say "sass: $(gzip -dc "$out/sass_2048.txt.gz" | grep -c 'Function :') functions dumped"
fi

# ---- benchmarks ---------------------------------------------------------------------
bench="$build/bench/gpursa-bench"
csv="$out/bench.csv"
rm -f "$csv"
run_bench_to() {
    to=$1; shift
    echo "+ gpursa-bench $*" >> "$out/bench.log"
    timeout 400 "$bench" --backend cuda --csv "$to" "$@" >> "$out/bench.log" 2>&1
    echo "rc=$?" >> "$out/bench.log"
}
run_bench() { run_bench_to "$csv" "$@"; }
case $mode in
full)
    # up to 1,048,576 items with every variant: two batches in flight (not the
    # bench's four) keep the slow variants' largest batches inside the timeout
    run_bench --bits 2048 --variant all --sweep --max-batch 1048576 --seconds "$secs" --inflight 2
    run_bench --bits 1024 --variant all --sweep --max-batch 1048576 --seconds "$secs" --inflight 2
    run_bench --bits 3072,4096 --variant imad,fast --sweep --max-batch 131072 --seconds "$secs"
    run_bench --bits 3072,4096 --variant xmad --sweep --max-batch 32768 --seconds "$secs" --no-cpu
    ;;
coop)
    run_bench --bits 2048 --variant fast,coop --sweep --max-batch 131072 --seconds "$secs"
    run_bench --bits 1024,3072,4096 --variant auto,coop --sweep --max-batch 65536 --seconds "$secs" --no-cpu
    ;;
*)
    run_bench --bits 2048 --variant all --sweep --max-batch 262144 --seconds "$secs"
    run_bench --bits 1024,3072,4096 --variant all --batch 65536 --seconds "$secs"
    ;;
esac

# ---- device memory at 1,000,000 RSA-2048 items ---------------------------------------
peak=$(sh "$top/bench/gpu-mem-peak.sh" "$bench" --backend cuda --bits 2048 --batch 1000000 --seconds 2 --no-cpu \
    --pool 256 --inflight 1 2>> "$out/bench.log")
echo "peak device memory used during a 1,000,000-item RSA-2048 batch (one batch in flight; includes the CUDA context): $peak MiB" >> "$summary"

# ---- plot ------------------------------------------------------------------------------
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$top/bench/plot-batch.py" "$csv" "$out/batch.png" >> "$out/bench.log" 2>&1
elif command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "csv='$csv'; png='$out/batch.png'" "$top/bench/plot-batch.gp" >> "$out/bench.log" 2>&1
fi

# ---- summary: the best rate per size and variant, the knee, the CPU ------------------------
awk -F, 'NR > 1 && $1 != "date" {
    key = $5 " " $4
    if ($10 > best[key]) { best[key] = $10; bb[key] = $6; kms[key] = $11 }
    rate[key, $6] = $10; kt[key, $6] = $11; sizes[key] = sizes[key] " " $6
    if ($18 > 0) cpu[$5] = $18
    if ($15 > 0 || $16 > 0) bad[key] += $15 + $16
}
END {
    printf "%-12s %12s %9s %12s %10s %12s %s\n", "size variant", "peak ops/s", "at batch", "knee(90%)", "knee ms", "CPU ops/s", "check"
    for (k in best) {
        knee = "-"; kk = "-"
        n = split(sizes[k], s, " ")
        for (i = 1; i <= n; i++) if (rate[k, s[i]] >= 0.9 * best[k] && (knee == "-" || s[i] + 0 < knee + 0)) { knee = s[i]; kk = kt[k, s[i]] }
        split(k, p, " ")
        printf "%-12s %12.0f %9s %12s %10s %12.0f %s\n", k, best[k], bb[k], knee, kk, cpu[p[1]], bad[k] ? "WRONG/FAULT" : "all verified"
    }
}' "$csv" | sort | tee -a "$summary"
grep -h 'default provider' "$out/bench.log" | sort -u | tee -a "$summary"
grep -h 'rc=[1-9]' "$out/bench.log" | head -3 | tee -a "$summary"
exit $rc_tests
