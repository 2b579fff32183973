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
 * The shape S (gpursa_shapes.h) gives H (limbs per half) and L (limbs per
 * lane, dividing H; at most 32 lanes, 2*H/L, an item): gpursa_coop<S> holds
 * the arithmetic, its functions templates over the shape. A warp
 * holds 32 / (2T) items; where 2T does not divide 32 (T = 3: five items of
 * six lanes) the lanes left over mirror lanes of the warp's last item
 * (gpursa_coop_place). Compiled by nvcc the
 * functions are device functions over warp intrinsics; compiled by a host
 * C++ compiler they call gpursa_coop_emu_shfl/ballot, which a test provides to
 * run a warp of threads in lock step on the host (tests/gpu/test_gpu_coop.cc),
 * so the exact algorithm is verified without a GPU.
 *
 * The secret exponentiations run on 32-bit limbs (gpursa_coop_int<S>, below)
 * or, where S::fp64, on FP64 (52-bit) limbs (gpursa_coop_fp<S>,
 * gpursa_coop_fp.h); gpursa_coop_exp<S> there picks one, and
 * gpursa_coop_item takes it as a template parameter.
 */
#ifndef GPURSA_COOP_H_INCLUDED
#define GPURSA_COOP_H_INCLUDED

#include <stdint.h>
#include "gpu/gpursa_rsa_op.h"
#include "gpu/gpursa_cuda_status.h"
#include "gpu/gpursa_shapes.h"

/* GPURSA_DEV: a device function, inlined (on the host: inline);
 * GPURSA_COLD: a device function never inlined (gpursa_fp_mul_cold);
 * GPURSA_UNROLL (gpursa_mont.h): unroll the loop below; GPURSA_ROLLED: keep it rolled */
#ifdef __CUDACC__
#define GPURSA_DEV __device__ __forceinline__
#define GPURSA_COLD __device__ __noinline__
#define GPURSA_ROLLED _Pragma("unroll 1")
#define gpursa_coop_shfl(c, v, src) __shfl_sync((c)->mask, (v), (src))
#define gpursa_coop_ballot(c, pred) __ballot_sync((c)->mask, (pred))
#else
#define GPURSA_DEV inline
#define GPURSA_COLD
#define GPURSA_ROLLED
/* host emulation, provided by the test program: the 2T lanes of an item
 * call these in the same order */
uint32_t gpursa_coop_emu_shfl(uint32_t v, int src);
uint32_t gpursa_coop_emu_ballot(int pred);
#define gpursa_coop_shfl(c, v, src) gpursa_coop_emu_shfl((v), (src))
#define gpursa_coop_ballot(c, pred) gpursa_coop_emu_ballot(pred)
#endif

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

template <class S>
struct gpursa_coop_fp;                          /* gpursa_coop_fp.h */

/* the key's R52 mod m and R R52^2 mod m (h: 0 p, 1 q), for the 52-bit limbs of
 * gpursa_coop_fp<S> (full: its FP_FULL): expressions, not functions, so that
 * the compiler selects them together with the key's other values of the
 * half */
#define GPURSA_FP_ONE(full, kd, h) \
    ((full) ? ((h) ? (kd)->q_fone : (kd)->p_fone) : ((h) ? (kd)->q_fone_min : (kd)->p_fone_min))
#define GPURSA_FP_IN(full, kd, h) \
    ((full) ? ((h) ? (kd)->q_fin : (kd)->p_fin) : ((h) ? (kd)->q_fin_min : (kd)->p_fin_min))

/* The COOP arithmetic of shape S (gpursa_shapes.h): static functions, so
 * that they call one another without naming the shape. */
template <class S>
struct gpursa_coop {
static constexpr int CO_H = S::H, CO_L = S::L, CO_T = S::T;
static constexpr int LANES = S::LANES, PER_WARP = S::PER_WARP;
static constexpr uint32_t GMASK = (1u << CO_T) - 1u;

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
static GPURSA_DEV uint32_t gpursa_coop_place(gpursa_coop_ctx *c, uint32_t tid, uint32_t *sub, int *spare)
{
    if constexpr (S::SPARE > 0) {
        const uint32_t lane = tid & 31u;
        uint32_t slot = lane / LANES, s = lane % LANES;
        *spare = slot == PER_WARP;
        s = *spare ? lane - PER_WARP * LANES : s;
        slot = *spare ? PER_WARP - 1 : slot;
        c->mask = ((1u << LANES) - 1u) << (slot * LANES)
                  | (slot == PER_WARP - 1 ? ~0u << (PER_WARP * LANES) : 0u);
        c->lane = (int)(slot * LANES + s);
        c->k = (int)(s % CO_T);
        c->gbase = c->lane - c->k;
        *sub = s;
        return (tid >> 5) * PER_WARP + slot;
    } else {
        (void)c;
        *spare = 0;
        *sub = tid % LANES;
        return tid / LANES;
    }
}

/* ... the rest of its context (sub from gpursa_coop_place) */
static GPURSA_DEV void gpursa_coop_ctx_at(gpursa_coop_ctx *c, uint32_t tid, uint32_t sub)
{
    if constexpr (S::SPARE > 0) {
        (void)c, (void)tid, (void)sub;                      /* set by gpursa_coop_place */
    } else {
        c->lane = (int)(tid & 31u);
        c->k = (int)(sub % CO_T);
        c->gbase = c->lane - c->k;
        c->mask = LANES == 32 ? 0xffffffffu : ((1u << (LANES & 31)) - 1u) << (c->lane - (int)sub);
    }
}

/* The lane of the same position in the item's other group (sub: this
 * lane's index among the item's) */
static GPURSA_DEV int gpursa_coop_partner(const gpursa_coop_ctx *c, uint32_t sub)
{
    if constexpr (S::SPARE > 0) {
        return sub < CO_T ? c->lane + CO_T : c->lane - CO_T;
    } else {
        (void)sub;
        return c->lane ^ CO_T;                               /* items start at multiples of 2T */
    }
}

/* ---- group-wide carries ------------------------------------------------------- */

/* This group's bits of a warp ballot. */
static GPURSA_DEV uint32_t gpursa_coop_group_bits(const gpursa_coop_ctx *c, int pred)
{
    return (gpursa_coop_ballot(c, pred) >> c->gbase) & GMASK;
}

/* Carry (or borrow) look-ahead over the group: g = this lane produces one,
 * p = it passes one on. Returns the one this lane receives; *out = the one
 * leaving the top lane. */
static GPURSA_DEV uint32_t gpursa_coop_resolve(const gpursa_coop_ctx *c, int g, int p, uint32_t *out)
{
    uint64_t G = gpursa_coop_group_bits(c, g), P = gpursa_coop_group_bits(c, p);
    uint64_t K = ((G << 1) + P) ^ P;
    *out = (uint32_t)(K >> CO_T) & 1u;
    return (uint32_t)(K >> c->k) & 1u;
}

/* The same over a double-length number: the lo slices are lanes 0..T-1 of a
 * 2T-lane group, the hi slices lanes T..2T-1. Returns the carry into the lo
 * slice, *hi_in the one into the hi slice, *out the one leaving the top. */
static GPURSA_DEV uint32_t gpursa_coop_resolve2(const gpursa_coop_ctx *c, int g_lo, int p_lo, int g_hi,
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
static GPURSA_DEV uint32_t gpursa_coop_add1(uint32_t *x, uint32_t v)
{
    uint64_t s = v;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        s += x[l];
        x[l] = (uint32_t)s;
        s >>= 32;
    }
    return (uint32_t)s;
}

/* x -= v (v < 2^32), returns the borrow out (0 or 1) */
static GPURSA_DEV uint32_t gpursa_coop_sub1(uint32_t *x, uint32_t v)
{
    uint32_t b = v;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        uint32_t t = x[l] - b;
        b = (uint32_t)(x[l] < b);
        x[l] = t;
    }
    return b;
}

/* r = a + b (+ cin), returns the carry out */
static GPURSA_DEV uint32_t gpursa_coop_add(uint32_t *r, const uint32_t *a, const uint32_t *b, uint32_t cin)
{
    uint64_t s = cin;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        s += (uint64_t)a[l] + b[l];
        r[l] = (uint32_t)s;
        s >>= 32;
    }
    return (uint32_t)s;
}

/* r = a - b, returns the borrow out */
static GPURSA_DEV uint32_t gpursa_coop_sub(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
    uint64_t d = 0;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        d = (uint64_t)a[l] - b[l] - (uint32_t)(d >> 63);
        r[l] = (uint32_t)d;
    }
    return (uint32_t)(d >> 63);
}

static GPURSA_DEV int gpursa_coop_all(const uint32_t *x, uint32_t v)
{
    uint32_t d = 0;
    GPURSA_UNROLL
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
#define GPURSA_PTX_MAD(op, d, x, y) op ".u32 %" #d ", %" #x ", %" #y ", %" #d ";\n\t"
#define GPURSA_PTX_ACC2(a) "+r"(a[0]), "+r"(a[1])
#define GPURSA_PTX_ACC4(a) GPURSA_PTX_ACC2(a), "+r"(a[2]), "+r"(a[3])
#define GPURSA_PTX_ACC6(a) GPURSA_PTX_ACC4(a), "+r"(a[4]), "+r"(a[5])
#define GPURSA_PTX_ACC8(a) GPURSA_PTX_ACC6(a), "+r"(a[6]), "+r"(a[7])
#define GPURSA_PTX_IN2(x) "r"(x[0]), "r"(x[1])
#define GPURSA_PTX_IN4(x) GPURSA_PTX_IN2(x), "r"(x[2]), "r"(x[3])
#define GPURSA_PTX_IN6(x) GPURSA_PTX_IN4(x), "r"(x[4]), "r"(x[5])
#define GPURSA_PTX_IN8(x) GPURSA_PTX_IN6(x), "r"(x[6]), "r"(x[7])
static GPURSA_DEV uint32_t gpursa_coop_mac(uint32_t *acc, const uint32_t *x, uint32_t y)
{
#ifdef __CUDACC__
    if constexpr (CO_L == 2 || CO_L == 4 || CO_L == 6 || CO_L == 8) {
        uint32_t c;
        if constexpr (CO_L == 2) {
            asm(GPURSA_PTX_MAD("mad.lo.cc", 0, 3, 5)
                GPURSA_PTX_MAD("madc.lo.cc", 1, 4, 5)
                "addc.u32 %2, 0, 0;\n\t"
                GPURSA_PTX_MAD("mad.hi.cc", 1, 3, 5)
                GPURSA_PTX_MAD("madc.hi", 2, 4, 5)
                : GPURSA_PTX_ACC2(acc), "=&r"(c)
                : GPURSA_PTX_IN2(x), "r"(y));
        } else if constexpr (CO_L == 4) {
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
        } else if constexpr (CO_L == 6) {
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
        } else if constexpr (CO_L == 8) {
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
        }
        return c;
    } else
#endif
    {
        uint32_t carry = 0;
        GPURSA_UNROLL
        for (int l = 0; l < CO_L; l++) {
            uint64_t p = (uint64_t)x[l] * y + acc[l] + carry;
            acc[l] = (uint32_t)p;
            carry = (uint32_t)(p >> 32);
        }
        return carry;
    }
}

/* r = mask ? a : b (mask all ones or zero) */
static GPURSA_DEV void gpursa_coop_select(uint32_t *r, uint32_t mask, const uint32_t *a, const uint32_t *b)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = (a[l] & mask) | (b[l] & ~mask);
}

static GPURSA_DEV void gpursa_coop_copy(uint32_t *r, const uint32_t *a)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = a[l];
}

/* this lane's slice of a half-length number in (global) memory */
static GPURSA_DEV void gpursa_coop_load(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *v)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = v[c->k * CO_L + l];
}

/* this lane's lo and hi slices of item `item` of a SoA array */
static GPURSA_DEV void gpursa_coop_load_soa(const gpursa_coop_ctx *c, uint32_t *lo, uint32_t *hi,
                                            const uint32_t *soa, uint32_t item, uint32_t stride)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        lo[l] = soa[(size_t)(c->k * CO_L + l) * stride + item];
        hi[l] = soa[(size_t)(CO_H + c->k * CO_L + l) * stride + item];
    }
}

/* All ones when the group's half-length values x and y are equal. */
static GPURSA_DEV uint32_t gpursa_coop_eq(const gpursa_coop_ctx *c, const uint32_t *x, const uint32_t *y)
{
    uint32_t d = 0;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        d |= x[l] ^ y[l];
    return gpursa_coop_group_bits(c, d != 0) == 0 ? 0xffffffffu : 0u;
}

/* Add the pending per-lane carries cy (at limb L of each lane: the next
 * lane's limb 0) into acc, and resolve what ripples. Returns the group's
 * total overflow above limb H (the same in every lane). */
static GPURSA_DEV uint32_t gpursa_coop_settle(const gpursa_coop_ctx *c, uint32_t *acc, uint32_t cy)
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
static GPURSA_DEV void gpursa_coop_final_sub(const gpursa_coop_ctx *c, uint32_t *acc, uint32_t ovf, const uint32_t *m)
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
static GPURSA_DEV void gpursa_coop_wipe(uint32_t *p, int n)
{
    GPURSA_UNROLL
    for (int l = 0; l < n; l++)
        ((volatile uint32_t *)p)[l] = 0;
}

/* All ones when the group's x < m: the borrow out of x - m */
static GPURSA_DEV uint32_t gpursa_coop_lt(const gpursa_coop_ctx *c, const uint32_t *x, const uint32_t *m)
{
    uint32_t d[CO_L], out;
    uint32_t g = gpursa_coop_sub(d, x, m);
    (void)gpursa_coop_resolve(c, (int)g, gpursa_coop_all(d, 0), &out);
    return 0u - out;
}

/* x += v over the group; returns the carry out of the top (0 or 1) */
static GPURSA_DEV uint32_t gpursa_coop_add_group(const gpursa_coop_ctx *c, uint32_t *x, const uint32_t *v)
{
    uint32_t in, out;
    uint32_t g = gpursa_coop_add(x, x, v, 0);
    in = gpursa_coop_resolve(c, (int)g, gpursa_coop_all(x, 0xffffffffu), &out);
    (void)gpursa_coop_add1(x, in);
    return out;
}

/* All ones when a == b (words, a mask, no comparison that could branch) */
static GPURSA_DEV uint32_t gpursa_coop_eqw(uint32_t a, uint32_t b)
{
    uint32_t d = a ^ b;
    return ((d | (0u - d)) >> 31) - 1u;
}

/* A stage's new status word (gpursa_cuda_status.h): next where ok (all
 * ones), else BADINPUT where the word was BADINPUT and the preset (a fault)
 * otherwise; by masks */
static GPURSA_DEV uint32_t gpursa_coop_status(uint32_t ok, uint32_t st, uint32_t next)
{
    const uint32_t bad = gpursa_coop_eqw(st, GPURSA_DEV_ST_BADINPUT);
    return (ok & next) | (~ok & ((bad & GPURSA_DEV_ST_BADINPUT) | (~bad & GPURSA_DEV_ST_PRESET)));
}

/* ---- Montgomery arithmetic --------------------------------------------------- */

/* The CIOS loop. r = (x + a*b) / R mod m, x = lo + hi*R (hi: NULL for 0).
 * With a == NULL the product term is left out (a reduction of x < m R).
 * Inputs: a < R, b < m (or a == NULL). */
static GPURSA_DEV void gpursa_coop_mont(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *lo, const uint32_t *hi,
                                        const uint32_t *a, const uint32_t *b, const uint32_t *m,
                                        uint32_t m0inv)
{
    uint32_t acc[CO_L];
    uint64_t cy = 0;
    const int top = c->k == CO_T - 1;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        acc[l] = lo != NULL ? lo[l] : 0;
    GPURSA_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_UNROLL
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
            GPURSA_UNROLL
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
static GPURSA_DEV void gpursa_coop_mul(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *a, const uint32_t *b,
                                       const uint32_t *m, uint32_t m0inv)
{
    gpursa_coop_mont(c, r, NULL, NULL, a, b, m, m0inv);
}

/* r = (lo + hi R) R mod m: x (< m R) into Montgomery form, by a reduction
 * (x / R) and a multiplication by R^3 */
static GPURSA_DEV void gpursa_coop_to_mont(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *lo, const uint32_t *hi,
                                           const uint32_t *m, uint32_t m0inv, const uint32_t *rrr)
{
    uint32_t t[CO_L];
    gpursa_coop_mont(c, t, lo, hi, NULL, NULL, m, m0inv);
    gpursa_coop_mul(c, r, t, rrr, m, m0inv);
}

/* r = x^e for a public e, Montgomery form */
static GPURSA_DEV void gpursa_coop_exp_public(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *x, uint64_t e,
                                              const uint32_t *m, uint32_t m0inv)
{
    int bit = 63;
    while (bit > 0 && !((e >> bit) & 1))
        bit--;
    gpursa_coop_copy(r, x);
    GPURSA_ROLLED
    while (--bit >= 0) {
        gpursa_coop_mul(c, r, r, r, m, m0inv);
        if ((e >> bit) & 1)                                  /* e is public */
            gpursa_coop_mul(c, r, r, x, m, m0inv);
    }
}

/* r = table entry idx (secret): every entry read, the one kept by mask */
static GPURSA_DEV void gpursa_coop_table_select(uint32_t *r, const uint32_t *table, uint32_t idx)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = 0;
    GPURSA_ROLLED
    for (int k = 0; k < (1 << S::W); k++) {
        uint32_t mask = (uint32_t)(((uint64_t)(idx ^ (uint32_t)k) - 1) >> 32);
        GPURSA_UNROLL
        for (int l = 0; l < CO_L; l++)
            r[l] |= table[k * CO_L + l] & mask;
    }
}

/* r = x^d mod m over all 32H bits of d (fixed 4-bit windows; d in memory,
 * every lane reads the same words), Montgomery form; one = R mod m (slice).
 * table: this lane's 16 * L words. One multiplication call site in the
 * window loop (squarings are x*x), so the code stays small. */
static GPURSA_DEV void gpursa_coop_exp(const gpursa_coop_ctx *c, uint32_t *r, const uint32_t *x, const uint32_t *d,
                                       const uint32_t *m, uint32_t m0inv, const uint32_t *one, uint32_t *table)
{
    const int bits = 32 * CO_H, W = S::W;
    uint32_t sel[CO_L], t[CO_L];
    gpursa_coop_copy(table, one);
    gpursa_coop_copy(table + CO_L, x);
    gpursa_coop_copy(t, x);
    GPURSA_ROLLED
    for (int k = 2; k < (1 << W); k++) {                     /* t = x^k */
        gpursa_coop_mul(c, t, t, x, m, m0inv);
        gpursa_coop_copy(table + k * CO_L, t);
    }
    int pos = bits - W;
    gpursa_coop_table_select(r, table, gpursa_exp_window(d, bits, pos, W));
    GPURSA_ROLLED
    while (pos > 0) {                                        /* pos public */
        pos -= W;
        gpursa_coop_table_select(sel, table, gpursa_exp_window(d, bits, pos, W));
        GPURSA_ROLLED
        for (int s = 0; s <= W; s++) {
            GPURSA_UNROLL
            for (int l = 0; l < CO_L; l++)                   /* s public */
                t[l] = s < W ? r[l] : sel[l];
            gpursa_coop_mul(c, r, r, t, m, m0inv);
        }
    }
    gpursa_coop_wipe(sel, CO_L);
    gpursa_coop_wipe(t, CO_L);
}

/* (lo, hi) = a * b, both half-length, no reduction: the CIOS loop without
 * m; limb i of the product leaves lane 0 at step i and is kept by lane i/L. */
static GPURSA_DEV void gpursa_coop_mpmul(const gpursa_coop_ctx *c, uint32_t *lo, uint32_t *hi, const uint32_t *a,
                                         const uint32_t *b)
{
    uint64_t cy = 0;
    const int top = c->k == CO_T - 1;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        hi[l] = lo[l] = 0;
    GPURSA_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_UNROLL
        for (int j = 0; j < CO_L; j++) {
            uint32_t limb, up;
            cy += gpursa_coop_mac(hi, a, gpursa_coop_shfl(c, b[j], c->gbase + i0));
            limb = gpursa_coop_shfl(c, hi[0], c->gbase);
            lo[j] = c->k == i0 ? limb : lo[j];               /* public select */
            up = gpursa_coop_shfl(c, hi[0], top ? c->lane : c->lane + 1);
            up = top ? 0 : up;
            GPURSA_UNROLL
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
static GPURSA_DEV void gpursa_coop_garner(const gpursa_coop_ctx *c, int h, int partner, const gpursa_rsa_keydata *kd,
                                          uint32_t *lo, uint32_t *hi, const uint32_t *x, uint32_t *y, uint32_t *s,
                                          uint32_t *z, uint32_t *pm, uint32_t *prrr, uint32_t *aux)
{
    uint32_t cin, hin, out;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        s[l] = gpursa_coop_shfl(c, y[l], partner);
    gpursa_coop_load(c, pm, kd->p);
    gpursa_coop_load(c, prrr, kd->p_rrr);
    gpursa_coop_to_mont(c, y, s, NULL, pm, kd->p0inv, prrr);           /* sq R mod p */
    cin = gpursa_coop_sub(z, x, y);
    cin = gpursa_coop_resolve(c, (int)cin, gpursa_coop_all(z, 0), &out);
    (void)gpursa_coop_sub1(z, cin);
    GPURSA_UNROLL
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
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        uint32_t vh = gpursa_coop_shfl(c, hi[l], partner);
        hi[l] = h ? vh : hi[l];
    }
}

/* ---- the whole operation --------------------------------------------------------- */

/* p, which the compiler must take as a new pointer, so that loads through
 * it are not merged with earlier loads of the same memory */
static GPURSA_DEV const void *gpursa_coop_opaque(const void *p)
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
 * in the shuffles. Where S::fp64 the secret exponentiation runs on FP64
 * limbs (gpursa_coop_fp<S>, gpursa_coop_fp.h): the one place that chooses.
 * Its steps are written here, in the item, rather than in a function of
 * gpursa_coop_fp<S>: the compiler optimises such a function before it
 * inlines it, and then lays out and schedules the FP64 kernels otherwise. */
static GPURSA_DEV void gpursa_coop_item(const gpursa_coop_args *a, uint32_t tid)
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
    uint32_t rrr[CO_L], one[CO_L], table[(1 << S::W) * CO_L];  /* 32-bit limbs only */

    gpursa_coop_ctx_at(&c, tid, sub);
    const int partner = gpursa_coop_partner(&c, sub);
    gpursa_coop_load(&c, m, h ? kd->q : kd->p);
    /* in < n < m R: its reduction modulo this half's prime is exact. (An
     * item the blinding stage refused may hold anything below R^2 here: the
     * same constant-time code then gives some value, which the unblinding
     * stage discards.) */
    gpursa_coop_load_soa(&c, lo, hi, a->in, item, a->stride);
    if constexpr (S::fp64) {
        using F = gpursa_coop_fp<S>;
        const uint64_t *m52 = h ? kd->q52 : kd->p52, *fin = GPURSA_FP_IN(F::FP_FULL, kd, h);
        uint64_t mp = h ? kd->q0inv52 : kd->p0inv52;
        double cf[F::FP_L], rf[F::FP_L], t[F::FP_L];
        F::gpursa_fp_in_full(&c, cf, lo, hi, m, m0inv, fin, m52, mp);      /* in R52 */
        F::gpursa_fp_exp(&c, rf, cf, dexp, m52, mp, GPURSA_FP_ONE(F::FP_FULL, kd, h), tid); /* in^d R52 */
        /* The key's values are loaded again, through a pointer the
         * compiler cannot see through: else it keeps the first loads'
         * values in registers across the exponentiation, registers that
         * the FP64 loop needs. */
        kd = (const gpursa_rsa_keydata *)gpursa_coop_opaque(kd);
        gpursa_coop_load(&c, m, h ? kd->q : kd->p);
        m52 = h ? kd->q52 : kd->p52;
        mp = h ? kd->q0inv52 : kd->p0inv52;
        gpursa_coop_load(&c, s, h ? kd->q_one : kd->p_one);
        F::gpursa_fp_from32(&c, t, s);                                       /* R mod m */
        F::gpursa_fp_mul_cold(c, rf, rf, t, m52, mp, 0);
        F::gpursa_fp_out(&c, x, rf, m);                                      /* in^d R mod m */
        GPURSA_UNROLL
        for (int l = 0; l < F::FP_L; l++) {
            ((volatile double *)cf)[l] = 0;
            ((volatile double *)rf)[l] = 0;
            ((volatile double *)t)[l] = 0;
        }
    } else {
        gpursa_coop_load(&c, rrr, h ? kd->q_rrr : kd->p_rrr);
        gpursa_coop_load(&c, one, h ? kd->q_one : kd->p_one);
        gpursa_coop_to_mont(&c, y, lo, hi, m, m0inv, rrr);              /* in R mod m */
        gpursa_coop_exp(&c, x, y, dexp, m, m0inv, one, table);          /* in^d R mod m */
    }
    gpursa_coop_mont(&c, y, x, NULL, NULL, NULL, m, m0inv);              /* in^d mod m */

    gpursa_coop_garner(&c, h, partner, kd, lo, hi, x, y, s, z, pm, prrr, aux);
    /* the p group stores the low half of out, the q group the high half */
    if (live) {
        GPURSA_UNROLL
        for (int l = 0; l < CO_L; l++)
            a->out[(size_t)(h * CO_H + c.k * CO_L + l) * a->stride + item] = h ? hi[l] : lo[l];
    }
    /* Wipes: the window table (local memory: powers of in) by stores that
     * reach it; the register arrays, everything else derived from in and the
     * key's values, as gpursa_coop_wipe can. */
    if constexpr (!S::fp64) {
        gpursa_mem_wipe(table, (1 << S::W) * CO_L);
        gpursa_coop_wipe(rrr, CO_L);
        gpursa_coop_wipe(one, CO_L);
    }
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
};

/* ---- a half's x^e on 32-bit limbs --------------------------------------------------
 *
 * For the factor and check stages (gpursa_coop_epow.h); gpursa_coop_fp<S>
 * has the same function on FP64 limbs, and gpursa_coop_exp<S>
 * (gpursa_coop_fp.h) picks one by S::fp64. */
template <class S>
struct gpursa_coop_int {
using K = gpursa_coop<S>;
static constexpr int CO_L = S::L;

/* This half's v = x^e for the key's public e, times R_n = R^2 (the whole
 * modulus' Montgomery radix) when scaled (public): with v' = v, or v R^2 when
 * scaled, xm = v' R mod m and y = v' mod m (32-bit slices, < m) for the
 * full-length x = (lo, hi) < m R. t: scratch. */
static GPURSA_DEV void gpursa_coop_half_exp_public(const gpursa_coop_ctx *c, int h, const gpursa_rsa_keydata *kd,
                                                   const uint32_t *m, uint32_t m0inv, const uint32_t *lo,
                                                   const uint32_t *hi, uint32_t *xm, uint32_t *y, uint32_t *t,
                                                   int scaled)
{
    uint32_t u[CO_L];
    K::gpursa_coop_load(c, t, h ? kd->q_rrr : kd->p_rrr);
    K::gpursa_coop_to_mont(c, u, lo, hi, m, m0inv, t);                      /* x R */
    K::gpursa_coop_exp_public(c, xm, u, kd->e, m, m0inv);                   /* v R */
    K::gpursa_coop_wipe(u, CO_L);
    if (scaled)
        K::gpursa_coop_mul(c, xm, xm, t, m, m0inv);                         /* v R^3 */
    K::gpursa_coop_mont(c, y, xm, NULL, NULL, NULL, m, m0inv);              /* v' mod m */
}
};

#endif /* GPURSA_COOP_H_INCLUDED */
