#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test: the host build of the kernel arithmetic under valgrind
# memcheck with the secrets marked undefined (test_gpu_ct.c).  Any branch or
# memory address that depends on a secret is a memcheck error, and
# --error-exitcode turns it into a failure.  Skips (77) without valgrind.
# GPURSA_CT_PROG names the programs to run, one after another, stopping at
# the first that fails (test_gpu_coop_ct.sh and test_gpu_coop_ct_fp.sh set it).
builddir="${GPURSA_TOP_BUILDDIR:-.}/tests/gpu"
VALGRIND="${VALGRIND:-valgrind}"
if ! command -v "$VALGRIND" >/dev/null 2>&1; then
    echo "valgrind not found: skipping the constant-time test"
    exit 77
fi
for name in ${GPURSA_CT_PROG:-test_gpu_ct}; do
    prog="$builddir/$name"
    [ -x "$prog" ] || prog="./$name"
    # libtool may have left a wrapper script: run the real binary
    [ -x "$builddir/.libs/$name" ] && prog="$builddir/.libs/$name"
    [ -x "$builddir/.libs/lt-$name" ] && prog="$builddir/.libs/lt-$name"
    # GPURSA_CT_ORIGINS=no leaves out where an undefined value came from (the
    # report, not the detection): several times faster on the unrolled FP64 loops
    "$VALGRIND" -q --error-exitcode=1 --track-origins="${GPURSA_CT_ORIGINS:-yes}" "$prog" "$@" || exit $?
done
