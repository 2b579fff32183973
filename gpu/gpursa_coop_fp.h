/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop_fp.h - the COOP kernel's arithmetic on FP64 (52-bit) limbs,
 * gpursa_coop_fp<S>, for the shapes with S::fp64 (gpursa_shapes.h): the
 * limb products and carry passes, the Montgomery multiplication and
 * squaring, the conversions from and to 32-bit slices, the windowed
 * exponentiation and its table, the item's other multiplications on 52-bit
 * limbs (gpursa_fp_mul_cold and the helpers around it), and this
 * arithmetic's gpursa_coop_half_exp_public (a half's x^e, for
 * gpursa_coop_epow.h). gpursa_coop_item runs the exponentiation here on its
 * own (its S::fp64 part).
 *
 * It includes gpursa_coop.h, whose 32-bit arithmetic gpursa_coop<S> (K
 * here) it uses: the shape's constants (CO_H, CO_L, CO_T), gpursa_coop_ctx,
 * GPURSA_DEV / GPURSA_UNROLL / GPURSA_ROLLED, the shuffles,
 * gpursa_coop_group_bits, _load, _mont and _final_sub; and from
 * gpursa_rsa_op.h the key's constants in 52-bit limbs, gpursa_exp_window
 * and gpursa_mem_wipe. The host tests compile it as C++ with the rest
 * (tests/gpu/test_gpu_coop.cc).
 */
#ifndef GPURSA_COOP_FP_H_INCLUDED
#define GPURSA_COOP_FP_H_INCLUDED

#include <type_traits>
#include "gpu/gpursa_coop.h"

/* ---- FP64 limbs (S::fp64) --------------------------------------------------
 *
 * Why: the 32-bit exponentiation (gpursa_coop_exp) spends its time in
 * 32x32-bit products, and
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
 * With S::fp64 the item's two secret exponentiations run here, and
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
 * With S::fp_early (the shape's choice) lane 0 takes each
 * step's carry from its column before m_0 q is added, which shortens the
 * chain from q to the next step's column for one or two more instructions
 * a step (SASS).
 * With S::fp_barrier (likewise, on the GPU) the block's threads
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
 * limb products with 128-bit integers (tests/gpu/test_gpu_coop.cc checks the
 * device's FMA form against them as well).
 */
#define GPURSA_FP_M52 ((1ull << 52) - 1)
/* The bits of the doubles 2^104 + hi 2^52 and 2^52 + lo (gpursa_fp_prod)
 * are hi and lo plus these: the exponent bits of 2^104 and of 2^52. */
#define GPURSA_FP_HI_BIAS 0x4670000000000000ull
#define GPURSA_FP_LO_BIAS 0x4330000000000000ull
/* The same in units of 2^52 */
#define GPURSA_FP_HI_B (GPURSA_FP_HI_BIAS >> 52)
#define GPURSA_FP_LO_B (GPURSA_FP_LO_BIAS >> 52)

#ifdef __CUDACC__
static GPURSA_DEV uint64_t gpursa_fp_bits(double x) { return (uint64_t)__double_as_longlong(x); }
static GPURSA_DEV double gpursa_fp_from_bits(uint64_t v) { return __longlong_as_double((long long)v); }
/* the two halves of a b (integers, a, b <= 2^52, ab <= 2^104), each plus
 * the exponent bits of its double (GPURSA_FP_HI_BIAS, _LO_BIAS) */
static GPURSA_DEV void gpursa_fp_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
    double h = __fma_rz(a, b, 0x1p104);
    double l = __fma_rn(a, b, __dsub_rn(0x1p104 + 0x1p52, h));
    *hi = gpursa_fp_bits(h);
    *lo = gpursa_fp_bits(l);
}
#else
#include <string.h>
static GPURSA_DEV uint64_t gpursa_fp_bits(double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof(v));
    return v;
}
static GPURSA_DEV double gpursa_fp_from_bits(uint64_t v)
{
    double x;
    memcpy(&x, &v, sizeof(x));
    return x;
}
static GPURSA_DEV uint64_t gpursa_fp_d2u52(double x);
static GPURSA_DEV void gpursa_fp_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
    unsigned __int128 p = (unsigned __int128)gpursa_fp_d2u52(a) * gpursa_fp_d2u52(b);
    *hi = (uint64_t)(p >> 52) + GPURSA_FP_HI_BIAS;
    *lo = ((uint64_t)p & GPURSA_FP_M52) | GPURSA_FP_LO_BIAS;
}
#endif

/* an integer of at most 2^52 as a double: its bits added to those of 2^52
 * (2^52 itself carries into the exponent: 2^53), less 2^52 (exact; a
 * conversion instruction is slower) */
static GPURSA_DEV double gpursa_fp_u52(uint64_t v)
{
    return gpursa_fp_from_bits(v + GPURSA_FP_LO_BIAS) - 0x1p52;
}

/* ... and back (x an integer below 2^52). Not a conversion instruction:
 * on x86-64 a double-to-uint64 conversion branches on the value, which the
 * host emulation must not do with secrets (test_gpu_coop_ct). */
static GPURSA_DEV uint64_t gpursa_fp_d2u52(double x)
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
static GPURSA_DEV double gpursa_fp_q(uint64_t x, uint64_t mp)
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
static GPURSA_DEV uint32_t gpursa_fp_shr(uint32_t x, uint32_t s)
{
#ifdef __CUDACC__
    return __funnelshift_rc(x, 0u, s);
#else
    return s < 32 ? x >> s : 0u;
#endif
}

static GPURSA_DEV uint64_t gpursa_fp_shfl64(const gpursa_coop_ctx *c, uint64_t v, int src)
{
    uint64_t lo = gpursa_coop_shfl(c, (uint32_t)v, src), hi = gpursa_coop_shfl(c, (uint32_t)(v >> 32), src);
    return lo | (hi << 32);
}

static GPURSA_DEV double gpursa_fp_shfl(const gpursa_coop_ctx *c, double v, int src)
{
    return gpursa_fp_from_bits(gpursa_fp_shfl64(c, gpursa_fp_bits(v), src));
}

/* The FP64 arithmetic of shape S (S::fp64; gpursa_shapes.h), over the
 * 32-bit arithmetic of gpursa_coop<S> (K). */
template <class S>
struct gpursa_coop_fp {
using K = gpursa_coop<S>;
static constexpr int CO_H = S::H, CO_L = S::L, CO_T = S::T;
/* The key's constants exist for GPURSA_FP_LIMBS limbs (a multiple of 4)
 * and GPURSA_FP_LIMBS_MIN (gpursa_rsa_op.h): the first where T lanes share
 * them evenly, else the second (RSA-3072 on 3 lanes: 30) */
static constexpr bool FP_FULL = GPURSA_FP_LIMBS(CO_H) % CO_T == 0;
static constexpr int FP_F = FP_FULL ? GPURSA_FP_LIMBS(CO_H) : GPURSA_FP_LIMBS_MIN(CO_H);
static constexpr int FP_L = FP_F / CO_T;
static_assert(FP_F % CO_T == 0, "COOP FP: the lanes per half must divide the 52-bit limbs");
/* The FP64 exponentiation's window bits (S::fp_w: the 32-bit one's, 4,
 * unless the shape sets another). The table, 2^W entries of FL doubles a lane,
 * is in local memory and every window reads all of it. At 4 bits a block
 * of 256 threads with 8-10 limbs a lane (or two blocks with 5) holds
 * 256-320 KB of tables an SM, more than the L1 that local memory goes
 * through (256 KB with the shared memory), so the reads go to the L2 and
 * beyond it to DRAM. 3 bits halve the table for a third more
 * multiplications by a table entry, and S::fp_smem moves entries
 * into shared memory (below; doc/design.md, "Why the kernels are shaped as they
 * are"). */
static_assert(S::fp_w >= 1 && S::fp_w <= 6, "COOP FP: window bits 1..6");


/* One carry pass over the group's columns, every limb at once: each keeps
 * its low 52 bits and adds the carry out of the limb below it (a lane's
 * limb 0: out of the lane below's top limb; none into lane 0). Two
 * instructions deep for any FL, where a pass from limb to limb is FL
 * carries deep. The carry out of the top lane is dropped: it is 0 while
 * the value is below R52. */
static GPURSA_DEV void gpursa_fp_carry_pass(const gpursa_coop_ctx *c, uint64_t *acc)
{
    uint32_t cy[FP_L], cin;
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        cy[l] = (uint32_t)(acc[l] >> 52);
        acc[l] &= GPURSA_FP_M52;
    }
    cin = gpursa_coop_shfl(c, cy[FP_L - 1], c->k == 0 ? c->lane : c->lane - 1);
    acc[0] += c->k == 0 ? 0 : cin;
    GPURSA_UNROLL
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
static GPURSA_DEV void gpursa_fp_settle(const gpursa_coop_ctx *c, double *r, uint64_t *acc, int lazy)
{
    uint64_t s;
    uint32_t cin, in, out;
    if (lazy) {
        gpursa_fp_carry_pass(c, acc);
        gpursa_fp_carry_pass(c, acc);
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            r[l] = gpursa_fp_u52(acc[l]);
        return;
    }
    GPURSA_UNROLL
    for (int l = 0; l < FP_L - 1; l++) {                     /* in the lane */
        acc[l + 1] += acc[l] >> 52;
        acc[l] &= GPURSA_FP_M52;
    }
    /* the lane's top carry (< 2^12) goes to the next lane */
    cin = gpursa_coop_shfl(c, (uint32_t)(acc[FP_L - 1] >> 52), c->k == 0 ? c->lane : c->lane - 1);
    acc[FP_L - 1] &= GPURSA_FP_M52;
    s = c->k == 0 ? 0 : cin;
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        s += acc[l];
        acc[l] = s & GPURSA_FP_M52;
        s >>= 52;
    }
    /* now s is 0 or 1; the 0/1 carries between lanes by look-ahead */
    {
        uint64_t all = GPURSA_FP_M52;
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            all &= acc[l];
        in = K::gpursa_coop_resolve(c, (int)s, all == GPURSA_FP_M52, &out);
    }
    s = in;
    GPURSA_UNROLL
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
static GPURSA_DEV uint64_t gpursa_fp_w(int sq, int j, int l)
{
    const int d = (l - j + FP_L) % FP_L;
    if (!sq || d == 0)
        return 1;
    return 2 * d < FP_L || (2 * d == FP_L && j < FP_L / 2) ? 2 : 0;
}

/* Bias units (gpursa_fp_mul) that step j adds to a column at an inner
 * position (1..F-1) whose limb index within its lane is r */
static GPURSA_DEV uint64_t gpursa_fp_bias_step(int sq, int j, int r)
{
    return GPURSA_FP_LO_B * (1 + gpursa_fp_w(sq, j, r))
           + GPURSA_FP_HI_B * (1 + gpursa_fp_w(sq, j, (r + FP_L - 1) % FP_L));
}

/* ... over FL consecutive steps, for a column whose limb index is r at the
 * first of them (every step moves it down one position) */
static GPURSA_DEV uint64_t gpursa_fp_bias_period(int sq, int r)
{
    uint64_t b = 0;
    GPURSA_UNROLL
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
static GPURSA_DEV void gpursa_fp_mont(const gpursa_coop_ctx *c, double *r, const double *a, const double *b,
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
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        acc[l] = 0;
    GPURSA_ROLLED
    for (int i0 = 0; i0 < CO_T; i0++) {
        GPURSA_UNROLL
        for (int j = 0; j < FP_L; j++) {
            uint64_t hi, lo, up = 0, down;
            uint32_t carry;
            double bj = gpursa_fp_shfl(c, b[j], c->gbase + i0), q;
            /* the bias of the column that leaves lane 0 at this step: full
             * periods for i0, then steps 0..j of this one (at positions j..0;
             * position 0 takes lo halves only) */
            uint64_t bias0 = GPURSA_FP_LO_B * (1 + gpursa_fp_w(sq, j, 0));
            uint32_t ub;
            GPURSA_UNROLL
            for (int u = 0; u < j; u++)
                bias0 += gpursa_fp_bias_step(sq, u, j - u);
            GPURSA_UNROLL
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
            if constexpr (S::fp_early) {
                /* lane 0's carry before m_0 q is added, off the chain from q to
                 * the next column: that half makes the column a multiple of
                 * 2^52, so the carry is the unbiased column rounded up (ub
                 * counts the bias of m_0 q's lo half, not in the column yet) */
                carry = gpursa_fp_shr((uint32_t)((acc[0] + ((uint64_t)ub << 32)
                                                  + ((GPURSA_FP_LO_B << 52) + GPURSA_FP_M52)) >> 32), cshift);
            }
            up = 0;
            GPURSA_UNROLL
            for (int l = 0; l < FP_L; l++) {
                gpursa_fp_prod(m[l], q, &hi, &lo);
                acc[l] += lo + up;
                up = hi;
            }
            /* lane 0's column 0 is now 0 mod 2^52: its carry is the bits
             * above, less the bias; then every lane shifts down one column */
            if constexpr (!S::fp_early)
                carry = gpursa_fp_shr((uint32_t)(acc[0] >> 32) + ub, cshift);
            down = gpursa_fp_shfl64(c, acc[0] & keep, below);
            GPURSA_UNROLL
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
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        uint64_t bias = GPURSA_FP_HI_B * (1 + gpursa_fp_w(sq, l, FP_L - 1));
        GPURSA_UNROLL
        for (int i = 1; i < FP_L - l; i++)
            bias += gpursa_fp_bias_step(sq, l + i, FP_L - i);
        acc[l] -= (bias + (uint64_t)(CO_T - 1 - c->k) * gpursa_fp_bias_period(sq, l)) << 52;
    }
    gpursa_fp_settle(c, r, acc, lazy);
}

/* r = a b / R52 mod m, settled lazily */
static GPURSA_DEV void gpursa_fp_mul(const gpursa_coop_ctx *c, double *r, const double *a, const double *b,
                                     const double *m, uint64_t mp)
{
    gpursa_fp_mont(c, r, a, b, m, mp, 0, 1);
}

/* r = a^2 / R52 mod m, settled lazily */
static GPURSA_DEV void gpursa_fp_sqr(const gpursa_coop_ctx *c, double *r, const double *a, const double *m,
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
static constexpr int FP_D1 = 52 * FP_L - 32 * CO_L;
static constexpr int FP_XW = (FP_D1 * CO_T + 31) / 32;      /* words from the lane above */
static constexpr int FP_XL = (FP_D1 * (CO_T - 1) + 51) / 52;  /* limbs from the lane below */
static_assert(FP_D1 >= 0 && FP_D1 * CO_T <= 32 * CO_L,
              "COOP FP: a lane's 52-bit limbs must start within its own or the next lane's words");

/* this lane's 52-bit limbs (doubles) of the half-length number whose 32-bit
 * slices are x */
static GPURSA_DEV void gpursa_fp_from32(const gpursa_coop_ctx *c, double *r, const uint32_t *x)
{
    /* this lane's words, the next lane's first FP_XW (none above the top
     * lane), and two zero words for the last limb's reads */
    uint32_t w[CO_L + FP_XW + 2];
    const int top = c->k == CO_T - 1;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        w[l] = x[l];
    GPURSA_UNROLL
    for (int j = 0; j < FP_XW; j++) {
        uint32_t v = gpursa_coop_shfl(c, x[j], top ? c->lane : c->lane + 1);
        w[CO_L + j] = top ? 0u : v;
    }
    w[CO_L + FP_XW] = w[CO_L + FP_XW + 1] = 0;
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        const uint32_t b = (uint32_t)(FP_D1 * c->k + 52 * l), i = b >> 5, s = b & 31u;
        uint64_t lo = ((uint64_t)w[i + 1] << 32 | w[i]) >> s;
        uint64_t hi = ((uint64_t)w[i + 2] << 32 | w[i + 1]) >> s;
        r[l] = gpursa_fp_u52(((uint64_t)(uint32_t)hi << 32 | (uint32_t)lo) & GPURSA_FP_M52);
    }
    GPURSA_UNROLL
    for (int l = 0; l < CO_L + FP_XW + 2; l++)
        ((volatile uint32_t *)w)[l] = 0;
}

/* the inverse: 32-bit slices of the number (< 2^(32 H); bits above are
 * dropped) whose 52-bit limbs are f, settled fully (each < 2^52) */
static GPURSA_DEV void gpursa_fp_to32(const gpursa_coop_ctx *c, uint32_t *r, const double *f)
{
    /* the lane below's top FP_XL limbs (none below lane 0), this lane's,
     * and a zero limb for the last word's reads */
    uint64_t v[FP_XL + FP_L + 1];
    GPURSA_UNROLL
    for (int j = 0; j < FP_XL; j++) {
        uint64_t u = gpursa_fp_shfl64(c, gpursa_fp_d2u52(f[FP_L - FP_XL + j]), c->k == 0 ? c->lane : c->lane - 1);
        v[j] = c->k == 0 ? 0 : u;
    }
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        v[FP_XL + l] = gpursa_fp_d2u52(f[l]);
    v[FP_XL + FP_L] = 0;
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        const uint32_t b = (uint32_t)(32 * l + 52 * FP_XL - FP_D1 * c->k), i = b / 52, s = b - 52 * i;
        r[l] = (uint32_t)((v[i] >> s) | (v[i + 1] << (52 - s)));
    }
    GPURSA_UNROLL
    for (int l = 0; l < FP_XL + FP_L + 1; l++)
        ((volatile uint64_t *)v)[l] = 0;
}

/* this lane's limbs of a 52-bit constant of the key */
static GPURSA_DEV void gpursa_fp_load(const gpursa_coop_ctx *c, double *r, const uint64_t *v)
{
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = gpursa_fp_u52(v[c->k * FP_L + l]);
}

/* The window table, 2^W entries of FL doubles a lane: the first
 * S::fp_smem of them (an even number; 0 by default) in the block's
 * dynamic shared memory ts, the others in local memory tl. Each part is
 * limb-major, so that entries 2i and 2i + 1 of a limb are one aligned 16-byte
 * load; in shared memory the 16-byte pairs of a block's threads lie side by
 * side, a warp's read of one pair 512 consecutive bytes (the host emulation:
 * a thread's own array). Shared memory does not go through the L1, whose
 * misses on the table go to the L2 and DRAM (S::fp_w, above).
 * The shapes that set it take 8 of 16 entries: at 10 limbs a lane that is
 * 160 KB a block, within the 163 KB an A100 allows one; more takes L1 from
 * the local half and the stack, and on Hopper 10 entries and 6 are both
 * slower (doc/design.md, "What was tried and lost").
 * The addresses depend on the thread and public indices only. */
static_assert(S::fp_smem % 2 == 0 && S::fp_smem <= (1 << S::fp_w),
              "COOP FP: an even number of table entries in shared memory, at most 2^W");
static constexpr int FP_E = 1 << S::fp_w, FP_NS = S::fp_smem, FP_NL = FP_E - FP_NS;
#ifdef __CUDACC__
static constexpr int FP_SSTRIDE = S::threads;
#else
static constexpr int FP_SSTRIDE = 1;
#endif
/* the block's dynamic shared memory: the table entries there, every thread's */
static constexpr size_t SMEM_BYTES = (size_t)S::threads * FP_NS * FP_L * sizeof(double);
/* entry k's limb l: at ts[GPURSA_FP_SIX(k, l)] for k < NS, else tl[GPURSA_FP_LIX(k, l)] */
#define GPURSA_FP_SIX(k, l) (2 * FP_SSTRIDE * ((l) * (FP_NS / 2) + (k) / 2) + (k) % 2)
#define GPURSA_FP_LIX(k, l) ((l) * FP_NL + (k) - FP_NS)

static GPURSA_DEV double *gpursa_fp_entry(double *ts, double *tl, int k, int l)
{
    return k < FP_NS ? &ts[GPURSA_FP_SIX(k, l)] : &tl[GPURSA_FP_LIX(k, l)];
}

/* the pair at p (entries k and k + 1 of a limb), each kept by its mask,
 * ORed together */
static GPURSA_DEV uint64_t gpursa_fp_pick(const double *p, uint64_t m0, uint64_t m1)
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
static GPURSA_DEV void gpursa_fp_table_select(double *r, const double *ts, const double *tl, uint32_t idx)
{
    uint64_t v[FP_L];
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        v[l] = 0;
    GPURSA_ROLLED
    for (int k = 0; k < FP_NS; k += 2) {
        const uint64_t m0 = GPURSA_FP_MASK(idx, k), m1 = GPURSA_FP_MASK(idx, k + 1);
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            v[l] |= gpursa_fp_pick(&ts[GPURSA_FP_SIX(k, l)], m0, m1);
    }
    GPURSA_ROLLED
    for (int k = FP_NS; k < FP_E; k += 2) {
        const uint64_t m0 = GPURSA_FP_MASK(idx, k), m1 = GPURSA_FP_MASK(idx, k + 1);
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            v[l] |= gpursa_fp_pick(&tl[GPURSA_FP_LIX(k, l)], m0, m1);
    }
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = gpursa_fp_from_bits(v[l]);
}

/* r = x^d R52 mod m (< 2m, settled lazily) for x = x' R52 mod m (< 2m,
 * limbs <= 2^52), over all 32 H bits of d; m52, one52 (R52 mod m): the
 * key's constants, F limbs each; mp: -m^-1 mod 2^52; tid: the thread's
 * index (gpursa_coop_item's), which places its warp on a scheduler. */
static GPURSA_DEV void gpursa_fp_exp(const gpursa_coop_ctx *item_c, double *r, const double *x, const uint32_t *d,
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
    const int bits = 32 * CO_H, W = S::fp_w;
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
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        *gpursa_fp_entry(ts, tl, 0, l) = t[l];
        *gpursa_fp_entry(ts, tl, 1, l) = t[l] = x[l];
    }
    GPURSA_ROLLED
    for (int k = 2; k < (1 << W); k++) {                     /* t = x^k */
        gpursa_fp_mul(c, t, t, x, fm, mp);
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            *gpursa_fp_entry(ts, tl, k, l) = t[l];
    }
    /* The window's table entry is read before its squarings, or, with
     * S::fp_stagger (the shape's choice), before squaring
     * sel_at: halfway through them in one of the two warps that share a
     * scheduler (warps w and w + 4 of a block), so that while one waits for
     * the table's entries in local memory (from the L2: a round trip for
     * each two of them), the other squares. Where the block's warps meet at
     * each window (S::fp_barrier) they would otherwise all wait at
     * once. The warp's index (public) decides; the entry read is the same.
     * Without the option the read stays outside the squarings' loop: inside
     * it, ptxas's squaring loop grows, which only the stagger pays back.
     * A kernel that staggers leaves S::fp_early out: the other warp
     * of its scheduler covers the chain from q that the early carry would
     * shorten (doc/design.md, "What the FP64 kernels' parts bought"). */
    const int sel_at = S::fp_stagger && (((tid >> 5) ^ (tid >> 7)) & 1) ? W / 2 : 0;
    /* the top window takes the bits that W does not divide (public) */
    int pos = bits - (bits % W ? bits % W : W);
    gpursa_fp_table_select(r, ts, tl, gpursa_exp_window(d, bits, pos, bits - pos));
    GPURSA_ROLLED
    while (pos > 0) {                                        /* pos public */
        pos -= W;
#ifdef __CUDACC__
        if constexpr (S::fp_barrier)
            __syncthreads();                                 /* every thread of the block comes here */
#endif
        if constexpr (S::fp_stagger) {
            GPURSA_ROLLED
            for (int s = 0; s < W; s++) {
                if (s == sel_at)
                    gpursa_fp_table_select(sel, ts, tl, gpursa_exp_window(d, bits, pos, W));
                gpursa_fp_sqr(c, r, r, fm, mp);
            }
        } else {
            gpursa_fp_table_select(sel, ts, tl, gpursa_exp_window(d, bits, pos, W));
            GPURSA_ROLLED
            for (int s = 0; s < W; s++)
                gpursa_fp_sqr(c, r, r, fm, mp);
        }
        gpursa_fp_mul(c, r, r, sel, fm, mp);
    }
    /* the table's entries: shared memory by volatile stores (kept as such),
     * local memory by gpursa_mem_wipe's (a plain st.local could be dropped) */
    GPURSA_UNROLL
    for (int k = 0; k < FP_NS; k++) {
        GPURSA_UNROLL
        for (int l = 0; l < FP_L; l++)
            *(volatile double *)gpursa_fp_entry(ts, tl, k, l) = 0;
    }
    gpursa_mem_wipe(tl, (int)(sizeof(tl) / (sizeof(uint32_t))));
    GPURSA_UNROLL
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

/* r = a b / R52 mod m for a, b < 2m (limbs <= 2^52): r < 2m, settled lazily
 * (lazy) or fully (limbs < 2^52; then r <= m for b = 1). A multiplication
 * of the multiplication's form (no squaring loop: one copy of the code). */
static GPURSA_COLD void gpursa_fp_mul_cold(gpursa_coop_ctx c, double *r, const double *a, const double *b,
                                           const uint64_t *m52, uint64_t mp, int lazy)
{
    double fm[FP_L];
    gpursa_fp_load(&c, fm, m52);
    gpursa_fp_mont(&c, r, a, b, fm, mp, 0, lazy);
}

/* r = x R52 mod m (< 2m) for the 32-bit slices t = x / R mod m (< m) */
static GPURSA_DEV void gpursa_fp_in(const gpursa_coop_ctx *c, double *r, const uint32_t *t, const uint64_t *fin,
                                    const uint64_t *m52, uint64_t mp)
{
    double f[FP_L];
    gpursa_fp_from32(c, r, t);
    gpursa_fp_load(c, f, fin);
    gpursa_fp_mul_cold(*c, r, r, f, m52, mp, 1);
}

/* r = x R52 mod m (< 2m, FP64 Montgomery form) for the full-length x =
 * (lo, hi) < m R: x / R mod m by a 32-bit reduction, then gpursa_fp_in */
static GPURSA_DEV void gpursa_fp_in_full(const gpursa_coop_ctx *c, double *r, const uint32_t *lo, const uint32_t *hi,
                                         const uint32_t *m, uint32_t m0inv, const uint64_t *fin, const uint64_t *m52,
                                         uint64_t mp)
{
    uint32_t t[CO_L];
    K::gpursa_coop_mont(c, t, lo, hi, NULL, NULL, m, m0inv);
    gpursa_fp_in(c, r, t, fin, m52, mp);
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        ((volatile uint32_t *)t)[l] = 0;
}

/* All ones when f (settled fully) is the number 1 */
static GPURSA_DEV uint32_t gpursa_fp_is1(const gpursa_coop_ctx *c, const double *f)
{
    uint64_t d = 0;
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        d |= gpursa_fp_d2u52(f[l]) ^ (uint64_t)(c->k == 0 && l == 0);
    return K::gpursa_coop_group_bits(c, d != 0) == 0 ? 0xffffffffu : 0u;
}

/* r = f mod m as 32-bit slices (< m) for f < 2m settled fully; f may pass
 * 2^(32 H), and its bits above go into the final subtraction */
static GPURSA_DEV void gpursa_fp_out(const gpursa_coop_ctx *c, uint32_t *r, const double *f, const uint32_t *m)
{
    uint64_t above = 0;
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        const int o = 32 * CO_H - 52 * (c->k * FP_L + l);    /* bit 32 H in the limb */
        const uint64_t v = gpursa_fp_d2u52(f[l]);
        above |= o <= 0 ? v : o < 52 ? v >> o : 0;
    }
    gpursa_fp_to32(c, r, f);
    K::gpursa_coop_final_sub(c, r, K::gpursa_coop_group_bits(c, above != 0) != 0, m);
}

/* ---- a half's x^e on FP64 limbs -------------------------------------------------
 *
 * gpursa_coop.h, "a half's x^e": the same function on 32-bit limbs. */

/* r = x^e R52 mod m (< 2m, settled lazily) for x R52 (< 2m) and a public e >= 1 */
static GPURSA_DEV void gpursa_fp_exp_public(const gpursa_coop_ctx *c, double *r, const double *x, uint64_t e,
                                            const uint64_t *m52, uint64_t mp)
{
    double fm[FP_L];
    int bit = 63;
    while (bit > 0 && !((e >> bit) & 1))
        bit--;
    gpursa_fp_load(c, fm, m52);
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = x[l];
    GPURSA_ROLLED
    while (--bit >= 0) {
        gpursa_fp_sqr(c, r, r, fm, mp);
        if ((e >> bit) & 1)                                  /* e is public */
            gpursa_fp_mul(c, r, r, x, fm, mp);
    }
}

/* This half's v = x^e for the key's public e, times R_n = R^2 (the whole
 * modulus' Montgomery radix) when scaled (public): with v' = v, or v R^2 when
 * scaled, xm = v' R mod m and y = v' mod m (32-bit slices, < m) for the
 * full-length x = (lo, hi) < m R. t: scratch. The scaling costs nothing
 * here: the conversion out of the 52-bit limbs multiplies by R mod m, or by
 * R^3 mod m instead. */
static GPURSA_DEV void gpursa_coop_half_exp_public(const gpursa_coop_ctx *c, int h, const gpursa_rsa_keydata *kd,
                                                   const uint32_t *m, uint32_t m0inv, const uint32_t *lo,
                                                   const uint32_t *hi, uint32_t *xm, uint32_t *y, uint32_t *t,
                                                   int scaled)
{
    const uint64_t *m52 = h ? kd->q52 : kd->p52;
    const uint64_t mp = h ? kd->q0inv52 : kd->p0inv52;
    double xf[FP_L], rf[FP_L], f[FP_L];
    gpursa_fp_in_full(c, xf, lo, hi, m, m0inv, GPURSA_FP_IN(FP_FULL, kd, h), m52, mp);  /* x R52 */
    gpursa_fp_exp_public(c, rf, xf, kd->e, m52, mp);                         /* v R52 */
    if (scaled)
        K::gpursa_coop_load(c, t, h ? kd->q_rrr : kd->p_rrr);
    else
        K::gpursa_coop_load(c, t, h ? kd->q_one : kd->p_one);
    gpursa_fp_from32(c, f, t);                                               /* R or R^3 mod m */
    gpursa_fp_mul_cold(*c, rf, rf, f, m52, mp, 0);
    gpursa_fp_out(c, xm, rf, m);                                             /* v' R mod m */
    GPURSA_UNROLL
    for (int l = 0; l < FP_L; l++) {
        ((volatile double *)xf)[l] = 0;
        ((volatile double *)rf)[l] = 0;
        ((volatile double *)f)[l] = 0;
    }
    K::gpursa_coop_mont(c, y, xm, NULL, NULL, NULL, m, m0inv);                 /* v' mod m */
}

};

/* A half's x^e of shape S (gpursa_coop_half_exp_public): on FP64 limbs
 * where S::fp64, else on 32-bit limbs */
template <class S>
using gpursa_coop_exp = typename std::conditional<S::fp64, gpursa_coop_fp<S>, gpursa_coop_int<S>>::type;

#endif /* GPURSA_COOP_FP_H_INCLUDED */
