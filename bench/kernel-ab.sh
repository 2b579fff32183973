#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/kernel-ab.sh OUTDIR NAME=BUILD [NAME=BUILD ...] - kernel builds against one another
# on one GPU machine, in alternating rounds, so that every build sees the same host and
# device state (doc/design.md, "Why the kernels are shaped as they are").
#
# Each BUILD is a build tree (or a folder laid out like one) holding bench/gpursa-bench, for
# the tests tests/gpu/test_gpu_rsa, and COMMIT (make writes it: the tree's commit); the
# first NAME is the reference the others are compared with. In one go:
#   tests    GPURSA_TEST_BACKEND=cuda CK_RUN_SUITE=gpu_backend test_gpu_rsa of every build
#            that has it
#   rates    gpursa-bench --bits AB_BITS --batch AB_BATCH --seconds AB_SECONDS --no-cpu,
#            AB_ROUNDS rounds, each round every build in turn (the reference's first run of
#            the script and its last measure the default provider as well)
#   extra    AB_EXTRA: "65536" adds a --batch 65536 run of every build, "lone" a --batch 1
#            --inflight 1 run (the kernel time of a lone batch), "sweep" a sweep to 65,536
#            items of the last build, "mem" the device memory of a 1,000,000-item RSA-2048
#            batch of the last build
#   nvidia-smi every 0.5 s throughout (power, SM clock)
# Outputs in OUTDIR: summary.txt (the machine, the tests, and per key size and build the
# range of ops/s and its ratio to the reference's range), bench.csv (every run; the
# variant column says build, start time and run), sweep.csv, smi.csv, tests.log, bench.log.
#
# Settings (environment): AB_BITS (2048,3072,4096), AB_BATCH (16384), AB_SECONDS (3),
# AB_ROUNDS (3), AB_EXTRA ("65536 lone"), AB_TESTS (1; 0 leaves the tests out), AB_BACKEND
# (cuda; host runs the script without a GPU, for a test of the script itself), AB_LIB (a
# folder of shared libraries the GPU machine lacks, such as libsubunit.so.0 for the tests).
# A round of three key sizes takes about 30 s a build, so a run's length is about builds x
# rounds x 30 s plus the tests and AB_EXTRA. A NAME is letters, digits and '_' (it names a shell variable).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: bench/kernel-ab.sh OUTDIR NAME=BUILD [NAME=BUILD ...]}
shift
[ $# -ge 1 ] || { echo "kernel-ab: name at least one NAME=BUILD" >&2; exit 2; }
bits=${AB_BITS:-2048,3072,4096}
batch=${AB_BATCH:-16384}
secs=${AB_SECONDS:-3}
rounds=${AB_ROUNDS:-3}
extra=${AB_EXTRA:-"65536 lone"}
backend=${AB_BACKEND:-cuda}
[ -n "${AB_LIB:-}" ] && export LD_LIBRARY_PATH="$AB_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
names=""
for nb in "$@"; do
    n=${nb%%=*} b=${nb#*=}
    case $n in
    '' | *[!A-Za-z0-9_]*) echo "kernel-ab: a name is letters, digits and '_': $nb" >&2; exit 2 ;;
    esac
    case " $names " in
    *" $n "*) echo "kernel-ab: $n named twice" >&2; exit 2 ;;
    esac
    [ -x "$b/bench/gpursa-bench" ] || { echo "kernel-ab: $b has no bench/gpursa-bench" >&2; exit 2; }
    names="$names $n"
    eval "build_$n=\$(cd \"\$b\" && pwd)"
done
build_of() { eval "echo \"\$build_$1\""; }
ref=${names# }
ref=${ref%% *}
last=${names##* }
call=$(date -u +%H:%M)
S=$out/summary.txt
csv=$out/bench.csv
: > "$out/bench.log"
rm -f "$csv" "$out/sweep.csv"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    for n in $names; do
        echo "build $n: $(build_of "$n") (commit $(cat "$(build_of "$n")/COMMIT" 2> /dev/null || echo unknown))"
    done
    command -v nvidia-smi > /dev/null 2>&1 \
        && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1
    echo "cpu: $(nproc) x$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
} > "$S"

smi_pid=
if command -v nvidia-smi > /dev/null 2>&1; then
    nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm --format=csv,noheader -lms 500 > "$out/smi.csv" 2>&1 &
    smi_pid=$!
fi

# ---- tests ---------------------------------------------------------------------------
: > "$out/tests.log"
[ "${AB_TESTS:-1}" = 0 ] && names_tested="" || names_tested=$names
for n in $names_tested; do
    echo "# $n" >> "$out/tests.log"
    echo "tests $n: $(sh "$top/bench/gpu-tests.sh" "$(build_of "$n")" "$out/tests.log" "$backend")" >> "$S"
done

# ---- one gpursa-bench run of build $1, labelled $2, into $3; the rest are its options --
run() {
    n=$1 label=$2 to=$3
    shift 3
    echo "+ $n: gpursa-bench --backend $backend $* ($(date -u +%H:%M:%S))" >> "$out/bench.log"
    timeout 300 "$(build_of "$n")/bench/gpursa-bench" --backend "$backend" --csv "$out/run.csv" "$@" \
        >> "$out/bench.log" 2>&1
    echo "rc=$?" >> "$out/bench.log"
    if [ -f "$out/run.csv" ]; then
        [ -f "$to" ] || head -1 "$out/run.csv" > "$to"
        awk -F, -v OFS=, -v l="$n $call $label" 'NR > 1 && $1 != "date" { $4 = l; print }' "$out/run.csv" >> "$to"
        rm -f "$out/run.csv"
    fi
}

common="--bits $bits --batch $batch --seconds $secs"
run "$ref" start+cpu "$csv" $common
r=1
while [ $r -le "$rounds" ]; do
    for n in $names; do run "$n" "r$r" "$csv" $common --no-cpu; done
    r=$((r + 1))
done
for x in $extra; do
    case $x in
    65536) for n in $names; do run "$n" b65536 "$csv" --bits "$bits" --batch 65536 --seconds "$secs" --no-cpu; done ;;
    lone) for n in $names; do run "$n" lone "$csv" --bits "$bits" --batch 1 --seconds 2 --inflight 1 --no-cpu; done ;;
    sweep) run "$last" sweep "$out/sweep.csv" --bits "$bits" --sweep --max-batch 65536 --seconds 1 --no-cpu ;;
    mem)
        peak=$(sh "$top/bench/gpu-mem-peak.sh" "$(build_of "$last")/bench/gpursa-bench" --backend "$backend" \
            --bits 2048 --batch 1000000 --seconds 2 --no-cpu --pool 256 --inflight 1 2>> "$out/bench.log")
        echo "memory.used at its peak during a 1,000,000-item RSA-2048 batch of $last: $peak MiB" >> "$S"
        ;;
    *) echo "kernel-ab: unknown AB_EXTRA item $x (65536, lone, sweep, mem)" >> "$S" ;;
    esac
done
run "$ref" end+cpu "$csv" $common
[ -n "$smi_pid" ] && kill "$smi_pid" 2> /dev/null

# ---- summary: per size, batch and build, the range of the timed runs ---------------------
# (columns: 4 "build call run", 5 bits, 6 batch, 10 ops/s, 11 kernel ms, 18 CPU ops/s; the
# reference's runs with the default provider are left out of the ranges)
printf "%-6s %-7s %-16s %25s %15s  %s\n" bits batch build "ops/s (min-max)" "/ $ref" "kernel ms" >> "$S"
awk -F, -v ref="$ref" -v order="$names" '
NR > 1 && $1 != "date" && $4 !~ /cpu$/ {
    split($4, v, " "); k = $5 " " $6; key = k SUBSEP v[1]
    if (!(key in lo) || $10 < lo[key]) lo[key] = $10
    if (!(key in hi) || $10 > hi[key]) hi[key] = $10
    kms[key] = kms[key] " " $11
    keys[k] = 1
}
END {
    nn = split(order, o, " ")
    for (k in keys) {
        split(k, kb, " ")
        for (i = 1; i <= nn; i++) {
            key = k SUBSEP o[i]; rk = k SUBSEP ref
            if (!(key in lo)) continue
            r = "-"
            if (o[i] != ref && (rk in lo) && lo[rk] > 0)
                r = sprintf("%.3f-%.3f", lo[key] / hi[rk], hi[key] / lo[rk])
            printf "%-6s %-7s %-16s %12.0f-%-12.0f %15s %s\n", kb[1], kb[2], o[i], lo[key], hi[key], r, kms[key]
        }
    }
}' "$csv" | sort -s -k1,1n -k2,2n >> "$S"
awk -F, 'NR > 1 && $1 != "date" && $18 > 0 { c[$5] = c[$5] " " int($18 + 0.5); t[$5] = $17 }
END { for (b in c) printf "default provider RSA-%s, %d threads (start, end):%s\n", b, t[b], c[b] }' "$csv" | sort >> "$S"
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$S"
cat "$S"
