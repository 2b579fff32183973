/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which OpenSSL gpursa may run on: the CPU fallback uses the fallback
 * provider's raw RSA decryption, constant time only from OpenSSL 3.0.8
 * (CVE-2022-4304, a timing oracle in RSA decryption).
 */
#include "provider/gpursa_prov.h"

/* One decimal component of at most 6 digits at *s; -1 if there is none. */
static long version_part(const char **s)
{
    long v = 0;
    int digits = 0;

    while (**s >= '0' && **s <= '9' && digits < 7) {
        v = v * 10 + (**s - '0');
        (*s)++;
        digits++;
    }
    return digits == 0 || digits > 6 ? -1 : v;
}

int gpursa_openssl_version_ok(const char *version)
{
    const char *s = version;
    long major, minor, patch;

    if (s == NULL)
        return 0;
    /* MAJOR.MINOR.PATCH, then the end or a pre-release/build suffix */
    if ((major = version_part(&s)) < 0 || *s++ != '.'
        || (minor = version_part(&s)) < 0 || *s++ != '.'
        || (patch = version_part(&s)) < 0 || (*s != '\0' && *s != '-' && *s != '+'))
        return 0;
    if (major != 3)
        return major > 3;
    return minor > 0 || patch >= 8;
}
