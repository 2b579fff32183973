#!/bin/bash
# New TLS handshakes per second through HAProxy with and without gpursa, in one go.
#
#   bench/tls-handshake.sh [options] OUTDIR
#
# For each certificate size (RSA-2048, RSA-4096) and TLS version, HAProxy (conf/haproxy.cfg,
# 16 threads, ssl-mode-async) runs once as shipped (OpenSSL's default provider: the
# baseline) and once with gpursa, and h2load on the same host opens a new connection for
# every request: HAProxy is told to close each connection after its response (option
# httpclose, added by this script only), and h2load then reconnects with a full
# handshake (HAProxy has no session cache and no tickets in conf/haproxy.cfg). Each run:
# a warm-up, a calibration run that sizes the measured run to about --duration seconds,
# then the measured run. Handshakes per second = requests that succeeded / h2load's wall
# time. The client's CPU time (user + sys of h2load) is reported because it competes with
# HAProxy for the same cores; so is HAProxy's own CPU time. With --servers nginx, the same
# for nginx (conf/nginx.conf, --threads workers, keepalive_timeout 0 added so that each
# response closes its connection). A run takes about --duration + 15 s; the default set
# (2 sizes x 2 versions x 2 modes) fits in 10 minutes with the default duration.
#
# Writes OUTDIR/results.csv, OUTDIR/summary.md (a table with the speed-up) and, per run,
# the server's stderr (gpursa's stats line) and h2load's output.
#
# The servers need not be installed: --debs DIR takes Debian packages (haproxy,
# nghttp2-client, openssl and the libraries they need: bench/tls/fetch-debs.sh), unpacks
# them in a temporary folder and uses a library only where the system lacks it
# (BENCH_CARRIED_LIBS=all: every carried library, to test the carried set on a system
# that has them all). Do not carry libc6, libstdc++6, libgcc-s1 or libssl3: gpursa.so and
# the CUDA runtime need the system's.
#
# Options:
#   --debs DIR            .deb files to unpack (default: use haproxy/h2load from PATH)
#   --modules DIR         folder with gpursa.so (default: $OPENSSL_MODULES, else
#                         _build/provider/.libs of this checkout)
#   --bits "2048 4096"    RSA key sizes
#   --tls "1.3 1.2"       TLS versions
#   --threads N           HAProxy threads (default 16)
#   --clients C           concurrent client connections (default 1024)
#   --client-threads T    h2load threads (default 4)
#   --duration S          seconds per measured run (default 15)
#   --backend B           GPURSA_BACKEND for the gpursa runs (default cuda)
#   --modes "default gpursa"   which runs to make
#   --servers "haproxy nginx"  servers to measure (default haproxy; nginx needs its
#                         package in --debs or installed, and runs --threads workers)
#   --mps                 start NVIDIA MPS (nvidia-cuda-mps-control -d, pipes under
#                         OUTDIR/mps) for the runs and stop it at the end: nginx's
#                         worker processes then share the GPU concurrently
set -u
START=$(pwd)
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
# paths given relative to where the script was started
abspath() { case $1 in /*) echo "$1" ;; *) echo "$START/$1" ;; esac; }

debs="" modules=${OPENSSL_MODULES:-$TOP/_build/provider/.libs}
bits_list="2048 4096" tls_list="1.3 1.2" threads=16 clients=1024 client_threads=4
duration=15 backend=cuda modes="default gpursa" servers=haproxy mps=0
while [ $# -gt 1 ]; do
    case $1 in
    --debs) debs=$(abspath "$2") ;;
    --modules) modules=$(abspath "$2") ;;
    --bits) bits_list=$2 ;;
    --tls) tls_list=$2 ;;
    --threads) threads=$2 ;;
    --clients) clients=$2 ;;
    --client-threads) client_threads=$2 ;;
    --duration) duration=$2 ;;
    --backend) backend=$2 ;;
    --modes) modes=$2 ;;
    --servers) servers=$2 ;;
    --mps) mps=1; shift; continue ;;
    *) echo "unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
    esac
    shift 2
done
[ $# = 1 ] || { sed -n '2,/^set -u/{/^set -u/d;p}' "$TOP/bench/tls-handshake.sh" | sed 's/^# \{0,1\}//' >&2; exit 2; }
OUT=$(abspath "$1")
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
LOG=$OUT/bench.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
die() { say "ERROR: $*"; exit 1; }

# ---- the programs: from PATH, or unpacked from the carried packages ----
# Unpacked libraries go on LD_LIBRARY_PATH only where the system has no library of that
# name: the system's libssl/libcrypto (which gpursa was built against), libc and
# libstdc++ always win.
# Unpacked outside OUTDIR (which may be a folder whose files are all shipped back).
UNPACK=""
unpack_debs() {
    local root lib soname f
    UNPACK=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-bench-debs.XXXXXX") || die "mktemp"
    trap 'rm -rf "$UNPACK"' EXIT
    root=$UNPACK/root
    mkdir -p "$root" "$UNPACK/lib"
    for f in "$debs"/*.deb; do
        [ -f "$f" ] || die "no .deb files in $debs"
        if command -v dpkg-deb >/dev/null; then
            dpkg-deb -x "$f" "$root" || die "cannot unpack $f"
        else
            (cd "$root" && ar p "$f" data.tar.xz | tar -xJ) || die "cannot unpack $f (no dpkg-deb; ar/tar failed)"
        fi
    done
    for lib in $(find "$root" -name '*.so.*' \( -type f -o -type l \)); do
        soname=$(basename "$lib")
        if [ "${BENCH_CARRIED_LIBS:-missing}" = all ] ||
            ! ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$soname "; then
            ln -sf "$lib" "$UNPACK/lib/$soname"
        fi
    done
    export LD_LIBRARY_PATH=$UNPACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    PATH=$root/usr/sbin:$root/usr/bin:$PATH
    # the system's openssl CLI, when there is one, matches the system's libcrypto
    if command -v /usr/bin/openssl >/dev/null; then OPENSSL=/usr/bin/openssl; fi
    say "unpacked $(ls "$debs"/*.deb | wc -l) packages; libraries taken from them: $(ls "$UNPACK/lib" | tr '\n' ' ')"
}
[ -z "$debs" ] || unpack_debs
export PATH
export OPENSSL=${OPENSSL:-$(command -v openssl)}
for p in $servers h2load "$OPENSSL"; do
    command -v "$p" >/dev/null || die "$p not found (give --debs DIR)"
    if ldd "$(command -v "$p")" 2>/dev/null | grep 'not found'; then
        die "$p is missing libraries (above); add their packages to --debs"
    fi
done
for p in $servers; do
    "$p" -v >/dev/null 2>&1 || die "$p does not run: $("$p" -v 2>&1 | head -3)"
done
h2load --version >/dev/null 2>&1 || die "h2load does not run: $(h2load --version 2>&1 | head -3)"
case " $modes " in *" gpursa "*) [ -f "$modules/gpursa.so" ] || die "no gpursa.so in $modules (--modules)" ;; esac
export OPENSSL_MODULES=$modules

# ---- the shared server helpers of the tests: start, render, stop, stats ----
srcdir=$TOP/tests/tls
GPURSA_TOP_SRCDIR=$TOP
# shellcheck source=../tests/tls/common.sh
. "$TOP/tests/tls/common.sh"
set +u
TLS_NBTHREAD=$threads
TLS_MAXCONN=$((clients * 2 > 4096 ? clients * 2 : 4096))
TLS_WORK=$OUT/work
mkdir -p "$TLS_WORK"
TLS_KEEP=1
bench_cleanup() {
    tls_cleanup
    [ "$mps" = 1 ] && echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    [ -z "$UNPACK" ] || rm -rf "$UNPACK"
}
trap bench_cleanup EXIT
ulimit -n $((TLS_MAXCONN * 3 + 1000)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [ "$mps" = 1 ]; then
    command -v nvidia-cuda-mps-control >/dev/null || die "--mps: nvidia-cuda-mps-control not found"
    export CUDA_MPS_PIPE_DIRECTORY=$OUT/mps/pipe CUDA_MPS_LOG_DIRECTORY=$OUT/mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d || die "--mps: the MPS control daemon did not start"
    backend_label=$backend+mps
else
    backend_label=$backend
fi

cores=$(nproc)
hz=$(getconf CLK_TCK)
{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -srm), $cores CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    command -v nvidia-smi >/dev/null && echo "gpus: $(nvidia-smi -L 2>/dev/null | tr '\n' ';')"
    for p in $servers; do echo "$p: $("$p" -v 2>&1 | head -1)"; done
    echo "h2load: $(h2load --version 2>&1 | head -1)"
    echo "openssl: $("$OPENSSL" version 2>&1)"
    echo "gpursa: $modules/gpursa.so, backend $backend_label"
    echo "settings: threads=$threads clients=$clients client_threads=$client_threads duration=${duration}s"
} | tee -a "$LOG"

cpu_ticks() { # utime + stime of the server's processes (nginx: master and workers)
    local p n=0
    for p in $(tls_pids); do
        n=$((n + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$n"
}

# h2load_run VER N TAG: N requests, one connection each; sets R_* from its output.
h2load_run() {
    local ver=$1 n=$2 tag=$3 port=$TLS_PORT t0 t1
    [ "$ver" = 1.2 ] && port=$TLS_PORT12
    t0=$(cpu_ticks)
    {
        TIMEFORMAT='%R %U %S'
        time h2load --h1 -n "$n" -c "$clients" -t "$client_threads" \
            "https://127.0.0.1:$port/" >"$OUT/$tag.h2load" 2>&1
    } 2>"$OUT/$tag.time"
    t1=$(cpu_ticks)
    read -r R_REAL R_USER R_SYS <"$OUT/$tag.time"
    R_OK=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$OUT/$tag.h2load")
    R_FAILED=$(sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p' "$OUT/$tag.h2load")
    R_SECS=$(sed -n 's/^finished in \([0-9.]*\)s.*/\1/p; s/^finished in \([0-9.]*\)ms.*/\1 1000/p' \
        "$OUT/$tag.h2load" | awk '{ print ($2 ? $1 / $2 : $1) }')
    R_PROTO=$(sed -n 's/^TLS Protocol: //p' "$OUT/$tag.h2load")
    R_SERVER_CPU=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
    [ -n "$R_OK" ] && [ -n "$R_SECS" ] || { cat "$OUT/$tag.h2load" >>"$LOG"; die "h2load failed ($tag)"; }
}

# measure TAG VER: warm-up, calibration, measured run against the running server; one
# CSV row after it stops.
measure() {
    local tag=$1 ver=$2 total=0 calib n fe stats
    h2load_run "$ver" $((clients * 2)) "$tag-warmup"
    total=$((total + clients * 2))
    # calibration: grow the run until it lasts a quarter of the duration
    calib=$((clients * 4))
    while :; do
        h2load_run "$ver" "$calib" "$tag-calibrate"
        total=$((total + calib))
        awk -v s="$R_SECS" -v d="$duration" 'BEGIN { exit !(s * 4 < d) }' &&
            [ "$calib" -lt 10000000 ] || break
        calib=$((calib * 4))
    done
    n=$(awk -v ok="$R_OK" -v s="$R_SECS" -v d="$duration" -v c="$clients" \
        'BEGIN { n = int(ok / s * d); print (n < 3 * c ? 3 * c : n) }')
    say "$tag: calibration $R_OK handshakes in ${R_SECS}s; measuring $n"
    h2load_run "$ver" "$n" "$tag"
    total=$((total + n))
    [ "$R_PROTO" = "TLSv$ver" ] || die "$tag: h2load negotiated '$R_PROTO'"
    tls_stop "$(tls_soft_signal)" 60
    cp "$TLS_WORK/server.err" "$OUT/$tag.server.err"
    [ "$TLS_STATUS" = 0 ] || die "$tag: $TLS_SERVER exit status $TLS_STATUS"
    # Every request must have been a new connection (HAProxy counts them).
    fe=$(sed -n 's/.*Proxy tls stopped (cumulated conns: FE: \([0-9]*\).*/\1/p' "$OUT/$tag.server.err")
    if [ "$TLS_SERVER" = haproxy ] && ! [ "${fe:-0}" -ge "$total" ]; then
        say "WARNING: $tag: $fe connections for $total requests: not one handshake per request"
    fi
    # gpursa's lines, summed over processes (nginx: one per worker)
    stats=$(sed -n 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\) batches=\([0-9]*\) mean_batch=[0-9.]* faults=\([0-9]*\).*/\1 \2 \3 \4 \5/p' \
        "$OUT/$tag.server.err" | awk 'NF { g += $1; h += $2; c += $3; b += $4; f += $5; n++ }
            END { if (n) printf "%d,%d,%d,%d,%.1f,%d", g, h, c, b, (b ? (g + h) / b : 0), f; else printf ",,,,," }')
    awk -v OFS=, -v srv="$TLS_SERVER" -v bits="$TLS_BITS" -v ver="$ver" -v mode="$mode" \
        -v be="$backend_label" -v th="$threads" -v c="$clients" -v ct="$client_threads" -v n="$n" \
        -v ok="$R_OK" -v failed="$R_FAILED" -v s="$R_SECS" -v u="$R_USER" -v sy="$R_SYS" \
        -v scpu="$R_SERVER_CPU" -v fe="$fe" -v stats="$stats" 'BEGIN {
            if (mode != "gpursa") be = ""
            print srv, bits, ver, mode, be, th, c, ct, n, ok, failed, s,
                sprintf("%.0f", ok / s), u + sy, sprintf("%.2f", (u + sy) / s),
                scpu, sprintf("%.2f", scpu / s), fe, stats }' >>"$csv"
    say "$tag: $(tail -1 "$csv")"
}

csv=$OUT/results.csv
echo "server,bits,tls,provider,backend,threads,clients,client_threads,requests,succeeded,failed,seconds,handshakes_per_s,client_cpu_s,client_cores,server_cpu_s,server_cores,fe_conns,ops_gpu,ops_host,ops_cpu,batches,mean_batch,faults" >"$csv"

for TLS_SERVER in $servers; do
    case $TLS_SERVER in
    # One new connection, so one full handshake, per request.
    haproxy) TLS_RENDER_SED='/http-request return/i\    option httpclose' ;;
    nginx) TLS_RENDER_SED='/access_log off;/a\    keepalive_timeout 0;' ;;
    *) die "unknown server $TLS_SERVER" ;;
    esac
    for bits in $bits_list; do
        TLS_BITS=$bits
        tls_make_cert "$bits"
        for ver in $tls_list; do
            for mode in $modes; do
                tag="$TLS_SERVER-rsa$bits-tls$ver-$mode"
                if [ "$mode" = gpursa ]; then
                    TLS_WITH_GPURSA=1
                    export GPURSA_STATS=1 GPURSA_BACKEND=$backend
                else
                    TLS_WITH_GPURSA=0
                    unset GPURSA_STATS GPURSA_BACKEND
                fi
                tls_start
                cp "$TLS_WORK/$TLS_SERVER".c* "$OUT/$tag.conf"
                measure "$tag" "$ver"
            done
        done
    done
done

# ---- summary: one row per server, size and version, with the speed-up ----
{
    echo "# New TLS handshakes per second: $threads HAProxy threads / nginx workers, h2load $clients connections ($client_threads threads) on the same host"
    echo
    sed -n '1,/^settings/{s/^/    /;p}' "$LOG" | grep -v '^    unpacked'
    echo
    echo "| server | RSA | TLS | provider | handshakes/s | client CPU (cores) | server CPU (cores) | gpursa ops gpu/host/cpu | mean batch | speed-up |"
    echo "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |"
    awk -F, 'NR > 1 {
        key = $1 "/" $2 "/" $3
        if ($4 == "default") base[key] = $13
        sp = ($4 != "default" && base[key] > 0) ? sprintf("%.2fx", $13 / base[key]) : ""
        ops = ($19 == "") ? "-" : $19 "/" $20 "/" $21
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4 ($5 ? " (" $5 ")" : ""), $13, $15, $17, ops, ($23 == "" ? "-" : $23), sp
    }' "$csv"
    echo
    echo "Speed-up: gpursa's handshakes per second over the same server without it (target: 3x for HAProxy)."
    echo "Client CPU: h2load's user+sys time / wall time; it runs on the same cores as the server."
    echo "nginx workers block in each signature: a worker never has two to batch, so its batches are"
    echo "only what several workers of one process would share (none: one process per worker);"
    echo "without NVIDIA MPS, each worker process has its own CUDA context."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
