/* gather_nd.c — indexing by tuples of positions (TensorFlow's GatherNd and
 * ScatterNd), with 1-based positions, as mf.gather's:
 *
 *   GatherNd(params, indices)       indices (int32/int64) of shape [..., m],
 *                                   m <= rank(params): out[...] =
 *                                   params[indices[..., 1], ..., indices[..., m], :]
 *                                   of shape indices.shape[:-1] + params.shape[m:]
 *   ScatterNd(indices, updates)     zeros of attrs 'shape' (ints) with each
 *                                   updates[...] added at params position
 *                                   indices[...] (repeats add up, as TF)
 *   ScatterNdLike(like, indices, updates)
 *                                   ScatterNd with like's shape, taken at run
 *                                   time (internal: GatherNd's gradient with
 *                                   unknown dims; like gets no gradient)
 *
 * Gradients (TensorFlow's array_grad.py): GatherNd -> ScatterNdLike(params,
 * indices, dy); ScatterNd and ScatterNdLike -> GatherNd(dy, indices) for
 * the updates; the positions get none. A position outside 1..size is an
 * error naming the function, the entry of indices and the tuple. */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "fill.h"
#include "grads_math.h"

/* The parts of one call: the data side (params or the output) has 'rank'
 * dims 'shape'; indices has 'n' tuples of 'm' positions; each addresses a
 * slice of 'slice' elements. */
typedef struct Nd {
    int m;
    int64_t n, slice;
} Nd;

static MfStatus check_indices(const MfOpCall *c, const MfTensor *ix, int data_rank)
{
    MfStatus st = mf_check_dtype(c, ix, MF_INTS, "int32 or int64 indices");
    if (st != MF_OK)
        return st;
    if (ix->rank == 0)
        return mf_err_set(MF_ESHAPE, "%s: indices must have rank >= 1 (tuples of positions "
                          "along the last axis), got a scalar", op_api(c));
    int64_t m = ix->shape[ix->rank - 1];
    if (m < 0)
        return mf_err_set(MF_ESHAPE, "%s: the last dim of indices (the tuple length) must be "
                          "known", op_api(c));
    if (m > data_rank)
        return mf_err_set(MF_ESHAPE, "%s: index tuples of length %lld for %s of rank %d",
                          op_api(c), (long long)m, c->op == MF_OP_GATHER_ND ? "params" : "shape",
                          data_rank);
    return MF_OK;
}

/* 'u' (updates or the gather's output) is indices.shape[:-1] + shape[m:]. */
static void nd_shape(const MfTensor *ix, int rank, const int64_t *shape, int *out_rank,
                     int64_t *out)
{
    int r = 0, m = (int)ix->shape[ix->rank - 1];
    for (int d = 0; d < ix->rank - 1; d++)
        out[r++] = ix->shape[d];
    for (int d = m; d < rank; d++)
        out[r++] = shape[d];
    *out_rank = r;
}

static MfStatus gather_nd_infer(MfOpCall *c)
{
    const MfTensor *p = c->inputs[0], *ix = c->inputs[1];
    MfStatus st = check_indices(c, ix, p->rank);
    if (st != MF_OK)
        return st;
    int64_t m = ix->shape[ix->rank - 1];
    if (ix->rank - 1 + p->rank - m > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "%s: the result would have rank %lld, at most %d",
                          op_api(c), (long long)(ix->rank - 1 + p->rank - m), MF_MAX_RANK);
    c->noutputs = 1;
    c->out[0].dtype = p->dtype;
    nd_shape(ix, p->rank, p->shape, &c->out[0].rank, c->out[0].shape);
    return MF_OK;
}

/* updates against indices and the output shape (unknown dims agree). */
static MfStatus check_updates(const MfOpCall *c, const MfTensor *ix, const MfTensor *u, int rank,
                              const int64_t *shape)
{
    int want_rank;
    int64_t want[2 * MF_MAX_RANK];
    nd_shape(ix, rank, shape, &want_rank, want);
    bool ok = u->rank == want_rank;
    for (int d = 0; ok && d < want_rank; d++)
        ok = u->shape[d] == want[d] || u->shape[d] < 0 || want[d] < 0;
    if (ok)
        return MF_OK;
    char got[96], exp[96];
    mf_shape_str(u->rank, u->shape, got, (int)sizeof got);
    mf_shape_str(want_rank, want, exp, (int)sizeof exp);
    return mf_err_set(MF_ESHAPE, "%s: updates of shape %s, expected %s (indices.shape[:-1] + "
                      "shape[m:])", op_api(c), got, exp);
}

static MfStatus scatter_spec(MfOpCall *c, const MfTensor *ix, const MfTensor *u, int rank,
                             const int64_t *shape)
{
    MfStatus st = check_indices(c, ix, rank);
    if (st == MF_OK)
        st = mf_check_dtype(c, u, MF_NUMERIC, "a numeric dtype");
    if (st == MF_OK)
        st = check_updates(c, ix, u, rank, shape);
    if (st != MF_OK)
        return st;
    c->noutputs = 1;
    c->out[0].dtype = u->dtype;
    c->out[0].rank = rank;
    memcpy(c->out[0].shape, shape, sizeof(int64_t) * (size_t)rank);
    return MF_OK;
}

static MfStatus scatter_nd_infer(MfOpCall *c)
{
    const MfAttrs *a = c->attrs;
    for (int d = 0; d < a->nints; d++)
        if (a->ints[d] < 0)
            return mf_err_set(MF_EARG, "scatter_nd: shape entry %d must be >= 0, got %lld", d + 1,
                              (long long)a->ints[d]);
    return scatter_spec(c, c->inputs[0], c->inputs[1], a->nints, a->ints);
}

static MfStatus scatter_like_infer(MfOpCall *c)
{
    const MfTensor *like = c->inputs[0];
    return scatter_spec(c, c->inputs[1], c->inputs[2], like->rank, like->shape);
}

/* ---- kernels ------------------------------------------------------------ */

static int64_t index_at(const MfTensor *ix, int64_t j)
{
    const void *p = mf_tensor_data(ix);
    return ix->dtype == MF_INT32 ? ((const int32_t *)p)[j] : ((const int64_t *)p)[j];
}

/* The element offset of tuple 't' of contiguous 'ix' in a contiguous tensor
 * of 'shape', or an error naming the tuple (1-based, as given). */
static MfStatus tuple_offset(const MfOpCall *c, const MfTensor *ix, int64_t t, int rank,
                             const int64_t *shape, int64_t *off)
{
    int m = (int)ix->shape[ix->rank - 1];
    int64_t at = 0, stride = 1;
    for (int d = rank - 1; d >= m; d--)
        stride *= shape[d];
    for (int d = m - 1; d >= 0; d--) {
        int64_t k = index_at(ix, t * m + d);
        if (k < 1 || k > shape[d]) {
            char tuple[160] = "", dims[96];
            int len = 0;
            for (int e = 0; e < m && len < (int)sizeof tuple - 24; e++)
                len += snprintf(tuple + len, sizeof tuple - (size_t)len, "%s%lld",
                                e ? ", " : "", (long long)index_at(ix, t * m + e));
            mf_shape_str(rank, shape, dims, (int)sizeof dims);
            return mf_err_set(MF_EARG, "%s: index {%s} (entry %lld of indices) out of range for "
                              "%s of shape %s: position %lld of axis %d is not in 1..%lld "
                              "(indices are 1-based)", op_api(c), tuple, (long long)t + 1,
                              c->op == MF_OP_GATHER_ND ? "params" : "an output", dims,
                              (long long)k, d + 1, (long long)shape[d]);
        }
        at += (k - 1) * stride;
        stride *= shape[d];
    }
    *off = at;
    return MF_OK;
}

static Nd nd_of(const MfTensor *ix, int rank, const int64_t *shape)
{
    Nd nd = {(int)ix->shape[ix->rank - 1], mf_tensor_numel(ix), 1};
    nd.n = nd.m ? nd.n / nd.m : mf_shape_numel(ix->rank - 1, ix->shape);
    for (int d = nd.m; d < rank; d++)
        nd.slice *= shape[d];
    return nd;
}

static MfStatus gather_nd_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *p = mf_tensor_contiguous(c->inputs[0]), *ix = mf_tensor_contiguous(c->inputs[1]);
    MfStatus st = p && ix ? MF_OK : mf_err_set(MF_ENOMEM, "gather_nd: out of memory");
    if (st == MF_OK) {
        Nd nd = nd_of(ix, p->rank, p->shape);
        size_t bytes = (size_t)nd.slice * mf_dtype_size(p->dtype);
        const char *src = mf_tensor_data(p);
        char *dst = mf_tensor_data(outs[0]);
        for (int64_t t = 0; t < nd.n && st == MF_OK; t++) {
            int64_t off = 0;
            st = tuple_offset(c, ix, t, p->rank, p->shape, &off);
            if (st == MF_OK && bytes)
                memcpy(dst + (size_t)t * bytes, src + (size_t)off * mf_dtype_size(p->dtype),
                       bytes);
        }
    }
    mf_tensor_release(p);
    mf_tensor_release(ix);
    return st;
}

#define SCATTER_ADD(T)                                                              \
    do {                                                                            \
        T *dst = mf_tensor_data(out);                                               \
        const T *src = mf_tensor_data(u);                                           \
        for (int64_t e = 0; e < nd.slice; e++)                                      \
            dst[off + e] = (T)(dst[off + e] + src[t * nd.slice + e]);               \
    } while (0)

/* The shared kernel of ScatterNd and ScatterNdLike: indices and updates
 * are inputs 'ii' and 'ii' + 1. */
static MfStatus scatter_forward(const MfOpCall *c, MfTensor **outs)
{
    int ii = c->op == MF_OP_SCATTER_ND ? 0 : 1;
    MfTensor *out = outs[0];
    MfTensor *ix = mf_tensor_contiguous(c->inputs[ii]), *u = mf_tensor_contiguous(c->inputs[ii + 1]);
    MfStatus st = ix && u ? MF_OK : mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    if (st == MF_OK) {
        memset(mf_tensor_data(out), 0, (size_t)mf_tensor_numel(out) * mf_dtype_size(out->dtype));
        Nd nd = nd_of(ix, out->rank, out->shape);
        for (int64_t t = 0; t < nd.n && st == MF_OK; t++) {
            int64_t off = 0;
            st = tuple_offset(c, ix, t, out->rank, out->shape, &off);
            if (st != MF_OK)
                break;
            switch (out->dtype) {
            case MF_FLOAT32: SCATTER_ADD(float); break;
            case MF_FLOAT64: SCATTER_ADD(double); break;
            case MF_INT32: SCATTER_ADD(int32_t); break;
            default: SCATTER_ADD(int64_t); break;
            }
        }
    }
    mf_tensor_release(ix);
    mf_tensor_release(u);
    return st;
}

/* ---- TensorScatterUpdate, TensorScatterAdd, TensorScatterSub ------------- */

/* (tensor, indices, updates): tensor's shape and dtype. */
static MfStatus tensor_scatter_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    MfStatus st = scatter_spec(c, c->inputs[1], c->inputs[2], t->rank, t->shape);
    return st == MF_OK ? mf_check_same_dtype(c, t, c->inputs[2]) : st;
}

#define SCATTER_WRITE(T)                                                            \
    do {                                                                            \
        T *dst = mf_tensor_data(out);                                               \
        const T *src = (const T *)mf_tensor_data(u) + t * nd.slice;                 \
        for (int64_t e = 0; e < nd.slice; e++)                                      \
            dst[off + e] = c->op == MF_OP_TENSOR_SCATTER_UPDATE ? src[e]            \
                           : c->op == MF_OP_TENSOR_SCATTER_ADD                      \
                               ? (T)(dst[off + e] + src[e])                         \
                               : (T)(dst[off + e] - src[e]);                        \
    } while (0)

/* A copy of the tensor, then each tuple's slice written (a repeated tuple:
 * the last one wins), added or subtracted in the order of indices. */
static MfStatus tensor_scatter_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    MfTensor *ix = mf_tensor_contiguous(c->inputs[1]), *u = mf_tensor_contiguous(c->inputs[2]);
    MfStatus st = ix && u ? MF_OK : mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    if (st == MF_OK) {
        mf_tensor_copy_into(out, c->inputs[0]);
        Nd nd = nd_of(ix, out->rank, out->shape);
        for (int64_t t = 0; t < nd.n && st == MF_OK; t++) {
            int64_t off = 0;
            if ((st = tuple_offset(c, ix, t, out->rank, out->shape, &off)) != MF_OK)
                break;
            switch (out->dtype) {
            case MF_FLOAT32: SCATTER_WRITE(float); break;
            case MF_FLOAT64: SCATTER_WRITE(double); break;
            case MF_INT32: SCATTER_WRITE(int32_t); break;
            default: SCATTER_WRITE(int64_t); break;
            }
        }
    }
    mf_tensor_release(ix);
    mf_tensor_release(u);
    return st;
}

/* ---- gradients ---------------------------------------------------------- */

/* d params = ScatterNdLike(params, indices, dy) */
static MfStatus gather_nd_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[3] = {g->call->inputs[0], g->call->inputs[1], g->doutputs[0]};
    return mf_op1(MF_OP_SCATTER_ND_LIKE, 3, in, g->call->attrs, &dinputs[0]);
}

/* d updates = GatherNd(dy, indices) */
static MfStatus scatter_nd_grad(const MfGradCall *g, MfTensor **dinputs)
{
    int ii = g->call->op == MF_OP_SCATTER_ND ? 0 : 1;
    MfTensor *in[2] = {g->doutputs[0], g->call->inputs[ii]};
    MfAttrs a = mf_attrs_default();
    return mf_op1(MF_OP_GATHER_ND, 2, in, &a, &dinputs[ii + 1]);
}

/* Update: d tensor = dy updated with zeros at the tuples, d updates =
 * GatherNd(dy, indices). Add: dy and GatherNd(dy, indices); Sub: dy and
 * its negation. */
static MfStatus tensor_scatter_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0], *ix = g->call->inputs[1], *du = NULL, *zeros = NULL;
    MfAttrs a = mf_attrs_default();
    MfTensor *gin[2] = {dy, ix};
    MfStatus st = mf_op1(MF_OP_GATHER_ND, 2, gin, &a, &du);
    if (st == MF_OK && g->call->op == MF_OP_TENSOR_SCATTER_SUB) {
        MfTensor *neg = NULL;
        st = mf_unary(MF_OP_NEG, du, &neg);
        mf_tensor_release(du);
        du = neg;
    }
    if (st == MF_OK && mf_grad_needs(g, 0) && g->call->op != MF_OP_TENSOR_SCATTER_UPDATE) {
        mf_tensor_retain(dy);
        dinputs[0] = dy;
    } else if (st == MF_OK && mf_grad_needs(g, 0)) {
        st = mf_fill_like(g->call->inputs[2], dy->dtype, 0, &zeros);
        MfTensor *in[3] = {dy, ix, zeros};
        if (st == MF_OK)
            st = mf_op1(MF_OP_TENSOR_SCATTER_UPDATE, 3, in, &a, &dinputs[0]);
    }
    mf_tensor_release(zeros);
    if (st == MF_OK && mf_grad_needs(g, 2))
        dinputs[2] = du;
    else
        mf_tensor_release(du);
    return st;
}

static const MfAttrDef scatter_attrs[] = {
    {"shape", MF_ATTR_INTS, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
};

const MfOpDesc mf_desc_gather_nd = {
    .name = "GatherNd", .api = "gather_nd", .arity = 2, .infer = gather_nd_infer,
    .forward = gather_nd_forward, .backward = gather_nd_grad, .cost = mf_cost_elementwise,
    .lua = "gather_nd", .inputs = "params, indices",
    .summary = "slices of params at tuples of 1-based positions (the last axis of indices)",
    .topic = "shape",
    .details =
        "TensorFlow's gather_nd, 1-based as mf.gather: the last axis of indices holds m <= "
        "rank(params) positions, the result has shape indices.shape[:-1] + params.shape[m:]. "
        "indices: an int32/int64 tensor or a Lua table (converted to int64). A position out of "
        "range is an error naming the tuple. Gradient: dy added back at the same positions "
        "(repeats add up).",
    .example =
        "mf.gather_nd(mf.tensor{{1, 2}, {3, 4}}, {{1, 1}, {2, 2}}) --> {1, 4}\n"
        "mf.gather_nd(mf.tensor{{1, 2}, {3, 4}}, {{2}}) --> {{3, 4}}",
};

const MfOpDesc mf_desc_scatter_nd = {
    .name = "ScatterNd", .api = "scatter_nd", .arity = 2, .flags = MF_OP_NO_METHOD,
    .infer = scatter_nd_infer, .forward = scatter_forward, .backward = scatter_nd_grad,
    .cost = mf_cost_elementwise, .attrs = scatter_attrs, .nattrs = MF_NATTRS(scatter_attrs),
    .lua = "scatter_nd", .inputs = "indices, updates",
    .summary = "zeros of the given shape with updates added at 1-based index tuples",
    .topic = "shape",
    .details =
        "TensorFlow's scatter_nd, 1-based: repeated tuples add up; updates has shape "
        "indices.shape[:-1] + shape[m:]. Gradient for updates: mf.gather_nd(dy, indices).",
    .example = "mf.scatter_nd({{2}, {4}, {2}}, {1, 2, 3}, {5}) --> {0, 4, 0, 2, 0}",
};

const MfOpDesc mf_desc_scatter_nd_like = {
    .name = "ScatterNdLike", .api = "scatter_nd", .arity = 3, .infer = scatter_like_infer,
    .forward = scatter_forward, .backward = scatter_nd_grad, .cost = mf_cost_elementwise,
};


#define TENSOR_SCATTER_FIELDS(tf, fname)                                            \
    .name = tf, .api = fname, .arity = 3, .flags = MF_OP_NO_METHOD,                 \
    .infer = tensor_scatter_infer, .forward = tensor_scatter_forward,               \
    .backward = tensor_scatter_grad, .cost = mf_cost_elementwise, .lua = fname,     \
    .inputs = "tensor, indices, updates", .topic = "indexing"

const MfOpDesc mf_desc_tensor_scatter_update = {
    TENSOR_SCATTER_FIELDS("TensorScatterUpdate", "tensor_scatter_update"),
    .summary = "a copy of tensor with slices replaced at 1-based index tuples",
    .details =
        "TensorFlow's tensor_scatter_nd_update (TF 1.x: tensor_scatter_update), 1-based as "
        "mf.gather_nd: the last axis of indices holds m <= rank(tensor) positions and updates "
        "has shape indices.shape[:-1] + tensor.shape[m:]. A repeated tuple: the last one wins. "
        "The tensor itself does not change (tensors are immutable); a Variable's own form is "
        "v:scatter_update. Gradient: dy with the written slices zeroed for the tensor, "
        "gather_nd(dy, indices) for updates.",
    .example =
        "mf.tensor_scatter_update(mf.zeros{4}, {{2}, {4}}, {5, 6})   --> {0, 5, 0, 6}\n"
        "mf.tensor_scatter_update(mf.zeros{2, 2}, {{1}}, {{1, 2}})   --> {{1, 2}, {0, 0}}",
};

const MfOpDesc mf_desc_tensor_scatter_add = {
    TENSOR_SCATTER_FIELDS("TensorScatterAdd", "tensor_scatter_add"),
    .summary = "a copy of tensor with updates added at 1-based index tuples",
    .details =
        "TensorFlow's tensor_scatter_nd_add (TF 1.x: tensor_scatter_add), 1-based, indices and "
        "updates as mf.tensor_scatter_update; repeated tuples add up.",
    .example = "mf.tensor_scatter_add(mf.ones{4}, {{2}, {2}}, {5, 6})   --> {1, 12, 1, 1}",
};

const MfOpDesc mf_desc_tensor_scatter_sub = {
    TENSOR_SCATTER_FIELDS("TensorScatterSub", "tensor_scatter_sub"),
    .summary = "a copy of tensor with updates subtracted at 1-based index tuples",
    .details =
        "TensorFlow's tensor_scatter_nd_sub (TF 1.x: tensor_scatter_sub), 1-based, indices and "
        "updates as mf.tensor_scatter_update; repeated tuples subtract in turn.",
    .example = "mf.tensor_scatter_sub(mf.ones{3}, {{1}, {3}}, {1, 2})   --> {0, 1, -1}",
};
