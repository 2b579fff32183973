/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_shapes.h - the shape of every COOP kernel (gpursa_coop.h, and
 * gpursa_coop_fp.h for FP64 limbs) and of every modulus-n stage
 * (gpursa_coop_nstage.h), as C++ types of constants. The algorithm is
 * templated over the shape (gpursa_coop<S>, gpursa_coop_fp<S>, ...); each
 * kernels_<x>.cu instantiates the launchers of one shape below, so that nvcc
 * builds the kernels in parallel, and the host tests take the same types
 * (tests/gpu/Makefile.am: -DGPURSA_TEST_SHAPE=<type>).
 *
 * Which kernel runs a launch: the routing table gpursa_routes
 * (gpursa_cuda_load.h) maps a key size, the load, FP64 and MPS to a
 * gpursa_kernel; kernels_route.cu maps that to the launcher of the shape
 * here (doc/design.md, "Why the kernels are shaped as they are").
 */
#ifndef GPURSA_SHAPES_H
#define GPURSA_SHAPES_H

#include <stdint.h>

/* H limbs of 32 bits per CRT half (for a modulus-n stage: per modulus), L per
 * lane; what a shape does not set below is as here. */
template <int H_, int L_>
struct gpursa_shape_lanes {
    static constexpr int H = H_;                  /* 32-bit limbs per half */
    static constexpr int L = L_;                  /* ... per lane (divides H) */
    static constexpr int T = H / L;               /* lanes per CRT half */
    static constexpr int LANES = 2 * T;           /* lanes per item */
    static constexpr int PER_WARP = 32 / LANES;   /* items a warp */
    /* lanes of a warp left over (0, or 2 at T = 3: gpursa_coop_place) */
    static constexpr int SPARE = 32 - PER_WARP * LANES;
    static constexpr int W = 4;                   /* window bits, 32-bit limbs */
    static constexpr int threads = 256;           /* a block */
    /* the secret exponentiations on FP64 (52-bit) limbs: gpursa_coop_fp.h */
    static constexpr bool fp64 = false;
    static constexpr int fp_w = 4;                /* their window bits */
    static constexpr int fp_smem = 0;             /* window table entries in shared memory */
    static constexpr bool fp_early = false;       /* lane 0's carry ahead of m q */
    static constexpr bool fp_barrier = false;     /* the block's warps meet at each window */
    static constexpr bool fp_stagger = false;     /* half the warps read the window entry late */
    /* __launch_bounds__(threads, 1): one block an SM in any case (kernels_coop.cuh) */
    static constexpr bool one_block = false;
    /* the file also builds the factor and check stages (gpursa_coop_epow.h) */
    static constexpr bool epow = false;
    /* the file also builds the whole operation as one kernel (gpursa_coop_fused.h),
     * which a launch routed to this shape runs instead of the five stages */
    static constexpr bool fused = false;
    static_assert(H % L == 0 && LANES <= 32, "COOP: L must divide H, and 2H/L lanes fit a warp");
};

/* ---- the CRT kernels (kernels_<bits><variant>.cu) --------------------------------------
 * Each with why it exists; the loads each runs: gpursa_routes. */

/* RSA-1024, 32-bit limbs, 4 lanes of 4 a half: its only COOP kernel */
struct gpursa_shape_1024 : gpursa_shape_lanes<16, 4> {
    static constexpr bool epow = true;
};
/* RSA-2048, 32-bit, 8 lanes of 4: loads above 1,024 and MPS without full-rate FP64 */
struct gpursa_shape_2048 : gpursa_shape_lanes<32, 4> {
    static constexpr bool epow = true;
};
/* RSA-2048, 32-bit, 16 lanes of 2 (a warp an item): the shortest chain, for loads up to 1,024 */
struct gpursa_shape_2048n : gpursa_shape_lanes<32, 2> {
};
/* RSA-2048, FP64, 4 lanes of 5 52-bit limbs (8 of 32 bits): middling loads and MPS */
struct gpursa_shape_2048f : gpursa_shape_lanes<32, 8> {
    static constexpr bool fp64 = true, fp_early = true, epow = true;
    static constexpr int fp_smem = 8;
};
/* RSA-2048, FP64, 2 lanes of 10: half the CIOS steps' fixed part, for heavy
 * loads; more than 128 registers, so one block an SM */
struct gpursa_shape_2048f2 : gpursa_shape_lanes<32, 16> {
    static constexpr bool fp64 = true, fp_early = true, fp_barrier = true, one_block = true;
    static constexpr int fp_smem = 8;
};
/* RSA-3072, 32-bit, 8 lanes of 6: every load without full-rate FP64 */
struct gpursa_shape_3072 : gpursa_shape_lanes<48, 6> {
    static constexpr bool epow = true;
};
/* RSA-3072, FP64, 8 lanes of 4 (6 of 32 bits): the shortest FP64 chain, for light loads */
struct gpursa_shape_3072fn : gpursa_shape_lanes<48, 6> {
    static constexpr bool fp64 = true, fp_early = true, one_block = true, epow = true;
};
/* RSA-3072, FP64, 3 lanes of 10 (30 limbs, the fewest that hold a half), two
 * lanes a warp left over: heavy loads and MPS; RSA-4096's lane code */
struct gpursa_shape_3072fw : gpursa_shape_lanes<48, 16> {
    static constexpr bool fp64 = true, fp_barrier = true, fp_stagger = true, one_block = true, fused = true;
    static constexpr int fp_smem = 8;
};
/* RSA-4096, 32-bit, 16 lanes of 4: every load without full-rate FP64 */
struct gpursa_shape_4096 : gpursa_shape_lanes<64, 4> {
    static constexpr bool epow = true;
};
/* RSA-4096, FP64, 4 lanes of 10: the most limb products a shuffle, for heavy
 * loads and MPS; more than 128 registers, so one block an SM */
struct gpursa_shape_4096f : gpursa_shape_lanes<64, 16> {
    static constexpr bool fp64 = true, fp_barrier = true, fp_stagger = true, one_block = true, fused = true;
    static constexpr int fp_smem = 8;
};
/* RSA-4096, FP64, 8 lanes of 5 (8 of 32 bits), RSA-2048's FP64 lane shape: light loads */
struct gpursa_shape_4096fn : gpursa_shape_lanes<64, 8> {
    static constexpr bool fp64 = true, fp_early = true, one_block = true, epow = true;
};

/* ---- the modulus-n stages (kernels_nstage_<bits>.cu) -----------------------------------
 * H = the limbs of n (the "half" is the whole modulus), a group of T = H / L
 * lanes an item: the 32-bit CRT kernels' lane widths. */

struct gpursa_shape_nstage_1024 : gpursa_shape_lanes<32, 4> {
};
struct gpursa_shape_nstage_2048 : gpursa_shape_lanes<64, 8> {
};
struct gpursa_shape_nstage_3072 : gpursa_shape_lanes<96, 6> {
};
struct gpursa_shape_nstage_4096 : gpursa_shape_lanes<128, 8> {
};

#endif /* GPURSA_SHAPES_H */
