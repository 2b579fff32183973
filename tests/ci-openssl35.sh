#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build gpursa against OpenSSL 3.5 and run its whole make check there: the CPU build
# (--without-cuda) inside a Debian 13 (trixie) root made with debootstrap, whose
# libssl-dev and openssl are 3.5.x. The host's own OpenSSL (3.0 on Debian 12) is what
# the rest of tests/run-all.sh tests; this stage proves the same suites on 3.5.
#
# Needs root, debootstrap, chroot and mount; without them it says why and exits 77
# (skipped). The exit status is make check's (1 when the root cannot be made).
#
# GPURSA_OSSL35_ROOT    where the root goes (default: _build-openssl35 in the source
#                       tree). A root that finished installing is reused, so a second
#                       run only copies, builds and tests.
# GPURSA_DEBIAN_MIRROR  the Debian mirror (default: the one apt already uses, else
#                       http://deb.debian.org/debian).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
root=${GPURSA_OSSL35_ROOT:-$src/_build-openssl35}
suite=trixie

skip() {
    echo "ci-openssl35.sh: skipped: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not installed (tests/install-deps.sh installs it)"
command -v chroot >/dev/null 2>&1 || skip "chroot not found"

# The first Debian archive (not the security one) among apt's sources, one-line or deb822.
apt_mirror() {
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null |
        sed -n -e 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\2/p' \
               -e 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' |
        grep -E '/debian/?$' | head -n 1
}
mirror=${GPURSA_DEBIAN_MIRROR:-$(apt_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}

mounted=""
cleanup() {
    for m in $mounted; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
            echo "ci-openssl35.sh: could not unmount $m"
    done
    mounted=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_root CMD: run CMD in the root with a clean environment (nothing of the host's
# OPENSSL_*, GPURSA_* or compiler settings leaks in).
in_root() {
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive chroot "$root" /bin/sh -ec "$1"
}

start=$(date +%s)
# a run killed before its trap ran may have left /proc mounted
mountpoint -q "$root/proc" 2>/dev/null && umount "$root/proc"
if [ ! -f "$root/.gpursa-deps-ready" ]; then
    if mountpoint -q "$root/proc" 2>/dev/null; then
        echo "ci-openssl35.sh: $root/proc is still mounted"
        exit 1
    fi
    rm -rf "$root"
    echo "ci-openssl35.sh: debootstrap $suite from $mirror into $root"
    if ! debootstrap --variant=minbase --include=libssl-dev,openssl "$suite" "$root" "$mirror" \
            >"$root.debootstrap.log" 2>&1; then
        tail -n 20 "$root.debootstrap.log"
        echo "ci-openssl35.sh: debootstrap failed (log: $root.debootstrap.log)"
        exit 1
    fi
fi
mount -t proc proc "$root/proc" || { echo "ci-openssl35.sh: cannot mount /proc in $root"; exit 1; }
mounted="$root/proc"
if [ ! -f "$root/.gpursa-deps-ready" ]; then
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
    # Packages never start their services inside the root (nginx, haproxy).
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    # What make check uses: the toolchain, Check, GMP, valgrind (the constant-time
    # tests), xxd (hostile CLI input), and the TLS servers and clients. The sanitizer
    # and fuzzing trees stay on the host, so clang is not needed.
    in_root 'apt-get update -q && apt-get install -y -q --no-install-recommends \
        build-essential autoconf automake libtool pkg-config check libgmp-dev valgrind \
        ca-certificates haproxy nginx curl nghttp2-client python3 xxd' \
        >"$root.apt.log" 2>&1 || {
        tail -n 20 "$root.apt.log"
        echo "ci-openssl35.sh: installing the build dependencies failed (log: $root.apt.log)"
        exit 1
    }
    touch "$root/.gpursa-deps-ready"
fi
echo "ci-openssl35.sh: root ready after $(( $(date +%s) - start )) s: $(in_root 'openssl version')"

# A fresh copy of the sources: the files git knows of (untracked ones included) or,
# outside a git checkout, the tree without build directories.
rm -rf "$root/gpursa"
mkdir -p "$root/gpursa/src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -)
else
    (cd "$src" && tar --exclude=./.git --exclude='./_build*' --exclude=./autom4te.cache -cf - .)
fi | tar -C "$root/gpursa/src" -xf - || { echo "ci-openssl35.sh: copying the sources failed"; exit 1; }

jobs=$(nproc 2>/dev/null || echo 2)
in_root "cd /gpursa/src && ./autogen.sh && mkdir -p /gpursa/build \
    && cd /gpursa/build && ../src/configure --without-cuda && make -j$jobs" \
    >"$root.build.log" 2>&1 || {
    tail -n 30 "$root.build.log"
    echo "ci-openssl35.sh: the build against OpenSSL 3.5 failed (log: $root.build.log)"
    exit 1
}
echo "ci-openssl35.sh: built after $(( $(date +%s) - start )) s; make -k check"
# -k: every suite runs and reports even after one fails. The whole make check, as
# the plain tree runs it.
in_root "cd /gpursa/build && make -k -j$jobs check" >"$root.check.log" 2>&1
rc=$?
grep -E '^(# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR)|FAIL|ERROR):' "$root.check.log" | grep -v ': *0$' || :
if [ "$rc" != 0 ]; then
    cat "$root"/gpursa/build/tests/*/test-suite.log 2>/dev/null | tail -n 200
    echo "ci-openssl35.sh: make check against $(in_root 'openssl version') FAILED (rc $rc; log: $root.check.log)"
else
    echo "ci-openssl35.sh: make check passed against $(in_root 'openssl version')"
fi
echo "ci-openssl35.sh: $(( $(date +%s) - start )) s"
exit "$rc"
