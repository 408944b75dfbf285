/* along_axis.c — the two internal ops that move values along one axis by
 * 1-based int64 positions (NumPy's take_along_axis and its adjoint); the
 * gradients of TopKV2 and Sort are written with them (sort.c):
 *
 *   GatherAlongAxis(x, idx)       out[o, j, i] = x[o, idx[o, j, i], i]
 *   ScatterAlongAxis(like, idx, u) zeros shaped like 'like', then
 *                                 out[o, idx[o, j, i], i] += u[o, j, i]
 *
 * ('o' the dims before attrs.axis, 'i' those after; idx and u share a
 * shape that agrees with x / like on every dim but the axis.) Each is the
 * other's gradient, so gradients of any order stay in these two ops.
 * 'like' is read for its shape only (taken at run time, so unknown dims in
 * a graph are fine) and gets no gradient. Not bound in Lua. */
#include <string.h>

#include "common.h"
#include "grads_math.h"

/* idx (int64) against 'ref' (the data input): one rank, the same dims but
 * along the axis (an unknown -1 agrees with any). */
static MfStatus check_index(const MfOpCall *c, const MfTensor *ref, const MfTensor *idx)
{
    MfStatus st = mf_check_dtype(c, idx, MF_MASK(MF_INT64), "int64 positions");
    if (st != MF_OK)
        return st;
    int64_t axis = c->attrs->axis;
    if (idx->rank != ref->rank || axis < 0 || axis >= ref->rank)
        return mf_err_set(MF_ESHAPE, "%s: positions of rank %d for data of rank %d (axis %lld)",
                          op_api(c), idx->rank, ref->rank, (long long)axis + 1);
    for (int d = 0; d < ref->rank; d++)
        if (d != axis && idx->shape[d] != ref->shape[d] && idx->shape[d] >= 0 &&
            ref->shape[d] >= 0)
            return mf_err_set(MF_ESHAPE, "%s: positions have %lld entries on axis %d, the data "
                              "%lld", op_api(c), (long long)idx->shape[d], d + 1,
                              (long long)ref->shape[d]);
    return MF_OK;
}

static void spec(MfOpCall *c, MfDType dt, const MfTensor *shape_of)
{
    c->noutputs = 1;
    c->out[0].dtype = dt;
    c->out[0].rank = shape_of->rank;
    memcpy(c->out[0].shape, shape_of->shape, sizeof(int64_t) * (size_t)shape_of->rank);
}

static MfStatus gather_infer(MfOpCall *c)
{
    MfStatus st = check_index(c, c->inputs[0], c->inputs[1]);
    if (st == MF_OK)
        spec(c, c->inputs[0]->dtype, c->inputs[1]);
    return st;
}

static MfStatus scatter_infer(MfOpCall *c)
{
    const MfTensor *like = c->inputs[0], *idx = c->inputs[1], *u = c->inputs[2];
    MfStatus st = check_index(c, like, idx);
    if (st == MF_OK)
        st = mf_check_dtype(c, u, MF_FLOATS, "a float dtype");
    if (st != MF_OK)
        return st;
    for (int d = 0; d < idx->rank; d++)
        if (u->rank != idx->rank || (u->shape[d] != idx->shape[d] && u->shape[d] >= 0 &&
                                     idx->shape[d] >= 0))
            return mf_err_set(MF_ESHAPE, "%s: updates and positions differ in shape", op_api(c));
    spec(c, u->dtype, like);
    return MF_OK;
}

/* The [outer, n, inner] view of a tensor of 'rank' dims 'shape' around 'axis'. */
typedef struct Split {
    int64_t outer, n, inner;
} Split;

static Split split_at(const int64_t *shape, int rank, int64_t axis)
{
    Split s = {1, shape[axis], 1};
    for (int d = 0; d < rank; d++)
        if (d < axis)
            s.outer *= shape[d];
        else if (d > axis)
            s.inner *= shape[d];
    return s;
}

/* Checks every position of contiguous 'ix' lies in 1..n (names the op). */
static MfStatus check_range(const MfOpCall *c, const int64_t *ix, int64_t m, int64_t n)
{
    for (int64_t j = 0; j < m; j++)
        if (ix[j] < 1 || ix[j] > n)
            return mf_err_set(MF_EARG, "%s: position %lld out of range 1..%lld", op_api(c),
                              (long long)ix[j], (long long)n);
    return MF_OK;
}

/* Runs BODY(src_at, dst_at) over every position: 'dat' indexes the data
 * side (x or the output of the scatter), 'pat' the positions side. */
#define ALONG_LOOP(BODY)                                                             \
    for (int64_t o = 0; o < ps.outer; o++)                                           \
        for (int64_t j = 0; j < ps.n; j++)                                           \
            for (int64_t i = 0; i < ps.inner; i++) {                                 \
                int64_t pat = (o * ps.n + j) * ps.inner + i;                         \
                int64_t dat = (o * ds.n + ix[pat] - 1) * ds.inner + i;               \
                BODY;                                                                \
            }

static MfStatus gather_forward(const MfOpCall *c, MfTensor **outs)
{
    int64_t axis = c->attrs->axis;
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]), *idx = mf_tensor_contiguous(c->inputs[1]);
    MfStatus st = x && idx ? MF_OK : mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    Split ds = {0, 0, 0}, ps = ds;
    const int64_t *ix = idx ? mf_tensor_data(idx) : NULL;
    if (st == MF_OK) {
        ds = split_at(x->shape, x->rank, axis);
        ps = split_at(idx->shape, idx->rank, axis);
        st = check_range(c, ix, mf_tensor_numel(idx), ds.n);
    }
    if (st == MF_OK) {
        size_t es = mf_dtype_size(x->dtype);
        const char *src = mf_tensor_data(x);
        char *dst = mf_tensor_data(outs[0]);
        ALONG_LOOP(memcpy(dst + (size_t)pat * es, src + (size_t)dat * es, es));
    }
    mf_tensor_release(x);
    mf_tensor_release(idx);
    return st;
}

static MfStatus scatter_forward(const MfOpCall *c, MfTensor **outs)
{
    int64_t axis = c->attrs->axis;
    MfTensor *out = outs[0];
    MfTensor *idx = mf_tensor_contiguous(c->inputs[1]), *u = mf_tensor_contiguous(c->inputs[2]);
    MfStatus st = idx && u ? MF_OK : mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    Split ds = split_at(out->shape, out->rank, axis), ps = ds;
    const int64_t *ix = idx ? mf_tensor_data(idx) : NULL;
    if (st == MF_OK) {
        ps = split_at(idx->shape, idx->rank, axis);
        st = check_range(c, ix, mf_tensor_numel(idx), ds.n);
    }
    if (st == MF_OK) {
        memset(mf_tensor_data(out), 0, (size_t)mf_tensor_numel(out) * mf_dtype_size(out->dtype));
        if (out->dtype == MF_FLOAT32) {
            float *dst = mf_tensor_data(out);
            const float *src = mf_tensor_data(u);
            ALONG_LOOP(dst[dat] += src[pat]);
        } else {
            double *dst = mf_tensor_data(out);
            const double *src = mf_tensor_data(u);
            ALONG_LOOP(dst[dat] += src[pat]);
        }
    }
    mf_tensor_release(idx);
    mf_tensor_release(u);
    return st;
}

/* d x = ScatterAlongAxis(x, idx, dy); idx gets none. */
static MfStatus gather_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[3] = {g->call->inputs[0], g->call->inputs[1], g->doutputs[0]};
    return mf_op1(MF_OP_SCATTER_ALONG_AXIS, 3, in, g->call->attrs, &dinputs[0]);
}

/* d u = GatherAlongAxis(dy, idx); like and idx get none. */
static MfStatus scatter_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[2] = {g->doutputs[0], g->call->inputs[1]};
    return mf_op1(MF_OP_GATHER_ALONG_AXIS, 2, in, g->call->attrs, &dinputs[2]);
}

static const MfAttrDef along_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_REQUIRED, MF_ATTR_AT(axis), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_gather_along_axis = {
    .name = "GatherAlongAxis", .api = "gather_along_axis", .arity = 2,
    .infer = gather_infer, .forward = gather_forward, .backward = gather_grad,
    .cost = mf_cost_elementwise, .attrs = along_attrs, .nattrs = MF_NATTRS(along_attrs),
};

const MfOpDesc mf_desc_scatter_along_axis = {
    .name = "ScatterAlongAxis", .api = "scatter_along_axis", .arity = 3,
    .infer = scatter_infer, .forward = scatter_forward, .backward = scatter_grad,
    .cost = mf_cost_elementwise, .attrs = along_attrs, .nattrs = MF_NATTRS(along_attrs),
};
