/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend of the installed module: none imposed, so the queue picks one
 * from the configuration (backend = auto, cuda, host or cpu).
 */
#include "provider/gpursa_prov.h"

const gpursa_gpu_backend_ops *gpursa_prov_backend(const gpursa_config *cfg)
{
    (void)cfg;
    return NULL;
}
