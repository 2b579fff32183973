#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# configure's --with-cuda-arch without a list (--with-cuda-arch, --without-cuda-arch) is
# refused with an error that says what it takes, before any CUDA check, rather than
# handing nvcc "yes" or "no" as an architecture.
set -u
top=${GPURSA_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -x "$top/configure" ] || { echo "configure-args: no $top/configure (run autogen.sh)"; exit 77; }
# configure refuses to run in another folder once the source tree is configured in place
[ ! -f "$top/config.status" ] || { echo "configure-args: $top is configured in place: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpursa-configure-args.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for arg in --with-cuda-arch --without-cuda-arch --with-cuda-arch=; do
    mkdir "$tmp/b" && (cd "$tmp/b" && "$top/configure" -q --without-cuda "$arg") >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] || ! grep -q -- "--with-cuda-arch takes a list of compute capabilities" "$tmp/out"; then
        echo "not refused as it should be: configure $arg (exit $rc)"; tail -3 "$tmp/out"; fail=1
    else
        echo "ok: configure $arg refused: $(grep -o -- '--with-cuda-arch takes[^(]*' "$tmp/out")"
    fi
    rm -rf "$tmp/b"
done
exit $fail
