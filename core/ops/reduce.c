/* reduce.c — reductions (Sum, Mean, Max, Min, Prod) and arg-reductions
 * (ArgMax, ArgMin).
 *
 * Reductions read 'attrs.axes' / 'naxes' (0-based; negative counts from the
 * end), 'attrs.all_axes' and 'attrs.keepdims'. No axes and not 'all_axes'
 * reduces nothing (TensorFlow's axis=[]). Arg-reductions read 'attrs.axis'
 * and return int64 positions that are 1-based, as every index in moonflow.
 *
 * Kernel plan: the input's dims (size-1 dims dropped) are merged where both
 * the input and the output are contiguous across them and both are reduced
 * or both kept, so reducing trailing axes of a contiguous tensor is one
 * contiguous row per output element (all axes: a single row), and reducing
 * leading axes is a walk of contiguous rows added into the output row.
 * Partial results live in an 8-byte accumulator per output element: double
 * for floats (float32 sums accumulate in double, rows summed pairwise), an
 * unsigned 64-bit integer for integer sums and products (wrapping, as
 * TensorFlow's), int64 for integer max/min. Strided inputs are read through
 * their strides. Max and min propagate NaN. The integer mean is integer
 * division (truncating), as TensorFlow's.
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

/* ---- shape inference --------------------------------------------------------- */

typedef enum Kind { K_SUM, K_PROD, K_MAX, K_MIN, K_MEAN } Kind;

static Kind op_kind(MfOpId op)
{
    switch (op) {
    case MF_OP_PROD: return K_PROD;
    case MF_OP_MAX: return K_MAX;
    case MF_OP_MIN: return K_MIN;
    case MF_OP_MEAN: return K_MEAN;
    default: return K_SUM;
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
    Kind k = op_kind(c->op);
    return k == K_SUM || k == K_PROD || (k == K_MEAN && mf_dtype_is_float(x->dtype));
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

/* ---- the walk plan ---------------------------------------------------------------- */

typedef struct Plan {
    int m;                       /* merged dims */
    int64_t n[MF_MAX_RANK];      /* their sizes */
    int64_t xs[MF_MAX_RANK];     /* input strides, in elements */
    int64_t os[MF_MAX_RANK];     /* accumulator strides (0 on reduced dims) */
    bool red[MF_MAX_RANK];
    int64_t count;               /* input elements per output element */
} Plan;

static void plan_build(Plan *p, const MfTensor *x, const bool *reduced)
{
    int64_t os[MF_MAX_RANK], stride = 1;
    p->count = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        os[i] = reduced[i] ? 0 : stride;
        if (reduced[i])
            p->count *= x->shape[i];
        else
            stride *= x->shape[i];
    }
    int w = 0;
    for (int i = 0; i < x->rank; i++) {
        if (x->shape[i] == 1)
            continue;
        if (w > 0 && p->red[w - 1] == reduced[i] && p->xs[w - 1] == x->strides[i] * x->shape[i] &&
            p->os[w - 1] == os[i] * x->shape[i]) {
            p->n[w - 1] *= x->shape[i];
            p->xs[w - 1] = x->strides[i];
            p->os[w - 1] = os[i];
            continue;
        }
        p->n[w] = x->shape[i];
        p->xs[w] = x->strides[i];
        p->os[w] = os[i];
        p->red[w] = reduced[i];
        w++;
    }
    if (w == 0) { /* a single element */
        p->n[0] = 1;
        p->xs[0] = p->os[0] = 0;
        p->red[0] = true;
        w = 1;
    }
    p->m = w;
}

/* ---- row reductions ------------------------------------------------------------- */

/* Pairwise sum of 'n' elements 'x[i*s]' in double: blocks of up to 256 are
 * summed with 8 independent accumulators, blocks are added as a tree. */
#define DEFINE_PAIRWISE(NAME, T)                                                  \
    static double NAME(const T *x, int64_t n, int64_t s)                          \
    {                                                                             \
        if (n > 256) {                                                            \
            int64_t h = (n / 2) & ~(int64_t)7;                                    \
            return NAME(x, h, s) + NAME(x + h * s, n - h, s);                     \
        }                                                                         \
        double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                   \
        int64_t i = 0;                                                            \
        if (s == 1)                                                               \
            for (; i + 8 <= n; i += 8)                                            \
                for (int k = 0; k < 8; k++)                                       \
                    a[k] += (double)x[i + k];                                     \
        double r = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])); \
        for (; i < n; i++)                                                        \
            r += (double)x[i * s];                                                \
        return r;                                                                 \
    }

DEFINE_PAIRWISE(sum_row_f32, float)
DEFINE_PAIRWISE(sum_row_f64, double)

/* Folds 'n' elements 'x[i*s]' with STEP (in terms of 'r' and 'v'): a
 * contiguous row in 8 independent lanes (fixed blocks that GCC vectorises
 * at -O2), the lanes then folded in order, the tail after. */
#define DEFINE_ROW(NAME, T, A, INIT, STEP)                                        \
    static A NAME(const T *x, int64_t n, int64_t s)                               \
    {                                                                             \
        A lanes[8], r = (INIT);                                                   \
        int64_t i = 0;                                                            \
        for (int j = 0; j < 8; j++)                                               \
            lanes[j] = (INIT);                                                    \
        if (s == 1)                                                               \
            for (; i + 8 <= n; i += 8)                                            \
                for (int j = 0; j < 8; j++) {                                     \
                    A v = (A)x[i + j], rr = lanes[j];                             \
                    lanes[j] = STEP(rr, v);                                       \
                }                                                                 \
        for (int j = 0; j < 8; j++) {                                             \
            A v = lanes[j], rr = r;                                               \
            r = STEP(rr, v);                                                      \
        }                                                                         \
        for (; i < n; i++) {                                                      \
            A v = (A)x[i * s], rr = r;                                            \
            r = STEP(rr, v);                                                      \
        }                                                                         \
        return r;                                                                 \
    }

/* Float max/min: a NaN operand wins, and once the result is NaN nothing
 * compares past it, so NaN propagates (as the Maximum op does). */
#define FMAX(r, v) (((v) > (r) || isnan(v)) ? (v) : (r))
#define FMIN(r, v) (((v) < (r) || isnan(v)) ? (v) : (r))
#define IMAX(r, v) ((v) > (r) ? (v) : (r))
#define IMIN(r, v) ((v) < (r) ? (v) : (r))
#define ADD(r, v) ((r) + (v))
#define MUL(r, v) ((r) * (v))

DEFINE_ROW(sum_row_i32, int32_t, uint64_t, 0, ADD)
DEFINE_ROW(sum_row_i64, int64_t, uint64_t, 0, ADD)
DEFINE_ROW(prod_row_f32, float, double, 1, MUL)
DEFINE_ROW(prod_row_f64, double, double, 1, MUL)
DEFINE_ROW(prod_row_i32, int32_t, uint64_t, 1, MUL)
DEFINE_ROW(prod_row_i64, int64_t, uint64_t, 1, MUL)
DEFINE_ROW(max_row_f32, float, double, -HUGE_VAL, FMAX)
DEFINE_ROW(max_row_f64, double, double, -HUGE_VAL, FMAX)
DEFINE_ROW(max_row_i32, int32_t, int64_t, INT64_MIN, IMAX)
DEFINE_ROW(max_row_i64, int64_t, int64_t, INT64_MIN, IMAX)
DEFINE_ROW(min_row_f32, float, double, HUGE_VAL, FMIN)
DEFINE_ROW(min_row_f64, double, double, HUGE_VAL, FMIN)
DEFINE_ROW(min_row_i32, int32_t, int64_t, INT64_MAX, IMIN)
DEFINE_ROW(min_row_i64, int64_t, int64_t, INT64_MAX, IMIN)

/* ---- the walk ---------------------------------------------------------------------- */

/* Walks every row of the plan (all merged dims but the last, by odometer).
 * A reduced last dim folds the row into one accumulator (ROW); a kept last
 * dim folds the row elementwise into a row of accumulators (COMBINE; the
 * contiguous case in fixed blocks of 8, which GCC vectorises at -O2). */
#define DEFINE_WALK(NAME, T, A, ROW, COMBINE)                                     \
    static void fold_##NAME(A *restrict ar, const T *restrict row, int64_t n)     \
    {                                                                             \
        int64_t k = 0;                                                            \
        for (; k + 8 <= n; k += 8)                                                \
            for (int j = 0; j < 8; j++) {                                         \
                A v = (A)row[k + j], a = ar[k + j];                               \
                ar[k + j] = COMBINE(a, v);                                        \
            }                                                                     \
        for (; k < n; k++) {                                                      \
            A v = (A)row[k], a = ar[k];                                           \
            ar[k] = COMBINE(a, v);                                                \
        }                                                                         \
    }                                                                             \
    static void NAME(const Plan *p, const void *xv, void *accv)                   \
    {                                                                             \
        const T *x = xv;                                                          \
        A *acc = accv;                                                            \
        int last = p->m - 1;                                                      \
        int64_t idx[MF_MAX_RANK] = {0}, rows = 1, xo = 0, ao = 0;                 \
        for (int i = 0; i < last; i++)                                            \
            rows *= p->n[i];                                                      \
        int64_t n = p->n[last], s = p->xs[last];                                  \
        for (int64_t r = 0; r < rows; r++) {                                      \
            const T *row = x + xo;                                                \
            A *ar = acc + ao;                                                     \
            if (p->red[last]) {                                                   \
                A v = (A)ROW(row, n, s), a = *ar;                                 \
                *ar = COMBINE(a, v);                                              \
            } else if (s == 1) {                                                  \
                fold_##NAME(ar, row, n);                                          \
            } else {                                                              \
                for (int64_t k = 0; k < n; k++) {                                 \
                    A v = (A)row[k * s], a = ar[k];                               \
                    ar[k] = COMBINE(a, v);                                        \
                }                                                                 \
            }                                                                     \
            for (int i = last - 1; i >= 0; i--) {                                 \
                xo += p->xs[i];                                                   \
                ao += p->os[i];                                                   \
                if (++idx[i] < p->n[i])                                           \
                    break;                                                        \
                xo -= p->xs[i] * p->n[i];                                         \
                ao -= p->os[i] * p->n[i];                                         \
                idx[i] = 0;                                                       \
            }                                                                     \
        }                                                                         \
    }

DEFINE_WALK(walk_sum_f32, float, double, sum_row_f32, ADD)
DEFINE_WALK(walk_sum_f64, double, double, sum_row_f64, ADD)
DEFINE_WALK(walk_sum_i32, int32_t, uint64_t, sum_row_i32, ADD)
DEFINE_WALK(walk_sum_i64, int64_t, uint64_t, sum_row_i64, ADD)
DEFINE_WALK(walk_prod_f32, float, double, prod_row_f32, MUL)
DEFINE_WALK(walk_prod_f64, double, double, prod_row_f64, MUL)
DEFINE_WALK(walk_prod_i32, int32_t, uint64_t, prod_row_i32, MUL)
DEFINE_WALK(walk_prod_i64, int64_t, uint64_t, prod_row_i64, MUL)
DEFINE_WALK(walk_max_f32, float, double, max_row_f32, FMAX)
DEFINE_WALK(walk_max_f64, double, double, max_row_f64, FMAX)
DEFINE_WALK(walk_max_i32, int32_t, int64_t, max_row_i32, IMAX)
DEFINE_WALK(walk_max_i64, int64_t, int64_t, max_row_i64, IMAX)
DEFINE_WALK(walk_min_f32, float, double, min_row_f32, FMIN)
DEFINE_WALK(walk_min_f64, double, double, min_row_f64, FMIN)
DEFINE_WALK(walk_min_i32, int32_t, int64_t, min_row_i32, IMIN)
DEFINE_WALK(walk_min_i64, int64_t, int64_t, min_row_i64, IMIN)

typedef void (*WalkFn)(const Plan *p, const void *x, void *acc);

/* Indexed [kind][dtype]; the mean walks as a sum. */
_Static_assert(MF_FLOAT32 == 0 && MF_FLOAT64 == 1 && MF_INT32 == 2 && MF_INT64 == 3,
               "the walks' columns are in MfDType order");
_Static_assert(K_MEAN == K_MIN + 1, "a row per Kind but the last, the mean (it walks as a sum)");
static const WalkFn walks[K_MIN + 1][MF_INT64 + 1] = {
    [K_SUM] = {walk_sum_f32, walk_sum_f64, walk_sum_i32, walk_sum_i64},
    [K_PROD] = {walk_prod_f32, walk_prod_f64, walk_prod_i32, walk_prod_i64},
    [K_MAX] = {walk_max_f32, walk_max_f64, walk_max_i32, walk_max_i64},
    [K_MIN] = {walk_min_f32, walk_min_f64, walk_min_i32, walk_min_i64},
};

/* With the last dim kept (BiasAdd's gradient: the sum of NHWC rows per
 * channel), blocks of COLUMN_BLOCK output columns go to the worker pool:
 * each accumulator still folds the same rows in the same order, so the
 * result is the same bits on any thread count. */
#define COLUMN_BLOCK 16          /* 64 bytes of float32: threads touch disjoint lines */
#define COLUMN_SPLIT_MIN (1 << 16) /* input elements worth a wake-up */

typedef struct ColumnJob {
    const Plan *p;
    WalkFn walk;
    const char *x;
    char *acc;
    size_t es; /* input element size; accumulators are 8 bytes */
} ColumnJob;

static void walk_columns(void *ctx, int64_t b, int64_t e)
{
    const ColumnJob *j = ctx;
    Plan q = *j->p;
    int last = q.m - 1;
    int64_t c0 = b * COLUMN_BLOCK, c1 = e * COLUMN_BLOCK < q.n[last] ? e * COLUMN_BLOCK
                                                                      : q.n[last];
    q.n[last] = c1 - c0;
    j->walk(&q, j->x + (size_t)(c0 * q.xs[last]) * j->es, j->acc + (size_t)(c0 * q.os[last]) * 8);
}

static void walk(const Plan *p, WalkFn fn, const MfTensor *x, void *acc)
{
    int last = p->m - 1;
    if (p->red[last] || p->n[last] < 2 * COLUMN_BLOCK || mf_tensor_numel(x) < COLUMN_SPLIT_MIN) {
        fn(p, mf_tensor_data(x), acc);
        return;
    }
    ColumnJob j = {p, fn, mf_tensor_data(x), acc, mf_dtype_size(x->dtype)};
    mf_parallel_for((p->n[last] + COLUMN_BLOCK - 1) / COLUMN_BLOCK, 1, walk_columns, &j);
}

/* ---- accumulators --------------------------------------------------------------- */

/* Sets the 'n' accumulators to the identity of 'k' for dtype 'dt'. */
static void acc_init(void *acc, int64_t n, Kind k, MfDType dt)
{
    if (mf_dtype_is_float(dt)) {
        double v = k == K_PROD ? 1.0 : k == K_MAX ? -HUGE_VAL : k == K_MIN ? HUGE_VAL : 0.0;
        for (int64_t i = 0; i < n; i++)
            ((double *)acc)[i] = v;
    } else {
        int64_t v = k == K_PROD ? 1 : k == K_MAX ? INT64_MIN : k == K_MIN ? INT64_MAX : 0;
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)acc)[i] = v;
    }
}

/* Writes the accumulators into the output (dividing by 'count' for a mean). */
static void acc_finish(const void *acc, MfTensor *out, Kind k, int64_t count)
{
    int64_t n = mf_tensor_numel(out);
    void *o = mf_tensor_data(out);
    const double *ad = acc;
    const int64_t *ai = acc;
    bool mean = k == K_MEAN;
    switch (out->dtype) {
    case MF_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            ((float *)o)[i] = (float)(mean ? ad[i] / (double)count : ad[i]);
        break;
    case MF_FLOAT64:
        for (int64_t i = 0; i < n; i++)
            ((double *)o)[i] = mean ? ad[i] / (double)count : ad[i];
        break;
    case MF_INT32:
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)o)[i] = (int32_t)(uint32_t)(mean ? ai[i] / count : ai[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)o)[i] = mean ? ai[i] / count : ai[i];
        break;
    }
}

static MfStatus reduce_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    MfTensor *out = outs[0];
    bool reduced[MF_MAX_RANK];
    /* checked again here: graph mode may infer with unknown dims */
    MfStatus st = reduced_dims(c, x, reduced);
    if (st == MF_OK)
        st = check_empty(c, x, reduced, has_identity(c, x));
    if (st != MF_OK)
        return st;
    Plan p;
    plan_build(&p, x, reduced);
    int64_t n = mf_tensor_numel(out);
    if (n == 0)
        return MF_OK;
    size_t nbytes = (size_t)n * 8;
    void *acc = (out->dtype == MF_FLOAT64 || out->dtype == MF_INT64) ? mf_tensor_data(out)
                                                                      : mf_alloc(nbytes);
    if (!acc)
        return mf_err_nomem(op_api(c), nbytes);
    Kind k = op_kind(c->op);
    Kind wk = k == K_MEAN ? K_SUM : k;
    acc_init(acc, n, wk, x->dtype);
    if (mf_tensor_numel(x) > 0)
        walk(&p, walks[wk][x->dtype], x, acc);
    acc_finish(acc, out, k, p.count);
    if (acc != mf_tensor_data(out))
        mf_dealloc(acc, nbytes);
    return MF_OK;
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

/* Over a contiguous [outer, n, inner] block: the last axis (inner == 1)
 * scans each row; otherwise rows of 'inner' candidates are compared with a
 * running best row in 'best' (scratch of 'inner' elements). */
#define DEFINE_ARG(NAME, T, BETTER)                                               \
    static void NAME(const T *x, int64_t outer, int64_t n, int64_t inner,        \
                     int64_t *out, void *scratch)                                 \
    {                                                                             \
        T *best = scratch;                                                        \
        for (int64_t o = 0; o < outer; o++) {                                     \
            const T *blk = x + o * n * inner;                                     \
            int64_t *res = out + o * inner;                                       \
            if (inner == 1) {                                                     \
                T b = blk[0];                                                     \
                int64_t bi = 0;                                                   \
                for (int64_t k = 1; k < n; k++)                                   \
                    if (BETTER(blk[k], b)) {                                      \
                        b = blk[k];                                               \
                        bi = k;                                                   \
                    }                                                             \
                res[0] = bi + 1;                                                  \
                continue;                                                         \
            }                                                                     \
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

DEFINE_ARG(argmax_f32, float, FGT)
DEFINE_ARG(argmax_f64, double, FGT)
DEFINE_ARG(argmax_i32, int32_t, IGT)
DEFINE_ARG(argmax_i64, int64_t, IGT)
DEFINE_ARG(argmin_f32, float, FLT)
DEFINE_ARG(argmin_f64, double, FLT)
DEFINE_ARG(argmin_i32, int32_t, ILT)
DEFINE_ARG(argmin_i64, int64_t, ILT)

static void run_arg(bool is_max, const MfTensor *x, int64_t outer, int64_t n, int64_t inner,
                    int64_t *out, void *scratch)
{
    const void *d = mf_tensor_data(x);
    switch (x->dtype) {
    case MF_FLOAT32: (is_max ? argmax_f32 : argmin_f32)(d, outer, n, inner, out, scratch); break;
    case MF_FLOAT64: (is_max ? argmax_f64 : argmin_f64)(d, outer, n, inner, out, scratch); break;
    case MF_INT32: (is_max ? argmax_i32 : argmin_i32)(d, outer, n, inner, out, scratch); break;
    default: (is_max ? argmax_i64 : argmin_i64)(d, outer, n, inner, out, scratch); break;
    }
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
    size_t nbytes = inner > 1 ? (size_t)inner * mf_dtype_size(x->dtype) : 0;
    void *scratch = nbytes ? mf_alloc(nbytes) : NULL;
    if (nbytes && !scratch) {
        mf_tensor_release(xc);
        return mf_err_nomem(op_api(c), nbytes);
    }
    run_arg(c->op == MF_OP_ARGMAX, xc, outer, n, inner, mf_tensor_data(outs[0]), scratch);
    if (scratch)
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
