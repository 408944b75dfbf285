/* clip.c — clipping composites (see clip.h), TensorFlow's clip_ops.py
 * formulas written with 'mf_op_call'.
 *
 * clip_by_norm guards the square root as TensorFlow does,
 *     l2norm = where(l2sum > 0, sqrt(where(l2sum > 0, l2sum, 1)), l2sum),
 * so that a zero norm has a zero (not NaN) gradient; then dividing by
 * maximum(l2norm, clip_norm) leaves a zero 't' unchanged.
 *
 * Ownership: every temporary is released before returning; outputs are set
 * only on success. */
#include "clip.h"

#include <math.h>
#include <string.h>

#include "ops/compare.h"
#include "ops/reduce.h"
#include "shape.h"

/* Releases the 'n' tensors of 'ts' (NULL entries are fine). */
static void release_all(int n, MfTensor **ts)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

/* A concrete tensor has values now (not a graph tensor). */
static bool concrete(const MfTensor *t)
{
    return t->node == NULL && t->storage != NULL;
}

/* 'b' broadcasts to 't's shape without changing it. */
static MfStatus check_keeps_shape(const char *who, const char *what, const MfTensor *t,
                                  const MfTensor *b)
{
    int r;
    int64_t s[MF_MAX_RANK];
    MfStatus st = mf_broadcast_shapes(who, t->rank, t->shape, b->rank, b->shape, &r, s);
    if (st != MF_OK)
        return st;
    if (!mf_shape_equal(r, s, t->rank, t->shape)) {
        char bs[96], ts[96];
        return mf_err_set(MF_ESHAPE, "%s: %s of shape %s would broadcast t of shape %s to a "
                          "larger shape", who, what, mf_shape_str(b->rank, b->shape, bs, 96),
                          mf_shape_str(t->rank, t->shape, ts, 96));
    }
    return MF_OK;
}

static MfStatus check_bounds(const MfTensor *t, const MfTensor *lo, const MfTensor *hi)
{
    MfStatus st = check_keeps_shape("clip_by_value", "lo", t, lo);
    if (st == MF_OK)
        st = check_keeps_shape("clip_by_value", "hi", t, hi);
    if (st != MF_OK)
        return st;
    if (concrete(lo) && concrete(hi) && mf_tensor_numel(lo) == 1 && mf_tensor_numel(hi) == 1) {
        double l = mf_tensor_get(lo, 0), h = mf_tensor_get(hi, 0);
        if (l > h)
            return mf_err_set(MF_EARG, "clip_by_value: lo (%g) must be <= hi (%g)", l, h);
    }
    return MF_OK;
}

MfStatus mf_clip_by_value(MfTensor *t, MfTensor *lo, MfTensor *hi, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_bounds(t, lo, hi);
    if (st != MF_OK)
        return st;
    MfTensor *upper = NULL;
    st = mf_binary(MF_OP_MINIMUM, t, hi, &upper);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MAXIMUM, upper, lo, out);
    mf_tensor_release(upper);
    if (st != MF_OK)
        mf_err_prefix("clip_by_value");
    return st;
}

/* ---- clip_by_norm ------------------------------------------------------------------ */

/* TensorFlow's guarded norm: where(l2sum > 0, sqrt(where(l2sum > 0, l2sum, 1)), l2sum).
 * Same value as sqrt(l2sum); its gradient at a zero norm is 0, not NaN. */
static MfStatus safe_sqrt(MfTensor *l2sum, MfTensor **out)
{
    /* zero, one, pred, l2sum_safe, sqrt(l2sum_safe) */
    MfTensor *tmp[5] = {mf_tensor_scalar(l2sum->dtype, 0), mf_tensor_scalar(l2sum->dtype, 1)};
    MfStatus st = tmp[0] && tmp[1] ? MF_OK : MF_ENOMEM;
    if (st == MF_OK)
        st = mf_binary(MF_OP_GREATER, l2sum, tmp[0], &tmp[2]);
    if (st == MF_OK)
        st = mf_op1(MF_OP_SELECT, 3, (MfTensor *[]){tmp[2], l2sum, tmp[1]}, NULL, &tmp[3]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_SQRT, tmp[3], &tmp[4]);
    if (st == MF_OK)
        st = mf_op1(MF_OP_SELECT, 3, (MfTensor *[]){tmp[2], tmp[4], l2sum}, NULL, out);
    release_all(5, tmp);
    return st;
}

static MfStatus check_clip_norm(const MfTensor *t, const MfTensor *clip_norm)
{
    if (!mf_dtype_is_float(t->dtype))
        return mf_err_set(MF_EDTYPE, "clip_by_norm: expected a float tensor (float32 or "
                          "float64), got %s (use mf.cast)", mf_dtype_name(t->dtype));
    MfStatus st = check_keeps_shape("clip_by_norm", "clip_norm", t, clip_norm);
    if (st != MF_OK || !concrete(clip_norm))
        return st;
    int64_t n = mf_tensor_numel(clip_norm);
    for (int64_t i = 0; i < n; i++) {
        double v = mf_tensor_get(clip_norm, i);
        if (!(v > 0))
            return mf_err_set(MF_EARG, "clip_by_norm: clip_norm must be > 0, got %g", v);
    }
    return MF_OK;
}

/* A concrete clip_norm that is +infinity everywhere: nothing to clip. */
static bool infinite(const MfTensor *clip_norm)
{
    if (!concrete(clip_norm))
        return false;
    int64_t n = mf_tensor_numel(clip_norm);
    for (int64_t i = 0; i < n; i++)
        if (!(isinf(mf_tensor_get(clip_norm, i)) && mf_tensor_get(clip_norm, i) > 0))
            return false;
    return n > 0;
}

MfStatus mf_clip_by_norm(MfTensor *t, MfTensor *clip_norm, const int64_t *axes, int naxes,
                         MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_clip_norm(t, clip_norm);
    if (st != MF_OK)
        return st;
    if (infinite(clip_norm)) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    /* sq, l2sum, l2norm, t * clip_norm, maximum(l2norm, clip_norm) */
    MfTensor *tmp[5] = {NULL, NULL, NULL, NULL, NULL};
    st = mf_binary(MF_OP_MUL, t, t, &tmp[0]);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, tmp[0], axes, naxes, true, &tmp[1]);
    if (st == MF_OK)
        st = safe_sqrt(tmp[1], &tmp[2]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, t, clip_norm, &tmp[3]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MAXIMUM, tmp[2], clip_norm, &tmp[4]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, tmp[3], tmp[4], out);
    release_all(5, tmp);
    if (st != MF_OK)
        mf_err_prefix("clip_by_norm");
    return st;
}

MfStatus mf_clip_by_average_norm(MfTensor *t, MfTensor *clip_norm, MfTensor **out)
{
    /* size, as t's dtype, clip_norm * size */
    MfTensor *tmp[3] = {NULL, NULL, NULL};
    *out = NULL;
    MfStatus st = check_clip_norm(t, clip_norm);
    if (st == MF_OK)
        st = mf_unary(MF_OP_SIZE, t, &tmp[0]);
    if (st == MF_OK)
        st = mf_cast(tmp[0], t->dtype, &tmp[1]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, clip_norm, tmp[1], &tmp[2]);
    if (st == MF_OK)
        st = mf_clip_by_norm(t, tmp[2], NULL, 0, out);
    release_all(3, tmp);
    if (st != MF_OK && strncmp(mf_err_msg(), "clip_by_average_norm", 20) != 0)
        mf_err_prefix("clip_by_average_norm");
    return st;
}

/* ---- global norm ------------------------------------------------------------------- */

/* All non-NULL entries share one float dtype; returns it through '*dt'
 * (float32 when there are none). */
static MfStatus common_float_dtype(const char *who, int n, MfTensor *const *ts, MfDType *dt)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        if (!mf_dtype_is_float(ts[i]->dtype))
            return mf_err_set(MF_EDTYPE, "%s: expected float tensors, entry %d is %s (use "
                              "mf.cast)", who, i + 1, mf_dtype_name(ts[i]->dtype));
        if (first < 0)
            first = i;
        else if (ts[i]->dtype != ts[first]->dtype)
            return mf_err_set(MF_EDTYPE, "%s: entries %d and %d have different dtypes: %s and %s "
                              "(use mf.cast)", who, first + 1, i + 1,
                              mf_dtype_name(ts[first]->dtype), mf_dtype_name(ts[i]->dtype));
    }
    *dt = first < 0 ? MF_FLOAT32 : ts[first]->dtype;
    return MF_OK;
}

/* '*acc' += sum(t * t); '*acc' may start NULL. */
static MfStatus add_squared_sum(MfTensor *t, MfTensor **acc)
{
    MfTensor *sq = NULL, *s = NULL, *next = NULL;
    MfStatus st = mf_binary(MF_OP_MUL, t, t, &sq);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, sq, NULL, 0, false, &s);
    mf_tensor_release(sq);
    if (st != MF_OK)
        return st;
    if (!*acc) {
        *acc = s;
        return MF_OK;
    }
    st = mf_binary(MF_OP_ADD, *acc, s, &next);
    mf_tensor_release(s);
    mf_tensor_release(*acc);
    *acc = next;
    return st;
}

static MfStatus global_norm(const char *who, int n, MfTensor *const *ts, MfTensor **out)
{
    MfDType dt = MF_FLOAT32;
    *out = NULL;
    MfStatus st = common_float_dtype(who, n, ts, &dt);
    if (st != MF_OK)
        return st;
    MfTensor *acc = NULL;
    for (int i = 0; i < n && st == MF_OK; i++)
        if (ts[i])
            st = add_squared_sum(ts[i], &acc);
    if (st == MF_OK && !acc && !(acc = mf_tensor_scalar(dt, 0)))
        st = MF_ENOMEM;
    if (st == MF_OK)
        st = mf_unary(MF_OP_SQRT, acc, out);
    mf_tensor_release(acc);
    if (st != MF_OK)
        mf_err_prefix("%s", who);
    return st;
}

MfStatus mf_global_norm(int n, MfTensor *const *ts, MfTensor **out)
{
    return global_norm("global_norm", n, ts, out);
}

/* ---- clip_by_global_norm ----------------------------------------------------------- */

/* scale = clip_norm * minimum(1 / norm, 1 / clip_norm) + (norm - norm): the
 * last term is 0 for a finite norm and NaN otherwise (TensorFlow's trick). */
static MfStatus global_scale(MfTensor *norm, MfTensor *clip_norm, MfTensor **scale)
{
    /* one, 1/norm, 1/clip, min, clip*min, norm-norm */
    MfTensor *tmp[6] = {mf_tensor_scalar(norm->dtype, 1)};
    MfStatus st = tmp[0] ? MF_OK : MF_ENOMEM;
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, tmp[0], norm, &tmp[1]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, tmp[0], clip_norm, &tmp[2]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MINIMUM, tmp[1], tmp[2], &tmp[3]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, clip_norm, tmp[3], &tmp[4]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_SUB, norm, norm, &tmp[5]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, tmp[4], tmp[5], scale);
    release_all(6, tmp);
    return st;
}

static MfStatus check_global_args(const MfTensor *clip_norm, const MfTensor *use_norm)
{
    if (clip_norm->rank != 0)
        return mf_err_set(MF_ESHAPE, "clip_by_global_norm: clip_norm must be a scalar, got "
                          "rank %d", clip_norm->rank);
    if (use_norm && use_norm->rank != 0)
        return mf_err_set(MF_ESHAPE, "clip_by_global_norm: use_norm must be a scalar, got "
                          "rank %d", use_norm->rank);
    if (concrete(clip_norm) && !(mf_tensor_get(clip_norm, 0) > 0))
        return mf_err_set(MF_EARG, "clip_by_global_norm: clip_norm must be > 0, got %g",
                          mf_tensor_get(clip_norm, 0));
    return MF_OK;
}

MfStatus mf_clip_by_global_norm(int n, MfTensor *const *ts, MfTensor *clip_norm,
                                MfTensor *use_norm, MfTensor **outs, MfTensor **norm_out)
{
    return mf_clip_by_global_norm_ex(n, ts, clip_norm, use_norm, MF_NONFINITE_NAN, outs,
                                     norm_out);
}

/* The outputs for 'norm': ts[i] * scale, or ts[i] itself for an infinite
 * clip_norm. */
static MfStatus scale_all(int n, MfTensor *const *ts, MfTensor *clip_norm, MfTensor *norm,
                          MfTensor **outs)
{
    MfTensor *scale = NULL;
    bool inf = infinite(clip_norm);
    MfStatus st = inf ? MF_OK : global_scale(norm, clip_norm, &scale);
    for (int i = 0; i < n && st == MF_OK; i++) {
        if (ts[i] && inf)
            mf_tensor_retain(outs[i] = ts[i]);
        else if (ts[i])
            st = mf_binary(MF_OP_MUL, ts[i], scale, &outs[i]);
    }
    mf_tensor_release(scale);
    return st;
}

MfStatus mf_clip_by_global_norm_ex(int n, MfTensor *const *ts, MfTensor *clip_norm,
                                   MfTensor *use_norm, MfNonfinite nonfinite, MfTensor **outs,
                                   MfTensor **norm_out)
{
    for (int i = 0; i < n; i++)
        outs[i] = NULL;
    if (norm_out)
        *norm_out = NULL;
    MfTensor *norm = use_norm;
    MfStatus st = check_global_args(clip_norm, use_norm);
    if (st == MF_OK && use_norm)
        mf_tensor_retain(use_norm);
    else if (st == MF_OK)
        st = global_norm("clip_by_global_norm", n, ts, &norm);
    if (st != MF_OK)
        return st;
    if (nonfinite == MF_NONFINITE_ERROR && concrete(norm) && !isfinite(mf_tensor_get(norm, 0))) {
        st = mf_err_set(MF_EARG, "clip_by_global_norm: the global norm is %g (a gradient "
                        "diverged) and nonfinite = \"error\" was asked", mf_tensor_get(norm, 0));
        mf_tensor_release(norm);
        return st;
    }
    st = scale_all(n, ts, clip_norm, norm, outs);
    if (st != MF_OK) {
        release_all(n, outs);
        mf_tensor_release(norm);
        mf_err_prefix("clip_by_global_norm");
        return st;
    }
    if (norm_out)
        *norm_out = norm;
    else
        mf_tensor_release(norm);
    return MF_OK;
}

/* ---- the face (bound by repl/lmf_op.c as it binds ops; core/op.h) -------- */

static MfStatus clip_by_value_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                    MfTensor **outs, int *nout)
{
    (void)n, (void)a;
    *nout = 1;
    return mf_clip_by_value(in[0], in[1], in[2], outs);
}

const MfOpDesc mf_desc_clip_by_value = {
    .name = "clip_by_value", .api = "clip_by_value", .arity = 3, .lua = "clip_by_value",
    .inputs = "t, lo, hi", .entry = clip_by_value_entry, .topic = "clipping",
    .summary = "each element limited to [lo, hi] (numbers or tensors that broadcast)",
    .example = "mf.clip_by_value(mf.tensor{-2, 0.5, 3}, 0, 1)    --> {0, 0.5, 1}",
};

static MfStatus clip_by_norm_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                   MfTensor **outs, int *nout)
{
    (void)n;
    *nout = 1;
    return mf_clip_by_norm(in[0], in[1], a->all_axes ? NULL : a->axes, a->naxes, outs);
}

static const MfAttrDef clip_by_norm_attrs[] = {
    {"axes", MF_ATTR_AXES, MF_ATTR_POSITIONAL | MF_ATTR_ALL_AXES, MF_ATTR_AT(axes),
     MF_ATTR_AT(naxes), 0, NULL, NULL},
};

const MfOpDesc mf_desc_clip_by_norm = {
    .name = "clip_by_norm", .api = "clip_by_norm", .arity = 2, .lua = "clip_by_norm",
    .inputs = "t, clip_norm", .attrs = clip_by_norm_attrs,
    .nattrs = MF_NATTRS(clip_by_norm_attrs), .entry = clip_by_norm_entry, .topic = "clipping",
    .summary = "scales 't' so that its L2 norm (over 'axes', or all elements) is at most "
               "clip_norm: t * clip_norm / max(norm, clip_norm), TensorFlow's formula",
    .details = "Often applied to each gradient between compute_gradients and "
               "apply_gradients. A zero norm leaves 't' unchanged (no NaN) and clip_norm = "
               "math.huge clips nothing (the formula would give NaN).",
    .example = "mf.clip_by_norm(mf.tensor{3, 4}, 1)              --> {0.6, 0.8}\n"
               "mf.clip_by_norm(mf.tensor{3, 4}, 10)             --> {3, 4}",
};

static MfStatus clip_by_average_norm_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                           MfTensor **outs, int *nout)
{
    (void)n, (void)a;
    *nout = 1;
    return mf_clip_by_average_norm(in[0], in[1], outs);
}

const MfOpDesc mf_desc_clip_by_average_norm = {
    .name = "clip_by_average_norm", .api = "clip_by_average_norm", .arity = 2,
    .flags = MF_OP_NO_METHOD, .lua = "clip_by_average_norm", .inputs = "t, clip_norm",
    .entry = clip_by_average_norm_entry, .topic = "clipping",
    .summary = "TensorFlow's clip_by_average_norm: scales 't' so that its L2 norm divided by "
               "its number of elements is at most clip_norm",
    .details = "That is clip_by_norm(t, clip_norm * size(t)) (the size is taken when the op "
               "runs, so unknown graph dims are fine).",
    .example = "mf.clip_by_average_norm(mf.tensor{3, 4}, 3)      --> {3, 4}\n"
               "mf.clip_by_average_norm(mf.tensor{3, 4}, 0.5)    --> {0.6, 0.8}",
};
