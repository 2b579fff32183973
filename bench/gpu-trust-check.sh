#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu-trust-check.sh LOGDIR - on a machine with an NVIDIA GPU, the tests of the
# device result check: the CUDA backend suite (tests/gpu/test_gpu_rsa, gpu_backend: every
# variant and COOP kernel against GMP, wrong-dp items FAULT, and the fault injection of
# test_backend_cuda_fault_items_fail_closed: an item the stages around the CRT kernel leave unwritten
# or gets out of range is FAULT with a zeroed output, on fresh and on reused buffers, for
# every key size and COOP kernel), then the queue's failure cases (tests/queue/test_queue,
# the "failures" case: test_cuda_fault_items_recomputed_on_cpu_never_released runs the
# real CUDA backend under the queue with the hooks on). GPURSA_TEST_BACKEND=cuda and
# CK_FORK=no, as bench/gpu-tests.sh: CUDA starts inside the test process.
#
# The build tree, as bench/gpu-run.sh: GPURSA_BUILD (default _devbuild) configured with
# CUDA, with `make`, `make -C tests/gpu check TESTS=` and `make -C tests/queue check
# TESTS=` run; GPURSA_CARRY/lib (default _devlibs/lib) for the shared libraries the GPU
# machine lacks. Writes LOGDIR/backend.log, LOGDIR/queue.log (TAP) and LOGDIR/summary.txt;
# exits 0 when both suites pass.
set -u
out=${1:?usage: bench/gpu-trust-check.sh LOGDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GPURSA_BUILD:-$top/_devbuild}
carry=${GPURSA_CARRY:-$top/_devlibs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary=$out/summary.txt
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(cat "$build/COMMIT" 2>/dev/null || git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
} > "$summary"

: > "$out/backend.log"
echo "backend suite: $(GPURSA_TESTS_TIMEOUT=${GPURSA_TESTS_TIMEOUT:-900} \
    sh "$top/bench/gpu-tests.sh" "$build" "$out/backend.log" cuda)" | tee -a "$summary"
backend_rc=$(sed -n 's/^backend suite: rc=\([0-9]*\),.*/\1/p' "$summary")

q=$build/tests/queue/test_queue
if [ -x "$q" ]; then
    GPURSA_TEST_BACKEND=cuda CK_RUN_CASE=failures CK_FORK=no CK_TAP_LOG_FILE_NAME=- \
        CK_DEFAULT_TIMEOUT=600 timeout 600 "$q" > "$out/queue.log" 2>&1
    queue_rc=$?
    echo "queue failures: rc=$queue_rc, $(grep -c '^ok' "$out/queue.log") ok, $(grep -c '^not ok' "$out/queue.log") not ok" \
        | tee -a "$summary"
else
    echo "queue failures: no tests/queue/test_queue (make -C tests/queue check TESTS=)" | tee -a "$summary"
    queue_rc=1
fi
# the fault-injection cases by name, so a reader sees they ran
grep -h 'fault_items' "$out/backend.log" "$out/queue.log" | tee -a "$summary"
[ "${backend_rc:-1}" = 0 ] && [ "$queue_rc" = 0 ]
