/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection through the queue with the real host backend wrapped by
 * fault_backend.c: wrong device results (a corrupted unblinding factor, a
 * corrupted device copy of the key) must be caught by the backend's check,
 * recomputed on the CPU and counted as faults; a device lost in the middle of
 * a run and failed allocations must fall back to the CPU without losing a
 * request. Every result of every run is checked (out^e == in mod n), so no
 * wrong value may leave the queue.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <check.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "queue/gpursa_queue.h"
#include "fault_backend.h"
#include "sectest.h"

#define NTHREADS 8
#define OPS_PER_THREAD 24
#define NOPS (NTHREADS * OPS_PER_THREAD)

typedef struct {
    BIGNUM *n, *e, *d;
    unsigned char buf[7][512];
    gpursa_rsa_key_material km;
    size_t len;
} test_key;

static test_key key;
static gpursa_stats stats;

static void load_key(int bits)
{
    static const char *const names[7] = {
        OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT1,
        OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    const unsigned char **ptr[7] = { &key.km.n, &key.km.e, &key.km.p, &key.km.q,
                                     &key.km.dp, &key.km.dq, &key.km.qinv };
    size_t *len[7] = { &key.km.n_len, &key.km.e_len, &key.km.p_len, &key.km.q_len,
                       &key.km.dp_len, &key.km.dq_len, &key.km.qinv_len };
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    int i;

    if (pkey == NULL)
        abort();
    for (i = 0; i < 7; i++) {
        BIGNUM *bn = NULL;

        if (!EVP_PKEY_get_bn_param(pkey, names[i], &bn))
            abort();
        *len[i] = (size_t)BN_bn2bin(bn, key.buf[i]);
        *ptr[i] = key.buf[i];
        if (i == 0)
            key.n = bn;
        else if (i == 1)
            key.e = bn;
        else
            BN_clear_free(bn);
    }
    if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_D, &key.d))
        abort();
    key.len = key.km.n_len;
    EVP_PKEY_free(pkey);
}

/* The CPU path the provider would hand in: plain c^d mod n. */
static int cpu_private(void *arg, const unsigned char *in, unsigned char *out, size_t len)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *c = BN_bin2bn(in, (int)len, NULL);
    int ok = ctx != NULL && c != NULL && BN_mod_exp(c, c, key.d, key.n, ctx)
             && BN_bn2binpad(c, out, (int)len) == (int)len;

    (void)arg;
    BN_clear_free(c);
    BN_CTX_free(ctx);
    return ok;
}

static int result_ok(const unsigned char *in, const unsigned char *out)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *x = BN_bin2bn(out, (int)key.len, NULL), *c = BN_bin2bn(in, (int)key.len, NULL);
    int ok = ctx != NULL && x != NULL && c != NULL && BN_mod_exp(x, x, key.e, key.n, ctx)
             && BN_cmp(x, c) == 0;

    BN_free(x);
    BN_free(c);
    BN_CTX_free(ctx);
    return ok;
}

typedef struct {
    gpursa_queue *q;
    gpursa_queue_key *qk;
    int failed, wrong;
} run_arg;

static void *worker(void *varg)
{
    run_arg *a = varg;
    unsigned char in[512], out[512];
    int i;

    for (i = 0; i < OPS_PER_THREAD; i++) {
        RAND_bytes(in, (int)key.len);
        in[0] &= 0x7f;                  /* below n: n has its top bit set */
        memset(out, 0xa5, sizeof(out));
        if (gpursa_queue_private(a->q, a->qk, in, out, key.len) != 1)
            __atomic_fetch_add(&a->failed, 1, __ATOMIC_RELAXED);
        else if (!result_ok(in, out))
            __atomic_fetch_add(&a->wrong, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Run NOPS operations from NTHREADS threads through a queue on the fault backend. */
static void run_ops(void)
{
    gpursa_config cfg;
    run_arg a = { NULL, NULL, 0, 0 };
    pthread_t th[NTHREADS];
    uint64_t total;
    int t;

    gpursa_config_defaults(&cfg);
    cfg.backend = GPURSA_CFG_BACKEND_HOST;
    cfg.max_batch = 16;
    cfg.max_wait_us = 2000;
    cfg.min_gpu_batch = 1;             /* every batch to the device: faults reach it */
    cfg.log_level = 0;
    memset(&stats, 0, sizeof(stats));
    ck_assert_int_eq(gpursa_queue_new(&cfg, &stats,
                                      fault_backend(gpursa_gpu_backend(GPURSA_BACKEND_HOST)),
                                      &a.q), 1);
    ck_assert_ptr_nonnull(a.q);
    ck_assert_int_eq(gpursa_queue_key_new(a.q, &key.km, cpu_private, NULL, &a.qk), 1);
    for (t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, worker, &a), 0);
    for (t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    /* every request returned: none may still count as in flight (a leaked
     * count would end in back-pressure stalling the process). The completion
     * side may publish a result just before it drops its count: allow 1 s. */
    for (t = 0; t < 1000 && gpursa_queue_inflight(a.q) != 0; t++)
        usleep(1000);
    ck_assert_uint_eq(gpursa_queue_inflight(a.q), 0);
    gpursa_queue_key_free(a.qk);
    gpursa_queue_free(a.q);
    ck_assert_msg(a.failed == 0, "%d of %d requests failed (lost)", a.failed, NOPS);
    ck_assert_msg(a.wrong == 0, "%d of %d results were WRONG", a.wrong, NOPS);
    total = atomic_load(&stats.ops_gpu) + atomic_load(&stats.ops_host)
            + atomic_load(&stats.ops_cpu);
    ck_assert_uint_eq(total, NOPS);
}

START_TEST(test_wrong_device_results_caught_recomputed_and_counted)
{
    fault_reset();
    fault.corrupt_every = 3;
    fault.corrupt_what = 0;
    run_ops();
    ck_assert_msg(atomic_load(&fault.items) > 0, "no batch reached the backend: test is void");
    ck_assert(atomic_load(&fault.corrupted) > 0);
    /* the backend's own check caught every wrong result, and only those */
    ck_assert_int_eq(atomic_load(&fault.corrupted_released), 0);
    ck_assert_int_eq(atomic_load(&fault.faults_seen), atomic_load(&fault.corrupted));
    ck_assert_uint_eq(atomic_load(&stats.faults), (uint64_t)atomic_load(&fault.faults_seen));
}
END_TEST

START_TEST(test_corrupted_blinding_factor_refused_and_recomputed)
{
    fault_reset();
    fault.corrupt_every = 3;
    fault.corrupt_what = 1;
    run_ops();
    ck_assert_msg(atomic_load(&fault.items) > 0, "no batch reached the backend: test is void");
    ck_assert(atomic_load(&fault.corrupted) > 0);
    ck_assert_int_eq(atomic_load(&fault.corrupted_released), 0);
    ck_assert_int_eq(atomic_load(&fault.faults_seen) + atomic_load(&fault.badinput_seen),
                     atomic_load(&fault.corrupted));
}
END_TEST

START_TEST(test_corrupted_device_key_caught_for_every_item)
{
    fault_reset();
    fault.corrupt_key = 1;
    run_ops();
    ck_assert_msg(atomic_load(&fault.items) > 0, "no batch reached the backend: test is void");
    ck_assert_int_eq(atomic_load(&fault.corrupted_released), 0);
    ck_assert_int_eq(atomic_load(&fault.faults_seen), atomic_load(&fault.items));
    ck_assert_uint_eq(atomic_load(&stats.faults), (uint64_t)atomic_load(&fault.items));
}
END_TEST

START_TEST(test_device_lost_mid_run_loses_no_request)
{
    fault_reset();
    atomic_store(&fault.lose_batches, 2);
    run_ops();
    ck_assert_msg(atomic_load(&fault.lost) > 0, "no batch was lost: test is void");
    ck_assert(atomic_load(&stats.fb_gpu_error) > 0);
}
END_TEST

START_TEST(test_out_of_memory_falls_back_without_losing_requests)
{
    fault_reset();
    atomic_store(&fault.fail_batch_new, 1000000);
    atomic_store(&fault.fail_key_upload, 1000000);
    run_ops();
    ck_assert_msg(atomic_load(&fault.nomem) > 0, "no allocation was attempted: test is void");
    ck_assert_int_eq(atomic_load(&fault.items), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault_injection");
    TCase *tc = tcase_create("fault_injection");
    load_key(1024);                 /* the GPU path takes 1024-bit keys; fast on the host */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_wrong_device_results_caught_recomputed_and_counted);
    tcase_add_test(tc, test_corrupted_blinding_factor_refused_and_recomputed);
    tcase_add_test(tc, test_corrupted_device_key_caught_for_every_item);
    tcase_add_test(tc, test_device_lost_mid_run_loses_no_request);
    tcase_add_test(tc, test_out_of_memory_falls_back_without_losing_requests);
    suite_add_tcase(s, tc);
    return sec_run(s);
}
