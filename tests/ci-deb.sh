#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian package as an operator gets it: build it with dpkg-buildpackage from a copy of
# the sources (build directories of the checkout stay out of it), check it with lintian,
# install it with dpkg -i into a fresh Debian root made by debootstrap, add the .include
# line to that root's /etc/ssl/openssl.cnf, and there run `openssl list -providers` and an
# RSA signature through the installed module, verified by the default provider alone.
#
# The build skips the test suite (DEB_BUILD_OPTIONS=nocheck: make check ran before this) and,
# on a machine without an NVIDIA GPU, the CUDA backend (build profile pkg.gpursa.nocuda):
# make check already compiled the kernels, nothing here could run them, and building them
# for every architecture would cost minutes to test packaging that does not depend on them.
# GPURSA_DEB_CUDA=1 builds the package with CUDA anyway (where nvcc is).
#
# Needs root (debootstrap, chroot, mount), debootstrap, dpkg-buildpackage, debhelper and
# network access to a Debian mirror; it says so and exits 0 when one is missing.
# GPURSA_DEB=0 skips it. GPURSA_DEB_DIR (default _build-deb) receives the sources' copy, the
# packages and the logs (build.log, lintian.log, debootstrap.log, install.log, check.log);
# the root is made in it and removed at the end (GPURSA_DEB_KEEP=1 keeps it).
# GPURSA_DEB_SUITE (default: the host's Debian release, whose libraries the package is
# built against) and GPURSA_DEB_MIRROR (default: the mirror apt uses for that suite)
# choose the root.
set -e
cd "$(dirname "$0")/.."
say() { echo "ci-deb.sh: $*"; }

if [ "${GPURSA_DEB:-1}" = 0 ]; then
    say "GPURSA_DEB=0: Debian package step skipped"; exit 0
fi
if [ "$(id -u)" != 0 ]; then
    say "skipped: building a root with debootstrap and running in it needs root"; exit 0
fi
for tool in debootstrap dpkg-buildpackage dh chroot git; do
    command -v "$tool" >/dev/null 2>&1 && continue
    say "skipped: $tool is not installed (tests/install-deps.sh installs what this step needs)"
    exit 0
done
[ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1 \
    || { say "skipped: not a git checkout (the package is built from the files git tracks)"; exit 0; }
suite=${GPURSA_DEB_SUITE:-}
if [ -z "$suite" ]; then
    # shellcheck disable=SC1091
    suite=$(. /etc/os-release && [ "$ID" = debian ] && echo "${VERSION_CODENAME:-}") || true
    [ -n "$suite" ] || { say "skipped: the host is not Debian; set GPURSA_DEB_SUITE to a Debian release whose libraries match the host's"; exit 0; }
fi
mirror=${GPURSA_DEB_MIRROR:-$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null \
    | awk -v s="$suite" '$2 == s { print $1; exit }')}
mirror=${mirror:-http://deb.debian.org/debian/}

work=${GPURSA_DEB_DIR:-$PWD/_build-deb}
root=$work/root
mkdir -p "$work"
work=$(cd "$work" && pwd)
root=$work/root

# Everything mounted at or under the root, deepest first.
mounts_under_root() {
    awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r
}
# Unmount, then remove the root only when nothing is mounted in it any more (never
# delete through a mount into the host).
cleanup() {
    for m in $(mounts_under_root); do umount "$m" 2>/dev/null || umount -l "$m" || true; done
    if [ -n "$(mounts_under_root)" ]; then
        say "still mounted under $root, left in place:"; mounts_under_root
    elif [ "${GPURSA_DEB_KEEP:-0}" != 1 ]; then
        rm -rf "$root"
    fi
}
cleanup
[ ! -e "$root" ] || { say "cannot clear $root"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

start=$(date +%s)
# --- build ---------------------------------------------------------------------------
src=$work/gpursa
rm -rf "$src" "$work"/gpursa_* "$work"/gpursa-dbgsym_*
mkdir -p "$src"
# Tracked and untracked-but-not-ignored files, as they are in the working tree.
git ls-files -z --cached --others --exclude-standard \
    | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$src" -xf -
profiles="nocheck pkg.gpursa.nocuda"
if [ "${GPURSA_DEB_CUDA:-0}" = 1 ] || nvidia-smi -L >/dev/null 2>&1; then
    profiles=nocheck
fi
say "building the package (profiles: $profiles) in $src"
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
        DEB_BUILD_PROFILES="$profiles" dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log"; say "FAIL: dpkg-buildpackage (log: $work/build.log)"; exit 1
fi
deb=$(ls "$work"/gpursa_*.deb)
say "built $(basename "$deb") in $(($(date +%s) - start)) s"
dpkg-deb --field "$deb" Description | sed -n 's/^ *\(Backends in this build: .*\)/\1/p'

# --- lintian (the binary package; see debian/copyright for the source's license) ----------
if command -v lintian >/dev/null 2>&1; then
    t=$(date +%s)
    if ! lintian --fail-on error,warning -I "$deb" >"$work/lintian.log" 2>&1; then
        cat "$work/lintian.log"; say "FAIL: lintian"; exit 1
    fi
    grep -v 'running with root privileges' "$work/lintian.log" || true
    say "lintian: no errors or warnings ($(($(date +%s) - t)) s)"
else
    say "lintian is not installed: package not linted"
fi

# --- a fresh root -------------------------------------------------------------------------
t=$(date +%s)
say "debootstrap --variant=minbase --include=openssl $suite from $mirror"
if ! debootstrap --variant=minbase --include=openssl "$suite" "$root" "$mirror" \
        >"$work/debootstrap.log" 2>&1; then
    tail -n 20 "$work/debootstrap.log"; say "FAIL: debootstrap (log: $work/debootstrap.log)"; exit 1
fi
say "root made in $(($(date +%s) - t)) s"
mount -t proc proc "$root/proc" \
    || { say "FAIL: cannot mount /proc in the root (a container without CAP_SYS_ADMIN?)"; exit 1; }

# --- install as README says: dpkg -i, then the .include line ---------------------------------
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 chroot "$root" "$@"; }
cp "$deb" "$root/tmp/"
say "in the root: dpkg -i $(basename "$deb")"
if ! in_root dpkg -i "/tmp/$(basename "$deb")" >"$work/install.log" 2>&1; then
    cat "$work/install.log"; say "FAIL: dpkg -i"; exit 1
fi
sed 's/^/    /' "$work/install.log"
printf '\n.include /etc/ssl/gpursa.cnf\n' >>"$root/etc/ssl/openssl.cnf"

cat >"$root/tmp/check.sh" <<'EOF'
#!/bin/sh
# Runs inside the root: the system openssl.cnf now includes /etc/ssl/gpursa.cnf.
set -e
fail() { echo "FAIL: $*"; exit 1; }
cd /tmp
: >empty.cnf   # a configuration without gpursa: OpenSSL loads only its default provider

echo "== openssl list -providers"
openssl list -providers | tee providers.txt
grep -qx '  gpursa' providers.txt || fail "gpursa is not listed"
[ "$(grep -c 'status: active' providers.txt)" = 2 ] || fail "default and gpursa are not both active"
dpkg -L gpursa | grep -qx "$(openssl version -m | sed 's/^MODULESDIR: "\(.*\)"$/\1/')/gpursa.so" \
    || fail "gpursa.so is not in openssl's modules directory"

# stats_ops FILE: the private operations gpursa's stats line counts (gpu + host + cpu).
stats_ops() {
    sed -n 's/^gpursa: ops gpu=\([0-9]*\) host=\([0-9]*\) cpu=\([0-9]*\) .*/\1 \2 \3/p' "$1" |
        { read -r g h c && echo $((g + h + c)); }
}

OPENSSL_CONF=/tmp/empty.cnf openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
    -out key.pem 2>/dev/null
OPENSSL_CONF=/tmp/empty.cnf openssl pkey -in key.pem -pubout -out pub.pem
head -c 1000 /dev/urandom >msg
# PKCS#1 v1.5 signatures are deterministic: gpursa's must equal the default provider's.
OPENSSL_CONF=/tmp/empty.cnf openssl dgst -sha256 -sign key.pem -out sig.default msg

# backend: auto (no GPU here: the CPU path), then host (gpursa's own GPU arithmetic run on
# CPU threads; every batch, however small, goes to it).
for backend in auto host; do
    echo "== RSA-2048 signature, backend $backend"
    small=""
    [ "$backend" = auto ] || small="GPURSA_MIN_GPU_BATCH=1 GPURSA_CPU_FALLBACK=never"
    env GPURSA_STATS=1 GPURSA_BACKEND=$backend $small \
        openssl dgst -sha256 -sign key.pem -out "sig.$backend" msg 2>"sign.$backend.err" \
        || { cat "sign.$backend.err"; fail "signing through gpursa"; }
    cat "sign.$backend.err"
    [ "$(stats_ops "sign.$backend.err")" = 1 ] || fail "gpursa did not make the signature"
    if [ "$backend" = host ]; then
        grep -q '^gpursa: ops gpu=0 host=1 ' "sign.$backend.err" || fail "the host backend did not sign"
    fi
    OPENSSL_CONF=/tmp/empty.cnf openssl dgst -sha256 -verify pub.pem -signature "sig.$backend" msg \
        || fail "the default provider rejects gpursa's signature"
    cmp "sig.$backend" sig.default || fail "gpursa's signature differs from the default provider's"
done
echo tampered >>msg
if OPENSSL_CONF=/tmp/empty.cnf openssl dgst -sha256 -verify pub.pem -signature sig.host msg \
        >/dev/null 2>&1; then
    fail "a signature verifies for a message it was not made for"
fi
echo "== installed package: gpursa signs, default verifies"
EOF
if ! in_root /bin/sh /tmp/check.sh >"$work/check.log" 2>&1; then
    cat "$work/check.log"; say "FAIL: the installed package (log: $work/check.log)"; exit 1
fi
cat "$work/check.log"
say "PASS in $(($(date +%s) - start)) s (logs in $work)"
