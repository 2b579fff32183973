/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: the device status words of a launch and how the
 * backend maps them to item statuses. No CUDA types: the host tests check
 * the mapping.
 */
#ifndef GPURSA_CUDA_STATUS_H
#define GPURSA_CUDA_STATUS_H

#include <stdint.h>
#include "gpu/gpursa_gpu.h"

/* Device status words (the status array of a launch). The backend presets every
 * item's word to GPURSA_DEV_ST_PRESET (the byte 0xFA in each byte, written by the
 * launch that packs the batch's inputs) before each batch; only the check stage
 * writes GPURSA_DEV_ST_OK, and only for an item whose result it checked. OK is a
 * value that zeroed memory cannot hold and that the preset overwrites in stale
 * memory, so an item that no kernel wrote reads as a fault. */
#define GPURSA_DEV_ST_PRESET_BYTE 0xFA
#define GPURSA_DEV_ST_PRESET   0xFAFAFAFAu
#define GPURSA_DEV_ST_BLINDED  0x424C4E44u  /* the blinding stage took the item */
#define GPURSA_DEV_ST_BADINPUT 0x42414449u  /* c, r or rinv >= n, or r rinv != 1 mod n */
#define GPURSA_DEV_ST_UNBLINDED 0x55424C44u /* the unblinding stage took it: out < n */
#define GPURSA_DEV_ST_OK       0x4F4B4F4Bu  /* out < n and out^e == c mod n */

/* An item's status from its device status word, failing closed: OK only for
 * the word the unblinding stage writes after its checks, and only when the
 * input it checked against is the caller's (echo_same: the echo of the
 * device's input equals it); BADINPUT only as the blinding stage reported it
 * on the caller's input; any other word (the preset, one no stage wrote,
 * zeroed memory, a corrupted word) is a fault. */
static inline int gpursa_cuda_item_status(uint32_t word, int echo_same)
{
    if (!echo_same)
        return GPURSA_ITEM_FAULT;               /* checked against a corrupted input */
    if (word == GPURSA_DEV_ST_OK)
        return GPURSA_ITEM_OK;
    return word == GPURSA_DEV_ST_BADINPUT ? GPURSA_ITEM_BADINPUT : GPURSA_ITEM_FAULT;
}

#endif /* GPURSA_CUDA_STATUS_H */
