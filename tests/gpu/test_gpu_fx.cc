/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_fx.cc - the one- and two-thread private-operation kernels of
 * gpu/kernels_rsa.cuh (gpursa_fx1_kernel: IMAD and XMAD, one thread per
 * item; gpursa_fx2_kernel: FAST, the two CRT halves of an item in two
 * neighbouring lanes), run on the host against GMP.
 *
 * The kernel functions themselves are compiled here by the host C++
 * compiler: the CUDA keywords become plain C++ (or nothing), blockIdx,
 * blockDim and threadIdx are per-thread variables, and gpursa_fx1_kernel
 * runs once per thread of the launch. The two lanes of a FAST item are two
 * pthreads, and __shfl_xor_sync(0xffffffff, v, 1) is an exchange through two
 * slots between two barrier waits, so each lane gets exactly its partner's
 * value. The device's carry-chain arithmetic is used for IMAD too
 * (GPURSA_MONT_EMULATE_DEVICE), as the GPU runs it.
 *
 * The kernels compute m = in^d mod n by CRT for an input in < n (the
 * blinded value the blinding stage writes; the modulus-n stages around them,
 * which check and unblind, are not part of them). Checked against GMP, per
 * size and variant: edge and random inputs (0, 1, n-1, p, 3q, all-ones
 * limbs), keys with e = 3 and with p < q and p > q, several keys in one
 * batch, threads past the end of the batch (they store nothing), that no
 * status word is written (the unblinding stage is its only writer), and that
 * items with a wrong dp or dq, or an input the blinding stage would refuse
 * (>= n), change no other item's result.
 *
 * Built with -DGPURSA_FX_CT (test_gpu_fx_ct, run under valgrind memcheck by
 * test_gpu_fx_ct.sh) it runs one item per case with the key's secrets and
 * the input marked undefined: memcheck reports every branch and address
 * that depends on them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* the device's carry chains for IMAD as well (gpursa_mont.h) */
#define GPURSA_MONT_EMULATE_DEVICE 1
#include <check.h>
#include <gmp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu/gpursa_keyconv.h"
extern "C" {
#include "tests/gpu/gpu_testutil.h"
}
#include "gpu/gpursa_rsa_op.h"

/* ---- CUDA as plain C++ --------------------------------------------------------------- */

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct fx_dim3 {
    uint32_t x;
};
static thread_local fx_dim3 blockIdx, blockDim, threadIdx;

/* The launch's argument block (gpu/gpursa_cuda_kernels.h, which needs
 * <cuda_runtime.h>): only the fields the kernels read, under the same names,
 * so that a kernel reading any other field does not compile here. */
typedef struct {
    const void *const *keys;
    const uint32_t *in;
    uint32_t *out;
    uint32_t count;
    uint32_t stride;
} gpursa_cuda_args;

/* The two lanes of a FAST item: a shuffle writes the lane's slot, waits for
 * the partner's, reads it and waits again (so the slot is not overwritten
 * before the partner has read it). rounds counts each lane's shuffles: equal
 * at the end when the pair stayed converged. */
struct fx_pair {
    pthread_barrier_t bar;
    uint32_t slot[2];
    int rounds[2];
};
static thread_local fx_pair *fx_cur_pair;

static uint32_t __shfl_xor_sync(unsigned mask, uint32_t v, int lane_mask)
{
    fx_pair *p = fx_cur_pair;
    const int me = (int)(threadIdx.x & 1);
    if (mask != 0xffffffffu || lane_mask != 1 || p == NULL) {
        /* not ck_abort: this is not the test's thread */
        fprintf(stderr, "__shfl_xor_sync(%#x, v, %d): not the pair exchange this test emulates\n", mask,
                lane_mask);
        abort();
    }
    p->slot[me] = v;
    pthread_barrier_wait(&p->bar);
    uint32_t r = p->slot[me ^ 1];
    pthread_barrier_wait(&p->bar);
    p->rounds[me]++;
    return r;
}

/* `#pragma unroll` is nvcc's (g++ before 13 ignores this in C++: the Makefile gives it
 * -Wno-unknown-pragmas too) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#elif defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-pragmas"
#endif
#define GPURSA_FX_HOST_TEST 1
#include "gpu/kernels_rsa.cuh"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#elif defined(__clang__)
#pragma clang diagnostic pop
#endif

/* ---- the launch, emulated ------------------------------------------------------------ */

#define FX_BLOCK 128 /* threads per block, as gpursa_fx_launch */

typedef void (*fx_kernel)(gpursa_cuda_args);

static void fx_set_tid(uint32_t tid)
{
    blockDim.x = FX_BLOCK;
    blockIdx.x = tid / FX_BLOCK;
    threadIdx.x = tid % FX_BLOCK;
}

struct fx_lane {
    fx_kernel k;
    const gpursa_cuda_args *a;
    uint32_t tid;
    fx_pair *pair;
};

static void *fx_lane_main(void *arg)
{
    const fx_lane *l = (const fx_lane *)arg;
    fx_set_tid(l->tid);
    fx_cur_pair = l->pair;
    l->k(*l->a);
    return NULL;
}

/* Threads tid0 .. tid0 + n - 1 of the launch: one after another with one
 * lane an item, or each pair of lanes as two threads at once. */
static void fx_run_threads(fx_kernel k, int lanes, const gpursa_cuda_args *a, uint32_t tid0, uint32_t n)
{
    if (lanes == 1) {
        for (uint32_t t = tid0; t < tid0 + n; t++) {
            fx_set_tid(t);
            k(*a);
        }
        return;
    }
    ck_assert(tid0 % 2 == 0 && n % 2 == 0);
    for (uint32_t t = tid0; t < tid0 + n; t += 2) {
        fx_pair pair;
        fx_lane l[2];
        pthread_t th[2];
        memset(&pair, 0, sizeof(pair));
        ck_assert_int_eq(pthread_barrier_init(&pair.bar, NULL, 2), 0);
        for (int i = 0; i < 2; i++) {
            l[i].k = k;
            l[i].a = a;
            l[i].tid = t + (uint32_t)i;
            l[i].pair = &pair;
            ck_assert_int_eq(pthread_create(&th[i], NULL, fx_lane_main, &l[i]), 0);
        }
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_int_eq(pair.rounds[0], pair.rounds[1]);
        ck_assert_int_gt(pair.rounds[0], 0);
        pthread_barrier_destroy(&pair.bar);
    }
}

/* ---- sizes, variants, batches ------------------------------------------------------- */

struct fx_config {
    const char *name;
    int bits, lanes;
    fx_kernel k;
};

#define FX1(bits, v) {#v, bits, 1, gpursa_fx1_kernel<(bits) / 64, GPURSA_VARIANT_##v>}
#define FX2(bits, v) {#v, bits, 2, gpursa_fx2_kernel<(bits) / 64, GPURSA_VARIANT_##v>}

typedef gt_batch batch; /* gpu_testutil.h */

/* count items of nl limbs; one column more than count (stride), whose
 * canaries nothing may touch */
static void batch_init(batch *b, int count, int nl)
{
    gt_batch_init(b, count, (uint32_t)count + 1, nl);
}

/* No output word and no status of the items from `from` on was written. */
static void batch_check_untouched(const batch *b, int from, const char *when)
{
    const int i = gt_batch_first_written(b, from);
    ck_assert_msg(i < 0, "%s: the status or output of item %d written", when, i);
}

static gpursa_cuda_args batch_args(batch *b)
{
    gpursa_cuda_args a;
    a.keys = b->keys;
    a.in = b->in;
    a.out = b->out;
    a.count = (uint32_t)b->count;
    a.stride = b->stride;
    return a;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* Per size: key 0 random primes, e = 65537; key 1 p just above 2^(h-1), q
 * just below 2^h, e = 3; key 2 the same shape with p > q, e = 65537. */
#define FX_KEYS 3
static gt_rsa_key keys[GPURSA_NSIZES][FX_KEYS];
static gpursa_rsa_keydata *kds[GPURSA_NSIZES][FX_KEYS];
static int keys_made[GPURSA_NSIZES];

static void keys_make(int bits, int nkeys)
{
    const int z = gpursa_size_index(bits);
    for (int s = keys_made[z]; s < nkeys; s++) {
        gt_rsa_keygen(&keys[z][s], bits, s == 1 ? 3 : 65537, s);
        kds[z][s] = (gpursa_rsa_keydata *)malloc(sizeof(gpursa_rsa_keydata));
        if (kds[z][s] == NULL || gpursa_keyconv_load(kds[z][s], &keys[z][s].km) != GPURSA_GPU_OK)
            abort();
    }
    if (keys_made[z] < nkeys)
        keys_made[z] = nkeys;
}

static void keys_free(void)
{
    for (int z = 0; z < 4; z++)
        for (int s = 0; s < keys_made[z]; s++) {
            gpursa_keyconv_cleanse(kds[z][s], sizeof(gpursa_rsa_keydata));
            free(kds[z][s]);
            gt_rsa_key_free(&keys[z][s]);
        }
}

#ifndef GPURSA_FX_CT

/* The sizes and variants, with the good items each batch of test_good runs
 * (item i: key i % 3) and whether test_bad runs (the work per item grows with
 * the cube of the size, and XMAD's 16-bit products are slower on the host
 * still: its kernel is gpursa_fx1_kernel, which IMAD's test_bad checks at
 * every size). */
static const struct {
    fx_config c;
    int items, bad;
} configs[] = {
    {FX1(1024, IMAD), 9, 1}, {FX1(1024, XMAD), 9, 1}, {FX2(1024, FAST), 9, 1},
    {FX1(2048, IMAD), 7, 1}, {FX1(2048, XMAD), 5, 1}, {FX2(2048, FAST), 7, 1},
    {FX1(3072, IMAD), 3, 1}, {FX1(3072, XMAD), 2, 0}, {FX2(3072, FAST), 3, 1},
    {FX1(4096, IMAD), 2, 1}, {FX1(4096, XMAD), 1, 0}, {FX2(4096, FAST), 2, 1},
};
#define NCONFIGS ((int)(sizeof(configs) / sizeof(configs[0])))

/* The last thread pair's worth past the end runs first, alone: it must
 * store nothing (on the GPU it runs whenever; FAST's lanes past the end run
 * on the batch's last item, so only this order shows a store of theirs).
 * Then the batch's own threads. */
static void batch_run(const fx_config *c, batch *b)
{
    gpursa_cuda_args a = batch_args(b);
    const uint32_t lanes = (uint32_t)c->lanes, past = c->lanes == 1 ? FX_BLOCK : 2;
    fx_run_threads(c->k, c->lanes, &a, lanes * (uint32_t)b->count, past);
    batch_check_untouched(b, 0, "threads past the end");
    fx_run_threads(c->k, c->lanes, &a, 0, lanes * (uint32_t)b->count);
    batch_check_untouched(b, b->count, "the batch");
}

static void make_input(mpz_t c, const gt_rsa_key *kk, int k, int nl)
{
    switch (k % 8) {
    case 0: mpz_set_ui(c, 0); break;
    case 1: mpz_set_ui(c, 1); break;
    case 2: mpz_sub_ui(c, kk->n, 1); break;
    case 3: mpz_set(c, kk->p); break;
    case 4: mpz_mul_ui(c, kk->q, 3); break;
    case 5: gt_operand(c, 5, kk->n, nl); break;     /* all-ones limbs mod n */
    default: mpz_urandomm(c, gt_rand, kk->n); break;
    }
}

/* Items of every key in one batch (item i: key i % 3, input i), each
 * against GMP; no status word written. */
START_TEST(test_good)
{
    const fx_config *c = &configs[_i].c;
    const int z = gpursa_size_index(c->bits), nl = c->bits / 32, count = configs[_i].items;
    batch b;
    mpz_t x, want, got;
    mpz_inits(x, want, got, NULL);
    batch_init(&b, count, nl);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[z][i % FX_KEYS];
        b.keys[i] = kds[z][i % FX_KEYS];
        make_input(x, kk, i, nl);
        gt_soa_set(b.in, &b, i, x);
    }
    batch_run(c, &b);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[z][i % FX_KEYS];
        gt_soa_get(x, b.in, &b, i);
        gt_soa_get(got, b.out, &b, i);
        mpz_powm(want, x, kk->d, kk->n);
        ck_assert_msg(b.status[i] == GT_STATUS_CANARY && mpz_cmp(got, want) == 0,
                      "%s %d bits item %d (key %d): status word %#x, %s", c->name, c->bits, i, i % FX_KEYS,
                      (unsigned)b.status[i], mpz_cmp(got, want) ? "wrong result" : "right result");
    }
    gt_batch_free(&b);
    mpz_clears(x, want, got, NULL);
}
END_TEST

/* Items the unblinding stage rejects next to good ones: inputs the blinding
 * stage refuses (n, 2^bits - 1: the kernels read them all the same), a key
 * with a wrong dp or a wrong dq (its result is not in^d mod n, so the
 * stage's check fails). Good items stay right; no status word is written. */
START_TEST(test_bad)
{
    const fx_config *c = &configs[_i].c;
    const int z = gpursa_size_index(c->bits), nl = c->bits / 32, ncases = 5;
    const int count = c->bits <= 2048 ? 2 * ncases : ncases;
    const gt_rsa_key *kk = &keys[z][0];
    gpursa_rsa_keydata *wrong_dp = (gpursa_rsa_keydata *)malloc(sizeof(*wrong_dp));
    gpursa_rsa_keydata *wrong_dq = (gpursa_rsa_keydata *)malloc(sizeof(*wrong_dq));
    batch b;
    mpz_t x, got, want;
    ck_assert(wrong_dp != NULL && wrong_dq != NULL);
    memcpy(wrong_dp, kds[z][0], sizeof(*wrong_dp));
    memcpy(wrong_dq, kds[z][0], sizeof(*wrong_dq));
    wrong_dp->dp[1] ^= 0x10u;
    wrong_dq->dq[2] ^= 0x100u;
    mpz_inits(x, got, want, NULL);
    batch_init(&b, count, nl);
    for (int i = 0; i < count; i++) {
        b.keys[i] = kds[z][0];
        mpz_urandomm(x, gt_rand, kk->n);
        switch (i % ncases) {
        case 0: mpz_set(x, kk->n); break;                                   /* in == n */
        case 1: mpz_set_ui(x, 0); mpz_setbit(x, c->bits); mpz_sub_ui(x, x, 1); break;  /* 2^bits - 1 */
        case 2: b.keys[i] = wrong_dp; break;
        case 3: b.keys[i] = wrong_dq; break;
        default: break;                                                     /* good */
        }
        gt_soa_set(b.in, &b, i, x);
    }
    batch_run(c, &b);
    for (int i = 0; i < count; i++) {
        const int k = i % ncases;
        ck_assert_msg(b.status[i] == GT_STATUS_CANARY, "%s %d bits item %d (case %d): status word %#x written",
                      c->name, c->bits, i, k, (unsigned)b.status[i]);
        gt_soa_get(got, b.out, &b, i);
        gt_soa_get(x, b.in, &b, i);
        mpz_powm(want, x, kk->d, kk->n);
        if (k == 4)
            ck_assert_msg(mpz_cmp(got, want) == 0, "%s %d bits item %d: wrong result", c->name, c->bits, i);
        else if (k >= 2)
            ck_assert_msg(mpz_cmp(got, want) != 0, "%s %d bits item %d (case %d): a wrong exponent gave the right result",
                          c->name, c->bits, i, k);
    }
    gt_batch_free(&b);
    gpursa_keyconv_cleanse(wrong_dp, sizeof(*wrong_dp));
    gpursa_keyconv_cleanse(wrong_dq, sizeof(*wrong_dq));
    free(wrong_dp);
    free(wrong_dq);
    mpz_clears(x, got, want, NULL);
}
END_TEST

int main(void)
{
    gt_init();
    /* only the keys the batches use (an RSA-4096 key takes about a second) */
    for (int i = 0; i < NCONFIGS; i++)
        keys_make(configs[i].c.bits, configs[i].items < FX_KEYS ? configs[i].items : FX_KEYS);
    Suite *s = suite_create("gpu_fx");
    TCase *tc = tcase_create("fx");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_good, 0, NCONFIGS);
    for (int i = 0; i < NCONFIGS; i++)
        if (configs[i].bad)
            tcase_add_loop_test(tc, test_bad, i, i + 1);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    keys_free();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#else /* GPURSA_FX_CT */

/* Constant time, under valgrind memcheck (test_gpu_fx_ct.sh): one item of
 * key 0 (random primes, e = 65537), with the key's secrets (p, q, dp, dq,
 * qinv and every constant derived from p and q) and the input (the blinded
 * value c_b) marked undefined; memcheck reports any branch or address that
 * depends on them. The results are marked defined again before they are
 * compared with GMP. Without valgrind it only checks the results. */
#include "tests/gpu/gpu_ct.h"

/* Every variant at RSA-1024 (FAST: what `variant = auto` runs there on
 * H100/H200) and RSA-2048; with GPURSA_CT_ALL_SIZES set also IMAD and FAST at
 * RSA-3072 and 4096, whose arithmetic takes the rolled-row forms of
 * gpursa_mont_rows.h (XMAD takes them at every size): their keys alone take
 * a minute or more to make under memcheck. */
static const fx_config configs[] = {
    FX2(1024, FAST),
    FX1(1024, IMAD),
    FX1(1024, XMAD),
    FX2(2048, FAST),
    FX1(2048, IMAD),
    FX1(2048, XMAD),
    FX1(3072, IMAD),
    FX2(3072, FAST),
    FX1(4096, IMAD),
    FX2(4096, FAST),
};
#define NCONFIGS_SMALL 6
#define NCONFIGS ((int)(sizeof(configs) / sizeof(configs[0])))
static int nconfigs;

START_TEST(test_ct)
{
    const fx_config *c = &configs[_i];
    const int z = gpursa_size_index(c->bits), nl = c->bits / 32;
    const gt_rsa_key *kk = &keys[z][0];
    gpursa_rsa_keydata *priv = (gpursa_rsa_keydata *)malloc(sizeof(gpursa_rsa_keydata));
    batch b;
    mpz_t x, want, got;

    ck_assert_ptr_nonnull(priv);
    memcpy(priv, kds[z][0], sizeof(*priv));
    gt_mark_key_secret(priv);
    mpz_inits(x, want, got, NULL);
    batch_init(&b, 1, nl);
    b.keys[0] = priv;
    mpz_urandomm(x, gt_rand, kk->n);
    gt_soa_set(b.in, &b, 0, x);
    gt_mark_batch_secret(&b);
    gpursa_cuda_args a = batch_args(&b);
    fx_run_threads(c->k, c->lanes, &a, 0, (uint32_t)c->lanes);
    gt_mark_batch_public(&b);
    batch_check_untouched(&b, 1, "past the item");
    gt_soa_get(got, b.out, &b, 0);
    gt_soa_get(x, b.in, &b, 0);
    mpz_powm(want, x, kk->d, kk->n);
    ck_assert_msg(b.status[0] == GT_STATUS_CANARY && mpz_cmp(got, want) == 0, "%s %d bits: status word %#x, %s",
                  c->name, c->bits, (unsigned)b.status[0], mpz_cmp(got, want) ? "wrong result" : "right result");
    gt_batch_free(&b);
    gpursa_keyconv_cleanse(priv, sizeof(*priv));
    free(priv);
    mpz_clears(x, want, got, NULL);
}
END_TEST

/* No fork: memcheck then follows the one process. */
int main(void)
{
    gt_init();
    nconfigs = getenv("GPURSA_CT_ALL_SIZES") != NULL ? NCONFIGS : NCONFIGS_SMALL;
    /* key generation is slow under memcheck: only the keys a test uses */
    for (int i = 0; i < nconfigs; i++)
        keys_make(configs[i].bits, 1);
    Suite *s = suite_create("gpu_fx_ct");
    TCase *tc = tcase_create("ct");
    tcase_set_timeout(tc, 1200);
    tcase_add_loop_test(tc, test_ct, 0, nconfigs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    keys_free();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif /* GPURSA_FX_CT */
