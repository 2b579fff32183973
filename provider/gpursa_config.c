/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: the provider's openssl.cnf section, read through the core's
 * get_params, then GPURSA_<NAME> environment variables on top (so a quick
 * experiment needs no config edit). A bad value fails the provider load with
 * an error that names the key, the value and where it came from.
 */
#include <ctype.h>
#include <string.h>
#include "provider/gpursa_prov.h"
#include "provider/gpursa_env.h"

static int config_bad(GPURSA_PROV_CTX *ctx, const char *key, const char *value,
                      const char *origin, const char *expect)
{
    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG,
                     "invalid value \"%s\" for %s (from %s): expected %s",
                     value, key, origin, expect);
    gpursa_log(NULL, 0, "invalid value \"%s\" for %s (from %s): expected %s",
               value, key, origin, expect);
    return 0;
}

int gpursa_config_set(GPURSA_PROV_CTX *ctx, gpursa_config *cfg,
                      const char *key, const char *value, const char *origin)
{
    const gpursa_config_key *k = gpursa_config_key_find(key);
    char why[256];

    if (k == NULL)
        return config_bad(ctx, key, value, origin, "a known gpursa key");
    if (!k->set(cfg, value, why, sizeof(why)))
        return config_bad(ctx, key, value, origin, why);
    return 1;
}

/* The keys of gpursa_config_keys (queue/gpursa_config.c), each from the
 * section, then from GPURSA_<KEY IN UPPER CASE>, which wins. */
int gpursa_config_load(GPURSA_PROV_CTX *ctx, gpursa_config *cfg)
{
    const gpursa_config_key *k;
    OSSL_PARAM params[2];
    char envname[64];
    size_t j;

    if (!gpursa_config_defaults(cfg)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_INTERNAL, "a configuration default does not parse");
        return 0;
    }
    for (k = gpursa_config_keys; k->name != NULL; k++) {
        const char *value = NULL;
        const char *origin = "openssl.cnf";

        /* A key absent from the section is simply left unset by the core. */
        params[0] = OSSL_PARAM_construct_utf8_ptr(k->name, (char **)&value, 0);
        params[1] = OSSL_PARAM_construct_end();
        if (ctx->core_get_params != NULL && !ctx->core_get_params(ctx->handle, params)) {
            GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG,
                             "cannot read the provider's config section");
            return 0;
        }
        strcpy(envname, "GPURSA_");
        for (j = 0; k->name[j] != '\0' && 7 + j + 1 < sizeof(envname); j++)
            envname[7 + j] = (char)toupper((unsigned char)k->name[j]);
        envname[7 + j] = '\0';
        if (gpursa_getenv(envname) != NULL) {
            value = gpursa_getenv(envname);
            origin = envname;
        }
        if (value != NULL && !gpursa_config_set(ctx, cfg, k->name, value, origin))
            return 0;
    }
    return 1;
}
