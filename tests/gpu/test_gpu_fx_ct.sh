#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test of the one- and two-thread kernels (gpu/kernels_rsa.cuh): IMAD, XMAD
# and FAST (what `variant = auto` runs for RSA-1024 on H100/H200) at RSA-1024 and 2048, one
# item each, test_gpu_fx.cc built with -DGPURSA_FX_CT and run by test_gpu_ct.sh under
# valgrind memcheck.
# (GPURSA_CT_ORIGINS=yes in the environment: with the origins of a report; GPURSA_CT_ALL_SIZES
# set: IMAD and FAST at RSA-3072 and 4096 too, their rolled-row arithmetic, ~40 s more)
GPURSA_CT_PROG="test_gpu_fx_ct" GPURSA_CT_ORIGINS=${GPURSA_CT_ORIGINS:-no} \
    exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
