#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test of the modulus-n stages (gpu/gpursa_coop_nstage.h: blinding
# before the CRT kernel, unblinding and the checks after it) on the emulated warp,
# in the shapes of kernels_nstage_2048.cu and kernels_nstage_4096.cu:
# test_gpu_nstage.cc built with -DGPURSA_NSTAGE_CT (r, rinv, the CRT result and the
# status words undefined), run by test_gpu_ct.sh under valgrind memcheck.
# (GPURSA_CT_ORIGINS=yes in the environment: with the origins of a report)
GPURSA_CT_PROG="test_gpu_nstage_ct_2048 test_gpu_nstage_ct_4096" GPURSA_CT_ORIGINS=${GPURSA_CT_ORIGINS:-no} \
    exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
