/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop.h - the COOP variant: one RSA private operation on 2*T threads
 * of a warp, T threads per CRT half, L limbs of every half-length number per
 * thread (T * L = H, the limbs of p).
 *
 * Why: the one- and two-thread kernels run each Montgomery multiplication as
 * one long dependent chain in one thread (H^2 multiply-adds in a row), so a
 * lone RSA-2048 operation waits on that whole chain however idle the GPU
 * is, and the queue has to wait that long for every small batch. Spread over
 * T threads the chain is H/L iterations of 2L multiply-adds plus three warp
 * shuffles each: about T/3 times shorter, with the same instruction count
 * per item, so small batches finish in a few milliseconds and large ones
 * still fill the GPU.
 *
 * Representation. Lane k of a group (k = 0..T-1) holds limbs kL..kL+L-1 of
 * every half-length number. A double-length number (2H limbs: the input,
 * the result) is a "lo" slice (limbs kL..) and a "hi" slice (limbs H+kL..).
 *
 * Montgomery multiplication (CIOS, operand scanning over b):
 *   for each limb b_i (broadcast from its lane):
 *     acc += a * b_i                  each lane its L limbs, carry out -> cy
 *     q = acc_0 * m' (lane 0, whose acc_0 never receives a carry), broadcast
 *     acc += q * m                    likewise, carry out -> cy
 *     acc >>= 32: each lane takes its upper neighbour's lowest limb, plus
 *                 its own pending cy, as its new top limb
 *   cy stays per lane (a small number: < 8 after each shift) so there is no
 *   carry ripple inside the loop. Once at the end the pending carries are
 *   added in and the 0/1 carries that remain are resolved for the whole
 *   group at once with two ballots: with G the lanes that generate a carry
 *   and P the lanes whose limbs are all ones, the lanes receiving a carry
 *   are ((G << 1) + P) ^ P (an integer addition does the look-ahead).
 *   Borrows in subtractions are resolved the same way (P: limbs all zero).
 *
 * Constant time: control flow depends only on public values (T, L, H, the
 * lane's position, the public exponent e); secret-dependent carries and
 * comparisons are values (ballot masks, selects), never branches; the
 * window table is read whole, the entry kept by mask.
 *
 * The includer defines GPURSA_COOP_H (limbs per half) and GPURSA_COOP_L
 * (limbs per lane, dividing H; at most 32 lanes, 2*H/L, an item). A warp
 * holds 32 / (2T) items; where 2T does not divide 32 (T = 3: five items of
 * six lanes) the lanes left over mirror lanes of the warp's last item
 * (gpursa_coop_place). Compiled by nvcc the
 * functions are device functions over warp intrinsics; compiled by a C
 * compiler they call gpursa_coop_emu_shfl/ballot, which a test provides to
 * run a warp of threads in lock step on the host (tests/gpu/test_gpu_coop.c),
 * so the exact algorithm is verified without a GPU.
 */
#ifndef GPURSA_COOP_H_INCLUDED
#define GPURSA_COOP_H_INCLUDED

#include <stdint.h>
#include "gpu/gpursa_rsa_op.h"
#include "gpu/gpursa_cuda_status.h"

#if !defined(GPURSA_COOP_H) || !defined(GPURSA_COOP_L)
#error "define GPURSA_COOP_H and GPURSA_COOP_L before including gpursa_coop.h"
#endif

#define GPURSA_COOP_T (GPURSA_COOP_H / GPURSA_COOP_L)   /* lanes per CRT half */
#define GPURSA_COOP_LANES (2 * GPURSA_COOP_T)           /* lanes per item */
#define GPURSA_COOP_GMASK ((1u << GPURSA_COOP_T) - 1u)
#define GPURSA_COOP_W 4                                 /* window bits */
#define GPURSA_COOP_PER_WARP (32 / GPURSA_COOP_LANES)   /* items a warp */
/* lanes of a warp left over (0, or 2 at T = 3) */
#define GPURSA_COOP_SPARE (32 - GPURSA_COOP_PER_WARP * GPURSA_COOP_LANES)

#if GPURSA_COOP_H % GPURSA_COOP_L != 0 || GPURSA_COOP_LANES > 32
#error "COOP: L must divide H, and 2H/L lanes fit a warp"
#endif

#ifdef __CUDACC__
#define GPURSA_COOP_FN static __device__ __forceinline__
#define GPURSA_COOP_UNROLL _Pragma("unroll")
#define GPURSA_COOP_ROLLED _Pragma("unroll 1")
#define gpursa_coop_shfl(c, v, src) __shfl_sync((c)->mask, (v), (src))
#define gpursa_coop_ballot(c, pred) __ballot_sync((c)->mask, (pred))
#else
#define GPURSA_COOP_FN static inline
#define GPURSA_COOP_UNROLL
#define GPURSA_COOP_ROLLED
/* host emulation, provided by the test program: the 2T lanes of an item
 * call these in the same order */
uint32_t gpursa_coop_emu_shfl(uint32_t v, int src);
uint32_t gpursa_coop_emu_ballot(int pred);
#define gpursa_coop_shfl(c, v, src) gpursa_coop_emu_shfl((v), (src))
#define gpursa_coop_ballot(c, pred) gpursa_coop_emu_ballot(pred)
#endif

enum { CO_H = GPURSA_COOP_H, CO_L = GPURSA_COOP_L, CO_T = GPURSA_COOP_T };

/* The arguments of one launch (device pointers), those of gpursa_cuda_args
 * that the CRT kernel reads: in is the blinded input, out gets m = in^d mod n. */
typedef struct {
    const void *const *keys;
    const uint32_t *in;
    uint32_t *out;
    uint32_t count, stride;
} gpursa_coop_args;

/* Where this thread sits: lane in the warp, index k in its group of T, the
 * group's first lane, and the mask of its item's 2T lanes. Every shuffle and
 * ballot names only the item's lanes: items of one warp may take different
 * paths (a public e of another length) and must not wait for each other. */
typedef struct {
    int lane, k, gbase;
    uint32_t mask;
} gpursa_coop_ctx;

/* Thread tid (its global index): returns its item (which may lie past the
 * batch's end), sets *sub to its index among the item's 2T lanes and
 * *spare for a lane left over. Item i has lanes 2T (i mod PER_WARP) .. +
 * 2T - 1 of warp i / PER_WARP. A lane left over, 2T PER_WARP + s, mirrors
 * lane s of the warp's last item: it takes that lane's place in its
 * context, so that it runs the same code on the same values with the same
 * shuffles, and it stores nothing (gpursa_coop_item). Its bits in a ballot
 * are outside the group's (gpursa_coop_group_bits), and the mask of that
 * item's lanes includes it.
 * Where lanes are left over this sets *c as well; elsewhere
 * gpursa_coop_ctx_at does, after the key's first loads. Same values either
 * way: each place is where ptxas allocates those kernels' registers best
 * (the 3-lane kernel spills 248 bytes, not 368; the FP64 kernels of 4 and
 * 8 lanes compile as they would without lanes left over). */
GPURSA_COOP_FN uint32_t gpursa_coop_place(gpursa_coop_ctx *c, uint32_t tid, uint32_t *sub, int *spare)
{
#if GPURSA_COOP_SPARE > 0
    const uint32_t lane = tid & 31u;
    uint32_t slot = lane / GPURSA_COOP_LANES, s = lane % GPURSA_COOP_LANES;
    *spare = slot == GPURSA_COOP_PER_WARP;
    s = *spare ? lane - GPURSA_COOP_PER_WARP * GPURSA_COOP_LANES : s;
    slot = *spare ? GPURSA_COOP_PER_WARP - 1 : slot;
    c->mask = ((1u << GPURSA_COOP_LANES) - 1u) << (slot * GPURSA_COOP_LANES)
              | (slot == GPURSA_COOP_PER_WARP - 1 ? ~0u << (GPURSA_COOP_PER_WARP * GPURSA_COOP_LANES) : 0u);
    c->lane = (int)(slot * GPURSA_COOP_LANES + s);
    c->k = (int)(s % CO_T);
    c->gbase = c->lane - c->k;
    *sub = s;
    return (tid >> 5) * GPURSA_COOP_PER_WARP + slot;
#else
    (void)c;
    *spare = 0;
    *sub = tid % GPURSA_COOP_LANES;
    return tid / GPURSA_COOP_LANES;
#endif
}

/* ... the rest of its context (sub from gpursa_coop_place) */
GPURSA_COOP_FN void gpursa_coop_ctx_at(gpursa_coop_ctx *c, uint32_t tid, uint32_t sub)
{
#if GPURSA_COOP_SPARE > 0
    (void)c, (void)tid, (void)sub;                          /* set by gpursa_coop_place */
#else
    c->lane = (int)(tid & 31u);
    c->k = (int)(sub % CO_T);
    c->gbase = c->lane - c->k;
    c->mask = GPURSA_COOP_LANES == 32 ? 0xffffffffu
                                      : ((1u << (GPURSA_COOP_LANES & 31)) - 1u) << (c->lane - (int)sub);
#endif
}

/* The lane of the same position in the item's other group (sub: this
 * lane's index among the item's) */
GPURSA_COOP_FN int gpursa_coop_partner(const gpursa_coop_ctx *c, uint32_t sub)
{
#if GPURSA_COOP_SPARE > 0
    return sub < CO_T ? c->lane + CO_T : c->lane - CO_T;
#else
    (void)sub;
    return c->lane ^ CO_T;                                   /* items start at multiples of 2T */
#endif
}

/* ---- group-wide carries ------------------------------------------------------- */

/* This group's bits of a warp ballot. */
GPURSA_COOP_FN uint32_t gpursa_coop_group_bits(const gpursa_coop_ctx *c, int pred)
{
    return (gpursa_coop_ballot(c, pred) >> c->gbase) & GPURSA_COOP_GMASK;
}

/* Carry (or borrow) look-ahead over the group: g = this lane produces one,
 * p = it passes one on. Returns the one this lane receives; *out = the one
 * leaving the top lane. */
GPURSA_COOP_FN uint32_t gpursa_coop_resolve(const gpursa_coop_ctx *c, int g, int p, uint32_t *out)
{
    uint64_t G = gpursa_coop_group_bits(c, g), P = gpursa_coop_group_bits(c, p);
    uint64_t K = ((G << 1) + P) ^ P;
    *out = (uint32_t)(K >> CO_T) & 1u;
    return (uint32_t)(K >> c->k) & 1u;
}

/* The same over a double-length number: the lo slices are lanes 0..T-1 of a
 * 2T-lane group, the hi slices lanes T..2T-1. Returns the carry into the lo
 * slice, *hi_in the one into the hi slice, *out the one leaving the top. */
GPURSA_COOP_FN uint32_t gpursa_coop_resolve2(const gpursa_coop_ctx *c, int g_lo, int p_lo, int g_hi,
                                             int p_hi, uint32_t *hi_in, uint32_t *out)
{
    uint64_t G = gpursa_coop_group_bits(c, g_lo) | ((uint64_t)gpursa_coop_group_bits(c, g_hi) << CO_T);
    uint64_t P = gpursa_coop_group_bits(c, p_lo) | ((uint64_t)gpursa_coop_group_bits(c, p_hi) << CO_T);
    uint64_t K = ((G << 1) + P) ^ P;
    *out = (uint32_t)(K >> (2 * CO_T)) & 1u;
    *hi_in = (uint32_t)(K >> (CO_T + c->k)) & 1u;
    return (uint32_t)(K >> c->k) & 1u;
}

/* ---- per-lane slices ---------------------------------------------------------- */

/* x += v (v < 2^32), returns the carry out (0 or 1) */
GPURSA_COOP_FN uint32_t gpursa_coop_add1(uint32_t *x, uint32_t v)
{
    uint64_t s = v;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        s += x[l];
        x[l] = (uint32_t)s;
        s >>= 32;
    }
    return (uint32_t)s;
}

/* x -= v (v < 2^32), returns the borrow out (0 or 1) */
GPURSA_COOP_FN uint32_t gpursa_coop_sub1(uint32_t *x, uint32_t v)
{
    uint32_t b = v;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        uint32_t t = x[l] - b;
        b = (uint32_t)(x[l] < b);
        x[l] = t;
    }
    return b;
}

/* r = a + b (+ cin), returns the carry out */
GPURSA_COOP_FN uint32_t gpursa_coop_add(uint32_t *r, const uint32_t *a, const uint32_t *b, uint32_t cin)
{
    uint64_t s = cin;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        s += (uint64_t)a[l] + b[l];
        r[l] = (uint32_t)s;
        s >>= 32;
    }
    return (uint32_t)s;
}

/* r = a - b, returns the borrow out */
GPURSA_COOP_FN uint32_t gpursa_coop_sub(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
    uint64_t d = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        d = (uint64_t)a[l] - b[l] - (uint32_t)(d >> 63);
        r[l] = (uint32_t)d;
    }
    return (uint32_t)(d >> 63);
}

GPURSA_COOP_FN int gpursa_coop_all(const uint32_t *x, uint32_t v)
{
    uint32_t d = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        d |= x[l] ^ v;
    return d == 0;
}

/* acc += x * y (x: this lane's L limbs, y one limb); returns the carry out.
 * On the GPU one carry chain over the low halves of the products and one
 * over the high halves (PTX mad.lo.cc / madc.hi.cc, 2L + 1 instructions;
 * the flag lives only inside one asm statement, hence one per L); the C
 * loop (a 64-bit multiply-add and a carry add per limb) is what the host
 * emulation runs and what other lane widths fall back to. The chain's top
 * cannot overflow: hi(x_{L-1} y) <= 2^32 - 2 plus two carries. */
#if defined(__CUDACC__) && (GPURSA_COOP_L == 2 || GPURSA_COOP_L == 4 || GPURSA_COOP_L == 6 \
                            || GPURSA_COOP_L == 8)
#define GPURSA_PTX_MAD(op, d, x, y) op ".u32 %" #d ", %" #x ", %" #y ", %" #d ";\n\t"
#define GPURSA_PTX_ACC2(a) "+r"(a[0]), "+r"(a[1])
#define GPURSA_PTX_ACC4(a) GPURSA_PTX_ACC2(a), "+r"(a[2]), "+r"(a[3])
#define GPURSA_PTX_ACC6(a) GPURSA_PTX_ACC4(a), "+r"(a[4]), "+r"(a[5])
#define GPURSA_PTX_ACC8(a) GPURSA_PTX_ACC6(a), "+r"(a[6]), "+r"(a[7])
#define GPURSA_PTX_IN2(x) "r"(x[0]), "r"(x[1])
#define GPURSA_PTX_IN4(x) GPURSA_PTX_IN2(x), "r"(x[2]), "r"(x[3])
#define GPURSA_PTX_IN6(x) GPURSA_PTX_IN4(x), "r"(x[4]), "r"(x[5])
#define GPURSA_PTX_IN8(x) GPURSA_PTX_IN6(x), "r"(x[6]), "r"(x[7])
GPURSA_COOP_FN uint32_t gpursa_coop_mac(uint32_t *acc, const uint32_t *x, uint32_t y)
{
    uint32_t c;
#if GPURSA_COOP_L == 2
    asm(GPURSA_PTX_MAD("mad.lo.cc", 0, 3, 5)
        GPURSA_PTX_MAD("madc.lo.cc", 1, 4, 5)
        "addc.u32 %2, 0, 0;\n\t"
        GPURSA_PTX_MAD("mad.hi.cc", 1, 3, 5)
        GPURSA_PTX_MAD("madc.hi", 2, 4, 5)
        : GPURSA_PTX_ACC2(acc), "=&r"(c)
        : GPURSA_PTX_IN2(x), "r"(y));
#elif GPURSA_COOP_L == 4
    asm(GPURSA_PTX_MAD("mad.lo.cc", 0, 5, 9)
        GPURSA_PTX_MAD("madc.lo.cc", 1, 6, 9)
        GPURSA_PTX_MAD("madc.lo.cc", 2, 7, 9)
        GPURSA_PTX_MAD("madc.lo.cc", 3, 8, 9)
        "addc.u32 %4, 0, 0;\n\t"
        GPURSA_PTX_MAD("mad.hi.cc", 1, 5, 9)
        GPURSA_PTX_MAD("madc.hi.cc", 2, 6, 9)
        GPURSA_PTX_MAD("madc.hi.cc", 3, 7, 9)
        GPURSA_PTX_MAD("madc.hi", 4, 8, 9)
        : GPURSA_PTX_ACC4(acc), "=&r"(c)
        : GPURSA_PTX_IN4(x), "r"(y));
#elif GPURSA_COOP_L == 6
    asm(GPURSA_PTX_MAD("mad.lo.cc", 0, 7, 13)
        GPURSA_PTX_MAD("madc.lo.cc", 1, 8, 13)
        GPURSA_PTX_MAD("madc.lo.cc", 2, 9, 13)
        GPURSA_PTX_MAD("madc.lo.cc", 3, 10, 13)
        GPURSA_PTX_MAD("madc.lo.cc", 4, 11, 13)
        GPURSA_PTX_MAD("madc.lo.cc", 5, 12, 13)
        "addc.u32 %6, 0, 0;\n\t"
        GPURSA_PTX_MAD("mad.hi.cc", 1, 7, 13)
        GPURSA_PTX_MAD("madc.hi.cc", 2, 8, 13)
        GPURSA_PTX_MAD("madc.hi.cc", 3, 9, 13)
        GPURSA_PTX_MAD("madc.hi.cc", 4, 10, 13)
        GPURSA_PTX_MAD("madc.hi.cc", 5, 11, 13)
        GPURSA_PTX_MAD("madc.hi", 6, 12, 13)
        : GPURSA_PTX_ACC6(acc), "=&r"(c)
        : GPURSA_PTX_IN6(x), "r"(y));
#elif GPURSA_COOP_L == 8
    asm(GPURSA_PTX_MAD("mad.lo.cc", 0, 9, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 1, 10, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 2, 11, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 3, 12, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 4, 13, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 5, 14, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 6, 15, 17)
        GPURSA_PTX_MAD("madc.lo.cc", 7, 16, 17)
        "addc.u32 %8, 0, 0;\n\t"
        GPURSA_PTX_MAD("mad.hi.cc", 1, 9, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 2, 10, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 3, 11, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 4, 12, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 5, 13, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 6, 14, 17)
        GPURSA_PTX_MAD("madc.hi.cc", 7, 15, 17)
        GPURSA_PTX_MAD("madc.hi", 8, 16, 17)
        : GPURSA_PTX_ACC8(acc), "=&r"(c)
        : GPURSA_PTX_IN8(x), "r"(y));
#endif
    return c;
}
#else
GPURSA_COOP_FN uint32_t gpursa_coop_mac(uint32_t *acc, const uint32_t *x, uint32_t y)
{
    uint32_t carry = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        uint64_t p = (uint64_t)x[l] * y + acc[l] + carry;
        acc[l] = (uint32_t)p;
        carry = (uint32_t)(p >> 32);
    }
    return carry;
}
#endif

/* r = mask ? a : b (mask all ones or zero) */
GPURSA_COOP_FN void gpursa_coop_select(uint32_t *r, uint32_t mask, const uint32_t *a, const uint32_t *b)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = (a[l] & mask) | (b[l] & ~mask);
}

GPURSA_COOP_FN void gpursa_coop_copy(uint32_t *r, const uint32_t *a)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = a[l];
}

/* this lane's slice of a half-length number in (global) memory */
GPURSA_COOP_FN void gpursa_coop_load(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *v)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = v[c->k * CO_L + l];
}

/* this lane's lo and hi slices of item `item` of a SoA array */
GPURSA_COOP_FN void gpursa_coop_load_soa(const gpursa_coop_ctx *c, uint32_t *lo, uint32_t *hi,
                                         const uint32_t *soa, uint32_t item, uint32_t stride)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        lo[l] = soa[(size_t)(c->k * CO_L + l) * stride + item];
        hi[l] = soa[(size_t)(CO_H + c->k * CO_L + l) * stride + item];
    }
}

/* All ones when the group's half-length values x and y are equal. */
GPURSA_COOP_FN uint32_t gpursa_coop_eq(const gpursa_coop_ctx *c, const uint32_t *x, const uint32_t *y)
{
    uint32_t d = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        d |= x[l] ^ y[l];
    return gpursa_coop_group_bits(c, d != 0) == 0 ? 0xffffffffu : 0u;
}

/* Add the pending per-lane carries cy (at limb L of each lane: the next
 * lane's limb 0) into acc, and resolve what ripples. Returns the group's
 * total overflow above limb H (the same in every lane). */
GPURSA_COOP_FN uint32_t gpursa_coop_settle(const gpursa_coop_ctx *c, uint32_t *acc, uint32_t cy)
{
    uint32_t below = gpursa_coop_shfl(c, cy, c->k == 0 ? c->lane : c->lane - 1);
    uint32_t top_cy = gpursa_coop_shfl(c, cy, c->gbase + CO_T - 1);
    uint32_t g, in, out;
    below = c->k == 0 ? 0 : below;
    g = gpursa_coop_add1(acc, below);
    in = gpursa_coop_resolve(c, (int)g, gpursa_coop_all(acc, 0xffffffffu), &out);
    (void)gpursa_coop_add1(acc, in);
    return top_cy + out;
}

/* acc (value < 2m, with overflow ovf above limb H) minus m if it is >= m */
GPURSA_COOP_FN void gpursa_coop_final_sub(const gpursa_coop_ctx *c, uint32_t *acc, uint32_t ovf, const uint32_t *m)
{
    uint32_t d[CO_L], bin, bout, keep;
    uint32_t g = gpursa_coop_sub(d, acc, m);
    bin = gpursa_coop_resolve(c, (int)g, gpursa_coop_all(d, 0), &bout);
    (void)gpursa_coop_sub1(d, bin);
    keep = (uint32_t)(ovf == 0) & (uint32_t)(bout != 0);   /* acc < m: keep acc */
    gpursa_coop_select(acc, 0u - keep, acc, d);
}

/* Zero n words of a register array that nothing reads again, by volatile
 * stores (dead-store elimination keeps them in the host build). On the device
 * such an array is registers (ptxas -v: a 32-bit kernel's stack frame is its
 * window table alone), which the next warp's values overwrite: there is no
 * memory to wipe, and the stores compile to nothing. Arrays in memory take
 * gpursa_mem_wipe (gpursa_mont.h), whose stores reach it. */
GPURSA_COOP_FN void gpursa_coop_wipe(uint32_t *p, int n)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < n; l++)
        ((volatile uint32_t *)p)[l] = 0;
}

/* All ones when a == b (words, a mask, no comparison that could branch) */
GPURSA_COOP_FN uint32_t gpursa_coop_eqw(uint32_t a, uint32_t b)
{
    uint32_t d = a ^ b;
    return ((d | (0u - d)) >> 31) - 1u;
}

/* A stage's new status word (gpursa_cuda_status.h): next where ok (all
 * ones), else BADINPUT where the word was BADINPUT and the preset (a fault)
 * otherwise; by masks */
GPURSA_COOP_FN uint32_t gpursa_coop_status(uint32_t ok, uint32_t st, uint32_t next)
{
    const uint32_t bad = gpursa_coop_eqw(st, GPURSA_DEV_ST_BADINPUT);
    return (ok & next) | (~ok & ((bad & GPURSA_DEV_ST_BADINPUT) | (~bad & GPURSA_DEV_ST_PRESET)));
}

/* ---- Montgomery arithmetic --------------------------------------------------- */

/* The CIOS loop. r = (x + a*b) / R mod m, x = lo + hi*R (hi: NULL for 0).
 * With a == NULL the product term is left out (a reduction of x < m R).
 * Inputs: a < R, b < m (or a == NULL). */
GPURSA_COOP_FN void gpursa_coop_mont(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *lo, const uint32_t *hi,
                                     const uint32_t *a, const uint32_t *b, const uint32_t *m,
                                     uint32_t m0inv)
{
    uint32_t acc[CO_L];
    uint64_t cy = 0;
    const int top = c->k == CO_T - 1;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        acc[l] = lo != NULL ? lo[l] : 0;
    GPURSA_COOP_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_COOP_UNROLL
        for (int j = 0; j < CO_L; j++) {
            uint32_t q, up, inj = 0;
            if (a != NULL)
                cy += gpursa_coop_mac(acc, a, gpursa_coop_shfl(c, b[j], c->gbase + i0));
            q = gpursa_coop_shfl(c, acc[0] * m0inv, c->gbase);
            cy += gpursa_coop_mac(acc, m, q);
            /* shift down one limb: the upper neighbour's limb 0 comes in on
             * top; the top lane takes limb i of hi (x's next limb) instead */
            up = gpursa_coop_shfl(c, acc[0], top ? c->lane : c->lane + 1);
            if (hi != NULL)
                inj = gpursa_coop_shfl(c, hi[j], c->gbase + i0);
            up = top ? inj : up;
            GPURSA_COOP_UNROLL
            for (int l = 0; l < CO_L - 1; l++)
                acc[l] = acc[l + 1];
            cy += up;
            acc[CO_L - 1] = (uint32_t)cy;
            cy >>= 32;
        }
    }
    gpursa_coop_final_sub(c, acc, gpursa_coop_settle(c, acc, (uint32_t)cy), m);
    gpursa_coop_copy(r, acc);
}

/* r = a b / R mod m */
GPURSA_COOP_FN void gpursa_coop_mul(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *a, const uint32_t *b,
                                    const uint32_t *m, uint32_t m0inv)
{
    gpursa_coop_mont(c, r, NULL, NULL, a, b, m, m0inv);
}

/* r = (lo + hi R) R mod m: x (< m R) into Montgomery form, by a reduction
 * (x / R) and a multiplication by R^3 */
GPURSA_COOP_FN void gpursa_coop_to_mont(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *lo, const uint32_t *hi,
                                        const uint32_t *m, uint32_t m0inv, const uint32_t *rrr)
{
    uint32_t t[CO_L];
    gpursa_coop_mont(c, t, lo, hi, NULL, NULL, m, m0inv);
    gpursa_coop_mul(c, r, t, rrr, m, m0inv);
}

/* r = x^e for a public e, Montgomery form */
GPURSA_COOP_FN void gpursa_coop_exp_public(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *x, uint64_t e,
                                           const uint32_t *m, uint32_t m0inv)
{
    int bit = 63;
    while (bit > 0 && !((e >> bit) & 1))
        bit--;
    gpursa_coop_copy(r, x);
    GPURSA_COOP_ROLLED
    while (--bit >= 0) {
        gpursa_coop_mul(c, r, r, r, m, m0inv);
        if ((e >> bit) & 1)                                  /* e is public */
            gpursa_coop_mul(c, r, r, x, m, m0inv);
    }
}

/* r = table entry idx (secret): every entry read, the one kept by mask */
GPURSA_COOP_FN void gpursa_coop_table_select(uint32_t *r, const uint32_t *table, uint32_t idx)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = 0;
    GPURSA_COOP_ROLLED
    for (int k = 0; k < (1 << GPURSA_COOP_W); k++) {
        uint32_t mask = (uint32_t)(((uint64_t)(idx ^ (uint32_t)k) - 1) >> 32);
        GPURSA_COOP_UNROLL
        for (int l = 0; l < CO_L; l++)
            r[l] |= table[k * CO_L + l] & mask;
    }
}

/* r = x^d mod m over all 32H bits of d (fixed 4-bit windows; d in memory,
 * every lane reads the same words), Montgomery form; one = R mod m (slice).
 * table: this lane's 16 * L words. One multiplication call site in the
 * window loop (squarings are x*x), so the code stays small. */
GPURSA_COOP_FN void gpursa_coop_exp(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *x, const uint32_t *d,
                                    const uint32_t *m, uint32_t m0inv, const uint32_t *one, uint32_t *table)
{
    const int bits = 32 * CO_H, W = GPURSA_COOP_W;
    uint32_t sel[CO_L], t[CO_L];
    gpursa_coop_copy(table, one);
    gpursa_coop_copy(table + CO_L, x);
    gpursa_coop_copy(t, x);
    GPURSA_COOP_ROLLED
    for (int k = 2; k < (1 << W); k++) {                     /* t = x^k */
        gpursa_coop_mul(c, t, t, x, m, m0inv);
        gpursa_coop_copy(table + k * CO_L, t);
    }
    int pos = bits - W;
    gpursa_coop_table_select(r, table, gpursa_exp_window(d, bits, pos, W));
    GPURSA_COOP_ROLLED
    while (pos > 0) {                                        /* pos public */
        pos -= W;
        gpursa_coop_table_select(sel, table, gpursa_exp_window(d, bits, pos, W));
        GPURSA_COOP_ROLLED
        for (int s = 0; s <= W; s++) {
            GPURSA_COOP_UNROLL
            for (int l = 0; l < CO_L; l++)                   /* s public */
                t[l] = s < W ? r[l] : sel[l];
            gpursa_coop_mul(c, r, r, t, m, m0inv);
        }
    }
    gpursa_coop_wipe(sel, CO_L);
    gpursa_coop_wipe(t, CO_L);
}

/* ---- FP64 limbs (GPURSA_COOP_FP) --------------------------------------------------
 *
 * Why: the exponentiation above spends its time in 32x32-bit products, and
 * on Hopper a full product (IMAD + IMAD.HI, or IMAD.WIDE) costs the integer
 * multiply pipe three slots, and the integer kernel runs close to that
 * pipe's ceiling (doc/design.md, "Why the kernels are shaped as they are"). The
 * FP64 pipe is a separate one, as fast as IMAD, and two FMAs give a product
 * of 52-bit limbs (Emmart, Zheng and Weems, "Faster modular exponentiation
 * using double precision floating point arithmetic on the GPU", ARITH 2018):
 *   hi = fma_rz(a, b, 2^104)           2^104 + floor(ab / 2^52) 2^52
 *   lo = fma(a, b, (2^104 + 2^52) - hi) 2^52 + (ab mod 2^52), exact
 * so the bits of hi and lo, read as integers, are the product's two halves
 * plus the exponent bits (for ab <= 2^104: hi = 2^105 for ab = 2^104, whose
 * bits are those of 2^104 plus 2^52 2^52). 2,704 product bits for three
 * FP64 operations and two 64-bit integer adds.
 *
 * With GPURSA_COOP_FP the item's two secret exponentiations run here, and
 * the rest of its multiplications too ("the rest of the operation on FP64
 * limbs", below). A half-length number is F = GPURSA_FP_LIMBS(H) limbs
 * of radix 2^52, FL per lane (lane k: limbs k FL .. k FL + FL - 1), each
 * limb a double of at most 2^52 (the settle below).
 * Montgomery multiplication with R52 = 2^(52 F) is the CIOS loop of
 * gpursa_coop_mont over 64-bit column sums: per limb b_j, the lanes add the
 * halves of a_l b_j and m_l q into columns l and l + 1 (column FL is the
 * lane's spill into the next lane's column 0), q comes from lane 0's column
 * 0, and the columns shift down one (lane 0's carry, column 0 >> 52, goes
 * into its new column 0). A column receives at most 4 (F + 1) halves of
 * at most 2^52 each before it leaves, so 64 bits never overflow. Since R52 > 4m,
 * inputs below 2m give an output below 2m (Walter), so there is no final
 * subtraction. The output is settled lazily: two carry passes, each over
 * every limb at once (a limb's carry goes into the limb above it, a lane's
 * top carry into the next lane's limb 0), leave every limb at most 2^52,
 * so every product stays within ab <= 2^104; no ballot look-ahead and third
 * pass (as gpursa_coop_settle) in the loop.
 * A multiplication settled fully (limbs below 2^52) by the number 1 gives
 * the fully reduced a / R52 (at most m, and m only for a = 0 mod m); the
 * conversions back to 32-bit words take fully settled limbs.
 *
 * The exponentiation's squarings run gpursa_fp_sqr, about 40 % fewer limb
 * products of a by b than gpursa_fp_mul, so its window loop holds two
 * copies of the CIOS loop.
 * With GPURSA_COOP_FP_EARLY (the includer's choice) lane 0 takes each
 * step's carry from its column before m_0 q is added, which shortens the
 * chain from q to the next step's column for one or two more instructions
 * a step (SASS).
 * With GPURSA_COOP_FP_BARRIER (likewise, on the GPU) the block's threads
 * meet at the top of each window, so that its warps run the squaring's loop
 * and the multiplication's loop together. Where the two loops are large (10
 * limbs a lane: about 36 KB of code), warps that drift apart into different
 * loops run slower than warps in one loop, most likely for the instruction
 * caches (doc/design.md, "Why the kernels are shaped as they are"). Every thread of a block
 * runs the exponentiation (gpursa_coop_item gives a thread past the batch's
 * end the last item), over the same public number of windows, so all of
 * them reach the barrier.
 *
 * Constant time as the 32-bit path: control flow and the limbs' positions
 * are public; the table is read whole; the FP64 operations' operands are
 * integers (never subnormal) and the GPU's FP64 pipe takes the same time
 * for any of them. The host emulation computes the same
 * limb products with 128-bit integers (tests/gpu/test_gpu_coop.c checks the
 * device's FMA form against them as well).
 */
#ifdef GPURSA_COOP_FP
/* The key's constants exist for GPURSA_FP_LIMBS limbs (a multiple of 4)
 * and GPURSA_FP_LIMBS_MIN (gpursa_rsa_op.h): the first where T lanes share
 * them evenly, else the second (RSA-3072 on 3 lanes: 30) */
#if GPURSA_FP_LIMBS(GPURSA_COOP_H) % GPURSA_COOP_T == 0
#define GPURSA_FP_F GPURSA_FP_LIMBS(GPURSA_COOP_H)
#define GPURSA_FP_ONE(kd, h) ((h) ? (kd)->q_fone : (kd)->p_fone)
#define GPURSA_FP_IN(kd, h) ((h) ? (kd)->q_fin : (kd)->p_fin)
#else
#define GPURSA_FP_F GPURSA_FP_LIMBS_MIN(GPURSA_COOP_H)
#define GPURSA_FP_ONE(kd, h) ((h) ? (kd)->q_fone_min : (kd)->p_fone_min)
#define GPURSA_FP_IN(kd, h) ((h) ? (kd)->q_fin_min : (kd)->p_fin_min)
#endif
#define GPURSA_FP_L (GPURSA_FP_F / GPURSA_COOP_T)
/* The FP64 exponentiation's window bits: the 32-bit one's (4) unless the
 * kernel's file sets another. The table, 2^W entries of FL doubles a lane,
 * is in local memory and every window reads all of it. At 4 bits a block
 * of 256 threads with 8-10 limbs a lane (or two blocks with 5) holds
 * 256-320 KB of tables an SM, more than the L1 that local memory goes
 * through (256 KB with the shared memory), so the reads go to the L2 and
 * beyond it to DRAM. 3 bits halve the table for a third more
 * multiplications by a table entry, and GPURSA_COOP_FP_SMEM moves entries
 * into shared memory (below; doc/design.md, "Why the kernels are shaped as they
 * are"). */
#ifndef GPURSA_COOP_FP_W
#define GPURSA_COOP_FP_W GPURSA_COOP_W
#endif
#if GPURSA_COOP_FP_W < 1 || GPURSA_COOP_FP_W > 6
#error "COOP FP: window bits 1..6"
#endif
#if GPURSA_FP_F % GPURSA_COOP_T != 0
#error "COOP FP: the lanes per half must divide the 52-bit limbs"
#endif
enum { FP_F = GPURSA_FP_F, FP_L = GPURSA_FP_L };
#define GPURSA_FP_M52 ((1ull << 52) - 1)
/* The bits of the doubles 2^104 + hi 2^52 and 2^52 + lo (gpursa_fp_prod)
 * are hi and lo plus these: the exponent bits of 2^104 and of 2^52. */
#define GPURSA_FP_HI_BIAS 0x4670000000000000ull
#define GPURSA_FP_LO_BIAS 0x4330000000000000ull
/* The same in units of 2^52 */
#define GPURSA_FP_HI_B (GPURSA_FP_HI_BIAS >> 52)
#define GPURSA_FP_LO_B (GPURSA_FP_LO_BIAS >> 52)

#ifdef __CUDACC__
GPURSA_COOP_FN uint64_t gpursa_fp_bits(double x) { return (uint64_t)__double_as_longlong(x); }
GPURSA_COOP_FN double gpursa_fp_from_bits(uint64_t v) { return __longlong_as_double((long long)v); }
/* the two halves of a b (integers, a, b <= 2^52, ab <= 2^104), each plus
 * the exponent bits of its double (GPURSA_FP_HI_BIAS, _LO_BIAS) */
GPURSA_COOP_FN void gpursa_fp_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
    double h = __fma_rz(a, b, 0x1p104);
    double l = __fma_rn(a, b, __dsub_rn(0x1p104 + 0x1p52, h));
    *hi = gpursa_fp_bits(h);
    *lo = gpursa_fp_bits(l);
}
#else
#include <string.h>
GPURSA_COOP_FN uint64_t gpursa_fp_bits(double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof(v));
    return v;
}
GPURSA_COOP_FN double gpursa_fp_from_bits(uint64_t v)
{
    double x;
    memcpy(&x, &v, sizeof(x));
    return x;
}
GPURSA_COOP_FN uint64_t gpursa_fp_d2u52(double x);
GPURSA_COOP_FN void gpursa_fp_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
    unsigned __int128 p = (unsigned __int128)gpursa_fp_d2u52(a) * gpursa_fp_d2u52(b);
    *hi = (uint64_t)(p >> 52) + GPURSA_FP_HI_BIAS;
    *lo = ((uint64_t)p & GPURSA_FP_M52) | GPURSA_FP_LO_BIAS;
}
#endif

/* an integer of at most 2^52 as a double: its bits added to those of 2^52
 * (2^52 itself carries into the exponent: 2^53), less 2^52 (exact; a
 * conversion instruction is slower) */
GPURSA_COOP_FN double gpursa_fp_u52(uint64_t v)
{
    return gpursa_fp_from_bits(v + GPURSA_FP_LO_BIAS) - 0x1p52;
}

/* ... and back (x an integer below 2^52). Not a conversion instruction:
 * on x86-64 a double-to-uint64 conversion branches on the value, which the
 * host emulation must not do with secrets (test_gpu_coop_ct). */
GPURSA_COOP_FN uint64_t gpursa_fp_d2u52(double x)
{
    return gpursa_fp_bits(x + 0x1p52) - GPURSA_FP_LO_BIAS;
}

/* q = x m' mod 2^52 (x: a column), as a double. By an integer multiply:
 * its chain is shorter than the FP64 product's, and q is on the critical
 * path of every step (the FP64 form is no faster: doc/design.md,
 * "Why the kernels are shaped as they are").
 * Only the low 52 bits of x m' are formed: the high word takes two 32-bit
 * products, and one three-input LOP3 both masks it and sets the exponent
 * bits that gpursa_fp_u52 would OR in. */
GPURSA_COOP_FN double gpursa_fp_q(uint64_t x, uint64_t mp)
{
    const uint32_t xl = (uint32_t)x, ml = (uint32_t)mp;
    const uint64_t p = (uint64_t)xl * ml;
    uint32_t h = (uint32_t)(p >> 32) + xl * (uint32_t)(mp >> 32) + (uint32_t)(x >> 32) * ml;
#ifdef __CUDACC__
    /* h & (GPURSA_FP_M52 >> 32) | (GPURSA_FP_LO_BIAS >> 32): ptxas makes two
     * LOP3s of the C form */
    asm("lop3.b32 %0, %0, 0xfffff, 0x43300000, 0xea;" : "+r"(h));
#else
    h = (h & (uint32_t)(GPURSA_FP_M52 >> 32)) | (uint32_t)(GPURSA_FP_LO_BIAS >> 32);
#endif
    return gpursa_fp_from_bits((uint64_t)h << 32 | (uint32_t)p) - 0x1p52;
}

/* x >> s for s <= 32 (0 for s = 32): one funnel shift on the GPU */
GPURSA_COOP_FN uint32_t gpursa_fp_shr(uint32_t x, uint32_t s)
{
#ifdef __CUDACC__
    return __funnelshift_rc(x, 0u, s);
#else
    return s < 32 ? x >> s : 0u;
#endif
}

GPURSA_COOP_FN uint64_t gpursa_fp_shfl64(const gpursa_coop_ctx *c, uint64_t v, int src)
{
    uint64_t lo = gpursa_coop_shfl(c, (uint32_t)v, src), hi = gpursa_coop_shfl(c, (uint32_t)(v >> 32), src);
    return lo | (hi << 32);
}

GPURSA_COOP_FN double gpursa_fp_shfl(const gpursa_coop_ctx *c, double v, int src)
{
    return gpursa_fp_from_bits(gpursa_fp_shfl64(c, gpursa_fp_bits(v), src));
}

/* One carry pass over the group's columns, every limb at once: each keeps
 * its low 52 bits and adds the carry out of the limb below it (a lane's
 * limb 0: out of the lane below's top limb; none into lane 0). Two
 * instructions deep for any FL, where a pass from limb to limb is FL
 * carries deep. The carry out of the top lane is dropped: it is 0 while
 * the value is below R52. */
GPURSA_COOP_FN void gpursa_fp_carry_pass(const gpursa_coop_ctx *c, uint64_t *acc)
{
    uint32_t cy[FP_L], cin;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        cy[l] = (uint32_t)(acc[l] >> 52);
        acc[l] &= GPURSA_FP_M52;
    }
    cin = gpursa_coop_shfl(c, cy[FP_L - 1], c->k == 0 ? c->lane : c->lane - 1);
    acc[0] += c->k == 0 ? 0 : cin;
    GPURSA_COOP_UNROLL
    for (int l = 1; l < FP_L; l++)
        acc[l] += cy[l - 1];
}

/* Normalise the group's column sums (acc[0..FL-1] per lane, each < 2^63;
 * the value below R52) to limbs < 2^52, r as doubles; lazy: to limbs of at
 * most 2^52, by two carry passes (gpursa_fp_carry_pass): after the first
 * every limb is below 2^52 + 2^12, so the second's carries are 0 or 1 and
 * leave each limb at most 2^52. Shallow rather than limb to limb: where a
 * block's warps settle at about the same time (they meet at each window,
 * and no read of the table is staggered), a chain's depth is time in which
 * the scheduler has little else to issue. */
GPURSA_COOP_FN void gpursa_fp_settle(const gpursa_coop_ctx *c, double *r, uint64_t *acc, int lazy)
{
    uint64_t s;
    uint32_t cin, in, out;
    if (lazy) {
        gpursa_fp_carry_pass(c, acc);
        gpursa_fp_carry_pass(c, acc);
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            r[l] = gpursa_fp_u52(acc[l]);
        return;
    }
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L - 1; l++) {                     /* in the lane */
        acc[l + 1] += acc[l] >> 52;
        acc[l] &= GPURSA_FP_M52;
    }
    /* the lane's top carry (< 2^12) goes to the next lane */
    cin = gpursa_coop_shfl(c, (uint32_t)(acc[FP_L - 1] >> 52), c->k == 0 ? c->lane : c->lane - 1);
    acc[FP_L - 1] &= GPURSA_FP_M52;
    s = c->k == 0 ? 0 : cin;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        s += acc[l];
        acc[l] = s & GPURSA_FP_M52;
        s >>= 52;
    }
    /* now s is 0 or 1; the 0/1 carries between lanes by look-ahead */
    {
        uint64_t all = GPURSA_FP_M52;
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            all &= acc[l];
        in = gpursa_coop_resolve(c, (int)s, all == GPURSA_FP_M52, &out);
    }
    s = in;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        s += acc[l];
        acc[l] = s & GPURSA_FP_M52;
        s >>= 52;
        r[l] = gpursa_fp_u52(acc[l]);
    }
}

/* How often step j of a multiplication adds the halves of a_l b_j (l, j:
 * limb indices within a lane) into the columns: 1 in a multiplication; in
 * a squaring 1 for l = j, 2 or 0 otherwise (below), so that each product
 * a_s a_t of two limbs is computed once and doubled. */
GPURSA_COOP_FN uint64_t gpursa_fp_w(int sq, int j, int l)
{
    const int d = (l - j + FP_L) % FP_L;
    if (!sq || d == 0)
        return 1;
    return 2 * d < FP_L || (2 * d == FP_L && j < FP_L / 2) ? 2 : 0;
}

/* Bias units (gpursa_fp_mul) that step j adds to a column at an inner
 * position (1..F-1) whose limb index within its lane is r */
GPURSA_COOP_FN uint64_t gpursa_fp_bias_step(int sq, int j, int r)
{
    return GPURSA_FP_LO_B * (1 + gpursa_fp_w(sq, j, r))
           + GPURSA_FP_HI_B * (1 + gpursa_fp_w(sq, j, (r + FP_L - 1) % FP_L));
}

/* ... over FL consecutive steps, for a column whose limb index is r at the
 * first of them (every step moves it down one position) */
GPURSA_COOP_FN uint64_t gpursa_fp_bias_period(int sq, int r)
{
    uint64_t b = 0;
    GPURSA_COOP_UNROLL
    for (int j = 0; j < FP_L; j++)
        b += gpursa_fp_bias_step(sq, j, (r - j + FP_L) % FP_L);
    return b;
}

/* r = a b / R52 mod m (a == b, sq: a squaring), lazily: a, b < 2m gives
 * r < 2m, settled lazily (lazy) or fully. r may be a or b.
 *
 * The halves enter the column sums with their exponent bits
 * (gpursa_fp_prod): those are multiples of 2^52, so q (a column mod 2^52)
 * does not see them, and unsigned sums wrap, so they can be taken off once
 * where a column's upper bits are read: at lane 0's column 0, once per step
 * before its carry leaves, and from the columns left at the end. A column's
 * position in the number (its limb index, one down per step) and the step
 * (j, its limb index within a lane) say which halves it took, all public
 * and known when compiled except the lane k and the step's i0, of which
 * the sum is linear (gpursa_fp_bias_period per FL steps). Each column then
 * takes two halves per pass with one three-input 64-bit add, and no
 * product pays for a subtraction.
 *
 * The squaring. In step s = i0 FL + j (b_s = a_s broadcast) lane k
 * computes a_t a_s, t = k FL + l, only for the l that gpursa_fp_w(1, j, l)
 * names: l = j (weight 1), and half of the others (weight 2), chosen as a
 * round-robin tournament on the FL indices: l = j + d mod FL for d = 1 ..
 * (FL - 1) / 2, and d = FL / 2 for j < FL / 2 when FL is even. A pair of
 * limbs s != t with j != l is then computed exactly once, at step s or at
 * step t, and its column s + t is in the window at both (it is at position
 * t, resp. s, and not reduced before step s + t); a pair with equal j and l
 * (the diagonal, or two lanes' same index) is computed at both steps with
 * weight 1. So every lane does the same (FL + 1) / 2 products a step on
 * average instead of FL, the limb indices are constants and nothing depends
 * on the lane. The doubling is two integer adds of the same half: 2 a_s a_t
 * < 2^105 cannot be split by the FMAs above. */
GPURSA_COOP_FN void gpursa_fp_mont(const gpursa_coop_ctx *c, double *r, const double *a, const double *b,
                                   const double *m, uint64_t mp, int sq, int lazy)
{
    uint64_t acc[FP_L + 1];
    /* Constant per lane, so that no step selects by lane: only lane 0
     * carries out of its column 0 (a shift by 32 gives the other lanes
     * none), and the shift down is a rotation of the group, in which the
     * top lane takes lane 0's column 0: 0 mod 2^52, and its high word (the
     * carry and the bias) cleared by keep, so 0. */
    const uint32_t cshift = c->k == 0 ? 20u : 32u;
    const uint64_t keep = c->k == 0 ? 0xffffffffull : ~0ull;
    const int below = c->gbase + (c->k + 1) % CO_T;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        acc[l] = 0;
    GPURSA_COOP_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_COOP_UNROLL
        for (int j = 0; j < FP_L; j++) {
            uint64_t hi, lo, up = 0, down;
            uint32_t carry;
            double bj = gpursa_fp_shfl(c, b[j], c->gbase + i0), q;
            /* the bias of the column that leaves lane 0 at this step: full
             * periods for i0, then steps 0..j of this one (at positions j..0;
             * position 0 takes lo halves only) */
            uint64_t bias0 = GPURSA_FP_LO_B * (1 + gpursa_fp_w(sq, j, 0));
            uint32_t ub;
            GPURSA_COOP_UNROLL
            for (int u = 0; u < j; u++)
                bias0 += gpursa_fp_bias_step(sq, u, j - u);
            GPURSA_COOP_UNROLL
            for (int l = 0; l < FP_L; l++) {                 /* column l: lo a_l, hi a_{l-1} */
                const uint64_t w = gpursa_fp_w(sq, j, l);
                if (w != 0) {
                    gpursa_fp_prod(a[l], bj, &hi, &lo);
                    acc[l] += w == 2 ? lo + lo + up : lo + up;
                    up = w == 2 ? hi + hi : hi;
                } else {
                    acc[l] += up;
                    up = 0;
                }
            }
            acc[FP_L] = up;                                  /* the spill into the next lane */
            q = gpursa_fp_shfl(c, gpursa_fp_q(acc[0], mp), c->gbase);
            ub = (uint32_t)i0 * (uint32_t)(0u - (gpursa_fp_bias_period(sq, j) << 20))
                 + (uint32_t)(0u - (bias0 << 20));
#ifdef GPURSA_COOP_FP_EARLY
            /* lane 0's carry before m_0 q is added, off the chain from q to
             * the next column: that half makes the column a multiple of
             * 2^52, so the carry is the unbiased column rounded up (ub
             * counts the bias of m_0 q's lo half, not in the column yet) */
            carry = gpursa_fp_shr((uint32_t)((acc[0] + ((uint64_t)ub << 32)
                                              + ((GPURSA_FP_LO_B << 52) + GPURSA_FP_M52)) >> 32), cshift);
#endif
            up = 0;
            GPURSA_COOP_UNROLL
            for (int l = 0; l < FP_L; l++) {
                gpursa_fp_prod(m[l], q, &hi, &lo);
                acc[l] += lo + up;
                up = hi;
            }
            /* lane 0's column 0 is now 0 mod 2^52: its carry is the bits
             * above, less the bias; then every lane shifts down one column */
#ifndef GPURSA_COOP_FP_EARLY
            carry = gpursa_fp_shr((uint32_t)(acc[0] >> 32) + ub, cshift);
#endif
            down = gpursa_fp_shfl64(c, acc[0] & keep, below);
            GPURSA_COOP_UNROLL
            for (int l = 0; l < FP_L - 1; l++)
                acc[l] = acc[l + 1];
            acc[0] += carry;
            acc[FP_L - 1] = acc[FP_L] + up + down;
        }
    }
    /* The column at position p = k FL + l was made at step p (position F:
     * the hi halves of limb FL - 1), then took F - 1 - p inner steps:
     * T - 1 - k full periods and the FL - 1 - l steps after step p (in a
     * multiplication 2 HI_B + 2 (F - 1 - p) (HI_B + LO_B)) */
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        uint64_t bias = GPURSA_FP_HI_B * (1 + gpursa_fp_w(sq, l, FP_L - 1));
        GPURSA_COOP_UNROLL
        for (int i = 1; i < FP_L - l; i++)
            bias += gpursa_fp_bias_step(sq, l + i, FP_L - i);
        acc[l] -= (bias + (uint64_t)(CO_T - 1 - c->k) * gpursa_fp_bias_period(sq, l)) << 52;
    }
    gpursa_fp_settle(c, r, acc, lazy);
}

/* r = a b / R52 mod m, settled lazily */
GPURSA_COOP_FN void gpursa_fp_mul(const gpursa_coop_ctx *c, double *r, const double *a, const double *b,
                                  const double *m, uint64_t mp)
{
    gpursa_fp_mont(c, r, a, b, m, mp, 0, 1);
}

/* r = a^2 / R52 mod m, settled lazily */
GPURSA_COOP_FN void gpursa_fp_sqr(const gpursa_coop_ctx *c, double *r, const double *a, const double *m,
                                  uint64_t mp)
{
    gpursa_fp_mont(c, r, a, a, m, mp, 1, 1);
}

/* The conversions between a half-length number's 32-bit slices (CO_L words
 * a lane) and its 52-bit limbs (FP_L a lane). Lane k's limbs start
 * FP_D1 k bits above its words (FP_D1 = 52 FP_L - 32 CO_L >= 0), so each
 * lane takes the few words or limbs it lacks from its neighbour and cuts
 * its own from a window of them at offsets that depend on k (public) only:
 * the window is indexed at run time (local memory on the GPU). */
enum {
    FP_D1 = 52 * FP_L - 32 * CO_L,
    FP_XW = (FP_D1 * CO_T + 31) / 32,                         /* words from the lane above */
    FP_XL = (FP_D1 * (CO_T - 1) + 51) / 52                     /* limbs from the lane below */
};
#if 52 * GPURSA_FP_L < 32 * GPURSA_COOP_L || (52 * GPURSA_FP_L - 32 * GPURSA_COOP_L) * GPURSA_COOP_T > 32 * GPURSA_COOP_L
#error "COOP FP: a lane's 52-bit limbs must start within its own or the next lane's words"
#endif

/* this lane's 52-bit limbs (doubles) of the half-length number whose 32-bit
 * slices are x */
GPURSA_COOP_FN void gpursa_fp_from32(const gpursa_coop_ctx *c, double *r, const uint32_t *x)
{
    /* this lane's words, the next lane's first FP_XW (none above the top
     * lane), and two zero words for the last limb's reads */
    uint32_t w[CO_L + FP_XW + 2];
    const int top = c->k == CO_T - 1;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        w[l] = x[l];
    GPURSA_COOP_UNROLL
    for (int j = 0; j < FP_XW; j++) {
        uint32_t v = gpursa_coop_shfl(c, x[j], top ? c->lane : c->lane + 1);
        w[CO_L + j] = top ? 0u : v;
    }
    w[CO_L + FP_XW] = w[CO_L + FP_XW + 1] = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        const uint32_t b = (uint32_t)(FP_D1 * c->k + 52 * l), i = b >> 5, s = b & 31u;
        uint64_t lo = ((uint64_t)w[i + 1] << 32 | w[i]) >> s;
        uint64_t hi = ((uint64_t)w[i + 2] << 32 | w[i + 1]) >> s;
        r[l] = gpursa_fp_u52(((uint64_t)(uint32_t)hi << 32 | (uint32_t)lo) & GPURSA_FP_M52);
    }
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L + FP_XW + 2; l++)
        ((volatile uint32_t *)w)[l] = 0;
}

/* the inverse: 32-bit slices of the number (< 2^(32 H); bits above are
 * dropped) whose 52-bit limbs are f, settled fully (each < 2^52) */
GPURSA_COOP_FN void gpursa_fp_to32(const gpursa_coop_ctx *c, uint32_t *r, const double *f)
{
    /* the lane below's top FP_XL limbs (none below lane 0), this lane's,
     * and a zero limb for the last word's reads */
    uint64_t v[FP_XL + FP_L + 1];
    GPURSA_COOP_UNROLL
    for (int j = 0; j < FP_XL; j++) {
        uint64_t u = gpursa_fp_shfl64(c, gpursa_fp_d2u52(f[FP_L - FP_XL + j]), c->k == 0 ? c->lane : c->lane - 1);
        v[j] = c->k == 0 ? 0 : u;
    }
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        v[FP_XL + l] = gpursa_fp_d2u52(f[l]);
    v[FP_XL + FP_L] = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        const uint32_t b = (uint32_t)(32 * l + 52 * FP_XL - FP_D1 * c->k), i = b / 52, s = b - 52 * i;
        r[l] = (uint32_t)((v[i] >> s) | (v[i + 1] << (52 - s)));
    }
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_XL + FP_L + 1; l++)
        ((volatile uint64_t *)v)[l] = 0;
}

/* this lane's limbs of a 52-bit constant of the key */
GPURSA_COOP_FN void gpursa_fp_load(const gpursa_coop_ctx *c, double *r, const uint64_t *v)
{
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = gpursa_fp_u52(v[c->k * FP_L + l]);
}

/* The window table, 2^W entries of FL doubles a lane: the first
 * GPURSA_COOP_FP_SMEM of them (an even number; 0 by default) in the block's
 * dynamic shared memory ts, the others in local memory tl. Each part is
 * limb-major, so that entries 2i and 2i + 1 of a limb are one aligned 16-byte
 * load; in shared memory the 16-byte pairs of a block's threads lie side by
 * side, a warp's read of one pair 512 consecutive bytes (the host emulation:
 * a thread's own array). Shared memory does not go through the L1, whose
 * misses on the table go to the L2 and DRAM (GPURSA_COOP_FP_W, above).
 * The kernels that set it take 8 of 16 entries: at 10 limbs a lane that is
 * 160 KB a block, within the 163 KB an A100 allows one; more takes L1 from
 * the local half and the stack, and on Hopper 10 entries and 6 are both
 * slower (doc/design.md, "What was tried and lost").
 * The addresses depend on the thread and public indices only. */
#ifndef GPURSA_COOP_FP_SMEM
#define GPURSA_COOP_FP_SMEM 0
#endif
#if GPURSA_COOP_FP_SMEM % 2 != 0 || GPURSA_COOP_FP_SMEM > (1 << GPURSA_COOP_FP_W)
#error "COOP FP: an even number of table entries in shared memory, at most 2^W"
#endif
enum { FP_E = 1 << GPURSA_COOP_FP_W, FP_NS = GPURSA_COOP_FP_SMEM, FP_NL = FP_E - FP_NS };
#ifdef __CUDACC__
#define GPURSA_FP_SSTRIDE GPURSA_COOP_THREADS
#else
#define GPURSA_FP_SSTRIDE 1
#endif
/* entry k's limb l: at ts[GPURSA_FP_SIX(k, l)] for k < NS, else tl[GPURSA_FP_LIX(k, l)] */
#define GPURSA_FP_SIX(k, l) (2 * GPURSA_FP_SSTRIDE * ((l) * (FP_NS / 2) + (k) / 2) + (k) % 2)
#define GPURSA_FP_LIX(k, l) ((l) * FP_NL + (k) - FP_NS)

GPURSA_COOP_FN double *gpursa_fp_entry(double *ts, double *tl, int k, int l)
{
    return k < FP_NS ? &ts[GPURSA_FP_SIX(k, l)] : &tl[GPURSA_FP_LIX(k, l)];
}

/* the pair at p (entries k and k + 1 of a limb), each kept by its mask,
 * ORed together */
GPURSA_COOP_FN uint64_t gpursa_fp_pick(const double *p, uint64_t m0, uint64_t m1)
{
#ifdef __CUDACC__
    const double2 e = *(const double2 *)p;
    return (gpursa_fp_bits(e.x) & m0) | (gpursa_fp_bits(e.y) & m1);
#else
    return (gpursa_fp_bits(p[0]) & m0) | (gpursa_fp_bits(p[1]) & m1);
#endif
}

/* the masks of entries k and k + 1: all ones for the one equal to idx */
#define GPURSA_FP_MASK(idx, k) (0 - (uint64_t)(((uint64_t)((idx) ^ (uint32_t)(k)) - 1) >> 63))

/* r = table entry idx (secret): every entry read, the one kept by mask;
 * two entries a load */
GPURSA_COOP_FN void gpursa_fp_table_select(double *r, const double *ts, const double *tl, uint32_t idx)
{
    uint64_t v[FP_L];
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        v[l] = 0;
    GPURSA_COOP_ROLLED
    for (int k = 0; k < FP_NS; k += 2) {
        const uint64_t m0 = GPURSA_FP_MASK(idx, k), m1 = GPURSA_FP_MASK(idx, k + 1);
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            v[l] |= gpursa_fp_pick(&ts[GPURSA_FP_SIX(k, l)], m0, m1);
    }
    GPURSA_COOP_ROLLED
    for (int k = FP_NS; k < FP_E; k += 2) {
        const uint64_t m0 = GPURSA_FP_MASK(idx, k), m1 = GPURSA_FP_MASK(idx, k + 1);
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            v[l] |= gpursa_fp_pick(&tl[GPURSA_FP_LIX(k, l)], m0, m1);
    }
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = gpursa_fp_from_bits(v[l]);
}

/* r = x^d R52 mod m (< 2m, settled lazily) for x = x' R52 mod m (< 2m,
 * limbs <= 2^52), over all 32 H bits of d; m52, one52 (R52 mod m): the
 * key's constants, F limbs each; mp: -m^-1 mod 2^52; tid: the thread's
 * index (gpursa_coop_item's), which places its warp on a scheduler. */
GPURSA_COOP_FN void gpursa_fp_exp(const gpursa_coop_ctx *item_c, double *r, const double *x, const uint32_t *d,
                                  const uint64_t *m52, uint64_t mp52, const uint64_t *one52, uint32_t tid)
{
    /* Every lane of the warp comes here (gpursa_coop_item), and nothing in
     * this function branches on an item's values: so the whole warp is
     * reconverged once, and the shuffles and ballots name all 32 lanes,
     * which spares each of them the check for a diverged warp. */
    gpursa_coop_ctx cw = *item_c;
    const gpursa_coop_ctx *c = &cw;
#ifdef __CUDACC__
    __syncwarp();
    cw.mask = 0xffffffffu;
#endif
    const int bits = 32 * CO_H, W = GPURSA_COOP_FP_W;
    const uint64_t mp = mp52;
    double fm[FP_L], t[FP_L], sel[FP_L];
#ifdef __CUDACC__
    extern __shared__ double2 gpursa_fp_smem[];
    double *const ts = (double *)(gpursa_fp_smem + threadIdx.x);
    __align__(16)
#else
    double ts[FP_NS > 0 ? FP_NS * FP_L : 2];
#endif
    double tl[FP_NL > 0 ? FP_NL * FP_L : 2];
    gpursa_fp_load(c, fm, m52);
    gpursa_fp_load(c, t, one52);
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        *gpursa_fp_entry(ts, tl, 0, l) = t[l];
        *gpursa_fp_entry(ts, tl, 1, l) = t[l] = x[l];
    }
    GPURSA_COOP_ROLLED
    for (int k = 2; k < (1 << W); k++) {                     /* t = x^k */
        gpursa_fp_mul(c, t, t, x, fm, mp);
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            *gpursa_fp_entry(ts, tl, k, l) = t[l];
    }
    /* The window's table entry is read before its squarings, or, with
     * GPURSA_COOP_FP_STAGGER (the includer's choice), before squaring
     * sel_at: halfway through them in one of the two warps that share a
     * scheduler (warps w and w + 4 of a block), so that while one waits for
     * the table's entries in local memory (from the L2: a round trip for
     * each two of them), the other squares. Where the block's warps meet at
     * each window (GPURSA_COOP_FP_BARRIER) they would otherwise all wait at
     * once. The warp's index (public) decides; the entry read is the same.
     * Without the option the read stays outside the squarings' loop: inside
     * it, ptxas's squaring loop grows, which only the stagger pays back.
     * A kernel that staggers leaves GPURSA_COOP_FP_EARLY out: the other warp
     * of its scheduler covers the chain from q that the early carry would
     * shorten (doc/design.md, "What the FP64 kernels' parts bought"). */
#ifdef GPURSA_COOP_FP_STAGGER
    const int sel_at = (((tid >> 5) ^ (tid >> 7)) & 1) ? W / 2 : 0;
#else
    (void)tid;
#endif
    /* the top window takes the bits that W does not divide (public) */
    int pos = bits - (bits % W ? bits % W : W);
    gpursa_fp_table_select(r, ts, tl, gpursa_exp_window(d, bits, pos, bits - pos));
    GPURSA_COOP_ROLLED
    while (pos > 0) {                                        /* pos public */
        pos -= W;
#if defined(__CUDACC__) && defined(GPURSA_COOP_FP_BARRIER)
        __syncthreads();                                     /* every thread of the block comes here */
#endif
#ifdef GPURSA_COOP_FP_STAGGER
        GPURSA_COOP_ROLLED
        for (int s = 0; s < W; s++) {
            if (s == sel_at)
                gpursa_fp_table_select(sel, ts, tl, gpursa_exp_window(d, bits, pos, W));
            gpursa_fp_sqr(c, r, r, fm, mp);
        }
#else
        gpursa_fp_table_select(sel, ts, tl, gpursa_exp_window(d, bits, pos, W));
        GPURSA_COOP_ROLLED
        for (int s = 0; s < W; s++)
            gpursa_fp_sqr(c, r, r, fm, mp);
#endif
        gpursa_fp_mul(c, r, r, sel, fm, mp);
    }
    /* the table's entries: shared memory by volatile stores (kept as such),
     * local memory by gpursa_mem_wipe's (a plain st.local could be dropped) */
    GPURSA_COOP_UNROLL
    for (int k = 0; k < FP_NS; k++) {
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++)
            *(volatile double *)gpursa_fp_entry(ts, tl, k, l) = 0;
    }
    gpursa_mem_wipe(tl, (int)(sizeof(tl) / (sizeof(uint32_t))));
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        ((volatile double *)t)[l] = 0;
        ((volatile double *)sel)[l] = 0;
    }
}

/* ---- the rest of the operation on FP64 limbs ----------------------------------
 *
 * Why: besides its exponentiation an item does two Montgomery
 * multiplications in its half: its input into FP64 Montgomery form and the
 * result out of it. They run on 52-bit limbs through one copy of the FP64
 * multiplication that is not inlined (gpursa_fp_mul_cold), so the kernel's
 * code for them is one loop outside the exponentiation's (whose registers
 * it does not touch; doc/design.md, "Why the kernels are shaped as they are").
 * What stays in 32-bit limbs: the reduction of the
 * full-length input modulo m, which multiplies only by m, and Garner's
 * recombination. A full-length x < n enters as
 * x' = x / R mod m (the reduction) and x' (R R52^2) / R52 = x R52, with
 * the key's constant fin = R R52^2 mod m (GPURSA_FP_IN). */
#ifdef __CUDACC__
#define GPURSA_COOP_COLD static __device__ __noinline__
#else
#define GPURSA_COOP_COLD static
#endif

/* r = a b / R52 mod m for a, b < 2m (limbs <= 2^52): r < 2m, settled lazily
 * (lazy) or fully (limbs < 2^52; then r <= m for b = 1). A multiplication
 * of the multiplication's form (no squaring loop: one copy of the code). */
GPURSA_COOP_COLD void gpursa_fp_mul_cold(gpursa_coop_ctx c, double *r, const double *a, const double *b,
                                         const uint64_t *m52, uint64_t mp, int lazy)
{
    double fm[FP_L];
    gpursa_fp_load(&c, fm, m52);
    gpursa_fp_mont(&c, r, a, b, fm, mp, 0, lazy);
}

/* r = x R52 mod m (< 2m) for the 32-bit slices t = x / R mod m (< m) */
GPURSA_COOP_FN void gpursa_fp_in(const gpursa_coop_ctx *c, double *r, const uint32_t *t, const uint64_t *fin,
                                 const uint64_t *m52, uint64_t mp)
{
    double f[FP_L];
    gpursa_fp_from32(c, r, t);
    gpursa_fp_load(c, f, fin);
    gpursa_fp_mul_cold(*c, r, r, f, m52, mp, 1);
}

/* r = x R52 mod m (< 2m, FP64 Montgomery form) for the full-length x =
 * (lo, hi) < m R: x / R mod m by a 32-bit reduction, then gpursa_fp_in */
GPURSA_COOP_FN void gpursa_fp_in_full(const gpursa_coop_ctx *c, double *r, const uint32_t *lo, const uint32_t *hi,
                                      const uint32_t *m, uint32_t m0inv, const uint64_t *fin, const uint64_t *m52,
                                      uint64_t mp)
{
    uint32_t t[CO_L];
    gpursa_coop_mont(c, t, lo, hi, NULL, NULL, m, m0inv);
    gpursa_fp_in(c, r, t, fin, m52, mp);
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        ((volatile uint32_t *)t)[l] = 0;
}

/* All ones when f (settled fully) is the number 1 */
GPURSA_COOP_FN uint32_t gpursa_fp_is1(const gpursa_coop_ctx *c, const double *f)
{
    uint64_t d = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        d |= gpursa_fp_d2u52(f[l]) ^ (uint64_t)(c->k == 0 && l == 0);
    return gpursa_coop_group_bits(c, d != 0) == 0 ? 0xffffffffu : 0u;
}

/* r = f mod m as 32-bit slices (< m) for f < 2m settled fully; f may pass
 * 2^(32 H), and its bits above go into the final subtraction */
GPURSA_COOP_FN void gpursa_fp_out(const gpursa_coop_ctx *c, uint32_t *r, const double *f, const uint32_t *m)
{
    uint64_t above = 0;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        const int o = 32 * CO_H - 52 * (c->k * FP_L + l);    /* bit 32 H in the limb */
        const uint64_t v = gpursa_fp_d2u52(f[l]);
        above |= o <= 0 ? v : o < 52 ? v >> o : 0;
    }
    gpursa_fp_to32(c, r, f);
    gpursa_coop_final_sub(c, r, gpursa_coop_group_bits(c, above != 0) != 0, m);
}
#endif /* GPURSA_COOP_FP */

/* (lo, hi) = a * b, both half-length, no reduction: the CIOS loop without
 * m; limb i of the product leaves lane 0 at step i and is kept by lane i/L. */
GPURSA_COOP_FN void gpursa_coop_mpmul(const gpursa_coop_ctx *c, uint32_t *lo, uint32_t *hi, const uint32_t *a,
                                      const uint32_t *b)
{
    uint64_t cy = 0;
    const int top = c->k == CO_T - 1;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        hi[l] = lo[l] = 0;
    GPURSA_COOP_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_COOP_UNROLL
        for (int j = 0; j < CO_L; j++) {
            uint32_t limb, up;
            cy += gpursa_coop_mac(hi, a, gpursa_coop_shfl(c, b[j], c->gbase + i0));
            limb = gpursa_coop_shfl(c, hi[0], c->gbase);
            lo[j] = c->k == i0 ? limb : lo[j];               /* public select */
            up = gpursa_coop_shfl(c, hi[0], top ? c->lane : c->lane + 1);
            up = top ? 0 : up;
            GPURSA_COOP_UNROLL
            for (int l = 0; l < CO_L - 1; l++)
                hi[l] = hi[l + 1];
            cy += up;
            hi[CO_L - 1] = (uint32_t)cy;
            cy >>= 32;
        }
    }
    (void)gpursa_coop_settle(c, hi, (uint32_t)cy);           /* a b < R^2: no overflow */
}

/* Garner's recombination of an item's two halves, in the p group (the q
 * group computes the same with its own values and discards it, so that the
 * warp stays converged): x = this half's value v in Montgomery form (v R
 * mod m), y = v mod m (both < m); sq = v mod q from the partner lane;
 * h = (xp - sq) qinv mod p; out = sq + q h < n. Leaves the low half of out
 * in lo (the p group's; the q group's lo is what it discards) and the high
 * half in hi in both groups (the p group's, by shuffle). Every lane of the
 * item calls it; y, s, z, pm, prrr and aux are scratch (this lane's slices). */
GPURSA_COOP_FN void gpursa_coop_garner(const gpursa_coop_ctx *c, int h, int partner, const gpursa_rsa_keydata *kd,
                                       uint32_t *lo, uint32_t *hi, const uint32_t *x, uint32_t *y, uint32_t *s,
                                       uint32_t *z, uint32_t *pm, uint32_t *prrr, uint32_t *aux)
{
    uint32_t cin, hin, out;
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        s[l] = gpursa_coop_shfl(c, y[l], partner);
    gpursa_coop_load(c, pm, kd->p);
    gpursa_coop_load(c, prrr, kd->p_rrr);
    gpursa_coop_to_mont(c, y, s, NULL, pm, kd->p0inv, prrr);           /* sq R mod p */
    cin = gpursa_coop_sub(z, x, y);
    cin = gpursa_coop_resolve(c, (int)cin, gpursa_coop_all(z, 0), &out);
    (void)gpursa_coop_sub1(z, cin);
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++)
        aux[l] = pm[l] & (0u - out);                                     /* + p if negative */
    cin = gpursa_coop_add(z, z, aux, 0);
    cin = gpursa_coop_resolve(c, (int)cin, gpursa_coop_all(z, 0xffffffffu), &out);
    (void)gpursa_coop_add1(z, cin);
    gpursa_coop_load(c, aux, kd->qinv);
    gpursa_coop_mul(c, y, z, aux, pm, kd->p0inv);                       /* h */
    gpursa_coop_load(c, aux, kd->q);
    gpursa_coop_mpmul(c, lo, hi, aux, y);                               /* q h */
    cin = gpursa_coop_add(lo, lo, s, 0);
    cin = gpursa_coop_resolve2(c, (int)cin, gpursa_coop_all(lo, 0xffffffffu), 0,
                               gpursa_coop_all(hi, 0xffffffffu), &hin, &out);
    (void)gpursa_coop_add1(lo, cin);
    (void)gpursa_coop_add1(hi, hin);
    GPURSA_COOP_UNROLL
    for (int l = 0; l < CO_L; l++) {
        uint32_t vh = gpursa_coop_shfl(c, hi[l], partner);
        hi[l] = h ? vh : hi[l];
    }
}

/* ---- the whole operation --------------------------------------------------------- */

/* p, which the compiler must take as a new pointer, so that loads through
 * it are not merged with earlier loads of the same memory */
GPURSA_COOP_FN const void *gpursa_coop_opaque(const void *p)
{
#ifdef __CUDACC__
    asm volatile("" : "+l"(p));
#endif
    return p;
}

/* One thread's part of one private operation: m = in^d mod n by CRT (the
 * input is the blinded value c_b < n that the blinding stage wrote; the
 * unblinding and check stages after it finish the operation), m to out in
 * the layout of in. tid = the thread's global index. Every thread of a warp
 * must call it (lanes past the end work on the last item, lanes left over
 * on the warp's last one, and neither stores), since all of them take part
 * in the shuffles. */
GPURSA_COOP_FN void gpursa_coop_item(const gpursa_coop_args *a, uint32_t tid)
{
    gpursa_coop_ctx c;
    uint32_t sub;
    int spare;
    const uint32_t item_raw = gpursa_coop_place(&c, tid, &sub, &spare);
    const int h = (int)(sub / CO_T);                         /* 0: p, 1: q (public) */
    const int live = item_raw < a->count && !spare;          /* stores its results */
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    const uint32_t *dexp = h ? kd->dq : kd->dp;
    uint32_t m[CO_L], pm[CO_L], prrr[CO_L], aux[CO_L];
    uint32_t lo[CO_L], hi[CO_L], x[CO_L], y[CO_L], z[CO_L], s[CO_L];
#ifndef GPURSA_COOP_FP
    uint32_t rrr[CO_L], one[CO_L], table[(1 << GPURSA_COOP_W) * CO_L];
#endif

    gpursa_coop_ctx_at(&c, tid, sub);
    const int partner = gpursa_coop_partner(&c, sub);
    gpursa_coop_load(&c, m, h ? kd->q : kd->p);
    /* in < n < m R: its reduction modulo this half's prime is exact. (An
     * item the blinding stage refused may hold anything below R^2 here: the
     * same constant-time code then gives some value, which the unblinding
     * stage discards.) */
    gpursa_coop_load_soa(&c, lo, hi, a->in, item, a->stride);
#ifdef GPURSA_COOP_FP
    {
        const uint64_t *m52 = h ? kd->q52 : kd->p52, *fin = GPURSA_FP_IN(kd, h);
        uint64_t mp = h ? kd->q0inv52 : kd->p0inv52;
        double cf[FP_L], rf[FP_L], t[FP_L];
        gpursa_fp_in_full(&c, cf, lo, hi, m, m0inv, fin, m52, mp);         /* in R52 */
        gpursa_fp_exp(&c, rf, cf, dexp, m52, mp, GPURSA_FP_ONE(kd, h), tid); /* in^d R52 */
        /* The key's values are loaded again, through a pointer the
         * compiler cannot see through: else it keeps the first loads'
         * values in registers across the exponentiation, registers that
         * the FP64 loop needs. */
        kd = (const gpursa_rsa_keydata *)gpursa_coop_opaque(kd);
        gpursa_coop_load(&c, m, h ? kd->q : kd->p);
        m52 = h ? kd->q52 : kd->p52;
        mp = h ? kd->q0inv52 : kd->p0inv52;
        gpursa_coop_load(&c, s, h ? kd->q_one : kd->p_one);
        gpursa_fp_from32(&c, t, s);                                          /* R mod m */
        gpursa_fp_mul_cold(c, rf, rf, t, m52, mp, 0);
        gpursa_fp_out(&c, x, rf, m);                                         /* in^d R mod m */
        GPURSA_COOP_UNROLL
        for (int l = 0; l < FP_L; l++) {
            ((volatile double *)cf)[l] = 0;
            ((volatile double *)rf)[l] = 0;
            ((volatile double *)t)[l] = 0;
        }
    }
#else
    gpursa_coop_load(&c, rrr, h ? kd->q_rrr : kd->p_rrr);
    gpursa_coop_load(&c, one, h ? kd->q_one : kd->p_one);
    gpursa_coop_to_mont(&c, y, lo, hi, m, m0inv, rrr);                  /* in R mod m */
    gpursa_coop_exp(&c, x, y, dexp, m, m0inv, one, table);              /* in^d R mod m */
#endif
    gpursa_coop_mont(&c, y, x, NULL, NULL, NULL, m, m0inv);              /* in^d mod m */

    gpursa_coop_garner(&c, h, partner, kd, lo, hi, x, y, s, z, pm, prrr, aux);
    /* the p group stores the low half of out, the q group the high half */
    if (live) {
        GPURSA_COOP_UNROLL
        for (int l = 0; l < CO_L; l++)
            a->out[(size_t)(h * CO_H + c.k * CO_L + l) * a->stride + item] = h ? hi[l] : lo[l];
    }
    /* Wipes: the window table (local memory: powers of in) by stores that
     * reach it; the register arrays, everything else derived from in and the
     * key's values, as gpursa_coop_wipe can. */
#ifndef GPURSA_COOP_FP
    gpursa_mem_wipe(table, (1 << GPURSA_COOP_W) * CO_L);
    gpursa_coop_wipe(rrr, CO_L);
    gpursa_coop_wipe(one, CO_L);
#endif
    gpursa_coop_wipe(lo, CO_L);
    gpursa_coop_wipe(hi, CO_L);
    gpursa_coop_wipe(x, CO_L);
    gpursa_coop_wipe(y, CO_L);
    gpursa_coop_wipe(z, CO_L);
    gpursa_coop_wipe(s, CO_L);
    gpursa_coop_wipe(m, CO_L);
    gpursa_coop_wipe(pm, CO_L);
    gpursa_coop_wipe(prrr, CO_L);
    gpursa_coop_wipe(aux, CO_L);
}

#endif /* GPURSA_COOP_H_INCLUDED */
