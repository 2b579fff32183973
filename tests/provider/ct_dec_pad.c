/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant-time check of the decryption decoders under valgrind memcheck.
 *
 * The decoded block (and the implicit-rejection key, and the TLS fallback
 * random) are marked undefined, as if they were uninitialised memory. Memcheck
 * then reports every conditional jump, conditional move and memory address
 * that depends on them: exactly a secret-dependent branch or index. The
 * decoders release their answer through GPURSA_CT_PUBLIC (compiled in here as
 * VALGRIND_MAKE_MEM_DEFINED), so only what they deliberately return is public.
 * Each case is one TAP line, failed when memcheck counted an error during it.
 *
 * Run without valgrind, the program starts itself under valgrind (the path
 * configure found); with no valgrind it reports a skip.
 */
/* Sanitizer runtimes and valgrind do not run together. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define CT_NO_VALGRIND "built with a sanitizer"
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) \
     || __has_feature(memory_sanitizer)
#  define CT_NO_VALGRIND "built with a sanitizer"
# endif
#endif
#if !defined(CT_NO_VALGRIND) && defined(__has_include)
# if __has_include(<valgrind/memcheck.h>)
#  define GPURSA_CT_VALGRIND 1
# endif
#endif
#if !defined(CT_NO_VALGRIND) && !defined(GPURSA_CT_VALGRIND)
# define CT_NO_VALGRIND "valgrind/memcheck.h is not installed"
#endif

#ifdef CT_NO_VALGRIND
# include <stdio.h>

int main(void)
{
    printf("1..0 # SKIP %s\n", CT_NO_VALGRIND);
    return 0;
}
#else
#include "provider/rsa_dec_pad.c"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <openssl/rand.h>

#ifndef GPURSA_VALGRIND
# define GPURSA_VALGRIND ""
#endif

static int ntests;
static int nfailed;

/* TAP line for a case; |sane| says the decoder gave the expected answer. */
static void report(const char *name, unsigned long errors_before, int sane)
{
    unsigned long errors;
    int ok;

    /* Looking at the answer is a branch on it: if the decoder returned it
     * without declassifying it (still secret), that counts against the case. */
    {
        volatile int seen = 0;

        if (sane)
            seen = 1;
        sane = seen;
    }
    errors = VALGRIND_COUNT_ERRORS - errors_before;
    ok = errors == 0 && sane;

    ntests++;
    nfailed += !ok;
    printf("%s %d - %s", ok ? "ok" : "not ok", ntests, name);
    if (errors != 0)
        printf(" (%lu secret-dependent branches or addresses)", errors);
    if (!sane)
        printf(" (wrong result)");
    printf("\n");
    fflush(stdout);
}

static void fill(unsigned char *p, size_t n, int nonzero)
{
    size_t i;

    if (RAND_bytes(p, (int)n) != 1)
        abort();
    for (i = 0; nonzero && i < n; i++)
        if (p[i] == 0)
            p[i] = 0x5a;
}

/* 00 02 PS 00 M */
static void build_pkcs1(unsigned char *em, size_t k, size_t mlen)
{
    em[0] = 0;
    em[1] = 2;
    fill(em + 2, k - 3 - mlen, 1);
    em[k - mlen - 1] = 0;
    fill(em + k - mlen, mlen, 0);
}

static void secret(void *p, size_t n)
{
    VALGRIND_MAKE_MEM_UNDEFINED(p, n);
}

static void public(void *p, size_t n)
{
    VALGRIND_MAKE_MEM_DEFINED(p, n);
}

static void check_pkcs1(size_t k)
{
    unsigned char em[512], out[512];
    char name[96];
    unsigned long e;
    int r, valid;

    for (valid = 1; valid >= 0; valid--) {
        build_pkcs1(em, k, 20);
        em[1] = valid ? 2 : 3;
        secret(em, k);
        e = VALGRIND_COUNT_ERRORS;
        r = gpursa_dec_pkcs1_type2(out, k - 11, em, k);
        snprintf(name, sizeof(name), "pkcs1 v1.5, %s padding, k=%zu", valid ? "valid" : "bad", k);
        report(name, e, r == (valid ? 20 : -1));
    }
}

static void check_pkcs1_implicit(size_t k)
{
    unsigned char em[512], out[512], kdk[GPURSA_KDK_LEN];
    char name[96];
    unsigned long e;
    int r, valid;

    for (valid = 1; valid >= 0; valid--) {
        build_pkcs1(em, k, 20);
        em[0] = valid ? 0 : 1;
        fill(kdk, sizeof(kdk), 0);
        secret(em, k);
        secret(kdk, sizeof(kdk));
        e = VALGRIND_COUNT_ERRORS;
        r = gpursa_dec_pkcs1_type2_implicit(NULL, out, k - 11, em, k, kdk);
        snprintf(name, sizeof(name), "pkcs1 v1.5 implicit rejection, %s padding, k=%zu",
                 valid ? "valid" : "bad", k);
        report(name, e, valid ? r == 20 : (r >= 0 && (size_t)r <= k - 11));
    }
}

/* An OAEP block built with the decoder's own MGF1 (its correctness is the
 * unit tests' business; here only the access pattern matters). */
static void build_oaep(unsigned char *em, size_t k, const EVP_MD *md, size_t mlen)
{
    size_t h = (size_t)EVP_MD_get_size(md), dblen = k - h - 1, i;
    unsigned char db[512], seed[64], mask[512];

    EVP_Digest("", 0, db, NULL, md, NULL);
    memset(db + h, 0, dblen - h - mlen - 1);
    db[dblen - mlen - 1] = 1;
    fill(db + dblen - mlen, mlen, 0);
    fill(seed, h, 0);
    gpursa_mgf1(mask, dblen, seed, h, md);
    for (i = 0; i < dblen; i++)
        db[i] ^= mask[i];
    gpursa_mgf1(mask, h, db, dblen, md);
    for (i = 0; i < h; i++)
        seed[i] ^= mask[i];
    em[0] = 0;
    memcpy(em + 1, seed, h);
    memcpy(em + 1 + h, db, dblen);
}

static void check_oaep(size_t k, const char *mdname)
{
    EVP_MD *md = EVP_MD_fetch(NULL, mdname, NULL);
    size_t h = (size_t)EVP_MD_get_size(md);
    unsigned char em[512], out[512];
    char name[96];
    unsigned long e;
    int r, valid;

    for (valid = 1; valid >= 0; valid--) {
        build_oaep(em, k, md, 20);
        if (!valid)
            em[k - 1] ^= 1;     /* garbles DB: lHash and separator fail */
        secret(em, k);
        e = VALGRIND_COUNT_ERRORS;
        r = gpursa_dec_oaep(out, k - 2 * h - 2, em, k, (const unsigned char *)"", 0, md, md);
        snprintf(name, sizeof(name), "oaep %s, %s block, k=%zu", mdname,
                 valid ? "valid" : "bad", k);
        report(name, e, valid ? r == 20 : r == -1);
    }
    EVP_MD_free(md);
}

static void check_tls(size_t k)
{
    unsigned char em[512], out[48], rnd[48], want[48];
    char name[96];
    unsigned long e;
    int r, valid;

    for (valid = 1; valid >= 0; valid--) {
        build_pkcs1(em, k, 48);
        em[k - 48] = 3;
        em[k - 47] = valid ? 3 : 2;
        fill(rnd, sizeof(rnd), 0);
        memcpy(want, valid ? em + k - 48 : rnd, 48);
        secret(em, k);
        secret(rnd, sizeof(rnd));
        e = VALGRIND_COUNT_ERRORS;
        r = gpursa_dec_tls_premaster(out, sizeof(out), em, k, 0x0303, 0x0301, rnd);
        /* the harness may look at the answer once the decoder is done */
        public(out, sizeof(out));
        snprintf(name, sizeof(name), "tls premaster, %s version, k=%zu",
                 valid ? "right" : "wrong", k);
        report(name, e, r == 48 && memcmp(out, want, 48) == 0);
    }
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 128, 256, 384, 512 };
    size_t i;

    if (!RUNNING_ON_VALGRIND) {
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (GPURSA_VALGRIND[0] == '\0' || access(GPURSA_VALGRIND, X_OK) != 0 || n <= 0) {
            printf("1..0 # SKIP valgrind not found\n");
            return 0;
        }
        self[n] = '\0';
        execl(GPURSA_VALGRIND, "valgrind", "-q", "--error-exitcode=99",
              "--track-origins=yes", self, (char *)NULL);
        perror("exec valgrind");
        return 99;
    }
    (void)argc;
    (void)argv;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        check_pkcs1(sizes[i]);
        check_pkcs1_implicit(sizes[i]);
        check_oaep(sizes[i], "SHA1");
        check_oaep(sizes[i], "SHA256");
        if (sizes[i] > 2 * 64 + 2 + 20)
            check_oaep(sizes[i], "SHA512");
        check_tls(sizes[i]);
    }
    printf("1..%d\n", ntests);
    return nfailed == 0 ? 0 : 1;
}
#endif /* GPURSA_CT_VALGRIND */
