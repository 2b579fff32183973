/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BENCHMARK ONLY: the "instant" gpu/ backend (gpursa_bench_instant.c), a
 * batch answered at once from a cache of checked results, so that the CPU
 * cost of everything above the exponentiation can be measured.
 */
#ifndef GPURSA_BENCH_INSTANT_H
#define GPURSA_BENCH_INSTANT_H

#include "gpu/gpursa_gpu.h"

const gpursa_gpu_backend_ops *gpursa_bench_instant_backend(void);

#endif /* GPURSA_BENCH_INSTANT_H */
