#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu-tests.sh BUILD LOG [BACKEND] - the gpu/ backend suite of a build tree
# (tests/gpu/test_gpu_rsa, CK_RUN_SUITE=gpu_backend) against BACKEND (default cuda), its
# TAP output appended to LOG. Prints "rc=N, P ok, F not ok"; exits with the suite's status
# (1 when the build has no test_gpu_rsa). Used by gpu-run.sh, kernel-ab.sh and
# gpu-trust-check.sh. GPURSA_TESTS_TIMEOUT: seconds for the whole suite (default 300).
build=${1:?usage: bench/gpu-tests.sh BUILD LOG [BACKEND]}
log=${2:?usage: bench/gpu-tests.sh BUILD LOG [BACKEND]}
t=$build/tests/gpu/test_gpu_rsa
[ -x "$t" ] || { echo "no tests/gpu/test_gpu_rsa (make -C tests/gpu check TESTS=)"; exit 1; }
one=$(mktemp) || exit 1
# CUDA is initialised inside the test process: no fork after it (doc/design.md). The
# rsa_op suite is host arithmetic (CI runs it); the backend suite is the GPU one.
GPURSA_TEST_BACKEND=${3:-cuda} CK_RUN_SUITE=gpu_backend CK_FORK=no CK_TAP_LOG_FILE_NAME=- \
    CK_DEFAULT_TIMEOUT=600 timeout "${GPURSA_TESTS_TIMEOUT:-300}" "$t" > "$one" 2>&1
rc=$?
cat "$one" >> "$log"
echo "rc=$rc, $(grep -c '^ok' "$one") ok, $(grep -c '^not ok' "$one") not ok"
rm -f "$one"
exit $rc
