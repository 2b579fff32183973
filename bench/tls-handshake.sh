#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# New full TLS handshakes per second through HAProxy and nginx, with and without gpursa,
# in one go, with the server and the load generator on separate cores of one host.
#
#   bench/tls-handshake.sh [options] OUTDIR
#
# What one run measures. The server (conf/haproxy.cfg or conf/nginx.conf) is started on
# the first S cores (taskset; HAProxy gets S threads, so do gpursa's own threads, which
# inherit the affinity). One h2load process per remaining core, each pinned to its core
# with one thread (processes, not threads: OpenSSL 3.0 takes its locks per process, and
# one process per core also spreads the connections evenly), opens new connections in a
# loop: HTTP/1.1, one request per connection, the server closes each connection after
# its answer, so every request is one new full handshake (no session cache, no tickets in
# the configurations; for gpursa the stats line's operation count is compared with the
# number of requests: one signature per full handshake). The clients offer X25519 as
# their key share (their default list, with X25519 alone where the certificate allows
# it: see --groups). After --warmup seconds the script reads the server's request
# counter (HAProxy's stats page, nginx's stub_status, both on an extra loopback listener
# added by this script only) and the CPU time of the server's and the clients'
# processes, waits --duration seconds, reads them again: handshakes/s = requests / time,
# CPU in cores = CPU seconds / time. Then the server is stopped gracefully while the
# clients still run (so no handshake is abandoned mid-way and gpursa prints its stats
# line at unload), and the clients are stopped.
#
# Runs, for each server-core split in --split, each RSA size and TLS version:
#   haproxy default          stock HAProxy (the gpursa-only lines of the config removed)
#   haproxy gpursa           ssl-provider gpursa, ssl-mode-async, GPURSA_MIN_GPU_BATCH
#                            (--min-gpu-batch, default 1 as conf/haproxy.cfg presets it:
#                            every batch to the GPU; the CPU is what a TLS server runs
#                            out of, so the GPU's latency costs only connections in flight)
#   haproxy ecdsa            (--ceiling) stock HAProxy with an ECDSA P-256 certificate:
#                            a handshake whose signature costs almost nothing, so the
#                            highest rate any RSA offload could reach on these cores
# and nginx (first split only; each TLS version; each count of --nginx-workers):
#   nginx default            stock nginx (conf/nginx.conf without its gpursa-only lines)
#   nginx async-gpursa       (default) Intel's asynch_mode_nginx with conf/nginx-async.conf:
#                            ssl_asynch on, gpursa through OPENSSL_CONF=conf/openssl.cnf,
#                            GPURSA_MIN_GPU_BATCH (--min-gpu-batch, default 1): each
#                            worker pauses handshakes on their queued signatures and its
#                            queue batches them; the workers' CUDA contexts time-sliced
#   nginx async-gpursa-mps   (default) the same under NVIDIA MPS (nvidia-cuda-mps-control
#                            -d, pipe and log folders in a temporary folder, stopped after
#                            the run): the workers' kernels run concurrently on the GPU
#   nginx async-gpursa-mps-outage
#                            (on demand) async-gpursa-mps whose MPS control daemon is
#                            stopped under load and started again: after the warm-up,
#                            DURATION s as usual, then `quit -t 1` (the MPS server ends
#                            with its clients' work in flight), DURATION s without MPS,
#                            MPS started again and nginx reloaded (a process whose MPS
#                            server ended cannot use CUDA again; new workers can), 3 x
#                            DURATION s. gpursa's live metrics (every 200 ms, per worker)
#                            give the operations on the GPU and off it in each phase. Its
#                            row says PASS when no handshake failed on the server (no
#                            "SSL_do_handshake() failed" in its log), operations ran off
#                            the GPU while MPS was gone, the old workers exited and the new
#                            ones used the GPU; else FAIL and why
#   nginx ecdsa              (--ceiling) stock nginx with an ECDSA P-256 certificate
#   nginx async              asynch_mode_nginx without gpursa (its default provider;
#                            ssl_asynch gone with the gpursa-only lines)
#   nginx gpursa             stock nginx, gpursa through OPENSSL_CONF=conf/openssl.cnf, its
#                            defaults (a worker has one signature at a time, so it computes
#                            it on the CPU: the crossover is never reached)
#   nginx gpursa-gpu         the same with GPURSA_MIN_GPU_BATCH=1 GPURSA_MAX_WAIT_US=0:
#                            every signature goes to the GPU, a batch of one per worker
#   nginx gpursa-gpu-mps     the same under NVIDIA MPS
# The async modes need asynch_mode_nginx: --nginx-async BIN, or it is built once by
# bench/build-async-nginx.sh into --nginx-async-prefix from its source (that script's
# default, or --nginx-async-src).
#
# Writes OUTDIR/results.csv, OUTDIR/summary.md (a table with the speed-ups), bench.log,
# and per run the server's stderr (gpursa's stats line), its rendered configuration and
# the clients' output. With the defaults on 16 cores (splits 4 and 8: 28 runs) it took
# 301 s on the H100 host: warm-up + duration + about 2 s per run. bench/RESULTS.md has
# the figures and what limits them; bench/results/tls-h100-run*.csv the raw data.
#
# The servers need not be installed: --debs DIR takes Debian packages (haproxy, nginx,
# nghttp2-client, openssl and the libraries they need: bench/tls/fetch-debs.sh), unpacks
# them in a temporary folder and uses a library only where the system lacks it
# (BENCH_CARRIED_LIBS=all: every carried library). Do not carry libc6, libstdc++6,
# libgcc-s1 or libssl3: gpursa.so and the CUDA runtime need the system's.
#
# Options:
#   --debs DIR            .deb files to unpack (default: haproxy/nginx/h2load from PATH)
#   --modules DIR         folder with gpursa.so (default: $OPENSSL_MODULES, else
#                         _build/provider/.libs of this checkout)
#   --split "4 8"         server core counts to measure: the server on cores 0..S-1, one
#                         client per other core (default: nproc/4 and nproc/2; 1 on 2 cores)
#   --bits "2048 4096"    RSA key sizes
#   --tls "1.3 1.2"       TLS versions (each server runs each)
#   --connections N       concurrent connections per client process (default 192)
#   --warmup S            seconds before measuring (default 3)
#   --duration S          measured seconds per run (default 5)
#   --backend B           GPURSA_BACKEND for the gpursa runs (default cuda)
#   --min-gpu-batch N     GPURSA_MIN_GPU_BATCH for HAProxy and async nginx with gpursa (default 1;
#                         -1: gpursa's own crossover measurement)
#   --modes "default gpursa"                 HAProxy runs
#   --ceiling / --no-ceiling                 the ECDSA runs (default on)
#   --servers "haproxy nginx"                servers to measure
#   --nginx-modes "default async-gpursa async-gpursa-mps"
#                         (also: async gpursa gpursa-gpu gpursa-gpu-mps)
#   --nginx-workers "4 8" nginx worker process counts (default: the first split's cores
#                         and twice that; each worker that uses the GPU holds a CUDA
#                         context)
#   --nginx-async BIN     asynch_mode_nginx's sbin/nginx (default: built, see above)
#   --nginx-async-src S   its source, a tarball or tree (bench/build-async-nginx.sh -s)
#   --nginx-async-prefix P  where it is built (default _build-nginx-async in the checkout)
#   --groups LIST         the clients' groups (default X25519, and X25519:P-256 for the
#                         ECDSA certificate, which TLS 1.2 needs in the list)
set -u
START=$(pwd)
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
# paths given relative to where the script was started
abspath() { case $1 in /*) echo "$1" ;; *) echo "$START/$1" ;; esac; }

ncpu=$(nproc)
debs="" modules=${OPENSSL_MODULES:-$TOP/_build/provider/.libs}
if [ "$ncpu" -ge 8 ]; then split="$((ncpu / 4)) $((ncpu / 2))"; else split=$(( ncpu > 1 ? ncpu / 2 : 1 )); fi
bits_list="2048 4096" tls_list="1.3 1.2" per_client=192 warmup=3 duration=5
backend=cuda min_gpu_batch=1 modes="default gpursa" ceiling=1 servers="haproxy nginx"
nginx_modes="default async-gpursa async-gpursa-mps" nginx_workers="" groups=X25519
nginx_async="" nginx_async_src="" nginx_async_prefix=$TOP/_build-nginx-async
while [ $# -gt 1 ]; do
    case $1 in
    --debs) debs=$(abspath "$2") ;;
    --modules) modules=$(abspath "$2") ;;
    --split) split=$2 ;;
    --bits) bits_list=$2 ;;
    --tls) tls_list=$2 ;;
    --connections) per_client=$2 ;;
    --warmup) warmup=$2 ;;
    --duration) duration=$2 ;;
    --backend) backend=$2 ;;
    --min-gpu-batch) min_gpu_batch=$2 ;;
    --modes) modes=$2 ;;
    --ceiling) ceiling=1; shift; continue ;;
    --no-ceiling) ceiling=0; shift; continue ;;
    --servers) servers=$2 ;;
    --nginx-modes) nginx_modes=$2 ;;
    --nginx-workers) nginx_workers=$2 ;;
    --nginx-async) nginx_async=$(abspath "$2") ;;
    --nginx-async-src) nginx_async_src=$(abspath "$2") ;;
    --nginx-async-prefix) nginx_async_prefix=$(abspath "$2") ;;
    --groups) groups=$2 ;;
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
for s in $split; do
    [ "$s" -ge 1 ] && [ "$s" -lt "$ncpu" ] || die "--split $s: needs 1 <= S < $ncpu (cores left for the clients)"
done
set -- $split
first_split=$1
[ -n "$nginx_workers" ] || nginx_workers="$first_split $((2 * first_split))"

# ---- the programs: from PATH, or unpacked from the carried packages ----
# Unpacked outside OUTDIR (which may be a folder whose files are all shipped back).
UNPACK=""
unpack_debs() {
    local root lib soname f
    UNPACK=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-bench-debs.XXXXXX") || die "mktemp"
    chmod 755 "$UNPACK"
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
    # A library goes on LD_LIBRARY_PATH only where the system has none of that name:
    # the system's libssl/libcrypto (which gpursa was built against), libc and
    # libstdc++ always win.
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
# asynch_mode_nginx, for the async modes
case " $servers " in *" nginx "*)
    case " $nginx_modes " in *" async"*)
        if [ -z "$nginx_async" ]; then
            "$TOP/bench/build-async-nginx.sh" ${nginx_async_src:+-s "$nginx_async_src"} \
                "$nginx_async_prefix" 2>&1 | tee -a "$LOG"
            [ "${PIPESTATUS[0]}" = 0 ] || die "cannot build asynch_mode_nginx (--nginx-async BIN, --nginx-async-src SRC)"
            nginx_async=$nginx_async_prefix/sbin/nginx
        fi
        "$nginx_async" -v >/dev/null 2>&1 || die "$nginx_async does not run"
        ;;
    esac
    ;;
esac
export OPENSSL=${OPENSSL:-$(command -v openssl)}
for p in $servers h2load "$OPENSSL" taskset; do
    command -v "$p" >/dev/null || die "$p not found (give --debs DIR)"
    if ldd "$(command -v "$p")" 2>/dev/null | grep 'not found'; then
        die "$p is missing libraries (above); add their packages to --debs"
    fi
done
for p in $servers; do
    "$p" -v >/dev/null 2>&1 || die "$p does not run: $("$p" -v 2>&1 | head -3)"
done
h2load --version >/dev/null 2>&1 || die "h2load does not run: $(h2load --version 2>&1 | head -3)"
[ -f "$modules/gpursa.so" ] || die "no gpursa.so in $modules (--modules)"
export OPENSSL_MODULES=$modules

# ---- the shared server helpers of the tests: render, start, certificates, pids ----
srcdir=$TOP/tests/tls
GPURSA_TOP_SRCDIR=$TOP
# shellcheck source=../tests/tls/servers.sh
. "$TOP/tests/tls/servers.sh"
set +u
TLS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-bench-tls.XXXXXX") || die "mktemp"
chmod 755 "$TLS_WORK"
MPS_DIR=""
CLIENT_PIDS=""
mps_stop() {
    if [ -n "$MPS_DIR" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe nvidia-cuda-mps-control >/dev/null 2>&1
        sleep 1
        rm -rf "$MPS_DIR"
        MPS_DIR=""
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
}
clients_stop() {
    local p
    for p in $CLIENT_PIDS; do kill "$p" 2>/dev/null; done
    for p in $CLIENT_PIDS; do wait "$p" 2>/dev/null; done
    CLIENT_PIDS=""
}
bench_cleanup() {
    clients_stop
    if [ -n "$TLS_PID" ] && kill -0 "$TLS_PID" 2>/dev/null; then tls_kill_server; fi
    mps_stop
    rm -rf "$TLS_WORK"
    [ -z "$UNPACK" ] || rm -rf "$UNPACK"
}
trap bench_cleanup EXIT

cores_all="0-$((ncpu - 1))"
hz=$(getconf CLK_TCK)
{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -srm), $ncpu CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    command -v nvidia-smi >/dev/null && echo "gpus: $(nvidia-smi -L 2>/dev/null | tr '\n' ';')"
    for p in $servers; do echo "$p: $("$p" -v 2>&1 | head -1)"; done
    [ -z "$nginx_async" ] || echo "nginx async: $nginx_async: $("$nginx_async" -v 2>&1 | head -1)"
    echo "h2load: $(h2load --version 2>&1 | head -1)"
    echo "openssl: $("$OPENSSL" version 2>&1)"
    echo "gpursa: $modules/gpursa.so, backend $backend, HAProxy min_gpu_batch $min_gpu_batch"
    echo "settings: split=$split connections/client=$per_client warmup=${warmup}s duration=${duration}s nginx workers=$nginx_workers groups=$groups"
} | tee -a "$LOG"

# ---- counters ----
ticks_of() { # utime + stime of the processes given, in clock ticks
    local p n=0
    for p in "$@"; do
        n=$((n + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$n"
}
server_ticks() { ticks_of $(tls_pids); }
client_ticks() { ticks_of $CLIENT_PIDS; }
now_ns() { date +%s%N; }

# An HTTP GET over bash's /dev/tcp (curl may be missing where the benchmark runs).
http_get() {
    local body
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
    body=$(cat <&3)
    exec 3<&- 3>&-
    printf '%s\n' "$body" | tr -d '\r'
}

# Requests the server has answered so far on its TLS listeners.
# HAProxy: the stats CSV's req_tot of frontend "tls". nginx: stub_status's request
# count less the status requests themselves (each one counts).
STATUS_GETS=0
server_requests() {
    STATUS_GETS=$((STATUS_GETS + 1))
    case $TLS_SERVER in
    haproxy)
        http_get "$STATS_PORT" '/;csv' | awk -F, '
            /^# pxname/ { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
            $1 == "tls" && $2 == "FRONTEND" { print $col["req_tot"]; exit }'
        ;;
    nginx)
        http_get "$STATS_PORT" / | awk -v g="$STATUS_GETS" '
            /^ *[0-9]+ +[0-9]+ +[0-9]+ *$/ { print $3 - g; exit }'
        ;;
    esac
}

# ---- one run ----
# The extra loopback listener for the counters; for nginx also root workers (MPS serves
# one user, and the workers must reach its pipes and the GPU).
render_sed() {
    case $TLS_SERVER in
    haproxy)
        # One new connection, so one full handshake, per request.
        printf '%s\n' '/http-request return/i\    option httpclose' \
            "\$a\\
listen bench_stats\\
    bind 127.0.0.1:$STATS_PORT\\
    stats enable\\
    stats uri /"
        ;;
    nginx)
        printf '%s\n' '/^worker_processes/a\user root;' \
            "/access_log off;/a\\
    keepalive_timeout 0;\\
    server {\\
        listen 127.0.0.1:$STATS_PORT;\\
        location / { stub_status; }\\
    }"
        ;;
    esac
}

start_clients() { # PORT CORES...: one h2load per core
    local port=$1 c g=$RUN_GROUPS
    shift
    CLIENT_PIDS=""
    for c in "$@"; do
        taskset -c "$c" h2load --h1 -n 100000000 -c "$per_client" -t 1 --groups "$g" \
            "https://127.0.0.1:$port/" >"$OUT/$RUN_TAG.h2load.$c" 2>&1 &
        CLIENT_PIDS="$CLIENT_PIDS $!"
    done
}

# Stop the server gracefully while the clients still run (their handshakes in flight
# finish; nothing is abandoned mid-handshake), then the clients. Sets RUN_STATUS.
stop_all() {
    local i sig
    sig=$(tls_soft_signal)
    kill "-$sig" "$TLS_PID" 2>/dev/null
    for i in $(seq 300); do
        kill -0 "$TLS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$TLS_PID" 2>/dev/null; then
        say "WARNING: $RUN_TAG: $TLS_SERVER still running 30 s after SIG$sig: killed"
        tls_kill_server
        RUN_STATUS=killed
    else
        wait "$TLS_PID"
        RUN_STATUS=$?
    fi
    TLS_PID=""
    clients_stop
}

csv=$OUT/results.csv
echo "server,server_cores,client_cores,workers,cert,tls,provider,policy,connections,seconds,requests,handshakes_per_s,server_cpu_cores,client_cpu_cores,server_us_per_hs,client_us_per_hs,requests_total,ops_gpu,ops_host,ops_cpu,batches,mean_batch,faults,ops_per_request,status" >"$csv"

# run_start TAG S VER: the server on cores 0..S-1 (environment as the caller set it),
# then one client per other core, for TLS VER
run_start() {
    local s=$2 ver=$3 port client_list
    RUN_TAG=$1
    client_list=$(seq "$s" $((ncpu - 1)) | tr '\n' ' ')
    STATS_PORT=$((20000 + RANDOM % 40000))
    STATUS_GETS=0
    TLS_RENDER_SED=$(render_sed)
    # The server and every thread or process it makes later inherit the shell's affinity.
    taskset -p -c "0-$((s - 1))" $$ >/dev/null
    tls_start >>"$LOG"
    taskset -p -c "$cores_all" $$ >/dev/null
    cp "$TLS_WORK/$TLS_SERVER".c* "$OUT/$RUN_TAG.conf"
    # the async nginx: proof that the async directive was in the running configuration
    [ "$TLS_NGINX" = nginx ] || echo "# run by $TLS_NGINX" >>"$OUT/$RUN_TAG.conf"
    port=$TLS_PORT
    [ "$ver" = 1.2 ] && port=$TLS_PORT12
    # shellcheck disable=SC2086
    start_clients "$port" $client_list
}

# run TAG S CERT VER PROVIDER POLICY: one measurement; environment as the caller set it.
run_one() {
    local s=$2 cert=$3 ver=$4 prov=$5 policy=$6 total="" t0 t1 r0 r1 s0 s1 c0 c1 stats extra=0
    local server_cores="0-$((s - 1))"
    run_start "$1" "$s" "$ver"
    # a CUDA context per nginx worker takes a while to start
    [ "$TLS_SERVER" = nginx ] && [ "$TLS_WITH_GPURSA" = 1 ] && extra=2
    sleep $((warmup + extra))
    t0=$(now_ns) r0=$(server_requests) s0=$(server_ticks) c0=$(client_ticks)
    sleep "$duration"
    t1=$(now_ns) r1=$(server_requests) s1=$(server_ticks) c1=$(client_ticks)
    # nginx's count is gone with it: read it last (the handshakes in flight are not in it)
    [ "$TLS_SERVER" = nginx ] && total=$(server_requests)
    stop_all
    cp "$TLS_WORK/server.err" "$OUT/$RUN_TAG.server.err"
    proto=$(sed -n 's/^TLS Protocol: //p' "$OUT/$RUN_TAG.h2load.$s" | head -1)
    [ "$proto" = "TLSv$ver" ] || say "WARNING: $RUN_TAG: the clients negotiated '$proto'"
    # HAProxy: the connections it accepted over the whole run (the stats page's are
    # counted in their own proxy)
    [ "$TLS_SERVER" = haproxy ] && total=$(sed -n 's/.*Proxy tls stopped (cumulated conns: FE: \([0-9]*\).*/\1/p' "$OUT/$RUN_TAG.server.err")
    # gpursa's lines, summed over processes (nginx: one per worker)
    stats=$(sed -n 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\) batches=\([0-9]*\) mean_batch=[0-9.]* faults=\([0-9]*\).*/\1 \2 \3 \4 \5/p' \
        "$OUT/$RUN_TAG.server.err" | awk 'NF { g += $1; h += $2; c += $3; b += $4; f += $5; n++ }
            END { if (n) printf "%d,%d,%d,%d,%.1f,%d", g, h, c, b, (b ? (g + h) / b : 0), f; else printf ",,,,," }')
    awk -v OFS=, -v srv="$TLS_SERVER" -v sc="$server_cores" -v cc="$s-$((ncpu - 1))" \
        -v w="${TLS_WORKERS:-$TLS_NBTHREAD}" -v cert="$cert" -v ver="$ver" -v prov="$prov" \
        -v pol="$policy" -v conns=$(((ncpu - s) * per_client)) -v t0="$t0" -v t1="$t1" \
        -v r0="$r0" -v r1="$r1" -v s0="$s0" -v s1="$s1" -v c0="$c0" -v c1="$c1" -v hz="$hz" \
        -v total="$total" -v stats="$stats" -v st="$RUN_STATUS" 'BEGIN {
            secs = (t1 - t0) / 1e9; n = r1 - r0
            if (n <= 0) n = 0
            split(stats, a, ",")
            opr = (stats != ",,,,," && total > 0) ? sprintf("%.3f", (a[1] + a[2] + a[3]) / total) : ""
            print srv, sc, cc, w, cert, ver, prov, pol, conns, sprintf("%.2f", secs), n,
                sprintf("%.0f", n / secs), sprintf("%.2f", (s1 - s0) / hz / secs),
                sprintf("%.2f", (c1 - c0) / hz / secs),
                n ? sprintf("%.0f", (s1 - s0) / hz / n * 1e6) : "",
                n ? sprintf("%.0f", (c1 - c0) / hz / n * 1e6) : "", total, stats, opr, st }' >>"$csv"
    say "$RUN_TAG: $(tail -1 "$csv")"
}

# Certificates: one per RSA size, and the ECDSA P-256 one of the ceiling runs.
make_certs() {
    local b
    for b in $bits_list; do
        tls_make_cert "$b"
        mkdir -p "$TLS_WORK/rsa$b"
        mv "$TLS_WORK"/cert.pem "$TLS_WORK"/key.pem "$TLS_WORK"/cert+key.pem "$TLS_WORK/rsa$b/"
    done
    mkdir -p "$TLS_WORK/ec256"
    (cd "$TLS_WORK/ec256" &&
        OPENSSL_CONF=/dev/null "$OPENSSL" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
            -nodes -days 2 -keyout key.pem -out cert.pem -subj /CN=localhost \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null &&
        cat cert.pem key.pem >cert+key.pem) || die "cannot make the ECDSA certificate"
}
use_cert() { cp "$TLS_WORK/$1"/*.pem "$TLS_WORK/"; }
make_certs

gpursa_env() { # POLICY: the gpursa environment of a run
    TLS_WITH_GPURSA=1
    export GPURSA_STATS=1 GPURSA_BACKEND=$backend
    unset GPURSA_MIN_GPU_BATCH GPURSA_MAX_WAIT_US
    case $1 in
    # (explicit even for -1: conf/haproxy.cfg presets 1 where the environment has none)
    haproxy) export GPURSA_MIN_GPU_BATCH=$min_gpu_batch ;;
    gpu) export GPURSA_MIN_GPU_BATCH=1 GPURSA_MAX_WAIT_US=0 ;;
    esac
}
default_env() {
    TLS_WITH_GPURSA=0
    unset GPURSA_STATS GPURSA_BACKEND GPURSA_MIN_GPU_BATCH GPURSA_MAX_WAIT_US
}

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
maxconn_for() { local n=$(((ncpu - $1) * per_client * 2)); echo $((n > 4096 ? n : 4096)); }

case " $servers " in *" haproxy "*)
    TLS_SERVER=haproxy
    for s in $split; do
        TLS_NBTHREAD=$s TLS_MAXCONN=$(maxconn_for "$s") TLS_WORKERS=""
        for ver in $tls_list; do
            for bits in $bits_list; do
                use_cert "rsa$bits"
                RUN_GROUPS=$groups
                for mode in $modes; do
                    if [ "$mode" = gpursa ]; then
                        gpursa_env haproxy
                        pol="$backend min_gpu_batch=$min_gpu_batch"
                    else
                        default_env
                        pol=""
                    fi
                    run_one "haproxy-s$s-rsa$bits-tls$ver-$mode" "$s" "rsa$bits" "$ver" "$mode" "$pol"
                done
            done
            if [ "$ceiling" = 1 ]; then
                use_cert ec256
                default_env
                RUN_GROUPS=$groups:P-256
                run_one "haproxy-s$s-ec256-tls$ver-default" "$s" ec256 "$ver" default "ceiling"
            fi
        done
    done
    ;;
esac

# ---- the MPS outage (nginx mode async-gpursa-mps-outage) ----
# metrics_ops [PID...]: "GPU OTHER", gpursa's operations so far, summed over the
# workers' metrics files (gpursa-PID.prom) but those of the PIDs given
metrics_ops() {
    local f p skip
    for f in "$TLS_WORK"/metrics/gpursa-*.prom; do
        [ -f "$f" ] || continue
        skip=0
        for p in "$@"; do [ "$f" = "$TLS_WORK/metrics/gpursa-$p.prom" ] && skip=1; done
        [ "$skip" = 1 ] || cat "$f"
    done | awk '/^gpursa_operations_total\{/ { if ($1 ~ /path="gpu"/) g += $2; else o += $2 }
        END { printf "%d %d\n", g, o }'
}
metrics_pids() {
    local f
    for f in "$TLS_WORK"/metrics/gpursa-*.prom; do
        [ -f "$f" ] && { f=${f##*/gpursa-}; echo "${f%.prom}"; }
    done
}
# outage_one TAG S VER: as run_one, with MPS stopped and started again while the
# clients run (mps_start has run). One row in results.csv; its status says PASS or
# FAIL and why. The handshakes/s are those of the whole run, outage included.
outage_one() {
    local s=$2 ver=$3 t0 t1 r0 r1 s0 s1 c0 c1 a b c d fails status old p left=0
    local server_cores="0-$((s - 1))"
    rm -rf "$TLS_WORK/metrics"
    mkdir -p "$TLS_WORK/metrics"
    export GPURSA_METRICS_FILE=$TLS_WORK/metrics/gpursa-%p.prom GPURSA_METRICS_INTERVAL_MS=200
    run_start "$1" "$s" "$ver"
    unset GPURSA_METRICS_FILE GPURSA_METRICS_INTERVAL_MS
    sleep $((warmup + 2))
    t0=$(now_ns) r0=$(server_requests) s0=$(server_ticks) c0=$(client_ticks)
    a=$(metrics_ops)
    sleep "$duration"
    b=$(metrics_ops)
    say "$RUN_TAG: MPS quit under load (gpu/other ops so far: $b)"
    echo "quit -t 1" | nvidia-cuda-mps-control >>"$LOG" 2>&1
    sleep "$duration"
    c=$(metrics_ops)
    say "$RUN_TAG: MPS started again, nginx reloaded (gpu/other ops so far: $c)"
    nvidia-cuda-mps-control -d >>"$LOG" 2>&1 || say "WARNING: $RUN_TAG: MPS did not start again"
    # A process whose MPS server ended cannot use CUDA again: new workers can.
    old=$(metrics_pids)
    kill -HUP "$TLS_PID"
    sleep $((3 * duration))
    # shellcheck disable=SC2086
    d=$(metrics_ops $old)
    for p in $old; do [ "$p" != "$TLS_PID" ] && kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
    t1=$(now_ns) r1=$(server_requests) s1=$(server_ticks) c1=$(client_ticks)
    stop_all
    cp "$TLS_WORK/server.err" "$OUT/$RUN_TAG.server.err"
    fails=$(grep -c 'SSL_do_handshake() failed' "$OUT/$RUN_TAG.server.err")
    # phases: gpu and other operations before, during and after the outage
    # after: the new workers' operations (their counts start at 0)
    status=$(echo "$a $b $c $d $fails $left" | awk '{
        gb = $3 - $1; ob = $4 - $2; go = $5 - $3; oo = $6 - $4; ga = $7; oa = $8
        why = ""
        if ($9 > 0) why = why " " $9 "-handshakes-failed"
        if ($10 > 0) why = why " " $10 "-old-workers-left"
        if (gb <= 0) why = why " no-gpu-ops-before"
        if (oo <= 0) why = why " no-fallback-ops-during"
        if (ga <= 0) why = why " no-gpu-ops-after"
        printf "%s gpu/other before %d/%d during %d/%d after (new workers) %d/%d\n",
            why == "" ? "PASS" : "FAIL" why, gb, ob, go, oo, ga, oa }')
    say "$RUN_TAG: $status"
    echo "$TLS_SERVER,$server_cores,$s-$((ncpu - 1)),$TLS_WORKERS,$4,$ver,gpursa,async $backend MPS outage,$(((ncpu - s) * per_client)),$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'),$((r1 - r0)),$(awk -v n=$((r1 - r0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / ((b - a) / 1e9) }'),,,,,,,,,,,,,$status" >>"$csv"
}

mps_start() { # MODE: NVIDIA MPS for the run; fails (1) when it cannot start
    command -v nvidia-cuda-mps-control >/dev/null ||
        { say "SKIP $1: no nvidia-cuda-mps-control"; return 1; }
    MPS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-mps.XXXXXX")
    chmod 755 "$MPS_DIR"
    export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d || { say "SKIP $1: MPS did not start"; mps_stop; return 1; }
}

case " $servers " in *" nginx "*)
    TLS_SERVER=nginx
    s=$first_split
    TLS_NBTHREAD=""
    for w in $nginx_workers; do
        TLS_WORKERS=$w
        for ver in $tls_list; do
            for bits in $bits_list; do
                use_cert "rsa$bits"
                RUN_GROUPS=$groups
                for mode in $nginx_modes; do
                    TLS_NGINX=nginx TLS_NGINX_CONF=nginx.conf prov=${mode%%-*}
                    case $mode in
                    default) default_env; pol="" ;;
                    gpursa) gpursa_env nginx; pol="$backend defaults" ;;
                    gpursa-gpu) gpursa_env gpu; pol="$backend min_gpu_batch=1 max_wait_us=0" ;;
                    gpursa-gpu-mps)
                        mps_start "$mode" || continue
                        gpursa_env gpu
                        pol="$backend min_gpu_batch=1 max_wait_us=0 MPS"
                        ;;
                    async-gpursa-mps-outage)
                        TLS_NGINX=$nginx_async TLS_NGINX_CONF=nginx-async.conf
                        mps_start "$mode" || continue
                        gpursa_env haproxy
                        outage_one "nginx-s$s-w$w-rsa$bits-tls$ver-$mode" "$s" "$ver" "rsa$bits"
                        cp "$MPS_DIR/log/control.log" "$OUT/nginx-w$w-rsa$bits-tls$ver-$mode-control.log" 2>/dev/null
                        mps_stop
                        continue
                        ;;
                    async | async-gpursa | async-gpursa-mps)
                        TLS_NGINX=$nginx_async TLS_NGINX_CONF=nginx-async.conf
                        if [ "$mode" = async ]; then
                            default_env
                            pol="async nginx"
                        else
                            [ "$mode" = async-gpursa ] || mps_start "$mode" || continue
                            # --min-gpu-batch, in the master's environment (where gpursa
                            # reads it) as conf/nginx-async.conf says
                            gpursa_env haproxy
                            prov=gpursa
                            pol="async $backend min_gpu_batch=$min_gpu_batch"
                            [ "$mode" = async-gpursa ] || pol="$pol MPS"
                        fi
                        ;;
                    *) die "unknown nginx mode $mode" ;;
                    esac
                    run_one "nginx-s$s-w$w-rsa$bits-tls$ver-$mode" "$s" "rsa$bits" "$ver" \
                        "$prov" "$pol"
                    if [ -n "$MPS_DIR" ]; then
                        cp "$MPS_DIR/log/control.log" "$OUT/nginx-w$w-rsa$bits-tls$ver-$mode-control.log" 2>/dev/null
                        mps_stop
                    fi
                done
            done
            if [ "$ceiling" = 1 ]; then
                use_cert ec256
                default_env
                TLS_NGINX=nginx TLS_NGINX_CONF=nginx.conf
                RUN_GROUPS=$groups:P-256
                run_one "nginx-s$s-w$w-ec256-tls$ver-default" "$s" ec256 "$ver" default "ceiling"
            fi
        done
    done
    ;;
esac

# ---- summary: one row per run, the speed-up over the stock server on the same cores ----
{
    echo "# New full TLS handshakes per second, server and clients on separate cores of one host"
    echo
    sed -n '1,/^settings/{s/^/    /;p}' "$LOG" | grep -v '^    unpacked'
    echo
    echo "| server | server cores | client cores | cert | TLS | provider | gpursa policy | handshakes/s | server CPU (cores) | client CPU (cores) | server µs/hs | client µs/hs | gpursa ops gpu/host/cpu | mean batch | ops/request | speed-up |"
    echo "| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"
    awk -F, 'NR > 1 {
        key = $1 "/" $2 "/" $4 "/" $5 "/" $6
        if ($7 == "default" && $8 == "") base[key] = $12
        ck = $1 "/" $2 "/" $6
        if ($8 == "ceiling") { sp = "ceiling"; }
        else sp = ($7 != "default" && base[key] > 0) ? sprintf("%.2fx", $12 / base[key]) : ""
        ops = ($18 == "") ? "-" : $18 "/" $19 "/" $20
        srv = $1 ($1 == "nginx" ? " (" $4 " workers)" : " (" $4 " threads)")
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
            srv, $2, $3, $5, $6, $7, $8, $12, $13, $14, $15, $16, ops, ($22 == "" ? "-" : $22),
            ($24 == "" ? "-" : $24), sp
    }' "$csv"
    echo
    awk -F, 'NR > 1 && $25 ~ /^(PASS|FAIL)/ {
        printf "MPS outage, %s workers, %s, TLS %s: %s\n", $4, $5, $6, $25 }' "$csv"
    echo
    echo "Speed-up: handshakes/s over the same server without gpursa, same cores, same clients."
    echo "ceiling: the stock server with an ECDSA P-256 certificate (a nearly free signature):"
    echo "the most any RSA offload could give on these cores with this server and OpenSSL."
    echo "ops/request: gpursa's private-key operations per request answered over the whole run"
    echo "(1.000: every request was a new full handshake, one signature each)."
    echo "CPU in cores: CPU seconds of the server's processes (gpursa's threads included) and of"
    echo "the h2load processes, over the measured seconds."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
