# SPDX-License-Identifier: Apache-2.0
# tests/tls/servers.sh: sourced (bash) by the server tests in this folder (and by
# bench/tls-handshake.sh); it sources tests/lib.sh.
#
# Starts HAProxy or nginx from the templates in conf/ on a free loopback port with a fresh
# RSA certificate, drives real clients at it (openssl s_client, curl, h2load, and
# tls-abuse.py for misbehaving ones), measures the server's fds and memory, stops it and
# reads gpursa's statistics line (GPURSA_STATS=1) from its stderr.
#
# Environment:
#   TLS_WITH_GPURSA  1 (default): the servers use gpursa. 0: stock servers with OpenSSL's
#                    default provider (tells a harness problem from a gpursa one).
#   GPURSA_BACKEND   gpursa's backend; the tests default to "host" (the batched kernel
#                    arithmetic on CPU threads), the path a machine without a GPU has
#                    that still goes through the queue and async jobs.
#   TLS_KEEP=1       keep the work folder (configs, certificate, server stderr).
#   TLS_NGINX_ASYNC  the async-mode nginx (asynch_mode_nginx) of the nginx-async-* tests;
#                    default: built once per build tree by bench/build-async-nginx.sh into
#                    GPURSA_NGINX_ASYNC_PREFIX (default BUILDDIR/tests/tls/nginx-async)
#                    from GPURSA_NGINX_ASYNC_SRC or shared/third_party/ beside the checkout;
#                    without a source those tests skip.
#   TLS_LEAK_CHECK=0 no memory leak check (the sanitizer trees: LeakSanitizer checks there,
#                    and a malloc counter cannot be preloaded beside a sanitizer runtime).

set -u
PATH=$PATH:/usr/sbin:/sbin
srcdir=${srcdir:-$(dirname "$0")}
. "$srcdir/../lib.sh"
TLS_WITH_GPURSA=${TLS_WITH_GPURSA:-1}
TLS_BITS=${TLS_BITS:-2048}
TLS_SERVER=""   # haproxy | nginx
TLS_WORK=""     # the test's folder: certificate, rendered config, server stderr
TLS_PID=""      # HAProxy's process, nginx's master
TLS_PORT=""      # TLS 1.2 and 1.3
TLS_PORT12=""    # TLS 1.2 only
TLS_STATUS=""   # the server's exit status after tls_stop
TLS_LOAD_PID="" # a background client loop (tls_load_start)
TLS_NGINX=nginx             # the nginx program (tls_setup_nginx_async: asynch_mode_nginx)
TLS_NGINX_WRAPPER=""        # what runs it: TLS_SERVER_WRAPPER for the async nginx only (the
                            # sanitizer trees' nginx on PATH already preloads its runtime)
TLS_NGINX_CONF=nginx.conf   # its template in conf/
TLS_KILLED=""   # server processes a test killed itself (their deaths are no crash)
TLS_HEAP=0      # 1: tls_start preloads heapcount.so into the server (tls_heap_kb reads it)
TLS_HEAPCOUNT=${TLS_HEAPCOUNT:-${GPURSA_TOP_BUILDDIR:-$srcdir/../..}/tests/tls/.libs/heapcount.so}

tls_note() { echo "# $*"; }
# tls_fail MESSAGE: fail, after the last lines of the server's stderr.
tls_fail() {
    if [ -n "$TLS_WORK" ] && [ -s "$TLS_WORK/server.err" ]; then
        echo "--- last lines of $TLS_SERVER's stderr:"
        tail -n 30 "$TLS_WORK/server.err"
    fi
    fail "$@"
}

# tls_setup SERVER: skip unless SERVER and the clients are installed; make the folder
# and the certificate.
tls_setup() {
    local bin
    TLS_SERVER=$1
    if [ "$TLS_SERVER" = nginx ]; then
        command -v "$TLS_NGINX" >/dev/null ||
            skip "$TLS_NGINX is not installed (Debian: apt-get install nginx)"
    else
        command -v "$TLS_SERVER" >/dev/null ||
            skip "$TLS_SERVER is not installed (Debian: apt-get install $TLS_SERVER)"
    fi
    for bin in "$OPENSSL" curl h2load python3; do
        command -v "$bin" >/dev/null ||
            skip "client $bin is not installed (tests/install-deps.sh installs it)"
    done
    if [ "$TLS_WITH_GPURSA" = 1 ]; then
        [ -f "${OPENSSL_MODULES:-}/gpursa.so" ] ||
            tls_fail "gpursa.so not found in OPENSSL_MODULES=${OPENSSL_MODULES:-}"
        export GPURSA_STATS=1
        export GPURSA_BACKEND=${GPURSA_BACKEND:-host}
        tls_note "$TLS_SERVER with gpursa (backend $GPURSA_BACKEND), RSA-$TLS_BITS"
    else
        tls_note "$TLS_SERVER with OpenSSL's default provider only, RSA-$TLS_BITS"
    fi
    make_tmp
    TLS_WORK=$TMP
    chmod 755 "$TLS_WORK"   # nginx workers drop root privileges
    trap tls_cleanup EXIT
    tls_make_cert "$TLS_BITS"
}

# tls_setup_nginx_async: tls_setup nginx with asynch_mode_nginx and conf/nginx-async.conf;
# builds it first (once per build tree) and skips when its source is not there.
tls_setup_nginx_async() {
    local prefix out rc=0
    if [ -n "${TLS_NGINX_ASYNC:-}" ]; then
        TLS_NGINX=$TLS_NGINX_ASYNC
    else
        prefix=${GPURSA_NGINX_ASYNC_PREFIX:-${GPURSA_TOP_BUILDDIR:-$(pwd)/../..}/tests/tls/nginx-async}
        out=$("$GPURSA_TOP_SRCDIR/bench/build-async-nginx.sh" "$prefix" 2>&1) || rc=$?
        [ "$rc" = 77 ] && skip "$out"
        [ "$rc" = 0 ] || tls_fail "cannot build asynch_mode_nginx: $out"
        TLS_NGINX=$prefix/sbin/nginx
    fi
    TLS_NGINX_CONF=nginx-async.conf
    TLS_NGINX_WRAPPER=${TLS_SERVER_WRAPPER:-}
    # as conf/nginx-async.conf says to start it (gpursa reads it in the master)
    export GPURSA_MIN_GPU_BATCH=${GPURSA_MIN_GPU_BATCH:-1}
    "$TLS_NGINX" -V 2>&1 | grep -q 'nginx version' || skip "$TLS_NGINX does not run"
    tls_setup nginx
    tls_note "nginx: $TLS_NGINX ($("$TLS_NGINX" -v 2>&1 | sed 's/.*: //')), conf/$TLS_NGINX_CONF"
}

tls_cleanup() {
    tls_load_stop
    [ -z "${TLS_CLIENTS_PID:-}" ] || { kill "$TLS_CLIENTS_PID"; wait "$TLS_CLIENTS_PID"; } 2>/dev/null
    if [ -n "$TLS_PID" ] && kill -0 "$TLS_PID" 2>/dev/null; then
        tls_kill_server
    fi
    KEEP_TMP=${TLS_KEEP:-0}
    cleanup
}

# A self-signed certificate for localhost and 127.0.0.1, made with the default provider.
tls_make_cert() {
    (cd "$TLS_WORK" &&
        OPENSSL_CONF=/dev/null "$OPENSSL" req -x509 -newkey "rsa:$1" -nodes -days 2 \
            -keyout key.pem -out cert.pem -subj /CN=localhost \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null &&
        cat cert.pem key.pem >cert+key.pem) || tls_fail "cannot make an RSA-$1 certificate"
}

# tls_render TEMPLATE OUTPUT: fill conf/TEMPLATE's @NAME@ placeholders; without gpursa,
# drop the lines marked gpursa-only; then apply TLS_RENDER_SED (a sed expression, if set).
tls_render() {
    local drop='/# gpursa-only/d'
    [ "$TLS_WITH_GPURSA" = 1 ] && drop=''
    sed -e "$drop" -e "${TLS_RENDER_SED:-}" \
        -e "s|@PORT@|$TLS_PORT|g" -e "s|@PORT12@|$TLS_PORT12|g" -e "s|@PREFIX@|$TLS_WORK|g" \
        -e "s|@CERT@|$TLS_WORK/cert.pem|g" -e "s|@KEY@|$TLS_WORK/key.pem|g" \
        -e "s|@CERTKEY@|$TLS_WORK/cert+key.pem|g" \
        -e "s|@NBTHREAD@|${TLS_NBTHREAD:-4}|g" -e "s|@WORKERS@|${TLS_WORKERS:-2}|g" \
        -e "s|@MAXCONN@|${TLS_MAXCONN:-2000}|g" \
        -e "s|@HARD_STOP_AFTER@|${TLS_HARD_STOP_AFTER:-10s}|g" \
        -e "s|@MAXPIPES@|$((${TLS_MAXCONN:-2000} / 2))|g" \
        "$GPURSA_TOP_SRCDIR/conf/$1" >"$2" || tls_fail "cannot render conf/$1"
    if grep -v '^[[:space:]]*#' "$2" | grep '@[A-Z_]*@'; then
        tls_fail "conf/$1: placeholder left unfilled"
    fi
}

tls_port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# tls_start: start the server on a random free port (a few tries: another program may
# take the port between the check and the bind) and wait until it listens.
tls_start() {
    local try i preload=()
    if [ "$TLS_HEAP" = 1 ]; then
        [ -f "$TLS_HEAPCOUNT" ] || tls_fail "no $TLS_HEAPCOUNT (make check builds it)"
        mkdir -p "$TLS_WORK/heap"
        rm -f "$TLS_WORK"/heap/heap.*
        preload=(env "LD_PRELOAD=$TLS_HEAPCOUNT${LD_PRELOAD:+ $LD_PRELOAD}"
            "HEAPCOUNT_DIR=$TLS_WORK/heap")
    fi
    for try in 1 2 3 4 5; do
        TLS_PORT=$((20000 + RANDOM % 40000))
        TLS_PORT12=$((TLS_PORT + 1))
        tls_port_open "$TLS_PORT" || tls_port_open "$TLS_PORT12" && continue
        : >"$TLS_WORK/server.err"
        case $TLS_SERVER in
        haproxy)
            tls_render haproxy.cfg "$TLS_WORK/haproxy.cfg"
            "${preload[@]}" haproxy -db -f "$TLS_WORK/haproxy.cfg" >>"$TLS_WORK/server.err" 2>&1 &
            ;;
        nginx)
            tls_render "$TLS_NGINX_CONF" "$TLS_WORK/nginx.conf"
            if [ "$TLS_WITH_GPURSA" = 1 ]; then
                OPENSSL_CONF=$GPURSA_TOP_SRCDIR/conf/openssl.cnf "${preload[@]}" \
                    ${TLS_NGINX_WRAPPER:-} "$TLS_NGINX" -p "$TLS_WORK" -c "$TLS_WORK/nginx.conf" \
                    -e stderr >>"$TLS_WORK/server.err" 2>&1 &
            else
                "${preload[@]}" ${TLS_NGINX_WRAPPER:-} "$TLS_NGINX" -p "$TLS_WORK" -c "$TLS_WORK/nginx.conf" \
                    -e stderr >>"$TLS_WORK/server.err" 2>&1 &
            fi
            ;;
        esac
        TLS_PID=$!
        for i in $(seq 100); do
            kill -0 "$TLS_PID" 2>/dev/null || break
            if tls_port_open "$TLS_PORT" && tls_port_open "$TLS_PORT12"; then
                tls_note "$TLS_SERVER pid $TLS_PID listening on 127.0.0.1:$TLS_PORT and :$TLS_PORT12"
                return 0
            fi
            sleep 0.1
        done
        tls_kill_server
        TLS_PID=""
        grep -q -i -e 'address already in use' -e 'cannot bind' "$TLS_WORK/server.err" || break
    done
    tls_fail "$TLS_SERVER did not start"
}

# tls_children PID: its child processes, from /proc (procps may be missing where the
# benchmark runs).
tls_children() {
    local parent=$1 f line fields
    for f in /proc/[0-9]*/stat; do
        read -r line 2>/dev/null <"$f" || continue
        # after "pid (comm) " come the state and the parent's pid
        read -r -a fields <<<"${line##*) }"
        if [ "${fields[1]:-}" = "$parent" ]; then
            f=${f#/proc/}
            echo "${f%/stat}"
        fi
    done
    return 0
}

# The server's processes: HAProxy's one, or nginx's master and workers.
tls_pids() {
    echo "$TLS_PID"
    [ "$TLS_SERVER" = nginx ] && tls_children "$TLS_PID"
    return 0
}

# SIGKILL to the server's processes, by their pids (nginx's workers outlive a killed
# master).
tls_kill_server() {
    local p
    for p in $(tls_pids); do
        kill -KILL "$p" 2>/dev/null
    done
    wait "$TLS_PID" 2>/dev/null
}

tls_alive() {
    kill -0 "$TLS_PID" 2>/dev/null || tls_fail "$TLS_SERVER (pid $TLS_PID) died"
}

tls_fd_count() {
    local p n=0
    for p in $(tls_pids); do
        n=$((n + $(ls "/proc/$p/fd" | wc -l)))
    done
    echo "$n"
}

# tls_heap_kb: the KiB the server's processes hold on the malloc heap (allocated and not
# yet freed), as heapcount.so counts them (tls_start with TLS_HEAP=1); 0 without it.
tls_heap_kb() {
    local p n=0 bytes
    [ "$TLS_HEAP" = 1 ] || { echo 0; return 0; }
    for p in $(tls_pids); do
        [ -f "$TLS_WORK/heap/heap.$p" ] || tls_fail "no heap count for $TLS_SERVER process $p"
        bytes=$(od -An -t d8 -N 8 "$TLS_WORK/heap/heap.$p" | tr -d ' ')
        n=$((n + bytes))
    done
    echo $((n / 1024))
}

# tls_stop SIGNAL [SECONDS]: signal the server, wait for it to exit (at most SECONDS,
# default 20), set TLS_STATUS, fail on a timeout or on crash traces in its stderr.
tls_stop() {
    kill "-$1" "$TLS_PID" || tls_fail "cannot signal $TLS_SERVER"
    tls_wait_exit "SIG$1" "${2:-20}"
}

# tls_wait_exit WHAT SECONDS: tls_stop's wait after WHAT (a signal, nginx -s quit).
tls_wait_exit() {
    local i limit=$(($2 * 10))
    for i in $(seq "$limit"); do
        kill -0 "$TLS_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$TLS_PID" 2>/dev/null &&
        tls_fail "$TLS_SERVER did not exit within $2 s of $1"
    wait "$TLS_PID"
    TLS_STATUS=$?
    TLS_PID=""
    tls_check_crash
    tls_note "$TLS_SERVER exited with status $TLS_STATUS after $1"
}

# tls_check_crash: fail on crash traces in the server's stderr (but the deaths of the
# processes in TLS_KILLED, which the test killed itself).
tls_check_crash() {
    local p mine='^$'
    for p in $TLS_KILLED; do
        mine="$mine|process $p exited on signal 9\$"
    done
    if grep -n -E 'exited on signal|core dumped|Segmentation|FATAL|BUG|Abort|Assertion' \
        "$TLS_WORK/server.err" | grep -v -E "$mine"; then
        tls_fail "$TLS_SERVER reported a crash"
    fi
}

# tls_stats: gpursa's operations over every stats line in the server's stderr (one per
# process that loaded gpursa), as "lines gpu host cpu".
tls_stats() {
    stats_lines "$TLS_WORK/server.err" |
        awk '{ g += $1; h += $2; c += $3; n++ } END { print n + 0, g + 0, h + 0, c + 0 }'
}

# tls_expect_ops MIN [MAX]: gpursa's stats lines count between MIN and MAX private-key
# operations (after tls_stop). Every full handshake signs exactly once with the server's
# key, so counting the handshakes proves they went through gpursa.
tls_expect_ops() {
    local lines gpu host cpu total
    if [ "$TLS_WITH_GPURSA" != 1 ]; then
        tls_note "no gpursa: stats not checked"
        return 0
    fi
    read -r lines gpu host cpu <<EOF
$(tls_stats)
EOF
    total=$((gpu + host + cpu))
    grep '^gpursa: ops' "$TLS_WORK/server.err" | sed 's/^/# /'
    [ "$lines" -ge 1 ] || tls_fail "no gpursa stats line in $TLS_SERVER's stderr"
    [ "$total" -ge "$1" ] ||
        tls_fail "gpursa did $total private-key operations, expected at least $1"
    [ -z "${2:-}" ] || [ "$total" -le "$2" ] ||
        tls_fail "gpursa did $total private-key operations, expected at most $2"
    tls_note "gpursa: $total operations (gpu $gpu, host $host, cpu $cpu) in $lines process(es)"
}

# tls_expect_ops_unless_abandoned MIN: tls_expect_ops, except that HAProxy may have no
# stats line after clients left (or a hard stop closed connections) mid-handshake: it
# frees such connections without resuming their paused ASYNC jobs (haproxy issue 3453),
# and the jobs' stacks keep gpursa referenced, so it does not unload before the exit.
tls_expect_ops_unless_abandoned() {
    if [ "$TLS_SERVER" = haproxy ] && [ "$TLS_WITH_GPURSA" = 1 ] &&
        ! grep -q '^gpursa: ops' "$TLS_WORK/server.err"; then
        tls_note "no gpursa stats line: HAProxy abandoned paused ASYNC jobs holding gpursa"
        return 0
    fi
    tls_expect_ops "$@"
}

# ---- clients: each makes full handshakes (no session reuse) and checks the answer ----

TLS_REQUEST='GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'

# tls_s_client VERSION (1.2 | 1.3): one handshake, certificate verified, one request.
tls_s_client() {
    local out flag=-tls1_2
    [ "$1" = 1.3 ] && flag=-tls1_3
    out=$(printf "$TLS_REQUEST" | OPENSSL_CONF=/dev/null timeout 20 "$OPENSSL" s_client \
        -connect "127.0.0.1:$TLS_PORT" -servername localhost "$flag" -no_ticket \
        -CAfile "$TLS_WORK/cert.pem" -verify_hostname localhost -verify_return_error \
        -ign_eof 2>&1) || tls_fail "s_client TLSv$1: $out"
    case $out in *"Protocol  : TLSv$1"*) ;; *) tls_fail "s_client: not TLSv$1: $out" ;; esac
    case $out in *"Verify return code: 0 (ok)"*) ;; *) tls_fail "s_client: verify: $out" ;; esac
    case $out in *"gpursa ok"*) ;; *) tls_fail "s_client: no answer: $out" ;; esac
    case $out in *"Server public key is $TLS_BITS bit"*) ;;
    *) tls_fail "s_client: not the RSA-$TLS_BITS key: $out" ;; esac
}

# tls_curl VERSION: one curl process, so one new connection and one full handshake.
tls_curl() {
    local out tls
    tls="--tlsv1.2 --tls-max 1.2"
    [ "$1" = 1.3 ] && tls="--tlsv1.3"
    # shellcheck disable=SC2086
    out=$(timeout 20 curl -sS -v $tls --cacert "$TLS_WORK/cert.pem" \
        --resolve "localhost:$TLS_PORT:127.0.0.1" "https://localhost:$TLS_PORT/" 2>&1) ||
        tls_fail "curl TLSv$1: $out"
    case $out in *"SSL connection using TLSv$1"*) ;; *) tls_fail "curl: not TLSv$1: $out" ;; esac
    case $out in *"gpursa ok"*) ;; *) tls_fail "curl: no answer: $out" ;; esac
}

# tls_h2load VERSION REQUESTS CLIENTS [extra h2load options]: HTTP/2 load, one connection
# (one full handshake) per client; fails unless every request succeeded.
tls_h2load() {
    local ver=$1 n=$2 c=$3 out ok port=$TLS_PORT
    shift 3
    # h2load cannot cap the protocol version (it sets TLS 1.2..1.3 itself, over any
    # openssl.cnf); the servers have a TLS 1.2-only listener for it.
    [ "$ver" = 1.2 ] && port=$TLS_PORT12
    out=$(timeout 120 h2load -n "$n" -c "$c" "$@" "https://127.0.0.1:$port/" 2>&1) ||
        tls_fail "h2load TLSv$ver -n $n -c $c: $out"
    case $out in *"TLS Protocol: TLSv$ver"*) ;; *) tls_fail "h2load: not TLSv$ver: $out" ;; esac
    ok=$(echo "$out" | sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p')
    [ "$ok" = "$n" ] || tls_fail "h2load TLSv$ver: $ok of $n requests succeeded: $out"
}

# tls_handshakes N: N full handshakes, TLS 1.2 and 1.3 alternating in batches of 50
# concurrent connections (one request each).
tls_handshakes() {
    local left=$1 k ver=1.3
    while [ "$left" -gt 0 ]; do
        k=$((left < 50 ? left : 50))
        tls_h2load "$ver" "$k" "$k"
        left=$((left - k))
        [ "$ver" = 1.3 ] && ver=1.2 || ver=1.3
    done
}

# tls_abuse ROUNDS: misbehaving clients (tls-abuse.py); the server must stay up.
tls_abuse() {
    local out
    out=$(timeout 120 python3 "$srcdir/tls-abuse.py" "$TLS_PORT" "$1" 8 2>&1) ||
        tls_fail "misbehaving clients: $out"
    tls_note "$out"
    tls_alive
}

# tls_load_start / tls_load_stop: new handshakes from CLIENTS concurrent connections
# in a loop in the background, until stopped (the server going away ends it too).
tls_load_start() {
    local c=$1
    (
        while :; do
            h2load -n "$c" -c "$c" "https://127.0.0.1:$TLS_PORT/" >/dev/null 2>&1 || exit 0
        done
    ) &
    TLS_LOAD_PID=$!
}

tls_load_stop() {
    if [ -n "$TLS_LOAD_PID" ]; then
        kill $(tls_children "$TLS_LOAD_PID") 2>/dev/null
        kill "$TLS_LOAD_PID" 2>/dev/null
        wait "$TLS_LOAD_PID" 2>/dev/null
        TLS_LOAD_PID=""
    fi
    return 0
}

# ---- live metrics (metrics_file) ----

# tls_metrics_check FILE: FILE is whole Prometheus text (each line a HELP, TYPE or sample
# line, "# EOF" last; tests/provider/test_metrics.c parses it strictly); prints the sum of
# its gpursa_operations_total samples.
tls_metrics_check() {
    awk '
        /^# EOF$/ { eof = NR; next }
        eof { bad = "text after # EOF"; exit }
        /^# (HELP|TYPE) gpursa_[a-zA-Z0-9_]+ / { next }
        /^gpursa_[a-zA-Z0-9_]+(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? ([0-9]+(\.[0-9]+)?|\+Inf)$/ {
            if ($1 ~ /^gpursa_operations_total/) ops += $2
            next
        }
        { bad = "line " NR ": " $0; exit }
        END {
            if (bad == "" && !eof) bad = "no # EOF line"
            if (bad != "") { print "bad " bad; exit 1 }
            print ops + 0
        }' "$1"
}

# tls_metrics_sum DIR: copies each *.prom file of DIR at once (each is replaced whole, never
# rewritten), checks the copy with tls_metrics_check and prints "FILES OPERATIONS".
tls_metrics_sum() {
    local f files=0 total=0 ops
    for f in "$1"/*.prom; do
        [ -e "$f" ] || continue
        cp "$f" "$1/snapshot" 2>/dev/null || continue    # gone meanwhile: its process exited
        ops=$(tls_metrics_check "$1/snapshot") || tls_fail "metrics file $f: $ops"
        files=$((files + 1))
        total=$((total + ops))
    done
    echo "$files $total"
}

# tls_test_metrics: gpursa writes its metrics while the server runs. HAProxy (one process)
# writes gpursa.prom; nginx's master and each worker write their own gpursa-PID.prom, a
# worker's from its own thread started at the fork. The files are there once the server
# started, valid, and their operation counters rise while clients make handshakes. After a
# graceful stop HAProxy's last write (at gpursa's unload) equals gpursa's stats line, and
# nginx's processes have removed their files.
tls_test_metrics() {
    local dir=$TLS_WORK/metrics files=1 want ops last rises=0 i lines gpu host cpu
    mkdir "$dir" && chmod 777 "$dir" || tls_fail "mkdir $dir"    # nginx workers: nobody
    export GPURSA_METRICS_INTERVAL_MS=200 GPURSA_METRICS_FILE=$dir/gpursa.prom
    if [ "$TLS_SERVER" = nginx ]; then
        GPURSA_METRICS_FILE=$dir/gpursa-%p.prom
        files=$((1 + ${TLS_WORKERS:-2}))
    fi
    tls_start
    for i in $(seq 100); do
        read -r want last <<<"$(tls_metrics_sum "$dir")"
        [ "$want" = "$files" ] && break
        sleep 0.1
    done
    [ "$want" = "$files" ] || tls_fail "$want metrics files once $TLS_SERVER started, not $files"
    tls_note "$files metrics file(s): $(cd "$dir" && echo *.prom)"
    tls_load_start 20
    for i in $(seq 300); do
        sleep 0.1
        read -r want ops <<<"$(tls_metrics_sum "$dir")"
        [ "$want" = "$files" ] || tls_fail "$want metrics files under load, not $files"
        [ "$ops" -ge "$last" ] || tls_fail "operations went down: $last, then $ops"
        if [ "$ops" -gt "$last" ]; then
            rises=$((rises + 1))
            tls_note "metrics files: $ops operations"
        fi
        last=$ops
        [ "$rises" -ge 5 ] && break
    done
    tls_load_stop
    tls_alive
    [ "$rises" -ge 5 ] || tls_fail "operations in the metrics files rose $rises times in 30 s"
    tls_note "the last snapshot under load, its non-zero samples but histogram buckets:"
    grep -v -e '^#' -e '_bucket{' "$dir/snapshot" | awk '$2 != 0' | sed 's/^/#   /'
    tls_stop "$(tls_soft_signal)"
    [ "$TLS_STATUS" = 0 ] || tls_fail "$TLS_SERVER exit status $TLS_STATUS"
    read -r lines gpu host cpu <<<"$(tls_stats)"
    if [ "$TLS_SERVER" = nginx ]; then
        [ "$lines" = "$files" ] || tls_fail "$lines stats lines from $files processes"
        read -r want ops <<<"$(tls_metrics_sum "$dir")"
        [ "$want" = 0 ] || tls_fail "$want metrics files left after the stop"
        [ "$last" -le $((gpu + host + cpu)) ] ||
            tls_fail "metrics files counted $last operations, the stats lines $((gpu + host + cpu))"
        tls_note "each process removed its metrics file at exit"
    elif [ "$lines" -ge 1 ]; then
        read -r want ops <<<"$(tls_metrics_sum "$dir")"
        [ "$ops" = $((gpu + host + cpu)) ] ||
            tls_fail "last metrics write: $ops operations, stats line $((gpu + host + cpu))"
        tls_note "last metrics write: $ops operations, as the stats line"
    else
        tls_note "no gpursa stats line: HAProxy abandoned paused ASYNC jobs holding gpursa"
    fi
    unset GPURSA_METRICS_FILE GPURSA_METRICS_INTERVAL_MS
}

# ---- the tests, the same for both servers ----

# The signal for a graceful stop: HAProxy's soft-stop, nginx's graceful shutdown.
tls_soft_signal() {
    [ "$TLS_SERVER" = haproxy ] && echo USR1 || echo QUIT
}

# Full handshakes from every client over TLS 1.2 and 1.3; each signs exactly once, so
# gpursa's count must equal the number of handshakes.
tls_test_clients() {
    local i curls=3
    tls_start
    tls_s_client 1.2
    tls_s_client 1.3
    for i in $(seq $curls); do
        tls_curl 1.2
        tls_curl 1.3
    done
    tls_h2load 1.2 200 10
    tls_h2load 1.3 200 10
    tls_alive
    tls_stop "$(tls_soft_signal)"
    [ "$TLS_STATUS" = 0 ] || tls_fail "$TLS_SERVER exit status $TLS_STATUS"
    tls_expect_ops $((2 + 2 * curls + 20)) $((2 + 2 * curls + 20))
}

# Wait until the server's fd count is at most $1 (connections the clients closed may
# still be closing on the server's side), for at most 5 s; print the count.
tls_settle_fds() {
    local i n
    for i in $(seq 50); do
        n=$(tls_fd_count)
        [ "$n" -le "$1" ] && break
        sleep 0.1
    done
    echo "$n"
}

# Leaks and misbehaving clients. After a warm-up of TLS_WARMUP (default 400) handshakes,
# 50 at a time (so thread pools, OpenSSL's per-thread ASYNC job pools, the servers'
# connection pools at that concurrency and gpursa's per-key and per-thread state exist;
# async nginx's workers each keep an ASYNC job with its 32 KiB stack per handshake they
# ever had in flight at once, a peak that random spreading over the workers reaches
# slowly, so its test and HAProxy's warm up longer, 1200):
# 1. Three windows of 300 normal full handshakes. Open fds must come back to the warm count
#    exactly after each (every connection and gpursa's eventfd per connection is closed by
#    then). Memory is what the server's processes hold on the malloc heap, counted by
#    heapcount.so (allocated and not freed; the resident size is no measure: it follows
#    the allocator's arenas, and grew by 440-530 KiB a window in nginx on a loaded machine
#    while the heap in use stayed the same to the byte). A leak grows the heap in every
#    window; pools reaching their peak grow it in steps that come less and less often. So
#    a leak is a growth of more than TLS_HEAP_SLACK_KB in each of the three windows. It
#    defaults to 16 KiB (a leak of 55 bytes a handshake) for nginx, whose heap in use
#    comes back to the same byte after each window. Where ASYNC jobs pause, OpenSSL's
#    per-thread job pools (a job with its 32 KiB stack per handshake in flight at the
#    peak) and HAProxy's object pools still grow towards their peak: HAProxy's default is
#    128 KiB (440 bytes a handshake; seen after a warm-up of 400: HAProxy +39, +86,
#    +40 KiB, stock HAProxy +139, +37, +2 KiB, then both within +-20 KiB), async nginx's
#    384 KiB (1.3 KiB a handshake; after its warm-up of 1200: +98, +32, +404 and 0, +132,
#    +296 KiB; once 1.9 MiB in one window, then flat). What a leaking handshake loses is
#    more: an SSL object with its buffers, ~6 KiB; a copy of the key, ~2 KiB; gpursa's
#    signature context (~700 bytes), which when left unfreed grew nginx by 204-206 KiB
#    and HAProxy by 255-478 KiB in each window.
# 2. Three windows of 128 misbehaving connections (tls-abuse.py: hang-ups before, during
#    and after the ClientHello, resets, garbage). The server must stay up and still do
#    handshakes, and the fds must come back to the warm count after each window. For nginx
#    a leak is, as above, a growth of more than the slack in each of the three windows:
#    async nginx's pools may take a step up in one window as they meet a new peak (1,650
#    KiB in one window of three, seen twice), which a single window would read as a leak,
#    while a leaking connection (an SSL object, ~6 KiB) grows every window by far more
#    than the slack. Not for HAProxy: when a client leaves while its handshake's ASYNC job
#    is paused in gpursa, HAProxy frees the SSL object without resuming the job, so
#    OpenSSL's job, its stack and what the stack holds stay allocated (haproxy issue 3453;
#    the same with QAT). Those jobs also keep gpursa referenced, so it may not unload at
#    exit and its stats line may be missing; nginx resumes its jobs and must print it.
# TLS_LEAK_CHECK=0 leaves out the memory checks (not the fd checks).
# tls_leak_window WHAT: the end of one window of tls_test_abuse_and_leaks (its locals
# fd0, heap0, min_growth): the fds must be back at fd0; notes the heap and its growth
# since the last window, keeps the least growth of a window in min_growth.
tls_leak_window() {
    fd=$(tls_settle_fds "$fd0")
    heap=$(tls_heap_kb)
    growth=$((heap - heap0))
    tls_note "after $1: $fd fds, $heap KiB on the heap ($growth KiB)"
    [ -n "$min_growth" ] && [ "$min_growth" -le "$growth" ] || min_growth=$growth
    heap0=$heap
    [ "$fd" -le "$fd0" ] || tls_fail "fd leak: $fd0 -> $fd open fds over $1"
}
tls_test_abuse_and_leaks() {
    local fd0 fd heap0 heap heap_warm win growth min_growth= slack min_ops=1300
    local default_slack=16
    [ "$TLS_SERVER" = haproxy ] && default_slack=128
    [ "$TLS_NGINX_CONF" = nginx-async.conf ] && default_slack=384
    slack=${TLS_HEAP_SLACK_KB:-$default_slack}
    TLS_HEAP=${TLS_LEAK_CHECK:-1}
    tls_start
    tls_abuse 2
    tls_s_client 1.3
    tls_curl 1.2
    tls_note "server survived misbehaving clients and still does handshakes"
    tls_handshakes "${TLS_WARMUP:-400}"
    fd0=$(tls_settle_fds 0)
    heap0=$(tls_heap_kb)
    heap_warm=$heap0
    tls_note "after warm-up: $fd0 fds, $heap0 KiB on the heap"
    for win in 1 2 3; do
        tls_handshakes 300
        tls_leak_window "300 more handshakes"
    done
    if [ "$min_growth" -gt "$slack" ]; then
        tls_fail "memory leak: the heap grew by $((heap - heap_warm)) KiB over 900 handshakes, at least $min_growth KiB in each 300 (limit $slack KiB a window)"
    fi
    heap_warm=$heap0
    min_growth=
    for win in 1 2 3; do
        tls_abuse 4
        tls_abuse 4
        tls_leak_window "128 misbehaving connections"
    done
    if [ "$TLS_SERVER" = nginx ] && [ "$min_growth" -gt "$slack" ]; then
        tls_fail "memory leak: the heap grew by $((heap - heap_warm)) KiB over 384 misbehaving connections, at least $min_growth KiB in each 128 (limit $slack KiB a window)"
    fi
    tls_s_client 1.2
    tls_curl 1.3
    tls_stop "$(tls_soft_signal)"
    [ "$TLS_STATUS" = 0 ] || tls_fail "$TLS_SERVER exit status $TLS_STATUS"
    tls_expect_ops_unless_abandoned "$min_ops"
}

# tls_test_shutdown SIGNAL STATUS [stall]: stop the server while 50 clients keep starting
# new handshakes; it must exit with STATUS and no crash report. gpursa holds each
# operation in its queue for up to GPURSA_MAX_WAIT_US, raised here to 50 ms, so
# operations are queued (async jobs paused, in HAProxy) when the signal arrives. With
# "stall", 20 more clients stop mid-handshake, so a graceful stop cannot finish on its own
# and HAProxy's hard-stop-after (1 s here) or nginx's worker_shutdown_timeout ends it with
# handshakes in flight. After a graceful stop that finished every handshake, gpursa's
# stats line must be there: it unloaded with the work it had. After a hard or fast stop
# it may be missing: HAProxy abandons paused jobs (tls_expect_ops_unless_abandoned), and
# nginx's workers exit on SIGTERM without freeing connections still in a handshake, whose
# keys keep gpursa referenced.
tls_test_shutdown() {
    local sig=$1 status=$2 stall_pid=""
    TLS_HARD_STOP_AFTER=1s GPURSA_MAX_WAIT_US=50000 tls_start
    tls_load_start 50
    if [ "${3:-}" = stall ]; then
        python3 "$srcdir/tls-abuse.py" "$TLS_PORT" stall 20 30 >/dev/null &
        stall_pid=$!
    fi
    sleep 1.5
    tls_alive
    tls_stop "$sig" 20
    tls_load_stop
    [ -z "$stall_pid" ] || { kill "$stall_pid"; wait "$stall_pid"; } 2>/dev/null
    [ "$TLS_STATUS" = "$status" ] ||
        tls_fail "$TLS_SERVER exit status $TLS_STATUS after SIG$sig, expected $status"
    if [ "$sig" = "$(tls_soft_signal)" ] && [ -z "$stall_pid" ]; then
        tls_expect_ops 1
    else
        tls_note "stats not required: a process that exits with handshakes still open keeps gpursa loaded to the end"
    fi
}

# ---- async-mode nginx (asynch_mode_nginx, conf/nginx-async.conf) ----

# tls_scaled N MIN: N thinned by GPURSA_TEST_SCALE (the sanitizer trees), at least MIN. The
# load of the async tests: under TSan the host backend's arithmetic is slow enough that
# their full load makes handshakes outlast nginx's handshake timeout (client_header_timeout).
tls_scaled() {
    local n=$(($1 / ${GPURSA_TEST_SCALE:-1}))
    echo $((n > $2 ? n : $2))
}

# tls_batches: over every stats line in the server's stderr, "batches items cpu": the
# batches gpursa formed, the operations they held (gpu + host), those on its CPU workers.
tls_batches() {
    stats_lines "$TLS_WORK/server.err" |
        awk '{ i += $1 + $2; c += $3; b += $4 } END { print b + 0, i + 0, c + 0 }'
}

# tls_expect_batches: (after tls_stop) every operation ran in one of gpursa's batches (none
# on its CPU workers: GPURSA_MIN_GPU_BATCH=1) and the batches held more than one operation
# on average: handshakes were paused in flight together, which only async mode gives.
tls_expect_batches() {
    local batches items cpu mean
    read -r batches items cpu <<<"$(tls_batches)"
    [ "$batches" -gt 0 ] || tls_fail "gpursa formed no batches"
    mean=$(awk -v i="$items" -v b="$batches" 'BEGIN { printf "%.2f", i / b }')
    tls_note "gpursa: $items operations in $batches batches (mean batch $mean), $cpu on CPU workers"
    [ "$cpu" = 0 ] || tls_fail "$cpu operations ran on gpursa's CPU workers, not in batches"
    [ "$items" -gt "$batches" ] ||
        tls_fail "mean batch $mean: no two handshakes were in flight together in a worker"
}

# tls_gpursa_threads PID...: the number of gpursa's threads (named gpursa-*) in them.
tls_gpursa_threads() {
    local p t n=0
    for p in "$@"; do
        for t in /proc/"$p"/task/*/comm; do
            case $(cat "$t" 2>/dev/null) in gpursa-*) n=$((n + 1)) ;; esac
        done
    done
    echo "$n"
}

# tls_nginx_signal reload|quit: `nginx -s` with the test's configuration (its pid file).
tls_nginx_signal() {
    local out
    out=$(OPENSSL_CONF=/dev/null ${TLS_NGINX_WRAPPER:-} "$TLS_NGINX" -p "$TLS_WORK" \
        -c "$TLS_WORK/nginx.conf" -s "$1" 2>&1) || tls_fail "nginx -s $1: $out"
}

# tls_clients_start THREADS / tls_clients_stop: well-behaved clients in a loop in the
# background (tls-abuse.py load: one full handshake and request per connection, each
# connection answered, closed by the server, reset or refused), until stopped; the stop
# fails the test when a connection hung or failed, and sets TLS_CLIENTS_OK,
# TLS_CLIENTS_CLOSED, TLS_CLIENTS_RESET, TLS_CLIENTS_REFUSED.
TLS_CLIENTS_PID=""
tls_clients_start() {
    python3 "$srcdir/tls-abuse.py" "$TLS_PORT" load "$1" "$TLS_WORK/cert.pem" \
        >"$TLS_WORK/clients.out" 2>&1 &
    TLS_CLIENTS_PID=$!
}

tls_clients_stop() {
    local rc=0 out
    kill -TERM "$TLS_CLIENTS_PID" 2>/dev/null
    wait "$TLS_CLIENTS_PID" || rc=$?
    TLS_CLIENTS_PID=""
    out=$(cat "$TLS_WORK/clients.out")
    [ "$rc" = 0 ] || tls_fail "clients: $out"
    tls_note "$out"
    TLS_CLIENTS_OK=$(echo "$out" | sed -n 's/.* ok=\([0-9]*\).*/\1/p')
    TLS_CLIENTS_CLOSED=$(echo "$out" | sed -n 's/.* closed=\([0-9]*\).*/\1/p')
    TLS_CLIENTS_RESET=$(echo "$out" | sed -n 's/.* reset=\([0-9]*\).*/\1/p')
    TLS_CLIENTS_REFUSED=$(echo "$out" | sed -n 's/.* refused=\([0-9]*\).*/\1/p')
}
