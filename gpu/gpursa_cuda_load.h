/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: what routes a COOP launch: the load that picks a
 * kernel's lane width, counted for the device's number of SMs, and the one
 * table of which kernel runs which launch; and the size classes of a batch
 * (the completion estimate's, and the graphs' of small batches). No CUDA
 * types: the host tests check them.
 */
#ifndef GPURSA_CUDA_LOAD_H
#define GPURSA_CUDA_LOAD_H

#include <stddef.h>
#include <stdint.h>

/* The routing table's load thresholds (gpursa_routes, below) are set for devices
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

/* ---- which COOP kernel runs a launch ------------------------------------------------ */

/* The COOP kernels, each a file of its own (its lane shape: limbs a CRT half
 * in lanes of so many limbs). gpursa_cuda_kernels.h declares their launchers;
 * kernels_route.cu maps these names to them. */
typedef enum {
    GPURSA_KERNEL_1024,    /* kernels_1024.cu: 32-bit, 4 lanes a half of 4 limbs */
    GPURSA_KERNEL_2048,    /* kernels_2048.cu: 32-bit, 8 lanes of 4 */
    GPURSA_KERNEL_2048N,   /* kernels_2048n.cu: 32-bit, 16 lanes of 2 */
    GPURSA_KERNEL_2048F,   /* kernels_2048f.cu: FP64, 4 lanes of 5 */
    GPURSA_KERNEL_2048F2,  /* kernels_2048f2.cu: FP64, 2 lanes of 10 */
    GPURSA_KERNEL_3072,    /* kernels_3072.cu: 32-bit, 8 lanes of 6 */
    GPURSA_KERNEL_3072FN,  /* kernels_3072fn.cu: FP64, 8 lanes of 4 */
    GPURSA_KERNEL_3072FW,  /* kernels_3072fw.cu: FP64, 3 lanes of 10 */
    GPURSA_KERNEL_4096,    /* kernels_4096.cu: 32-bit, 16 lanes of 4 */
    GPURSA_KERNEL_4096FN,  /* kernels_4096fn.cu: FP64, 8 lanes of 5 */
    GPURSA_KERNEL_4096F,   /* kernels_4096f.cu: FP64, 4 lanes of 10 */
    GPURSA_KERNEL_COUNT_
} gpursa_kernel;

/* What a row asks of the device besides the load */
typedef enum {
    GPURSA_ROUTE_ANY,      /* shared through MPS or not */
    GPURSA_ROUTE_MPS,      /* only a device shared with other processes (MPS) */
    GPURSA_ROUTE_ALONE     /* only a device this process has to itself */
} gpursa_route_sharing;

/* One row of the table: a launch of `bits` whose load (gpursa_cuda_load) is
 * above `above` and at most `upto` (0: no bound), on a device that meets
 * `fp64` (1: runs FP64 at full rate) and `sharing`, runs `kernel`. */
typedef struct {
    int bits;
    uint32_t above, upto;
    int fp64;
    gpursa_route_sharing sharing;
    gpursa_kernel kernel;
} gpursa_route;

/* The table, read top down: the first row that matches picks the kernel, and
 * each size's last row matches every launch. doc/design.md ("Per key size and
 * load") gives each row's reasons.
 * - The load, not the batch, picks the lane width: narrow lanes finish a
 *   lone batch sooner but cost more GPU time an item, which is what counts
 *   once this process's batches in flight fill the device.
 * - A device shared through MPS runs other processes' batches, whose load
 *   this process does not see: there every load takes the kernel that does
 *   the least work an item without a long lone batch, never the narrowest.
 * - Without full-rate FP64 (sm_75, 86, 89: 1/32 to 1/64 rate) only the
 *   32-bit kernels run. */
static const gpursa_route gpursa_routes[] = {
    { 1024,    0,    0, 0, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_1024 },
    /* under MPS: its lone batch is short, and it does less work an item
     * than the 32-bit kernels and takes less time than the 2-lane one */
    { 2048,    0,    0, 1, GPURSA_ROUTE_MPS,   GPURSA_KERNEL_2048F },
    /* the shortest chain: light loads, where a batch takes one block's time */
    { 2048,    0, 1024, 0, GPURSA_ROUTE_ALONE, GPURSA_KERNEL_2048N },
    /* the fewest instructions an item, but 64 items a block and one block
     * an SM: lighter loads would leave SMs idle */
    { 2048, 6000,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_2048F2 },
    /* from 1,025 items its block of 32 takes less time than the 32-bit
     * kernel's of 16 */
    { 2048, 1024,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_2048F },
    { 2048,    0,    0, 0, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_2048 },
    /* 30 limbs a half on 3 lanes: the least work an item */
    { 3072,    0,    0, 1, GPURSA_ROUTE_MPS,   GPURSA_KERNEL_3072FW },
    { 3072, 2048,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_3072FW },
    /* the shortest FP64 chain, for loads that leave SMs without a block */
    { 3072,    0,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_3072FN },
    { 3072,    0,    0, 0, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_3072 },
    /* fewer shuffles a limb product than 8 lanes */
    { 4096,    0,    0, 1, GPURSA_ROUTE_MPS,   GPURSA_KERNEL_4096F },
    { 4096, 2048,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_4096F },
    /* a lone item sooner than on the 32-bit 16-lane kernel */
    { 4096,    0,    0, 1, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_4096FN },
    { 4096,    0,    0, 0, GPURSA_ROUTE_ANY,   GPURSA_KERNEL_4096 },
};
#define GPURSA_NROUTES (sizeof(gpursa_routes) / sizeof(gpursa_routes[0]))

/* Whether row r takes a launch of this load on this device */
static inline int gpursa_route_takes(const gpursa_route *r, uint32_t load, int shared, int fp64)
{
    return load > r->above && (r->upto == 0 || load <= r->upto) && (!r->fp64 || fp64)
           && (r->sharing == GPURSA_ROUTE_ANY || (r->sharing == GPURSA_ROUTE_MPS) == (shared != 0));
}

/* The kernel of a launch of a bits-bit modulus at this load on a device
 * shared or not, with or without full-rate FP64; GPURSA_KERNEL_COUNT_ for a
 * size the table does not have. */
static inline gpursa_kernel gpursa_route_pick(int bits, uint32_t load, int shared, int fp64)
{
    for (size_t i = 0; i < GPURSA_NROUTES; i++)
        if (gpursa_routes[i].bits == bits && gpursa_route_takes(&gpursa_routes[i], load, shared, fp64))
            return gpursa_routes[i].kernel;
    return GPURSA_KERNEL_COUNT_;
}

/* ---- the size classes of a batch ------------------------------------------------- */

/* The size class of a batch of n items (1 <= n < 2^32): n itself below 8,
 * then four classes an octave, so that the counts of one class differ by
 * less than a quarter. */
static inline unsigned gpursa_cuda_class(size_t n)
{
    unsigned k = 3;

    if (n < 8)
        return (unsigned)n;
    while ((n >> (k + 1)) != 0)              /* 2^k <= n < 2^(k+1) */
        k++;
    return 8 + 4 * (k - 3) + (unsigned)((n >> (k - 2)) & 3);
}

/* The largest count of n's size class: a batch padded to it has less than a
 * quarter more items (none below 8). */
static inline size_t gpursa_cuda_class_top(size_t n)
{
    unsigned k = 3;

    if (n < 8)
        return n;
    while ((n >> (k + 1)) != 0)
        k++;
    return (((n >> (k - 2)) + 1) << (k - 2)) - 1;
}

/* Batches of up to GPURSA_CUDA_GRAPH_MAX items replay their stream operations
 * as one CUDA graph (gpursa_cuda_batch_submit): the size classes up to it */
#define GPURSA_CUDA_GRAPH_MAX 511
#define GPURSA_CUDA_GRAPH_CLASSES (8 + 4 * (8 - 2))

#endif /* GPURSA_CUDA_LOAD_H */
