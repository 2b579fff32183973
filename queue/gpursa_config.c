/* SPDX-License-Identifier: Apache-2.0 */
/* Defaults of the configuration keys (README.md, "Configuration"). */
#include <string.h>
#include "queue/gpursa_queue.h"

void gpursa_config_defaults(gpursa_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->backend = GPURSA_CFG_BACKEND_AUTO;
    strcpy(cfg->devices, "all");
    cfg->max_batch = 8192;
    cfg->min_gpu_batch = -1;      /* measured at start-up */
    cfg->max_wait_us = 500;       /* kernels of a few ms: longer is latency (doc/design.md) */
    cfg->max_inflight = 65536;
    cfg->log_level = 1;
    cfg->variant = GPURSA_VARIANT_AUTO;
    cfg->cpu_fallback = GPURSA_CPU_FALLBACK_AUTO;
    cfg->device_batches = 0;      /* auto: GPURSA_MAX_DEVICE_BATCHES, or
                                   * GPURSA_SHARED_DEVICE_BATCHES under MPS */
    cfg->metrics_interval_ms = 10000; /* metrics_file off ("") */
    strcpy(cfg->fallback_provider, "default");
}
