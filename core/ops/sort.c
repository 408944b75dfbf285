/* sort.c — ordering ops along one axis: TopKV2 (the k largest values of
 * each row of the last axis and their positions, as TensorFlow's top_k),
 * Sort and Argsort (the values in order, or the positions that order
 * them, as tf.sort / tf.argsort). Positions are 1-based int64, as every
 * index in moonflow. Orders are stable: equal values keep their input
 * order (TensorFlow's top_k: the lower index first). NaN counts as larger
 * than every number (NumPy puts it last in an ascending sort).
 *
 * Gradients (TensorFlow's): the values' gradient goes back to the
 * positions it came from, ScatterAlongAxis(x, positions, dy)
 * (along_axis.c); Sort recomputes its positions with Argsort. The
 * positions have no gradient. */
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "common.h"
#include "grads_math.h"

/* ---- the row sort ------------------------------------------------------ */

/* One element of a row: an unsigned key whose order is the wanted order
 * (ascending keys = the output's order), and its position. */
typedef struct Item {
    uint64_t key;
    int64_t pos;
} Item;

/* Order-preserving keys: a double's bits with the sign flipped in (NaN,
 * any payload, above +inf), an integer's with its sign bit flipped;
 * descending orders take the complement. */
static uint64_t float_key(double v)
{
    uint64_t u;
    if (v != v)
        return UINT64_MAX;
    v = v == 0 ? 0.0 : v; /* -0 sorts with 0, keeping input order */
    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static uint64_t row_key(const MfTensor *x, int64_t at, bool descending)
{
    const void *p = mf_tensor_data(x);
    uint64_t k;
    switch (x->dtype) {
    case MF_FLOAT32: k = float_key((double)((const float *)p)[at]); break;
    case MF_FLOAT64: k = float_key(((const double *)p)[at]); break;
    case MF_INT32: k = (uint64_t)(int64_t)((const int32_t *)p)[at] ^ (UINT64_C(1) << 63); break;
    default: k = (uint64_t)((const int64_t *)p)[at] ^ (UINT64_C(1) << 63); break;
    }
    return descending ? ~k : k;
}

/* Stable bottom-up merge sort of row[0..n) by key; 'tmp' holds n items. */
static void merge_sort(Item *row, Item *tmp, int64_t n)
{
    Item *src = row, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = src[j].key < src[i].key ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        Item *t = src;
        src = dst;
        dst = t;
    }
    if (src != row)
        memcpy(row, src, (size_t)n * sizeof *row);
}

/* The k first of row[0..n) in order into row[0..k): a sorted list of the
 * best so far takes an element only when it beats the k-th (strictly: an
 * earlier equal one stays ahead), so a long row costs about one compare
 * per element. */
static void select_first(Item *row, int64_t n, int64_t k)
{
    int64_t have = 0;
    for (int64_t j = 0; j < n; j++) {
        Item it = row[j];
        if (have == k && it.key >= row[k - 1].key)
            continue;
        int64_t lo = 0, hi = have; /* after every key <= it.key */
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (row[mid].key <= it.key)
                lo = mid + 1;
            else
                hi = mid;
        }
        int64_t last = have < k ? have : k - 1;
        memmove(&row[lo + 1], &row[lo], (size_t)(last - lo) * sizeof *row);
        row[lo] = it;
        have += have < k;
    }
}

/* What one call computes: the rows along 'axis' of 'x', sorted, the first
 * 'k' of each written to 'vals' and/or 'pos' (either may be NULL). */
typedef struct SortJob {
    MfTensor *x;
    int64_t axis, k;
    bool descending;
    MfTensor *vals, *pos;
} SortJob;

static MfStatus sort_rows(const MfOpCall *c, const SortJob *job)
{
    MfTensor *x = mf_tensor_contiguous(job->x);
    int64_t n = x ? x->shape[job->axis] : 0, outer = 1, inner = 1, k = job->k;
    size_t bytes = (size_t)(n > 0 ? 2 * n : 1) * sizeof(Item);
    Item *row = x ? mf_alloc(bytes) : NULL;
    if (!row) {
        mf_tensor_release(x);
        return mf_err_nomem(op_api(c), bytes);
    }
    for (int d = 0; d < x->rank; d++)
        if (d < job->axis)
            outer *= x->shape[d];
        else if (d > job->axis)
            inner *= x->shape[d];
    bool select = k > 0 && k * 16 <= n; /* a few of many: no full sort */
    size_t es = mf_dtype_size(x->dtype);
    const char *src = mf_tensor_data(x);
    char *vals = job->vals ? mf_tensor_data(job->vals) : NULL;
    int64_t *pos = job->pos ? mf_tensor_data(job->pos) : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t j = 0; j < n; j++) {
                row[j].key = row_key(x, (o * n + j) * inner + i, job->descending);
                row[j].pos = j;
            }
            if (select)
                select_first(row, n, k);
            else
                merge_sort(row, row + n, n);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (o * k + j) * inner + i;
                if (vals)
                    memcpy(vals + (size_t)at * es,
                           src + (size_t)((o * n + row[j].pos) * inner + i) * es, es);
                if (pos)
                    pos[at] = row[j].pos + 1;
            }
        }
    mf_dealloc(row, bytes);
    mf_tensor_release(x);
    return MF_OK;
}

/* ---- TopKV2 ------------------------------------------------------------ */

static MfStatus topk_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    int64_t k = c->attrs->n;
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC, "a numeric dtype");
    if (st != MF_OK)
        return st;
    if (x->rank == 0)
        return mf_err_set(MF_EARG, "top_k: input must have rank >= 1, got a scalar");
    int64_t n = x->shape[x->rank - 1];
    if (k < 0 || (n >= 0 && k > n))
        return mf_err_set(MF_EARG, "top_k: k = %lld out of range: the last axis has %lld "
                          "entries (0 <= k <= %lld)", (long long)k, (long long)n, (long long)n);
    c->noutputs = 2;
    for (int o = 0; o < 2; o++) {
        c->out[o].dtype = o ? MF_INT64 : x->dtype;
        c->out[o].rank = x->rank;
        memcpy(c->out[o].shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
        c->out[o].shape[x->rank - 1] = k;
    }
    return MF_OK;
}

static MfStatus topk_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = c->inputs[0];
    if (x->shape[x->rank - 1] < c->attrs->n) /* a graph run with a shorter axis */
        return mf_err_set(MF_EARG, "top_k: k = %lld out of range: the last axis has %lld "
                          "entries", (long long)c->attrs->n, (long long)x->shape[x->rank - 1]);
    SortJob job = {x, x->rank - 1, c->attrs->n, true, outs[0], outs[1]};
    return sort_rows(c, &job);
}

/* dx = ScatterAlongAxis(x, indices, dvalues) on the last axis */
static MfStatus topk_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0];
    if (!g->doutputs[0])
        return MF_OK;
    MfAttrs a = mf_attrs_default();
    a.axis = x->rank - 1;
    MfTensor *in[3] = {x, g->outputs[1], g->doutputs[0]};
    return mf_op1(MF_OP_SCATTER_ALONG_AXIS, 3, in, &a, &dinputs[0]);
}

/* ---- Sort, Argsort ------------------------------------------------------ */

static MfStatus sort_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC, "a numeric dtype");
    if (st != MF_OK)
        return st;
    if (x->rank == 0 || c->attrs->axis < 0 || c->attrs->axis >= x->rank)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d", op_api(c),
                          (long long)c->attrs->axis + 1, x->rank);
    mf_spec_like(c, x, c->op == MF_OP_ARGSORT ? MF_INT64 : x->dtype);
    return MF_OK;
}

static MfStatus sort_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = c->inputs[0];
    bool arg = c->op == MF_OP_ARGSORT;
    SortJob job = {x, c->attrs->axis, x->shape[c->attrs->axis], c->attrs->direction == 1,
                   arg ? NULL : outs[0], arg ? outs[0] : NULL};
    return sort_rows(c, &job);
}

/* dx = ScatterAlongAxis(x, argsort(x), dy) */
static MfStatus sort_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *pos = NULL;
    MfStatus st = mf_op1(MF_OP_ARGSORT, 1, &x, g->call->attrs, &pos);
    if (st != MF_OK)
        return st;
    MfTensor *in[3] = {x, pos, g->doutputs[0]};
    st = mf_op1(MF_OP_SCATTER_ALONG_AXIS, 3, in, g->call->attrs, &dinputs[0]);
    mf_tensor_release(pos);
    return st;
}

/* n log n comparisons per row */
static MfCost sort_cost(const MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    double n = (double)mf_tensor_numel(x), row = x->rank ? (double)x->shape[x->rank - 1] : 1;
    MfCost cost = {n * log2(row > 2 ? row : 2), 2 * n * (double)mf_dtype_size(x->dtype)};
    return cost;
}

static const char *const directions[] = {"ASCENDING", "DESCENDING", NULL};

static const MfAttrDef topk_attrs[] = {
    {"k", MF_ATTR_INT, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(n), 0, 0, NULL, NULL},
    {"sorted", MF_ATTR_BOOL, 0, MF_ATTR_AT(sorted), 0, 1, NULL, NULL},
};

static const MfAttrDef sort_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, -1, NULL, NULL},
    {"direction", MF_ATTR_ENUM, MF_ATTR_POSITIONAL, MF_ATTR_AT(direction), 0, 0, directions,
     NULL},
};

const MfOpDesc mf_desc_top_k = {
    .name = "TopKV2", .api = "top_k", .arity = 1, .infer = topk_infer,
    .forward = topk_forward, .backward = topk_grad, .cost = sort_cost,
    .attrs = topk_attrs, .nattrs = MF_NATTRS(topk_attrs), .lua = "top_k", .inputs = "x",
    .summary = "the k largest values along the last axis, and their 1-based int64 positions",
    .topic = "reduce",
    .details =
        "The k largest values along the last axis and their positions (1-based int64), "
        "TensorFlow's top_k: two results, values and indices, largest first; equal values keep "
        "their order (the lower position first); NaN counts as the largest. Gradient: the "
        "values' gradient goes back to the positions they came from (indices: none).",
    .example =
        "mf.top_k(mf.tensor{3, 1, 4, 1, 5}, 2) --> {5, 4}\t{5, 3}",
};

const MfOpDesc mf_desc_sort = {
    .name = "Sort", .api = "sort", .arity = 1, .infer = sort_infer,
    .forward = sort_forward, .backward = sort_grad, .cost = sort_cost,
    .attrs = sort_attrs, .nattrs = MF_NATTRS(sort_attrs), .lua = "sort", .inputs = "x",
    .summary = "the values sorted along axis (last by default), stable",
    .topic = "reduce",
    .details =
        "The values sorted along axis (the last by default; 1-based), tf.sort; direction "
        "\"ASCENDING\" or \"DESCENDING\" (any letter case). Stable; NaN sorts as the largest. "
        "Gradient: dy goes back to each value's position. See argsort.",
    .example =
        "mf.sort(mf.tensor{3, 1, 2})          --> {1, 2, 3}\n"
        "mf.sort(mf.tensor{3, 1, 2}, {direction = \"DESCENDING\"}) --> {3, 2, 1}",
};

const MfOpDesc mf_desc_argsort = {
    .name = "Argsort", .api = "argsort", .arity = 1, .flags = MF_OP_NONDIFF,
    .infer = sort_infer, .forward = sort_forward, .cost = sort_cost,
    .attrs = sort_attrs, .nattrs = MF_NATTRS(sort_attrs), .lua = "argsort", .inputs = "x",
    .summary = "1-based int64 positions that sort x along axis (stable)",
    .topic = "reduce",
    .details =
        "The 1-based int64 positions that sort x along axis (tf.argsort), stable: equal values "
        "keep their order. mf.gather(x, mf.argsort(x), 1) is mf.sort(x) for a vector. "
        "No gradient.",
    .example =
        "mf.argsort(mf.tensor{3, 1, 2})       --> {2, 3, 1}",
};
