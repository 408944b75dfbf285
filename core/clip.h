/* clip.h — clipping, composed of ops as TensorFlow composes it in Python
 * (clip_ops.py): clip_by_value, clip_by_norm, global_norm,
 * clip_by_global_norm. Every step goes through 'mf_op_call', so the
 * functions work in eager and graph mode and gradients flow through them.
 *
 * Ownership: inputs are borrowed; outputs are owned references, set only on
 * success (NULL otherwise). Errors name the user-facing function first
 * ("clip_by_norm: multiply: dtypes differ ..."). */
#ifndef MF_CLIP_H
#define MF_CLIP_H

#include "op.h"

/* maximum(minimum(t, hi), lo), TensorFlow's order. 'lo' and 'hi' must
 * broadcast to 't's shape without changing it; concrete one-element bounds
 * must satisfy lo <= hi. Errors: MF_ESHAPE, MF_EARG, MF_EDTYPE, MF_ENOMEM. */
MfStatus mf_clip_by_value(MfTensor *t, MfTensor *lo, MfTensor *hi, MfTensor **out);

/* t * clip_norm / maximum(l2norm, clip_norm), where l2norm is the L2 norm of
 * 't' over 'axes' (0-based, 'naxes' of them; NULL: all axes) kept as size-1
 * dims. A zero norm leaves 't' unchanged; so does a concrete clip_norm of
 * +infinity everywhere (no clipping: '*out' is 't' retained, where
 * TensorFlow's formula would give inf/inf = NaN). 't' must be float; a
 * concrete 'clip_norm' must be > 0 and must not change 't's shape by
 * broadcasting. */
MfStatus mf_clip_by_norm(MfTensor *t, MfTensor *clip_norm, const int64_t *axes, int naxes,
                         MfTensor **out);

/* TensorFlow's clip_by_average_norm: clip_by_norm(t, clip_norm * size(t)),
 * so that the L2 norm divided by the number of elements is at most
 * clip_norm (size taken when the op runs: unknown dims are fine). */
MfStatus mf_clip_by_average_norm(MfTensor *t, MfTensor *clip_norm, MfTensor **out);

/* sqrt(sum over i of sum(ts[i]^2)): a scalar of the tensors' (common, float)
 * dtype. NULL entries are skipped; none at all gives a float32 0. */
MfStatus mf_global_norm(int n, MfTensor *const *ts, MfTensor **out);

/* TensorFlow's clip_by_global_norm: scale = clip_norm * min(1/norm,
 * 1/clip_norm) and outs[i] = ts[i] * scale (NULL where ts[i] is NULL), with
 * norm = 'use_norm' when not NULL, else mf_global_norm(ts). '*norm_out' (may
 * be NULL when not wanted) receives that norm. A non-finite norm (inf, NaN)
 * makes every output NaN, as in TensorFlow, so a diverged step is visible
 * instead of silently clipped. On failure every 'outs[i]' is NULL. */
MfStatus mf_clip_by_global_norm(int n, MfTensor *const *ts, MfTensor *clip_norm,
                                 MfTensor *use_norm, MfTensor **outs, MfTensor **norm_out);

/* What clip_by_global_norm does with a non-finite global norm. */
typedef enum MfNonfinite {
    MF_NONFINITE_NAN,    /* every output NaN (TensorFlow's behaviour, the default) */
    MF_NONFINITE_ERROR,  /* MF_EARG "clip_by_global_norm: the global norm is inf ..." (a
                          * concrete norm only; a graph tensor is clipped as with NAN) */
} MfNonfinite;

/* mf_clip_by_global_norm with a choice for a non-finite norm. Also: a
 * concrete clip_norm of +infinity clips nothing (outs[i] are ts[i]
 * retained; the norm is still computed), where TensorFlow's formula gives
 * NaN. */
MfStatus mf_clip_by_global_norm_ex(int n, MfTensor *const *ts, MfTensor *clip_norm,
                                   MfTensor *use_norm, MfNonfinite nonfinite, MfTensor **outs,
                                   MfTensor **norm_out);

#endif
