#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test of the 32-bit COOP kernels' code (gpu/gpursa_coop.h, shapes without
# fp64) on the emulated warp: a whole item in the shapes of kernels_2048n.cu
# (2 limbs a lane, RSA-2048's loads up to 1,024 items) and kernels_4096.cu (4 limbs a
# lane, RSA-4096's loads up to 1,024), test_gpu_coop.cc built with -DGPURSA_TEST_CT and
# run by test_gpu_ct.sh under valgrind memcheck. These kernels also run every load on a
# GPU without full-rate FP64.
# (GPURSA_CT_ORIGINS=yes in the environment: with the origins of a report)
GPURSA_CT_PROG="test_gpu_coop_ct_2048n test_gpu_coop_ct_4096" GPURSA_CT_ORIGINS=${GPURSA_CT_ORIGINS:-no} \
    exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
