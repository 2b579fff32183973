#!/bin/sh
# Constant-time test of the COOP kernel's code (gpu/gpursa_coop.h, 32-bit and
# FP64 limbs) on the emulated warp: test_gpu_coop.c built with
# -DGPURSA_COOP_CT, run by test_gpu_ct.sh under valgrind memcheck.
GPURSA_CT_PROG=test_gpu_coop_ct exec sh "$(dirname "$0")/test_gpu_ct.sh" "$@"
