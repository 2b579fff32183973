/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake gpu/ backend for the queue tests: it computes each item with
 * OpenSSL BN exactly as the interface specifies (blinded CRT, unblinding with
 * the given rinv, the out^e == in check), so wrong blinding factors give
 * wrong answers, and it can be slowed down and made to fail on demand.
 */
#ifndef GPURSA_TEST_FAKE_BACKEND_H
#define GPURSA_TEST_FAKE_BACKEND_H

#include <stdatomic.h>
#include <stdint.h>
#include "gpu/gpursa_gpu.h"

#define FAKE_MAX_LOG 65536
#define FAKE_MAX_OPENS 64
#define FAKE_MAX_DEVICES 16

typedef struct {
    /* knobs, set before use */
    int device_count;
    unsigned batch_delay_us;     /* fixed cost of a batch */
    unsigned item_delay_us;      /* plus this per item */
    unsigned fail_submit_permille;   /* submit returns LAUNCH */
    unsigned fail_wait_permille;     /* wait returns COPY */
    unsigned fault_permille;     /* an item comes back FAULT */
    int nop;                     /* no arithmetic: out = in, OK (overhead timing) */
    int refuse_keys;             /* key_upload answers UNSUPPORTED */
    int shared;                  /* device_shared answers this (MPS) */
    atomic_int lost_next;        /* this many next batches fail with LOST */
    atomic_int open_fail;        /* this many next device_open calls fail */
    atomic_int hold_ok;          /* while set, a batch that will succeed stays in batch_wait */
    /* observations */
    atomic_int opens;            /* successful opens */
    atomic_int open_attempts;
    gpursa_gpu_open_params open_params; /* what the last successful open was given */
    uint64_t open_time_ns[FAKE_MAX_OPENS];
    atomic_int batches;          /* batches that completed OK */
    atomic_long items;           /* items in them */
    atomic_long faults;          /* FAULT statuses returned */
    atomic_int failed_batches;
    atomic_int cur_items;        /* items submitted and not yet waited for */
    atomic_int max_items;        /* the most at once */
    atomic_int cur_batches;      /* batches submitted and not yet waited for */
    atomic_int max_batches;      /* the most at once */
    atomic_int keys_live;        /* uploaded and not freed */
    atomic_int keys_freed_on[FAKE_MAX_DEVICES];   /* key_free calls, by device index */
    atomic_int nlog;
    int log[FAKE_MAX_LOG];       /* size of each completed batch, in order */
} fake_state;

extern fake_state fake;
extern const gpursa_gpu_backend_ops fake_ops;

/* Resets counters and knobs (device_count 1, no delay, no failure). */
void fake_reset(void);

#endif
