#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test of the FP64 multiplication and squaring (gpu/gpursa_coop_fp.h)
# at every FP64 lane shape (RSA-2048's 2- and 4-lane, RSA-3072's 3- and
# 8-lane, RSA-4096's 4- and 8-lane): test_gpu_coop.cc built with -DGPURSA_TEST_CT
# -DGPURSA_TEST_CT_MONT, each run by test_gpu_ct.sh under valgrind memcheck (RSA-2048's
# shape also runs the whole operation: test_gpu_coop_ct.sh).
# (GPURSA_CT_ORIGINS=yes in the environment: with the origins of a report)
GPURSA_CT_PROG="test_gpu_coop_ct_2048f test_gpu_coop_ct_2048f2 test_gpu_coop_ct_3072fn \
test_gpu_coop_ct_3072fw test_gpu_coop_ct_4096f test_gpu_coop_ct_4096fn" GPURSA_CT_ORIGINS=${GPURSA_CT_ORIGINS:-no} \
    exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
