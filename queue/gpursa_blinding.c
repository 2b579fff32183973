/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Blinding pairs (r, r^-1 mod n) for a group of operations of one key, with
 * one modular inversion for the whole group.
 *
 * With mont(x, y) = x*y*R^-1 mod n (R = 2^(limb bits * nl)) and a_0 .. a_{k-1}
 * drawn independently and uniformly from [1, n) with the private DRBG:
 *   r_0 = a_0,  r_i = mont(r_{i-1}, a_i)
 *   I = r_{k-1}^-1 mod n                                 (the one inversion)
 *   for i = k-1 .. 1:  rinv_i = I,  I = mont(I, a_i)      (= r_{i-1}^-1)
 *   rinv_0 = I
 * Two multiplications per pair, where Montgomery's batch inversion of r drawn
 * one by one takes three: here the r are the running products themselves.
 * They are exactly as random: (a_0..a_{k-1}) -> (r_0..r_{k-1}) is a bijection
 * of (Z_n^*)^k (a_i = r_i * r_{i-1}^-1 * R), so when every a_i is a unit
 * (otherwise the inversion fails and so does the call) the r are independent
 * and uniform on Z_n^*: the distribution that drawing each r in [1, n) afresh
 * gives when all of them are invertible, which one inversion for all needs
 * anyway.
 * Each r takes a fresh full-size a_i; none is a function of the others.
 *
 * The multiplication is ours, on fixed-size limb arrays, constant time (fixed
 * loops, the final subtraction by mask): slower than OpenSSL's assembly,
 * but it spares the BIGNUM conversions and their costly constant-time byte
 * loops (doc/design.md, "What the queue's settings rest on"). Only the inversion
 * goes through BN (BN_FLG_CONSTTIME).
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include "queue/gpursa_queue_int.h"

#if defined(__SIZEOF_INT128__)
typedef uint64_t gpursa_limb;
typedef unsigned __int128 gpursa_dlimb;
#else
typedef uint32_t gpursa_limb;
typedef uint64_t gpursa_dlimb;
#endif
#define GPURSA_LIMB_BITS (8 * (int)sizeof(gpursa_limb))
#define GPURSA_BLIND_MAX_LIMBS \
    ((GPURSA_MAX_KEY_BYTES + sizeof(gpursa_limb) - 1) / sizeof(gpursa_limb))
/* Candidates for rejected draws come from here, refilled by one DRBG call. */
#define GPURSA_BLIND_SPARE 4096

#if defined(__GNUC__)
#define GPURSA_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GPURSA_ALWAYS_INLINE inline
#endif

typedef struct {
    int nl;                      /* limbs */
    gpursa_limb n0;              /* -n^-1 mod 2^GPURSA_LIMB_BITS */
    gpursa_limb n[GPURSA_BLIND_MAX_LIMBS];
} gpursa_blind_mod;

/*
 * r = a*b*R^-1 mod n for a < n, b < n (r may be a or b); ws holds 2*nl limbs.
 * Product scanning: column by column, with m chosen limb by limb so that the
 * low columns vanish. The a*b and m*n products of a column go to two
 * accumulators of three limbs each (two carry chains the CPU runs side by
 * side, faster than one). The result is below 2n; n is
 * subtracted and the right value kept by mask.
 */
#define GPURSA_MAC(acc, top, x, y)                                    \
    do {                                                              \
        gpursa_dlimb p_ = (gpursa_dlimb)(x) * (y), s_ = (acc) + p_;   \
        (top) += s_ < p_;                                             \
        (acc) = s_;                                                   \
    } while (0)
/* acc1 += acc2, then the column is done: acc1 moves down one limb. */
#define GPURSA_NEXT_COLUMN()                                                    \
    do {                                                                        \
        acc1 = (acc1 >> GPURSA_LIMB_BITS) | ((gpursa_dlimb)top1 << GPURSA_LIMB_BITS); \
        top1 = 0;                                                               \
    } while (0)
#define GPURSA_MERGE()                         \
    do {                                       \
        acc1 += acc2;                          \
        top1 += top2 + (acc1 < acc2);          \
        acc2 = 0;                              \
        top2 = 0;                              \
    } while (0)

static GPURSA_ALWAYS_INLINE void gpursa_mont_mul_nl(gpursa_limb *r, const gpursa_limb *a,
                                                    const gpursa_limb *b,
                                                    const gpursa_blind_mod *md,
                                                    gpursa_limb *restrict ws, const int nl)
{
    const gpursa_limb *n = md->n;
    gpursa_limb *t = ws, *m = ws + nl, hi, borrow = 0, keep;
    gpursa_dlimb acc1 = 0, acc2 = 0;
    gpursa_limb top1 = 0, top2 = 0;

    for (int i = 0; i < nl; i++) {
        for (int j = 0; j < i; j++) {
            GPURSA_MAC(acc1, top1, a[j], b[i - j]);
            GPURSA_MAC(acc2, top2, m[j], n[i - j]);
        }
        GPURSA_MAC(acc1, top1, a[i], b[0]);
        GPURSA_MERGE();
        m[i] = (gpursa_limb)acc1 * md->n0;
        GPURSA_MAC(acc1, top1, m[i], n[0]);
        GPURSA_NEXT_COLUMN();
    }
    for (int i = nl; i < 2 * nl - 1; i++) {
        for (int j = i - nl + 1; j < nl; j++) {
            GPURSA_MAC(acc1, top1, a[j], b[i - j]);
            GPURSA_MAC(acc2, top2, m[j], n[i - j]);
        }
        GPURSA_MERGE();
        t[i - nl] = (gpursa_limb)acc1;
        GPURSA_NEXT_COLUMN();
    }
    t[nl - 1] = (gpursa_limb)acc1;
    hi = (gpursa_limb)(acc1 >> GPURSA_LIMB_BITS);
    /* t - n into m (no longer needed); keep t only if t < n (no carry out
     * of t and a borrow out of the subtraction). */
    for (int j = 0; j < nl; j++) {
        gpursa_dlimb d = (gpursa_dlimb)t[j] - n[j] - borrow;

        m[j] = (gpursa_limb)d;
        borrow = (gpursa_limb)(d >> GPURSA_LIMB_BITS) & 1;
    }
    keep = (gpursa_limb)0 - (gpursa_limb)((hi ^ 1) & borrow & 1);
    for (int j = 0; j < nl; j++)
        r[j] = (t[j] & keep) | (m[j] & ~keep);
}

typedef void (*gpursa_mont_mul_fn)(gpursa_limb *r, const gpursa_limb *a,
                                   const gpursa_limb *b, const gpursa_blind_mod *md,
                                   gpursa_limb *ws);

/* The supported key sizes get loops of constant length (unrolled, no
 * per-limb bound checks); anything else the generic one. */
#define GPURSA_MONT_MUL_FIXED(bits)                                                \
    static void gpursa_mont_mul_##bits(gpursa_limb *r, const gpursa_limb *a,       \
                                       const gpursa_limb *b,                       \
                                       const gpursa_blind_mod *md, gpursa_limb *ws) \
    {                                                                              \
        gpursa_mont_mul_nl(r, a, b, md, ws, (bits) / GPURSA_LIMB_BITS);            \
    }
GPURSA_MONT_MUL_FIXED(1024)
GPURSA_MONT_MUL_FIXED(2048)
GPURSA_MONT_MUL_FIXED(3072)
GPURSA_MONT_MUL_FIXED(4096)

static void gpursa_mont_mul_any(gpursa_limb *r, const gpursa_limb *a, const gpursa_limb *b,
                                const gpursa_blind_mod *md, gpursa_limb *ws)
{
    gpursa_mont_mul_nl(r, a, b, md, ws, md->nl);
}

static gpursa_mont_mul_fn gpursa_mont_mul_for(int nl)
{
    switch (nl * GPURSA_LIMB_BITS) {
    case 1024: return gpursa_mont_mul_1024;
    case 2048: return gpursa_mont_mul_2048;
    case 3072: return gpursa_mont_mul_3072;
    case 4096: return gpursa_mont_mul_4096;
    default:   return gpursa_mont_mul_any;
    }
}

/* One limb from / to sizeof(gpursa_limb) big-endian bytes. */
static inline gpursa_limb gpursa_load_be(const unsigned char *p)
{
    gpursa_limb v;

    memcpy(&v, p, sizeof(v));
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = sizeof(v) == 8 ? (gpursa_limb)__builtin_bswap64((uint64_t)v)
                       : (gpursa_limb)__builtin_bswap32((uint32_t)v);
#elif !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    v = 0;
    for (size_t b = 0; b < sizeof(v); b++)
        v = v << 8 | p[b];
#endif
    return v;
}

static inline void gpursa_store_be(unsigned char *p, gpursa_limb v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = sizeof(v) == 8 ? (gpursa_limb)__builtin_bswap64((uint64_t)v)
                       : (gpursa_limb)__builtin_bswap32((uint32_t)v);
#elif !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    for (size_t b = sizeof(v); b-- > 0; v >>= 8)
        p[b] = (unsigned char)v;
    return;
#endif
    memcpy(p, &v, sizeof(v));
}

/* Big-endian len bytes <-> nl limbs (len <= nl limbs' bytes; the rest zero).
 * Loops over public lengths only; whole limbs (every supported key size)
 * go a limb at a time. */
static void gpursa_limbs_from_be(gpursa_limb *x, int nl, const unsigned char *be, size_t len)
{
    if (len == (size_t)nl * sizeof(gpursa_limb)) {
        for (int j = 0; j < nl; j++)
            x[j] = gpursa_load_be(be + len - (size_t)(j + 1) * sizeof(gpursa_limb));
        return;
    }
    for (int j = 0; j < nl; j++) {
        gpursa_limb v = 0;

        for (size_t b = sizeof(v); b-- > 0;) {
            size_t k = (size_t)j * sizeof(v) + b;   /* byte index from the little end */

            v = v << 8 | (k < len ? be[len - 1 - k] : 0);
        }
        x[j] = v;
    }
}

static void gpursa_limbs_to_be(unsigned char *be, size_t len, const gpursa_limb *x)
{
    if (len % sizeof(gpursa_limb) == 0) {
        for (size_t j = 0; j < len / sizeof(gpursa_limb); j++)
            gpursa_store_be(be + len - (j + 1) * sizeof(gpursa_limb), x[j]);
        return;
    }
    for (size_t k = 0; k < len; k++)   /* k: byte index from the little end */
        be[len - 1 - k] = (unsigned char)(x[k / sizeof(gpursa_limb)]
                                          >> (8 * (k % sizeof(gpursa_limb))));
}

/* 1 if 0 < a < n, without branches on a (the caller's branch on the answer
 * only says whether a draw was thrown away). */
static int gpursa_limbs_in_range(const gpursa_limb *a, const gpursa_blind_mod *md)
{
    gpursa_limb borrow = 0, any = 0;

    for (int j = 0; j < md->nl; j++) {
        gpursa_dlimb d = (gpursa_dlimb)a[j] - md->n[j] - borrow;

        borrow = (gpursa_limb)(d >> GPURSA_LIMB_BITS) & 1;
        any |= a[j];
    }
    any = (any | (0 - any)) >> (GPURSA_LIMB_BITS - 1);  /* 1 iff a != 0 */
    return (int)(borrow & any);
}

/* x = x - c mod n for x, c < n. */
static void gpursa_limbs_sub_mod(gpursa_limb *x, const gpursa_limb *c,
                                 const gpursa_blind_mod *md)
{
    gpursa_limb borrow = 0, carry = 0, mask;

    for (int j = 0; j < md->nl; j++) {
        gpursa_dlimb d = (gpursa_dlimb)x[j] - c[j] - borrow;

        x[j] = (gpursa_limb)d;
        borrow = (gpursa_limb)(d >> GPURSA_LIMB_BITS) & 1;
    }
    mask = 0 - borrow;
    for (int j = 0; j < md->nl; j++) {
        gpursa_dlimb s = (gpursa_dlimb)x[j] + (md->n[j] & mask) + carry;

        x[j] = (gpursa_limb)s;
        carry = (gpursa_limb)(s >> GPURSA_LIMB_BITS);
    }
}

/* Random candidates: the group's draw first, then the spare pool. */
typedef struct {
    unsigned char spare[GPURSA_BLIND_SPARE];
    size_t spare_pos;
    unsigned char mask;          /* on the first byte: no bits above n's top bit */
} gpursa_blind_draw;

/* a = the candidate in buf (len bytes, masked in place) or, while it is out
 * of [1, n), a fresh one from the spare pool written over it: on success buf
 * holds exactly a's bytes. */
static int gpursa_draw_below_n(gpursa_blind_draw *dr, const gpursa_blind_mod *md,
                               unsigned char *buf, size_t len, gpursa_limb *a)
{
    for (int tries = 0; tries < 64; tries++) {
        if (tries > 0) {
            if (dr->spare_pos + len > sizeof(dr->spare)) {
                if (RAND_priv_bytes(dr->spare, (int)sizeof(dr->spare)) <= 0)
                    return 0;
                dr->spare_pos = 0;
            }
            memcpy(buf, dr->spare + dr->spare_pos, len);
            OPENSSL_cleanse(dr->spare + dr->spare_pos, len);
            dr->spare_pos += len;
        }
        buf[0] &= dr->mask;
        gpursa_limbs_from_be(a, md->nl, buf, len);
        if (gpursa_limbs_in_range(a, md))
            return 1;
    }
    return 0;
}

/*
 * x = x^-1 mod n through BN. BN_bin2bn skips leading zero bytes, which would
 * tell the bytes of a secret x apart by time: it reads 1 || (x - c) instead
 * (c = 2^(8*len) mod n), a number of fixed length congruent to x, which
 * BN_mod_inverse reduces in constant time first. tmp: len + 1 bytes.
 */
static int gpursa_blind_invert(gpursa_limb *x, const gpursa_blind_mod *md,
                               const gpursa_limb *c, const gpursa_queue_key *qk,
                               unsigned char *tmp, BN_CTX *ctx)
{
    size_t len = qk->len;
    BIGNUM *v, *inv = NULL;
    int ok = 0;

    BN_CTX_start(ctx);
    if ((v = BN_CTX_get(ctx)) == NULL || (inv = BN_CTX_get(ctx)) == NULL)
        goto end;
    BN_set_flags(v, BN_FLG_CONSTTIME);
    BN_set_flags(inv, BN_FLG_CONSTTIME);
    gpursa_limbs_sub_mod(x, c, md);
    tmp[0] = 1;
    gpursa_limbs_to_be(tmp + 1, len, x);
    if (BN_bin2bn(tmp, (int)len + 1, v) == NULL
        /* Fails only if x shares a factor with n (probability ~2^-1000). */
        || BN_mod_inverse(inv, v, qk->n, ctx) == NULL
        || BN_bn2binpad(inv, tmp, (int)len) != (int)len)
        goto end;
    gpursa_limbs_from_be(x, md->nl, tmp, len);
    ok = 1;
end:
    OPENSSL_cleanse(tmp, len + 1);
    if (v != NULL)
        BN_clear(v);
    if (inv != NULL)
        BN_clear(inv);
    BN_CTX_end(ctx);
    return ok;
}

/* The modulus as limbs, -n^-1 mod 2^GPURSA_LIMB_BITS, and c = 2^(8*len) mod n
 * (for gpursa_blind_invert): public values, once per call. */
static int gpursa_blind_mod_set(gpursa_blind_mod *md, gpursa_limb *c,
                                const gpursa_queue_key *qk, BN_CTX *ctx)
{
    size_t len = qk->len;
    unsigned char cb[GPURSA_MAX_KEY_BYTES];
    gpursa_limb x = 1;
    BIGNUM *bc;
    int ok = 0;

    md->nl = (int)((len + sizeof(gpursa_limb) - 1) / sizeof(gpursa_limb));
    gpursa_limbs_from_be(md->n, md->nl, qk->n_bytes, len);
    if ((md->n[0] & 1) == 0)
        return 0;
    for (int i = 0; i < 7; i++)          /* Newton: doubles the correct low bits */
        x *= 2 - md->n[0] * x;
    md->n0 = 0 - x;
    BN_CTX_start(ctx);
    if ((bc = BN_CTX_get(ctx)) != NULL && BN_set_bit(bc, (int)(8 * len))
        && BN_nnmod(bc, bc, qk->n, ctx) && BN_bn2binpad(bc, cb, (int)len) == (int)len) {
        gpursa_limbs_from_be(c, md->nl, cb, len);
        ok = 1;
    }
    BN_CTX_end(ctx);
    return ok;
}

int gpursa_blind_batch(gpursa_queue_key *qk, size_t n, unsigned char *rbuf,
                       unsigned char *rinvbuf, BN_CTX *ctx)
{
    size_t len = qk->len;
    gpursa_blind_mod md;
    gpursa_blind_draw dr;
    gpursa_limb acc[GPURSA_BLIND_MAX_LIMBS], a[GPURSA_BLIND_MAX_LIMBS];
    gpursa_limb c[GPURSA_BLIND_MAX_LIMBS], ws[2 * GPURSA_BLIND_MAX_LIMBS];
    unsigned char tmp[GPURSA_MAX_KEY_BYTES + 1];
    gpursa_mont_mul_fn mul;
    int ok = 0;

    if (n == 0)
        return 1;
    if (len == 0 || len > GPURSA_MAX_KEY_BYTES || qk->n_bytes == NULL
        || n > (size_t)INT_MAX / len || !gpursa_blind_mod_set(&md, c, qk, ctx))
        return 0;
    mul = gpursa_mont_mul_for(md.nl);
    dr.mask = 0xff;
    while (dr.mask > qk->n_top && (dr.mask >> 1) >= qk->n_top)
        dr.mask >>= 1;
    dr.spare_pos = sizeof(dr.spare);     /* empty: filled at the first rejection */
    /* One DRBG call for the group's a_i, into rinvbuf (they are read again
     * on the way back, each just before its r^-1 takes its place). */
    if (RAND_priv_bytes(rinvbuf, (int)(len * n)) <= 0)
        goto end;
    for (size_t i = 0; i < n; i++) {
        if (!gpursa_draw_below_n(&dr, &md, rinvbuf + i * len, len, a))
            goto end;
        if (i == 0)
            memcpy(acc, a, (size_t)md.nl * sizeof(gpursa_limb));
        else
            mul(acc, acc, a, &md, ws);
        gpursa_limbs_to_be(rbuf + i * len, len, acc);
    }
    if (!gpursa_blind_invert(acc, &md, c, qk, tmp, ctx))
        goto end;
    for (size_t i = n - 1; i > 0; i--) {
        gpursa_limbs_from_be(a, md.nl, rinvbuf + i * len, len);
        gpursa_limbs_to_be(rinvbuf + i * len, len, acc);
        mul(acc, acc, a, &md, ws);
    }
    gpursa_limbs_to_be(rinvbuf, len, acc);
    ok = 1;
end:
    OPENSSL_cleanse(acc, sizeof(acc));
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(ws, sizeof(ws));
    OPENSSL_cleanse(dr.spare, sizeof(dr.spare));
    if (!ok) {
        OPENSSL_cleanse(rbuf, len * n);
        OPENSSL_cleanse(rinvbuf, len * n);
    }
    return ok;
}
