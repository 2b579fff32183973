#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant-time test of the COOP kernel's code (gpu/gpursa_coop.h: 32-bit
# limbs, and FP64 limbs in gpu/gpursa_coop_fp.h) on the emulated warp: test_gpu_coop.cc built with
# -DGPURSA_TEST_CT, run by test_gpu_ct.sh under valgrind memcheck; RSA-2048's
# FP64 shape with its 4-bit window, half the table in "shared memory"
# (test_gpu_coop_ct), with a 3-bit one (fp_w, test_gpu_coop_ct_w3),
# and with the window entry read late (fp_stagger, test_gpu_coop_ct_st).
GPURSA_CT_PROG="test_gpu_coop_ct test_gpu_coop_ct_w3 test_gpu_coop_ct_st" exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
