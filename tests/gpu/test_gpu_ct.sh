#!/bin/sh
# Constant-time test: the host build of the kernel arithmetic under valgrind
# memcheck with the secrets marked undefined (test_gpu_ct.c).  Any branch or
# memory address that depends on a secret is a memcheck error, and
# --error-exitcode turns it into a failure.  Skips (77) without valgrind.
builddir="${GPURSA_TOP_BUILDDIR:-.}/tests/gpu"
prog="$builddir/test_gpu_ct"
[ -x "$prog" ] || prog=./test_gpu_ct
VALGRIND="${VALGRIND:-valgrind}"
if ! command -v "$VALGRIND" >/dev/null 2>&1; then
    echo "valgrind not found: skipping the constant-time test"
    exit 77
fi
# libtool may have left a wrapper script: run the real binary
[ -x "$builddir/.libs/test_gpu_ct" ] && prog="$builddir/.libs/test_gpu_ct"
[ -x "$builddir/.libs/lt-test_gpu_ct" ] && prog="$builddir/.libs/lt-test_gpu_ct"
exec "$VALGRIND" -q --error-exitcode=1 --track-origins=yes "$prog" "$@"
