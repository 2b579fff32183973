/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_host_speed.c - host backend throughput probe: whole private
 * operations per CPU-second of one thread for each key size and variant,
 * then the host backend on all cores through the ops table (wall clock).
 *   ./gpursa_host_speed [seconds per case, default 1]
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_rsa_op.h"
#include "tests/gpu/gpu_testutil.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: the per-core rate stays right on a busy machine */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    static const int bits[] = {1024, 2048, 3072, 4096};
    static const gpursa_variant vs[] = {GPURSA_VARIANT_IMAD, GPURSA_VARIANT_XMAD};
    gt_init();
    printf("window %d bits\n%-6s %-5s %12s %12s\n", GPURSA_MONT_WINDOW, "bits", "var",
           "ops/s/core", "ops/s(wall)");
    for (int b = 0; b < 4; b++) {
        gt_rsa_key k;
        gt_rsa_keygen(&k, bits[b], 65537, 0);
        const gpursa_gpu_backend_ops *ops = gpursa_gpu_backend(GPURSA_BACKEND_HOST);
        size_t len = (size_t)bits[b] / 8;
        for (int v = 0; v < 2; v++) {
            /* one core: the op function itself */
            gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
            uint32_t c[128], r[128], ri[128], out[128];
            mpz_t x, rr, rinv;
            mpz_inits(x, rr, rinv, NULL);
            mpz_urandomm(x, gt_rand, k.n);
            do
                mpz_urandomm(rr, gt_rand, k.n);
            while (!mpz_invert(rinv, rr, k.n));
            gpursa_keyconv_load(kd, &k.km);
            int nl = kd->nl;
            gt_to_limbs(c, nl, x);
            gt_to_limbs(r, nl, rr);
            gt_to_limbs(ri, nl, rinv);
            long n = 0;
            double t0 = cpu_s(), t;
            do {
                if (gpursa_rsa_op(kd, c, r, ri, out, nl, vs[v], -1) != GPURSA_ITEM_OK) {
                    fprintf(stderr, "op failed\n");
                    return 1;
                }
                n++;
            } while ((t = cpu_s() - t0) < secs);
            double one = n / t;
            /* all cores: the backend */
            gpursa_gpu_device *dev;
            gpursa_gpu_key *key;
            gpursa_gpu_batch *batch;
            size_t nb = 64;
            gpursa_gpu_item *items = calloc(nb, sizeof(*items));
            unsigned char *buf = calloc(4 * nb, len);
            gpursa_gpu_open_params op = { .variant = vs[v] };
            ops->device_open(0, &op, &dev);
            ops->key_upload(dev, &k.km, &key);
            ops->batch_new(dev, bits[b], nb, &batch);
            for (size_t i = 0; i < nb; i++) {
                unsigned char *p = buf + 4 * i * len;
                gt_to_be(p, len, x);
                gt_to_be(p + len, len, rr);
                gt_to_be(p + 2 * len, len, rinv);
                items[i] = (gpursa_gpu_item){key, p, p + len, p + 2 * len, p + 3 * len, -1};
            }
            long m = 0;
            t0 = now_s();
            do {
                ops->batch_submit(batch, items, nb);
                ops->batch_wait(batch);
                m += (long)nb;
            } while ((t = now_s() - t0) < secs);
            printf("%-6d %-5s %12.1f %12.1f\n", bits[b], gpursa_variant_name(vs[v]), one, m / t);
            fflush(stdout);
            ops->batch_free(batch);
            ops->key_free(dev, key);
            ops->device_close(dev);
            free(items);
            free(buf);
            free(kd);
            mpz_clears(x, rr, rinv, NULL);
        }
        gt_rsa_key_free(&k);
    }
    return 0;
}
