/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_mont.h - multi-precision Montgomery arithmetic for RSA, one source
 * for the host (C11) and the device (CUDA C++).
 *
 * API (stable; a change is announced here first)
 * ----------------------------------------------
 * Numbers are little-endian arrays of 32-bit limbs ("uint32_t x[n]", x[0]
 * least significant).  Every function takes the limb count n as its last but
 * one argument and, where two algorithms exist, the variant last:
 *
 *     GPURSA_VARIANT_IMAD  row-oriented 32x32->64 multiply-add carry chains
 *                          (device: mad.lo.cc / madc.hi.cc PTX)
 *     GPURSA_VARIANT_XMAD  the two-pass 16-bit algorithm of Emmart et al.
 *                          (device: mul.wide.u16 + add.cc sequences -> XMAD)
 *
 * Both n and the variant are meant to be compile-time constants at the call
 * site: every function is GPURSA_HD (forceinline on the device), so nvcc
 * folds the variant switch and fully unrolls the loops (#pragma unroll),
 * which keeps the limb arrays in registers.  Sizes used by gpursa: n = 16,
 * 32, 48, 64 (CRT halves) and 32, 64, 96, 128 (moduli n).
 *
 *   gpursa_mp_add / _sub        r = a +/- b, returns carry / borrow (0 or 1)
 *   (all with n >= 2)
 *   gpursa_mp_mul(r, a, b)      r[2n] = a * b
 *   gpursa_mp_sqr(r, a)         r[2n] = a * a (about half the products)
 *   gpursa_mont_redc(r, t, m)   r = t * R^-1 mod m, t[2n] < m*R, t destroyed
 *   gpursa_mont_mul(r, a, b, m) r = a * b * R^-1 mod m  (r may alias a or b)
 *   gpursa_mont_sqr(r, a, m)    r = a * a * R^-1 mod m  (r may alias a)
 *   gpursa_mont_exp(r, x, e, ebits, m, m0inv, one, n, variant, table)
 *        fixed-window, constant-time x^e (Montgomery form in and out);
 *        e has ebits bits (public length), table is caller scratch of
 *        GPURSA_MONT_TABLE_WORDS(n) limbs.
 *   gpursa_mont_exp_public(r, x, e64, m, m0inv, n, variant)
 *        square-and-multiply on a public exponent (e >= 1).
 * where R = 2^(32n), m odd, m0inv = -m^-1 mod 2^32 (gpursa_mont_m0inv), and
 * all Montgomery inputs are < m; outputs are fully reduced (< m).
 *
 * Constant time: no branch and no address depends on limb values; the final
 * subtraction is a masked select; the window table is read completely and
 * the entry chosen with masks.  Only n, the variant and public exponent bits
 * steer control flow.
 *
 * How a kernel calls it (one thread per operation, say RSA-2048 halves):
 *
 *     #include "gpursa_mont.h"
 *     __global__ void k(...) {
 *         uint32_t x[32], y[32], tab[GPURSA_MONT_TABLE_WORDS(32)];
 *         ... load x (already in Montgomery form), p, dp ...
 *         gpursa_mont_exp(y, x, dp, 1024, p, p0inv, p_one, 32,
 *                         GPURSA_VARIANT_IMAD, tab);
 *     }
 *
 * or the whole private operation, gpursa_rsa_op.h.  Temporaries inside the
 * functions are arrays of GPURSA_MONT_MAX_LIMBS(+2) limbs of which only the
 * first n(+2) are touched; after unrolling only those exist.  A translation
 * unit built for one size may define GPURSA_MONT_MAX_LIMBS smaller before
 * including this header.
 *
 * Window: GPURSA_MONT_WINDOW = 4.  Measured on the host with callgrind
 * (instructions per whole RSA op, w=4 vs w=5): 1024: 3.54M vs 3.65M,
 * 2048: 21.09M vs 20.98M, 4096: 143.1M vs 139.4M -- a tie, and 4 halves the
 * table a GPU thread has to keep (16 entries instead of 32).
 *
 * On the host the IMAD variant runs on 64-bit limbs (pairs of 32-bit limbs
 * read in place, 128-bit products; GPURSA_MONT_NO_HOST64 turns it off);
 * defining GPURSA_MONT_EMULATE_DEVICE makes the host run the device carry-chain code
 * with an emulated carry flag, so the host tests verify the device algorithm
 * instruction for instruction.  The XMAD variant always runs the chain code.
 */
#ifndef GPURSA_MONT_H
#define GPURSA_MONT_H

#include <stddef.h>
#include <stdint.h>
#include "gpu/gpursa_gpu.h"

#ifdef __CUDACC__
#define GPURSA_HD __host__ __device__ __forceinline__
#define GPURSA_UNROLL _Pragma("unroll")
#else
#define GPURSA_HD static inline
#define GPURSA_UNROLL
#endif

#ifndef GPURSA_MONT_MAX_LIMBS
#define GPURSA_MONT_MAX_LIMBS 128
#endif
#ifndef GPURSA_MONT_WINDOW
#define GPURSA_MONT_WINDOW 4
#endif
#define GPURSA_MONT_TABLE_WORDS(n) ((1 << GPURSA_MONT_WINDOW) * (n))

/* The device carry-chain code runs on the device, and on the host for the
 * XMAD variant always and for IMAD when GPURSA_MONT_EMULATE_DEVICE is set. */
#if defined(__CUDA_ARCH__) || defined(GPURSA_MONT_EMULATE_DEVICE)
#define GPURSA_MONT_IMAD_CHAINS 1
#else
#define GPURSA_MONT_IMAD_CHAINS 0
#endif

/* ------------------------------------------------------------------------
 * Carry-flag primitives.  On the device they are single PTX instructions and
 * the carry lives in the condition-code register (consecutive asm volatile
 * statements keep their order; this is the usual practice of GPU bignum
 * code).  On the host the flag is the variable *cf.  Names follow PTX:
 * _cc sets the flag, a 'c' after the operation consumes it.
 * ---------------------------------------------------------------------- */
#ifdef __CUDA_ARCH__
#define GPURSA_ASM2(op, r, a, b) \
    asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b))
#define GPURSA_ASM3(op, r, a, b, c) \
    asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c))
#endif

GPURSA_HD uint32_t gpursa_add_cc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("add.cc.u32", r, a, b); return r;
#else
    uint64_t s = (uint64_t)a + b; *cf = (uint32_t)(s >> 32); return (uint32_t)s;
#endif
}
GPURSA_HD uint32_t gpursa_addc_cc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("addc.cc.u32", r, a, b); return r;
#else
    uint64_t s = (uint64_t)a + b + *cf; *cf = (uint32_t)(s >> 32); return (uint32_t)s;
#endif
}
GPURSA_HD uint32_t gpursa_addc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("addc.u32", r, a, b); return r;
#else
    return a + b + *cf;
#endif
}
GPURSA_HD uint32_t gpursa_sub_cc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("sub.cc.u32", r, a, b); return r;
#else
    uint64_t s = (uint64_t)a - b; *cf = (uint32_t)(s >> 63); return (uint32_t)s;
#endif
}
GPURSA_HD uint32_t gpursa_subc_cc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("subc.cc.u32", r, a, b); return r;
#else
    uint64_t s = (uint64_t)a - b - *cf; *cf = (uint32_t)(s >> 63); return (uint32_t)s;
#endif
}
GPURSA_HD uint32_t gpursa_subc(uint32_t a, uint32_t b, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM2("subc.u32", r, a, b); return r;
#else
    return a - b - *cf;
#endif
}
/* lo/hi halves of a 32x32 product added to c (mad.lo.cc, madc.hi.cc, ...) */
GPURSA_HD uint32_t gpursa_madlo_cc(uint32_t a, uint32_t b, uint32_t c, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM3("mad.lo.cc.u32", r, a, b, c); return r;
#else
    return gpursa_add_cc(a * b, c, cf);
#endif
}
GPURSA_HD uint32_t gpursa_madclo_cc(uint32_t a, uint32_t b, uint32_t c, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM3("madc.lo.cc.u32", r, a, b, c); return r;
#else
    return gpursa_addc_cc(a * b, c, cf);
#endif
}
GPURSA_HD uint32_t gpursa_madhi_cc(uint32_t a, uint32_t b, uint32_t c, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM3("mad.hi.cc.u32", r, a, b, c); return r;
#else
    return gpursa_add_cc((uint32_t)(((uint64_t)a * b) >> 32), c, cf);
#endif
}
GPURSA_HD uint32_t gpursa_madchi_cc(uint32_t a, uint32_t b, uint32_t c, uint32_t *cf)
{
#ifdef __CUDA_ARCH__
    uint32_t r; (void)cf; GPURSA_ASM3("madc.hi.cc.u32", r, a, b, c); return r;
#else
    return gpursa_addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c, cf);
#endif
}

/* 16x16->32 products of half words (LL, LH, HL, HH in the paper: first
 * letter the half of a, second the half of b).  On the device mul.wide.u16
 * on unpacked halves: followed by an add.cc this is the PTX sequence that
 * ptxas turns into one XMAD on sm_5x; elsewhere it is an IMAD.U16-class op. */
#ifdef __CUDA_ARCH__
#define GPURSA_MUL16(name, ha, hb)                                             \
    GPURSA_HD uint32_t name(uint32_t a, uint32_t b)                            \
    {                                                                          \
        uint32_t r;                                                            \
        asm("{\n\t.reg .u16 ul, uh, vl, vh;\n\t"                               \
            "mov.b32 {ul, uh}, %1;\n\t"                                        \
            "mov.b32 {vl, vh}, %2;\n\t"                                        \
            "mul.wide.u16 %0, " ha ", " hb ";\n\t}"                            \
            : "=r"(r) : "r"(a), "r"(b));                                       \
        return r;                                                              \
    }
GPURSA_MUL16(gpursa_mul16_ll, "ul", "vl")
GPURSA_MUL16(gpursa_mul16_lh, "ul", "vh")
GPURSA_MUL16(gpursa_mul16_hl, "uh", "vl")
GPURSA_MUL16(gpursa_mul16_hh, "uh", "vh")
#undef GPURSA_MUL16
#else
GPURSA_HD uint32_t gpursa_mul16_ll(uint32_t a, uint32_t b) { return (a & 0xffff) * (b & 0xffff); }
GPURSA_HD uint32_t gpursa_mul16_lh(uint32_t a, uint32_t b) { return (a & 0xffff) * (b >> 16); }
GPURSA_HD uint32_t gpursa_mul16_hl(uint32_t a, uint32_t b) { return (a >> 16) * (b & 0xffff); }
GPURSA_HD uint32_t gpursa_mul16_hh(uint32_t a, uint32_t b) { return (a >> 16) * (b >> 16); }
#endif

/* (hi << 16) | (lo >> 16): one byte permute on the device. */
GPURSA_HD uint32_t gpursa_funnel16(uint32_t lo, uint32_t hi)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(lo, hi, 0x5432);
#else
    return (hi << 16) | (lo >> 16);
#endif
}

/* ------------------------------------------------------------------------
 * Plain multi-precision helpers (constant time)
 * ---------------------------------------------------------------------- */
GPURSA_HD void gpursa_mp_zero(uint32_t *r, int n)
{
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        r[i] = 0;
}
GPURSA_HD void gpursa_mp_copy(uint32_t *r, const uint32_t *a, int n)
{
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        r[i] = a[i];
}
GPURSA_HD uint32_t gpursa_mp_add(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t cf = 0;
    r[0] = gpursa_add_cc(a[0], b[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++)
        r[i] = gpursa_addc_cc(a[i], b[i], &cf);
    return gpursa_addc(0, 0, &cf);
}
GPURSA_HD uint32_t gpursa_mp_sub(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t cf = 0;
    r[0] = gpursa_sub_cc(a[0], b[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++)
        r[i] = gpursa_subc_cc(a[i], b[i], &cf);
    return gpursa_subc(0, 0, &cf) & 1;
}
/* Mask 0xffffffff if a < b else 0. */
GPURSA_HD uint32_t gpursa_mp_lt_mask(const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t cf = 0;
    (void)gpursa_sub_cc(a[0], b[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++)
        (void)gpursa_subc_cc(a[i], b[i], &cf);
    return gpursa_subc(0, 0, &cf);
}
/* Mask 0xffffffff if a == b else 0. */
GPURSA_HD uint32_t gpursa_mp_eq_mask(const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t d = 0;
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    /* d == 0 -> all ones, else 0, without a compare */
    return (uint32_t)(((uint64_t)d - 1) >> 32);
}
/* Mask 0xffffffff if a is zero else 0. */
GPURSA_HD uint32_t gpursa_mp_zero_mask(const uint32_t *a, int n)
{
    uint32_t d = 0;
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        d |= a[i];
    return (uint32_t)(((uint64_t)d - 1) >> 32);
}
/* r = a & mask, limb by limb. */
GPURSA_HD void gpursa_mp_and(uint32_t *r, const uint32_t *a, uint32_t mask, int n)
{
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        r[i] = a[i] & mask;
}
/* Zero secrets in memory; on the host a compiler barrier keeps the stores
 * (they would otherwise be dead).  On the device locals are registers or
 * thread-private local memory, and a plain store is what is possible. */
GPURSA_HD void gpursa_mp_wipe(uint32_t *r, int n)
{
    gpursa_mp_zero(r, n);
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
    __asm__ __volatile__("" : : "r"(r) : "memory");
#endif
}
/* Zero n 32-bit words of memory that nothing reads again (a kernel's window
 * table, operands it keeps in local memory) by stores no compiler pass may
 * drop. On the device an inline PTX volatile store each: NVVM compiles a C
 * volatile store to thread-local memory as a plain st.local, which ptxas may
 * then drop as dead; the asm also takes the array's address, so use it only
 * for arrays that live in memory anyway (a register array would be moved
 * there). On the host volatile stores. */
GPURSA_HD void gpursa_mem_wipe(void *p, int n)
{
    for (int i = 0; i < n; i++) {
#ifdef __CUDA_ARCH__
        asm volatile("st.volatile.u32 [%0], 0;" : : "l"((uint32_t *)p + i) : "memory");
#else
        for (int b = 0; b < 4; b++)
            ((volatile unsigned char *)p)[4 * i + b] = 0;      /* any object's bytes */
#endif
    }
}
/* r = mask ? a : b, limb by limb. */
GPURSA_HD void gpursa_mp_select(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                uint32_t mask, int n)
{
    GPURSA_UNROLL
    for (int i = 0; i < n; i++)
        r[i] = (a[i] & mask) | (b[i] & ~mask);
}

/* Final step of every Montgomery routine: the value top:acc (top <= 1,
 * value < 2m) reduced to [0, m) by subtracting m and keeping the difference
 * unless it borrowed.  Masked select, no branch. */
GPURSA_HD void gpursa_mont_final_sub(uint32_t *r, const uint32_t *acc, uint32_t top,
                                     const uint32_t *m, int n)
{
    uint32_t d[GPURSA_MONT_MAX_LIMBS];
    uint32_t cf = 0;
    d[0] = gpursa_sub_cc(acc[0], m[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++)
        d[i] = gpursa_subc_cc(acc[i], m[i], &cf);
    /* keep = all ones when top:acc < m (the subtraction went below zero) */
    uint32_t keep = 0u - (gpursa_subc(top, 0, &cf) >> 31);
    gpursa_mp_select(r, acc, d, keep, n);
}

/* -m^-1 mod 2^32 for odd m0 (Newton: each step doubles the correct bits). */
GPURSA_HD uint32_t gpursa_mont_m0inv(uint32_t m0)
{
    uint32_t x = m0; /* correct to 3 bits: m0*m0 == 1 mod 8 */
    x *= 2 - m0 * x;
    x *= 2 - m0 * x;
    x *= 2 - m0 * x;
    x *= 2 - m0 * x;
    return 0u - x;
}

/* ------------------------------------------------------------------------
 * Host fast path for the IMAD variant: the same row/CIOS algorithms on
 * 64-bit limbs (pairs of 32-bit limbs read in place on a little-endian CPU)
 * with 128-bit products, a quarter of the multiplications.  n must be even
 * (every gpursa size is); odd n takes the 32-bit code.
 * ---------------------------------------------------------------------- */
#if !GPURSA_MONT_IMAD_CHAINS && defined(__SIZEOF_INT128__) && defined(__GNUC__) && \
    defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    !defined(GPURSA_MONT_NO_HOST64)
#define GPURSA_MONT_HOST64 1
typedef uint64_t __attribute__((may_alias, aligned(4))) gpursa_u64a;
typedef unsigned __int128 gpursa_u128;

/* -m^-1 mod 2^64 from the 32-bit constant: one Newton step doubles it. */
static inline uint64_t gpursa_m0inv64(const uint32_t *m, uint32_t m0inv)
{
    uint64_t m0 = ((const gpursa_u64a *)m)[0];
    uint64_t x = (uint64_t)(0u - m0inv); /* m^-1 mod 2^32 */
    x *= 2 - m0 * x;
    return 0 - x;
}

static inline void gpursa_final_sub64(gpursa_u64a *r, const uint64_t *acc, uint64_t top,
                                      const gpursa_u64a *m, int k)
{
    uint64_t d[GPURSA_MONT_MAX_LIMBS / 2];
    gpursa_u128 s = 0;
    uint64_t borrow = 0;
    for (int i = 0; i < k; i++) {
        s = (gpursa_u128)acc[i] - m[i] - borrow;
        d[i] = (uint64_t)s;
        borrow = (uint64_t)(s >> 64) & 1;
    }
    /* keep acc when top:acc < m, i.e. the subtraction borrowed past top */
    uint64_t keep = 0 - (uint64_t)((top - borrow) >> 63);
    for (int i = 0; i < k; i++)
        r[i] = (acc[i] & keep) | (d[i] & ~keep);
}

static inline void gpursa_mul64(uint32_t *r32, const uint32_t *a32, const uint32_t *b32, int k)
{
    gpursa_u64a *r = (gpursa_u64a *)r32;
    const gpursa_u64a *a = (const gpursa_u64a *)a32, *b = (const gpursa_u64a *)b32;
    uint64_t t[GPURSA_MONT_MAX_LIMBS];
    for (int i = 0; i < 2 * k; i++)
        t[i] = 0;
    for (int i = 0; i < k; i++) {
        gpursa_u128 c = 0;
        uint64_t bi = b[i];
        for (int j = 0; j < k; j++) {
            c += (gpursa_u128)a[j] * bi + t[i + j];
            t[i + j] = (uint64_t)c;
            c >>= 64;
        }
        t[i + k] = (uint64_t)c;
    }
    for (int i = 0; i < 2 * k; i++)
        r[i] = t[i];
}

static inline void gpursa_sqr64(uint64_t *t, const gpursa_u64a *a, int k)
{
    for (int i = 0; i < 2 * k; i++)
        t[i] = 0;
    for (int i = 0; i < k - 1; i++) {
        gpursa_u128 c = 0;
        uint64_t ai = a[i];
        for (int j = i + 1; j < k; j++) {
            c += (gpursa_u128)a[j] * ai + t[i + j];
            t[i + j] = (uint64_t)c;
            c >>= 64;
        }
        t[i + k] = (uint64_t)c;
    }
    uint64_t hi = 0; /* doubling: the bit shifted out of the previous word */
    gpursa_u128 c = 0;
    for (int i = 0; i < k; i++) {
        gpursa_u128 sq = (gpursa_u128)a[i] * a[i];
        uint64_t lo2 = (t[2 * i] << 1) | hi;
        hi = t[2 * i] >> 63;
        uint64_t hi2 = (t[2 * i + 1] << 1) | hi;
        hi = t[2 * i + 1] >> 63;
        c += (gpursa_u128)lo2 + (uint64_t)sq;
        t[2 * i] = (uint64_t)c;
        c >>= 64;
        c += (gpursa_u128)hi2 + (uint64_t)(sq >> 64);
        t[2 * i + 1] = (uint64_t)c;
        c >>= 64;
    }
}

/* t (2k words) reduced in place, the result to r */
static inline void gpursa_redc64(gpursa_u64a *r, uint64_t *t, const gpursa_u64a *m,
                                 uint64_t minv, int k)
{
    uint64_t over = 0;
    for (int i = 0; i < k; i++) {
        uint64_t q = t[i] * minv;
        gpursa_u128 c = 0;
        for (int j = 0; j < k; j++) {
            c += (gpursa_u128)q * m[j] + t[i + j];
            t[i + j] = (uint64_t)c;
            c >>= 64;
        }
        c += (gpursa_u128)t[i + k] + over;
        t[i + k] = (uint64_t)c;
        over = (uint64_t)(c >> 64);
    }
    gpursa_final_sub64(r, t + k, over, m, k);
}

static inline void gpursa_mont_mul64(uint32_t *r32, const uint32_t *a32, const uint32_t *b32,
                                     const uint32_t *m32, uint32_t m0inv, int k)
{
    const gpursa_u64a *a = (const gpursa_u64a *)a32, *b = (const gpursa_u64a *)b32;
    const gpursa_u64a *m = (const gpursa_u64a *)m32;
    uint64_t minv = gpursa_m0inv64(m32, m0inv);
    uint64_t acc[GPURSA_MONT_MAX_LIMBS / 2 + 2];
    for (int j = 0; j <= k; j++)
        acc[j] = 0;
    for (int i = 0; i < k; i++) {
        gpursa_u128 c = 0;
        uint64_t bi = b[i];
        for (int j = 0; j < k; j++) {
            c += (gpursa_u128)a[j] * bi + acc[j];
            acc[j] = (uint64_t)c;
            c >>= 64;
        }
        c += acc[k];
        acc[k] = (uint64_t)c;
        uint64_t hi = (uint64_t)(c >> 64);
        uint64_t q = acc[0] * minv;
        c = ((gpursa_u128)q * m[0] + acc[0]) >> 64;
        for (int j = 1; j < k; j++) {
            c += (gpursa_u128)q * m[j] + acc[j];
            acc[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += acc[k];
        acc[k - 1] = (uint64_t)c;
        acc[k] = hi + (uint64_t)(c >> 64);
    }
    gpursa_final_sub64((gpursa_u64a *)r32, acc, acc[k], m, k);
}
#else
#define GPURSA_MONT_HOST64 0
#endif

/* ========================================================================
 * IMAD variant
 * ====================================================================== */

/* r[2n] = a * b */
GPURSA_HD void gpursa_mp_mul_imad(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
#if GPURSA_MONT_IMAD_CHAINS
    /* Row oriented (Emmart/Weems): per row the lo products in one carry
     * chain, then the hi products one word up in a second chain.  The
     * partial sum after row i is below 2^(32(n+i+1)), so the lo chain's
     * carry fits in word i+n and the hi chain's carry out is zero. */
    uint32_t cf = 0;
    gpursa_mp_zero(r, 2 * n);
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t bi = b[i];
        r[i] = gpursa_madlo_cc(a[0], bi, r[i], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j] = gpursa_madclo_cc(a[j], bi, r[i + j], &cf);
        r[i + n] = gpursa_addc(r[i + n], 0, &cf);
        r[i + 1] = gpursa_madhi_cc(a[0], bi, r[i + 1], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j + 1] = gpursa_madchi_cc(a[j], bi, r[i + j + 1], &cf);
    }
#else
#if GPURSA_MONT_HOST64
    if ((n & 1) == 0) {
        gpursa_mul64(r, a, b, n / 2);
        return;
    }
#endif
    for (int i = 0; i < n; i++)
        r[i] = 0;
    for (int i = 0; i < n; i++) {
        uint64_t c = 0, bi = b[i];
        for (int j = 0; j < n; j++) {
            c += a[j] * bi + r[i + j];
            r[i + j] = (uint32_t)c;
            c >>= 32;
        }
        r[i + n] = (uint32_t)c;
    }
#endif
}

/* r[2n] = a * a: off-diagonal products once, doubled, plus the squares. */
GPURSA_HD void gpursa_mp_sqr_imad(uint32_t *r, const uint32_t *a, int n)
{
    uint32_t cf = 0;
#if GPURSA_MONT_IMAD_CHAINS
    /* Off-diagonal rows: after row i the sum is below A_{<=i} * A <
     * 2^(32(n+i+1)), so word i+n is still zero when row i's lo chain
     * carries into it and the hi chain never carries out. */
    gpursa_mp_zero(r, 2 * n);
    GPURSA_UNROLL
    for (int i = 0; i < n - 1; i++) {
        uint32_t ai = a[i];
        r[2 * i + 1] = gpursa_madlo_cc(a[i + 1], ai, r[2 * i + 1], &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j] = gpursa_madclo_cc(a[j], ai, r[i + j], &cf);
        r[i + n] = gpursa_addc(0, 0, &cf);
        r[2 * i + 2] = gpursa_madhi_cc(a[i + 1], ai, r[2 * i + 2], &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j + 1] = gpursa_madchi_cc(a[j], ai, r[i + j + 1], &cf);
    }
#else
#if GPURSA_MONT_HOST64
    if ((n & 1) == 0) {
        uint64_t t64[GPURSA_MONT_MAX_LIMBS];
        gpursa_sqr64(t64, (const gpursa_u64a *)a, n / 2);
        for (int i = 0; i < n; i++)
            ((gpursa_u64a *)r)[i] = t64[i];
        return;
    }
#endif
    for (int i = 0; i < 2 * n; i++)
        r[i] = 0;
    for (int i = 0; i < n - 1; i++) {
        uint64_t c = 0, ai = a[i];
        for (int j = i + 1; j < n; j++) {
            c += a[j] * ai + r[i + j];
            r[i + j] = (uint32_t)c;
            c >>= 32;
        }
        r[i + n] = (uint32_t)c;
    }
#endif
    /* double, then add the diagonal squares a_i^2 at word 2i */
    r[0] = gpursa_add_cc(r[0], r[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < 2 * n; i++)
        r[i] = gpursa_addc_cc(r[i], r[i], &cf);
    r[0] = gpursa_madlo_cc(a[0], a[0], r[0], &cf);
    r[1] = gpursa_madchi_cc(a[0], a[0], r[1], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++) {
        r[2 * i] = gpursa_madclo_cc(a[i], a[i], r[2 * i], &cf);
        r[2 * i + 1] = gpursa_madchi_cc(a[i], a[i], r[2 * i + 1], &cf);
    }
}

/* r = t * R^-1 mod m; t[2n] < m*R, destroyed. */
GPURSA_HD void gpursa_mont_redc_imad(uint32_t *r, uint32_t *t, const uint32_t *m,
                                     uint32_t m0inv, int n)
{
    uint32_t top;
#if GPURSA_MONT_IMAD_CHAINS
    /* Row i adds q*m at word i.  The carry out of word i+n cannot ripple in
     * one instruction, so it waits in 'pend' and enters the next row's
     * chain at that row's word i+1+n. */
    uint32_t cf = 0, pend = 0;
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t q = t[i] * m0inv;
        t[i] = gpursa_madlo_cc(q, m[0], t[i], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            t[i + j] = gpursa_madclo_cc(q, m[j], t[i + j], &cf);
        t[i + n] = gpursa_addc_cc(t[i + n], pend, &cf);
        pend = gpursa_addc(0, 0, &cf);
        t[i + 1] = gpursa_madhi_cc(q, m[0], t[i + 1], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            t[i + j + 1] = gpursa_madchi_cc(q, m[j], t[i + j + 1], &cf);
        pend = gpursa_addc(pend, 0, &cf);
    }
    top = pend;
#else
#if GPURSA_MONT_HOST64
    if ((n & 1) == 0) {
        uint64_t t64[GPURSA_MONT_MAX_LIMBS];
        for (int i = 0; i < n; i++)
            t64[i] = ((const gpursa_u64a *)t)[i];
        gpursa_redc64((gpursa_u64a *)r, t64, (const gpursa_u64a *)m, gpursa_m0inv64(m, m0inv),
                      n / 2);
        return;
    }
#endif
    uint64_t over = 0;
    for (int i = 0; i < n; i++) {
        uint64_t c = 0, q = (uint32_t)(t[i] * m0inv);
        for (int j = 0; j < n; j++) {
            c += q * m[j] + t[i + j];
            t[i + j] = (uint32_t)c;
            c >>= 32;
        }
        over += c + t[i + n];
        t[i + n] = (uint32_t)over;
        over >>= 32;
    }
    top = (uint32_t)over;
#endif
    gpursa_mont_final_sub(r, t + n, top, m, n);
}

/* r = a * b * R^-1 mod m, CIOS: each row adds a*b_i then q*m and drops a
 * word, so the accumulator never exceeds n+2 words. */
GPURSA_HD void gpursa_mont_mul_imad(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                    const uint32_t *m, uint32_t m0inv, int n)
{
    uint32_t acc[GPURSA_MONT_MAX_LIMBS + 2];
#if GPURSA_MONT_IMAD_CHAINS
    uint32_t cf = 0;
    gpursa_mp_zero(acc, n + 2);
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t bi = b[i];
        acc[0] = gpursa_madlo_cc(a[0], bi, acc[0], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            acc[j] = gpursa_madclo_cc(a[j], bi, acc[j], &cf);
        acc[n] = gpursa_addc_cc(acc[n], 0, &cf);
        acc[n + 1] = gpursa_addc(0, 0, &cf);
        acc[1] = gpursa_madhi_cc(a[0], bi, acc[1], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            acc[j + 1] = gpursa_madchi_cc(a[j], bi, acc[j + 1], &cf);
        acc[n + 1] = gpursa_addc(acc[n + 1], 0, &cf);

        uint32_t q = acc[0] * m0inv;
        acc[0] = gpursa_madlo_cc(q, m[0], acc[0], &cf); /* becomes 0 */
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            acc[j] = gpursa_madclo_cc(q, m[j], acc[j], &cf);
        acc[n] = gpursa_addc_cc(acc[n], 0, &cf);
        acc[n + 1] = gpursa_addc(acc[n + 1], 0, &cf);
        acc[1] = gpursa_madhi_cc(q, m[0], acc[1], &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            acc[j + 1] = gpursa_madchi_cc(q, m[j], acc[j + 1], &cf);
        acc[n + 1] = gpursa_addc(acc[n + 1], 0, &cf);
        GPURSA_UNROLL
        for (int j = 0; j <= n; j++)
            acc[j] = acc[j + 1];
    }
    gpursa_mont_final_sub(r, acc, acc[n], m, n);
#else
#if GPURSA_MONT_HOST64
    if ((n & 1) == 0) {
        gpursa_mont_mul64(r, a, b, m, m0inv, n / 2);
        return;
    }
#endif
    for (int j = 0; j < n + 1; j++)
        acc[j] = 0;
    for (int i = 0; i < n; i++) {
        uint64_t c = 0, bi = b[i];
        for (int j = 0; j < n; j++) {
            c += a[j] * bi + acc[j];
            acc[j] = (uint32_t)c;
            c >>= 32;
        }
        c += acc[n];
        acc[n] = (uint32_t)c;
        uint32_t hi = (uint32_t)(c >> 32);
        uint64_t q = (uint32_t)(acc[0] * m0inv);
        c = (q * m[0] + acc[0]) >> 32;
        for (int j = 1; j < n; j++) {
            c += q * m[j] + acc[j];
            acc[j - 1] = (uint32_t)c;
            c >>= 32;
        }
        c += acc[n];
        acc[n - 1] = (uint32_t)c;
        acc[n] = hi + (uint32_t)(c >> 32);
    }
    gpursa_mont_final_sub(r, acc, acc[n], m, n);
#endif
}

/* ========================================================================
 * XMAD variant: two-pass algorithms (Emmart, Zheng, Weems 2016)
 * ====================================================================== */

/* r[2n] = a * b.  Pass 1 sums the 16-bit aligned products LH and HL, the
 * sum is shifted 16 bits left with byte permutes, pass 2 adds the aligned
 * LL (word i+j) and HH (word i+j+1) products: 4n^2 16-bit multiplies. */
GPURSA_HD void gpursa_mp_mul_xmad(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t cf = 0, pend = 0;
    gpursa_mp_zero(r, 2 * n);
    /* Pass 1.  Rows before i sum to < 2^(32(n+i)), so word i+n is still
     * free: the row's carries land there and never go further. */
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t bi = b[i];
        r[i] = gpursa_add_cc(r[i], gpursa_mul16_hl(a[0], bi), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_hl(a[j], bi), &cf);
        r[i + n] = gpursa_addc(r[i + n], 0, &cf);
        r[i] = gpursa_add_cc(r[i], gpursa_mul16_lh(a[0], bi), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_lh(a[j], bi), &cf);
        r[i + n] = gpursa_addc(r[i + n], 0, &cf);
    }
    /* shift left by 16 (the top 16 bits are zero: pass 1 < 2^(64n-16)) */
    GPURSA_UNROLL
    for (int k = 2 * n - 1; k > 0; k--)
        r[k] = gpursa_funnel16(r[k - 1], r[k]);
    r[0] <<= 16;
    /* Pass 2.  Higher words already hold pass-1 bits, so a row's final
     * carry waits in 'pend' and joins the next row's chain one word up. */
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t bi = b[i];
        r[i] = gpursa_add_cc(r[i], gpursa_mul16_ll(a[0], bi), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_ll(a[j], bi), &cf);
        r[i + n] = gpursa_addc_cc(r[i + n], pend, &cf);
        pend = gpursa_addc(0, 0, &cf);
        r[i + 1] = gpursa_add_cc(r[i + 1], gpursa_mul16_hh(a[0], bi), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            r[i + j + 1] = gpursa_addc_cc(r[i + j + 1], gpursa_mul16_hh(a[j], bi), &cf);
        pend = gpursa_addc(pend, 0, &cf);
    }
    /* the last row's pending carry belongs to word 2n: zero, as a*b < 2^(64n) */
}

/* r[2n] = a * a, two-pass: off-diagonal products (and the diagonal LH
 * terms) once, shifted, doubled, then the aligned diagonal squares. */
GPURSA_HD void gpursa_mp_sqr_xmad(uint32_t *r, const uint32_t *a, int n)
{
    uint32_t cf = 0, pend = 0;
    gpursa_mp_zero(r, 2 * n);
    /* pass 1: off-diagonal 16-bit aligned products, word i+n free as in mul */
    GPURSA_UNROLL
    for (int i = 0; i < n - 1; i++) {
        uint32_t ai = a[i];
        r[2 * i + 1] = gpursa_add_cc(r[2 * i + 1], gpursa_mul16_hl(a[i + 1], ai), &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_hl(a[j], ai), &cf);
        r[i + n] = gpursa_addc(r[i + n], 0, &cf);
        r[2 * i + 1] = gpursa_add_cc(r[2 * i + 1], gpursa_mul16_lh(a[i + 1], ai), &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_lh(a[j], ai), &cf);
        r[i + n] = gpursa_addc(r[i + n], 0, &cf);
    }
    /* diagonal lo*hi terms (doubled below with everything else) */
    r[0] = gpursa_add_cc(r[0], gpursa_mul16_lh(a[0], a[0]), &cf);
    r[1] = gpursa_addc_cc(r[1], 0, &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++) {
        r[2 * i] = gpursa_addc_cc(r[2 * i], gpursa_mul16_lh(a[i], a[i]), &cf);
        r[2 * i + 1] = gpursa_addc_cc(r[2 * i + 1], 0, &cf);
    }
    GPURSA_UNROLL
    for (int k = 2 * n - 1; k > 0; k--)
        r[k] = gpursa_funnel16(r[k - 1], r[k]);
    r[0] <<= 16;
    /* pass 2: off-diagonal aligned products with the pending-carry chain */
    GPURSA_UNROLL
    for (int i = 0; i < n - 1; i++) {
        uint32_t ai = a[i];
        r[2 * i + 1] = gpursa_add_cc(r[2 * i + 1], gpursa_mul16_ll(a[i + 1], ai), &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j] = gpursa_addc_cc(r[i + j], gpursa_mul16_ll(a[j], ai), &cf);
        r[i + n] = gpursa_addc_cc(r[i + n], pend, &cf);
        pend = gpursa_addc(0, 0, &cf);
        r[2 * i + 2] = gpursa_add_cc(r[2 * i + 2], gpursa_mul16_hh(a[i + 1], ai), &cf);
        GPURSA_UNROLL
        for (int j = i + 2; j < n; j++)
            r[i + j + 1] = gpursa_addc_cc(r[i + j + 1], gpursa_mul16_hh(a[j], ai), &cf);
        pend = gpursa_addc(pend, 0, &cf);
    }
    if (n > 1)
        r[2 * n - 1] += pend; /* the last row's carry: word 2n-1, no overflow */
    /* double and add the aligned diagonal parts LL (word 2i) and HH (2i+1) */
    r[0] = gpursa_add_cc(r[0], r[0], &cf);
    GPURSA_UNROLL
    for (int i = 1; i < 2 * n; i++)
        r[i] = gpursa_addc_cc(r[i], r[i], &cf);
    r[0] = gpursa_add_cc(r[0], gpursa_mul16_ll(a[0], a[0]), &cf);
    r[1] = gpursa_addc_cc(r[1], gpursa_mul16_hh(a[0], a[0]), &cf);
    GPURSA_UNROLL
    for (int i = 1; i < n; i++) {
        r[2 * i] = gpursa_addc_cc(r[2 * i], gpursa_mul16_ll(a[i], a[i]), &cf);
        r[2 * i + 1] = gpursa_addc_cc(r[2 * i + 1], gpursa_mul16_hh(a[i], a[i]), &cf);
    }
}

/* gcc cannot see that u[0..n] is written before it is read when n is not a
 * constant; the code is right for every n >= 2. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* r = t * R^-1 mod m, two-pass Montgomery reduction with two accumulators:
 * X (the words of t, 32-bit aligned) and U (16-bit aligned).  Each half
 * step clears 16 bits with a 16-bit q, adding LL(q,m) to the aligned
 * accumulator and LH(q,m) to the other, then the roles swap. */
GPURSA_HD void gpursa_mont_redc_xmad(uint32_t *r, uint32_t *t, const uint32_t *m,
                                     uint32_t m0inv, int n)
{
    uint32_t u[GPURSA_MONT_MAX_LIMBS + 1];
    uint32_t cf = 0, pend = 0, q, x0;
    uint32_t np0 = m0inv & 0xffff;
    gpursa_mp_zero(u, n + 1);
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        /* half step A: X aligned at word i, U at +16 bits */
        q = gpursa_mul16_ll(t[i], np0) & 0xffff;
        t[i] = gpursa_add_cc(t[i], gpursa_mul16_ll(q, m[0]), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            t[i + j] = gpursa_addc_cc(t[i + j], gpursa_mul16_ll(q, m[j]), &cf);
        t[i + n] = gpursa_addc_cc(t[i + n], pend, &cf);
        pend = gpursa_addc(0, 0, &cf);
        x0 = t[i] >> 16; /* low 16 bits are zero now; the rest moves to U */
        /* q*hi(m0) + x0 <= (2^16-1)^2 + 2^16-1 < 2^32: no carry */
        u[0] = gpursa_add_cc(u[0], gpursa_mul16_lh(q, m[0]) + x0, &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            u[j] = gpursa_addc_cc(u[j], gpursa_mul16_lh(q, m[j]), &cf);
        u[n] = gpursa_addc(u[n], 0, &cf);
        /* half step B: U aligned, X (now from word i+1) at +16 bits */
        q = gpursa_mul16_ll(u[0], np0) & 0xffff;
        u[0] = gpursa_add_cc(u[0], gpursa_mul16_ll(q, m[0]), &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            u[j] = gpursa_addc_cc(u[j], gpursa_mul16_ll(q, m[j]), &cf);
        u[n] = gpursa_addc(u[n], 0, &cf);
        x0 = u[0] >> 16;
        t[i + 1] = gpursa_add_cc(t[i + 1], gpursa_mul16_lh(q, m[0]) + x0, &cf);
        GPURSA_UNROLL
        for (int j = 1; j < n; j++)
            t[i + 1 + j] = gpursa_addc_cc(t[i + 1 + j], gpursa_mul16_lh(q, m[j]), &cf);
        pend = gpursa_addc(pend, 0, &cf);
        /* drop U's cleared low word */
        GPURSA_UNROLL
        for (int j = 0; j < n; j++)
            u[j] = u[j + 1];
        u[n] = 0;
    }
    /* X + (U << 16): U < 2^(32n), so the shifted U spans n words plus 16 bits */
    uint32_t *x = t + n;
    x[0] = gpursa_add_cc(x[0], u[0] << 16, &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        x[j] = gpursa_addc_cc(x[j], gpursa_funnel16(u[j - 1], u[j]), &cf);
    uint32_t top = gpursa_addc(pend, u[n - 1] >> 16, &cf);
    gpursa_mont_final_sub(r, x, top, m, n);
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic pop
#endif

/* ========================================================================
 * Variant dispatch and composite operations
 * ====================================================================== */

GPURSA_HD void gpursa_mp_mul(uint32_t *r, const uint32_t *a, const uint32_t *b, int n,
                             int variant)
{
    if (variant == GPURSA_VARIANT_XMAD)
        gpursa_mp_mul_xmad(r, a, b, n);
    else
        gpursa_mp_mul_imad(r, a, b, n);
}
GPURSA_HD void gpursa_mp_sqr(uint32_t *r, const uint32_t *a, int n, int variant)
{
    if (variant == GPURSA_VARIANT_XMAD)
        gpursa_mp_sqr_xmad(r, a, n);
    else
        gpursa_mp_sqr_imad(r, a, n);
}
GPURSA_HD void gpursa_mont_redc(uint32_t *r, uint32_t *t, const uint32_t *m,
                                uint32_t m0inv, int n, int variant)
{
    if (variant == GPURSA_VARIANT_XMAD)
        gpursa_mont_redc_xmad(r, t, m, m0inv, n);
    else
        gpursa_mont_redc_imad(r, t, m, m0inv, n);
}
GPURSA_HD void gpursa_mont_mul(uint32_t *r, const uint32_t *a, const uint32_t *b,
                               const uint32_t *m, uint32_t m0inv, int n, int variant)
{
    if (variant == GPURSA_VARIANT_XMAD) {
        uint32_t t[2 * GPURSA_MONT_MAX_LIMBS];
        gpursa_mp_mul_xmad(t, a, b, n);
        gpursa_mont_redc_xmad(r, t, m, m0inv, n);
    } else {
        gpursa_mont_mul_imad(r, a, b, m, m0inv, n);
    }
}
GPURSA_HD void gpursa_mont_sqr(uint32_t *r, const uint32_t *a, const uint32_t *m,
                               uint32_t m0inv, int n, int variant)
{
    uint32_t t[2 * GPURSA_MONT_MAX_LIMBS];
    gpursa_mp_sqr(t, a, n, variant);
    gpursa_mont_redc(r, t, m, m0inv, n, variant);
}

/* r = a * R^-1 mod m for a single-length a (leave Montgomery form). */
GPURSA_HD void gpursa_mont_from(uint32_t *r, const uint32_t *a, const uint32_t *m,
                                uint32_t m0inv, int n, int variant)
{
    uint32_t t[2 * GPURSA_MONT_MAX_LIMBS];
    gpursa_mp_copy(t, a, n);
    gpursa_mp_zero(t + n, n);
    gpursa_mont_redc(r, t, m, m0inv, n, variant);
}

/* Window value w bits wide at public bit position pos of e (ebits bits). */
GPURSA_HD uint32_t gpursa_exp_window(const uint32_t *e, int ebits, int pos, int w)
{
    int word = pos >> 5, sh = pos & 31;
    uint32_t v = e[word] >> sh;
    if (sh + w > 32 && (word + 1) * 32 < ebits) /* public positions only */
        v |= e[word + 1] << (32 - sh);
    return v & ((1u << w) - 1);
}

/* r = the table entry idx (public table, secret idx): every entry is read
 * and the matching one kept by mask. */
GPURSA_HD void gpursa_table_select(uint32_t *r, const uint32_t *table, uint32_t idx, int n)
{
#if GPURSA_MONT_HOST64
    if ((n & 1) == 0) { /* host: the same, 64 bits at a time */
        gpursa_u64a *r64 = (gpursa_u64a *)r;
        const gpursa_u64a *t64 = (const gpursa_u64a *)table;
        int k = n / 2;
        for (int i = 0; i < k; i++)
            r64[i] = 0;
        for (int e = 0; e < (1 << GPURSA_MONT_WINDOW); e++) {
            uint64_t mask = 0 - (uint64_t)((((uint64_t)(idx ^ (uint32_t)e)) - 1) >> 63);
            for (int i = 0; i < k; i++)
                r64[i] |= t64[e * k + i] & mask;
        }
        return;
    }
#endif
    gpursa_mp_zero(r, n);
    GPURSA_UNROLL
    for (int k = 0; k < (1 << GPURSA_MONT_WINDOW); k++) {
        uint32_t mask = (uint32_t)(((uint64_t)(idx ^ (uint32_t)k) - 1) >> 32);
        GPURSA_UNROLL
        for (int i = 0; i < n; i++)
            r[i] |= table[k * n + i] & mask;
    }
}

/* r = x^e mod m, Montgomery form in and out (x < m, one = R mod m).  Fixed
 * windows of GPURSA_MONT_WINDOW bits over all ebits bits of e, highest first
 * (the top window is the remainder when ebits is not a multiple).  The same
 * squarings and multiplications run whatever e is; window 0 multiplies by
 * one.  table: GPURSA_MONT_TABLE_WORDS(n) limbs of scratch. */
GPURSA_HD void gpursa_mont_exp(uint32_t *r, const uint32_t *x, const uint32_t *e, int ebits,
                               const uint32_t *m, uint32_t m0inv, const uint32_t *one,
                               int n, int variant, uint32_t *table)
{
    const int w = GPURSA_MONT_WINDOW;
    uint32_t sel[GPURSA_MONT_MAX_LIMBS];
    gpursa_mp_copy(table, one, n);
    gpursa_mp_copy(table + n, x, n);
    GPURSA_UNROLL
    for (int k = 2; k < (1 << w); k++) {
        if (k & 1)
            gpursa_mont_mul(table + k * n, table + (k - 1) * n, x, m, m0inv, n, variant);
        else
            gpursa_mont_sqr(table + k * n, table + (k / 2) * n, m, m0inv, n, variant);
    }
    int top = ebits % w ? ebits % w : w;
    int pos = ebits - top;
    gpursa_table_select(r, table, gpursa_exp_window(e, ebits, pos, top), n);
    while (pos > 0) { /* pos is public */
        pos -= w;
        for (int s = 0; s < w; s++)
            gpursa_mont_sqr(r, r, m, m0inv, n, variant);
        gpursa_table_select(sel, table, gpursa_exp_window(e, ebits, pos, w), n);
        gpursa_mont_mul(r, r, sel, m, m0inv, n, variant);
    }
}

/* r = x^e mod m for a PUBLIC e >= 1 (branches on its bits), Montgomery
 * form in and out. */
GPURSA_HD void gpursa_mont_exp_public(uint32_t *r, const uint32_t *x, uint64_t e,
                                      const uint32_t *m, uint32_t m0inv, int n, int variant)
{
    uint32_t base[GPURSA_MONT_MAX_LIMBS];
    int bit = 63;
    gpursa_mp_copy(base, x, n);
    while (bit > 0 && !((e >> bit) & 1))
        bit--;
    gpursa_mp_copy(r, base, n);
    while (--bit >= 0) {
        gpursa_mont_sqr(r, r, m, m0inv, n, variant);
        if ((e >> bit) & 1)
            gpursa_mont_mul(r, r, base, m, m0inv, n, variant);
    }
}

/* Big-endian bytes <-> limbs.  len <= 4n for the import (missing high limbs
 * are zero); the export writes exactly len bytes from the low end. */
GPURSA_HD void gpursa_mp_from_be(uint32_t *r, int n, const unsigned char *be, size_t len)
{
    gpursa_mp_zero(r, n);
    for (size_t i = 0; i < len; i++) {
        size_t k = len - 1 - i; /* byte weight */
        if ((k >> 2) < (size_t)n)
            r[k >> 2] |= (uint32_t)be[i] << (8 * (k & 3));
    }
}
GPURSA_HD void gpursa_mp_to_be(unsigned char *be, size_t len, const uint32_t *a, int n)
{
    for (size_t i = 0; i < len; i++) {
        size_t k = len - 1 - i;
        be[i] = (k >> 2) < (size_t)n ? (unsigned char)(a[k >> 2] >> (8 * (k & 3))) : 0;
    }
}

#endif /* GPURSA_MONT_H */
