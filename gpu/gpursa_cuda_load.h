/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: what routes a COOP launch besides the kernels' own
 * thresholds: the load that picks a kernel's lane width, counted for the
 * device's number of SMs. No CUDA types: the host tests check it.
 */
#ifndef GPURSA_CUDA_LOAD_H
#define GPURSA_CUDA_LOAD_H

#include <stdint.h>

/* The launchers' load thresholds (kernels_<bits>.cu) are set for devices
 * of this many SMs (H100 SXM and H200). What they stand for is
 * blocks an SM: where a kernel's blocks start to fill every SM, where a
 * wider one's do. On a device of other SMs the same loads fill it more or
 * less, so a load of n items there counts as n * GPURSA_CUDA_REF_SMS / SMs
 * (rounded up): an H100 PCIe's 114 SMs take the wider kernels at 14 % fewer
 * items in flight. Only the routing moves; every kernel runs on any count. */
#define GPURSA_CUDA_REF_SMS 132

static inline uint32_t gpursa_cuda_load(uint32_t items, int sms)
{
    uint64_t l;
    if (sms <= 0)
        return items;
    l = ((uint64_t)items * GPURSA_CUDA_REF_SMS + (uint64_t)sms - 1) / (uint64_t)sms;
    return l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
}

#endif /* GPURSA_CUDA_LOAD_H */
