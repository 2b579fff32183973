#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build Intel's asynch_mode_nginx (nginx 1.26.2 with OpenSSL's async mode: `ssl_asynch on`)
# into PREFIX, for gpursa's nginx route (conf/nginx-async.conf), the tests in tests/tls and
# bench/tls-handshake.sh.
#
# usage: bench/build-async-nginx.sh [-s SOURCE] [-j JOBS] PREFIX
#   SOURCE  a tarball (git archive of github.com/intel/asynch_mode_nginx) or an unpacked
#           source tree. Default: $GPURSA_NGINX_ASYNC_SRC, else
#           asynch_mode_nginx-c37d7ef.tar.gz in shared/third_party/ beside the checkout
#           (../shared/third_party/ relative to it) or inside it.
#           A tarball must have the sha256 below (commit c37d7ef11d34, 2024-11-08, the
#           version gpursa is tested with); GPURSA_NGINX_ASYNC_SHA256=HASH accepts another
#           one, =any skips the check. A source tree is built as it is.
#   PREFIX  where nginx is installed (PREFIX/sbin/nginx). A PREFIX already built from the
#           same source is kept as it is, so the tests build it once per build tree; a lock
#           (PREFIX.lock) lets tests running in parallel wait for one build.
#
# Needs a C compiler, make, libssl-dev, libpcre2-dev and zlib1g-dev (tests/install-deps.sh).
# Exit status: 0 built (or already there), 77 the source is not there (tests skip), 1 error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
known_sha256=79cce90d7243a04585b323e50cc343ec0cc14811ef649588c286e708a84b6fcd
tarball_name=asynch_mode_nginx-c37d7ef.tar.gz
src=${GPURSA_NGINX_ASYNC_SRC:-}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

usage() { echo "usage: $0 [-s SOURCE] [-j JOBS] PREFIX" >&2; exit 2; }
while getopts s:j: opt; do
    case $opt in
    s) src=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || usage
prefix=$1

if [ -z "$src" ]; then
    for cand in "$top/../shared/third_party/$tarball_name" "$top/shared/third_party/$tarball_name"; do
        if [ -e "$cand" ]; then src=$cand; break; fi
    done
    if [ -z "$src" ]; then
        echo "build-async-nginx.sh: no asynch_mode_nginx source: $tarball_name is not in" \
            "$top/../shared/third_party/ or $top/shared/third_party/ and GPURSA_NGINX_ASYNC_SRC" \
            "is not set (get it: git clone https://github.com/intel/asynch_mode_nginx &&" \
            "git -C asynch_mode_nginx archive --prefix=asynch_mode_nginx-c37d7ef/ -o $tarball_name c37d7ef11d34)" >&2
        exit 77
    fi
fi
if [ ! -e "$src" ]; then
    echo "build-async-nginx.sh: $src: no such file or folder" >&2
    exit 77
fi
src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")

# What the build came from: the tarball's sha256, or the tree's path. A PREFIX with the
# same stamp is up to date.
if [ -d "$src" ]; then
    [ -x "$src/configure" ] && [ -f "$src/src/event/ngx_event_openssl.c" ] ||
        { echo "build-async-nginx.sh: $src is not an nginx source tree" >&2; exit 1; }
    grep -q asynch "$src/src/event/ngx_event_openssl.c" ||
        { echo "build-async-nginx.sh: $src is nginx without the async mode (not asynch_mode_nginx)" >&2; exit 1; }
    stamp="tree $src"
else
    sum=$(sha256sum "$src" | cut -d' ' -f1)
    want=${GPURSA_NGINX_ASYNC_SHA256:-$known_sha256}
    if [ "$want" != any ] && [ "$sum" != "$want" ]; then
        echo "build-async-nginx.sh: $src has sha256 $sum, expected $want" \
            "(GPURSA_NGINX_ASYNC_SHA256=any to build it anyway)" >&2
        exit 1
    fi
    stamp="tarball $sum"
fi

mkdir -p "$(dirname "$prefix")"
prefix=$(cd "$(dirname "$prefix")" && pwd)/$(basename "$prefix")
exec 9>"$prefix.lock"
flock 9
if [ -x "$prefix/sbin/nginx" ] && [ "$(cat "$prefix/.gpursa-build" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi

work=$prefix.build
rm -rf "$work" "$prefix"
mkdir -p "$work"
if [ -d "$src" ]; then
    # out of the user's tree: nginx's configure writes into its source folder
    cp -R "$src/." "$work/src"
else
    mkdir "$work/src"
    tar -xzf "$src" -C "$work/src" --strip-components=1
fi
echo "build-async-nginx.sh: building asynch_mode_nginx from $src into $prefix" >&2
cd "$work/src"
# The modules gpursa's configuration and the benchmark use; the mail and stream modules,
# and the QAT modules of the source, stay out.
if ! ./configure --prefix="$prefix" --with-http_ssl_module --with-http_v2_module \
        --with-http_stub_status_module >"$work/configure.log" 2>&1; then
    tail -n 20 "$work/configure.log" >&2
    echo "build-async-nginx.sh: configure failed (libpcre2-dev, zlib1g-dev, libssl-dev installed?)" >&2
    exit 1
fi
if ! make -j"$jobs" >"$work/make.log" 2>&1 || ! make install >>"$work/make.log" 2>&1; then
    tail -n 30 "$work/make.log" >&2
    echo "build-async-nginx.sh: build failed ($work/make.log)" >&2
    exit 1
fi
"$prefix/sbin/nginx" -V >"$prefix/nginx-V.txt" 2>&1
echo "$stamp" >"$prefix/.gpursa-build"
cd /
rm -rf "$work"
echo "build-async-nginx.sh: $prefix/sbin/nginx built" >&2
