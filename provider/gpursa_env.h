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

/* getenv(name), or NULL when the process runs with privileges its caller
 * does not have (secure_getenv where the C library has it). */
const char *gpursa_getenv(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* GPURSA_ENV_H */
