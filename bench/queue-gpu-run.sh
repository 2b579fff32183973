#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/queue-gpu-run.sh OUTDIR [--quick] [--build DIR] - the queue through EVP on a GPU
# (throughput, latency, max_wait_us, several processes under MPS) in one go.
#
# On the GPU machine, with a build tree carried there (--build DIR or GPURSA_BUILD; default
# _devbuild, then _build, of this checkout) that holds provider/.libs/gpursa.so and
# bench/gpursa-latency. Every step has its own time limit and the whole run a budget
# (QB_BUDGET seconds, default 450), so a run ends within a bounded time:
#   (a) default provider: openssl speed -elapsed -seconds S -multi P rsa2048 (P = cores)
#   (b) gpursa, one process: openssl speed -elapsed -seconds S -provider gpursa -provider
#       default -propquery '?provider=gpursa' -async_jobs N rsa2048, N in QB_JOBS; stats line
#   (c) P processes through gpursa (-multi P -async_jobs N, N = QB_MULTI_JOBS), without and
#       with NVIDIA MPS (nvidia-cuda-mps-control -d, pipe and log folders under /tmp,
#       stopped with "quit"; skipped and said so when the control program is missing or
#       the backend is not cuda), and gpursa-latency --peak from P threads x QB_LT_JOBS
#       ASYNC jobs in one process (one CUDA context, no MPS needed); QB_MPS_EXTRA="label:N:VAR=VAL,..."
#       adds runs under the same MPS daemon with other settings (rows c+; the target uses (c))
#   (d) gpursa-latency: open-loop Poisson load at 10/50/90 % of (c)'s peak, p50..p999,
#       from P threads x QB_LT_LOAD_JOBS jobs (default QB_LT_JOBS);
#       one request in flight, gpursa against the default provider (same key)
#   (e) closed-loop throughput against GPURSA_MAX_WAIT_US (QB_MAX_WAITS) with
#       QB_MW_THREADS x QB_MW_JOBS in flight
#   (a2) the default provider again (as (a)); the 25x target is judged against the higher
#   (f) latency.png and maxwait.png (python3 + matplotlib; skipped with a message without)
#   (g) summary.csv and the summary table, printed last
# Every signature of the latency runs is verified with the default provider (--check) in
# --quick mode, one in QB_VERIFY_EVERY (default 16) otherwise. openssl speed always with
# -elapsed (without it, speed reports CPU time).
#
# --quick: short runs and small counts for a test on any machine; the backend defaults to
# host there (GPURSA_BACKEND=host: the kernel arithmetic on CPU threads), cuda otherwise.
#
# Outputs in OUTDIR: machine.txt, speed_*.txt/.err (each run), latency.csv, maxwait.csv,
# summary.csv, summary.txt, *.png, mps/ (MPS logs), run.log (everything).
set -u
out=${1:?usage: bench/queue-gpu-run.sh OUTDIR [--quick] [--build DIR]}
shift
start_dir=$(pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
build=${GPURSA_BUILD:-}
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --build) build=${2:?--build needs a folder}; shift ;;
    *) echo "queue-gpu-run: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
abspath() { case $1 in /*) echo "$1" ;; *) echo "$start_dir/$1" ;; esac; }
if [ -z "$build" ]; then
    for b in "$top/_devbuild" "$top/_build"; do
        [ -x "$b/bench/gpursa-latency" ] && { build=$b; break; }
    done
fi
build=$(abspath "${build:-$top/_build}")
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
[ -f "$build/provider/.libs/gpursa.so" ] && [ -x "$build/bench/gpursa-latency" ] || {
    echo "queue-gpu-run: $build lacks provider/.libs/gpursa.so or bench/gpursa-latency" >&2
    exit 1
}
lt=$build/bench/gpursa-latency
ncpu=$(nproc)

# ---- settings (environment overrides) -------------------------------------------------
if [ $quick = 1 ]; then
    : "${GPURSA_BACKEND:=host}"
    secs=${QB_SECONDS:-1} lt_secs=${QB_LT_SECONDS:-1} warm=${QB_WARMUP:-0.3}
    jobs_list=${QB_JOBS:-"8 32"} multi_jobs=${QB_MULTI_JOBS:-16}
    procs=${QB_PROCS:-$ncpu} lt_threads=${QB_LT_THREADS:-$ncpu} lt_jobs=${QB_LT_JOBS:-16}
    max_waits=${QB_MAX_WAITS:-"500 2000"} mw_threads=${QB_MW_THREADS:-$ncpu}
    mw_jobs=${QB_MW_JOBS:-8} verify="--check"
else
    : "${GPURSA_BACKEND:=cuda}"
    secs=${QB_SECONDS:-5} lt_secs=${QB_LT_SECONDS:-5} warm=${QB_WARMUP:-1}
    jobs_list=${QB_JOBS:-"64 256 768"} multi_jobs=${QB_MULTI_JOBS:-256}
    procs=${QB_PROCS:-$ncpu} lt_threads=${QB_LT_THREADS:-$ncpu} lt_jobs=${QB_LT_JOBS:-128}
    max_waits=${QB_MAX_WAITS:-"100 500 1000 2000 5000"} mw_threads=${QB_MW_THREADS:-$ncpu}
    mw_jobs=${QB_MW_JOBS:-64} verify="--verify-every ${QB_VERIFY_EVERY:-16}"
fi
# The open-loop points (d) may run more jobs than the closed loop that finds the peak: an
# arrival that finds its thread's jobs busy waits in gpursa-latency's own FIFO, so near the
# peak too few jobs measure the client (doc/design.md, "What the queue's settings rest on")
lt_load_jobs=${QB_LT_LOAD_JOBS:-$lt_jobs}
budget=${QB_BUDGET:-450}
export GPURSA_BACKEND OPENSSL_MODULES=$build/provider/.libs
unset OPENSSL_CONF GPURSA_MAX_WAIT_US CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
# one eventfd per wait context: -async_jobs N needs N descriptors (openssl speed waits
# with select(), so N + the process's own fds must stay below 1024)
ulimit -n "$(ulimit -Hn)" 2>/dev/null
t_begin=$(date +%s)

log=$out/run.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }
left() { echo $((budget - ($(date +%s) - t_begin))); }
# step_limit WANT: seconds a step may take, within the budget (0 = skip it)
step_limit() {
    local l
    l=$(( $(left) - 10 ))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 5 ] && l=0
    echo "$l"
}

# ---- the machine -------------------------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(cat "$build/COMMIT" 2>/dev/null || git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "backend: GPURSA_BACKEND=$GPURSA_BACKEND  quick=$quick"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_mode --format=csv,noheader 2>&1
    else
        echo "gpu: no nvidia-smi"
    fi
    echo "cpu: $ncpu x$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    echo "openssl: $(openssl version)"
    echo "settings: seconds=$secs jobs=[$jobs_list] procs=$procs multi_jobs=$multi_jobs" \
         "latency=${lt_threads}x$lt_jobs (open loop x$lt_load_jobs) lt_seconds=$lt_secs max_waits=[$max_waits]" \
         "maxwait_inflight=${mw_threads}x$mw_jobs budget=${budget}s"
} > "$out/machine.txt"
tee -a "$log" < "$out/machine.txt"

# ---- helpers -------------------------------------------------------------------------------
# sign/s from openssl speed's summary line "rsa 2048 bits 0.000357s 0.000010s 2802.1 100000.0"
speed_rate() { awk '/^rsa +[0-9]+ bits/ { r = $6 } END { print (r == "" ? "" : r) }' "$1"; }
# gpursa stats lines (one per process) summed: "ops_gpu ops_host ops_cpu batches mean_batch inline"
stats_sum() {
    awk '/^gpursa: ops / {
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        g += v["gpu"]; h += v["host"]; c += v["cpu"]; b += v["batches"]
        items += v["batches"] * v["mean_batch"]; inl += v["inline"]; n++ }
        END { if (n) printf "%d %d %d %d %.1f %d %d\n", g, h, c, b, (b ? items / b : 0), inl, n }' "$1"
}
# above A B: true if A is set and B is not, or A > B (numbers)
above() { [ -n "$1" ] && { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }; }
# run_speed NAME LIMIT ARGS...: openssl speed into speed_NAME.txt/.err; prints sign/s
run_speed() {
    local name=$1 lim=$2 rc
    shift 2
    if [ "$lim" = 0 ]; then say "  $name: skipped (time budget)"; return 1; fi
    say "  \$ openssl speed $*   (limit ${lim}s)"
    GPURSA_STATS=1 timeout -k 5 "$lim" openssl speed "$@" \
        > "$out/speed_$name.txt" 2> "$out/speed_$name.err"
    rc=$?
    say "  $name: rc=$rc sign/s=$(speed_rate "$out/speed_$name.txt") stats(gpu host cpu batches mean_batch inline procs)=$(stats_sum "$out/speed_$name.err")"
    grep -m1 -i 'error\|fail' "$out/speed_$name.err" | tee -a "$log"
    return $rc
}
# run_lt NAME LIMIT ARGS...: gpursa-latency, output to lt_NAME.txt
run_lt() {
    local name=$1 lim=$2 rc
    shift 2
    if [ "$lim" = 0 ]; then say "  $name: skipped (time budget)"; return 1; fi
    say "  \$ gpursa-latency $*   (limit ${lim}s)"
    GPURSA_STATS=1 timeout -k 5 "$lim" "$lt" "$@" > "$out/lt_$name.txt" 2>&1
    rc=$?
    grep -v '^$' "$out/lt_$name.txt" | tee -a "$log"
    [ $rc = 0 ] || say "  $name: rc=$rc"
    return $rc
}
# csv_get FILE LABEL MODE COLUMN [LOAD]: a column of gpursa's row with that label and mode
csv_get() {
    awk -F, -v lab="$2" -v mode="$3" -v col="$4" -v load="${5:-}" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["label"] == lab && $c["mode"] == mode && $c["provider"] == "gpursa" \
            && (load == "" || $c["load"] + 0 == load + 0) { v = $c[col] }
        END { print v }' "$1" 2>/dev/null
}
# paths FILE LABEL MODE [LOAD]: where gpursa's operations of that run went
paths() {
    echo "gpu=$(csv_get "$1" "$2" "$3" ops_gpu "${4:-}") host=$(csv_get "$1" "$2" "$3" ops_host "${4:-}")" \
         "cpu=$(csv_get "$1" "$2" "$3" ops_cpu "${4:-}") inline=$(csv_get "$1" "$2" "$3" inline "${4:-}")" \
         "mean_batch=$(csv_get "$1" "$2" "$3" mean_batch "${4:-}")"
}
# csv_prov FILE LABEL PROVIDER COLUMN
csv_prov() {
    awk -F, -v lab="$2" -v prov="$3" -v col="$4" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["label"] == lab && $c["provider"] == prov { v = $c[col] }
        END { print v }' "$1" 2>/dev/null
}

S=$out/summary.csv
echo "step,what,config,sign_per_s,p50_us,p99_us,note" > "$S"
# row STEP WHAT CONFIG SIGN/S P50 P99 NOTE (commas inside a field become semicolons)
row() {
    local f line=""
    for f in "$@"; do line="$line${line:+,}${f//,/;}"; done
    echo "$line" >> "$S"
}

# ---- (a) the default provider on every core -------------------------------------------------
say "== (a) default provider, $procs processes"
run_speed default_multi "$(step_limit $((2 * secs + 30)))" \
    -elapsed -seconds "$secs" -multi "$procs" rsa2048
def_multi=$(speed_rate "$out/speed_default_multi.txt")
row a "default provider" "speed -multi $procs" "$def_multi" "" "" ""

# ---- (b) gpursa, one process, async jobs ----------------------------------------------------
say "== (b) gpursa, one process, -async_jobs N"
best1=0 best1_n=""
for n in $jobs_list; do
    run_speed "gpursa_n$n" "$(step_limit $((2 * secs + 30)))" -elapsed -seconds "$secs" \
        -provider gpursa -provider default -propquery '?provider=gpursa' -async_jobs "$n" rsa2048
    r=$(speed_rate "$out/speed_gpursa_n$n.txt")
    st=$(stats_sum "$out/speed_gpursa_n$n.err")
    row b "gpursa 1 process" "speed -async_jobs $n" "$r" "" "" "stats gpu/host/cpu/batches/mean_batch/inline: ${st% *}"
    if above "$r" "$best1"; then
        best1=$r best1_n=$n
    fi
done

# ---- (c) all cores through gpursa --------------------------------------------------------
say "== (c) gpursa, $procs processes (-multi), without MPS"
run_speed gpursa_multi "$(step_limit $((2 * secs + 60)))" -elapsed -seconds "$secs" \
    -multi "$procs" -provider gpursa -provider default -propquery '?provider=gpursa' \
    -async_jobs "$multi_jobs" rsa2048
multi_nomps=$(speed_rate "$out/speed_gpursa_multi.txt")
row c "gpursa $procs processes no MPS" "speed -multi $procs -async_jobs $multi_jobs" "$multi_nomps" "" "" \
    "stats: $(stats_sum "$out/speed_gpursa_multi.err")"

say "== (c) gpursa, $procs processes (-multi), with NVIDIA MPS"
mps_note="" multi_mps=""
mps_dir=/tmp/gpursa-qbench-mps.$$
if [ "$GPURSA_BACKEND" != cuda ] && [ "$GPURSA_BACKEND" != auto ]; then
    mps_note="MPS not tried: backend $GPURSA_BACKEND"
elif ! command -v nvidia-cuda-mps-control >/dev/null; then
    mps_note="MPS unavailable: no nvidia-cuda-mps-control"
else
    mkdir -p "$mps_dir/pipe" "$mps_dir/log"
    export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
    stop_mps() {
        echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
        mkdir -p "$out/mps" && cp "$mps_dir"/log/* "$out/mps/" 2>/dev/null
        rm -rf "$mps_dir"
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    }
    trap 'stop_mps; exit 130' INT TERM
    if timeout 20 nvidia-cuda-mps-control -d >> "$log" 2>&1; then
        sleep 1
        run_speed gpursa_multi_mps "$(step_limit $((2 * secs + 60)))" -elapsed -seconds "$secs" \
            -multi "$procs" -provider gpursa -provider default -propquery '?provider=gpursa' \
            -async_jobs "$multi_jobs" rsa2048
        multi_mps=$(speed_rate "$out/speed_gpursa_multi_mps.txt")
        servers=$(echo get_server_list | timeout 10 nvidia-cuda-mps-control 2>/dev/null | tr '\n' ' ')
        # QB_MPS_EXTRA="label:N:VAR=VAL,VAR=VAL ...": more runs under the same daemon,
        # each with -async_jobs N and those variables set (A/B of settings; rows "c+")
        for spec in ${QB_MPS_EXTRA:-}; do
            xl=${spec%%:*} xr=${spec#*:}
            xn=${xr%%:*} xenv=${xr#*:}
            [ "$xenv" = "$xr" ] && xenv=""
            (
                IFS=,
                for kv in $xenv; do [ -n "$kv" ] && export "${kv?}"; done
                unset IFS
                run_speed "gpursa_multi_mps_$xl" "$(step_limit $((2 * secs + 60)))" -elapsed \
                    -seconds "$secs" -multi "$procs" -provider gpursa -provider default \
                    -propquery '?provider=gpursa' -async_jobs "$xn" rsa2048
            )
            row c+ "gpursa $procs processes with MPS ($xl)" "speed -multi $procs -async_jobs $xn; ${xenv:-defaults}" \
                "$(speed_rate "$out/speed_gpursa_multi_mps_$xl.txt")" "" "" \
                "stats: $(stats_sum "$out/speed_gpursa_multi_mps_$xl.err" 2>/dev/null)"
        done
        mps_note="MPS: nvidia-cuda-mps-control -d, CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe, server pid(s): ${servers:-none}"
        stop_mps
        grep -q 'New client' "$out"/mps/control.log 2>/dev/null && mps_note="$mps_note, clients seen in control.log"
    else
        mps_note="MPS daemon failed to start (see run.log)"
        stop_mps
    fi
    trap - INT TERM
fi
say "  $mps_note"
row c "gpursa $procs processes with MPS" "speed -multi $procs -async_jobs $multi_jobs" "$multi_mps" "" "" \
    "$mps_note; stats: $(stats_sum "$out/speed_gpursa_multi_mps.err" 2>/dev/null)"

say "== (c) gpursa-latency --peak, $lt_threads threads x $lt_jobs ASYNC jobs, one process"
L=$out/latency.csv
rm -f "$L"
run_lt peak "$(step_limit 60)" --peak --threads "$lt_threads" --async-jobs "$lt_jobs" \
    --seconds "$lt_secs" --warmup "$warm" $verify --csv "$L" --label peak
peak=$(csv_get "$L" peak peak achieved_ops_s)
row c "gpursa-latency peak (1 process)" "${lt_threads} threads x $lt_jobs jobs" "$peak" \
    "$(csv_get "$L" peak peak p50_us)" "$(csv_get "$L" peak peak p99_us)" "closed loop; $(paths "$L" peak peak)"

# ---- (d) latency against offered load; one request in flight ---------------------------------
say "== (d) latency at 10/50/90 % of the peak"
peak_arg=""
[ -n "$peak" ] && peak_arg="--peak-rate $peak"
run_lt load "$(step_limit $((3 * (${lt_secs%.*} + 2) + 30)))" --load 0.1,0.5,0.9 $peak_arg \
    --threads "$lt_threads" --async-jobs "$lt_load_jobs" --seconds "$lt_secs" --warmup "$warm" \
    $verify --no-compare --csv "$L" --label load
for f in 0.1 0.5 0.9; do
    row d "latency at load $f" "offered $(csv_get "$L" load load offered_ops_s $f)/s, ${lt_threads} x $lt_load_jobs jobs" \
        "$(csv_get "$L" load load achieved_ops_s $f)" "$(csv_get "$L" load load p50_us $f)" \
        "$(csv_get "$L" load load p99_us $f)" "p999 $(csv_get "$L" load load p999_us $f) us; $(paths "$L" load load $f)"
done
say "== (d) one request in flight: gpursa against the default provider"
run_lt inflight1 "$(step_limit $((2 * (${lt_secs%.*} + 2) + 20)))" --inflight 1 \
    --seconds "$lt_secs" --warmup "$warm" --check --compare-default --csv "$L" --label inflight1
for p in gpursa default; do
    row d "one in flight: $p" "1 thread x 1 job" "$(csv_prov "$L" inflight1 $p achieved_ops_s)" \
        "$(csv_prov "$L" inflight1 $p p50_us)" "$(csv_prov "$L" inflight1 $p p99_us)" \
        "mean $(csv_prov "$L" inflight1 $p mean_us) us"
done

# ---- (e) throughput against max_wait_us ---------------------------------------------------------
say "== (e) throughput against max_wait_us, closed loop, ${mw_threads} x $mw_jobs in flight"
M=$out/maxwait.csv
rm -f "$M"
for mw in $max_waits; do
    GPURSA_MAX_WAIT_US=$mw run_lt "mw$mw" "$(step_limit $((${lt_secs%.*} + 25)))" --peak \
        --threads "$mw_threads" --async-jobs "$mw_jobs" --seconds "$lt_secs" --warmup "$warm" \
        $verify --csv "$M" --label "mw$mw"
    row e "max_wait_us $mw" "${mw_threads} x $mw_jobs closed loop" \
        "$(csv_get "$M" "mw$mw" peak achieved_ops_s)" "$(csv_get "$M" "mw$mw" peak p50_us)" \
        "$(csv_get "$M" "mw$mw" peak p99_us)" "$(paths "$M" "mw$mw" peak)"
done

# ---- (a2) the default provider again: one host's figure moves from run to run,
# so the target is judged against the higher of the two ---------------------------------------
say "== (a2) default provider again, $procs processes"
run_speed default_multi2 "$(step_limit $((2 * secs + 30)))" \
    -elapsed -seconds "$secs" -multi "$procs" rsa2048
def_multi2=$(speed_rate "$out/speed_default_multi2.txt")
row a2 "default provider (again)" "speed -multi $procs" "$def_multi2" "" "" ""
def_ref=$def_multi
above "$def_multi2" "$def_ref" && def_ref=$def_multi2

# ---- (f) plots ---------------------------------------------------------------------------------
say "== (f) plots"
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 - "$out" <<'PY' 2>&1 | tee -a "$log"
import csv, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []
lat = [r for r in rows("latency.csv") if r["mode"] == "load" and r["provider"] == "gpursa"]
if lat:
    lat.sort(key=lambda r: float(r["load"]))
    x = [float(r["load"]) * 100 for r in lat]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for q in ("p50", "p90", "p99", "p999"):
        ax.plot(x, [float(r[q + "_us"]) / 1000 for r in lat], marker="o", label=q)
    ax.axhline(10, color="grey", linestyle="--", linewidth=1, label="10 ms (p99 target at 50 % load)")
    ax.set_yscale("log")
    ax.set_xlabel("offered load, %% of peak (%.0f sign/s)" % (float(lat[0]["offered_ops_s"]) / float(lat[0]["load"])))
    ax.set_ylabel("sign latency, ms")
    ax.set_title("gpursa RSA-2048 sign latency against offered load (%s threads x %s jobs)" % (lat[0]["threads"], lat[0]["async_jobs"]), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency.png"), dpi=120)
    print("wrote latency.png")
mw = rows("maxwait.csv")
if mw:
    mw.sort(key=lambda r: float(r["max_wait_us"] or 0))
    x = [float(r["max_wait_us"]) for r in mw]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(x, [float(r["achieved_ops_s"]) for r in mw], marker="o", color="C0", label="sign/s")
    ax.set_xscale("log")
    ax.set_xticks(x)
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("max_wait_us")
    ax.set_ylabel("sign/s", color="C0")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(x, [float(r["p99_us"]) / 1000 for r in mw], marker="s", color="C3", label="p99 latency, ms")
    ax2.set_ylabel("p99 latency, ms", color="C3")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="lower right")
    ax.set_title("gpursa throughput against max_wait_us (closed loop, %s x %s in flight)" % (mw[0]["threads"], mw[0]["async_jobs"]), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "maxwait.png"), dpi=120)
    print("wrote maxwait.png")
PY
else
    say "  plots skipped: python3 with matplotlib not found (the CSV files hold the data)"
fi

# ---- (g) the summary, last ---------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { if (v == "n/a" || v == "") print "n/a";
    else if ((op == ">=" && v + 0 >= t + 0) || (op == "<=" && v + 0 <= t + 0)) print "MET"; else print "NOT MET" }'; }
best_all=$multi_mps
for v in "$peak" "$multi_nomps"; do
    above "$v" "$best_all" && best_all=$v
done
x_all=$(ratio "$best_all" "$def_ref")
p99_50=$(csv_get "$L" load load p99_us 0.5)
p99_50_ms=$(awk -v v="$p99_50" 'BEGIN { if (v != "") printf "%.2f", v / 1000; else print "n/a" }')
x_one=$(ratio "$(csv_prov "$L" inflight1 gpursa p50_us)" "$(csv_prov "$L" inflight1 default p50_us)")
row g "target: all cores >= 25x default" "best of MPS / no MPS / gpursa-latency" "$best_all" "" "" "$x_all x ($(verdict "$x_all" 25 '>='))"
row g "target: 1 process >= 150000/s" "speed -async_jobs $best1_n" "$best1" "" "" "$(verdict "$best1" 150000 '>=')"
row g "target: p99 <= 10 ms at 50 %" "" "" "" "$p99_50" "$(verdict "$p99_50_ms" 10 '<=')"
row g "target: one in flight <= 1.2x default" "p50 ratio" "" "" "" "$x_one x ($(verdict "$x_one" 1.2 '<='))"

{
    echo
    echo "==================== gpursa queue benchmark summary ===================="
    head -n 5 "$out/machine.txt"
    [ "$GPURSA_BACKEND" = cuda ] || echo "(backend $GPURSA_BACKEND: the targets are for the CUDA backend on the GPU machine)"
    echo
    printf '%-4s %-34s %-38s %12s %10s %10s  %s\n' step what config sign/s p50_us p99_us note
    tail -n +2 "$S" | while IFS=, read -r st what cfg rate p50 p99 note; do
        printf '%-4s %-34s %-38s %12s %10s %10s  %s\n' "$st" "$what" "$cfg" "$rate" "$p50" "$p99" "$note"
    done
    echo
    echo "default provider, $procs processes: ${def_multi:-n/a} sign/s, again at the end: ${def_multi2:-n/a} (the higher counts)"
    echo "all cores through gpursa: best ${best_all:-n/a} sign/s = $x_all x default (target 25x): $(verdict "$x_all" 25 '>=')"
    echo "  $procs processes without MPS: ${multi_nomps:-n/a}; with MPS: ${multi_mps:-n/a} (N=$multi_jobs); $mps_note"
    echo "  one process, $lt_threads threads x $lt_jobs ASYNC jobs (gpursa-latency): ${peak:-n/a}"
    echo "one process, one thread (openssl speed): best ${best1} sign/s at -async_jobs ${best1_n:-n/a} (target 150000): $(verdict "$best1" 150000 '>=')"
    echo "p99 at 50 % load: $p99_50_ms ms (target <= 10 ms): $(verdict "$p99_50_ms" 10 '<=')"
    echo "one in flight, p50 gpursa / default: $x_one (target <= 1.2): $(verdict "$x_one" 1.2 '<=')"
    echo "time: $(( $(date +%s) - t_begin )) s of a ${budget} s budget; files in $out"
} > "$out/summary.txt"
cat "$out/summary.txt" | tee -a "$log"
