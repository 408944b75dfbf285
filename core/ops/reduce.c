/* reduce.c — reductions (Sum, Mean, Max, Min, Prod) and arg-reductions
 * (ArgMax, ArgMin).
 *
 * Reductions read 'attrs.axes' / 'naxes' (0-based; negative counts from the
 * end), 'attrs.all_axes' and 'attrs.keepdims'. No axes and not 'all_axes'
 * reduces nothing (TensorFlow's axis=[]). Arg-reductions read 'attrs.axis'
 * and return int64 positions that are 1-based, as every index in moonflow.
 *
 * The kernel is mf_reduce_into (reduce_walk.c: one pass in the input's own
 * layout, blocked pairwise float sums in double, the same bits on any thread
 * count). Integer sums and products wrap, as TensorFlow's. Max and min
 * propagate NaN. The integer mean is integer division (truncating), as
 * TensorFlow's.
 *
 * Empty reductions: sum 0, prod 1, a float mean NaN; max, min, argmax and
 * argmin of an empty axis, and an integer mean over one, are errors that name
 * the axis (1-based, as the user sees it). */
#include <math.h>

#include "../alloc.h"
#include "../parallel.h"
#include "common.h"
#include "grads_math.h"
#include "reduce.h"
#include "reduce_walk.h"

/* ---- shape inference --------------------------------------------------------- */

static MfReduceKind op_kind(MfOpId op)
{
    switch (op) {
    case MF_OP_PROD: return MF_REDUCE_PROD;
    case MF_OP_MAX: return MF_REDUCE_MAX;
    case MF_OP_MIN: return MF_REDUCE_MIN;
    case MF_OP_MEAN: return MF_REDUCE_MEAN;
    default: return MF_REDUCE_SUM;
    }
}

/* Normalises axis 'ax' for 'rank' into '*out'; messages are 1-based. */
static MfStatus norm_axis(const MfOpCall *c, int64_t ax, int rank, int64_t *out)
{
    if (ax < 0)
        ax += rank;
    if (rank == 0)
        return mf_err_set(MF_EARG, "%s: a scalar has no axes (got axis %lld)", op_api(c),
                          (long long)(ax + 1));
    if (ax < 0 || ax >= rank)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d (axes are 1-based: "
                          "1..%d, or -%d..-1)", op_api(c), (long long)(ax + 1), rank, rank, rank);
    *out = ax;
    return MF_OK;
}

/* Fills 'reduced[i]' for each dim of 'x' from the attributes. */
static MfStatus reduced_dims(const MfOpCall *c, const MfTensor *x, bool *reduced)
{
    const MfAttrs *a = c->attrs;
    for (int i = 0; i < x->rank; i++)
        reduced[i] = a->all_axes;
    if (a->all_axes)
        return MF_OK;
    if (a->naxes < 0 || a->naxes > MF_MAX_RANK)
        return mf_err_set(MF_EARG, "%s: expected at most %d axes, got %d", op_api(c),
                          MF_MAX_RANK, a->naxes);
    for (int k = 0; k < a->naxes; k++) {
        int64_t ax;
        MfStatus st = norm_axis(c, a->axes[k], x->rank, &ax);
        if (st != MF_OK)
            return st;
        if (reduced[ax])
            return mf_err_set(MF_EARG, "%s: axis %lld is listed twice", op_api(c),
                              (long long)(ax + 1));
        reduced[ax] = true;
    }
    return MF_OK;
}

/* Refuses an empty reduced axis where the result has no identity. */
static MfStatus check_empty(const MfOpCall *c, const MfTensor *x, const bool *reduced,
                            bool has_identity)
{
    int64_t outn = 1;
    for (int i = 0; i < x->rank; i++)
        if (!reduced[i])
            outn *= x->shape[i];
    if (has_identity || outn == 0)
        return MF_OK;
    for (int i = 0; i < x->rank; i++)
        if (reduced[i] && x->shape[i] == 0)
            return mf_err_set(MF_EARG, "%s: axis %d has size 0 and an empty reduction has no "
                              "value (axes are 1-based)", op_api(c), i + 1);
    return MF_OK;
}

/* Sum and prod have an identity, and so does a float mean (NaN). */
static bool has_identity(const MfOpCall *c, const MfTensor *x)
{
    MfReduceKind k = op_kind(c->op);
    return k == MF_REDUCE_SUM || k == MF_REDUCE_PROD
           || (k == MF_REDUCE_MEAN && mf_dtype_is_float(x->dtype));
}

static MfStatus reduce_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    bool reduced[MF_MAX_RANK];
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC,
                                 "a numeric dtype (float32, float64, int32, int64)");
    if (st == MF_OK)
        st = reduced_dims(c, x, reduced);
    if (st != MF_OK)
        return st;
    if ((st = check_empty(c, x, reduced, has_identity(c, x))) != MF_OK)
        return st;
    mf_reduce_spec(c, reduced);
    return MF_OK;
}

MfStatus mf_reduce_dims(const MfOpCall *c, bool *reduced)
{
    return reduced_dims(c, c->inputs[0], reduced);
}

void mf_reduce_spec(MfOpCall *c, const bool *reduced)
{
    const MfTensor *x = c->inputs[0];
    MfTensorSpec *o = &c->out[0];
    c->noutputs = 1;
    o->dtype = x->dtype;
    o->rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!reduced[i])
            o->shape[o->rank++] = x->shape[i];
        else if (c->attrs->keepdims)
            o->shape[o->rank++] = 1;
    }
}

static MfStatus reduce_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    bool reduced[MF_MAX_RANK];
    /* checked again here: graph mode may infer with unknown dims */
    MfStatus st = reduced_dims(c, x, reduced);
    if (st == MF_OK)
        st = check_empty(c, x, reduced, has_identity(c, x));
    if (st != MF_OK)
        return st;
    return mf_reduce_into(op_kind(c->op), x, reduced, outs[0], op_api(c));
}

/* ---- arg-reductions ---------------------------------------------------------------- */

static MfStatus arg_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    int64_t ax;
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC,
                                 "a numeric dtype (float32, float64, int32, int64)");
    if (st == MF_OK)
        st = norm_axis(c, c->attrs->axis, x->rank, &ax);
    if (st != MF_OK)
        return st;
    bool reduced[MF_MAX_RANK] = {false};
    reduced[ax] = true;
    if ((st = check_empty(c, x, reduced, false)) != MF_OK)
        return st;
    MfTensorSpec *o = &c->out[0];
    c->noutputs = 1;
    o->dtype = MF_INT64;
    o->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (i != ax)
            o->shape[o->rank++] = x->shape[i];
    return MF_OK;
}

/* 'v' replaces the best 'b' so far: strictly better, or the first NaN
 * (nothing compares greater than a NaN 'b', so a NaN stays). */
#define FGT(v, b) ((v) > (b) || (isnan(v) && !isnan(b)))
#define FLT(v, b) ((v) < (b) || (isnan(v) && !isnan(b)))
#define IGT(v, b) ((v) > (b))
#define ILT(v, b) ((v) < (b))

/* Along an axis before the last, over a contiguous [outer, n, inner] block
 * (inner > 1): rows of 'inner' candidates are compared with a running best
 * row in 'best' (scratch of 'inner' elements); the loops vectorise. */
#define DEFINE_ARG_ROWS(NAME, T, BETTER)                                          \
    static void NAME(const T *x, int64_t outer, int64_t n, int64_t inner,        \
                     int64_t *out, void *scratch)                                 \
    {                                                                             \
        T *best = scratch;                                                        \
        for (int64_t o = 0; o < outer; o++) {                                     \
            const T *blk = x + o * n * inner;                                     \
            int64_t *res = out + o * inner;                                       \
            for (int64_t i = 0; i < inner; i++) {                                 \
                best[i] = blk[i];                                                 \
                res[i] = 1;                                                       \
            }                                                                     \
            for (int64_t k = 1; k < n; k++) {                                     \
                const T *row = blk + k * inner;                                   \
                for (int64_t i = 0; i < inner; i++)                               \
                    if (BETTER(row[i], best[i])) {                                \
                        best[i] = row[i];                                         \
                        res[i] = k + 1;                                           \
                    }                                                             \
            }                                                                     \
        }                                                                         \
    }

DEFINE_ARG_ROWS(argmax_rows_f32, float, FGT)
DEFINE_ARG_ROWS(argmax_rows_f64, double, FGT)
DEFINE_ARG_ROWS(argmax_rows_i32, int32_t, IGT)
DEFINE_ARG_ROWS(argmax_rows_i64, int64_t, IGT)
DEFINE_ARG_ROWS(argmin_rows_f32, float, FLT)
DEFINE_ARG_ROWS(argmin_rows_f64, double, FLT)
DEFINE_ARG_ROWS(argmin_rows_i32, int32_t, ILT)
DEFINE_ARG_ROWS(argmin_rows_i64, int64_t, ILT)

static void arg_rows(bool is_max, const MfTensor *x, int64_t outer, int64_t n, int64_t inner,
                     int64_t *out, void *scratch)
{
    const void *d = mf_tensor_data(x);
    switch (x->dtype) {
    case MF_FLOAT32: (is_max ? argmax_rows_f32 : argmin_rows_f32)(d, outer, n, inner, out, scratch); break;
    case MF_FLOAT64: (is_max ? argmax_rows_f64 : argmin_rows_f64)(d, outer, n, inner, out, scratch); break;
    case MF_INT32: (is_max ? argmax_rows_i32 : argmin_rows_i32)(d, outer, n, inner, out, scratch); break;
    default: (is_max ? argmax_rows_i64 : argmin_rows_i64)(d, outer, n, inner, out, scratch); break;
    }
}

/* Along the last axis: the first position in each row of 'n' where 'x'
 * holds 'best' (the row's max or min by the vectorised reduction, NaN when
 * the row has one: then the first NaN). A scalar scan that compares each
 * element with one value, where a running best would branch on every
 * element. */
#define DEFINE_FIND_FIRST(NAME, T)                                                \
    static void NAME(const T *x, const T *best, int64_t rows, int64_t n,          \
                     int64_t *out)                                                \
    {                                                                             \
        for (int64_t o = 0; o < rows; o++) {                                      \
            const T *row = x + o * n;                                             \
            T m = best[o];                                                        \
            int64_t k = 0;                                                        \
            if (m != m)                                                           \
                while (k < n - 1 && row[k] == row[k])                             \
                    k++;                                                          \
            else                                                                  \
                while (k < n - 1 && row[k] != m)                                  \
                    k++;                                                          \
            out[o] = k + 1;                                                       \
        }                                                                         \
    }

DEFINE_FIND_FIRST(find_first_f32, float)
DEFINE_FIND_FIRST(find_first_f64, double)
DEFINE_FIND_FIRST(find_first_i32, int32_t)
DEFINE_FIND_FIRST(find_first_i64, int64_t)

static void find_first(const MfTensor *x, const MfTensor *best, int64_t rows, int64_t n,
                       int64_t *out)
{
    const void *d = mf_tensor_data(x), *b = mf_tensor_data(best);
    switch (x->dtype) {
    case MF_FLOAT32: find_first_f32(d, b, rows, n, out); break;
    case MF_FLOAT64: find_first_f64(d, b, rows, n, out); break;
    case MF_INT32: find_first_i32(d, b, rows, n, out); break;
    default: find_first_i64(d, b, rows, n, out); break;
    }
}

/* Axis 'ax' with only 1s after it (rows of 'n' in 'xc'): the max (min) by
 * mf_reduce_into, then its first position. */
static MfStatus arg_last_axis(const MfOpCall *c, const MfTensor *xc, int64_t ax, int64_t rows,
                              int64_t n, int64_t *out)
{
    int64_t shape[MF_MAX_RANK];
    bool reduced[MF_MAX_RANK] = {false};
    for (int i = 0; i < xc->rank; i++)
        shape[i] = i == ax ? 1 : xc->shape[i];
    reduced[ax] = true;
    MfTensor *best = mf_tensor_new(xc->dtype, xc->rank, shape);
    if (!best)
        return MF_ENOMEM;
    MfStatus st = mf_reduce_into(c->op == MF_OP_ARGMAX ? MF_REDUCE_MAX : MF_REDUCE_MIN, xc,
                                 reduced, best, op_api(c));
    if (st == MF_OK)
        find_first(xc, best, rows, n, out);
    mf_tensor_release(best);
    return st;
}

static MfStatus arg_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = c->inputs[0];
    int64_t ax;
    MfStatus st = norm_axis(c, c->attrs->axis, x->rank, &ax);
    if (st != MF_OK)
        return st;
    int64_t outer = 1, inner = 1, n = x->shape[ax];
    for (int i = 0; i < ax; i++)
        outer *= x->shape[i];
    for (int i = (int)ax + 1; i < x->rank; i++)
        inner *= x->shape[i];
    if (mf_tensor_numel(outs[0]) == 0)
        return MF_OK;
    if (n == 0) /* only reachable when inference saw an unknown dim */
        return mf_err_set(MF_EARG, "%s: axis %d has size 0 and an empty reduction has no "
                          "value (axes are 1-based)", op_api(c), (int)ax + 1);
    MfTensor *xc = mf_tensor_contiguous(x);
    if (!xc)
        return MF_ENOMEM;
    int64_t *out = mf_tensor_data(outs[0]);
    if (inner == 1) {
        st = arg_last_axis(c, xc, ax, outer, n, out);
        mf_tensor_release(xc);
        return st;
    }
    size_t nbytes = (size_t)inner * mf_dtype_size(x->dtype);
    void *scratch = mf_alloc(nbytes);
    if (!scratch) {
        mf_tensor_release(xc);
        return mf_err_nomem(op_api(c), nbytes);
    }
    arg_rows(c->op == MF_OP_ARGMAX, xc, outer, n, inner, out, scratch);
    mf_dealloc(scratch, nbytes);
    mf_tensor_release(xc);
    return MF_OK;
}

/* One FLOP per input element. */
static MfCost reduce_cost(const MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    double n = (double)mf_tensor_numel(x);
    double on = (double)mf_shape_numel(c->out[0].rank, c->out[0].shape);
    MfCost cost = {n, n * (double)mf_dtype_size(x->dtype) +
                          on * (double)mf_dtype_size(c->out[0].dtype)};
    return cost;
}

/* ---- descriptors and C shorthands ---------------------------------------------------- */

const MfAttrDef mf_reduce_attrs[MF_REDUCE_NATTRS] = {
    {"axis", MF_ATTR_AXES, MF_ATTR_POSITIONAL | MF_ATTR_ALL_AXES, MF_ATTR_AT(axes),
     MF_ATTR_AT(naxes), 0, NULL, NULL},
    {"keepdims", MF_ATTR_BOOL, MF_ATTR_POSITIONAL, MF_ATTR_AT(keepdims), 0, 0, NULL,
     "keep_dims"},
};

/* The default axis is 1 (TensorFlow's 0). */
static const MfAttrDef arg_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, 1, NULL, NULL},
};

#define REDUCE_OP(sym, tfname, apiname, inf, fwd, fl, bwd, schema, ...)           \
    const MfOpDesc sym = {                                                        \
        .name = tfname, .api = apiname, .arity = 1, .flags = (fl), .infer = inf,  \
        .forward = fwd, .backward = bwd, .cost = reduce_cost,                     \
        .attrs = schema, .nattrs = MF_NATTRS(schema), .lua = apiname, .inputs = "x", \
        .summary = __VA_ARGS__,                                                   \
    }

REDUCE_OP(mf_desc_sum, "Sum", "reduce_sum", reduce_infer, reduce_forward, 0, mf_sum_grad,
          mf_reduce_attrs, "sum over the given axes (all when none)",
    .topic = "reduce",
    .grad_note = "dx = dy broadcast back over the reduced axes",
    .details =
        "Sum of the elements over the given axes (1-based; a number or an array; negative counts "
        "from the end), or over all of them when no axis is given (a scalar). keepdims = true "
        "keeps the reduced axes with size 1 (TensorFlow 1.x's keep_dims is accepted too; an "
        "unknown option is an error, as in every function). Also a method: t:reduce_sum(2).",
    .example =
        "x = mf.tensor{{1, 2}, {3, 4}}\n"
        "mf.reduce_sum(x)                               --> 10\n"
        "mf.reduce_sum(x, 1)                            --> {4, 6}\n"
        "mf.reduce_sum(x, {axis = 2, keepdims = true})  --> {{3}, {7}}\n"
        "mf.reduce_sum(x, 1, {keep_dims = true})        --> {{4, 6}}");
REDUCE_OP(mf_desc_mean, "Mean", "reduce_mean", reduce_infer, reduce_forward, 0,
          mf_mean_grad, mf_reduce_attrs, "mean over the given axes (all when none)",
    .topic = "reduce",
    .grad_note = "dx = dy / n broadcast back over the reduced axes (n elements averaged)",
    .details =
        "Mean over the given axes (all when none), as mf.reduce_sum.",
    .example =
        "mf.reduce_mean(mf.tensor{{1, 2}, {3, 4}}, 2)   --> {1.5, 3.5}");
REDUCE_OP(mf_desc_max, "Max", "reduce_max", reduce_infer, reduce_forward, 0, mf_max_grad,
          mf_reduce_attrs, "maximum over the given axes (all when none)",
    .topic = "reduce",
    .details =
        "Largest element over the given axes (all when none).",
    .example =
        "mf.reduce_max(mf.tensor{{1, 2}, {3, 4}}, 1)    --> {3, 4}");
REDUCE_OP(mf_desc_min, "Min", "reduce_min", reduce_infer, reduce_forward, 0, mf_min_grad,
          mf_reduce_attrs, "minimum over the given axes (all when none)",
    .topic = "reduce",
    .details =
        "Smallest element over the given axes (all when none).",
    .example =
        "mf.reduce_min(mf.tensor{{1, 2}, {3, 4}})       --> 1");
REDUCE_OP(mf_desc_prod, "Prod", "reduce_prod", reduce_infer, reduce_forward, 0,
          mf_prod_grad, mf_reduce_attrs, "product over the given axes (all when none)",
    .topic = "reduce",
    .details =
        "Product of the elements over the given axes (all when none).",
    .example =
        "mf.reduce_prod(mf.tensor{{1, 2}, {3, 4}}, 2)   --> {2, 12}");
REDUCE_OP(mf_desc_argmax, "ArgMax", "argmax", arg_infer, arg_forward, MF_OP_NONDIFF, NULL,
          arg_attrs, "1-based int64 positions of the largest values along an axis",
    .topic = "reduce",
    .details =
        "1-based positions of the largest elements along 'axis' (default 1), as an int64 "
        "tensor with that axis removed. The first position wins ties.",
    .example =
        "mf.argmax(mf.tensor{{1, 9, 3}, {7, 2, 5}}, 2)  --> {2, 1}\n"
        "mf.argmax(mf.tensor{4, 8, 1})                  --> 2");
REDUCE_OP(mf_desc_argmin, "ArgMin", "argmin", arg_infer, arg_forward, MF_OP_NONDIFF,
          NULL, arg_attrs, "1-based int64 positions of the smallest values along an axis",
    .topic = "reduce",
    .details =
        "1-based positions of the smallest elements along 'axis' (default 1), as an int64 "
        "tensor with that axis removed.",
    .example =
        "mf.argmin(mf.tensor{{1, 9, 3}, {7, 2, 5}}, 2)  --> {1, 2}");

MfStatus mf_reduce(MfOpId op, MfTensor *t, const int64_t *axes, int naxes, bool keepdims,
                   MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.all_axes = axes == NULL;
    a.keepdims = keepdims;
    *out = NULL;
    if (axes && (naxes < 0 || naxes > MF_MAX_RANK))
        return mf_err_set(MF_EARG, "%s: expected at most %d axes, got %d",
                          mf_op_table[op]->api, MF_MAX_RANK, naxes);
    for (int i = 0; axes && i < naxes; i++)
        a.axes[i] = axes[i];
    a.naxes = axes ? naxes : 0;
    return mf_op1(op, 1, &t, &a, out);
}

MfStatus mf_argreduce(MfOpId op, MfTensor *t, int64_t axis, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.axis = axis;
    return mf_op1(op, 1, &t, &a, out);
}
