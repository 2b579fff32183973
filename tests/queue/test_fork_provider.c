/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Processes: the parent loads gpursa (host backend) and signs, which starts
 * the queue's threads; children forked then sign too, on their own
 * dispatcher, and every signature verifies with the default provider. A
 * child forked before the parent's first operation works as well.
 * Needs the built module (OPENSSL_MODULES from make check).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

static OSSL_LIB_CTX *libctx;
static OSSL_PROVIDER *prov_gpursa, *prov_default;
static EVP_PKEY *pkey;

/* Sign a random digest with gpursa, verify with the default provider. */
static int sign_and_verify(void)
{
    unsigned char md[32], sig[512];
    size_t siglen = sizeof(sig);
    EVP_PKEY_CTX *sctx, *vctx;
    int ok;

    RAND_bytes(md, sizeof(md));
    sctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, "provider=gpursa");
    vctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, "provider=default");
    ok = sctx != NULL && vctx != NULL
         && EVP_PKEY_sign_init(sctx) > 0
         && EVP_PKEY_CTX_set_rsa_padding(sctx, RSA_PKCS1_PADDING) > 0
         && EVP_PKEY_CTX_set_signature_md(sctx, EVP_sha256()) > 0
         && EVP_PKEY_sign(sctx, sig, &siglen, md, sizeof(md)) > 0
         && EVP_PKEY_verify_init(vctx) > 0
         && EVP_PKEY_CTX_set_rsa_padding(vctx, RSA_PKCS1_PADDING) > 0
         && EVP_PKEY_CTX_set_signature_md(vctx, EVP_sha256()) > 0
         && EVP_PKEY_verify(vctx, sig, siglen, md, sizeof(md)) == 1;
    EVP_PKEY_CTX_free(sctx);
    EVP_PKEY_CTX_free(vctx);
    return ok;
}

static uint64_t prov_stat(const char *name)
{
    uint64_t v = 0;
    OSSL_PARAM p[2] = { OSSL_PARAM_uint64(name, &v), OSSL_PARAM_END };

    if (!OSSL_PROVIDER_get_params(prov_gpursa, p))
        return UINT64_MAX;
    return v;
}

static void *signer(void *arg)
{
    int *bad = arg;

    for (int i = 0; i < 4; i++)
        if (!sign_and_verify())
            (*bad)++;
    return NULL;
}

/* In a child: 3 threads x 4 signatures; exit status says what failed. */
static int child_work(void)
{
    pthread_t th[3];
    int bad[3] = { 0 };
    uint64_t before = prov_stat("gpursa-ops-host");

    for (int i = 0; i < 3; i++)
        if (pthread_create(&th[i], NULL, signer, &bad[i]) != 0)
            return 10;
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    if (bad[0] + bad[1] + bad[2] != 0)
        return 1;
    /* The child's own dispatcher ran the host backend. */
    if (prov_stat("gpursa-ops-host") <= before)
        return 2;
    return 0;
}

static void setup(void)
{
    setenv("GPURSA_BACKEND", "host", 1);
    setenv("GPURSA_MAX_WAIT_US", "1000", 1);
    libctx = OSSL_LIB_CTX_new();
    ck_assert_ptr_nonnull(libctx);
    prov_default = OSSL_PROVIDER_load(libctx, "default");
    prov_gpursa = OSSL_PROVIDER_load(libctx, "gpursa");
    ck_assert_msg(prov_default != NULL && prov_gpursa != NULL,
                  "cannot load the providers (OPENSSL_MODULES=%s)",
                  getenv("OPENSSL_MODULES") ? getenv("OPENSSL_MODULES") : "unset");
    pkey = EVP_PKEY_Q_keygen(libctx, "provider=default", "RSA", (size_t)2048);
    ck_assert_ptr_nonnull(pkey);
}

static void teardown(void)
{
    EVP_PKEY_free(pkey);
    OSSL_PROVIDER_unload(prov_gpursa);
    OSSL_PROVIDER_unload(prov_default);
    OSSL_LIB_CTX_free(libctx);
}

static void wait_child(pid_t pid)
{
    int st;

    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: status %d", st);
}

START_TEST(test_child_forked_before_first_use_signs)
{
    pid_t pid = fork();

    if (pid == 0)
        _exit(child_work());
    wait_child(pid);
    /* nothing ran in the parent: the fork happened before any operation */
    ck_assert_uint_eq(prov_stat("gpursa-ops-host") + prov_stat("gpursa-ops-cpu"), 0);
}
END_TEST

START_TEST(test_children_sign_after_parent_started_the_queue)
{
    pid_t pid[3];
    int bad = 0;

    ck_assert(sign_and_verify());
    ck_assert_uint_ge(prov_stat("gpursa-ops-host"), 1);
    for (int i = 0; i < 3; i++) {
        pid[i] = fork();
        if (pid[i] == 0)
            _exit(child_work());
    }
    signer(&bad);                            /* the parent keeps signing meanwhile */
    ck_assert_int_eq(bad, 0);
    for (int i = 0; i < 3; i++)
        wait_child(pid[i]);
    ck_assert_uint_ge(prov_stat("gpursa-ops-host"), 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fork_provider");
    TCase *tc = tcase_create("fork");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_child_forked_before_first_use_signs);
    tcase_add_test(tc, test_children_sign_after_parent_started_the_queue);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
