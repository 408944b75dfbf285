/* strided_slice.c — strided windows of a tensor: the ops behind Lua's
 * table index x[{2, {1, -1, 2}}] and the sliced write v[{...}] = value,
 * with TensorFlow's meaning (StridedSlice, StridedSliceGrad,
 * TensorStridedSliceUpdate):
 *
 *   StridedSlice(x)                 the window of x, a view (no copy)
 *   StridedSliceGrad(dy, like)      zeros of like's shape with dy written
 *                                   into the window (the gradient of
 *                                   StridedSlice; like gives only its shape)
 *   TensorStridedSliceUpdate(x, v)  a copy of x with the window replaced by
 *                                   v (v has the window's shape: the Lua
 *                                   face broadcasts it first)
 *
 * Attributes (0-based, normalised by the caller, repl/lmf_index.c), one
 * entry per axis of x:
 *   ints[0..r)   begin, 0 <= begin <= size of the axis
 *   ints[r..2r)  the number of elements taken, >= 0; -1 (step 1 only): to
 *                the end of an axis whose size is unknown when a graph is
 *                built, resolved when it runs
 *   steps[0..r)  the step, >= 1 (a negative step is refused by the face)
 *   axes[0..naxes) the axes dropped from the window (an integer index;
 *                TensorFlow's shrink_axis_mask); each takes one element
 * New axes and the ellipsis are the face's work (ExpandDims, and expanding
 * '...' into whole axes), so the ops see only these four lists.
 *
 * Gradients: StridedSlice -> StridedSliceGrad(dy, x); StridedSliceGrad ->
 * StridedSlice(g) for dy, none for like; TensorStridedSliceUpdate -> dy
 * with the window zeroed (an update by zeros, exact even for Inf and NaN
 * in dy) for x, StridedSlice(dy) for the value. */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "fill.h"

#define SHAPE_BUF 160

static bool is_shrunk(const MfAttrs *a, int d)
{
    for (int k = 0; k < a->naxes; k++)
        if (a->axes[k] == d)
            return true;
    return false;
}

/* The window's size along axis 'd' of size 'n' (-1: unknown). */
static MfStatus window_dim(const MfOpCall *c, int d, int64_t n, int64_t *out)
{
    const MfAttrs *a = c->attrs;
    int r = a->nints / 2;
    int64_t b = a->ints[d], s = a->ints[r + d], step = a->steps[d];
    if (step < 1 || s < -1 || (s == -1 && step != 1) || b < 0)
        return mf_err_set(MF_EARG, "%s: bad window for axis %d (begin %lld, count %lld, step "
                          "%lld)", op_api(c), d + 1, (long long)b, (long long)s,
                          (long long)step);
    if (n < 0) {
        *out = s;
        return MF_OK;
    }
    if (s == -1)
        s = b <= n ? n - b : 0;
    /* the last element taken, b + (s - 1) * step, lies inside the axis */
    if (b > n || (s > 0 && (b >= n || s - 1 > (n - 1 - b) / step)))
        return mf_err_set(MF_EARG, "%s: the window (begin %lld, %lld elements, step %lld) "
                          "runs past the end of axis %d of size %lld", op_api(c),
                          (long long)(b + 1), (long long)s, (long long)step, d + 1,
                          (long long)n);
    *out = s;
    return MF_OK;
}

/* The window's sizes over the axes of 'x' ('full', rank r) and without the
 * shrunk ones ('shape', '*rank'). */
static MfStatus window_shape(const MfOpCall *c, const MfTensor *x, int64_t *full, int *rank,
                             int64_t *shape)
{
    const MfAttrs *a = c->attrs;
    char buf[SHAPE_BUF];
    if (a->nints != 2 * x->rank)
        return mf_err_set(MF_EARG, "%s: expected a window of %d axes for shape %s, got %d",
                          op_api(c), x->rank, mf_shape_str(x->rank, x->shape, buf, sizeof buf),
                          a->nints / 2);
    *rank = 0;
    for (int d = 0; d < x->rank; d++) {
        MfStatus st = window_dim(c, d, x->shape[d], &full[d]);
        if (st != MF_OK)
            return st;
        if (!is_shrunk(a, d)) {
            shape[(*rank)++] = full[d];
        } else if (full[d] != 1 && full[d] != -1) {
            return mf_err_set(MF_EARG, "%s: axis %d is indexed by one position but the window "
                              "takes %lld", op_api(c), d + 1, (long long)full[d]);
        }
    }
    return MF_OK;
}

/* A view of 'x' over the window (the sizes 'full' from window_shape). */
static MfTensor *window_view(const MfAttrs *a, const MfTensor *x, const int64_t *full)
{
    int64_t shape[MF_MAX_RANK], strides[MF_MAX_RANK], offset = x->offset;
    int rank = 0;
    bool empty = false;
    for (int d = 0; d < x->rank; d++)
        empty = empty || full[d] == 0;
    for (int d = 0; d < x->rank; d++) {
        if (!empty)
            offset += a->ints[d] * x->strides[d];
        if (is_shrunk(a, d))
            continue;
        shape[rank] = full[d];
        strides[rank++] = x->strides[d] * a->steps[d];
    }
    return mf_tensor_view(x, rank, shape, strides, offset);
}

/* Copies contiguous 'src' into the (strided) view 'dst' of the same shape,
 * walking dst's index space in row-major order. */
static void copy_into_view(MfTensor *dst, const MfTensor *src)
{
    int64_t n = mf_tensor_numel(dst), idx[MF_MAX_RANK] = {0};
    size_t es = mf_dtype_size(dst->dtype);
    char *d = mf_tensor_data(dst);
    const char *s = mf_tensor_data(src);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int k = 0; k < dst->rank; k++)
            off += idx[k] * dst->strides[k];
        memcpy(d + (size_t)off * es, s + (size_t)i * es, es);
        for (int k = dst->rank - 1; k >= 0 && ++idx[k] == dst->shape[k]; k--)
            idx[k] = 0;
    }
}

/* Writes 'v' into the window of the freshly allocated 'out'. */
static MfStatus write_window(const MfOpCall *c, MfTensor *out, MfTensor *v)
{
    int64_t full[MF_MAX_RANK], shape[MF_MAX_RANK];
    int rank;
    MfStatus st = window_shape(c, out, full, &rank, shape);
    if (st != MF_OK)
        return st;
    MfTensor *view = window_view(c->attrs, out, full), *src = mf_tensor_contiguous(v);
    if (view && src)
        copy_into_view(view, src);
    else
        st = mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    mf_tensor_release(view);
    mf_tensor_release(src);
    return st;
}

static void set_spec(MfOpCall *c, MfDType dt, int rank, const int64_t *shape)
{
    c->noutputs = 1;
    c->out[0].dtype = dt;
    c->out[0].rank = rank;
    memcpy(c->out[0].shape, shape, sizeof(int64_t) * (size_t)rank);
}

/* The window of 'x' has the shape of 'v' (unknown dims agree). */
static MfStatus check_window_value(const MfOpCall *c, const MfTensor *x, const MfTensor *v,
                                   const char *what)
{
    int64_t full[MF_MAX_RANK], shape[MF_MAX_RANK];
    int rank;
    MfStatus st = window_shape(c, x, full, &rank, shape);
    if (st != MF_OK)
        return st;
    bool ok = v->rank == rank;
    for (int d = 0; ok && d < rank; d++)
        ok = v->shape[d] == shape[d] || v->shape[d] < 0 || shape[d] < 0;
    char want[SHAPE_BUF], got[SHAPE_BUF];
    if (!ok)
        return mf_err_set(MF_ESHAPE, "%s: the window has shape %s but %s has shape %s",
                          op_api(c), mf_shape_str(rank, shape, want, sizeof want), what,
                          mf_shape_str(v->rank, v->shape, got, sizeof got));
    return mf_check_same_dtype(c, x, v);
}

/* ---- StridedSlice ------------------------------------------------------ */

static MfStatus strided_slice_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    int64_t full[MF_MAX_RANK], shape[MF_MAX_RANK];
    int rank;
    MfStatus st = window_shape(c, x, full, &rank, shape);
    if (st == MF_OK)
        set_spec(c, x->dtype, rank, shape);
    return st;
}

static MfStatus strided_slice_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    int64_t full[MF_MAX_RANK], shape[MF_MAX_RANK];
    int rank;
    MfStatus st = window_shape(c, x, full, &rank, shape);
    if (st != MF_OK)
        return st;
    outs[0] = window_view(c->attrs, x, full);
    return outs[0] ? MF_OK : mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
}

/* dx = StridedSliceGrad(dy, x) */
static MfStatus strided_slice_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[2] = {g->doutputs[0], g->call->inputs[0]};
    return mf_op1(MF_OP_STRIDED_SLICE_GRAD, 2, in, g->call->attrs, &dinputs[0]);
}

/* ---- StridedSliceGrad -------------------------------------------------- */

static MfStatus slice_grad_infer(MfOpCall *c)
{
    const MfTensor *dy = c->inputs[0], *like = c->inputs[1];
    int64_t full[MF_MAX_RANK], shape[MF_MAX_RANK];
    int rank;
    MfStatus st = window_shape(c, like, full, &rank, shape);
    bool ok = st == MF_OK && dy->rank == rank;
    for (int d = 0; ok && d < rank; d++)
        ok = dy->shape[d] == shape[d] || dy->shape[d] < 0 || shape[d] < 0;
    if (st == MF_OK && !ok)
        return mf_err_set(MF_ESHAPE, "%s: dy does not have the window's shape", op_api(c));
    if (st == MF_OK)
        set_spec(c, dy->dtype, like->rank, like->shape);
    return st;
}

static MfStatus slice_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    memset(mf_tensor_data(out), 0, (size_t)mf_tensor_numel(out) * mf_dtype_size(out->dtype));
    return write_window(c, out, c->inputs[0]);
}

/* d dy = StridedSlice(g); like gets none */
static MfStatus slice_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *gg = g->doutputs[0];
    return mf_op1(MF_OP_STRIDED_SLICE, 1, &gg, g->call->attrs, &dinputs[0]);
}

/* ---- TensorStridedSliceUpdate ------------------------------------------ */

static MfStatus update_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = check_window_value(c, x, c->inputs[1], "the value");
    if (st == MF_OK)
        set_spec(c, x->dtype, x->rank, x->shape);
    return st;
}

static MfStatus update_forward(const MfOpCall *c, MfTensor **outs)
{
    mf_tensor_copy_into(outs[0], c->inputs[0]);
    return write_window(c, outs[0], c->inputs[1]);
}

/* dx = dy updated with zeros in the window; dvalue = StridedSlice(dy) */
static MfStatus update_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0], *dv = NULL, *zeros = NULL;
    MfStatus st = mf_op1(MF_OP_STRIDED_SLICE, 1, &dy, g->call->attrs, &dv);
    if (st == MF_OK && mf_grad_needs(g, 0))
        st = mf_fill_like(dv, dv->dtype, 0, &zeros);
    if (st == MF_OK && mf_grad_needs(g, 0)) {
        MfTensor *in[2] = {dy, zeros};
        st = mf_op1(MF_OP_STRIDED_SLICE_UPDATE, 2, in, g->call->attrs, &dinputs[0]);
    }
    mf_tensor_release(zeros);
    if (st == MF_OK && mf_grad_needs(g, 1))
        dinputs[1] = dv;
    else
        mf_tensor_release(dv);
    return st;
}

static MfCost window_cost(const MfOpCall *c)
{
    double n = (double)mf_shape_numel(c->out[0].rank, c->out[0].shape);
    return (MfCost){0, n * (double)mf_dtype_size(c->out[0].dtype)};
}

static MfCost no_cost(const MfOpCall *c)
{
    (void)c;
    return (MfCost){0, 0};
}

/* Internal: Lua reaches them through the tensor's index (repl/lmf_index.c). */
const MfOpDesc mf_desc_strided_slice = {
    .name = "StridedSlice", .api = "strided_slice", .arity = 1, .flags = MF_OP_VIEW,
    .infer = strided_slice_infer, .forward = strided_slice_forward,
    .backward = strided_slice_grad, .cost = no_cost,
};

const MfOpDesc mf_desc_strided_slice_grad = {
    .name = "StridedSliceGrad", .api = "strided_slice_grad", .arity = 2,
    .infer = slice_grad_infer, .forward = slice_grad_forward, .backward = slice_grad_backward, .cost = window_cost,
};

const MfOpDesc mf_desc_strided_slice_update = {
    .name = "TensorStridedSliceUpdate", .api = "strided_slice_update", .arity = 2,
    .infer = update_infer, .forward = update_forward, .backward = update_grad, .cost = window_cost,
};
