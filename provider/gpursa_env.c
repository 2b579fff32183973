/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa_getenv: the environment, unless the process is privileged. */
#define _GNU_SOURCE             /* secure_getenv */
#include "config.h"
#include <stdlib.h>
#include <unistd.h>
#ifdef HAVE_SYS_AUXV_H
#include <sys/auxv.h>
#endif
#include "provider/gpursa_env.h"

#ifndef HAVE_SECURE_GETENV
/* The kernel's AT_SECURE where there is one (set for setuid, setgid and
 * file-capability programs), issetugid() on the BSDs, else the ids. */
static int gpursa_env_privileged(void)
{
#if defined(HAVE_GETAUXVAL) && defined(HAVE_SYS_AUXV_H) && defined(AT_SECURE)
    return getauxval(AT_SECURE) != 0;
#elif defined(HAVE_ISSETUGID)
    return issetugid() != 0;
#else
    return getuid() != geteuid() || getgid() != getegid();
#endif
}
#endif

const char *gpursa_getenv(const char *name)
{
#ifdef HAVE_SECURE_GETENV
    return secure_getenv(name);
#else
    return gpursa_env_privileged() ? NULL : getenv(name);
#endif
}
