/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fault-injecting wrapper around a real gpu/ backend (the host backend in
 * CI, CUDA on a GPU machine). It changes what the device computes, not what
 * it reports: items run with a twin of their key whose dp differs in one bit
 * give a wrong value that only the backend's own result check (out^e == in)
 * can catch; a corrupted unblinding factor must be refused. It can also lose the device in the middle of
 * a run and fail allocations. The queue must recompute every caught item on
 * the CPU, count it, and never release a wrong value.
 */
#ifndef GPURSA_FAULT_BACKEND_H
#define GPURSA_FAULT_BACKEND_H

#include <stdatomic.h>
#include "gpu/gpursa_gpu.h"

typedef struct {
    /* knobs, set before the queue starts */
    unsigned corrupt_every;        /* corrupt every Nth item (0: never) ... */
    int corrupt_what;              /* ... 0: run it with a wrong dp, 1: wrong rinv */
    int corrupt_key;               /* run every item with a wrong dp */
    atomic_int lose_batches;       /* these many next batch_wait calls report LOST */
    atomic_int fail_batch_new;     /* these many next batch_new calls report NOMEM */
    atomic_int fail_key_upload;    /* these many next key_upload calls report NOMEM */
    /* observations */
    atomic_long items;             /* items submitted to the real backend */
    atomic_long corrupted;         /* of which corrupted by us */
    atomic_long faults_seen;       /* FAULT statuses the real backend returned */
    atomic_long badinput_seen;     /* BADINPUT statuses */
    atomic_long corrupted_released;/* corrupted items the backend called OK: must stay 0 */
    atomic_int lost;               /* batches reported lost */
    atomic_int nomem;              /* allocations failed */
} fault_state;

extern fault_state fault;
/* The wrapper around real (kept for the process); fault_reset() zeroes fault. */
const gpursa_gpu_backend_ops *fault_backend(const gpursa_gpu_backend_ops *real);
void fault_reset(void);

#endif
