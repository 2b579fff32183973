/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa refuses to load on a libcrypto older than 3.0.8, whose RSA
 * decryption (the CPU fallback's) is not constant time (CVE-2022-4304).
 * OSSL_provider_init of the built gpursa.so is called with a fake core
 * whose core_get_params reports a version: an old or unparsable one is
 * refused with gpursa's OLD_OPENSSL error naming it; an acceptable one gets
 * past the check to the configuration read, which this core refuses (so
 * nothing else starts). Edge values and random versions against the rule.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include "provider/gpursa_prov.h"

static OSSL_provider_init_fn *gpursa_init;
static const char *fake_version;        /* what the core reports; NULL: nothing */
static uint32_t last_reason;
static char last_text[512];

static int fake_get_params(const OSSL_CORE_HANDLE *handle, OSSL_PARAM params[])
{
    for (OSSL_PARAM *p = params; p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_PROV_PARAM_CORE_VERSION) != 0)
            return 0;                   /* the config section: refused */
        if (fake_version != NULL && !OSSL_PARAM_set_utf8_ptr(p, fake_version))
            return 0;
    }
    return 1;
}

static void fake_new_error(const OSSL_CORE_HANDLE *handle)
{
    last_reason = 0;
    last_text[0] = '\0';
}

static void fake_set_error_debug(const OSSL_CORE_HANDLE *handle, const char *file, int line,
                                 const char *func)
{
}

static void fake_vset_error(const OSSL_CORE_HANDLE *handle, uint32_t reason, const char *fmt,
                            va_list args)
{
    last_reason = reason;
    if (fmt != NULL)
        vsnprintf(last_text, sizeof(last_text), fmt, args);
}

static const OSSL_DISPATCH fake_core[] = {
    { OSSL_FUNC_CORE_GET_PARAMS, (void (*)(void))fake_get_params },
    { OSSL_FUNC_CORE_NEW_ERROR, (void (*)(void))fake_new_error },
    { OSSL_FUNC_CORE_SET_ERROR_DEBUG, (void (*)(void))fake_set_error_debug },
    { OSSL_FUNC_CORE_VSET_ERROR, (void (*)(void))fake_vset_error },
    { 0, NULL }
};

/* Init with the core reporting version: 1 refused for the version (the
 * error names it), 0 past the version check. */
static int refused_for_version(const char *version)
{
    static int handle;
    const OSSL_DISPATCH *out = NULL;
    void *provctx = NULL;

    fake_version = version;
    last_reason = 0;
    last_text[0] = '\0';
    ck_assert_int_eq(gpursa_init((const OSSL_CORE_HANDLE *)&handle, fake_core, &out, &provctx),
                     0);
    if (last_reason == GPURSA_R_OLD_OPENSSL) {
        ck_assert_msg(version == NULL || strstr(last_text, version) != NULL,
                      "the error does not name %s: %s", version, last_text);
        ck_assert_ptr_nonnull(strstr(last_text, "3.0.8"));
        return 1;
    }
    ck_assert_msg(last_reason == GPURSA_R_BAD_CONFIG, "%s: reason %u (%s)",
                  version != NULL ? version : "(none)", last_reason, last_text);
    return 0;
}

START_TEST(test_init_refuses_openssl_3_0_7)
{
    ck_assert(refused_for_version("3.0.7"));
    ck_assert_ptr_nonnull(strstr(last_text, "libcrypto 3.0.7"));
    ck_assert(!refused_for_version("3.0.8"));
}
END_TEST

START_TEST(test_version_edges)
{
    static const char *const refused[] = {
        "3.0.7", "3.0.0", "3.0.1", "3.0.07", "2.9.9", "1.1.1", "0.9.8", "3.0.7-dev",
        "", "garbage", "3", "3.", "3.0", "3.0.", "3..8", ".3.0.8", "3.0.8x", " 3.0.8",
        "3.0.8 ", "3.0.-8", "3.0.8.1", "v3.0.8", "1234567.0.0", "3.0.1234567", "3.-1.9",
        "1.1.1w", "3,0,8",
    };
    static const char *const accepted[] = {
        "3.0.8", "3.0.9", "3.0.13", "3.0.22", "3.1.0", "3.2.1", "3.5.0", "3.10.0", "4.0.0",
        "10.0.0", "3.0.8-dev", "3.6.0-alpha1", "3.0.8+build", "3.0.999999",
    };

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        ck_assert_msg(refused_for_version(refused[i]), "\"%s\" accepted", refused[i]);
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
        ck_assert_msg(!refused_for_version(accepted[i]), "\"%s\" refused", accepted[i]);
}
END_TEST

/* Random MAJOR.MINOR.PATCH around the boundary against the rule. */
START_TEST(test_version_random)
{
    unsigned char rnd[3 * 200];
    char v[48];

    ck_assert_int_eq(RAND_bytes(rnd, sizeof(rnd)), 1);
    for (size_t i = 0; i < sizeof(rnd); i += 3) {
        unsigned major = rnd[i] % 6, minor = rnd[i + 1] % 12, patch = rnd[i + 2] % 24;
        int ok = major > 3 || (major == 3 && (minor > 0 || patch >= 8));

        snprintf(v, sizeof(v), "%u.%u.%u", major, minor, patch);
        ck_assert_msg(refused_for_version(v) == !ok, "%s: %s", v, ok ? "refused" : "accepted");
    }
}
END_TEST

/* A core that does not report its version: the running libcrypto's own. */
START_TEST(test_version_from_running_library)
{
    ck_assert_int_eq(refused_for_version(NULL),
                     OPENSSL_VERSION_MAJOR == 3 && OpenSSL_version_num() < 0x30000080L);
}
END_TEST

int main(void)
{
    const char *dir = getenv("OPENSSL_MODULES");
    char path[4096];
    void *so;
    Suite *s = suite_create("core_version");
    TCase *tc = tcase_create("core_version");
    SRunner *sr;
    int failed;

    snprintf(path, sizeof(path), "%s/gpursa.so", dir != NULL ? dir : ".");
    if ((so = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL
        || (gpursa_init = (OSSL_provider_init_fn *)dlsym(so, "OSSL_provider_init")) == NULL) {
        fprintf(stderr, "%s: %s\n", path, dlerror());
        return 99;
    }
    tcase_add_test(tc, test_init_refuses_openssl_3_0_7);
    tcase_add_test(tc, test_version_edges);
    tcase_add_test(tc, test_version_random);
    tcase_add_test(tc, test_version_from_running_library);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    dlclose(so);
    return failed == 0 ? 0 : 1;
}
