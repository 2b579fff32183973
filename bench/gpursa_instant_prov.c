/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BENCHMARK ONLY: what makes bench/instant/gpursa.so the provider on the
 * instant backend (gpursa_bench_instant.c) for bench/queue-cpu-cost.py.
 * backend = cpu still means the CPU; any other backend is the instant one.
 */
#include <stdio.h>
#include "provider/gpursa_prov.h"
#include "bench/gpursa_bench_instant.h"

const gpursa_gpu_backend_ops *gpursa_prov_backend(const gpursa_config *cfg)
{
    if (cfg->backend == GPURSA_CFG_BACKEND_CPU)
        return NULL;
    fprintf(stderr, "gpursa[warn]: BENCHMARK-ONLY instant backend: results come from a "
            "cache, nothing is exponentiated per operation\n");
    return gpursa_bench_instant_backend();
}
