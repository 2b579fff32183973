/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared fuzz harness support (see fuzz_common.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include "fuzz_common.h"

static OSSL_LIB_CTX *default_libctx;
static OSSL_LIB_CTX *gpursa_libctx[FZ_NBACKENDS];
static EVP_PKEY *default_keys[FZ_NKEYS];
static EVP_PKEY *gpursa_keys[FZ_NBACKENDS][FZ_NKEYS];

static const char *const key_files[FZ_NKEYS] = {
    "rsa1024.pem", "rsa2048.pem", "rsa1024-3prime.pem"
};

const char *const fz_digest_names[] = {
    "SHA1", "SHA2-256", "SHA256", "SHA384", "SHA512", "SHA224", "SHA512-224",
    "SHA512-256", "SHA3-256", "SHA3-512", "MD5", "MD5-SHA1", "SHAKE256",
    "SM3", "RIPEMD160", "", "NOSUCHDIGEST", "sha256", "SHA-256", "2.16.840.1.101.3.4.2.1",
};
const size_t fz_n_digest_names = sizeof(fz_digest_names) / sizeof(fz_digest_names[0]);

void fz_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "FUZZ ORACLE FAILURE: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nOpenSSL error queue:\n");
    ERR_print_errors_fp(stderr);
    abort();
}

void fz_expect_error(const char *what)
{
    /* FUZZ_LAX_ERRORS=1 keeps fuzzing past a missing error (triage only). */
    if (ERR_peek_error() == 0 && getenv("FUZZ_LAX_ERRORS") == NULL)
        fz_fail("%s failed without an OpenSSL error", what);
}

const char *fz_backend_name(int backend)
{
    return backend == FZ_BACKEND_HOST ? "host" : "cpu";
}

static OSSL_LIB_CTX *load_gpursa(int backend)
{
    /* The provider reads GPURSA_* at load; each backend gets its own libctx.
     * Batches of one and no wait send every host-backend operation through
     * the queue and the kernel arithmetic instead of the inline CPU path.
     * A value the user exported wins; ours are removed again after the load. */
    static const char *const env[][2] = {
        { "GPURSA_LOG_LEVEL", "0" }, { "GPURSA_MIN_GPU_BATCH", "1" }, { "GPURSA_MAX_WAIT_US", "0" },
    };
    int ours[sizeof(env) / sizeof(env[0])];
    OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
    size_t i;

    setenv("GPURSA_BACKEND", fz_backend_name(backend), 1);
    for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
        if ((ours[i] = getenv(env[i][0]) == NULL))
            setenv(env[i][0], env[i][1], 1);
    if (libctx == NULL || OSSL_PROVIDER_load(libctx, "default") == NULL
        || OSSL_PROVIDER_load(libctx, "gpursa") == NULL)
        fz_fail("cannot load gpursa (backend %s); OPENSSL_MODULES=%s",
                fz_backend_name(backend), getenv("OPENSSL_MODULES"));
    unsetenv("GPURSA_BACKEND");
    for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
        if (ours[i])
            unsetenv(env[i][0]);
    return libctx;
}

static EVP_PKEY *read_key(const char *dir, const char *name)
{
    char path[4096];
    EVP_PKEY *pkey;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if ((f = fopen(path, "r")) == NULL)
        fz_fail("cannot open %s (set FUZZ_KEYS_DIR)", path);
    pkey = PEM_read_PrivateKey_ex(f, NULL, NULL, NULL, default_libctx, NULL);
    fclose(f);
    if (pkey == NULL)
        fz_fail("cannot read %s", path);
    return pkey;
}

static EVP_PKEY *import_gpursa(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx;
    EVP_PKEY *out = NULL;

    if (EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) <= 0)
        fz_fail("EVP_PKEY_todata");
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &out, EVP_PKEY_KEYPAIR, params) <= 0)
        fz_fail("importing a valid key into gpursa failed");
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return out;
}

void fz_init(void)
{
    const char *keys_dir = getenv("FUZZ_KEYS_DIR");
    int b, k;

    if (default_libctx != NULL)
        return;
    /* Run from anywhere: default to the build tree's module and the source keys. */
    setenv("OPENSSL_MODULES", FUZZ_MODULES_DIR, 0);
    if (keys_dir == NULL)
        keys_dir = FUZZ_KEYS_DIR;
    if ((default_libctx = OSSL_LIB_CTX_new()) == NULL
        || OSSL_PROVIDER_load(default_libctx, "default") == NULL)
        fz_fail("cannot load the default provider");
    for (k = 0; k < FZ_NKEYS; k++)
        default_keys[k] = read_key(keys_dir, key_files[k]);
    /* These libctxs live as long as the process: an instrumented module must
     * never be unloaded under libFuzzer (its coverage counters would dangle). */
    for (b = 0; b < FZ_NBACKENDS; b++) {
        gpursa_libctx[b] = load_gpursa(b);
        for (k = 0; k < FZ_NKEYS; k++)
            gpursa_keys[b][k] = import_gpursa(gpursa_libctx[b], default_keys[k]);
    }
    ERR_clear_error();
}

/* libFuzzer calls this once before the first input; replay_main.c too. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

OSSL_LIB_CTX *fz_default_libctx(void)
{
    return default_libctx;
}

OSSL_LIB_CTX *fz_gpursa_libctx(int backend)
{
    return gpursa_libctx[backend % FZ_NBACKENDS];
}

EVP_PKEY *fz_default_key(int key)
{
    return default_keys[key % FZ_NKEYS];
}

EVP_PKEY *fz_gpursa_key(int backend, int key)
{
    return gpursa_keys[backend % FZ_NBACKENDS][key % FZ_NKEYS];
}

const uint8_t *fz_bytes(fz_input *in, size_t n, size_t *got)
{
    const uint8_t *p = in->p;

    if (n > in->left)
        n = in->left;
    in->p += n;
    in->left -= n;
    *got = n;
    return p;
}

uint8_t fz_u8(fz_input *in)
{
    size_t got;
    const uint8_t *p = fz_bytes(in, 1, &got);

    return got == 1 ? p[0] : 0;
}

uint16_t fz_u16(fz_input *in)
{
    uint16_t hi = fz_u8(in);

    return (uint16_t)(hi << 8 | fz_u8(in));
}

uint32_t fz_u32(fz_input *in)
{
    uint32_t hi = fz_u16(in);

    return hi << 16 | fz_u16(in);
}
