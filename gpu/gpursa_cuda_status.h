/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend, internal: the words of a launch's status array
 * (gpursa_cuda_kernels.h), in a header of their own so that the host tests of
 * the stages that write them (gpursa_coop_nstage.h) compile without CUDA.
 */
#ifndef GPURSA_CUDA_STATUS_H
#define GPURSA_CUDA_STATUS_H

/* Device status words (the status array of a launch). The backend presets every
 * item's word to GPURSA_DEV_ST_PRESET (cudaMemsetAsync of the byte 0xFA) before each
 * batch; only the unblinding stage writes GPURSA_DEV_ST_OK, and only for an item whose
 * result it checked. OK is a value that zeroed memory cannot hold and that the preset
 * overwrites in stale memory, so an item that no kernel wrote reads as a fault. */
#define GPURSA_DEV_ST_PRESET_BYTE 0xFA
#define GPURSA_DEV_ST_PRESET   0xFAFAFAFAu
#define GPURSA_DEV_ST_BLINDED  0x424C4E44u  /* the blinding stage took the item */
#define GPURSA_DEV_ST_BADINPUT 0x42414449u  /* c, r or rinv >= n, or r rinv != 1 mod n */
#define GPURSA_DEV_ST_OK       0x4F4B4F4Bu  /* out < n and out^e == c mod n */

#endif /* GPURSA_CUDA_STATUS_H */
