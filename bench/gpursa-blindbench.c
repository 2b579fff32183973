/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa-blindbench: host CPU time per blinding pair of the queue's
 * gpursa_blind_batch() (queue/gpursa_blinding.c), the runners' top-up work.
 *
 *   gpursa-blindbench [--bits B[,B...]] [--chunks C[,C...]] [--runs R]
 *                     [--pairs P] [--top HEX] [--seconds S]
 *
 * For each key size B (default 2048,3072,4096) and chunk size C (default
 * 64,128,256,512,1024,2048), R runs (default 7) each make at least P pairs
 * (default 8192, and at least one chunk) in calls of C pairs, and report this
 * thread's CPU time per pair (CLOCK_THREAD_CPUTIME_ID, so preemption on a
 * shared machine does not count): the least and the median over the runs,
 * and the wall time of one call (what a top-up chunk delays a batch by).
 *
 * The modulus is a product of two random primes of B/2 bits (as an RSA key's
 * n: the blinding code sees n alone); --top HEX makes it a prime whose first
 * byte is HEX instead (e.g. 80 or ff, the edge cases of drawing r below n).
 *
 * --seconds S: one key size and chunk size (the first of each), calls in a
 * loop for S seconds and one line at the end; the form to run under
 * `perf record -g`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

#define BB_MAX_LIST 16

static double bb_thread_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double bb_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bb_parse_list(const char *s, long *v)
{
    int n = 0;

    while (*s != '\0' && n < BB_MAX_LIST) {
        char *end;

        v[n] = strtol(s, &end, 10);
        if (end == s || v[n] <= 0)
            return 0;
        n++;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* A prime of `bits` bits whose first byte is top: the next prime from a
 * random odd number with that byte. */
static BIGNUM *bb_prime_with_top(int bits, unsigned top, BN_CTX *ctx)
{
    BIGNUM *p = BN_new();
    int sh = bits - 8;

    if (p == NULL || !BN_rand(p, sh, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ODD))
        goto err;
    for (int i = 0; i < 8; i++)
        if (((top >> i) & 1) && !BN_set_bit(p, sh + i))
            goto err;
    for (;;) {
        int r = BN_check_prime(p, ctx, NULL);

        if (r < 0)
            goto err;
        if (r == 1)
            return p;
        if (!BN_add_word(p, 2))
            goto err;
    }
err:
    BN_free(p);
    return NULL;
}

/* The queue key fields gpursa_blind_batch() uses: n, len, n_top, mont. */
static int bb_key(gpursa_queue_key *qk, int bits, long top, BN_CTX *ctx)
{
    memset(qk, 0, sizeof(*qk));
    if (top >= 0) {
        qk->n = bb_prime_with_top(bits, (unsigned)top, ctx);
    } else {
        BIGNUM *p = BN_new(), *q = BN_new();

        qk->n = BN_new();
        if (p == NULL || q == NULL || qk->n == NULL
            || !BN_generate_prime_ex(p, bits / 2, 0, NULL, NULL, NULL)
            || !BN_generate_prime_ex(q, bits - bits / 2, 0, NULL, NULL, NULL)
            || !BN_mul(qk->n, p, q, ctx)) {
            BN_free(qk->n);
            qk->n = NULL;
        }
        BN_free(p);
        BN_free(q);
    }
    if (qk->n == NULL)
        return 0;
    qk->len = (size_t)BN_num_bytes(qk->n);
    qk->bits = BN_num_bits(qk->n);
    if ((qk->mat = malloc(qk->len)) == NULL
        || BN_bn2binpad(qk->n, qk->mat, (int)qk->len) != (int)qk->len
        || (qk->mont = BN_MONT_CTX_new()) == NULL
        || !BN_MONT_CTX_set(qk->mont, qk->n, ctx))
        return 0;
    qk->n_bytes = qk->mat;
    qk->n_top = qk->mat[0];
    return 1;
}

static void bb_key_free(gpursa_queue_key *qk)
{
    BN_free(qk->n);
    BN_MONT_CTX_free(qk->mont);
    free(qk->mat);
}

/* What a runner slot holds for its top-ups (queue/gpursa_pair_pool.c). */
typedef struct {
    unsigned char *r, *rinv;
    BN_CTX *ctx;
} bb_slot;

static int bb_slot_new(bb_slot *s, size_t cap, size_t len)
{
    memset(s, 0, sizeof(*s));
    if ((s->r = malloc(cap * len)) == NULL || (s->rinv = malloc(cap * len)) == NULL
        || (s->ctx = BN_CTX_secure_new()) == NULL)
        return 0;
    return 1;
}

static void bb_slot_free(bb_slot *s)
{
    free(s->r);
    free(s->rinv);
    BN_CTX_free(s->ctx);
}

static int bb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long bits[BB_MAX_LIST] = { 2048, 3072, 4096 }, chunks[BB_MAX_LIST] = { 64, 128, 256, 512,
                                                                           1024, 2048 };
    int nbits = 3, nchunks = 6, runs = 7, rc = 1;
    long pairs = 8192, top = -1;
    double seconds = 0;
    BN_CTX *ctx = BN_CTX_new();

    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (v == NULL)
            goto usage;
        if (strcmp(a, "--bits") == 0)
            nbits = bb_parse_list(v, bits);
        else if (strcmp(a, "--chunks") == 0)
            nchunks = bb_parse_list(v, chunks);
        else if (strcmp(a, "--runs") == 0)
            runs = atoi(v);
        else if (strcmp(a, "--pairs") == 0)
            pairs = atol(v);
        else if (strcmp(a, "--top") == 0)
            top = strtol(v, NULL, 16);
        else if (strcmp(a, "--seconds") == 0)
            seconds = atof(v);
        else
            goto usage;
    }
    if (nbits == 0 || nchunks == 0 || runs < 1 || runs > 1000 || pairs < 1 || top > 0xff
        || (top >= 0 && top < 0x80) || ctx == NULL)
        goto usage;
    if (seconds > 0)
        nbits = nchunks = 1;
    printf("# gpursa-blindbench: CPU time per pair (this thread), %d runs of >= %ld pairs%s\n",
           runs, pairs, top >= 0 ? ", prime modulus with the first byte given" : "");
    printf("# bits chunk  least_us  median_us  call_ms(median wall)\n");
    for (int b = 0; b < nbits; b++) {
        gpursa_queue_key qk;

        if (!bb_key(&qk, (int)bits[b], top, ctx)) {
            fprintf(stderr, "gpursa-blindbench: no %ld-bit modulus\n", bits[b]);
            goto end;
        }
        for (int c = 0; c < nchunks; c++) {
            size_t chunk = (size_t)chunks[c];
            long calls = (pairs + chunks[c] - 1) / chunks[c];
            double per[1000], wall[1000];
            bb_slot s;

            if (!bb_slot_new(&s, chunk, qk.len)) {
                bb_slot_free(&s);
                bb_key_free(&qk);
                goto end;
            }
            if (!gpursa_blind_batch(&qk, chunk, s.r, s.rinv, s.ctx))
                goto fail;                                 /* warm-up */
            if (seconds > 0) {
                double t0 = bb_wall(), c0 = bb_thread_cpu();
                long done = 0;

                while (bb_wall() - t0 < seconds) {
                    if (!gpursa_blind_batch(&qk, chunk, s.r, s.rinv, s.ctx))
                        goto fail;
                    done++;
                }
                printf("%5ld %5zu  %8.3f  (%ld calls in %.1f s)\n", bits[b], chunk,
                       (bb_thread_cpu() - c0) * 1e6 / (double)(done * (long)chunk), done,
                       seconds);
            } else {
                for (int r = 0; r < runs; r++) {
                    double c0 = bb_thread_cpu(), w0 = bb_wall();

                    for (long k = 0; k < calls; k++)
                        if (!gpursa_blind_batch(&qk, chunk, s.r, s.rinv, s.ctx))
                            goto fail;
                    per[r] = (bb_thread_cpu() - c0) * 1e6 / (double)(calls * (long)chunk);
                    wall[r] = (bb_wall() - w0) * 1e3 / (double)calls;
                }
                qsort(per, (size_t)runs, sizeof(double), bb_cmp_double);
                qsort(wall, (size_t)runs, sizeof(double), bb_cmp_double);
                printf("%5ld %5zu  %8.3f  %8.3f  %8.3f\n", bits[b], chunk, per[0],
                       per[runs / 2], wall[runs / 2]);
            }
            fflush(stdout);
            OPENSSL_cleanse(s.r, chunk * qk.len);
            OPENSSL_cleanse(s.rinv, chunk * qk.len);
            bb_slot_free(&s);
            continue;
fail:
            fprintf(stderr, "gpursa-blindbench: gpursa_blind_batch failed\n");
            ERR_print_errors_fp(stderr);
            bb_slot_free(&s);
            bb_key_free(&qk);
            goto end;
        }
        bb_key_free(&qk);
    }
    rc = 0;
    goto end;
usage:
    fprintf(stderr, "usage: gpursa-blindbench [--bits B[,B...]] [--chunks C[,C...]] "
                    "[--runs R] [--pairs P] [--top HEX] [--seconds S]\n");
    rc = 2;
end:
    BN_CTX_free(ctx);
    return rc;
}
