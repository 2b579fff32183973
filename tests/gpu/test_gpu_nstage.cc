/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_nstage.cc - the modulus-n stages of the CUDA path (blinding before
 * the CRT kernel, unblinding after it: gpu/gpursa_coop_nstage.h)
 * run on the host by an emulated warp, against GMP. Built once per modulus
 * size with the shape of its kernel file (-DGPURSA_TEST_SHAPE=<the type of
 * gpu/gpursa_shapes.h that kernels_nstage_<bits>.cu instantiates>:
 * tests/gpu/Makefile.am).
 *
 * A group of T lanes runs one item and its lanes talk only through shuffles
 * and ballots over the group. Here the T lanes are T coroutines (ucontext) of
 * one host thread, switched round-robin at every shuffle and ballot, so each
 * lane sees what the warp would give it; a shuffle that names a lane outside
 * the group fails the test, and the lanes must pass the same number of
 * synchronisations. The factor stage before the blinding (A R mod n, for
 * A = r^e mod n and R = 2^BITS) and the CRT kernel between the stages are
 * GMP's.
 *
 * Checked: c_b == c A mod n, rinv R mod n left over rinv, and BLINDED for
 * random and edge c (0, 1, n - 1)
 * and r (1, n - 1) under keys of e = 65537 and e = 3 mixed in a warp, and for
 * an A that is not r^e (the blinding stage multiplies by the A it is given;
 * the check stage refuses what follows: test_gpu_coop.cc); BADINPUT, a zero
 * c_b and a zero rinv R, and after unblinding still BADINPUT and a zero result for c >= n,
 * r >= n, rinv >= n, r rinv != 1 and r = 0; unblinding of m = c_b^d gives
 * c^d mod n and UNBLINDED; the test hook that adds n to a result (right
 * modulo n, not below it) and a status word that was not BLINDED give a
 * status other than UNBLINDED (and never OK) and a zero result; the test
 * hook that skips an item leaves its words as they were; lanes past the
 * batch's end store nothing.
 *
 * With GPURSA_NSTAGE_CT (test_gpu_nstage_ct.sh, under valgrind memcheck) r,
 * rinv, the CRT result and the status words are marked undefined, so that
 * memcheck reports any branch or address that depends on them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "gpu/gpursa_keyconv.h"
#include <gmp.h>
extern "C" {
#include "tests/gpu/gpu_testutil.h"
}
#include "gpu/gpursa_coop_nstage.h"
#ifdef GPURSA_NSTAGE_CT
#include "tests/gpu/gpu_ct.h"
#define EMU_STACK_REGISTER(lo, hi) ((void)VALGRIND_STACK_REGISTER((lo), (hi)))
#else
#define SECRET(p, len) ((void)(p), (void)(len))
#define PUBLIC(p, len) ((void)(p), (void)(len))
#define EMU_STACK_REGISTER(lo, hi) ((void)0)
#endif

#ifndef GPURSA_TEST_SHAPE
#error "build with -DGPURSA_TEST_SHAPE=<a shape of gpu/gpursa_shapes.h> (tests/gpu/Makefile.am)"
#endif
typedef gpursa_nst<GPURSA_TEST_SHAPE> N;
enum { CO_T = N::CO_T };

#define NL GPURSA_TEST_SHAPE::H
#define BITS (32 * NL)
#define PER_WARP (32 / CO_T)            /* items (groups) a warp */

/* ---- the emulated group ------------------------------------------------------------ */

#define EMU_STACK_SIZE (1 << 16)
static ucontext_t emu_main, emu_ctx[CO_T];
static char *emu_stack[CO_T];
static int emu_cur, emu_done, emu_round[CO_T];
static uint32_t emu_slot[2][32];        /* by lane in the warp, double-buffered by round */
static uint32_t emu_tid0;               /* the group's first thread */
static const gpursa_nst_args *emu_args;
static void (*emu_stage)(const gpursa_nst_args *, uint32_t);

static const uint32_t *emu_sync(uint32_t v)
{
    int me = emu_cur, buf = emu_round[me]++ & 1;
    emu_slot[buf][(emu_tid0 + (uint32_t)me) & 31] = v;
    emu_cur = (me + 1) % CO_T;
    if (swapcontext(&emu_ctx[me], &emu_ctx[emu_cur]) != 0)
        abort();
    return emu_slot[buf];
}

uint32_t gpursa_coop_emu_shfl(uint32_t v, int src)
{
    const int base = (int)(emu_tid0 & 31);
    if (src < base || src >= base + CO_T)
        ck_abort_msg("shuffle from lane %d outside the group", src);
    return emu_sync(v)[src];
}

uint32_t gpursa_coop_emu_ballot(int pred)
{
    const uint32_t *s = emu_sync(pred != 0);
    uint32_t mask = 0, base = emu_tid0 & 31;
    for (uint32_t i = base; i < base + CO_T; i++)
        mask |= s[i] << i;
    return mask;
}

static void emu_lane_main(void)
{
    emu_stage(emu_args, emu_tid0 + (uint32_t)emu_cur);
    if (++emu_done == CO_T)
        return;                                         /* uc_link: emu_main */
    emu_cur = (emu_cur + 1) % CO_T;
    setcontext(&emu_ctx[emu_cur]);
}

/* Run group g (threads g T .. g T + T - 1) of a launch through stage fn. */
static void emu_run_group(const gpursa_nst_args *a, void (*fn)(const gpursa_nst_args *, uint32_t), uint32_t g)
{
    emu_args = a;
    emu_stage = fn;
    emu_tid0 = g * CO_T;
    emu_done = 0;
    for (int i = 0; i < CO_T; i++) {
        if (emu_stack[i] == NULL) {
            emu_stack[i] = (char *)malloc(EMU_STACK_SIZE);
            ck_assert_ptr_nonnull(emu_stack[i]);
            EMU_STACK_REGISTER(emu_stack[i], emu_stack[i] + EMU_STACK_SIZE);
        }
        emu_round[i] = 0;
        ck_assert_int_eq(getcontext(&emu_ctx[i]), 0);
        emu_ctx[i].uc_stack.ss_sp = emu_stack[i];
        emu_ctx[i].uc_stack.ss_size = EMU_STACK_SIZE;
        emu_ctx[i].uc_link = &emu_main;
        makecontext(&emu_ctx[i], emu_lane_main, 0);
    }
    emu_cur = 0;
    ck_assert_int_eq(swapcontext(&emu_main, &emu_ctx[0]), 0);
    ck_assert_int_eq(emu_done, CO_T);
    for (int i = 1; i < CO_T; i++)
        ck_assert_int_eq(emu_round[i], emu_round[0]);  /* converged throughout */
}

/* ---- batches ---------------------------------------------------------------------------- */

static int32_t hook_skip = -1, hook_corrupt = -1;
static const uint32_t *batch_re;        /* the factor stage's A R of the batch run */

/* Run the batch through a stage as the launch would: whole warps, so up to a
 * warp's worth of groups past the last item run too. */
static void stage_run(gt_batch *b, void (*fn)(const gpursa_nst_args *, uint32_t), uint32_t first,
                      uint32_t groups)
{
    gpursa_nst_args a;
    a.keys = b->keys;
    a.in = b->in;
    a.r = b->r;
    a.rinv = b->rinv;
    a.re = batch_re;
    a.out = b->out;
    a.status = b->status;
    a.count = (uint32_t)b->count;
    a.stride = b->stride;
    a.test_skip = hook_skip;
    a.test_corrupt = hook_corrupt;
    for (uint32_t g = first; g < first + groups; g++)
        emu_run_group(&a, fn, g);
}

static uint32_t whole_warps(const gt_batch *b)
{
    return ((uint32_t)b->count + PER_WARP - 1) / PER_WARP * PER_WARP;
}

/* ---- keys ------------------------------------------------------------------------------- */

static gt_rsa_key keys[2];
static gpursa_rsa_keydata *kds[2];
static int keys_n = 2;

/* ---- one batch through both stages ---------------------------------------------------- */

/* What an item is given and what it must give back */
enum { GOOD, BAD_INPUT, WRONG_A, NOT_BLINDED };
typedef struct {
    int key, kind;
    mpz_t c, r, rinv;
} item_spec;

static void spec_init(item_spec *s, int key)
{
    s->key = key;
    s->kind = GOOD;
    mpz_inits(s->c, s->r, s->rinv, NULL);
    mpz_urandomm(s->c, gt_rand, keys[key].n);
    ck_assert(gt_blind_pair(s->r, s->rinv, keys[key].n, 0));
}

static void spec_clear(item_spec *s)
{
    mpz_clears(s->c, s->r, s->rinv, NULL);
}

/* Marks for the constant-time run: r, rinv, and then the CRT result and the
 * status words, secret; what the test compares, public again. */
static void mark_secret(const gt_batch *b, int unblind)
{
    const size_t words = (size_t)NL * b->stride;
    SECRET(b->r, words * 4);
    SECRET(b->rinv, words * 4);
    if (unblind) {
        SECRET(b->out, words * 4);
        SECRET(b->status, (size_t)b->stride * 4);
    }
}

static void mark_public(const gt_batch *b)
{
    const size_t words = (size_t)NL * b->stride;
    PUBLIC(b->out, words * 4);
    PUBLIC(b->status, (size_t)b->stride * 4);
    PUBLIC(b->r, words * 4);
    PUBLIC(b->rinv, words * 4);
}

/* Run count items (stride: count + extra, columns past the batch keep their
 * canaries) through blind, GMP's CRT step, unblind; check every word. */
static void run_batch(item_spec *sp, int count, int extra, uint32_t first_group, uint32_t groups)
{
    gt_batch b;
    mpz_t t, want, got, rad, rad_inv;
    const int32_t canary = 0x5a5a5a5a;
    mpz_inits(t, want, got, rad, rad_inv, NULL);
    mpz_setbit(rad, BITS);                               /* R, the stages' radix */
    gt_batch_init(&b, count, (uint32_t)(count + extra), NL);
    uint32_t *re = (uint32_t *)calloc((size_t)NL * b.stride, 4);
    ck_assert_ptr_nonnull(re);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *k = &keys[sp[i].key];
        b.keys[i] = kds[sp[i].key];
        gt_soa_set(b.in, &b, i, sp[i].c);
        gt_soa_set(b.r, &b, i, sp[i].r);
        gt_soa_set(b.rinv, &b, i, sp[i].rinv);
        mpz_powm(t, sp[i].r, k->e, k->n);                /* A = r^e */
        if (sp[i].kind == WRONG_A) {
            mpz_add_ui(t, t, 1);
            mpz_mod(t, t, k->n);
        }
        mpz_mul(t, t, rad);                              /* the factor stage's A R */
        mpz_mod(t, t, k->n);
        gt_soa_set(re, &b, i, t);
    }
    batch_re = re;
    if (groups == 0)
        groups = whole_warps(&b);

    if (hook_skip >= 0 && hook_skip < count) {           /* sentinels: no stage stores them */
        b.status[hook_skip] = canary;
        for (int j = 0; j < NL; j++) {
            b.out[(size_t)j * b.stride + (uint32_t)hook_skip] = 0xa5a5a5a5u;
            b.rinv[(size_t)j * b.stride + (uint32_t)hook_skip] = 0xa5a5a5a5u;
        }
    }

    /* blind */
    mark_secret(&b, 0);
    stage_run(&b, N::gpursa_nst_blind, first_group, groups);
    mark_public(&b);
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    for (int i = (int)first_group; i < count && i < (int)(first_group + groups); i++) {
        const gt_rsa_key *k = &keys[sp[i].key];
        int bad = sp[i].kind == BAD_INPUT;
        if (i == hook_skip) {
            ck_assert_msg(b.status[i] == canary, "blind, skipped item %d: status written", i);
            for (int j = 0; j < NL; j++) {
                ck_assert_msg(b.out[(size_t)j * b.stride + (uint32_t)i] == 0xa5a5a5a5u,
                              "blind, skipped item %d: output written", i);
                ck_assert_msg(b.rinv[(size_t)j * b.stride + (uint32_t)i] == 0xa5a5a5a5u,
                              "blind, skipped item %d: rinv written", i);
            }
            continue;
        }
        gt_soa_get(got, b.out, &b, i);
        ck_assert_msg((uint32_t)b.status[i] == (bad ? GPURSA_DEV_ST_BADINPUT : GPURSA_DEV_ST_BLINDED),
                      "blind, item %d: status %#x", i, (unsigned)b.status[i]);
        if (bad) {
            ck_assert_msg(mpz_sgn(got) == 0, "blind, item %d: bad input with a nonzero output", i);
            gt_soa_get(got, b.rinv, &b, i);
            ck_assert_msg(mpz_sgn(got) == 0, "blind, item %d: bad input with a nonzero rinv R", i);
            mpz_powm(t, sp[i].c, k->d, k->n);           /* what a CRT kernel would give */
        } else {
            ck_assert(mpz_invert(rad_inv, rad, k->n));
            gt_soa_get(want, re, &b, i);                /* A R */
            mpz_mul(want, want, rad_inv);               /* A */
            mpz_mul(want, want, sp[i].c);
            mpz_mod(want, want, k->n);
            ck_assert_msg(mpz_cmp(got, want) == 0, "blind, item %d: c_b wrong", i);
            mpz_powm(t, got, k->d, k->n);               /* the CRT kernel: c_b^d mod n */
            gt_soa_get(got, b.rinv, &b, i);
            mpz_mul(want, sp[i].rinv, rad);
            mpz_mod(want, want, k->n);
            ck_assert_msg(mpz_cmp(got, want) == 0, "blind, item %d: rinv R wrong", i);
        }
        gt_soa_set(b.out, &b, i, t);
        if (sp[i].kind == NOT_BLINDED)                   /* preset, as if blind never ran */
            b.status[i] = (int32_t)GPURSA_DEV_ST_PRESET;
    }
    /* a status word the blinding stage did not write, set to OK beforehand:
     * the unblinding stage must not keep it */
    for (int i = (int)first_group; i < count && i < (int)(first_group + groups); i++)
        if (sp[i].kind == NOT_BLINDED && i % 2)
            b.status[i] = (int32_t)GPURSA_DEV_ST_OK;
    if (hook_skip >= 0 && hook_skip < count) {           /* sentinels */
        b.status[hook_skip] = canary;
        for (int j = 0; j < NL; j++)
            b.out[(size_t)j * b.stride + (uint32_t)hook_skip] = 0xa5a5a5a5u;
    }

    /* unblind */
    mark_secret(&b, 1);
    stage_run(&b, N::gpursa_nst_unblind, first_group, groups);
    mark_public(&b);
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    for (int i = (int)first_group; i < count && i < (int)(first_group + groups); i++) {
        const gt_rsa_key *k = &keys[sp[i].key];
        uint32_t st = (uint32_t)b.status[i];
        gt_soa_get(got, b.out, &b, i);
        if (i == hook_skip) {
            ck_assert_msg(b.status[i] == canary, "skipped item %d: status written", i);
            for (int j = 0; j < NL; j++)
                ck_assert_msg(b.out[(size_t)j * b.stride + (uint32_t)i] == 0xa5a5a5a5u,
                              "skipped item %d: output written", i);
            continue;
        }
        if ((sp[i].kind == GOOD || sp[i].kind == WRONG_A) && i != hook_corrupt) {
            /* m rinv mod n: c^d, or with a wrong A what the check must refuse */
            ck_assert(mpz_invert(rad_inv, rad, k->n));
            gt_soa_get(want, re, &b, i);
            mpz_mul(want, want, rad_inv);
            mpz_mul(want, want, sp[i].c);
            mpz_powm(want, want, k->d, k->n);
            mpz_mul(want, want, sp[i].rinv);
            mpz_mod(want, want, k->n);
            if (sp[i].kind == GOOD) {
                mpz_powm(t, sp[i].c, k->d, k->n);
                ck_assert_msg(mpz_cmp(want, t) == 0, "item %d: the test's own c^d", i);
            }
            ck_assert_msg(st == GPURSA_DEV_ST_UNBLINDED && mpz_cmp(got, want) == 0,
                          "unblind, item %d: status %#x, %s result", i, st,
                          mpz_cmp(got, want) ? "wrong" : "right");
            continue;
        }
        ck_assert_msg(st != GPURSA_DEV_ST_UNBLINDED && st != GPURSA_DEV_ST_OK,
                      "unblind, item %d (kind %d): status %#x", i, sp[i].kind, st);
        ck_assert_msg(mpz_sgn(got) == 0, "unblind, item %d (kind %d): nonzero result", i, sp[i].kind);
        if (sp[i].kind == BAD_INPUT)
            ck_assert_msg(st == GPURSA_DEV_ST_BADINPUT, "unblind, item %d: status %#x", i, st);
    }
    gt_batch_free(&b);
    free(re);
    batch_re = NULL;
    mpz_clears(t, want, got, rad, rad_inv, NULL);
}

static item_spec *specs_new(int count)
{
    item_spec *sp = (item_spec *)malloc(sizeof(*sp) * (size_t)count);
    ck_assert_ptr_nonnull(sp);
    for (int i = 0; i < count; i++)
        spec_init(&sp[i], i % keys_n);
    return sp;
}

static void specs_free(item_spec *sp, int count)
{
    for (int i = 0; i < count; i++)
        spec_clear(&sp[i]);
    free(sp);
}

#ifndef GPURSA_NSTAGE_CT
/* c of the item = s^e mod n for a small s, so that its result plus n stays
 * below 2^(32 nl): the value the corruption hook makes is then right modulo n
 * and only the out < n check refuses it */
static void small_result(item_spec *s, unsigned long v)
{
    const gt_rsa_key *k = &keys[s->key];
    mpz_set_ui(s->c, v);
    mpz_powm(s->c, s->c, k->e, k->n);
}

/* Random c and r, edge c (0, 1, n - 1) and r (1, n - 1), two keys (e = 65537,
 * e = 3) alternating within warps; a warp and a part, so that groups past the
 * end run. */
START_TEST(test_good)
{
    const int count = PER_WARP + 3;
    item_spec *sp = specs_new(count);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *k = &keys[sp[i].key];
        switch (i) {
        case 0: mpz_set_ui(sp[i].c, 0); break;
        case 1: mpz_set_ui(sp[i].c, 1); break;
        case 2: mpz_sub_ui(sp[i].c, k->n, 1); break;
        case 3: ck_assert(gt_blind_pair(sp[i].r, sp[i].rinv, k->n, 1)); break;   /* r = 1 */
        case 4: ck_assert(gt_blind_pair(sp[i].r, sp[i].rinv, k->n, 2)); break;   /* r = n - 1 */
        default: break;
        }
    }
    run_batch(sp, count, PER_WARP, 0, 0);
    specs_free(sp, count);
}
END_TEST

/* Bad inputs, each next to good items: c = n, c = 2^(32 nl) - 1, r = n,
 * rinv + n (still below 2^(32 nl)), rinv + 1, r = 0 */
START_TEST(test_bad_input)
{
    const int count = 12;                        /* the six kinds, each next to a good item */
    item_spec *sp = specs_new(count);
    mpz_t top;
    mpz_init(top);
    mpz_setbit(top, BITS);
    for (int i = 0; i < count; i += 2) {
        item_spec *s = &sp[i];
        const gt_rsa_key *k = &keys[s->key];
        s->kind = BAD_INPUT;
        switch (i / 2) {
        case 0: mpz_set(s->c, k->n); break;
        case 1: mpz_sub_ui(s->c, top, 1); break;
        case 2: mpz_set(s->r, k->n); break;
        case 3:
            mpz_add(s->rinv, s->rinv, k->n);
            if (mpz_cmp(s->rinv, top) >= 0)
                mpz_set(s->rinv, k->n);
            break;
        case 4: mpz_add_ui(s->rinv, s->rinv, 1); mpz_mod(s->rinv, s->rinv, k->n); break;
        case 5: mpz_set_ui(s->r, 0); break;
        }
    }
    run_batch(sp, count, 0, 0, 0);
    mpz_clear(top);
    specs_free(sp, count);
}
END_TEST

/* A factor A that is not r^e (the blinding multiplies by it, the
 * unblinding by rinv: the check stage must refuse the result), and status
 * words that were not BLINDED (the preset, and OK) before the unblinding
 * stage: those neither UNBLINDED nor OK, their results zero */
START_TEST(test_unblind_refuses)
{
    const int count = PER_WARP + 1;
    item_spec *sp = specs_new(count);
    for (int i = 0; i < count; i++)
        sp[i].kind = i % 3 == 0 ? WRONG_A : i % 3 == 1 ? NOT_BLINDED : GOOD;
    run_batch(sp, count, 0, 0, 0);
    specs_free(sp, count);
}
END_TEST

/* The test hooks: the corrupted item (its result + n, right modulo n) is not
 * OK and its result zero; the skipped item's words keep their sentinels through
 * both stages (the
 * batch's last, in a warp's part: the groups past the end run its item and
 * must not store it either); the others are right. */
START_TEST(test_hooks)
{
    const int count = PER_WARP + 1;
    item_spec *sp = specs_new(count);
    small_result(&sp[0], 2);
    small_result(&sp[1], 0x10001);
    hook_corrupt = _i ? 0 : 1;
    hook_skip = _i ? count - 1 : 2;
    run_batch(sp, count, 0, 0, 0);
    hook_corrupt = hook_skip = -1;
    specs_free(sp, count);
}
END_TEST

#else /* GPURSA_NSTAGE_CT */

/* Constant time, under valgrind memcheck: two items of key 0 (e = 65537) in
 * two groups, one good and one of a bad blinding pair (r rinv != 1) whose
 * status and zero output come from the same masks; r, rinv, the CRT result
 * and the status words undefined. Memcheck is ~50 times slower: only the
 * groups of the batch, not the whole warp. */
START_TEST(test_ct)
{
    const int count = 2;
    item_spec *sp = specs_new(count);
    sp[1].key = 0;
    mpz_urandomm(sp[1].c, gt_rand, keys[0].n);
    ck_assert(gt_blind_pair(sp[1].r, sp[1].rinv, keys[0].n, 0));
    mpz_add_ui(sp[1].rinv, sp[1].rinv, 1);
    sp[1].kind = BAD_INPUT;
    run_batch(sp, count, 0, 0, count);
    specs_free(sp, count);
}
END_TEST

#endif /* GPURSA_NSTAGE_CT */

/* With GPURSA_NSTAGE_CT: no fork, so that memcheck follows the one process,
 * and one key (key generation is slow under memcheck). */
int main(void)
{
    gt_init();
#ifdef GPURSA_NSTAGE_CT
    keys_n = 1;
#endif
    gt_rsa_keys_make(keys, kds, keys_n, BITS);
    Suite *s = suite_create("gpu_nstage");
    TCase *tc = tcase_create("nstage");
    tcase_set_timeout(tc, 1200);
#ifdef GPURSA_NSTAGE_CT
    tcase_add_test(tc, test_ct);
#else
    tcase_add_test(tc, test_good);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_unblind_refuses);
    tcase_add_loop_test(tc, test_hooks, 0, 2);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
#ifdef GPURSA_NSTAGE_CT
    srunner_set_fork_status(sr, CK_NOFORK);
#endif
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    gt_rsa_keys_free(keys, kds, keys_n);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
