/* shape_ops.c — shape ops: ConcatV2, Pack, Slice, GatherV2, ReverseV2, Tile,
 * Pad, BroadcastTo, OneHot, Identity, StopGradient, Size, Rank, Shape; and the
 * composites split, unstack and one_hot of shape_ops.h.
 *
 * Every copying kernel goes through 'copy_block': it copies a block given by
 * a shape and two stride vectors in elements (source strides may be 0, for
 * broadcasting, or negative, for reversing), after merging the dims that are
 * contiguous on both sides, so contiguous blocks are one memcpy and strided
 * (view) inputs need no contiguous copy first. Rows are copied with a typed
 * loop per dtype. Slice, BroadcastTo (stride 0 along the stretched axes),
 * Identity and StopGradient make views (MF_OP_VIEW); so does ConcatV2 when
 * its entries are adjacent blocks of one buffer (concat_as_view).
 *
 * Attributes are 0-based; axes may be negative (counted from the end).
 * Indices (GatherV2, OneHot) are 0-based in the ops; the bindings convert the
 * user's 1-based ones, so error messages show axes and indices 1-based. */
#include "shape_ops.h"

#include <string.h>

#include "../alloc.h"
#include "common.h"
#include "fill.h"
#include "shape_grad.h"

/* ---- block copies ------------------------------------------------------- */

#define BLOCK_MAX_RANK (2 * MF_MAX_RANK) /* Tile splits each dim in two */

typedef struct Block {
    int rank;
    int64_t shape[BLOCK_MAX_RANK];
    int64_t dst[BLOCK_MAX_RANK]; /* strides in elements */
    int64_t src[BLOCK_MAX_RANK];
} Block;

static void block_init(Block *b, int rank, const int64_t *shape, const int64_t *dst,
                       const int64_t *src)
{
    b->rank = rank;
    for (int i = 0; i < rank; i++) {
        b->shape[i] = shape[i];
        b->dst[i] = dst[i];
        b->src[i] = src[i];
    }
}

/* Drops size-1 dims and merges neighbours contiguous on both sides; false
 * when the block is empty. Leaves at least one dim. */
static bool block_simplify(Block *b)
{
    int w = 0;
    for (int i = 0; i < b->rank; i++) {
        if (b->shape[i] == 0)
            return false;
        if (b->shape[i] == 1)
            continue;
        if (w > 0 && b->dst[w - 1] == b->dst[i] * b->shape[i] &&
            b->src[w - 1] == b->src[i] * b->shape[i]) {
            b->shape[w - 1] *= b->shape[i];
            b->dst[w - 1] = b->dst[i];
            b->src[w - 1] = b->src[i];
            continue;
        }
        b->shape[w] = b->shape[i];
        b->dst[w] = b->dst[i];
        b->src[w] = b->src[i];
        w++;
    }
    if (w == 0) {
        b->shape[0] = 1;
        b->dst[0] = b->src[0] = 0;
        w = 1;
    }
    b->rank = w;
    return true;
}

#define ROW_COPY(T)                                                                \
    do {                                                                           \
        T *d = (T *)dst;                                                           \
        const T *s = (const T *)src;                                               \
        for (int64_t i = 0; i < n; i++)                                            \
            d[i * ds] = s[i * ss];                                                 \
    } while (0)

/* A contiguous row of one value (a broadcast source): a loop GCC
 * vectorises, where ROW_COPY's strides are unknown to it (the gradient of
 * a Sum over 4M floats, BroadcastTo, took as long as a Mul of two inputs). */
#define ROW_FILL(T)                                                                \
    do {                                                                           \
        T *d = (T *)dst, v = *(const T *)src;                                      \
        for (int64_t i = 0; i < n; i++)                                            \
            d[i] = v;                                                              \
    } while (0)

static void fill_row(char *dst, const char *src, MfDType dt, int64_t n)
{
    switch (dt) {
    case MF_FLOAT32: ROW_FILL(float); break;
    case MF_FLOAT64: ROW_FILL(double); break;
    case MF_INT32: ROW_FILL(int32_t); break;
    case MF_INT64: ROW_FILL(int64_t); break;
    default: ROW_FILL(uint8_t); break;
    }
}

static void copy_row(char *dst, const char *src, MfDType dt, int64_t n, int64_t ds, int64_t ss)
{
    if (ds == 1 && ss == 1) {
        memcpy(dst, src, (size_t)n * mf_dtype_size(dt));
        return;
    }
    if (ds == 1 && ss == 0) {
        fill_row(dst, src, dt, n);
        return;
    }
    switch (dt) {
    case MF_FLOAT32: ROW_COPY(float); break;
    case MF_FLOAT64: ROW_COPY(double); break;
    case MF_INT32: ROW_COPY(int32_t); break;
    case MF_INT64: ROW_COPY(int64_t); break;
    default: ROW_COPY(uint8_t); break;
    }
}

/* Copies block 'b' (modified) from 'src' to 'dst', both pointing at element 0. */
static void copy_block(char *dst, const char *src, MfDType dt, Block *b)
{
    if (!block_simplify(b))
        return;
    int64_t es = (int64_t)mf_dtype_size(dt);
    int r = b->rank;
    int64_t rows = 1, idx[BLOCK_MAX_RANK] = {0}, n = b->shape[r - 1];
    for (int d = 0; d < r - 1; d++)
        rows *= b->shape[d];
    /* the row's offsets follow the odometer (no per-row products), and a
     * contiguous row is one memcpy of a size known once: the gradient of a
     * split into heads copies rows of 32 floats, where the per-row work
     * cost as much as the copies */
    bool plain = b->dst[r - 1] == 1 && b->src[r - 1] == 1;
    size_t bytes = (size_t)(n * es);
    int64_t doff = 0, soff = 0;
    for (int64_t row = 0; row < rows; row++) {
        if (plain)
            memcpy(dst + doff * es, src + soff * es, bytes);
        else
            copy_row(dst + doff * es, src + soff * es, dt, n, b->dst[r - 1], b->src[r - 1]);
        for (int d = r - 2; d >= 0; d--) {
            doff += b->dst[d];
            soff += b->src[d];
            if (++idx[d] < b->shape[d])
                break;
            doff -= b->dst[d] * b->shape[d];
            soff -= b->src[d] * b->shape[d];
            idx[d] = 0;
        }
    }
}

/* Copies all of 't' into 'dst' laid out with strides 'dstr'. */
static void copy_tensor(char *dst, const int64_t *dstr, const MfTensor *t)
{
    Block b;
    block_init(&b, t->rank, t->shape, dstr, t->strides);
    copy_block(dst, mf_tensor_data(t), t->dtype, &b);
}

#define FILL(T, X)                                                                 \
    do {                                                                           \
        T *q = (T *)p, x = (X);                                                    \
        for (int64_t i = 0; i < n; i++)                                            \
            q[i] = x;                                                              \
    } while (0)

/* Writes 'v' (converted to 'dt') into 'n' consecutive elements at 'p'. */
static void fill_value(void *p, MfDType dt, int64_t n, double v)
{
    switch (dt) {
    case MF_FLOAT32: FILL(float, (float)v); break;
    case MF_FLOAT64: FILL(double, v); break;
    case MF_INT32: FILL(int32_t, (int32_t)v); break;
    case MF_INT64: FILL(int64_t, (int64_t)v); break;
    case MF_UINT8: FILL(uint8_t, mf_sat_u8(v)); break;
    default: FILL(uint8_t, v != 0); break;
    }
}

/* 'src' without entry 'axis' into 'dst' (rank r - 1). */
static void drop_axis(const int64_t *src, int r, int64_t axis, int64_t *dst)
{
    for (int i = 0, w = 0; i < r; i++)
        if (i != axis)
            dst[w++] = src[i];
}

/* ---- shared checks ---------------------------------------------------- */

/* Normalises axis 'ax' (negative: from the end) for 'rank'; 1-based message. */
static MfStatus norm_axis(const MfOpCall *c, int64_t ax, int rank, int64_t *out)
{
    if (ax < 0)
        ax += rank;
    if (rank == 0)
        return mf_err_set(MF_EARG, "%s: a scalar has no axes", op_api(c));
    if (ax < 0 || ax >= rank)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d (axes are 1-based: "
                          "1..%d, or -%d..-1)", op_api(c), (long long)(ax + 1), rank, rank,
                          rank);
    *out = ax;
    return MF_OK;
}

static MfStatus check_index_dtype(const MfOpCall *c, const MfTensor *t)
{
    return mf_check_dtype(c, t, MF_INTS, "int32 or int64 indices (convert with mf.cast)");
}

static MfStatus check_out_rank(const MfOpCall *c, int rank)
{
    if (rank <= MF_MAX_RANK)
        return MF_OK;
    return mf_err_set(MF_ESHAPE, "%s: the result would have rank %d, at most %d is supported",
                      op_api(c), rank, MF_MAX_RANK);
}

static void spec_set(MfOpCall *c, MfDType dt, int rank, const int64_t *shape)
{
    c->noutputs = 1;
    c->out[0].dtype = dt;
    c->out[0].rank = rank;
    for (int i = 0; i < rank; i++)
        c->out[0].shape[i] = shape[i];
}

/* Copies: no arithmetic, bytes read and written. */
static MfCost cost_copy(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    cost.flops = 0;
    return cost;
}

/* Views and shape queries touch no element. */
static MfCost cost_none(const MfOpCall *c)
{
    (void)c;
    return (MfCost){0, 0};
}

/* ---- ConcatV2 and Pack ------------------------------------------------ */

/* Checks list entry 'i' against entry 1 (refined in 'shape' by the known
 * dims seen so far); dims at 'skip' may differ (-1: none may). */
static MfStatus check_entry(const MfOpCall *c, int i, int64_t *shape, int64_t skip)
{
    const MfTensor *t = c->inputs[i], *first = c->inputs[0];
    char b1[160], b2[160];
    if (t->dtype != first->dtype)
        return mf_err_set(MF_EDTYPE, "%s: list entry %d has dtype %s but entry 1 has %s "
                          "(convert with mf.cast)", op_api(c), i + 1, mf_dtype_name(t->dtype),
                          mf_dtype_name(first->dtype));
    bool ok = t->rank == first->rank;
    for (int d = 0; ok && d < t->rank; d++) {
        if (d == skip || t->shape[d] < 0)
            continue;
        if (shape[d] < 0)
            shape[d] = t->shape[d];
        ok = shape[d] == t->shape[d];
    }
    if (ok)
        return MF_OK;
    mf_shape_str(t->rank, t->shape, b1, sizeof b1);
    mf_shape_str(first->rank, first->shape, b2, sizeof b2);
    if (skip < 0)
        return mf_err_set(MF_ESHAPE, "%s: list entry %d has shape %s but entry 1 has %s "
                          "(all entries must have the same shape)", op_api(c), i + 1, b1, b2);
    return mf_err_set(MF_ESHAPE, "%s: list entry %d has shape %s but entry 1 has %s (dims must "
                      "match except along axis %lld)", op_api(c), i + 1, b1, b2,
                      (long long)(skip + 1));
}

static MfStatus concat_infer(MfOpCall *c)
{
    const MfTensor *a = c->inputs[0];
    int64_t axis = 0, shape[MF_MAX_RANK];
    if (a->rank == 0)
        return mf_err_set(MF_ESHAPE, "concat: list entry 1 is a scalar (rank 0); scalars "
                          "cannot be concatenated (use stack)");
    MfStatus st = norm_axis(c, c->attrs->axis, a->rank, &axis);
    if (st != MF_OK)
        return st;
    for (int d = 0; d < a->rank; d++)
        shape[d] = a->shape[d];
    shape[axis] = 0;
    for (int i = 0; i < c->ninputs && st == MF_OK; i++) {
        st = check_entry(c, i, shape, axis);
        int64_t n = c->inputs[i]->shape[axis];
        if (shape[axis] < 0 || n < 0)
            shape[axis] = -1;
        else if (__builtin_add_overflow(shape[axis], n, &shape[axis]))
            return mf_err_set(MF_ESHAPE, "%s: the sizes along axis %lld overflow (entry %d has "
                              "size %lld)", op_api(c), (long long)axis + 1, i + 1, (long long)n);
    }
    if (st == MF_OK)
        spec_set(c, a->dtype, a->rank, shape);
    return st;
}

/* The entries as a view when they are adjacent blocks of one buffer, each
 * laid out as its part of the contiguous result (the gradients of q, k and
 * v that ScaledDotProductAttentionGrad writes as thirds of one block): the
 * result is then that buffer, not a copy. Tensors never change in place (an
 * Apply op copies a shared buffer first), so sharing it is safe. NULL:
 * not such entries. */
static MfTensor *concat_as_view(const MfOpCall *c, int64_t axis)
{
    const MfTensorSpec *s = &c->out[0];
    const MfTensor *first = c->inputs[0];
    int64_t strides[MF_MAX_RANK], at = 0;
    if (!first->storage || mf_shape_numel(s->rank, s->shape) == 0)
        return NULL;
    mf_shape_strides(s->rank, s->shape, strides);
    for (int i = 0; i < c->ninputs; i++) {
        const MfTensor *t = c->inputs[i];
        if (t->storage != first->storage || t->offset != first->offset + at * strides[axis])
            return NULL;
        for (int d = 0; d < t->rank; d++)
            if (t->shape[d] > 1 && t->strides[d] != strides[d])
                return NULL;
        at += t->shape[axis];
    }
    return mf_tensor_view(first, s->rank, s->shape, strides, first->offset);
}

static MfStatus concat_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensorSpec *s = &c->out[0];
    int64_t axis = c->attrs->axis < 0 ? c->attrs->axis + s->rank : c->attrs->axis;
    if ((outs[0] = concat_as_view(c, axis)))
        return MF_OK;
    MfTensor *out = outs[0] = mf_tensor_new(s->dtype, s->rank, s->shape);
    if (!out) {
        mf_err_prefix("%s", op_api(c));
        return MF_ENOMEM;
    }
    int64_t es = (int64_t)mf_dtype_size(out->dtype);
    char *dst = mf_tensor_data(out);
    for (int i = 0; i < c->ninputs; i++) {
        const MfTensor *t = c->inputs[i];
        copy_tensor(dst, out->strides, t);
        dst += t->shape[axis] * out->strides[axis] * es;
    }
    return MF_OK;
}

static MfStatus stack_infer(MfOpCall *c)
{
    const MfTensor *a = c->inputs[0];
    int64_t axis = 0, shape[MF_MAX_RANK + 1];
    MfStatus st = check_out_rank(c, a->rank + 1);
    if (st == MF_OK)
        st = norm_axis(c, c->attrs->axis, a->rank + 1, &axis);
    for (int d = 0; d < a->rank; d++)
        shape[d] = a->shape[d];
    for (int i = 0; i < c->ninputs && st == MF_OK; i++)
        st = check_entry(c, i, shape, -1);
    if (st != MF_OK)
        return st;
    for (int d = a->rank; d > axis; d--)
        shape[d] = shape[d - 1];
    shape[axis] = c->ninputs;
    spec_set(c, a->dtype, a->rank + 1, shape);
    return MF_OK;
}

static MfStatus stack_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t axis = c->attrs->axis < 0 ? c->attrs->axis + out->rank : c->attrs->axis;
    int64_t es = (int64_t)mf_dtype_size(out->dtype), dstr[MF_MAX_RANK];
    drop_axis(out->strides, out->rank, axis, dstr);
    char *dst = mf_tensor_data(out);
    for (int i = 0; i < c->ninputs; i++)
        copy_tensor(dst + i * out->strides[axis] * es, dstr, c->inputs[i]);
    return MF_OK;
}

/* ---- Slice (a view) ------------------------------------------------------ */

/* Resolves one axis of a slice: begin 'b' (0-based) and size 's' (-1: to the
 * end) within a dim of size 'n' (-1: unknown). */
static MfStatus slice_dim(int d, int64_t n, int64_t b, int64_t s, int64_t *out)
{
    if (s < -1)
        return mf_err_set(MF_EARG, "slice: size %lld for axis %d must be >= 0, or -1 for "
                          "'to the end'", (long long)s, d + 1);
    if (b < 0 || (n >= 0 && (b > n || (b == n && s > 0))))
        return mf_err_set(MF_EARG, "slice: begin %lld out of range for axis %d of size %lld "
                          "(begin is 1-based: 1..%lld)", (long long)(b + 1), d + 1,
                          (long long)n, (long long)n);
    if (n < 0) {
        *out = s;
        return MF_OK;
    }
    if (s == -1)
        s = n - b;
    if (s > n - b)   /* not b + s > n: s may be near INT64_MAX */
        return mf_err_set(MF_EARG, "slice: begin %lld with size %lld runs past the end of axis "
                          "%d of size %lld (at most %lld elements from there)",
                          (long long)(b + 1), (long long)s, d + 1, (long long)n,
                          (long long)(n - b));
    *out = s;
    return MF_OK;
}

/* attrs.ints: begin[0..rank) then size[0..rank). */
static MfStatus slice_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int r = t->rank;
    if (a->nints != 2 * r)
        return mf_err_set(MF_EARG, "slice: expected begin and size with %d entries each (one "
                          "per axis), got %d values in all", r, a->nints);
    spec_set(c, t->dtype, r, t->shape);
    for (int d = 0; d < r; d++) {
        MfStatus st = slice_dim(d, t->shape[d], a->ints[d], a->ints[r + d], &c->out[0].shape[d]);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

static MfStatus slice_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int64_t offset = t->offset;
    for (int d = 0; d < t->rank; d++)
        if (c->out[0].shape[d] > 0)
            offset += c->attrs->ints[d] * t->strides[d];
    outs[0] = mf_tensor_view(t, t->rank, c->out[0].shape, t->strides, offset);
    return outs[0] ? MF_OK : MF_ENOMEM;
}

/* ---- GatherV2 ------------------------------------------------------------ */

/* Inputs: params, indices (int32/int64, 0-based); attrs.axis. The result
 * has shape params[:axis] + indices.shape + params[axis+1:]. */
static MfStatus gather_infer(MfOpCall *c)
{
    const MfTensor *p = c->inputs[0], *ix = c->inputs[1];
    int64_t axis = 0, shape[MF_MAX_RANK];
    MfStatus st = check_index_dtype(c, ix);
    if (st != MF_OK)
        return st;
    if (p->rank == 0)
        return mf_err_set(MF_EARG, "gather: cannot gather from a scalar (rank 0)");
    if ((st = norm_axis(c, c->attrs->axis, p->rank, &axis)) != MF_OK ||
        (st = check_out_rank(c, p->rank - 1 + ix->rank)) != MF_OK)
        return st;
    int r = 0;
    for (int d = 0; d < p->rank; d++) {
        if (d != axis) {
            shape[r++] = p->shape[d];
            continue;
        }
        for (int k = 0; k < ix->rank; k++)
            shape[r++] = ix->shape[k];
    }
    spec_set(c, p->dtype, r, shape);
    return MF_OK;
}

static int64_t index_at(const MfTensor *ix, int64_t j)
{
    const void *p = mf_tensor_data(ix);
    return ix->dtype == MF_INT32 ? ((const int32_t *)p)[j] : ((const int64_t *)p)[j];
}

/* Every entry of contiguous 'ix' lies in 0..n-1; the message is 1-based. */
static MfStatus check_indices(const MfOpCall *c, const MfTensor *ix, int64_t n, int64_t axis)
{
    int64_t m = mf_tensor_numel(ix);
    for (int64_t j = 0; j < m; j++) {
        int64_t k = index_at(ix, j);
        if (k >= 0 && k < n)
            continue;
        /* back to 1-based with a wrapping add: the binding's wrapping
         * subtract made math.mininteger INT64_MAX, and this undoes it */
        long long one_based = (long long)((uint64_t)k + 1);
        if (c->op == MF_OP_ONE_HOT && n == 0)
            return mf_err_set(MF_EARG, "one_hot: label %lld out of range (depth is 0: there "
                              "are no classes)", one_based);
        if (c->op == MF_OP_ONE_HOT)
            return mf_err_set(MF_EARG, "one_hot: label %lld out of range (classes are 1-based: "
                              "1..%lld)", one_based, (long long)n);
        if (n == 0)
            return mf_err_set(MF_EARG, "gather: index %lld out of range (axis %lld is empty)",
                              one_based, (long long)axis + 1);
        return mf_err_set(MF_EARG, "gather: index %lld out of range for axis %lld of size %lld "
                          "(indices are 1-based: 1..%lld)", one_based,
                          (long long)axis + 1, (long long)n, (long long)n);
    }
    return MF_OK;
}

static void gather_copy(const MfOpCall *c, int64_t axis, const MfTensor *ix, MfTensor *out)
{
    const MfTensor *p = c->inputs[0];
    int r = p->rank;
    int64_t gshape[MF_MAX_RANK], gstr[MF_MAX_RANK], shape[MF_MAX_RANK], dstr[MF_MAX_RANK],
        sstr[MF_MAX_RANK], es = (int64_t)mf_dtype_size(p->dtype), m = mf_tensor_numel(ix);
    memcpy(gshape, p->shape, sizeof gshape);
    gshape[axis] = m; /* the output, with the index dims flattened into one */
    mf_shape_strides(r, gshape, gstr);
    drop_axis(p->shape, r, axis, shape);
    drop_axis(gstr, r, axis, dstr);
    drop_axis(p->strides, r, axis, sstr);
    char *dst = mf_tensor_data(out);
    const char *src = mf_tensor_data(p);
    for (int64_t j = 0; j < m; j++) {
        Block b;
        block_init(&b, r - 1, shape, dstr, sstr);
        copy_block(dst + j * gstr[axis] * es, src + index_at(ix, j) * p->strides[axis] * es,
                   p->dtype, &b);
    }
}

static MfStatus gather_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *p = c->inputs[0];
    int64_t axis = c->attrs->axis < 0 ? c->attrs->axis + p->rank : c->attrs->axis;
    MfTensor *ix = mf_tensor_contiguous(c->inputs[1]);
    if (!ix)
        return MF_ENOMEM;
    MfStatus st = check_indices(c, ix, p->shape[axis], axis);
    if (st == MF_OK)
        gather_copy(c, axis, ix, outs[0]);
    mf_tensor_release(ix);
    return st;
}

/* ---- ReverseV2 --------------------------------------------------------- */

/* attrs.axes[0..naxes): the axes to reverse, each once. */
static MfStatus reverse_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    bool seen[MF_MAX_RANK] = {false};
    if (a->naxes < 0 || a->naxes > MF_MAX_RANK)
        return mf_err_set(MF_EARG, "reverse: expected at most %d axes, got %d", MF_MAX_RANK,
                          a->naxes);
    for (int k = 0; k < a->naxes; k++) {
        int64_t ax = 0;
        MfStatus st = norm_axis(c, a->axes[k], t->rank, &ax);
        if (st != MF_OK)
            return st;
        if (seen[ax])
            return mf_err_set(MF_EARG, "reverse: axis %lld is listed twice", (long long)ax + 1);
        seen[ax] = true;
    }
    mf_spec_like(c, t, t->dtype);
    return MF_OK;
}

static MfStatus reverse_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int64_t sstr[MF_MAX_RANK], off = 0;
    memcpy(sstr, t->strides, sizeof sstr);
    if (mf_tensor_numel(t) == 0)
        return MF_OK;
    for (int k = 0; k < c->attrs->naxes; k++) {
        int64_t ax = c->attrs->axes[k] < 0 ? c->attrs->axes[k] + t->rank : c->attrs->axes[k];
        off += (t->shape[ax] - 1) * t->strides[ax];
        sstr[ax] = -t->strides[ax];
    }
    Block b;
    block_init(&b, t->rank, t->shape, outs[0]->strides, sstr);
    int64_t es = (int64_t)mf_dtype_size(t->dtype);
    copy_block(mf_tensor_data(outs[0]), (const char *)mf_tensor_data(t) + off * es, t->dtype,
               &b);
    return MF_OK;
}

/* ---- Tile ------------------------------------------------------------- */

/* attrs.ints[0..rank): the multiple of each axis (>= 0). */
static MfStatus tile_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int64_t shape[MF_MAX_RANK];
    if (a->nints != t->rank)
        return mf_err_set(MF_EARG, "tile: expected %d multiples (one per axis), got %d",
                          t->rank, a->nints);
    for (int d = 0; d < t->rank; d++) {
        if (a->ints[d] < 0)
            return mf_err_set(MF_EARG, "tile: multiples must be >= 0, got %lld for axis %d",
                              (long long)a->ints[d], d + 1);
        if (t->shape[d] < 0)
            shape[d] = -1;
        else if (__builtin_mul_overflow(t->shape[d], a->ints[d], &shape[d]))
            return mf_err_set(MF_EARG, "tile: axis %d of size %lld times %lld overflows", d + 1,
                              (long long)t->shape[d], (long long)a->ints[d]);
    }
    spec_set(c, t->dtype, t->rank, shape);
    return MF_OK;
}

/* The output seen as [m0, d0, m1, d1, ...]: the source repeats along each m. */
static MfStatus tile_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    const MfTensor *out = outs[0];
    Block b;
    b.rank = 2 * t->rank;
    for (int d = 0; d < t->rank; d++) {
        b.shape[2 * d] = c->attrs->ints[d];
        b.shape[2 * d + 1] = t->shape[d];
        b.dst[2 * d] = t->shape[d] * out->strides[d];
        b.dst[2 * d + 1] = out->strides[d];
        b.src[2 * d] = 0;
        b.src[2 * d + 1] = t->strides[d];
    }
    copy_block(mf_tensor_data(out), mf_tensor_data(t), t->dtype, &b);
    return MF_OK;
}

/* ---- Pad (constant mode) ---------------------------------------------- */

/* attrs.ints: {before, after} pairs per axis (>= 0); attrs.scalar[0]: the
 * constant value. */
static MfStatus pad_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int64_t shape[MF_MAX_RANK];
    if (a->nints != 2 * t->rank)
        return mf_err_set(MF_EARG, "pad: expected %d {before, after} pairs (one per axis), got "
                          "%d values", t->rank, a->nints);
    for (int d = 0; d < t->rank; d++) {
        int64_t before = a->ints[2 * d], after = a->ints[2 * d + 1];
        if (before < 0 || after < 0)
            return mf_err_set(MF_EARG, "pad: paddings must be >= 0, got {%lld, %lld} for axis %d",
                              (long long)before, (long long)after, d + 1);
        if (t->shape[d] < 0)
            shape[d] = -1;
        else if (__builtin_add_overflow(t->shape[d], before, &shape[d]) ||
                 __builtin_add_overflow(shape[d], after, &shape[d]))
            return mf_err_set(MF_EARG, "pad: axis %d of size %lld padded by {%lld, %lld} "
                              "overflows", d + 1, (long long)t->shape[d], (long long)before,
                              (long long)after);
    }
    spec_set(c, t->dtype, t->rank, shape);
    return MF_OK;
}

static MfStatus pad_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    MfTensor *out = outs[0];
    int64_t off = 0, es = (int64_t)mf_dtype_size(out->dtype);
    fill_value(mf_tensor_data(out), out->dtype, mf_tensor_numel(out), c->attrs->scalar[0]);
    for (int d = 0; d < t->rank; d++)
        off += c->attrs->ints[2 * d] * out->strides[d];
    copy_tensor((char *)mf_tensor_data(out) + off * es, out->strides, t);
    return MF_OK;
}

/* ---- BroadcastTo ---------------------------------------------------------- */

/* attrs.ints[0..nints): the target shape. */
static MfStatus broadcast_to_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int r = a->nints;
    char b1[160], b2[160];
    if (r < 0 || r > MF_MAX_RANK)
        return mf_err_set(MF_EARG, "broadcast_to: target rank must be 0..%d, got %d",
                          MF_MAX_RANK, r);
    bool ok = r >= t->rank;
    for (int d = 0; d < r && ok; d++) {
        int it = d - (r - t->rank);
        int64_t want = a->ints[d], have = it >= 0 ? t->shape[it] : 1;
        ok = want >= 0 && (have == want || have == 1 || have < 0);
    }
    if (!ok)
        return mf_err_set(MF_ESHAPE, "broadcast_to: cannot broadcast shape %s to %s (dims must "
                          "match or be 1, aligned from the last)",
                          mf_shape_str(t->rank, t->shape, b1, sizeof b1),
                          mf_shape_str(r, a->ints, b2, sizeof b2));
    spec_set(c, t->dtype, r, a->ints);
    return MF_OK;
}

/* A view with stride 0 along the stretched axes, as PyTorch's expand: no
 * element is written (the gradient of a Sum over 4M floats wrote 16 MB of
 * one value here, 2.4-3.8 ms). Tensors are immutable, so the repeated
 * elements can share one; a reader wanting a flat buffer gets a copy
 * (mf_tensor_contiguous), and in-place writers refuse a tensor that is not
 * contiguous and alone (apply.c, autodiff/slices.c, graph/exec.c). */
static MfStatus broadcast_to_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int rank = c->out[0].rank;
    int64_t strides[MF_MAX_RANK];
    mf_broadcast_strides(t, rank, c->out[0].shape, strides);
    outs[0] = mf_tensor_view(t, rank, c->out[0].shape, strides, t->offset);
    return outs[0] ? MF_OK : MF_ENOMEM;
}

/* ---- OneHot ------------------------------------------------------------- */

/* Input: 0-based int indices. attrs.n: depth; attrs.dtype: the output dtype;
 * attrs.scalar[0], [1]: on and off values. The class axis comes last. */
static MfStatus one_hot_infer(MfOpCall *c)
{
    const MfTensor *ix = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int64_t shape[MF_MAX_RANK];
    MfStatus st = check_index_dtype(c, ix);
    if (st == MF_OK)
        st = check_out_rank(c, ix->rank + 1);
    if (st != MF_OK)
        return st;
    if (a->n < 0)
        return mf_err_set(MF_EARG, "one_hot: depth must be >= 0, got %lld", (long long)a->n);
    if ((unsigned)a->dtype >= MF_NDTYPES)
        return mf_err_set(MF_EARG, "one_hot: unknown output dtype %d", (int)a->dtype);
    memcpy(shape, ix->shape, sizeof(int64_t) * (size_t)ix->rank);
    shape[ix->rank] = a->n;
    spec_set(c, a->dtype, ix->rank + 1, shape);
    return MF_OK;
}

static MfStatus one_hot_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t depth = c->attrs->n, es = (int64_t)mf_dtype_size(out->dtype);
    MfTensor *ix = mf_tensor_contiguous(c->inputs[0]);
    if (!ix)
        return MF_ENOMEM;
    MfStatus st = check_indices(c, ix, depth, 0);
    if (st == MF_OK) {
        char *p = mf_tensor_data(out);
        int64_t m = mf_tensor_numel(ix);
        fill_value(p, out->dtype, mf_tensor_numel(out), c->attrs->scalar[1]);
        for (int64_t j = 0; j < m; j++)
            fill_value(p + (j * depth + index_at(ix, j)) * es, out->dtype, 1,
                       c->attrs->scalar[0]);
    }
    mf_tensor_release(ix);
    return st;
}

/* ---- Identity, StopGradient (views), Size, Rank, Shape ------------------- */

static MfStatus identity_infer(MfOpCall *c)
{
    mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return MF_OK;
}

static MfStatus identity_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    outs[0] = mf_tensor_view(t, t->rank, t->shape, t->strides, t->offset);
    return outs[0] ? MF_OK : MF_ENOMEM;
}

static MfStatus size_infer(MfOpCall *c)
{
    spec_set(c, MF_INT32, 0, NULL);
    return MF_OK;
}

static MfStatus shape_infer(MfOpCall *c)
{
    int64_t r = c->inputs[0]->rank;
    spec_set(c, MF_INT32, 1, &r);
    return MF_OK;
}

/* Size, Rank and Shape: int32 values, as TensorFlow's default. */
static MfStatus query_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int32_t *p = mf_tensor_data(outs[0]);
    int n = c->op == MF_OP_SHAPE ? t->rank : 1;
    for (int d = 0; d < n; d++) {
        int64_t v = c->op == MF_OP_SHAPE ? t->shape[d]
                    : c->op == MF_OP_SIZE ? mf_tensor_numel(t) : t->rank;
        if (v > INT32_MAX)
            return mf_err_set(MF_EARG, "%s: %lld does not fit in int32", op_api(c),
                              (long long)v);
        p[d] = (int32_t)v;
    }
    return MF_OK;
}

/* ---- the descriptors ------------------------------------------------------ */

#define SHAPE_OP(sym, tfname, apiname, n, fl, inf, fwd, bwd, cst, schema, in, ...)      \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = n, .flags = (fl), .infer = inf,   \
        .forward = fwd, .backward = bwd, .cost = cst, .attrs = schema,             \
        .nattrs = MF_NATTRS(schema), .lua = apiname, .inputs = in,                 \
        .summary = __VA_ARGS__,                                                    \
    }
#define QUERY_OP(sym, tfname, apiname, fl, inf, fwd, bwd, ...)                     \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = 1, .flags = (fl), .infer = inf,   \
        .forward = fwd, .backward = bwd, .cost = cost_none, .lua = apiname,        \
        .inputs = "x", .summary = __VA_ARGS__,                                     \
    }

static const MfAttrDef axis_1[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, 1, NULL, NULL},
};
static const MfAttrDef stack_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL | MF_ATTR_PAST_END, MF_ATTR_AT(axis), 0, 1, NULL,
     NULL},
};
/* begin (1-based at the face, 0-based here) then size (-1: to the end), one
 * entry per axis each, in one array */
static const MfAttrDef slice_attrs[] = {
    {"begin", MF_ATTR_INTS,
     MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED | MF_ATTR_ONE_BASED | MF_ATTR_PER_AXIS |
         MF_ATTR_FIRST_HALF,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
    {"size", MF_ATTR_INTS, MF_ATTR_POSITIONAL | MF_ATTR_PER_AXIS | MF_ATTR_SECOND_HALF,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), -1, NULL, NULL},
};
static const MfAttrDef reverse_attrs[] = {
    {"axis", MF_ATTR_AXES, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(axes),
     MF_ATTR_AT(naxes), 0, NULL, NULL},
};
static const MfAttrDef tile_attrs[] = {
    {"multiples", MF_ATTR_INTS, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(ints),
     MF_ATTR_AT(nints), 0, NULL, NULL},
};
static const char *const pad_modes[] = {"CONSTANT", NULL};
static const MfAttrDef pad_attrs[] = {
    {"paddings", MF_ATTR_PAIRS, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(ints),
     MF_ATTR_AT(nints), 0, NULL, NULL},
    {"constant_values", MF_ATTR_FLOAT, MF_ATTR_POSITIONAL, MF_ATTR_AT(scalar[0]), 0, 0, NULL,
     NULL},
    {"mode", MF_ATTR_ENUM, 0, MF_ATTR_AT(mode), 0, 0, pad_modes, NULL},
};
/* a symbolic shape (mf.shape of a -1 placeholder) is read when the graph runs */
static const MfAttrDef broadcast_to_attrs[] = {
    {"shape", MF_ATTR_INTS,
     MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED | MF_ATTR_SHAPE | MF_ATTR_BY_TENSOR,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
};

/* Lua's broadcast_to: with a shape given as a symbolic tensor (a second
 * input) it is BroadcastToLike against Fill(shape, 0) (fill.h). */
static MfStatus broadcast_to_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                   MfTensor **outs, int *nout)
{
    if (n == 1)
        return mf_op_call(MF_OP_BROADCAST_TO, 1, in, a, outs, nout);
    *nout = 1;
    MfStatus st = mf_broadcast_to_by(in[0], in[1], outs);
    if (st != MF_OK && strncmp(mf_err_msg(), "broadcast_to", 12) != 0)
        mf_err_prefix("broadcast_to");   /* its inner ops name themselves */
    return st;
}
static const MfAttrDef one_hot_attrs[] = {
    {"depth", MF_ATTR_INT, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(n), 0, 0, NULL,
     NULL},
    {"on_value", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[0]), 0, 1, NULL, NULL},
    {"off_value", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[1]), 0, 0, NULL, NULL},
    {"dtype", MF_ATTR_DTYPE, 0, MF_ATTR_AT(dtype), 0, MF_FLOAT32, NULL, NULL},
};

SHAPE_OP(mf_desc_concat, "ConcatV2", "concat", 1, MF_OP_VARIADIC | MF_OP_NO_METHOD | MF_OP_VIEW,
         concat_infer, concat_forward, mf_concat_grad, cost_copy, axis_1, "list",
         "tensors joined along an existing axis",
    .topic = "shape",
    .details =
        "Joins an array of tensors along an existing axis; the other dimensions must agree.",
    .example =
        "a = mf.tensor{{1, 2}}\n"
        "b = mf.tensor{{3, 4}}\n"
        "mf.concat({a, b}, 1)                        --> {{1, 2}, {3, 4}}\n"
        "mf.concat({a, b}, 2)                        --> {{1, 2, 3, 4}}");
SHAPE_OP(mf_desc_stack, "Pack", "stack", 1, MF_OP_VARIADIC | MF_OP_NO_METHOD, stack_infer,
         stack_forward, mf_stack_grad, cost_copy, stack_attrs, "list",
         "tensors of one shape joined along a new axis (1..rank+1)",
    .topic = "shape",
    .details =
        "Joins an array of tensors of one shape along a new axis inserted at 'axis' (1 .. "
        "rank+1).",
    .example =
        "a = mf.tensor{1, 2}\n"
        "b = mf.tensor{3, 4}\n"
        "mf.stack({a, b}, 1)                         --> {{1, 2}, {3, 4}}\n"
        "mf.stack({a, b}, 2)                         --> {{1, 3}, {2, 4}}");
SHAPE_OP(mf_desc_slice, "Slice", "slice", 1, MF_OP_VIEW, slice_infer,
         slice_forward, mf_slice_grad, cost_none, slice_attrs, "x",
         "the block at begin (1-based) of size (-1: to the end), a view",
    .topic = "shape",
    .details =
        "The block of 'x' starting at 'begin' (1-based, one entry per axis) with the given "
        "'size' per axis; a size of -1 takes everything to the end of that axis (size left "
        "out: all of it). A view.",
    .example =
        "x = mf.reshape(mf.range(12), {3, 4})\n"
        "mf.slice(x, {2, 2}, {2, 2})                 --> {{5, 6}, {9, 10}}\n"
        "mf.slice(x, {3, 1}, {1, -1})                --> {{8, 9, 10, 11}}");
SHAPE_OP(mf_desc_gather, "GatherV2", "gather", 2, 0, gather_infer,
         gather_forward, mf_gather_grad, cost_copy, axis_1, "x, indices",
         "the slices of x at 1-based indices along axis",
    .one_based_inputs = 1u << 1,
    .topic = "shape",
    .details =
        "Picks slices of 'x' along 'axis' at the given 1-based indices (a Lua array or an int "
        "tensor, of any shape: the result has the indices' shape in place of that axis).",
    .example =
        "mf.gather(mf.tensor{10, 20, 30}, {3, 1}, 1)               --> {30, 10}\n"
        "mf.gather(mf.tensor{{1, 2}, {3, 4}}, {2}, 2)              --> {{2}, {4}}");
SHAPE_OP(mf_desc_reverse, "ReverseV2", "reverse", 1, 0, reverse_infer, reverse_forward,
         mf_reverse_grad, cost_copy, reverse_attrs, "x", "x with the given axes reversed",
    .topic = "shape",
    .details =
        "Reverses the order of elements along one axis or an array of axes.",
    .example =
        "mf.reverse(mf.tensor{1, 2, 3}, 1)                          --> {3, 2, 1}\n"
        "mf.reverse(mf.tensor{{1, 2}, {3, 4}}, {1, 2})              --> {{4, 3}, {2, 1}}");
SHAPE_OP(mf_desc_tile, "Tile", "tile", 1, 0, tile_infer, tile_forward, mf_tile_grad, cost_copy,
         tile_attrs, "x", "x repeated multiples[i] times along axis i",
    .topic = "shape",
    .details =
        "Repeats 't' multiples[i] times along axis i (one entry per axis).",
    .example =
        "mf.tile(mf.tensor{1, 2}, {2})                              --> {1, 2, 1, 2}\n"
        "mf.tile(mf.tensor{{1, 2}}, {2, 1})                         --> {{1, 2}, {1, 2}}");
SHAPE_OP(mf_desc_pad, "Pad", "pad", 1, 0, pad_infer, pad_forward, mf_pad_grad,
         cost_copy, pad_attrs, "x", "x padded with {before, after} per axis by a constant",
    .topic = "shape",
    .details =
        "Adds values around 'x': paddings is one {before, after} pair per axis; the new "
        "elements are 'constant_values' (default 0).",
    .example =
        "mf.pad(mf.tensor{{1, 2}}, {{1, 0}, {0, 1}})                --> {{0, 0, 0}, {1, 2, 0}}\n"
        "mf.pad(mf.tensor{1}, {{1, 1}}, 9)                          --> {9, 1, 9}");
SHAPE_OP(mf_desc_broadcast_to, "BroadcastTo", "broadcast_to", 1, MF_OP_VIEW,
         broadcast_to_infer,
         broadcast_to_forward, mf_broadcast_to_grad, cost_none, broadcast_to_attrs, "x",
         "x stretched to shape by broadcasting, a view",
    .entry = broadcast_to_entry,
    .topic = "shape",
    .details =
        "'x' stretched to 'shape' by the broadcasting rules (axes of size 1 repeat, new axes "
        "go in front). The shape may be a 1-D int tensor, also a symbolic one (mf.shape of a "
        "placeholder with -1 dims), read when the graph runs.",
    .example =
        "mf.broadcast_to(mf.tensor{1, 2}, {2, 2})                   --> {{1, 2}, {1, 2}}");
SHAPE_OP(mf_desc_one_hot, "OneHot", "one_hot", 1, MF_OP_NONDIFF,
         one_hot_infer, one_hot_forward, NULL, cost_copy, one_hot_attrs, "indices",
         "1-based class indices as one-hot vectors of length depth (class axis last)",
    .one_based_inputs = 1u << 0,
    .topic = "shape",
    .details =
        "For class labels 1..depth (a Lua array or an int tensor), a tensor with a new last "
        "axis of size 'depth' holding on_value (1) at the label and off_value (0) elsewhere; "
        "float32 unless 'dtype' says otherwise.",
    .example =
        "mf.one_hot({2, 1, 3}, 3)       --> {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}");
QUERY_OP(mf_desc_identity, "Identity", "identity", MF_OP_VIEW | MF_OP_SIMPLE, identity_infer,
         identity_forward, mf_identity_grad, "x itself (a new handle on the same data)",
    .topic = "shape",
    .details =
        "Returns 't' unchanged (a graph node of its own in graph mode).",
    .example =
        "mf.identity(mf.tensor{1, 2})   --> {1, 2}");
QUERY_OP(mf_desc_stop_gradient, "StopGradient", "stop_gradient",
         MF_OP_VIEW | MF_OP_SIMPLE | MF_OP_NONDIFF, identity_infer, identity_forward, NULL,
         "x, through which no gradient flows",
    .topic = "shape",
    .details =
        "Returns 't' unchanged, but gradients do not flow back through it (a constant for "
        "tapes and mf.gradients).",
    .example =
        "mf.stop_gradient(mf.tensor{1, 2})   --> {1, 2}");
QUERY_OP(mf_desc_size, "Size", "size", MF_OP_SIMPLE | MF_OP_NONDIFF, size_infer, query_forward,
         NULL, "the number of elements, an int32 scalar",
    .topic = "shape",
    .details =
        "The number of elements as an int32 scalar tensor (usable in graphs); t:numel() gives a "
        "Lua number.",
    .example =
        "mf.size(mf.zeros{2, 3})        --> 6");
QUERY_OP(mf_desc_rank, "Rank", "rank", MF_OP_SIMPLE | MF_OP_NONDIFF, size_infer, query_forward,
         NULL, "the number of axes, an int32 scalar",
    .topic = "shape",
    .details =
        "The number of axes as an int32 scalar tensor; t.ndim gives a Lua number.",
    .example =
        "mf.rank(mf.zeros{2, 3})        --> 2");
/* No method: t:shape() would hide the property t.shape. */
QUERY_OP(mf_desc_shape, "Shape", "shape", MF_OP_NONDIFF | MF_OP_NO_METHOD, shape_infer,
         query_forward, NULL, "the shape as a 1-D int32 tensor (t.shape gives a Lua array)",
    .topic = "shape",
    .details =
        "The shape as a 1-D int32 tensor (usable in graphs); t.shape gives a Lua array.",
    .example =
        "mf.shape(mf.zeros{2, 3})       --> {2, 3}");

/* ---- composites ------------------------------------------------------------ */

/* Part sizes of a split of 'dim' into 'n' parts into 'out'. */
static MfStatus split_sizes(int64_t dim, int64_t axis, int64_t n, const int64_t *sizes,
                            int64_t *out)
{
    if (n < 1 || n > INT32_MAX)
        return mf_err_set(MF_EARG, "split: expected 1..%d parts, got %lld", INT32_MAX,
                          (long long)n);
    if (!sizes) {
        if (dim % n != 0)
            return mf_err_set(MF_EARG, "split: %lld parts do not evenly divide axis %lld of "
                              "size %lld (give a number that divides it, or an array of sizes)",
                              (long long)n, (long long)axis + 1, (long long)dim);
        for (int64_t i = 0; i < n; i++)
            out[i] = dim / n;
        return MF_OK;
    }
    int64_t sum = 0, rest = -1;
    for (int64_t i = 0; i < n; i++) {
        out[i] = sizes[i];
        if (sizes[i] >= 0 && __builtin_add_overflow(sum, sizes[i], &sum))
            return mf_err_set(MF_ESHAPE, "split: sizes overflow (entry %lld is %lld) for axis "
                              "%lld of size %lld", (long long)i + 1, (long long)sizes[i],
                              (long long)axis + 1, (long long)dim);
        else if (sizes[i] >= 0)
            continue;
        else if (sizes[i] == -1 && rest < 0)
            rest = i;
        else
            return mf_err_set(MF_EARG, "split: sizes must be >= 0 with at most one -1, got %lld "
                              "at entry %lld", (long long)sizes[i], (long long)i + 1);
    }
    if (rest >= 0 && sum <= dim)
        out[rest] = dim - sum;
    else if (sum != dim || rest >= 0)
        return mf_err_set(MF_ESHAPE, "split: sizes add up to %lld but axis %lld has size %lld",
                          (long long)sum, (long long)axis + 1, (long long)dim);
    return MF_OK;
}

/* Checks 't' has a known dim at 'axis' (normalised into '*ax'). */
static MfStatus check_split_axis(const char *who, const MfTensor *t, int64_t axis, int64_t *ax)
{
    int r = t->rank;
    if (r == 0)
        return mf_err_set(MF_EARG, "%s: a scalar (rank 0) has no axis to split", who);
    if (axis < -r || axis >= r)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d (axes are 1-based: "
                          "1..%d, or -%d..-1)", who, (long long)(axis < 0 ? axis : axis + 1),
                          r, r, r);
    *ax = axis < 0 ? axis + r : axis;
    if (t->shape[*ax] < 0)
        return mf_err_set(MF_EARG, "%s: the size of axis %lld is unknown", who,
                          (long long)*ax + 1);
    return MF_OK;
}

static void release_all(MfTensor **outs, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        mf_tensor_release(outs[i]);
        outs[i] = NULL;
    }
}

MfStatus mf_split(MfTensor *t, int64_t axis, int64_t n, const int64_t *sizes, MfTensor **outs)
{
    int64_t ax, *part = NULL;
    MfStatus st = check_split_axis("split", t, axis, &ax);
    if (st == MF_OK && n >= 1 && n <= INT32_MAX && !(part = mf_alloc((size_t)n * sizeof *part)))
        st = mf_err_nomem("split", (unsigned long long)n * sizeof *part);
    if (st == MF_OK)
        st = split_sizes(t->shape[ax], ax, n, sizes, part);
    MfAttrs a = mf_attrs_default();
    a.nints = 2 * t->rank;
    for (int d = 0; d < t->rank; d++)
        a.ints[t->rank + d] = -1;
    for (int64_t i = 0, begin = 0; st == MF_OK && i < n; begin += part[i++]) {
        a.ints[ax] = begin;
        a.ints[t->rank + ax] = part[i];
        if ((st = mf_op1(MF_OP_SLICE, 1, &t, &a, &outs[i])) != MF_OK) {
            mf_err_prefix("split");   /* the user called split, not the slice inside it */
            release_all(outs, i);
        }
    }
    if (part)
        mf_dealloc(part, (size_t)n * sizeof *part);
    return st;
}

MfStatus mf_unstack(MfTensor *t, int64_t axis, MfTensor **outs)
{
    int64_t ax;
    MfStatus st = check_split_axis("unstack", t, axis, &ax);
    MfAttrs a = mf_attrs_default();
    a.axis = ax;
    for (int64_t i = 0; st == MF_OK && i < t->shape[ax]; i++) {
        MfTensor *index = mf_tensor_scalar(MF_INT64, 0);
        if (!index) {
            st = MF_ENOMEM;
        } else {
            *(int64_t *)mf_tensor_data(index) = i;
            MfTensor *in[2] = {t, index};
            st = mf_op1(MF_OP_GATHER, 2, in, &a, &outs[i]);
            mf_tensor_release(index);
        }
        if (st != MF_OK) {
            /* the user called unstack, not the gather inside it */
            mf_err_prefix("unstack");
            release_all(outs, i);
        }
    }
    return st;
}

MfStatus mf_one_hot(MfTensor *indices, int64_t depth, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.n = depth;
    a.dtype = MF_FLOAT32;
    a.scalar[0] = 1;
    a.scalar[1] = 0;
    return mf_op1(MF_OP_ONE_HOT, 1, &indices, &a, out);
}
