/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_coop.cc - the COOP kernel's algorithm (gpu/gpursa_coop.h, and
 * gpu/gpursa_coop_fp.h for FP64 limbs), run on the host by an emulated warp,
 * against GMP.
 *
 * The CUDA kernel is gpursa_coop_item() called by every thread; the 2T
 * threads of an item talk only through __shfl_sync and __ballot_sync over
 * their own lanes. Here those 2T lanes are 2T coroutines (ucontext) of one
 * host thread, switched round-robin at every shuffle and ballot, so each
 * lane sees exactly what the warp would give it (and a shuffle reaching
 * outside the item fails the test), and the very same C code the GPU runs is
 * checked on a machine without a GPU. Built once per kernel shape
 * (-DGPURSA_TEST_SHAPE=<a type of gpu/gpursa_shapes.h>, the one that
 * kernels_<bits>*.cu instantiates).
 *
 * The item computes m = in^d mod n by CRT for an input in < n (the blinded
 * value the blinding stage writes; the modulus-n stages around the kernel,
 * which check and unblind, are not part of it). Checked against GMP: random
 * and edge inputs (0, 1, n-1, p, multiples of q, all-ones limbs), keys with
 * p < q and p > q and e = 3, several keys in one warp, lanes past the end of
 * the batch (they must store nothing), the lanes a warp leaves over where an
 * item's lanes do not divide 32 (run with the warp's last item, whose
 * shuffles they must not disturb), that no item's status word is written
 * (the check stage is its only writer), and that an item with a wrong
 * dp or an input the blinding stage would refuse (>= n) changes no other
 * item's result. Batches of more than one warp's items also run a second
 * warp, which in the kernels with fp_stagger reads its window
 * entries later than the first.
 *
 * In the shapes that also build the factor and check stages (epow:
 * gpu/gpursa_coop_epow.h), those too: the factor stage's A R mod n (A = r^e
 * mod n, R = 2^BITS, the modulus-n stages' radix) for random and edge r under keys of e = 65537 and e = 3 in one warp; the check
 * stage's OK (and the result kept) only for an UNBLINDED item whose o^e = c
 * mod n, and a zero result and no OK for an o wrong modulo p only, modulo q
 * only, or both, for a status word other than UNBLINDED (BADINPUT kept as
 * it is); the test hook that skips an item; lanes past the end storing
 * nothing. Under memcheck (GPURSA_TEST_CT) both stages on secret r, o and
 * status words.
 *
 * In the shapes that also build the whole operation as one kernel (fused:
 * gpu/gpursa_coop_fused.h): OK and c^d mod n for random and edge c and r
 * (r = 1, n - 1) under keys of e = 65537 and e = 3 in one warp; BADINPUT and
 * a zero result for c, r or rinv >= n and for r rinv != 1; a fault (the
 * preset) and a zero result for the item whose result the test hook makes
 * >= n; the skipped item's words untouched; lanes past the end storing
 * nothing.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <fenv.h>
#include <math.h>
#include <type_traits>
#include "gpu/gpursa_keyconv.h"
#include <gmp.h>
extern "C" {
#include "tests/gpu/gpu_testutil.h"
}
#include "gpu/gpursa_coop_epow.h"
#include "gpu/gpursa_coop_fused.h"

/* The shapes that only the constant-time tests take (tests/gpu/Makefile.am):
 * RSA-2048's FP64 lanes with a 3-bit window (the option's other width: the
 * whole table in local memory and a narrower top window), and
 * gpursa_shape_2048f with the window entry read late in half the warps. */
struct gpursa_test_shape_2048f_w3 : gpursa_shape_lanes<32, 8> {
    static constexpr bool fp64 = true;
    static constexpr int fp_w = 3;
};
struct gpursa_test_shape_2048f_st : gpursa_shape_2048f {
    static constexpr bool fp_stagger = true;
};

#ifndef GPURSA_TEST_SHAPE
#error "build with -DGPURSA_TEST_SHAPE=<a shape of gpu/gpursa_shapes.h> (tests/gpu/Makefile.am)"
#endif
typedef GPURSA_TEST_SHAPE S;
typedef gpursa_coop<S> K;                     /* the 32-bit arithmetic, the item */
typedef gpursa_epow<S> E;                     /* the factor and check stages */
/* The FP64 arithmetic's tests are built at every shape and run where S::fp64;
 * elsewhere they are built on RSA-2048's FP64 shape, to be left alone. */
typedef std::conditional<S::fp64, S, gpursa_shape_2048f>::type SF;
typedef gpursa_coop_fp<SF> F;
enum { CO_H = S::H, CO_L = S::L, CO_T = S::T, FP_F = F::FP_F, FP_L = F::FP_L };

#define BITS (64 * CO_H)
#define NL (2 * CO_H)
#define PER_WARP S::PER_WARP

/* ---- the emulated item ------------------------------------------------------------- */

/* The 2T lanes of one item (the threads its shuffles and ballots name) are
 * 2T coroutines run round-robin, with the lanes left over where the item is
 * its warp's last (gpursa_coop_place); slots are indexed by lane in the warp.
 *
 * A switch happens at every shuffle and ballot, millions of times per item.
 * glibc's swapcontext makes a sigprocmask system call at each, which was
 * most of these tests' time, so on x86-64 a switch is a few instructions
 * (emu_switch below: the callee-saved registers, the FP control words and
 * the stack pointer). Under ASan or TSan, which track stacks and intercept
 * swapcontext, in builds for shadow stacks (-fcf-protection), and on other
 * machines, the ucontext calls do it. */
#define EMU_N (S::LANES + S::SPARE)
#ifdef GPURSA_TEST_CT
/* tells memcheck that a coroutine's stack is a stack (test_ct) */
#include <valgrind/memcheck.h>
#define EMU_STACK_REGISTER(lo, hi) ((void)VALGRIND_STACK_REGISTER((lo), (hi)))
#else
#define EMU_STACK_REGISTER(lo, hi) ((void)0)
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EMU_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EMU_SANITIZED 1
#endif
/* __CET__ bit 2: built for shadow stacks, which a return onto a stack the
 * switch made would violate; glibc's swapcontext keeps them right */
#if defined(__CET__) && (__CET__ & 2)
#define EMU_SHADOW_STACK 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && !defined(EMU_SANITIZED) && !defined(EMU_SHADOW_STACK)
#define EMU_FAST_SWITCH 1
#endif
#define EMU_STACK_SIZE (1 << 16)

#ifdef EMU_FAST_SWITCH
/* Save the callee-saved registers, MXCSR and the x87 control word on this
 * stack, store the stack pointer in *save, and resume the context whose
 * stack pointer is `to` (saved the same way, or made by emu_make). */
extern "C" void gpursa_emu_switch(void **save, void *to);
__asm__(".text\n"
        ".p2align 4\n"
        ".type gpursa_emu_switch, @function\n"
        "gpursa_emu_switch:\n\t"
        "pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
        "subq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n\t"
        "movq %rsp, (%rdi)\n\t"
        "movq %rsi, %rsp\n\t"
        "ldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n\t"
        "popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\t"
        "ret\n"
        ".size gpursa_emu_switch, .-gpursa_emu_switch\n");
typedef void *emu_context;
static emu_context emu_main, emu_ctx[EMU_N], emu_dead;
#define EMU_SWITCH(from, to) gpursa_emu_switch(&(from), (to))

/* A fresh context that starts fn (which must never return) on the stack
 * [stack, stack + size): what emu_switch pops, in its order. */
static void emu_make(emu_context *ctx, char *stack, size_t size, void (*fn)(void))
{
    uint64_t *sp = (uint64_t *)(((uintptr_t)stack + size) & ~(uintptr_t)15);
    uint32_t fpctl[2];
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(fpctl[0]), "=m"(fpctl[1]));
    *--sp = 0;                                   /* fn's return address: none */
    *--sp = (uint64_t)(uintptr_t)fn;             /* where the first ret goes */
    for (int i = 0; i < 6; i++)
        *--sp = 0;                               /* rbp rbx r12-r15 */
    *--sp = (uint64_t)fpctl[0] | (uint64_t)fpctl[1] << 32;
    *ctx = sp;
}
#else
static ucontext_t emu_main, emu_ctx[EMU_N];
#define EMU_SWITCH(from, to) (swapcontext(&(from), &(to)) == 0 ? (void)0 : abort())
#endif
static char *emu_stack[EMU_N];
static int emu_cur;                      /* the coroutine running now */
static int emu_round[EMU_N];             /* per coroutine: synchronisations passed */
static uint32_t emu_slot[2][32];         /* double-buffered by round parity */
static const gpursa_coop_args *emu_args;
static void (*emu_lane_fn)(uint32_t tid);  /* instead of gpursa_coop_item, when set */
static uint32_t emu_tid0;
static int emu_n;                        /* coroutines of this item: 2T, + SPARE for a warp's last */
static int emu_done;

/* Publish v, let the item's other lanes publish, read the slots back. When
 * the last coroutine yields to the first, all have written this round's
 * slots; the next round writes the other buffer. */
static const uint32_t *emu_sync(uint32_t v)
{
    int me = emu_cur, buf = emu_round[me]++ & 1;
    emu_slot[buf][(emu_tid0 + (uint32_t)me) & 31] = v;
    emu_cur = (me + 1) % emu_n;
    EMU_SWITCH(emu_ctx[me], emu_ctx[emu_cur]);
    return emu_slot[buf];
}

uint32_t gpursa_coop_emu_shfl(uint32_t v, int src)
{
    uint32_t base = emu_tid0 & 31;
    /* not ck_assert: a passing check costs Check a write to its parent in
     * fork mode, and this runs at every shuffle */
    if (src < (int)base || src >= (int)base + S::LANES)
        ck_abort_msg("shuffle from lane %d outside the item", src);
    return emu_sync(v)[src];
}

uint32_t gpursa_coop_emu_ballot(int pred)
{
    const uint32_t *s = emu_sync(pred != 0);
    uint32_t mask = 0, base = emu_tid0 & 31;
    for (uint32_t i = base; i < base + (uint32_t)emu_n; i++)
        mask |= s[i] << i;
    return mask;
}

static void emu_lane_main(void)
{
    if (emu_lane_fn != NULL)
        emu_lane_fn(emu_tid0 + (uint32_t)emu_cur);
    else
        K::gpursa_coop_item(emu_args, emu_tid0 + (uint32_t)emu_cur);
    /* the last one back returns to the test, the others hand on */
#ifdef EMU_FAST_SWITCH
    int me = emu_cur;
    emu_cur = ++emu_done == emu_n ? me : (me + 1) % emu_n;
    gpursa_emu_switch(&emu_dead, emu_done == emu_n ? emu_main : emu_ctx[emu_cur]);
    abort();                                     /* never resumed */
#else
    if (++emu_done == emu_n)
        return;                                      /* uc_link: emu_main */
    emu_cur = (emu_cur + 1) % emu_n;
    setcontext(&emu_ctx[emu_cur]);
#endif
}

/* Run the threads of the item in slot `slot` of the warp (tid0 ..
 * tid0+2T-1, and the lanes left over after the warp's last). */
static void emu_run_item(const gpursa_coop_args *a, uint32_t warp, uint32_t slot)
{
    emu_args = a;
    emu_tid0 = 32 * warp + S::LANES * slot;
    emu_n = S::LANES + (slot == PER_WARP - 1 ? S::SPARE : 0);
    emu_done = 0;
    for (int i = 0; i < emu_n; i++) {
        if (emu_stack[i] == NULL) {
            emu_stack[i] = (char *)malloc(EMU_STACK_SIZE);
            ck_assert_ptr_nonnull(emu_stack[i]);
            EMU_STACK_REGISTER(emu_stack[i], emu_stack[i] + EMU_STACK_SIZE);
        }
        emu_round[i] = 0;
#ifdef EMU_FAST_SWITCH
        emu_make(&emu_ctx[i], emu_stack[i], EMU_STACK_SIZE, emu_lane_main);
#else
        ck_assert_int_eq(getcontext(&emu_ctx[i]), 0);
        emu_ctx[i].uc_stack.ss_sp = emu_stack[i];
        emu_ctx[i].uc_stack.ss_size = EMU_STACK_SIZE;
        emu_ctx[i].uc_link = &emu_main;
        makecontext(&emu_ctx[i], emu_lane_main, 0);
#endif
    }
    emu_cur = 0;
    EMU_SWITCH(emu_main, emu_ctx[0]);
    ck_assert_int_eq(emu_done, emu_n);
    for (int i = 1; i < emu_n; i++)
        ck_assert_int_eq(emu_round[i], emu_round[0]);  /* converged throughout */
}

/* ---- batches ---------------------------------------------------------------------------- */

typedef gt_batch batch; /* gpu_testutil.h: NL limbs an item, stride = count */

static void batch_init(batch *b, int count)
{
    gt_batch_init(b, count, (uint32_t)count, NL);
}

/* Run the threads of item slots first .. first + slots - 1 of the batch's
 * launch (PER_WARP slots a warp). */
static void batch_run_range(batch *b, uint32_t first, uint32_t slots)
{
    gpursa_coop_args a;
    a.keys = b->keys;
    a.in = b->in;
    a.out = b->out;
    a.count = (uint32_t)b->count;
    a.stride = b->stride;
    for (uint32_t i = first; i < first + slots; i++)
        emu_run_item(&a, i / PER_WARP, i % PER_WARP);
}

#ifndef GPURSA_TEST_CT
/* Run the batch as the launch would: whole warps, so up to a warp's worth of
 * threads past the last item run too (and must store nothing). */
static void batch_run(batch *b)
{
    batch_run_range(b, 0, ((uint32_t)b->count + PER_WARP - 1) / PER_WARP
                              * PER_WARP);
}
#endif

/* ---- keys and inputs -------------------------------------------------------------------- */

static gt_rsa_key keys[3];
static gpursa_rsa_keydata *kds[3];
static int keys_n = 3;                   /* keys made (the first keys_n) */

static void keys_make(void)
{
    for (int s = 0; s < keys_n; s++) {
        gt_rsa_keygen(&keys[s], BITS, s == 1 ? 3 : 65537, s);
        kds[s] = (gpursa_rsa_keydata *)malloc(sizeof(*kds[s]));
        if (kds[s] == NULL || gpursa_keyconv_load(kds[s], &keys[s].km) != GPURSA_GPU_OK)
            abort();
    }
}

static void keys_free(void)
{
    for (int s = 0; s < keys_n; s++) {
        gpursa_keyconv_cleanse(kds[s], sizeof(*kds[s]));
        free(kds[s]);
        gt_rsa_key_free(&keys[s]);
    }
}

#ifdef GPURSA_TEST_CT
#include "tests/gpu/gpu_ct.h"
#endif
/* ---- the FP64 Montgomery multiplication and squaring alone ---------------------------- */

/* One item's lanes run fp_lane: both groups multiply the same operands (F
 * limbs of 52 bits), each keeps its own results. */
static struct {
    uint64_t m[FP_F], a[FP_F], b[FP_F], mp;
    uint64_t sq[2][FP_F], mul[2][FP_F];
} fpt;

/* c for thread tid, its warp whole (as gpursa_fp_exp sets it); returns
 * its group (0: p, 1: q) */
static int fp_lane_at(gpursa_coop_ctx *c, uint32_t tid)
{
    uint32_t sub;
    int spare;
    (void)K::gpursa_coop_place(c, tid, &sub, &spare);
    K::gpursa_coop_ctx_at(c, tid, sub);
    c->mask = 0xffffffffu;
    return (int)(sub / CO_T);
}

static void fp_lane(uint32_t tid)
{
    gpursa_coop_ctx c;
    double m[FP_L], a[FP_L], b[FP_L], r[FP_L];
    const int h = fp_lane_at(&c, tid);
    F::gpursa_fp_load(&c, m, fpt.m);
    F::gpursa_fp_load(&c, a, fpt.a);
    F::gpursa_fp_load(&c, b, fpt.b);
    F::gpursa_fp_sqr(&c, r, a, m, fpt.mp);
    for (int l = 0; l < FP_L; l++)
        fpt.sq[h][c.k * FP_L + l] = gpursa_fp_d2u52(r[l]);
    F::gpursa_fp_mul(&c, r, a, b, m, fpt.mp);
    for (int l = 0; l < FP_L; l++)
        fpt.mul[h][c.k * FP_L + l] = gpursa_fp_d2u52(r[l]);
}

/* z = the sum of v[i] 2^(52 i) */
static void fp_value(mpz_t z, const uint64_t *v)
{
    mpz_set_ui(z, 0);
    for (int i = FP_F - 1; i >= 0; i--) {
        mpz_mul_2exp(z, z, 52);
        mpz_add_ui(z, z, (unsigned long)v[i]);
    }
}

/* z from limbs, each at most 2^52 (the lazy settle's) */
static void fp_get(mpz_t z, const uint64_t *v)
{
    for (int i = 0; i < FP_F; i++)
        if (v[i] > 1ull << 52)
            ck_abort_msg("limb %d not normalised: %#llx", i, (unsigned long long)v[i]);
    fp_value(z, v);
}

static void fp_set(uint64_t *v, const mpz_t z)
{
    mpz_t t;
    mpz_init_set(t, z);
    for (int i = 0; i < FP_F; i++) {
        v[i] = (uint64_t)mpz_getlimbn(t, 0) & GPURSA_FP_M52;
        mpz_fdiv_q_2exp(t, t, 52);
    }
    ck_assert_int_eq(mpz_sgn(t), 0);
    mpz_clear(t);
}

/* a^2 and a b by fp_lane modulo m (a, b < 2m): each result r of each group
 * below 2m with r R52 = a^2, resp. a b, mod m */
static void fp_check(const mpz_t m, const mpz_t a, const mpz_t b)
{
    mpz_t r, x, y;
    mpz_inits(r, x, y, NULL);
    fp_set(fpt.a, a);
    fp_set(fpt.b, b);
#ifdef GPURSA_TEST_CT
    SECRET(fpt.m, sizeof(fpt.m));
    SECRET(&fpt.mp, sizeof(fpt.mp));
    SECRET(fpt.a, sizeof(fpt.a));
    SECRET(fpt.b, sizeof(fpt.b));
#endif
    emu_lane_fn = fp_lane;
    emu_run_item(NULL, 0, 0);
    emu_lane_fn = NULL;
#ifdef GPURSA_TEST_CT
    PUBLIC(&fpt, sizeof(fpt));
#endif
    for (int h = 0; h < 2; h++)
        for (int op = 0; op < 2; op++) {
            fp_get(r, op ? fpt.mul[h] : fpt.sq[h]);
            mpz_mul_2exp(x, r, 52 * FP_F);
            mpz_mul(y, a, op ? b : a);
            mpz_sub(x, x, y);
            mpz_mul_2exp(y, m, 1);
            if (mpz_cmp(r, y) >= 0 || !mpz_divisible_p(x, m))
                ck_abort_msg("%s, group %d: wrong", op ? "multiplication" : "squaring", h);
        }
    mpz_clears(r, x, y, NULL);
}

/* fpt.m, fpt.mp from key k's p (even k) or q */
static void fp_modulus(mpz_t m, int k)
{
    const gpursa_rsa_keydata *kd = kds[k / 2];
    mpz_set(m, k % 2 ? keys[k / 2].q : keys[k / 2].p);
    memcpy(fpt.m, k % 2 ? kd->q52 : kd->p52, sizeof(fpt.m));
    fpt.mp = k % 2 ? kd->q0inv52 : kd->p0inv52;
}

/* ---- the factor and check stages (gpursa_coop_epow.h) ----------------------------------- */

static gpursa_epow_args epow_args;
static int epow_check;

static void epow_lane(uint32_t tid)
{
    E::gpursa_epow_item(&epow_args, tid, epow_check);
}

/* Run item slots first .. first + slots - 1 of a launch of either stage:
 * x from b->r (factor) or b->out (check), c from b->in, out to b->out. */
static void epow_run(batch *b, int check, int32_t skip, uint32_t first, uint32_t slots)
{
    epow_args.keys = b->keys;
    epow_args.x = check ? b->out : b->r;
    epow_args.c = b->in;
    epow_args.out = b->out;
    epow_args.status = b->status;
    epow_args.count = (uint32_t)b->count;
    epow_args.stride = b->stride;
    epow_args.test_skip = skip;
    epow_check = check;
    emu_lane_fn = epow_lane;
    for (uint32_t i = first; i < first + slots; i++)
        emu_run_item(NULL, i / PER_WARP, i % PER_WARP);
    emu_lane_fn = NULL;
}

/* What an item of the check stage is given */
enum { EP_GOOD, EP_WRONG_P, EP_WRONG_Q, EP_WRONG, EP_BLINDED, EP_PRESET, EP_BADINPUT, EP_OK_BEFORE };

/* ---- the whole operation in one kernel (gpursa_coop_fused.h), where S::fused ------------ */
static constexpr bool FUSED = S::fused;
/* the item's own shape wherever the whole modulus fits its lanes as one group
 * (the constant-time test runs the fused item on its RSA-2048 FP64 shape) */
typedef std::conditional<(4 * S::T <= 32), S, gpursa_shape_2048f>::type SU;

static gpursa_fused_args fused_args;

static void fused_lane(uint32_t tid)
{
    gpursa_fused<SU>::gpursa_fused_item(&fused_args, tid);
}

#ifndef GPURSA_TEST_CT
static void make_input(mpz_t c, const gt_rsa_key *kk, int k)
{
    switch (k) {
    case 0: mpz_set_ui(c, 0); break;
    case 1: mpz_set_ui(c, 1); break;
    case 2: mpz_sub_ui(c, kk->n, 1); break;
    case 3: mpz_set(c, kk->p); break;
    case 4: mpz_mul_ui(c, kk->q, 3); break;
    case 5: gt_operand(c, 5, kk->n, NL); break;     /* all-ones limbs mod n */
    default: mpz_urandomm(c, gt_rand, kk->n); break;
    }
}

/* count items, item i with key (i % nkeys), inputs k0 + i; every result
 * against GMP (in^d mod n), no status word written. Two warps and a part,
 * so lanes past the end are exercised. */
static void run_good(int nkeys, int k0, int count)
{
    batch b;
    mpz_t c, want, got;
    mpz_inits(c, want, got, NULL);
    batch_init(&b, count);
    mpz_t *wants = (mpz_t *)malloc(sizeof(mpz_t) * (size_t)count);
    ck_assert_ptr_nonnull(wants);
    for (int i = 0; i < count; i++) {
        int s = i % nkeys;
        b.keys[i] = kds[s];
        make_input(c, &keys[s], k0 + i);
        gt_soa_set(b.in, &b, i, c);
        mpz_init(wants[i]);
        mpz_powm(wants[i], c, keys[s].d, keys[s].n);
    }
    batch_run(&b);
    for (int i = 0; i < count; i++) {
        gt_soa_get(got, b.out, &b, i);
        if (b.status[i] != GT_STATUS_CANARY || mpz_cmp(got, wants[i]) != 0)
            ck_abort_msg("coop %d bits item %d (key %d, input %d): status word %#x, %s", BITS, i, i % nkeys,
                         k0 + i, (unsigned)b.status[i], mpz_cmp(got, wants[i]) ? "wrong result" : "right result");
        mpz_clear(wants[i]);
    }
    free(wants);
    gt_batch_free(&b);
    mpz_clears(c, want, got, NULL);
}

/* GPURSA_TEST_SCALE > 1 (the sanitizer trees, where the emulation is ten
 * times slower): one warp and a part, and only the edge and failure tests */
static int scaled;

START_TEST(test_edges)
{
    run_good(1, 0, scaled ? PER_WARP + 1 : PER_WARP * 2 + 1);
}
END_TEST

START_TEST(test_random_keys)
{
    /* edge-case key shapes (p < q, p > q, e = 3) mixed in one warp */
    run_good(3, 6, PER_WARP * 2 - 1);
}
END_TEST

START_TEST(test_two_keys_random)
{
    run_good(2, 100, PER_WARP * 2);
}
END_TEST

/* Items the check stage rejects, next to good ones in the same warp: a
 * key with a wrong dp (its result is not in^d mod n, so the check fails) and inputs the blinding stage refuses (n and 2^bits - 1: the kernel
 * reads them all the same). Good items stay right, and no status word is
 * written. */
START_TEST(test_bad_items_alone)
{
    gpursa_rsa_keydata *wrong = (gpursa_rsa_keydata *)malloc(sizeof(*wrong));
    gt_rsa_key *kk = &keys[0];
    batch b;
    const int count = scaled ? (PER_WARP < 4 ? 4 : PER_WARP) : PER_WARP * 2;
    mpz_t c, got, want;
    ck_assert_ptr_nonnull(wrong);
    memcpy(wrong, kds[0], sizeof(*wrong));
    wrong->dp[1] ^= 0x10u;
    mpz_inits(c, got, want, NULL);
    batch_init(&b, count);
    for (int i = 0; i < count; i++) {
        b.keys[i] = kds[0];
        mpz_urandomm(c, gt_rand, kk->n);
        switch (i % 4) {
        case 0: mpz_set(c, kk->n); break;                     /* in == n */
        case 1: mpz_set_ui(c, 0); mpz_setbit(c, BITS); mpz_sub_ui(c, c, 1); break;  /* 2^bits - 1 */
        case 2: b.keys[i] = wrong; break;                     /* a wrong dp */
        case 3: break;                                        /* good */
        }
        gt_soa_set(b.in, &b, i, c);
    }
    batch_run(&b);
    for (int i = 0; i < count; i++) {
        ck_assert_msg(b.status[i] == GT_STATUS_CANARY, "item %d: status word %#x written", i,
                      (unsigned)b.status[i]);
        gt_soa_get(got, b.out, &b, i);
        gt_soa_get(c, b.in, &b, i);
        mpz_powm(want, c, kk->d, kk->n);
        if (i % 4 == 3)
            ck_assert_msg(mpz_cmp(got, want) == 0, "item %d: good item with a wrong result", i);
        else if (i % 4 == 2)
            ck_assert_msg(mpz_cmp(got, want) != 0, "item %d: a wrong dp gave the right result", i);
    }
    gt_batch_free(&b);
    gpursa_keyconv_cleanse(wrong, sizeof(*wrong));
    free(wrong);
    mpz_clears(c, got, want, NULL);
}
END_TEST

/* Lanes past the end of a batch store nothing: the words after the last
 * item's results (a larger stride) keep their canary. */
START_TEST(test_past_end)
{
    batch b;
    mpz_t c, want, got;
    const int count = 1;
    mpz_inits(c, want, got, NULL);
    batch_init(&b, PER_WARP);                 /* room for a whole warp */
    b.count = count;
    for (int i = 0; i < count; i++) {
        b.keys[i] = kds[1];
        mpz_urandomm(c, gt_rand, keys[1].n);
        gt_soa_set(b.in, &b, i, c);
    }
    batch_run(&b);
    gt_soa_get(got, b.out, &b, 0);
    mpz_powm(want, c, keys[1].d, keys[1].n);
    ck_assert(b.status[0] == GT_STATUS_CANARY && mpz_cmp(got, want) == 0);
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    gt_batch_free(&b);
    mpz_clears(c, want, got, NULL);
}
END_TEST

/* The factor stage: A R mod n (A = r^e mod n, R = 2^BITS), keys of e = 65537,
 * e = 3 and another 65537
 * in turn, r random and the edges 0, 1, n - 1, p and a multiple of q; a warp
 * and a part, the words past the batch untouched, no status word written. */
START_TEST(test_epow_factor)
{
    const int count = scaled ? PER_WARP + 1 : PER_WARP * 2 + 1;
    batch b;
    mpz_t r, want, got;
    mpz_inits(r, want, got, NULL);
    gt_batch_init(&b, count, (uint32_t)(count + PER_WARP), NL);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        b.keys[i] = kds[i % keys_n];
        make_input(r, kk, i < 5 ? i : 100 + i);
        gt_soa_set(b.r, &b, i, r);
    }
    epow_run(&b, 0, -1, 0, ((uint32_t)count + PER_WARP - 1) / PER_WARP * PER_WARP);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        gt_soa_get(r, b.r, &b, i);
        mpz_powm(want, r, kk->e, kk->n);
        mpz_mul_2exp(want, want, BITS);
        mpz_mod(want, want, kk->n);
        gt_soa_get(got, b.out, &b, i);
        ck_assert_msg(mpz_cmp(got, want) == 0, "factor, item %d (key %d): A R wrong", i, i % keys_n);
        ck_assert_msg(b.status[i] == GT_STATUS_CANARY, "factor, item %d: status written", i);
    }
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    gt_batch_free(&b);
    mpz_clears(r, want, got, NULL);
}
END_TEST

/* The check stage, item i of kind kinds[i % nk] (key i % keys_n, c random or
 * an edge): right o and UNBLINDED give OK and o; o wrong modulo p only, q
 * only or both, or a word other than UNBLINDED, give no OK and a zero
 * result (BADINPUT kept); the skipped item keeps its words. */
static void run_check(const int *kinds, int nk, int count, int32_t skip)
{
    batch b;
    mpz_t c, o, t, got;
    mpz_inits(c, o, t, got, NULL);
    gt_batch_init(&b, count, (uint32_t)(count + PER_WARP), NL);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        const int kind = kinds[i % nk];
        b.keys[i] = kds[i % keys_n];
        make_input(c, kk, i < 3 ? i : 100 + i);
        gt_soa_set(b.in, &b, i, c);
        mpz_powm(o, c, kk->d, kk->n);
        switch (kind) {
        case EP_WRONG_P:                                 /* o + q: right mod q only */
            mpz_add(o, o, kk->q);
            mpz_mod(o, o, kk->n);
            break;
        case EP_WRONG_Q:                                 /* o + p: right mod p only */
            mpz_add(o, o, kk->p);
            mpz_mod(o, o, kk->n);
            break;
        case EP_WRONG:
            mpz_add_ui(o, o, 1);
            mpz_mod(o, o, kk->n);
            break;
        default: break;
        }
        gt_soa_set(b.out, &b, i, o);
        b.status[i] = (int32_t)(kind == EP_BLINDED ? GPURSA_DEV_ST_BLINDED
                                : kind == EP_PRESET ? GPURSA_DEV_ST_PRESET
                                : kind == EP_BADINPUT ? GPURSA_DEV_ST_BADINPUT
                                : kind == EP_OK_BEFORE ? GPURSA_DEV_ST_OK : GPURSA_DEV_ST_UNBLINDED);
    }
    epow_run(&b, 1, skip, 0, ((uint32_t)count + PER_WARP - 1) / PER_WARP * PER_WARP);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        const int kind = kinds[i % nk];
        const uint32_t st = (uint32_t)b.status[i];
        gt_soa_get(got, b.out, &b, i);
        gt_soa_get(c, b.in, &b, i);
        mpz_powm(o, c, kk->d, kk->n);
        if (i == skip) {                                 /* as it was given */
            ck_assert_msg(kind == EP_GOOD && st == GPURSA_DEV_ST_UNBLINDED && mpz_cmp(got, o) == 0,
                          "skipped item %d: words written", i);
            continue;
        }
        if (kind == EP_GOOD) {
            ck_assert_msg(st == GPURSA_DEV_ST_OK && mpz_cmp(got, o) == 0, "check, item %d: status %#x, %s result",
                          i, st, mpz_cmp(got, o) ? "wrong" : "right");
            continue;
        }
        ck_assert_msg(st != GPURSA_DEV_ST_OK && mpz_sgn(got) == 0, "check, item %d (kind %d): status %#x, result %s",
                      i, kind, st, mpz_sgn(got) ? "kept" : "zero");
        ck_assert_msg(st == (kind == EP_BADINPUT ? GPURSA_DEV_ST_BADINPUT : GPURSA_DEV_ST_PRESET),
                      "check, item %d (kind %d): status %#x", i, kind, st);
    }
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    gt_batch_free(&b);
    mpz_clears(c, o, t, got, NULL);
}

START_TEST(test_epow_check)
{
    static const int kinds[] = { EP_GOOD, EP_WRONG_P, EP_GOOD, EP_WRONG_Q, EP_WRONG, EP_BLINDED,
                                 EP_GOOD, EP_PRESET, EP_BADINPUT, EP_OK_BEFORE };
    run_check(kinds, 10, scaled ? PER_WARP + 1 : PER_WARP * 2 + 1, -1);
}
END_TEST

/* The test hook: the skipped item (good) keeps its status word and result */
START_TEST(test_epow_skip)
{
    static const int kinds[] = { EP_GOOD };
    run_check(kinds, 1, PER_WARP + 1, _i ? PER_WARP : 0);
}
END_TEST

/* What an item of the fused kernel is given */
enum { FU_GOOD, FU_C_BIG, FU_R_BIG, FU_RINV_WRONG, FU_RINV_BIG, FU_CORRUPT, FU_SKIP };

/* Item i of kind kinds[i % nk], key i % keys_n, c an edge or random, r random
 * (or the edges 1 and n - 1): GOOD gives OK and c^d mod n; an input out of
 * range or a wrong r^-1 gives BADINPUT and a zero result; the corrupted item
 * (n added to its result) a fault (the preset) and a zero result; the
 * skipped item keeps its words. */
static void run_fused(const int *kinds, int nk, int count)
{
    batch b;
    mpz_t c, r, rinv, want, got;
    int32_t skip = -1, corrupt = -1;
    mpz_inits(c, r, rinv, want, got, NULL);
    gt_batch_init(&b, count, (uint32_t)(count + PER_WARP), NL);
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        const int kind = kinds[i % nk];
        b.keys[i] = kds[i % keys_n];
        make_input(c, kk, i < 6 ? i : 100 + i);
        if (i == 1)
            mpz_set_ui(r, 1);
        else if (i == 2)
            mpz_sub_ui(r, kk->n, 1);
        else
            do
                mpz_urandomm(r, gt_rand, kk->n);
            while (!mpz_invert(rinv, r, kk->n));
        ck_assert(mpz_invert(rinv, r, kk->n));
        if (kind == FU_C_BIG)
            mpz_add_ui(c, kk->n, (unsigned long)i);
        if (kind == FU_R_BIG)
            mpz_add_ui(r, kk->n, 3);
        if (kind == FU_RINV_WRONG)
            mpz_add_ui(rinv, rinv, 1);
        if (kind == FU_RINV_BIG)
            mpz_add_ui(rinv, kk->n, 7);
        if (kind == FU_SKIP && skip < 0)
            skip = i;
        if (kind == FU_CORRUPT && corrupt < 0)
            corrupt = i;
        gt_soa_set(b.in, &b, i, c);
        gt_soa_set(b.r, &b, i, r);
        gt_soa_set(b.rinv, &b, i, rinv);
        b.status[i] = (int32_t)GPURSA_DEV_ST_PRESET;
    }
    fused_args.keys = b.keys;
    fused_args.in = b.in;
    fused_args.r = b.r;
    fused_args.rinv = b.rinv;
    fused_args.out = b.out;
    fused_args.status = b.status;
    fused_args.count = (uint32_t)count;
    fused_args.stride = b.stride;
    fused_args.test_skip = skip;
    fused_args.test_corrupt = corrupt;
    emu_lane_fn = fused_lane;
    for (uint32_t i = 0; i < ((uint32_t)count + PER_WARP - 1) / PER_WARP * PER_WARP; i++)
        emu_run_item(NULL, i / PER_WARP, i % PER_WARP);
    emu_lane_fn = NULL;
    for (int i = 0; i < count; i++) {
        const gt_rsa_key *kk = &keys[i % keys_n];
        const int kind = kinds[i % nk];
        const uint32_t st = (uint32_t)b.status[i];
        gt_soa_get(got, b.out, &b, i);
        gt_soa_get(c, b.in, &b, i);
        if (i == skip) {
            ck_assert_msg(st == GPURSA_DEV_ST_PRESET, "fused, skipped item %d: status %#x", i, st);
            continue;
        }
        if (kind == FU_GOOD || kind == FU_SKIP || (kind == FU_CORRUPT && i != corrupt)) {
            mpz_powm(want, c, kk->d, kk->n);
            ck_assert_msg(st == GPURSA_DEV_ST_OK && mpz_cmp(got, want) == 0,
                          "fused, item %d (key %d): status %#x, %s result", i, i % keys_n, st,
                          mpz_cmp(got, want) ? "wrong" : "right");
            continue;
        }
        ck_assert_msg(mpz_sgn(got) == 0, "fused, item %d (kind %d): a result", i, kind);
        ck_assert_msg(st == (i == corrupt ? GPURSA_DEV_ST_PRESET : GPURSA_DEV_ST_BADINPUT),
                      "fused, item %d (kind %d): status %#x", i, kind, st);
    }
    ck_assert_int_eq(gt_batch_first_written(&b, count), -1);
    gt_batch_free(&b);
    mpz_clears(c, r, rinv, want, got, NULL);
}

START_TEST(test_fused)
{
    static const int kinds[] = { FU_GOOD, FU_GOOD, FU_GOOD, FU_C_BIG, FU_GOOD, FU_R_BIG, FU_SKIP,
                                 FU_RINV_WRONG, FU_GOOD, FU_CORRUPT, FU_RINV_BIG, FU_GOOD };
    run_fused(kinds, 12, scaled ? PER_WARP + 1 : PER_WARP * 2 + 1);
}
END_TEST

/* gpursa_fp_mul and gpursa_fp_sqr on their own, modulo both primes of each
 * key, against GMP: every pair of edge operands (0, 1, m - 1, m, m + 1,
 * 2m - 1, the largest below 2m whose limbs are all ones from the bottom, and
 * a random one below 2m) and random pairs below 2m. */
START_TEST(test_fp_mont)
{
    mpz_t m, e[8], b;
    const int ne = 8, nr = gt_random_cases(40);
    mpz_init(m);
    mpz_init(b);
    for (int i = 0; i < ne; i++)
        mpz_init(e[i]);
    for (int k = 0; k < 6; k++) {
        fp_modulus(m, k);
        mpz_set_ui(e[0], 0);
        mpz_set_ui(e[1], 1);
        mpz_sub_ui(e[2], m, 1);
        mpz_set(e[3], m);
        mpz_add_ui(e[4], m, 1);
        mpz_mul_2exp(e[5], m, 1);
        mpz_sub_ui(e[5], e[5], 1);
        mpz_set_ui(e[6], 1);                             /* 2^j - 1 < 2m, j largest */
        while (mpz_cmp(e[6], e[5]) <= 0)
            mpz_mul_2exp(e[6], e[6], 1);
        mpz_fdiv_q_2exp(e[6], e[6], 1);
        mpz_sub_ui(e[6], e[6], 1);
        mpz_mul_2exp(e[7], m, 1);
        mpz_urandomm(e[7], gt_rand, e[7]);
        for (int i = 0; i < ne * ne; i++)
            fp_check(m, e[i / ne], e[i % ne]);
        mpz_mul_2exp(b, m, 1);
        for (int i = 0; i < nr; i++) {
            mpz_mul_2exp(e[0], m, 1);
            mpz_urandomm(e[0], gt_rand, e[0]);
            mpz_urandomm(e[1], gt_rand, b);
            fp_check(m, e[0], e[1]);
        }
    }
    for (int i = 0; i < ne; i++)
        mpz_clear(e[i]);
    mpz_clear(b);
    mpz_clear(m);
}
END_TEST

/* gpursa_fp_settle alone: the group's columns fps.col (both groups the
 * same), its limbs as integers in fps.out */
static struct {
    uint64_t col[FP_F], out[2][FP_F];
    int lazy;
} fps;

static void fp_settle_lane(uint32_t tid)
{
    gpursa_coop_ctx c;
    uint64_t acc[FP_L];
    double r[FP_L];
    const int h = fp_lane_at(&c, tid);
    for (int l = 0; l < FP_L; l++)
        acc[l] = fps.col[c.k * FP_L + l];
    F::gpursa_fp_settle(&c, r, acc, fps.lazy);
    for (int l = 0; l < FP_L; l++)
        fps.out[h][c.k * FP_L + l] = gpursa_fp_d2u52(r[l]);
}

/* Both settles keep the value mod R52; the full one leaves limbs below
 * 2^52, the lazy one (every multiplication's but the last) limbs of at most
 * 2^52: its second carry pass stops one limb above where a carry came in.
 * Random columns below 2^63, and columns whose carries run: out of lane 0
 * into a lane 1 of all ones, and out of it into lane 2's limb 0 (all ones
 * too). */
START_TEST(test_fp_settle)
{
    const uint64_t ones = GPURSA_FP_M52;
    const int nr = gt_random_cases(200);
    mpz_t want, got;
    mpz_inits(want, got, NULL);
    for (int i = 0; i < 2 * (nr + 3); i++) {
        const int k = i / 2;
        fps.lazy = i % 2;
        for (int l = 0; l < FP_F; l++) {
            if (k < nr)
                fps.col[l] = (uint64_t)gmp_urandomb_ui(gt_rand, 31) << 32 | gmp_urandomb_ui(gt_rand, 32);
            else if (k == nr)                             /* the stopped carry */
                fps.col[l] = l == FP_L - 1 ? ones + 1 : l >= FP_L && l <= 2 * FP_L ? ones : 0;
            else if (k == nr + 1)                         /* all ones, a carry in */
                fps.col[l] = l == 0 ? 2 * ones + 1 : ones;
            else                                          /* the largest columns */
                fps.col[l] = ~0ull >> 1;
        }
        emu_lane_fn = fp_settle_lane;
        emu_run_item(NULL, 0, 0);
        emu_lane_fn = NULL;
        fp_value(want, fps.col);
        mpz_fdiv_r_2exp(want, want, 52 * FP_F);             /* mod R52 */
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < FP_F; l++)
                ck_assert_msg(fps.out[h][l] < ones + (fps.lazy ? 2 : 1),
                              "case %d, lazy %d, group %d: limb %d is %#llx", k, fps.lazy, h, l,
                              (unsigned long long)fps.out[h][l]);
            fp_value(got, fps.out[h]);
            mpz_fdiv_r_2exp(got, got, 52 * FP_F);
            ck_assert_msg(mpz_cmp(got, want) == 0, "case %d, lazy %d, group %d: value", k, fps.lazy, h);
        }
        /* the carry out of lane 0 makes lane 1's limb 0 2^52 in the first
         * pass; the second moves it on to limb 1, and stops */
        if (k == nr && fps.lazy && FP_L > 1)
            ck_assert_uint_eq(fps.out[0][FP_L + 1], ones + 1);
    }
    mpz_clears(want, got, NULL);
}
END_TEST

/* The conversions between 32-bit slices and 52-bit limbs, the final
 * reduction into 32-bit slices and the test for 1, alone: fpc.x (words) and
 * fpc.f (limbs) the same in both groups, the results per group. */
static struct {
    uint32_t x[CO_H], m[CO_H];
    uint64_t f[FP_F];
    uint64_t from[2][FP_F];
    uint32_t to[2][CO_H], out[2][CO_H], is1[2];
} fpc;

static void fp_convert_lane(uint32_t tid)
{
    gpursa_coop_ctx c;
    uint32_t x[CO_L], m[CO_L], r[CO_L];
    double f[FP_L];
    const int h = fp_lane_at(&c, tid);
    K::gpursa_coop_load(&c, x, fpc.x);
    F::gpursa_fp_from32(&c, f, x);
    for (int l = 0; l < FP_L; l++)
        fpc.from[h][c.k * FP_L + l] = gpursa_fp_d2u52(f[l]);
    F::gpursa_fp_load(&c, f, fpc.f);
    F::gpursa_fp_to32(&c, r, f);
    for (int l = 0; l < CO_L; l++)
        fpc.to[h][c.k * CO_L + l] = r[l];
    K::gpursa_coop_load(&c, m, fpc.m);
    F::gpursa_fp_out(&c, r, f, m);
    for (int l = 0; l < CO_L; l++)
        fpc.out[h][c.k * CO_L + l] = r[l];
    fpc.is1[h] = F::gpursa_fp_is1(&c, f);
}

/* Modulo both primes of each key: x (below 2^(32 H)) and f (below 2m,
 * which passes 2^(32 H)) at the edges (0, 1, m - 1, m, m + 1, 2^(32 H) - 1
 * where below 2m, 2m - 1, a number with every other bit set) and at random.
 * from32 must give x's value in limbs below 2^52, to32 f mod 2^(32 H),
 * fp_out f mod m, fp_is1 all ones exactly for f = 1. */
START_TEST(test_fp_convert)
{
    const int ne = 8, nr = gt_random_cases(30);
    mpz_t m, top, v, got, want, red;
    mpz_inits(m, top, v, got, want, red, NULL);
    mpz_setbit(top, 32 * CO_H);                              /* 2^(32 H) */
    for (int k = 0; k < 6; k++) {
        fp_modulus(m, k);
        gt_to_limbs(fpc.m, CO_H, m);
        for (int i = 0; i < ne + nr; i++) {
            switch (i) {
            case 0: mpz_set_ui(v, 0); break;
            case 1: mpz_set_ui(v, 1); break;
            case 2: mpz_sub_ui(v, m, 1); break;
            case 3: mpz_set(v, m); break;
            case 4: mpz_add_ui(v, m, 1); break;
            case 5: mpz_sub_ui(v, top, 1); break;
            case 6: mpz_mul_2exp(v, m, 1); mpz_sub_ui(v, v, 1); break;
            case 7:
                mpz_set_ui(v, 0);
                for (int b = 0; b < 32 * CO_H; b += 2)
                    mpz_setbit(v, (mp_bitcnt_t)b);
                break;
            default:
                mpz_mul_2exp(v, m, 1);
                mpz_urandomm(v, gt_rand, v);
                break;
            }
            /* x: v's low 32 H bits; f: v itself (below 2m) */
            mpz_fdiv_r_2exp(want, v, 32 * CO_H);
            mpz_mod(red, v, m);
            gt_to_limbs(fpc.x, CO_H, want);
            fp_set(fpc.f, v);
            emu_lane_fn = fp_convert_lane;
            emu_run_item(NULL, 0, 0);
            emu_lane_fn = NULL;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < FP_F; l++)
                    ck_assert_msg(fpc.from[h][l] <= GPURSA_FP_M52, "case %d, group %d: limb %d", i, h, l);
                fp_value(got, fpc.from[h]);
                ck_assert_msg(mpz_cmp(got, want) == 0, "case %d, group %d: from32", i, h);
                gt_from_limbs(got, fpc.to[h], CO_H);
                ck_assert_msg(mpz_cmp(got, want) == 0, "case %d, group %d: to32", i, h);
                gt_from_limbs(got, fpc.out[h], CO_H);
                ck_assert_msg(mpz_cmp(got, red) == 0, "case %d, group %d: fp_out", i, h);
                ck_assert_uint_eq(fpc.is1[h], mpz_cmp_ui(v, 1) == 0 ? 0xffffffffu : 0u);
            }
        }
    }
    mpz_clears(m, top, v, got, want, red, NULL);
}
END_TEST

/* The device's limb product (gpursa_fp_prod under __CUDACC__: fma_rz(a, b,
 * 2^104), then fma(a, b, 2^104 + 2^52 - hi)) done here with the C library's
 * fma in the same rounding modes, against the 128-bit product the
 * emulation uses: the bits of hi and lo must be the product's two halves
 * plus the exponent bits of 2^104 and 2^52, for edge limbs (up to 2^52, a
 * lazily settled limb 0) and random ones. And the same for q = x m' mod
 * 2^52. */
static void fma_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
    volatile double va = a, vb = b, h, l;
    ck_assert_int_eq(fesetround(FE_TOWARDZERO), 0);
    h = fma(va, vb, 0x1p104);
    ck_assert_int_eq(fesetround(FE_TONEAREST), 0);
    l = fma(va, vb, (0x1p104 + 0x1p52) - h);
    *hi = gpursa_fp_bits(h);
    *lo = gpursa_fp_bits(l);
}

START_TEST(test_fp_prod)
{
    const uint64_t m52 = (1ull << 52) - 1;
    const uint64_t edge[] = {0, 1, 2, 3, m52, m52 - 1, m52 + 1, 1ull << 51, (1ull << 51) - 1, (1ull << 51) + 1,
                             1ull << 26, (1ull << 26) + 1, 0xfffffffffull, 0x5555555555555ull};
    const int ne = (int)(sizeof(edge) / sizeof(edge[0])), nr = gt_random_cases(200000);
    for (int i = 0; i < ne * ne + nr; i++) {
        uint64_t a, b, hi, lo, ehi, elo;
        if (i < ne * ne) {
            a = edge[i / ne];
            b = edge[i % ne];
        } else {
            a = ((uint64_t)gmp_urandomb_ui(gt_rand, 26) << 26 | gmp_urandomb_ui(gt_rand, 26)) >> (i % 7);
            b = (uint64_t)gmp_urandomb_ui(gt_rand, 26) << 26 | gmp_urandomb_ui(gt_rand, 26);
        }
        fma_prod((double)a, (double)b, &hi, &lo);
        gpursa_fp_prod((double)a, (double)b, &ehi, &elo);
        ck_assert_msg(hi == ehi && lo == elo, "product of %#llx and %#llx: fma %#llx:%#llx, exact %#llx:%#llx",
                      (unsigned long long)a, (unsigned long long)b, (unsigned long long)hi,
                      (unsigned long long)lo, (unsigned long long)ehi, (unsigned long long)elo);
        ck_assert_uint_eq(lo & ~m52, GPURSA_FP_LO_BIAS);
        ck_assert_msg(((unsigned __int128)(hi - GPURSA_FP_HI_BIAS) << 52 | (lo & m52)) == (unsigned __int128)a * b,
                      "halves of %#llx and %#llx",
                      (unsigned long long)a, (unsigned long long)b);
        /* q: the low half of (x mod 2^52) m', x a column sum of up to 63 bits */
        uint64_t x = a | (b << 11);
        fma_prod((double)(x & m52), (double)b, &hi, &lo);
        ck_assert_uint_eq(lo & m52, (uint64_t)gpursa_fp_q(x, b));
    }
}
END_TEST

int main(void)
{
    gt_init();
    scaled = gt_random_cases(4) < 4;
    keys_make();
    Suite *s = suite_create("gpu_coop");
    TCase *tc = tcase_create("coop");
    /* the emulation's work grows with the square of the size and the
     * exponent's length: a 4096-bit item is about 8 times a 2048-bit one */
    tcase_set_timeout(tc, BITS <= 2048 ? 600 : 600 * (BITS / 1024) * (BITS / 1024) / 4);
    tcase_add_test(tc, test_edges);
    if (!scaled) {
        tcase_add_test(tc, test_random_keys);
        tcase_add_test(tc, test_two_keys_random);
        tcase_add_test(tc, test_past_end);
    }
    tcase_add_test(tc, test_bad_items_alone);
    if (S::epow) {
        tcase_add_test(tc, test_epow_factor);
        tcase_add_test(tc, test_epow_check);
        tcase_add_loop_test(tc, test_epow_skip, 0, 2);
    }
    if (FUSED)
        tcase_add_test(tc, test_fused);
    if (S::fp64) {
        tcase_add_test(tc, test_fp_prod);
        tcase_add_test(tc, test_fp_settle);
        tcase_add_test(tc, test_fp_convert);
        tcase_add_test(tc, test_fp_mont);
    }
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    keys_free();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#else /* GPURSA_TEST_CT */

/* Constant time, under valgrind memcheck (test_gpu_coop_ct.sh): the same
 * emulated warp with the key's secrets (p, q, dp, dq, qinv and every
 * constant derived from p and q, the 32-bit and the 52-bit ones) and the
 * inputs (the blinded values c_b) marked undefined. Memcheck reports any branch
 * or address that depends on them. Results are marked defined again before
 * they are compared with GMP. Without valgrind it only checks the results. */
#include "tests/gpu/gpu_ct.h"

/* One item (its 2T lanes only: memcheck is ~50 times slower) of key _i
 * (0: random primes, e = 65537; with GPURSA_CT_ALL_KEYS set also 2: p just
 * above 2^(h-1), q just below 2^h): the batch's first, or with
 * S::fp_stagger the first of the second warp, which reads its
 * window entries late. */
#define CT_ITEM (S::fp_stagger ? PER_WARP : 0)
START_TEST(test_ct)
{
    const int count = CT_ITEM + 1;
    gpursa_rsa_keydata *priv[3];
    batch b;
    mpz_t c, want, got;

    mpz_inits(c, want, got, NULL);
    batch_init(&b, count);
    for (int k = 0; k < keys_n; k++) {
        priv[k] = (gpursa_rsa_keydata *)malloc(sizeof(*priv[k]));
        if (priv[k] == NULL)
            abort();
        memcpy(priv[k], kds[k], sizeof(*priv[k]));
        gt_mark_key_secret(priv[k]);
    }
    for (int i = CT_ITEM; i < count; i++) {                  /* the items that run */
        b.keys[i] = priv[_i];
        mpz_urandomm(c, gt_rand, keys[_i].n);
        gt_soa_set(b.in, &b, i, c);
    }
    gt_mark_batch_secret(&b);
    batch_run_range(&b, CT_ITEM, 1);
    gt_mark_batch_public(&b);
    for (int i = CT_ITEM; i < count; i++) {
        gt_soa_get(got, b.out, &b, i);
        gt_soa_get(c, b.in, &b, i);
        mpz_powm(want, c, keys[_i].d, keys[_i].n);
        ck_assert_msg(b.status[i] == GT_STATUS_CANARY && mpz_cmp(got, want) == 0,
                      "coop %d bits item %d: status word %#x, %s", BITS, i, (unsigned)b.status[i],
                      mpz_cmp(got, want) ? "wrong result" : "right result");
    }
    gt_batch_free(&b);
    for (int k = 0; k < keys_n; k++) {
        gpursa_keyconv_cleanse(priv[k], sizeof(*priv[k]));
        free(priv[k]);
    }
    mpz_clears(c, want, got, NULL);
}
END_TEST

/* The factor and check stages on key 0's secrets: the factor stage on a
 * secret r, then the check stage on two items whose o, status words and
 * outcome are secret: a right o (OK) and a wrong one (refused, from the
 * same masks). */
START_TEST(test_ct_epow)
{
    const int count = 2;
    gpursa_rsa_keydata *priv = (gpursa_rsa_keydata *)malloc(sizeof(*priv));
    const gt_rsa_key *kk = &keys[0];
    const size_t words = (size_t)NL * 2;
    batch b;
    mpz_t r, c, o, got;
    ck_assert_ptr_nonnull(priv);
    memcpy(priv, kds[0], sizeof(*priv));
    gt_mark_key_secret(priv);
    mpz_inits(r, c, o, got, NULL);
    batch_init(&b, count);
    for (int i = 0; i < count; i++) {
        b.keys[i] = priv;
        mpz_urandomm(r, gt_rand, kk->n);
        gt_soa_set(b.r, &b, i, r);
    }
    SECRET(b.r, words * 4);
    epow_run(&b, 0, -1, 0, (uint32_t)count);
    PUBLIC(b.r, words * 4);
    PUBLIC(b.out, words * 4);
    for (int i = 0; i < count; i++) {
        gt_soa_get(r, b.r, &b, i);
        mpz_powm(o, r, kk->e, kk->n);
        mpz_mul_2exp(o, o, BITS);
        mpz_mod(o, o, kk->n);
        gt_soa_get(got, b.out, &b, i);
        ck_assert_msg(mpz_cmp(got, o) == 0, "factor, item %d: A R wrong", i);
    }
    for (int i = 0; i < count; i++) {
        mpz_urandomm(c, gt_rand, kk->n);
        gt_soa_set(b.in, &b, i, c);
        mpz_powm(o, c, kk->d, kk->n);
        mpz_add_ui(o, o, (unsigned long)i);              /* item 1: wrong */
        mpz_mod(o, o, kk->n);
        gt_soa_set(b.out, &b, i, o);
        b.status[i] = (int32_t)GPURSA_DEV_ST_UNBLINDED;
    }
    SECRET(b.out, words * 4);
    SECRET(b.status, (size_t)count * 4);
    epow_run(&b, 1, -1, 0, (uint32_t)count);
    gt_mark_batch_public(&b);
    ck_assert_int_eq(b.status[0], (int32_t)GPURSA_DEV_ST_OK);
    ck_assert_int_eq(b.status[1], (int32_t)GPURSA_DEV_ST_PRESET);
    gt_soa_get(got, b.out, &b, 1);
    ck_assert_int_eq(mpz_sgn(got), 0);
    gt_batch_free(&b);
    gpursa_keyconv_cleanse(priv, sizeof(*priv));
    free(priv);
    mpz_clears(r, c, o, got, NULL);
}
END_TEST

/* gpursa_fp_mul and gpursa_fp_sqr alone on secret operands, modulus and
 * m' (key 0's p, random operands below 2m) */
START_TEST(test_ct_fp_mont)
{
    mpz_t m, a, b;
    mpz_inits(m, a, b, NULL);
    fp_modulus(m, 0);
    mpz_mul_2exp(b, m, 1);
    mpz_urandomm(a, gt_rand, b);
    mpz_urandomm(b, gt_rand, b);
    fp_check(m, a, b);
    mpz_clears(m, a, b, NULL);
}
END_TEST

/* The whole operation in one kernel (gpursa_coop_fused.h) on the program's
 * RSA-2048 FP64 shape, one item: r, rinv and the key secret, the status word,
 * the result and the rinv R_n it leaves marked public only after the run. */
START_TEST(test_ct_fused)
{
    gpursa_rsa_keydata *priv = (gpursa_rsa_keydata *)malloc(sizeof(*priv));
    const gt_rsa_key *kk = &keys[0];
    const size_t words = (size_t)NL * 2;
    batch b;
    mpz_t r, rinv, c, want, got;
    ck_assert_ptr_nonnull(priv);
    memcpy(priv, kds[0], sizeof(*priv));
    gt_mark_key_secret(priv);
    mpz_inits(r, rinv, c, want, got, NULL);
    batch_init(&b, 1);
    b.keys[0] = priv;
    do
        mpz_urandomm(r, gt_rand, kk->n);
    while (!mpz_invert(rinv, r, kk->n));
    mpz_urandomm(c, gt_rand, kk->n);
    gt_soa_set(b.r, &b, 0, r);
    gt_soa_set(b.rinv, &b, 0, rinv);
    gt_soa_set(b.in, &b, 0, c);
    b.status[0] = (int32_t)GPURSA_DEV_ST_PRESET;
    SECRET(b.r, words * 4);
    SECRET(b.rinv, words * 4);
    fused_args.keys = b.keys;
    fused_args.in = b.in;
    fused_args.r = b.r;
    fused_args.rinv = b.rinv;
    fused_args.out = b.out;
    fused_args.status = b.status;
    fused_args.count = 1;
    fused_args.stride = b.stride;
    fused_args.test_skip = -1;
    fused_args.test_corrupt = -1;
    emu_lane_fn = fused_lane;
    emu_run_item(NULL, 0, 0);
    emu_lane_fn = NULL;
    gt_mark_batch_public(&b);
    mpz_powm(want, c, kk->d, kk->n);
    gt_soa_get(got, b.out, &b, 0);
    ck_assert_int_eq(b.status[0], (int32_t)GPURSA_DEV_ST_OK);
    ck_assert_msg(mpz_cmp(got, want) == 0, "fused: wrong result");
    gt_batch_free(&b);
    gpursa_keyconv_cleanse(priv, sizeof(*priv));
    free(priv);
    mpz_clears(r, rinv, c, want, got, NULL);
}
END_TEST

/* No fork: memcheck then follows the one process. With
 * GPURSA_TEST_CT_MONT (the FP64 lane shapes other than RSA-2048's 4-lane one) only
 * the multiplication and squaring: a whole operation of 3072 or 4096 bits
 * takes minutes under memcheck, and the rest of the item is the same code
 * at every shape. */
int main(void)
{
    gt_init();
    /* key generation is slow under memcheck: only the keys a test uses */
    keys_n = getenv("GPURSA_CT_ALL_KEYS") != NULL ? 3 : 1;
#ifdef GPURSA_TEST_CT_MONT
    keys_n = 1;
#endif
    keys_make();
    Suite *s = suite_create("gpu_coop_ct");
    TCase *tc = tcase_create("ct");
    tcase_set_timeout(tc, 1200);
    if (S::fp64)
        tcase_add_test(tc, test_ct_fp_mont);
    if (S::epow)
        tcase_add_test(tc, test_ct_epow);
    if (std::is_same<S, gpursa_shape_2048f>::value)   /* the same code at every shape */
        tcase_add_test(tc, test_ct_fused);
#ifndef GPURSA_TEST_CT_MONT
    tcase_add_loop_test(tc, test_ct, 0, 1);
    if (getenv("GPURSA_CT_ALL_KEYS") != NULL)       /* ~90 s more under memcheck */
        tcase_add_loop_test(tc, test_ct, 2, 3);
#else
    (void)test_ct;
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    keys_free();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif /* GPURSA_TEST_CT */
