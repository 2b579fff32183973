/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa's one way to read its GPURSA_* environment variables (the
 * configuration, provider/gpursa_config.c). In a setuid or setgid process
 * (AT_SECURE) the environment belongs to the less privileged caller, so it
 * is ignored: a variable such as GPURSA_METRICS_FILE would otherwise let
 * that caller have files created, replaced or removed with the program's
 * rights.
 */
#ifndef GPURSA_ENV_H
#define GPURSA_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* The variable's value as secure_getenv gives it: NULL when the process runs
 * with privileges its caller does not have (AT_SECURE, or issetugid, or
 * differing real and effective ids where the C library has no
 * secure_getenv), else the environment's value. */
const char *gpursa_getenv(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* GPURSA_ENV_H */
