/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_ct.h - for the constant-time tests run under valgrind memcheck
 * (test_gpu_ct, test_gpu_coop_ct): memory marked secret is "undefined" to
 * memcheck, which then reports every branch and address that depends on it.
 * Without valgrind the marks do nothing.
 */
#ifndef GPU_CT_H
#define GPU_CT_H

#include <valgrind/memcheck.h>
#include "gpu/gpursa_rsa_op.h"
#include "tests/gpu/gpu_testutil.h"

#define SECRET(p, len) VALGRIND_MAKE_MEM_UNDEFINED((p), (len))
#define PUBLIC(p, len) VALGRIND_MAKE_MEM_DEFINED((p), (len))

/* Every secret of a key's device form: p, q, dp, dq, qinv and the constants
 * derived from p and q, the 32-bit ones and the 52-bit ones of the FP64 path. */
static inline void gt_mark_key_secret(gpursa_rsa_keydata *kd)
{
    SECRET(kd->p, sizeof(kd->p));
    SECRET(kd->q, sizeof(kd->q));
    SECRET(kd->dp, sizeof(kd->dp));
    SECRET(kd->dq, sizeof(kd->dq));
    SECRET(kd->qinv, sizeof(kd->qinv));
    SECRET(kd->p_one, sizeof(kd->p_one));
    SECRET(kd->q_one, sizeof(kd->q_one));
    SECRET(kd->p_rrr, sizeof(kd->p_rrr));
    SECRET(kd->q_rrr, sizeof(kd->q_rrr));
    SECRET(&kd->p0inv, sizeof(kd->p0inv));
    SECRET(&kd->q0inv, sizeof(kd->q0inv));
    SECRET(kd->p52, sizeof(kd->p52));
    SECRET(kd->q52, sizeof(kd->q52));
    SECRET(kd->p_fone, sizeof(kd->p_fone));
    SECRET(kd->q_fone, sizeof(kd->q_fone));
    SECRET(kd->p_fin, sizeof(kd->p_fin));
    SECRET(kd->q_fin, sizeof(kd->q_fin));
    SECRET(kd->p_fone_min, sizeof(kd->p_fone_min));
    SECRET(kd->q_fone_min, sizeof(kd->q_fone_min));
    SECRET(kd->p_fin_min, sizeof(kd->p_fin_min));
    SECRET(kd->q_fin_min, sizeof(kd->q_fin_min));
    SECRET(&kd->p0inv52, sizeof(kd->p0inv52));
    SECRET(&kd->q0inv52, sizeof(kd->q0inv52));
}

/* A batch's inputs (the blinded values c_b the CRT kernels read), secret; and
 * back to defined for the comparison with GMP: its results, statuses and
 * inputs. */
static inline void gt_mark_batch_secret(const gt_batch *b)
{
    const size_t words = (size_t)b->nl * b->stride;
    SECRET(b->in, words * 4);
}
static inline void gt_mark_batch_public(const gt_batch *b)
{
    const size_t words = (size_t)b->nl * b->stride;
    PUBLIC(b->out, words * 4);
    PUBLIC(b->status, (size_t)b->stride * 4);
    PUBLIC(b->in, words * 4);
}

#endif
