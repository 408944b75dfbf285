/* nn.c — neural-network ops (Softmax and LogSoftmax live in softmax.c):
 * SoftmaxCrossEntropyWithLogits,
 * SparseSoftmaxCrossEntropyWithLogits (1-based labels) and BiasAdd, and the
 * composites sigmoid cross-entropy, l2_loss and dropout (see nn.h).
 *
 * Kernels work on contiguous copies of their inputs, viewed as
 * (outer, n, inner) around the reduced axis; typed loops per dtype, no
 * function pointer per element. */
#include <math.h>
#include <string.h>

#include "nn.h"

#include "../alloc.h"
#include "../parallel.h"
#include "../rng.h"
#include "common.h"
#include "fast_mathf.h"
#include "compare.h"
#include "random.h"
#include "window.h"
#include "reduce.h"
#include "view.h"

/* Product of shape[from..to). */
static int64_t dims_product(const int64_t *shape, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= shape[i];
    return p;
}

/* ---- cross-entropies ---------------------------------------------------------- */

/* Outputs: the loss (logits' shape without the last axis) and backprop. */
static void xent_specs(MfOpCall *c, const MfTensor *logits)
{
    c->noutputs = 2;
    c->out[0].dtype = c->out[1].dtype = logits->dtype;
    c->out[0].rank = logits->rank - 1;
    c->out[1].rank = logits->rank;
    for (int i = 0; i < logits->rank; i++) {
        c->out[1].shape[i] = logits->shape[i];
        if (i < logits->rank - 1)
            c->out[0].shape[i] = logits->shape[i];
    }
}

/* Known dims equal (unknown ones match anything). */
static bool dims_match(int rank, const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < rank; i++)
        if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i])
            return false;
    return true;
}

static MfStatus check_logits(const MfOpCall *c, const MfTensor *logits)
{
    MfStatus st = mf_check_dtype(c, logits, MF_FLOATS,
                                 "float logits (float32 or float64; use mf.cast)");
    if (st == MF_OK && logits->rank < 1)
        st = mf_err_set(MF_ESHAPE, "%s: logits must have rank >= 1 (classes along the last "
                        "axis), got a scalar", op_api(c));
    return st;
}

static MfStatus xent_infer(MfOpCall *c)
{
    const MfTensor *logits = c->inputs[0], *labels = c->inputs[1];
    MfStatus st = check_logits(c, logits);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, logits, labels);
    if (st != MF_OK)
        return st;
    if (labels->rank != logits->rank || !dims_match(logits->rank, logits->shape, labels->shape)) {
        char a[96], b[96];
        return mf_err_set(MF_ESHAPE, "%s: labels and logits must have the same shape, got "
                          "labels %s and logits %s", op_api(c),
                          mf_shape_str(labels->rank, labels->shape, a, sizeof a),
                          mf_shape_str(logits->rank, logits->shape, b, sizeof b));
    }
    xent_specs(c, logits);
    return MF_OK;
}

#define XENT_KERNEL(T, SUF, EXPF, LOGF)                                                  \
    static void xent_##SUF(const T *x, const T *z, T *loss, T *bp, int64_t rows,         \
                           int64_t n)                                                    \
    {                                                                                    \
        for (int64_t r = 0; r < rows; r++) {                                             \
            const T *xr = x + r * n, *zr = z + r * n;                                    \
            T *br = bp + r * n, m = n > 0 ? xr[0] : 0, s = 0, l = 0;                     \
            for (int64_t j = 1; j < n; j++)                                              \
                m = xr[j] > m ? xr[j] : m;                                               \
            for (int64_t j = 0; j < n; j++)                                              \
                s += EXPF(xr[j] - m);                                                    \
            T ls = LOGF(s);                                                              \
            for (int64_t j = 0; j < n; j++) {                                            \
                T lsm = xr[j] - m - ls;                                                  \
                l -= zr[j] * lsm;                                                        \
                br[j] = EXPF(lsm) - zr[j];                                               \
            }                                                                            \
            loss[r] = l;                                                                 \
        }                                                                                \
    }

XENT_KERNEL(float, f32, expf, logf)
XENT_KERNEL(double, f64, exp, log)

static MfStatus xent_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *z = x ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!z) {
        mf_tensor_release(x);
        return MF_ENOMEM;
    }
    int64_t n = x->shape[x->rank - 1], rows = dims_product(x->shape, 0, x->rank - 1);
    if (x->dtype == MF_FLOAT32)
        xent_f32(mf_tensor_data(x), mf_tensor_data(z), mf_tensor_data(outs[0]),
                 mf_tensor_data(outs[1]), rows, n);
    else
        xent_f64(mf_tensor_data(x), mf_tensor_data(z), mf_tensor_data(outs[0]),
                 mf_tensor_data(outs[1]), rows, n);
    mf_tensor_release(x);
    mf_tensor_release(z);
    return MF_OK;
}

static MfCost xent_cost(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    cost.flops = 6 * (double)mf_tensor_numel(c->inputs[0]);
    return cost;
}

/* The face's class axis (TF 1.x's dim): the entries below move it last; the
 * op itself always finds it last (xent_loss sets it so). */
static const MfAttrDef xent_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, -1, NULL, "dim"},
};

/* Lua's cross-entropies take (labels, logits), TensorFlow's order, or the
 * keyword form; the op takes (logits, labels). */
static MfStatus xent_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                           int *nout)
{
    (void)n;
    *nout = 1;
    return mf_softmax_cross_entropy_axis(in[0], in[1], a->axis, outs);
}

const MfOpDesc mf_desc_softmax_xent = {
    .name = "SoftmaxCrossEntropyWithLogits", .api = "softmax_cross_entropy_with_logits",
    .arity = 2, .flags = MF_OP_KEYWORD_INPUTS, .infer = xent_infer, .forward = xent_forward,
    .backward = mf_xent_grad, .cost = xent_cost, .lua = "nn.softmax_cross_entropy_with_logits",
    .attrs = xent_attrs, .nattrs = MF_NATTRS(xent_attrs), .inputs = "labels, logits",
    .like_inputs = 1u << 0 | 1u << 1, .axis_input = 1, .entry = xent_entry,
    .summary = "cross-entropy of softmax(logits) against label distributions, per row",
    .topic = "nn",
    .details =
        "-sum(labels * log_softmax(logits)) over the class axis (the last by default): one loss "
        "per row (the shape of logits without that axis). Each row of 'labels' is a probability "
        "distribution of logits' shape and dtype (Lua arrays take logits' dtype). Call it with "
        "TensorFlow's keywords, {labels = ..., logits = ...} (options in that table), or as "
        "(labels, logits). Differentiable with respect to both, as TensorFlow's v2.",
    .example =
        "mf.nn.softmax_cross_entropy_with_logits{labels = {{0, 1}}, logits = mf.tensor{{0, 0}}}"
        "   --> {0.6931}",
};

static MfStatus sparse_xent_infer(MfOpCall *c)
{
    const MfTensor *logits = c->inputs[0], *labels = c->inputs[1];
    MfStatus st = check_logits(c, logits);
    if (st == MF_OK)
        st = mf_check_dtype(c, labels, MF_INTS, "int32 or int64 labels (class numbers 1..C)");
    if (st != MF_OK)
        return st;
    if (labels->rank != logits->rank - 1 ||
        !dims_match(labels->rank, logits->shape, labels->shape)) {
        char a[96], b[96];
        return mf_err_set(MF_ESHAPE, "%s: labels must have the shape of logits without its "
                          "last axis, got labels %s and logits %s", op_api(c),
                          mf_shape_str(labels->rank, labels->shape, a, sizeof a),
                          mf_shape_str(logits->rank, logits->shape, b, sizeof b));
    }
    xent_specs(c, logits);
    return MF_OK;
}

/* Reads the labels (contiguous) as 0-based classes into 'cls'; MF_EARG
 * naming the 1-based range when one is outside 1..n. */
static MfStatus read_labels(const MfOpCall *c, const MfTensor *lab, int64_t rows, int64_t n,
                            int64_t *cls)
{
    const void *p = mf_tensor_data(lab);
    for (int64_t r = 0; r < rows; r++) {
        int64_t v = lab->dtype == MF_INT32 ? ((const int32_t *)p)[r] : ((const int64_t *)p)[r];
        if (v < 1 || v > n)
            return mf_err_set(MF_EARG, "%s: label %lld at position %lld is out of range 1..%lld "
                              "(labels are 1-based class numbers)", op_api(c), (long long)v,
                              (long long)(r + 1), (long long)n);
        cls[r] = v - 1;
    }
    return MF_OK;
}

#define SPARSE_XENT_KERNEL(T, SUF, EXPF, LOGF)                                           \
    static void sparse_xent_##SUF(const T *x, const int64_t *cls, T *loss, T *bp,        \
                                  int64_t rows, int64_t n)                               \
    {                                                                                    \
        for (int64_t r = 0; r < rows; r++) {                                             \
            const T *xr = x + r * n;                                                     \
            T *br = bp + r * n, m = xr[0], s = 0;                                        \
            for (int64_t j = 1; j < n; j++)                                              \
                m = xr[j] > m ? xr[j] : m;                                               \
            for (int64_t j = 0; j < n; j++)                                              \
                s += EXPF(xr[j] - m);                                                    \
            T ls = LOGF(s);                                                              \
            for (int64_t j = 0; j < n; j++)                                              \
                br[j] = EXPF(xr[j] - m - ls);                                            \
            br[cls[r]] -= 1;                                                             \
            loss[r] = ls + m - xr[cls[r]];                                               \
        }                                                                                \
    }

/* float32: the inlined exp of fast_mathf.h (about 1 ulp; the softmax pass
 * vectorizes): libm's expf per element was most of an LSTM LM's loss */
SPARSE_XENT_KERNEL(float, f32, mf_expf_fast, logf)
SPARSE_XENT_KERNEL(double, f64, exp, log)

static MfStatus sparse_xent_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *lab = x ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    int64_t n = x ? x->shape[x->rank - 1] : 0;
    int64_t rows = x ? dims_product(x->shape, 0, x->rank - 1) : 0;
    size_t nbytes = (size_t)rows * sizeof(int64_t);
    int64_t *cls = lab && rows > 0 ? mf_alloc(nbytes) : NULL;
    MfStatus st = !lab || (rows > 0 && !cls) ? mf_err_nomem(op_api(c), nbytes) : MF_OK;
    if (st == MF_OK)
        st = read_labels(c, lab, rows, n, cls);
    if (st == MF_OK && x->dtype == MF_FLOAT32)
        sparse_xent_f32(mf_tensor_data(x), cls, mf_tensor_data(outs[0]),
                        mf_tensor_data(outs[1]), rows, n);
    else if (st == MF_OK)
        sparse_xent_f64(mf_tensor_data(x), cls, mf_tensor_data(outs[0]),
                        mf_tensor_data(outs[1]), rows, n);
    if (cls)
        mf_dealloc(cls, nbytes);
    mf_tensor_release(x);
    mf_tensor_release(lab);
    return st;
}

/* As xent_entry; float labels beside integer or lower-rank logits are
 * PyTorch's (logits, labels) order, refused by name. */
static MfStatus sparse_xent_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                  MfTensor **outs, int *nout)
{
    static const char fname[] = "sparse_softmax_cross_entropy_with_logits";
    const MfTensor *labels = in[0], *logits = in[1];
    (void)n;
    *nout = 1;
    if (mf_dtype_is_float(labels->dtype) &&
        (!mf_dtype_is_float(logits->dtype) || logits->rank < labels->rank))
        return mf_err_set(MF_EARG, "%s: labels are %s and logits %s: the order is (labels, "
                          "logits), as TensorFlow's; prefer %s{labels = ..., logits = ...}",
                          fname, mf_dtype_name(labels->dtype), mf_dtype_name(logits->dtype),
                          fname);
    return mf_sparse_softmax_cross_entropy_axis(in[0], in[1], a->axis, outs);
}

const MfOpDesc mf_desc_sparse_softmax_xent = {
    .name = "SparseSoftmaxCrossEntropyWithLogits",
    .api = "sparse_softmax_cross_entropy_with_logits",
    .arity = 2, .flags = MF_OP_KEYWORD_INPUTS, .infer = sparse_xent_infer,
    .forward = sparse_xent_forward, .backward = mf_sparse_xent_grad, .cost = xent_cost,
    .lua = "nn.sparse_softmax_cross_entropy_with_logits", .inputs = "labels, logits",
    .attrs = xent_attrs, .nattrs = MF_NATTRS(xent_attrs), .index_inputs = 1u << 0,
    .like_inputs = 1u << 1, .axis_input = 1, .entry = sparse_xent_entry,
    .summary = "cross-entropy of softmax(logits) against 1-based class labels, per row",
    .topic = "nn",
    .details =
        "Softmax cross-entropy with 'labels' given as class numbers 1..C (1-based; an int32 / "
        "int64 tensor or a Lua array) shaped like logits without its class axis (of size C; the "
        "last by default). A label outside 1..C is an error. Called as "
        "mf.nn.softmax_cross_entropy_with_logits is. The gradient flows to the logits only.",
    .example =
        "mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {2}, logits = mf.tensor{{0, 0}}}"
        "   --> {0.6931}",
};

/* ---- BiasAdd ------------------------------------------------------------------ */

static int bias_axis(const MfOpCall *c, int rank)
{
    return c->attrs->data_format == MF_NCHW ? 1 : rank - 1;
}

static MfStatus bias_add_infer(MfOpCall *c)
{
    const MfTensor *v = c->inputs[0], *b = c->inputs[1];
    MfStatus st = mf_check_same_dtype(c, v, b);
    if (st == MF_OK)
        st = mf_check_dtype(c, v, MF_NUMERIC, "a numeric dtype");
    if (st != MF_OK)
        return st;
    int min_rank = c->attrs->data_format == MF_NCHW ? 2 : 1;
    if (v->rank < min_rank)
        return mf_err_set(MF_ESHAPE, "%s: value must have rank >= %d, got rank %d", op_api(c),
                          min_rank, v->rank);
    int ax = bias_axis(c, v->rank);
    if (b->rank != 1 || (b->shape[0] >= 0 && v->shape[ax] >= 0 && b->shape[0] != v->shape[ax])) {
        char a[96], s[96];
        return mf_err_set(MF_ESHAPE, "%s: bias must be 1-D with the size of value's %s axis "
                          "(%lld), got bias %s for value %s", op_api(c),
                          c->attrs->data_format == MF_NCHW ? "channel (2nd)" : "last",
                          (long long)v->shape[ax],
                          mf_shape_str(b->rank, b->shape, a, sizeof a),
                          mf_shape_str(v->rank, v->shape, s, sizeof s));
    }
    mf_spec_like(c, v, v->dtype);
    return MF_OK;
}

/* Rows [o0, o1) of the outer dims; 'j' holds the tensors and sizes. */
#define BIAS_ROWS(T)                                                                     \
    do {                                                                                 \
        const T *x = j->x, *bb = j->b;                                                   \
        T *y = j->y;                                                                     \
        int64_t nc = j->nc, inner = j->inner;                                            \
        for (int64_t o = o0; o < o1; o++) {                                              \
            if (inner == 1) { /* NHWC: a whole row of channels, vectorized */            \
                for (int64_t k = 0; k < nc; k++)                                         \
                    y[o * nc + k] = x[o * nc + k] + bb[k];                               \
                continue;                                                                \
            }                                                                            \
            for (int64_t k = 0; k < nc; k++) {                                           \
                int64_t base = (o * nc + k) * inner;                                     \
                for (int64_t i = 0; i < inner; i++)                                      \
                    y[base + i] = x[base + i] + bb[k];                                   \
            }                                                                            \
        }                                                                                \
    } while (0)

typedef struct BiasJob {
    MfDType dt;
    const void *x, *b;
    void *y;
    int64_t nc, inner;
} BiasJob;

static void bias_chunk(void *ctx, int64_t o0, int64_t o1)
{
    const BiasJob *j = ctx;
    switch (j->dt) {
    case MF_FLOAT32: BIAS_ROWS(float); break;
    case MF_FLOAT64: BIAS_ROWS(double); break;
    case MF_INT32: BIAS_ROWS(int32_t); break;
    default: BIAS_ROWS(int64_t); break;
    }
}

static MfStatus bias_add_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *v = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *b = v ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!b) {
        mf_tensor_release(v);
        return MF_ENOMEM;
    }
    int ax = bias_axis(c, v->rank);
    int64_t outer = dims_product(v->shape, 0, ax), nc = v->shape[ax];
    int64_t inner = dims_product(v->shape, ax + 1, v->rank);
    BiasJob job = {v->dtype, mf_tensor_data(v), mf_tensor_data(b), mf_tensor_data(outs[0]), nc,
                   inner};
    int64_t row = nc * inner > 0 ? nc * inner : 1; /* shares of at least 64K elements */
    mf_parallel_for(outer, (65536 + row - 1) / row, bias_chunk, &job);
    mf_tensor_release(v);
    mf_tensor_release(b);
    return MF_OK;
}

static const MfAttrDef bias_add_attrs[] = {
    {"data_format", MF_ATTR_ENUM, 0, MF_ATTR_AT(data_format), 0, 0, mf_data_format_names, NULL},
};

const MfOpDesc mf_desc_bias_add = {
    .name = "BiasAdd", .api = "bias_add", .arity = 2, .flags = 0,
    .infer = bias_add_infer, .forward = bias_add_forward, .backward = mf_bias_add_grad,
    .cost = mf_cost_elementwise, .attrs = bias_add_attrs, .nattrs = MF_NATTRS(bias_add_attrs),
    .lua = "nn.bias_add", .inputs = "value, bias",
    .summary = "value + bias along the channel axis (the last, or the 2nd with NCHW)",
    .topic = "nn",
    .details =
        "value + bias with the 1-D 'bias' added along the last axis (data_format \"NHWC\", the "
        "default) or along axis 2 (\"NCHW\"); its size must match that axis. The bias gradient "
        "sums over every other axis.",
    .example =
        "mf.nn.bias_add(mf.tensor{{1, 2}, {3, 4}}, {10, 20})   --> {{11, 22}, {13, 24}}",
};

/* ---- the C entry points ------------------------------------------------------- */

static MfStatus call_axis(MfOpId op, MfTensor *x, int64_t axis, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.axis = axis;
    return mf_op1(op, 1, &x, &a, out);
}

MfStatus mf_softmax(MfTensor *x, int64_t axis, MfTensor **out)
{
    return call_axis(MF_OP_SOFTMAX, x, axis, out);
}

MfStatus mf_log_softmax(MfTensor *x, int64_t axis, MfTensor **out)
{
    return call_axis(MF_OP_LOG_SOFTMAX, x, axis, out);
}

/* Runs a cross-entropy op and keeps only its loss output. */
static MfStatus xent_loss(MfOpId op, MfTensor *labels, MfTensor *logits, MfTensor **out)
{
    MfTensor *in[2] = {logits, labels}, *outs[MF_MAX_OUTPUTS];
    MfAttrs a = mf_attrs_default();
    a.axis = logits->rank - 1;   /* the class axis is last here (the schema's default) */
    *out = NULL;
    MfStatus st = mf_op_call(op, 2, in, &a, outs, NULL);
    if (st != MF_OK)
        return st;
    *out = outs[0];
    for (int i = 1; i < MF_MAX_OUTPUTS; i++)
        mf_tensor_release(outs[i]);
    return MF_OK;
}

/* 'labels' broadcast to the logits' shape (TensorFlow 2's cross-entropies
 * broadcast them); as it is when the shapes match or do not broadcast (the
 * op then reports the shapes). */
static MfStatus broadcast_labels(MfTensor *labels, MfTensor *logits, MfTensor **out)
{
    int r;
    int64_t s[MF_MAX_RANK];
    bool same = mf_shape_equal(labels->rank, labels->shape, logits->rank, logits->shape);
    for (int d = 0; same && d < logits->rank; d++)   /* unknown dims: known when it runs */
        same = logits->shape[d] >= 0;
    if (!same && mf_broadcast_shapes("cross_entropy", labels->rank, labels->shape, logits->rank,
                                     logits->shape, &r, s) == MF_OK &&
        mf_shape_equal(r, s, logits->rank, logits->shape))
        return mf_grad_broadcast_like(labels, logits, out);
    mf_err_clear();
    mf_tensor_retain(labels);
    *out = labels;
    return MF_OK;
}

/* 't' with axis 'axis' (0-based) moved to the end, the others in order
 * (TensorFlow's _move_dim_to_end); 't' itself when it is already last. */
static MfStatus move_axis_last(MfTensor *t, int64_t axis, MfTensor **out)
{
    if (axis == t->rank - 1) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    int64_t perm[MF_MAX_RANK];
    int k = 0;
    for (int d = 0; d < t->rank; d++)
        if (d != axis)
            perm[k++] = d;
    perm[k] = axis;
    return mf_transpose(t, perm, t->rank, out);
}

/* A cross-entropy over class axis 'axis' (0-based; -1: the last): the
 * class axis of the logits (and of dense labels, broadcast first) moved
 * to the end, then the op; the loss keeps the other axes in order. */
static MfStatus xent_axis(MfOpId op, MfTensor *labels, MfTensor *logits, int64_t axis,
                          MfTensor **out)
{
    MfTensor *lb = NULL, *lg = NULL, *lbm = NULL;
    *out = NULL;
    if (axis < 0)
        axis += logits->rank;
    if (axis < 0 || axis >= logits->rank)
        return mf_err_set(MF_EARG, "%s: axis %lld is out of range for logits of rank %d",
                          mf_op_table[op]->api, (long long)axis, logits->rank);
    bool dense = op == MF_OP_SOFTMAX_XENT;
    MfStatus st = dense ? broadcast_labels(labels, logits, &lb) : MF_OK;
    if (st == MF_OK)
        st = move_axis_last(logits, axis, &lg);
    if (st == MF_OK && dense)
        st = move_axis_last(lb, axis, &lbm);
    if (st == MF_OK)
        st = xent_loss(op, dense ? lbm : labels, lg, out);
    mf_tensor_release(lb);
    mf_tensor_release(lg);
    mf_tensor_release(lbm);
    return st;
}

MfStatus mf_softmax_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out)
{
    return xent_axis(MF_OP_SOFTMAX_XENT, labels, logits, -1, out);
}

MfStatus mf_sparse_softmax_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out)
{
    return xent_axis(MF_OP_SPARSE_SOFTMAX_XENT, labels, logits, -1, out);
}

MfStatus mf_softmax_cross_entropy_axis(MfTensor *labels, MfTensor *logits, int64_t axis,
                                       MfTensor **out)
{
    return xent_axis(MF_OP_SOFTMAX_XENT, labels, logits, axis, out);
}

MfStatus mf_sparse_softmax_cross_entropy_axis(MfTensor *labels, MfTensor *logits, int64_t axis,
                                              MfTensor **out)
{
    return xent_axis(MF_OP_SPARSE_SOFTMAX_XENT, labels, logits, axis, out);
}

/* Checks a composite's float input: "WHO: expected a float dtype ...". */
static MfStatus check_float(const char *who, const char *what, const MfTensor *t)
{
    if (mf_grad_is_float(t->dtype))
        return MF_OK;
    return mf_err_set(MF_EDTYPE, "%s: expected float %s (float32 or float64; use mf.cast), got %s",
                      who, what, mf_dtype_name(t->dtype));
}

MfStatus mf_sigmoid_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out)
{
    static const char who[] = "sigmoid_cross_entropy_with_logits";
    MfTensor *t[8] = {0};
    *out = NULL;
    MfStatus st = check_float(who, "logits", logits);
    if (st == MF_OK && labels->dtype == logits->dtype && (st = broadcast_labels(labels, logits,
                                                                              &t[7])) == MF_OK)
        labels = t[7];
    if (st == MF_OK && labels->dtype != logits->dtype)
        st = mf_err_set(MF_EDTYPE, "%s: dtypes differ: labels %s and logits %s (convert one with "
                        "mf.cast)", who, mf_dtype_name(labels->dtype),
                        mf_dtype_name(logits->dtype));
    if (st == MF_OK && (labels->rank != logits->rank ||
                        !dims_match(logits->rank, logits->shape, labels->shape))) {
        char a[96], b[96];
        st = mf_err_set(MF_ESHAPE, "%s: labels and logits must have the same shape, got labels "
                        "%s and logits %s", who, mf_shape_str(labels->rank, labels->shape, a, 96),
                        mf_shape_str(logits->rank, logits->shape, b, sizeof b));
    }
    /* relu(x) - x * z + log1p(exp(-|x|)) */
    if (st == MF_OK)
        st = mf_unary(MF_OP_RELU, logits, &t[0]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, logits, labels, &t[1]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_SUB, t[0], t[1], &t[2]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_ABS, logits, &t[3]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_NEG, t[3], &t[4]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_EXP, t[4], &t[5]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_LOG1P, t[5], &t[6]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, t[2], t[6], out);
    for (int i = 0; i < 8; i++)
        mf_tensor_release(t[i]);
    return st;
}

MfStatus mf_l2_loss(MfTensor *t, MfTensor **out)
{
    MfTensor *sq = NULL, *sum = NULL;
    *out = NULL;
    MfStatus st = check_float("l2_loss", "input", t);
    if (st == MF_OK)
        st = mf_unary(MF_OP_SQUARE, t, &sq);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, sq, NULL, 0, false, &sum);
    if (st == MF_OK)
        st = mf_grad_scale(sum, 0.5, out);
    mf_tensor_release(sq);
    mf_tensor_release(sum);
    return st;
}

/* The composites' faces (core/op.h mf_composite_table): an error of an op
 * inside them (square, relu, log1p...) still names the function called. */
static MfStatus named(MfStatus st, const char *fname)
{
    size_t n = strlen(fname);
    if (st != MF_OK && (strncmp(mf_err_msg(), fname, n) != 0 || mf_err_msg()[n] != ':'))
        mf_err_prefix("%s", fname);
    return st;
}

static MfStatus l2_loss_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                              int *nout)
{
    (void)n, (void)a;
    *nout = 1;
    return named(mf_l2_loss(in[0], outs), "l2_loss");
}

const MfOpDesc mf_desc_l2_loss = {
    .name = "l2_loss", .api = "l2_loss", .arity = 1, .lua = "nn.l2_loss", .inputs = "t",
    .entry = l2_loss_entry, .topic = "nn",
    .summary = "half the sum of squares, sum(t ^ 2) / 2, as a scalar (no square root), e.g. "
               "for weight decay",
    .details = "Float dtypes.",
    .example = "mf.nn.l2_loss(mf.tensor{1, 2, 3})                --> 7",
};

static MfStatus sigmoid_xent_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                   MfTensor **outs, int *nout)
{
    (void)n, (void)a;
    *nout = 1;
    return named(mf_sigmoid_cross_entropy(in[0], in[1], outs),
                 "sigmoid_cross_entropy_with_logits");
}

const MfOpDesc mf_desc_sigmoid_xent = {
    .name = "sigmoid_cross_entropy_with_logits", .api = "sigmoid_cross_entropy_with_logits",
    .arity = 2, .flags = MF_OP_KEYWORD_INPUTS, .lua = "nn.sigmoid_cross_entropy_with_logits",
    .inputs = "labels, logits", .like_inputs = 1u << 0 | 1u << 1,
    .entry = sigmoid_xent_entry, .topic = "nn",
    .summary = "elementwise logistic loss of independent binary labels z for logits x, "
               "TensorFlow's stable form max(x, 0) - x * z + log(1 + exp(-|x|))",
    .details = "Labels and logits have one shape (Lua arrays take logits' dtype). Call it "
               "with TensorFlow's keywords, {labels = ..., logits = ...}, or as (labels, "
               "logits).",
    .example = "mf.nn.sigmoid_cross_entropy_with_logits{labels = mf.tensor{1}, "
               "logits = mf.tensor{0}}   --> {0.6931}",
};

MfStatus mf_bias_add(MfTensor *value, MfTensor *bias, bool nchw, MfTensor **out)
{
    MfTensor *in[2] = {value, bias};
    MfAttrs a = mf_attrs_default();
    a.data_format = nchw ? 1 : 0;
    return mf_op1(MF_OP_BIAS_ADD, 2, in, &a, out);
}

/* Uniform [0, 1) values of x's shape: its static shape when known, else
 * Shape(x) read when the graph runs (a placeholder with -1 dims). */
static MfStatus uniform_like(MfTensor *x, uint64_t seed, MfTensor **out)
{
    bool known = true;
    for (int d = 0; d < x->rank; d++)
        known = known && x->shape[d] >= 0;
    if (known)
        return mf_random_uniform(x->rank, x->shape, x->dtype, 0, 1, seed, out);
    MfTensor *shape = NULL;
    MfStatus st = mf_unary(MF_OP_SHAPE, x, &shape);
    if (st == MF_OK)
        st = mf_random_shaped_by(MF_OP_RANDOM_UNIFORM, shape, x->dtype, 0, 1, seed, out);
    mf_tensor_release(shape);
    return st;
}

/* x * scale * cast(uniform >= rate): 'rate' and 'scale' are rank-0 tensors
 * of x's dtype, or NULL for the numbers 'r' and 1 / (1 - r). */
static MfStatus dropout_mask(MfTensor *x, MfTensor *rate, MfTensor *scale, double r,
                             uint64_t seed, MfTensor **out)
{
    MfTensor *t[5] = {0};
    MfStatus st = uniform_like(x, seed, &t[0]);
    if (st == MF_OK && !rate)
        st = mf_grad_const(x, r, &t[1]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_GREATER_EQUAL, t[0], rate ? rate : t[1], &t[2]);
    if (st == MF_OK)
        st = mf_cast(t[2], x->dtype, &t[3]);
    if (st == MF_OK)
        st = scale ? mf_binary(MF_OP_MUL, x, scale, &t[4]) : mf_grad_scale(x, 1 / (1 - r), &t[4]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, t[4], t[3], out);
    for (int i = 0; i < 5; i++)
        mf_tensor_release(t[i]);
    return st;
}

/* Dropout is composed of ops: x * (1 / (1 - rate)) * cast(uniform >= rate).
 * In a graph the uniform node draws a fresh mask on each run (core/rng.h),
 * and the gradient multiplies by the mask node's output of the same run,
 * so forward and backward never disagree. */
MfStatus mf_dropout(MfTensor *x, double rate, uint64_t seed, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_float("dropout", "x", x);
    if (st == MF_OK && !(rate >= 0 && rate < 1))
        st = mf_err_set(MF_EARG, "dropout: rate must be in [0, 1) (the fraction of elements "
                        "dropped), got %g", rate);
    if (st == MF_OK && rate == 0) {
        mf_tensor_retain(x);
        *out = x;
        return MF_OK;
    }
    return st == MF_OK ? dropout_mask(x, NULL, NULL, rate, seed, out) : st;
}

/* TensorFlow 1.x's keep_prob or 2.x's rate as a tensor (a placeholder fed
 * per run): a concrete one is checked and taken as a number; a symbolic one
 * gives rate = 1 - keep (or keep = 1 - rate) and the scale 1 / keep as
 * nodes, so feeding keep_prob 1 gives x * 1 * 1 exactly. */
MfStatus mf_dropout_by(MfTensor *x, MfTensor *p, bool keep_prob, uint64_t seed, MfTensor **out)
{
    const char *what = keep_prob ? "keep_prob" : "rate";
    *out = NULL;
    MfStatus st = check_float("dropout", "x", x);
    if (st == MF_OK && (p->rank != 0 || p->dtype != x->dtype))
        st = mf_err_set(MF_EARG, "dropout: %s must be a scalar of x's dtype %s, got %s of rank "
                        "%d", what, mf_dtype_name(x->dtype), mf_dtype_name(p->dtype), p->rank);
    if (st != MF_OK)
        return st;
    if (p->storage) {
        double v = mf_tensor_get(p, 0);
        if (keep_prob && !(v > 0 && v <= 1))
            return mf_err_set(MF_EARG, "dropout: keep_prob must be in (0, 1], got %g", v);
        return mf_dropout(x, keep_prob ? 1 - v : v, seed, out);
    }
    MfTensor *one = NULL, *other = NULL, *scale = NULL;
    st = mf_grad_const(x, 1, &one);
    if (st == MF_OK)
        st = mf_binary(MF_OP_SUB, one, p, &other);   /* rate from keep_prob or keep from rate */
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, one, keep_prob ? p : other, &scale);
    if (st == MF_OK)
        st = dropout_mask(x, keep_prob ? other : p, scale, 0, seed, out);
    mf_tensor_release(one);
    mf_tensor_release(other);
    mf_tensor_release(scale);
    return st;
}

MfStatus mf_dropout_number(MfTensor *x, double v, bool keep_prob, bool has_seed, int64_t seed,
                           MfTensor **out)
{
    *out = NULL;
    if (keep_prob && !(v > 0 && v <= 1))
        return mf_err_set(MF_EARG, "dropout: keep_prob must be in (0, 1], got %g", v);
    double rate = keep_prob ? 1 - v : v;
    /* no mask is drawn at rate 0 (or refused at 1): the seed sequence stays */
    uint64_t s = rate > 0 && rate < 1 ? mf_rng_op_seed(has_seed, seed) : 0;
    return mf_dropout(x, rate, s, out);
}

MfStatus mf_dropout_tensor(MfTensor *x, MfTensor *p, bool keep_prob, bool has_seed,
                           int64_t seed, MfTensor **out)
{
    return mf_dropout_by(x, p, keep_prob, mf_rng_op_seed(has_seed, seed), out);
}
