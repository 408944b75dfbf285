/* scatter.c — the op UnsortedSegmentSum (see scatter.h): a scatter-add of
 * the rows of 'data' into 'n' segments, the gradient of GatherV2. Its own
 * gradient is a GatherV2 of dy, so gathers differentiate to any order.
 *
 * Inputs: data (numeric), segment ids (int32/int64, 0-based, the shape of a
 * leading part of data's shape). Attributes: n = the number of segments.
 * The kernel reads contiguous copies of both inputs and adds each row of
 * data into the output row its id names; integer sums wrap, as
 * TensorFlow's integer ops do. */
#include "scatter.h"

#include <string.h>

#include "common.h"

#define SHAPE_BUF 160

/* Shape of the output: (n,) + data.shape[ids.rank:]. */
static MfStatus segsum_infer(MfOpCall *c)
{
    const MfTensor *data = c->inputs[0], *ids = c->inputs[1];
    MfStatus st = mf_check_dtype(c, data, MF_NUMERIC,
                                 "a numeric dtype (float32, float64, int32, int64)");
    if (st == MF_OK)
        st = mf_check_dtype(c, ids, MF_INTS, "int32 or int64 segment ids (convert with mf.cast)");
    if (st != MF_OK)
        return st;
    bool prefix = ids->rank <= data->rank;
    for (int d = 0; prefix && d < ids->rank; d++)
        prefix = ids->shape[d] < 0 || data->shape[d] < 0 || ids->shape[d] == data->shape[d];
    char sd[SHAPE_BUF], si[SHAPE_BUF];
    if (!prefix)
        return mf_err_set(MF_ESHAPE, "unsorted_segment_sum: the ids' shape %s must be a "
                          "leading part of the data's shape %s",
                          mf_shape_str(ids->rank, ids->shape, si, sizeof si),
                          mf_shape_str(data->rank, data->shape, sd, sizeof sd));
    if (c->attrs->n < 0)
        return mf_err_set(MF_EARG, "unsorted_segment_sum: the number of segments must be >= 0, "
                          "got %lld", (long long)c->attrs->n);
    int rank = 1 + data->rank - ids->rank;
    if (rank > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "unsorted_segment_sum: the result would have rank %d, at "
                          "most %d is supported", rank, MF_MAX_RANK);
    c->noutputs = 1;
    c->out[0].dtype = data->dtype;
    c->out[0].rank = rank;
    c->out[0].shape[0] = c->attrs->n;
    for (int d = 1; d < rank; d++)
        c->out[0].shape[d] = data->shape[ids->rank + d - 1];
    return MF_OK;
}

static int64_t id_at(const MfTensor *ids, int64_t j)
{
    const void *p = mf_tensor_data(ids);
    return ids->dtype == MF_INT32 ? ((const int32_t *)p)[j] : ((const int64_t *)p)[j];
}

/* Every id of contiguous 'ids' lies in 0..n-1; the message is 1-based. */
static MfStatus check_ids(const MfTensor *ids, int64_t n)
{
    int64_t m = mf_tensor_numel(ids);
    for (int64_t j = 0; j < m; j++) {
        int64_t k = id_at(ids, j);
        if (k < 0 || k >= n)
            return mf_err_set(MF_EARG, "unsorted_segment_sum: segment id %lld out of range for "
                              "%lld segments (ids are 1-based: 1..%lld)", (long long)k + 1,
                              (long long)n, (long long)n);
    }
    return MF_OK;
}

/* Adds row j of 'src' into row ids[j] of 'dst' ('inner' elements a row);
 * 'U' is the type the additions are made in (unsigned for integers). */
#define SEGSUM(T, U)                                                                 \
    do {                                                                             \
        T *o = (T *)dst;                                                             \
        const T *s = (const T *)src;                                                 \
        for (int64_t j = 0; j < m; j++) {                                            \
            T *row = o + id_at(ids, j) * inner;                                      \
            const T *in = s + j * inner;                                             \
            for (int64_t i = 0; i < inner; i++)                                      \
                row[i] = (T)((U)row[i] + (U)in[i]);                                  \
        }                                                                            \
    } while (0)

static void segsum_rows(void *dst, const void *src, const MfTensor *ids, MfDType dt,
                        int64_t m, int64_t inner)
{
    switch (dt) {
    case MF_FLOAT32: SEGSUM(float, float); break;
    case MF_FLOAT64: SEGSUM(double, double); break;
    case MF_INT32: SEGSUM(int32_t, uint32_t); break;
    default: SEGSUM(int64_t, uint64_t); break;
    }
}

static MfStatus segsum_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    memset(mf_tensor_data(out), 0, (size_t)mf_tensor_numel(out) * mf_dtype_size(out->dtype));
    MfTensor *data = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *ids = data ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    MfStatus st = ids ? check_ids(ids, c->attrs->n) : MF_ENOMEM;
    int64_t m = ids ? mf_tensor_numel(ids) : 0;
    if (st == MF_OK && m > 0)
        segsum_rows(mf_tensor_data(out), mf_tensor_data(data), ids, out->dtype, m,
                    mf_tensor_numel(data) / m);
    mf_tensor_release(data);
    mf_tensor_release(ids);
    return st;
}

/* d data = GatherV2(dy, ids, axis 0): each row gets its segment's gradient. */
static MfStatus segsum_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfAttrs a = mf_attrs_default();
    MfTensor *in[2] = {g->doutputs[0], g->call->inputs[1]};
    return mf_op1(MF_OP_GATHER, 2, in, &a, &dinputs[0]);
}

/* One addition per data element. */
static MfCost segsum_cost(const MfOpCall *c)
{
    const MfTensor *data = c->inputs[0];
    double n = (double)mf_tensor_numel(data), es = (double)mf_dtype_size(data->dtype);
    double outn = (double)mf_shape_numel(c->out[0].rank, c->out[0].shape);
    return (MfCost){n, (2 * n + outn) * es};
}

const MfOpDesc mf_desc_unsorted_segment_sum = {
    .name = "UnsortedSegmentSum", .api = "unsorted_segment_sum", .arity = 2,
    .infer = segsum_infer, .forward = segsum_forward, .backward = segsum_grad,
    .cost = segsum_cost,
};

MfStatus mf_unsorted_segment_sum(MfTensor *data, MfTensor *ids, int64_t n, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.n = n;
    MfTensor *in[2] = {data, ids};
    return mf_op1(MF_OP_UNSORTED_SEGMENT_SUM, 2, in, &a, out);
}
