/* reduce_walk.c — the reduction kernel (reduce_walk.h): one pass over the
 * input, in its own layout, for any set of reduced axes.
 *
 * The plan: the input's dims (size-1 dims dropped) are merged where both the
 * input and the output are contiguous across them and both are reduced or
 * both kept. An odometer walks all merged dims but the last two; the last
 * two form a block:
 *   - last dim reduced: each row is folded into its output's accumulator by
 *     a tree (below);
 *   - last dim kept, the one before reduced: columns, in tiles of 1024 and
 *     32 at a time within a tile, fold the block's rows in order into
 *     accumulators held in registers (the Dense bias gradient, a sum over
 *     leading axes);
 *   - otherwise each row is folded elementwise into a row of accumulators.
 * Partial results live in an accumulator per output element: double for
 * floats (float for float32 max and min: exact either way), a wrapping
 * unsigned 64-bit integer for integer sums and products, int64 for integer
 * max and min.
 *
 * The order of combination, fixed by the shapes alone: a row of n elements
 * is a binary tree whose leaves hold at most LEAF elements (256 for float64
 * sums, 2048 for float32 sums, 4096 otherwise) split at whole leaves, half of
 * them on each side; a leaf is folded in 32 independent lanes (vectorised),
 * the lanes combined as a tree, then the tail. Columns combine rows in row
 * order. A float64 sum is blocked pairwise summation. A float32 sum adds
 * at most 8 elements in float before they reach double: a float32 leaf
 * folds blocks of 256 in 32 float lanes, each added into 32 double lanes;
 * columns fold groups of 8 rows in float, each added into the double
 * accumulator. So an element sees at most 7 float roundings (NumPy's
 * pairwise float32 sum: 19 and more along a row, one per row down a
 * column), the rest is double. Converting every element to double (as
 * before) cost half the speed of memory (vcvtps2pd's throughput). With
 * AVX-512, short rows (at most a block) go 8 at a time in 16-float
 * vectors, and leaves fold their 32 lanes in 16-float and 8-double
 * vectors: the same lanes, the same steps, the same bits.
 *
 * Threads: a large reduction is split over the worker pool by its kept dim
 * with the most work (columns in blocks of 16), each thread owning disjoint
 * output elements, or, when everything is reduced into one element, by the
 * subtrees of the row's tree, combined by the same tree afterwards. Either
 * way every output element is combined in the same order on any thread
 * count: the same bits. When the split dim is the outermost kept one (and
 * on one thread), its indices go in tiles of about 2048 outputs whose
 * accumulators are set, folded and written out in turn by the thread that
 * owns them, so no serial pass over all of them comes before or after. */
#include <limits.h>
#include <math.h>
#include <string.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

#include "reduce_walk.h"

#include "../alloc.h"
#include "../err.h"
#include "../parallel.h"

/* ---- the plan ------------------------------------------------------------------ */

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

/* ---- kernels ------------------------------------------------------------------- */

#define LANES 32
#define COLS 32
#define SUM_LEAF 256
#define FOLD_LEAF 4096
/* Columns fold rows in groups: each group's rows are read as parallel
 * streams (a few pages at once), the accumulators loaded and stored once per
 * group and held in registers across it (the loops over COLS unrolled). */
#define ROW_GROUP 8
#define UNROLL _Pragma("GCC unroll 32")

/* Float max/min: a NaN operand wins, and once the result is NaN nothing
 * compares past it, so NaN propagates (as the Maximum op does). */
#define FMAX(r, v) (((v) > (r) || isnan(v)) ? (v) : (r))
#define FMIN(r, v) (((v) < (r) || isnan(v)) ? (v) : (r))
#define IMAX(r, v) ((v) > (r) ? (v) : (r))
#define IMIN(r, v) ((v) < (r) ? (v) : (r))
#define ADD(r, v) ((r) + (v))
#define MUL(r, v) ((r) * (v))

/* The leaves where a row of 'n' splits: half of its whole leaves left. */
static int64_t tree_half(int64_t n, int64_t leaf)
{
    return (n / leaf + 1) / 2 * leaf;
}

/* Short contiguous rows reduced one after another (a sum or max over the
 * last axis): each row ends in a chain of dependent steps (its lanes'
 * tree), and the loads of the rows after it wait behind that chain; the
 * hardware prefetcher did not keep up either. So when the rows come from
 * beyond L2, the lines of the row about ROW_PREFETCH bytes ahead are
 * requested as each row starts: (16384, 256) float32 rows in L3 took 0.75x
 * the time. Rows in L2 do not need it (max over them took 1.2x with it). */
#define ROW_PREFETCH 8192
/* Longer rows: the prefetcher follows them (rows of 1024 floats took 1.08x
 * the time with the request, rows of 64 and 100 the same either way). */
#define ROW_PREFETCH_MAX 1024
#define ROW_PREFETCH_FROM (1 << 20)    /* bytes of rows that do not fit in L2 */

/* How many rows ahead to request, or 0 for rows that need no help. */
static int64_t rows_ahead(int64_t rows, int64_t rxs, int64_t n, int64_t s, size_t size)
{
    int64_t bytes = n * (int64_t)size;
    if (s != 1 || bytes == 0 || bytes > ROW_PREFETCH_MAX ||
        rows * rxs * (int64_t)size < ROW_PREFETCH_FROM)
        return 0;
    return ROW_PREFETCH / bytes + 1;
}

/* Requests the lines of row i + ahead of 'x' (elements of 'size' bytes,
 * rows 'rxs' elements apart, 'n' contiguous elements), if there is one. */
static inline void prefetch_row_ahead(const void *x, size_t size, int64_t i, int64_t rows,
                                      int64_t rxs, int64_t ahead, int64_t n)
{
    if (ahead == 0 || i + ahead >= rows)
        return;
    const char *p = (const char *)x + (size_t)((i + ahead) * rxs) * size;
    for (size_t b = 0; b < (size_t)n * size; b += 64)
        __builtin_prefetch(p + b);
}

/* For each (kind, dtype) NAME:
 *   NAME_leaf(x, n, s): at most a leaf of 'x[i*s]' folded in LANES lanes;
 *   NAME_tree(x, n, s): a row folded by the tree of leaves;
 *   NAME_rows(acc, ros, x, rows, rxs, n, s): acc[i*ros] combined with the
 *       tree of the row at x + i*rxs, for i = 0 .. rows-1;
 *   NAME_value(out, x, n, s): the row's tree alone;
 *   NAME_combine(acc, b): *acc combined with the accumulator *b;
 *   NAME_cols(acc, x, rows, rs, n, s): acc[k] combined with x[r*rs + k*s]
 *       for r = 0 .. rows-1 in order, k = 0 .. n-1. */
#define DEFINE_FOLDS(NAME, T, A, INIT, STEP)                                          \
    static A NAME##_leaf(const T *x, int64_t n, int64_t s)                             \
    {                                                                                  \
        A lanes[LANES], r = (INIT);                                                    \
        int64_t i = 0;                                                                 \
        for (int j = 0; j < LANES; j++)                                                \
            lanes[j] = (INIT);                                                         \
        if (s == 1)                                                                    \
            for (; i + LANES <= n; i += LANES)                                         \
                for (int j = 0; j < LANES; j++) {                                      \
                    A v = (A)x[i + j], rr = lanes[j];                                  \
                    lanes[j] = STEP(rr, v);                                            \
                }                                                                      \
        for (int w = LANES / 2; w > 0; w /= 2)                                         \
            for (int j = 0; j < w; j++) {                                              \
                A v = lanes[j + w], rr = lanes[j];                                     \
                lanes[j] = STEP(rr, v);                                                \
            }                                                                          \
        r = lanes[0];                                                                  \
        for (; i < n; i++) {                                                           \
            A v = (A)x[i * s], rr = r;                                                 \
            r = STEP(rr, v);                                                           \
        }                                                                              \
        return r;                                                                      \
    }                                                                                  \
    static void NAME##_cols(void *accv, const void *xv, int64_t rows, int64_t rs,      \
                            int64_t n, int64_t s)                                      \
    {                                                                                  \
        A *acc = accv;                                                                 \
        const T *x = xv;                                                               \
        for (int64_t r0 = 0; r0 < rows; r0 += ROW_GROUP) {                             \
            int64_t r1 = r0 + ROW_GROUP < rows ? r0 + ROW_GROUP : rows, k = 0;         \
            if (s == 1)                                                                \
                for (; k + COLS <= n; k += COLS) {                                     \
                    A a[COLS];                                                         \
                    UNROLL for (int j = 0; j < COLS; j++)                              \
                        a[j] = acc[k + j];                                             \
                    for (int64_t r = r0; r < r1; r++)                                  \
                        UNROLL for (int j = 0; j < COLS; j++) {                        \
                            A v = (A)x[r * rs + k + j], aa = a[j];                     \
                            a[j] = STEP(aa, v);                                        \
                        }                                                              \
                    UNROLL for (int j = 0; j < COLS; j++)                              \
                        acc[k + j] = a[j];                                             \
                }                                                                      \
            for (int64_t r = r0; r < r1; r++)                                          \
                for (int64_t kk = k; kk < n; kk++) {                                   \
                    A v = (A)x[r * rs + kk * s], aa = acc[kk];                         \
                    acc[kk] = STEP(aa, v);                                             \
                }                                                                      \
        }                                                                              \
    }


#define DEFINE_TREE_VALUE(NAME, T, A, STEP, LEAF)                                      \
    static A NAME##_tree(const T *x, int64_t n, int64_t s)                             \
    {                                                                                  \
        if (n <= (LEAF))                                                               \
            return NAME##_leaf(x, n, s);                                               \
        int64_t h = tree_half(n, LEAF);                                                \
        A a = NAME##_tree(x, h, s), b = NAME##_tree(x + h * s, n - h, s);              \
        return STEP(a, b);                                                             \
    }                                                                                  \
    static void NAME##_value(void *out, const void *xv, int64_t n, int64_t s)          \
    {                                                                                  \
        *(A *)out = NAME##_tree(xv, n, s);                                             \
    }                                                                                  \
    static void NAME##_combine(void *accv, const void *bv)                             \
    {                                                                                  \
        A *acc = accv, a = *acc, v = *(const A *)bv;                                   \
        *acc = STEP(a, v);                                                             \
    }

#define DEFINE_TREE(NAME, T, A, STEP, LEAF)                                            \
    DEFINE_TREE_VALUE(NAME, T, A, STEP, LEAF)                                          \
    static void NAME##_rows(void *accv, int64_t ros, const void *xv, int64_t rows,     \
                            int64_t rxs, int64_t n, int64_t s)                         \
    {                                                                                  \
        A *acc = accv;                                                                 \
        const T *x = xv;                                                               \
        int64_t ahead = rows_ahead(rows, rxs, n, s, sizeof *x);                         \
        for (int64_t i = 0; i < rows; i++) {                                           \
            prefetch_row_ahead(x, sizeof *x, i, rows, rxs, ahead, n);                  \
            A v = NAME##_tree(x + i * rxs, n, s), a = acc[i * ros];                    \
            acc[i * ros] = STEP(a, v);                                                 \
        }                                                                              \
    }

#define DEFINE_KERNELS(NAME, T, A, INIT, STEP, LEAF)                                   \
    DEFINE_FOLDS(NAME, T, A, INIT, STEP)                                               \
    DEFINE_TREE(NAME, T, A, STEP, LEAF)

/* Float sums, written with vectors of 4 doubles (GCC keeps the 8
 * accumulators of a block of 32 in registers, where it keeps the generic
 * folds' arrays in memory): a leaf in 32 lanes as the generic one, columns
 * 32 at a time. */
typedef double V4d __attribute__((vector_size(32)));
typedef float V4f __attribute__((vector_size(16)));

/* GCC's generic conversion splits the 4 floats in halves: with AVX, one
 * vcvtps2pd. The vector goes out through a pointer: returned by value it
 * would change the ABI in builds without AVX (make check's). */
static inline void load4_float(V4d *d, const float *p)
{
#ifdef __AVX__
    *d = (V4d)_mm256_cvtps_pd(_mm_loadu_ps(p));
#else
    V4f f;
    memcpy(&f, p, sizeof f);
    *d = __builtin_convertvector(f, V4d);
#endif
}

static inline void load4_double(V4d *d, const double *p)
{
    memcpy(d, p, sizeof *d);
}

#define NV (COLS / 4)

/* The lines of COLS elements of 'size' bytes from 'p', for the next group
 * of rows: a group reads its rows in short pieces, a stride the hardware
 * prefetcher does not follow (the middle axis of (64, 256, 256) ran at half
 * the speed of the first without it). */
static inline void prefetch_cols(const void *p, size_t size)
{
    for (size_t b = 0; b < COLS * size; b += 64)
        __builtin_prefetch((const char *)p + b);
}

/* Vector steps for the float folds: the scalar steps' semantics lane by
 * lane (max and min propagate NaN as FMAX and FMIN do). V: the vector
 * type, M: the integer vector of its comparisons. */
typedef int64_t V4l __attribute__((vector_size(32)));
typedef float V8f __attribute__((vector_size(32)));
typedef int32_t V8i __attribute__((vector_size(32)));

/* Vectors pass by value only between these static inline helpers and
 * the kernels of this file, so no ABI is involved; GCC still warns
 * (-Wpsabi) in builds without AVX (make check's -march=x86-64), and does
 * so when it emits the code, at the end of the file: off from here on. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define DEFINE_VSTEPS(V, M, SUF)                                                       \
    static inline V vselect##SUF(M m, V a, V b)                                        \
    {                                                                                  \
        return (V)(((M)a & m) | ((M)b & ~m));                                          \
    }                                                                                  \
    static inline V vmax##SUF(V r, V v)                                                \
    {                                                                                  \
        return vselect##SUF((v > r) | (v != v), v, r);                                 \
    }                                                                                  \
    static inline V vmin##SUF(V r, V v)                                                \
    {                                                                                  \
        return vselect##SUF((v < r) | (v != v), v, r);                                 \
    }

DEFINE_VSTEPS(V4d, V4l, 4)
DEFINE_VSTEPS(V8f, V8i, 8)

#define VADD(r, v) ((r) + (v))
#define VMUL(r, v) ((r) * (v))
#define VMAX(r, v) vmax4(r, v)
#define VMIN(r, v) vmin4(r, v)
#define VMAX8(r, v) vmax8(r, v)
#define VMIN8(r, v) vmin8(r, v)

/* The float folds (sum, prod, max, min) with vectors of 4 doubles: GCC
 * keeps the 8 accumulators of a block of 32 in registers, where it keeps
 * the generic folds' arrays in memory (and compiles FMAX to branches). A
 * leaf folds 32 lanes as the generic one, columns go 32 at a time. */
#define DEFINE_VEC_LEAF(NAME, T, INIT, VSTEP, STEP)                                    \
    static double NAME##_leaf(const T *x, int64_t n, int64_t s)                        \
    {                                                                                  \
        V4d a[NV];                                                                     \
        UNROLL for (int j = 0; j < NV; j++)                                            \
            a[j] = (V4d){(INIT), (INIT), (INIT), (INIT)};                              \
        int64_t i = 0;                                                                 \
        if (s == 1)                                                                    \
            for (; i + COLS <= n; i += COLS)                                           \
                UNROLL for (int j = 0; j < NV; j++) {                                  \
                    V4d v;                                                             \
                    load4_##T(&v, x + i + 4 * j);                                      \
                    a[j] = VSTEP(a[j], v);                                             \
                }                                                                      \
        UNROLL for (int w = NV / 2; w > 0; w /= 2)                                     \
            UNROLL for (int j = 0; j < w; j++)                                         \
                a[j] = VSTEP(a[j], a[j + w]);                                          \
        a[0] = VSTEP(a[0], __builtin_shuffle(a[0], (V4l){1, 0, 3, 2}));                \
        a[0] = VSTEP(a[0], __builtin_shuffle(a[0], (V4l){2, 3, 0, 1}));                \
        double r = a[0][0];                                                            \
        for (; i < n; i++) {                                                           \
            double v = (double)x[i * s], rr = r;                                       \
            r = STEP(rr, v);                                                           \
        }                                                                              \
        return r;                                                                      \
    }

#define DEFINE_VEC_COLS(NAME, T, VSTEP, STEP)                                         \
    static void NAME##_cols(void *accv, const void *xv, int64_t rows, int64_t rs,      \
                            int64_t n, int64_t s)                                      \
    {                                                                                  \
        double *acc = accv;                                                            \
        const T *x = xv;                                                               \
        for (int64_t r0 = 0; r0 < rows; r0 += ROW_GROUP) {                             \
            int64_t r1 = r0 + ROW_GROUP < rows ? r0 + ROW_GROUP : rows, k = 0;         \
            if (s == 1)                                                                \
                for (; k + COLS <= n; k += COLS) {                                     \
                    V4d a[NV];                                                         \
                    UNROLL for (int j = 0; j < NV; j++)                                \
                        load4_double(&a[j], acc + k + 4 * j);                          \
                    for (int64_t r = r0; r < r1; r++) {                                \
                        if (r + ROW_GROUP < rows)                                      \
                            prefetch_cols(x + (r + ROW_GROUP) * rs + k, sizeof(T));    \
                        UNROLL for (int j = 0; j < NV; j++) {                          \
                            V4d v;                                                     \
                            load4_##T(&v, x + r * rs + k + 4 * j);                     \
                            a[j] = VSTEP(a[j], v);                                     \
                        }                                                              \
                    }                                                                  \
                    UNROLL for (int j = 0; j < NV; j++)                                \
                        memcpy(acc + k + 4 * j, &a[j], sizeof a[j]);                   \
                }                                                                      \
            for (int64_t r = r0; r < r1; r++)                                          \
                for (int64_t kk = k; kk < n; kk++) {                                   \
                    double v = (double)x[r * rs + kk * s], aa = acc[kk];               \
                    acc[kk] = STEP(aa, v);                                             \
                }                                                                      \
        }                                                                              \
    }

/* 8 floats as two vectors of 4 doubles (one vcvtps2pd each with AVX). */
static inline void convert8(V4d *lo, V4d *hi, V8f f)
{
#ifdef __AVX__
    *lo = (V4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)f));
    *hi = (V4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)f, 1));
#else
    V4f a, b;
    memcpy(&a, &f, sizeof a);
    memcpy(&b, (const char *)&f + sizeof a, sizeof b);
    *lo = __builtin_convertvector(a, V4d);
    *hi = __builtin_convertvector(b, V4d);
#endif
}

#ifdef __AVX512F__
/* sum_f32_cols64(acc, x, r0, r1, rows, rs, n, s): the rows [r0, r1) of a
 * group folded into the columns as DEFINE_F32_COLS folds them 32 at a time,
 * 64 at a time in 16-float vectors (the same steps per column: the same
 * bits); returns the columns done. Sums over the first axis of (8, 16384)
 * and (256, 16384), and over the middle of (8, 64, 256): 0.8-0.9x time. */
static int64_t sum_f32_cols64(double *acc, const float *x, int64_t r0, int64_t r1,
                              int64_t rows, int64_t rs, int64_t n, int64_t s)
{
    int64_t k = 0;
    if (s != 1)
        return 0;
    for (; k + 64 <= n; k += 64) {
        __m512 f[4];
        UNROLL for (int j = 0; j < 4; j++)
            f[j] = _mm512_setzero_ps();
        for (int64_t r = r0; r < r1; r++) {
            if (r + ROW_GROUP < rows) {
                prefetch_cols(x + (r + ROW_GROUP) * rs + k, sizeof(float));
                prefetch_cols(x + (r + ROW_GROUP) * rs + k + COLS, sizeof(float));
            }
            UNROLL for (int j = 0; j < 4; j++)
                f[j] = _mm512_add_ps(f[j], _mm512_loadu_ps(x + r * rs + k + 16 * j));
        }
        UNROLL for (int j = 0; j < 4; j++) {
            __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(f[j]));
            __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(
                _mm512_extractf64x4_pd(_mm512_castps_pd(f[j]), 1)));
            double *a = acc + k + 16 * j;
            _mm512_storeu_pd(a, _mm512_add_pd(_mm512_loadu_pd(a), lo));
            _mm512_storeu_pd(a + 8, _mm512_add_pd(_mm512_loadu_pd(a + 8), hi));
        }
    }
    return k;
}
#else
static int64_t sum_f32_cols64(double *acc, const float *x, int64_t r0, int64_t r1,
                              int64_t rows, int64_t rs, int64_t n, int64_t s)
{
    (void)acc, (void)x, (void)r0, (void)r1, (void)rows, (void)rs, (void)n, (void)s;
    return 0;
}
#endif

/* Float32 column sums: each group of ROW_GROUP rows is folded in float
 * lanes from INIT, 32 columns at a time (the columns past the last 32, or
 * of a strided input, one by one in the same order), and the group's lanes
 * are then combined into the double accumulators: a column gets the same
 * bits whichever thread's block of columns it falls in. An element sees at
 * most ROW_GROUP - 1 float additions before it reaches double (a converting
 * fold in double ran at half the speed of memory: vcvtps2pd's throughput). */
#define DEFINE_F32_COLS(NAME, INIT, VSTEP8, VSTEP, STEP)                               \
    static void NAME##_cols(void *accv, const void *xv, int64_t rows, int64_t rs,      \
                            int64_t n, int64_t s)                                      \
    {                                                                                  \
        double *acc = accv;                                                            \
        const float *x = xv;                                                           \
        for (int64_t r0 = 0; r0 < rows; r0 += ROW_GROUP) {                             \
            int64_t r1 = r0 + ROW_GROUP < rows ? r0 + ROW_GROUP : rows;                \
            int64_t k = NAME##_cols64(acc, x, r0, r1, rows, rs, n, s);                 \
            if (s == 1)                                                                \
                for (; k + COLS <= n; k += COLS) {                                     \
                    V8f f[4];                                                          \
                    UNROLL for (int j = 0; j < 4; j++)                                 \
                        f[j] = (V8f){INIT, INIT, INIT, INIT, INIT, INIT, INIT, INIT};  \
                    for (int64_t r = r0; r < r1; r++) {                                \
                        if (r + ROW_GROUP < rows)                                      \
                            prefetch_cols(x + (r + ROW_GROUP) * rs + k, sizeof(float)); \
                        UNROLL for (int j = 0; j < 4; j++) {                           \
                            V8f v;                                                     \
                            memcpy(&v, x + r * rs + k + 8 * j, sizeof v);              \
                            f[j] = VSTEP8(f[j], v);                                    \
                        }                                                              \
                    }                                                                  \
                    UNROLL for (int j = 0; j < 4; j++) {                               \
                        V4d lo, hi, a, b;                                              \
                        convert8(&lo, &hi, f[j]);                                      \
                        load4_double(&a, acc + k + 8 * j);                             \
                        load4_double(&b, acc + k + 8 * j + 4);                         \
                        a = VSTEP(a, lo);                                              \
                        b = VSTEP(b, hi);                                              \
                        memcpy(acc + k + 8 * j, &a, sizeof a);                         \
                        memcpy(acc + k + 8 * j + 4, &b, sizeof b);                     \
                    }                                                                  \
                }                                                                      \
            for (int64_t kk = k; kk < n; kk++) {                                       \
                float f = (INIT);                                                      \
                for (int64_t r = r0; r < r1; r++) {                                    \
                    float v = x[r * rs + kk * s], ff = f;                              \
                    f = STEP(ff, v);                                                   \
                }                                                                      \
                double aa = acc[kk], fd = f;                                           \
                acc[kk] = STEP(aa, fd);                                                \
            }                                                                          \
        }                                                                              \
    }

/* A float32 sum leaf: blocks of F32_BLOCK elements, each folded in 32 float
 * lanes from zero (at most 8 elements, 7 float additions, per lane) and
 * then added, lane by lane, into 32 double lanes; the double lanes combine
 * as DEFINE_VEC_LEAF's, then the tail in double. Every element sees at most
 * 7 float roundings (NumPy's pairwise float sum: 19 and more), the rest is
 * double; the float lanes run at memory speed where converting every
 * element to double did not. */
#define F32_BLOCK 256
#define F32_SUM_LEAF 2048

/* An element as a float32 row sum sees it, rounded as float: x itself
 * (TERM_X), its squared deviation (x - c) * (x - c) (TERM_SQDEV: a variance
 * without the row of squares), or dy * ((x - c) * r) also stored to 'out'
 * (TERM_SCALED: LayerNormGrad's first dx and its sum in one pass). The
 * bits of a row of those values written out and then summed. Callers pass
 * a constant kind: GCC makes a copy of each fold per kind. */
typedef enum TermKind { TERM_X, TERM_SQDEV, TERM_SCALED } TermKind;

typedef struct Term {
    float c, r;
    const float *dy;
    float *out;
} Term;

static inline V8f term8(V8f v, TermKind kind, const Term *t, int64_t i)
{
    if (kind == TERM_SQDEV) {
        v -= t->c;
        v *= v;
    } else if (kind == TERM_SCALED) {
        V8f d;
        memcpy(&d, t->dy + i, sizeof d);
        v = d * ((v - t->c) * t->r);
        memcpy(t->out + i, &v, sizeof v);
    }
    return v;
}

static inline float term(float v, TermKind kind, const Term *t, int64_t i)
{
    if (kind == TERM_SQDEV) {
        v -= t->c;
        v *= v;
    } else if (kind == TERM_SCALED) {
        v = t->dy[i] * ((v - t->c) * t->r);
        t->out[i] = v;
    }
    return v;
}

/* The 32 float lanes as 32 double lanes. */
static inline void widen_lanes(V4d d[NV], const V8f f[4])
{
    UNROLL for (int j = 0; j < 4; j++)
        convert8(&d[2 * j], &d[2 * j + 1], f[j]);
}

/* The 32 double lanes combined as DEFINE_VEC_LEAF's. */
static inline double lanes_total(V4d d[NV])
{
    UNROLL for (int w = NV / 2; w > 0; w /= 2)
        UNROLL for (int j = 0; j < w; j++)
            d[j] += d[j + w];
    d[0] += __builtin_shuffle(d[0], (V4l){1, 0, 3, 2});
    d[0] += __builtin_shuffle(d[0], (V4l){2, 3, 0, 1});
    return d[0][0];
}

/* A leaf's lanes: the 32 float lanes of a block (Lanes32f) and the 32
 * double lanes they are added into (Lanes64d), in lane order. With
 * AVX-512 they are 16-float and 8-double vectors: the same lanes, the same
 * steps, the same bits as in 8-float and 4-double ones, in half the
 * instructions (sums along rows of 16384 floats: 0.7-0.85x the time in
 * L2, 0.9x beyond it). lanes_block(f, x, i, e, kind, t) folds the terms of
 * x[i .. e) (whole vectors of COLS) into f from zero. */
#ifdef __AVX512F__
typedef struct Lanes32f {
    __m512 v[2];
} Lanes32f;
typedef struct Lanes64d {
    __m512d v[4];
} Lanes64d;

static inline __m512 term16(__m512 v, TermKind kind, const Term *t, int64_t i)
{
    if (kind == TERM_SQDEV) {
        v = _mm512_sub_ps(v, _mm512_set1_ps(t->c));
        v = _mm512_mul_ps(v, v);
    } else if (kind == TERM_SCALED) {
        __m512 dev = _mm512_sub_ps(v, _mm512_set1_ps(t->c));
        v = _mm512_mul_ps(_mm512_loadu_ps(t->dy + i), _mm512_mul_ps(dev, _mm512_set1_ps(t->r)));
        _mm512_storeu_ps(t->out + i, v);
    }
    return v;
}

static inline void lanes_block(Lanes32f *f, const float *x, int64_t i, int64_t e, TermKind kind,
                               const Term *t)
{
    f->v[0] = f->v[1] = _mm512_setzero_ps();
    for (; i < e; i += COLS)
        UNROLL for (int j = 0; j < 2; j++)
            f->v[j] = _mm512_add_ps(f->v[j], term16(_mm512_loadu_ps(x + i + 16 * j), kind, t,
                                                    i + 16 * j));
}

static inline void lanes_widen(Lanes64d *d, const Lanes32f *f)
{
    UNROLL for (int j = 0; j < 2; j++) {
        d->v[2 * j] = _mm512_cvtps_pd(_mm512_castps512_ps256(f->v[j]));
        d->v[2 * j + 1] = _mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(f->v[j]), 1)));
    }
}

static inline void lanes_add(Lanes64d *d, const Lanes64d *b)
{
    UNROLL for (int j = 0; j < 4; j++)
        d->v[j] = _mm512_add_pd(d->v[j], b->v[j]);
}
#else
typedef struct Lanes32f {
    V8f v[4];
} Lanes32f;
typedef struct Lanes64d {
    V4d v[NV];
} Lanes64d;

static inline void lanes_block(Lanes32f *f, const float *x, int64_t i, int64_t e, TermKind kind,
                               const Term *t)
{
    UNROLL for (int j = 0; j < 4; j++)
        f->v[j] = (V8f){0, 0, 0, 0, 0, 0, 0, 0};
    for (; i < e; i += COLS)
        UNROLL for (int j = 0; j < 4; j++) {
            V8f v;
            memcpy(&v, x + i + 8 * j, sizeof v);
            f->v[j] += term8(v, kind, t, i + 8 * j);
        }
}

static inline void lanes_widen(Lanes64d *d, const Lanes32f *f)
{
    widen_lanes(d->v, f->v);
}

static inline void lanes_add(Lanes64d *d, const Lanes64d *b)
{
    UNROLL for (int j = 0; j < NV; j++)
        d->v[j] += b->v[j];
}
#endif

/* A leaf of terms (TERM_X with any stride 's'; the others contiguous).
 * Always inlined: each caller's constant kind then costs nothing in the
 * loop (GCC stopped inlining it on its own at three callers). */
static inline __attribute__((always_inline)) double sum_f32_leaf_of(const float *x, int64_t n, int64_t s, TermKind kind,
                                     const Term *t)
{
    int64_t whole = s == 1 ? n - n % COLS : 0;
    double r = 0;
    if (whole > 0) {
        /* The double lanes start as the first block's float lanes: the
         * same bits as adding them to zero (a float lane from zero is
         * never -0), without the additions (a row of 256 is one block). */
        Lanes64d d, tl;
        Lanes32f f;
        int64_t e = whole < F32_BLOCK ? whole : F32_BLOCK;
        lanes_block(&f, x, 0, e, kind, t);
        lanes_widen(&d, &f);
        for (int64_t i = e; i < whole; i = e) {
            e = whole - i < F32_BLOCK ? whole : i + F32_BLOCK;
            lanes_block(&f, x, i, e, kind, t);
            lanes_widen(&tl, &f);
            lanes_add(&d, &tl);
        }
        V4d v[NV];
        memcpy(v, d.v, sizeof v);
        r = lanes_total(v);
    }
    for (int64_t i = whole; i < n; i++)
        r += (double)term(x[i * s], kind, t, i);
    return r;
}

static double sum_f32_leaf(const float *x, int64_t n, int64_t s)
{
    return sum_f32_leaf_of(x, n, s, TERM_X, &(Term){0});
}

DEFINE_TREE_VALUE(sum_f32, float, double, ADD, F32_SUM_LEAF)

/* sum_f32_tree over the squared deviations of x from 'c'. */
static double sqdev_f32_tree(const float *x, int64_t n, float c)
{
    if (n <= F32_SUM_LEAF)
        return sum_f32_leaf_of(x, n, 1, TERM_SQDEV, &(Term){.c = c});
    int64_t h = tree_half(n, F32_SUM_LEAF);
    return sqdev_f32_tree(x, h, c) + sqdev_f32_tree(x + h, n - h, c);
}

/* sum_f32_tree over out[i] = dy[i] * ((x[i] - c) * r), which it writes. */
static double scaled_f32_tree(const float *x, const float *dy, float *out, int64_t n, float c,
                              float r)
{
    if (n <= F32_SUM_LEAF)
        return sum_f32_leaf_of(x, n, 1, TERM_SCALED, &(Term){c, r, dy, out});
    int64_t h = tree_half(n, F32_SUM_LEAF);
    return scaled_f32_tree(x, dy, out, h, c, r) +
           scaled_f32_tree(x + h, dy + h, out + h, n - h, c, r);
}

/* Two float32 rows of 'n' elements summed together into ra and rb, the
 * bits of sum_f32_tree for each: rows of at most one block fold their
 * float lanes in one loop. A lone short row ends in a chain of dependent
 * additions (the lanes widened to double and combined) that the next row's
 * loads wait behind; two rows give the core independent work (rows of 256
 * in L2: 1.25x faster). */
static void sum_f32_pair(const float *a, const float *b, int64_t n, double *ra, double *rb)
{
    int64_t whole = n - n % COLS;
    if (n > F32_BLOCK || whole == 0) {
        *ra = sum_f32_tree(a, n, 1);
        *rb = sum_f32_tree(b, n, 1);
        return;
    }
    V8f f[4], g[4];
    UNROLL for (int j = 0; j < 4; j++)
        f[j] = g[j] = (V8f){0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = 0; k < whole; k += COLS)
        UNROLL for (int j = 0; j < 4; j++) {
            V8f v, w;
            memcpy(&v, a + k + 8 * j, sizeof v);
            memcpy(&w, b + k + 8 * j, sizeof w);
            f[j] += v;
            g[j] += w;
        }
    V4d d[NV];
    widen_lanes(d, f);
    double sa = lanes_total(d);
    widen_lanes(d, g);
    double sb = lanes_total(d);
    for (int64_t k = whole; k < n; k++) {
        sa += (double)a[k];
        sb += (double)b[k];
    }
    *ra = sa;
    *rb = sb;
}

#ifdef __AVX512F__
/* The 32 float lanes of each of 8 rows, f[2k] and f[2k + 1] (lanes 0-15
 * and 16-31 of row k), widened and combined as lanes_total combines them,
 * into t[k]. The last steps (lanes l and l + 4, then pairs, then the two
 * pairs) take the 8 rows' lanes side by side: a row's lanes meet in the
 * same pairs and order as in lanes_total, so the same bits. */
static inline void lanes_total8(double t[8], const __m512 f[16])
{
    __m512d g[8], h[4], p[2];
    UNROLL for (int k = 0; k < 8; k++) {
        __m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(f[2 * k]));
        __m512d d1 = _mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(f[2 * k]), 1)));
        __m512d d2 = _mm512_cvtps_pd(_mm512_castps512_ps256(f[2 * k + 1]));
        __m512d d3 = _mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(f[2 * k + 1]), 1)));
        /* lanes l + l+16, then l + l+8 */
        g[k] = _mm512_add_pd(_mm512_add_pd(d0, d2), _mm512_add_pd(d1, d3));
    }
    /* rows (a, b) = (0, 2), (1, 3), (4, 6), (5, 7): h = [a's l + l+4 | b's] */
    static const int pair[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
    UNROLL for (int j = 0; j < 4; j++) {
        __m512d a = g[pair[j][0]], b = g[pair[j][1]];
        h[j] = _mm512_add_pd(_mm512_shuffle_f64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    /* [h0 + h1, h2 + h3] of rows 0 1 0 1 2 3 2 3 (then 4-7) */
    UNROLL for (int j = 0; j < 2; j++)
        p[j] = _mm512_add_pd(_mm512_unpacklo_pd(h[2 * j], h[2 * j + 1]),
                             _mm512_unpackhi_pd(h[2 * j], h[2 * j + 1]));
    /* (h0 + h1) + (h2 + h3) of rows 0-7 in order */
    __m512d r = _mm512_add_pd(_mm512_shuffle_f64x2(p[0], p[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_f64x2(p[0], p[1], _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_storeu_pd(t, r);
}

/* The loops of the 8-row kernels: STEP(ARGS, k, i) folds the 32 floats at
 * x + k * rxs + i into row k's lanes, for the 'whole' floats of each of
 * the 8 rows. Rows of a whole block are read one after another (memory in
 * order; the 8 rows' chains overlap), shorter ones 32 floats of each row in
 * turn: rows of 256 took 0.65x the time of two rows at a time in 8-float
 * vectors in L2, 0.8x beyond it. (A macro: with the step as an inline
 * function GCC kept the 64 row addresses in vector registers, 1.06-1.18x
 * the time.) */
#define FOR_8_ROWS(whole, STEP, ...)                                                   \
    do {                                                                               \
        if ((whole) == F32_BLOCK)                                                      \
            UNROLL for (int k = 0; k < 8; k++)                                         \
                UNROLL for (int64_t i = 0; i < F32_BLOCK; i += COLS)                   \
                    STEP(__VA_ARGS__, k, i);                                           \
        else                                                                           \
            for (int64_t i = 0; i < (whole); i += COLS)                                \
                UNROLL for (int k = 0; k < 8; k++)                                     \
                    STEP(__VA_ARGS__, k, i);                                           \
    } while (0)

#define SUM_STEP8(f, x, rxs, k, i)                                                     \
    do {                                                                               \
        f[2 * k] = _mm512_add_ps(f[2 * k], _mm512_loadu_ps(x + k * rxs + i));          \
        f[2 * k + 1] = _mm512_add_ps(f[2 * k + 1], _mm512_loadu_ps(x + k * rxs + i + 16)); \
    } while (0)

/* Eight contiguous float32 rows of n elements, 32 <= n <= F32_BLOCK, rows
 * 'rxs' apart, summed into t[0..7] with the bits of sum_f32_tree: one
 * block of 32 float lanes from zero per row, in two 16-float vectors. */
static void sum_f32_rows8(double t[8], const float *x, int64_t rxs, int64_t n)
{
    int64_t whole = n - n % COLS;
    __m512 f[16];
    UNROLL for (int j = 0; j < 16; j++)
        f[j] = _mm512_setzero_ps();
    FOR_8_ROWS(whole, SUM_STEP8, f, x, rxs);
    lanes_total8(t, f);
    for (int k = 0; k < 8; k++)
        for (int64_t i = whole; i < n; i++)
            t[k] += (double)x[k * rxs + i];
}
#endif

/* Float32 sums along rows, contiguous rows eight (with AVX-512) or two at
 * a time. */
static void sum_f32_rows(void *accv, int64_t ros, const void *xv, int64_t rows, int64_t rxs,
                         int64_t n, int64_t s)
{
    double *acc = accv;
    const float *x = xv;
    int64_t i = 0, ahead = rows_ahead(rows, rxs, n, s, sizeof *x);
#ifdef __AVX512F__
    if (s == 1 && n >= COLS && n <= F32_BLOCK)
        for (; i + 8 <= rows; i += 8) {
            double t[8];
            for (int k = 0; k < 8; k++)
                prefetch_row_ahead(x, sizeof *x, i + k, rows, rxs, ahead, n);
            sum_f32_rows8(t, x + i * rxs, rxs, n);
            for (int k = 0; k < 8; k++)
                acc[(i + k) * ros] += t[k];
        }
#endif
    if (s == 1)
        for (; i + 2 <= rows; i += 2) {
            double ra, rb;
            prefetch_row_ahead(x, sizeof *x, i, rows, rxs, ahead, n);
            prefetch_row_ahead(x, sizeof *x, i + 1, rows, rxs, ahead, n);
            sum_f32_pair(x + i * rxs, x + (i + 1) * rxs, n, &ra, &rb);
            acc[i * ros] += ra;
            acc[(i + 1) * ros] += rb;
        }
    for (; i < rows; i++)
        acc[i * ros] += sum_f32_tree(x + i * rxs, n, s);
}

#define DEFINE_VEC_KERNELS(NAME, T, INIT, VSTEP, STEP, LEAF)                           \
    DEFINE_VEC_LEAF(NAME, T, INIT, VSTEP, STEP)                                        \
    DEFINE_VEC_COLS(NAME, T, VSTEP, STEP)                                              \
    DEFINE_TREE(NAME, T, double, STEP, LEAF)

/* Float32 max and min accumulate in float, in the output itself: a
 * float's max is exact, so float lanes give the bits the double fold gave,
 * without the conversions or the double accumulators' traffic. The vector
 * loops take the plain max (vmaxps: one instruction where the NaN-
 * propagating step takes four) and note whether any element was NaN; a
 * piece that held one is folded again by the NaN-propagating step (FMAX,
 * FMIN), so a NaN wins exactly as before: in each lane (a leaf) or column
 * the last NaN in order, then the tree's. (A signalling NaN now comes out
 * as it went in; the double fold quieted it.) */
#ifdef __AVX__
/* (v > r) ? v : r and (v < r) ? v : r: FMAX's and FMIN's bits when v is
 * not NaN (vmaxps and vminps return their second operand on a NaN). */
#define FAST_MAX8(r, v) ((V8f)_mm256_max_ps((__m256)(v), (__m256)(r)))
#define FAST_MIN8(r, v) ((V8f)_mm256_min_ps((__m256)(v), (__m256)(r)))
#else
#define FAST_MAX8(r, v) vselect8((v) > (r), v, r)
#define FAST_MIN8(r, v) vselect8((v) < (r), v, r)
#endif

/* Lanes where 'a' or 'b' is NaN, folded into '*m'. */
static inline void note_nan8(V8i *m, V8f a, V8f b)
{
#ifdef __AVX__
    *m |= (V8i)_mm256_cmp_ps((__m256)a, (__m256)b, _CMP_UNORD_Q);
#else
    *m |= (a != a) | (b != b);
#endif
}

static inline bool any8(V8i m)
{
#ifdef __AVX__
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#else
    int32_t any = 0;
    for (int j = 0; j < 8; j++)
        any |= m[j];
    return any != 0;
#endif
}

/* NAME(a, x, i, n, s): the 32 lanes in 'a' combined as a tree by VSTEP8,
 * then the tail x[i*s] .. x[(n-1)*s] by STEP. */
#define DEFINE_F32_LANES(NAME, VSTEP8, STEP)                                           \
    static inline float NAME(V8f a[4], const float *x, int64_t i, int64_t n, int64_t s) \
    {                                                                                  \
        a[0] = VSTEP8(a[0], a[2]);                                                     \
        a[1] = VSTEP8(a[1], a[3]);                                                     \
        a[0] = VSTEP8(a[0], a[1]);                                                     \
        a[0] = VSTEP8(a[0], __builtin_shuffle(a[0], (V8i){4, 5, 6, 7, 0, 1, 2, 3}));    \
        a[0] = VSTEP8(a[0], __builtin_shuffle(a[0], (V8i){2, 3, 0, 1, 6, 7, 4, 5}));    \
        a[0] = VSTEP8(a[0], __builtin_shuffle(a[0], (V8i){1, 0, 3, 2, 5, 4, 7, 6}));    \
        float r = a[0][0];                                                             \
        for (; i < n; i++) {                                                           \
            float v = x[i * s], rr = r;                                                \
            r = STEP(rr, v);                                                           \
        }                                                                              \
        return r;                                                                      \
    }

#ifdef __AVX512F__
/* FAST_MAX8 and FAST_MIN8 on 16 floats. */
#define FAST_MAX16(r, v) _mm512_max_ps(v, r)
#define FAST_MIN16(r, v) _mm512_min_ps(v, r)

/* FOR_8_ROWS's step for max and min: the plain step, clearing in ok[k % 4]
 * the lanes where v0 or v1 is NaN. A masked compare is one instruction
 * where a compare and an or of masks took two (max over the last axis of
 * (512, 256): 0.86-0.89x the time; of (16384, 256): 0.95-0.99x); four
 * masks make four short chains of compares instead of one long one. */
#define EXTREMUM_STEP8(FAST16, a, ok, x, rxs, k, i)                                  \
    do {                                                                               \
        __m512 v0 = _mm512_loadu_ps(x + k * rxs + i);                                  \
        __m512 v1 = _mm512_loadu_ps(x + k * rxs + i + 16);                             \
        a[2 * k] = FAST16(a[2 * k], v0);                                               \
        a[2 * k + 1] = FAST16(a[2 * k + 1], v1);                                       \
        ok[k % 4] = _mm512_mask_cmp_ps_mask(ok[k % 4], v0, v1, _CMP_ORD_Q);            \
    } while (0)

/* NAME_rows8(acc, ros, x, rows, rxs, n, s, ahead): contiguous rows of 32 <=
 * n <= F32_BLOCK, 8 at a time, each combined into acc[i*ros] with the bits
 * of NAME_tree (the plain step in the lanes 0-15 and 16-31 of two 16-float
 * vectors, then NAME_lanes_fast's tree; a group of rows that held a NaN
 * again by NAME_tree); returns the rows done. NAME_lanes_total8 takes the
 * 8 rows' trees side by side: the same pairs of lanes, each with the same
 * operand as the accumulator (the lower lane: FAST16(r, v) keeps r on a
 * tie, so a +0 and a -0 come out as in NAME_lanes_fast), in about a third
 * of the instructions of 8 trees one by one (max over the last axis of
 * (512, 256): 0.83-0.89x the time; of (16384, 256): 0.94-0.97x). */
#define DEFINE_F32_EXTREMUM_ROWS8(NAME, INIT, FAST16, STEP)                            \
    static inline void NAME##_lanes_total8(float t[8], const __m512 a[16])             \
    {                                                                                  \
        __m512 c[8], d[4], e[2];                                                       \
        UNROLL for (int k = 0; k < 8; k++) /* lane l and l + 16 */                     \
            c[k] = FAST16(a[2 * k], a[2 * k + 1]);                                     \
        UNROLL for (int j = 0; j < 4; j++) /* l and l + 8: rows 2j, 2j + 1 */          \
            d[j] = FAST16(                                                             \
                _mm512_shuffle_f32x4(c[2 * j], c[2 * j + 1], _MM_SHUFFLE(1, 0, 1, 0)), \
                _mm512_shuffle_f32x4(c[2 * j], c[2 * j + 1], _MM_SHUFFLE(3, 2, 3, 2))); \
        UNROLL for (int j = 0; j < 2; j++) /* l and l + 4: rows 4j .. 4j + 3 */        \
            e[j] = FAST16(                                                             \
                _mm512_shuffle_f32x4(d[2 * j], d[2 * j + 1], _MM_SHUFFLE(2, 0, 2, 0)), \
                _mm512_shuffle_f32x4(d[2 * j], d[2 * j + 1], _MM_SHUFFLE(3, 1, 3, 1))); \
        /* l and l + 2, then l and l + 1: 128-bit lane q holds rows q and 4 + q */     \
        __m512 f = FAST16(_mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(1, 0, 1, 0)),       \
                          _mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(3, 2, 3, 2)));      \
        __m512 g = FAST16(f, _mm512_shuffle_ps(f, f, _MM_SHUFFLE(3, 3, 1, 1)));        \
        __m512 r = _mm512_permutexvar_ps(                                              \
            _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0), g);  \
        _mm256_storeu_ps(t, _mm512_castps512_ps256(r));                                \
    }                                                                                  \
    static void NAME##_group8(float t[8], const float *x, int64_t rxs, int64_t n)      \
    {                                                                                  \
        int64_t whole = n - n % COLS;                                                  \
        __m512 a[16];                                                                  \
        __mmask16 ok[4] = {0xffff, 0xffff, 0xffff, 0xffff};                           \
        UNROLL for (int j = 0; j < 16; j++)                                            \
            a[j] = _mm512_set1_ps(INIT);                                               \
        FOR_8_ROWS(whole, EXTREMUM_STEP8, FAST16, a, ok, x, rxs);                      \
        if ((ok[0] & ok[1] & ok[2] & ok[3]) != 0xffff) { /* a NaN */                   \
            for (int k = 0; k < 8; k++)                                                \
                t[k] = NAME##_tree(x + k * rxs, n, 1);                                 \
            return;                                                                    \
        }                                                                              \
        NAME##_lanes_total8(t, a);                                                     \
        for (int k = 0; k < 8; k++)                                                    \
            for (int64_t i = whole; i < n; i++) {                                      \
                float r = t[k], v = x[k * rxs + i];                                    \
                t[k] = STEP(r, v);                                                     \
            }                                                                          \
    }                                                                                  \
    static int64_t NAME##_rows8(float *acc, int64_t ros, const float *x, int64_t rows,  \
                                int64_t rxs, int64_t n, int64_t s, int64_t ahead)      \
    {                                                                                  \
        int64_t i = 0;                                                                 \
        if (s == 1 && n >= COLS && n <= F32_BLOCK)                                     \
            for (; i + 8 <= rows; i += 8) {                                            \
                float t[8];                                                            \
                for (int k = 0; k < 8; k++)                                            \
                    prefetch_row_ahead(x, sizeof *x, i + k, rows, rxs, ahead, n);      \
                NAME##_group8(t, x + i * rxs, rxs, n);                                 \
                for (int k = 0; k < 8; k++) {                                          \
                    float r = acc[(i + k) * ros], v = t[k];                            \
                    acc[(i + k) * ros] = STEP(r, v);                                   \
                }                                                                      \
            }                                                                          \
        return i;                                                                      \
    }
#else
#define DEFINE_F32_EXTREMUM_ROWS8(NAME, INIT, FAST16, STEP)                            \
    static int64_t NAME##_rows8(float *acc, int64_t ros, const float *x, int64_t rows,  \
                                int64_t rxs, int64_t n, int64_t s, int64_t ahead)      \
    {                                                                                  \
        (void)acc, (void)ros, (void)x, (void)rows, (void)rxs, (void)n, (void)s;        \
        (void)ahead;                                                                   \
        return 0;                                                                      \
    }
#endif

/* NAME_leaf_exact: the NaN-propagating leaf (32 lanes in 4 vectors, a tree,
 * then the tail); NAME_leaf: the same with the plain step (lanes without a
 * NaN: the same bits), or the exact leaf when the vectors held a NaN;
 * NAME_cols_exact: columns one by one. */
#define DEFINE_F32_EXTREMUM_KERNELS(NAME, INIT, FAST8, FAST16, VSTEP8, STEP)           \
    DEFINE_F32_LANES(NAME##_lanes, VSTEP8, STEP)                                       \
    DEFINE_F32_LANES(NAME##_lanes_fast, FAST8, STEP)                                   \
    static float NAME##_leaf_exact(const float *x, int64_t n, int64_t s)               \
    {                                                                                  \
        V8f a[4];                                                                      \
        UNROLL for (int j = 0; j < 4; j++)                                             \
            a[j] = (V8f){INIT, INIT, INIT, INIT, INIT, INIT, INIT, INIT};              \
        int64_t i = 0;                                                                 \
        if (s == 1)                                                                    \
            for (; i + COLS <= n; i += COLS)                                           \
                UNROLL for (int j = 0; j < 4; j++) {                                   \
                    V8f v;                                                             \
                    memcpy(&v, x + i + 8 * j, sizeof v);                               \
                    a[j] = VSTEP8(a[j], v);                                            \
                }                                                                      \
        return NAME##_lanes(a, x, i, n, s);                                            \
    }                                                                                  \
    static float NAME##_leaf(const float *x, int64_t n, int64_t s)                     \
    {                                                                                  \
        V8f a[4];                                                                      \
        V8i nan = {0, 0, 0, 0, 0, 0, 0, 0};                                            \
        UNROLL for (int j = 0; j < 4; j++)                                             \
            a[j] = (V8f){INIT, INIT, INIT, INIT, INIT, INIT, INIT, INIT};              \
        int64_t i = 0;                                                                 \
        if (s == 1)                                                                    \
            for (; i + COLS <= n; i += COLS) {                                         \
                V8f v[4];                                                              \
                UNROLL for (int j = 0; j < 4; j++) {                                   \
                    memcpy(&v[j], x + i + 8 * j, sizeof v[j]);                         \
                    a[j] = FAST8(a[j], v[j]);                                          \
                }                                                                      \
                note_nan8(&nan, v[0], v[1]);                                           \
                note_nan8(&nan, v[2], v[3]);                                           \
            }                                                                          \
        if (any8(nan))                                                                 \
            return NAME##_leaf_exact(x, n, s);                                         \
        return NAME##_lanes_fast(a, x, i, n, s);                                       \
    }                                                                                  \
    static void NAME##_cols_exact(float *acc, const float *x, int64_t rows, int64_t rs, \
                                  int64_t n, int64_t s)                                \
    {                                                                                  \
        for (int64_t k = 0; k < n; k++) {                                              \
            float f = acc[k];                                                          \
            for (int64_t r = 0; r < rows; r++) {                                       \
                float v = x[r * rs + k * s], ff = f;                                   \
                f = STEP(ff, v);                                                       \
            }                                                                          \
            acc[k] = f;                                                                \
        }                                                                              \
    }                                                                                  \
    static void NAME##_cols(void *accv, const void *xv, int64_t rows, int64_t rs,      \
                            int64_t n, int64_t s)                                      \
    {                                                                                  \
        float *acc = accv;                                                             \
        const float *x = xv;                                                           \
        for (int64_t r0 = 0; r0 < rows; r0 += ROW_GROUP) {                             \
            int64_t r1 = r0 + ROW_GROUP < rows ? r0 + ROW_GROUP : rows, k = 0;         \
            if (s == 1)                                                                \
                for (; k + COLS <= n; k += COLS) {                                     \
                    V8f a[4];                                                          \
                    V8i nan = {0, 0, 0, 0, 0, 0, 0, 0};                                \
                    UNROLL for (int j = 0; j < 4; j++)                                 \
                        memcpy(&a[j], acc + k + 8 * j, sizeof a[j]);                   \
                    for (int64_t r = r0; r < r1; r++) {                                \
                        if (r + ROW_GROUP < rows)                                      \
                            prefetch_cols(x + (r + ROW_GROUP) * rs + k, sizeof(float)); \
                        V8f v[4];                                                      \
                        UNROLL for (int j = 0; j < 4; j++) {                           \
                            memcpy(&v[j], x + r * rs + k + 8 * j, sizeof v[j]);        \
                            a[j] = FAST8(a[j], v[j]);                                  \
                        }                                                              \
                        note_nan8(&nan, v[0], v[1]);                                   \
                        note_nan8(&nan, v[2], v[3]);                                   \
                    }                                                                  \
                    if (any8(nan))                                                     \
                        NAME##_cols_exact(acc + k, x + r0 * rs + k, r1 - r0, rs, COLS, 1); \
                    else                                                               \
                        UNROLL for (int j = 0; j < 4; j++)                             \
                            memcpy(acc + k + 8 * j, &a[j], sizeof a[j]);               \
                }                                                                      \
            NAME##_cols_exact(acc + k, x + r0 * rs + k * s, r1 - r0, rs, n - k, s);    \
        }                                                                              \
    }                                                                                  \
    DEFINE_TREE_VALUE(NAME, float, float, STEP, FOLD_LEAF)                              \
    DEFINE_F32_EXTREMUM_ROWS8(NAME, INIT, FAST16, STEP)                                \
    static void NAME##_rows(void *accv, int64_t ros, const void *xv, int64_t rows,     \
                            int64_t rxs, int64_t n, int64_t s)                         \
    {                                                                                  \
        float *acc = accv;                                                             \
        const float *x = xv;                                                           \
        int64_t ahead = rows_ahead(rows, rxs, n, s, sizeof *x);                        \
        for (int64_t i = NAME##_rows8(acc, ros, x, rows, rxs, n, s, ahead); i < rows; i++) { \
            prefetch_row_ahead(x, sizeof *x, i, rows, rxs, ahead, n);                  \
            float v = NAME##_tree(x + i * rxs, n, s), a = acc[i * ros];                \
            acc[i * ros] = STEP(a, v);                                                 \
        }                                                                              \
    }

DEFINE_F32_COLS(sum_f32, 0, VADD, VADD, ADD)
DEFINE_VEC_KERNELS(sum_f64, double, 0, VADD, ADD, SUM_LEAF)
DEFINE_KERNELS(sum_i32, int32_t, uint64_t, 0, ADD, FOLD_LEAF)
DEFINE_KERNELS(sum_i64, int64_t, uint64_t, 0, ADD, FOLD_LEAF)
DEFINE_VEC_KERNELS(prod_f32, float, 1, VMUL, MUL, FOLD_LEAF)
DEFINE_VEC_KERNELS(prod_f64, double, 1, VMUL, MUL, FOLD_LEAF)
DEFINE_KERNELS(prod_i32, int32_t, uint64_t, 1, MUL, FOLD_LEAF)
DEFINE_KERNELS(prod_i64, int64_t, uint64_t, 1, MUL, FOLD_LEAF)
DEFINE_F32_EXTREMUM_KERNELS(max_f32, -HUGE_VALF, FAST_MAX8, FAST_MAX16, VMAX8, FMAX)
DEFINE_VEC_KERNELS(max_f64, double, -HUGE_VAL, VMAX, FMAX, FOLD_LEAF)
DEFINE_KERNELS(max_i32, int32_t, int64_t, INT64_MIN, IMAX, FOLD_LEAF)
DEFINE_KERNELS(max_i64, int64_t, int64_t, INT64_MIN, IMAX, FOLD_LEAF)
DEFINE_F32_EXTREMUM_KERNELS(min_f32, HUGE_VALF, FAST_MIN8, FAST_MIN16, VMIN8, FMIN)
DEFINE_VEC_KERNELS(min_f64, double, HUGE_VAL, VMIN, FMIN, FOLD_LEAF)
DEFINE_KERNELS(min_i32, int32_t, int64_t, INT64_MAX, IMIN, FOLD_LEAF)
DEFINE_KERNELS(min_i64, int64_t, int64_t, INT64_MAX, IMIN, FOLD_LEAF)

typedef void (*RowsFn)(void *acc, int64_t ros, const void *x, int64_t rows, int64_t rxs,
                       int64_t n, int64_t s);
typedef void (*ColsFn)(void *acc, const void *x, int64_t rows, int64_t rs, int64_t n, int64_t s);

typedef void (*ValueFn)(void *out, const void *x, int64_t n, int64_t s);
typedef void (*CombineFn)(void *acc, const void *b);

typedef struct Kernels {
    RowsFn rows;
    ColsFn cols;
    ValueFn value;
    CombineFn combine;
    int64_t leaf;
    size_t acc_size; /* 8 bytes, or 4 for float32 max and min (in the output) */
} Kernels;

#define KERNELS(NAME, LEAF) {NAME##_rows, NAME##_cols, NAME##_value, NAME##_combine, LEAF, 8}
#define F32_KERNELS(NAME) {NAME##_rows, NAME##_cols, NAME##_value, NAME##_combine, FOLD_LEAF, 4}

/* Indexed [kind][dtype]; the mean runs as a sum. */
_Static_assert(MF_FLOAT32 == 0 && MF_FLOAT64 == 1 && MF_INT32 == 2 && MF_INT64 == 3,
               "the kernels' columns are in MfDType order");
_Static_assert(MF_REDUCE_MEAN == MF_REDUCE_MIN + 1,
               "a row per kind but the last, the mean (it runs as a sum)");
static const Kernels kernels[MF_REDUCE_MIN + 1][MF_INT64 + 1] = {
    [MF_REDUCE_SUM] = {KERNELS(sum_f32, F32_SUM_LEAF), KERNELS(sum_f64, SUM_LEAF),
                       KERNELS(sum_i32, FOLD_LEAF), KERNELS(sum_i64, FOLD_LEAF)},
    [MF_REDUCE_PROD] = {KERNELS(prod_f32, FOLD_LEAF), KERNELS(prod_f64, FOLD_LEAF),
                        KERNELS(prod_i32, FOLD_LEAF), KERNELS(prod_i64, FOLD_LEAF)},
    [MF_REDUCE_MAX] = {F32_KERNELS(max_f32), KERNELS(max_f64, FOLD_LEAF),
                       KERNELS(max_i32, FOLD_LEAF), KERNELS(max_i64, FOLD_LEAF)},
    [MF_REDUCE_MIN] = {F32_KERNELS(min_f32), KERNELS(min_f64, FOLD_LEAF),
                       KERNELS(min_i32, FOLD_LEAF), KERNELS(min_i64, FOLD_LEAF)},
};

/* ---- the serial walk ------------------------------------------------------------ */

typedef struct Walk {
    const Kernels *k;
    const char *x;
    char *acc;
    size_t es; /* input element size */
    size_t as; /* accumulator size */
    /* the accumulators' identity, and how they are written out */
    MfReduceKind kind; /* the mean runs as a sum */
    MfDType dt;
    void *out;
    bool mean;
    int64_t count; /* input elements per output element */
} Walk;

/* Columns are folded a tile of COL_TILE at a time over all the rows: the
 * tile's double accumulators (8 KiB) stay in L1 and each group of rows
 * reads 8 pieces of 4 KiB, where whole rows of (256, 16384) float32 moved
 * 128 KiB of accumulators through L2 per group of 8 rows (sum and max over
 * the first axis: 0.8x time at 4M elements, 0.67x at 131k). A column's
 * steps and their order do not change. */
#define COL_TILE 1024

/* The last two merged dims (or the only one) at input 'x', accumulators 'acc'. */
static void walk_block(const Walk *w, const Plan *p, const char *x, char *acc)
{
    int b = p->m - 1, a = p->m - 2;
    int64_t rows = a >= 0 ? p->n[a] : 1;
    int64_t rxs = a >= 0 ? p->xs[a] : 0, ros = a >= 0 ? p->os[a] : 0;
    if (p->red[b]) {
        w->k->rows(acc, ros, x, rows, rxs, p->n[b], p->xs[b]);
    } else if (a >= 0 && p->red[a]) {
        for (int64_t c = 0; c < p->n[b]; c += COL_TILE) {
            int64_t m = p->n[b] - c < COL_TILE ? p->n[b] - c : COL_TILE;
            w->k->cols(acc + (size_t)c * w->as, x + (size_t)(c * p->xs[b]) * w->es, rows, rxs,
                       m, p->xs[b]);
        }
    } else {
        for (int64_t i = 0; i < rows; i++)
            w->k->cols(acc + (size_t)(i * ros) * w->as, x + (size_t)(i * rxs) * w->es, 1, 0,
                       p->n[b], p->xs[b]);
    }
}

/* Every block of the plan, by odometer over the merged dims but the last two. */
static void walk_plan(const Walk *w, const Plan *p, const char *x, char *acc)
{
    int outer = p->m - 2;
    int64_t idx[MF_MAX_RANK] = {0}, blocks = 1, xo = 0, ao = 0;
    for (int i = 0; i < outer; i++)
        blocks *= p->n[i];
    for (int64_t r = 0; r < blocks; r++) {
        walk_block(w, p, x + (size_t)xo * w->es, acc + (size_t)ao * w->as);
        for (int i = outer - 1; i >= 0; i--) {
            xo += p->xs[i];
            ao += p->os[i];
            if (++idx[i] < p->n[i])
                break;
            xo -= p->xs[i] * p->n[i];
            ao -= p->os[i] * p->n[i];
            idx[i] = 0;
        }
    }
}

/* Sets accumulators [i, i + n) to the identity of the kind. */
static void acc_init(const Walk *w, int64_t i, int64_t n)
{
    void *acc = w->acc + (size_t)i * w->as;
    if (w->as == 4) { /* float32 max and min, in the output */
        float v = w->kind == MF_REDUCE_MAX ? -HUGE_VALF : HUGE_VALF;
        for (int64_t j = 0; j < n; j++)
            ((float *)acc)[j] = v;
    } else if (mf_dtype_is_float(w->dt)) {
        double v = w->kind == MF_REDUCE_PROD ? 1.0 : w->kind == MF_REDUCE_MAX ? -HUGE_VAL
                 : w->kind == MF_REDUCE_MIN ? HUGE_VAL : 0.0;
        for (int64_t j = 0; j < n; j++)
            ((double *)acc)[j] = v;
    } else {
        int64_t v = w->kind == MF_REDUCE_PROD ? 1 : w->kind == MF_REDUCE_MAX ? INT64_MIN
                  : w->kind == MF_REDUCE_MIN ? INT64_MAX : 0;
        for (int64_t j = 0; j < n; j++)
            ((int64_t *)acc)[j] = v;
    }
}

/* Writes accumulators [i, i + n) into the output (dividing by the count
 * for a mean). One loop per case, so that GCC vectorises the float
 * conversions. */
static void acc_finish(const Walk *w, int64_t i, int64_t n)
{
    if (w->as == 4) /* float32 max and min are already in place */
        return;
    const double *ad = (const double *)w->acc + i, dc = (double)w->count;
    const int64_t *ai = (const int64_t *)w->acc + i;
    float *of = (float *)w->out + i;
    double *od = (double *)w->out + i;
    int32_t *oi = (int32_t *)w->out + i;
    int64_t *ol = (int64_t *)w->out + i, count = w->count;
    switch (w->dt * 2 + w->mean) {
    case MF_FLOAT32 * 2: for (int64_t j = 0; j < n; j++) of[j] = (float)ad[j]; break;
    case MF_FLOAT32 * 2 + 1: for (int64_t j = 0; j < n; j++) of[j] = (float)(ad[j] / dc); break;
    case MF_FLOAT64 * 2: break; /* accumulated in place */
    case MF_FLOAT64 * 2 + 1: for (int64_t j = 0; j < n; j++) od[j] = ad[j] / dc; break;
    case MF_INT32 * 2: for (int64_t j = 0; j < n; j++) oi[j] = (int32_t)(uint32_t)ai[j]; break;
    case MF_INT32 * 2 + 1:
        for (int64_t j = 0; j < n; j++)
            oi[j] = (int32_t)(uint32_t)(ai[j] / count);
        break;
    case MF_INT64 * 2: break; /* accumulated in place */
    default: for (int64_t j = 0; j < n; j++) ol[j] = ai[j] / count; break;
    }
}

/* ---- tiles of the outermost kept dim ---------------------------------------------- */

/* Accumulators per tile: 16 KiB of doubles, in L1 while they are set,
 * folded and written out. */
#define TILE_OUT 2048

/* The outermost kept merged dim, or -1 when every dim is reduced. Its
 * indices [a, b) own accumulators [a * os, b * os): one range. */
static int outer_kept_dim(const Plan *p)
{
    for (int d = 0; d < p->m; d++)
        if (!p->red[d])
            return d;
    return -1;
}

/* Indices [i0, i1) of 'd', the outermost kept dim, a tile at a time: each
 * tile's accumulators are set, folded and written out by the thread that
 * owns them, while they sit in its cache (no serial pass over them before
 * or after, no lines moving between cores). An output element sees the
 * same steps in the same order as in one walk of the whole plan. Columns
 * (d the last dim) go COL_TILE at a time, the pieces walk_block reads the
 * rows in anyway: their accumulators stay in L1 from acc_init to
 * acc_finish, where a pass over all of them before and after the fold went
 * through L2. */
static void walk_tiles(const Walk *w, const Plan *p, int d, int64_t i0, int64_t i1)
{
    int64_t os = p->os[d], tile = i1 - i0;
    if (d < p->m - 1 && os * tile > TILE_OUT)
        tile = os >= TILE_OUT ? 1 : TILE_OUT / os;
    else if (d == p->m - 1 && tile > COL_TILE)
        tile = COL_TILE;
    for (int64_t a = i0; a < i1; a += tile) {
        int64_t b = a + tile < i1 ? a + tile : i1;
        Plan q = *p;
        q.n[d] = b - a;
        acc_init(w, a * os, (b - a) * os);
        walk_plan(w, &q, w->x + (size_t)(a * p->xs[d]) * w->es, w->acc + (size_t)(a * os) * w->as);
        acc_finish(w, a * os, (b - a) * os);
    }
}

/* ---- threads: disjoint output elements ------------------------------------------- */

#define SPLIT_MIN (1 << 17)   /* input elements worth waking a worker */
#define COLUMN_BLOCK 16       /* 64 bytes of float32: threads touch disjoint lines */

typedef struct SplitJob {
    const Walk *w;
    const Plan *p;
    int dim;      /* the kept merged dim cut into pieces */
    int64_t unit; /* its indices per piece */
    bool tiles;   /* it is the outermost kept dim: pieces own their accumulators */
} SplitJob;

static void walk_pieces(void *ctx, int64_t b, int64_t e)
{
    const SplitJob *j = ctx;
    Plan q = *j->p;
    int d = j->dim;
    int64_t i0 = b * j->unit, i1 = e * j->unit < q.n[d] ? e * j->unit : q.n[d];
    if (j->tiles) {
        walk_tiles(j->w, j->p, d, i0, i1);
        return;
    }
    q.n[d] = i1 - i0;
    walk_plan(j->w, &q, j->w->x + (size_t)(i0 * q.xs[d]) * j->w->es,
              j->w->acc + (size_t)(i0 * q.os[d]) * j->w->as);
}

/* The dim a split cuts, or -1: the outermost kept one when it gives each
 * thread 4 pieces or more (each thread then folds whole contiguous blocks
 * into accumulators it owns, in tiles), otherwise the kept dim with the
 * most pieces (the outermost on a tie). Cutting (8, 64, 256)'s columns in
 * the sum over its middle axis read every row in halves: 2 threads were
 * slower than 1 at 131k elements; by the first dim, 0.7x time (min). */
#define SPLIT_OUTER_PIECES 4
static int split_dim(const Plan *p, int64_t *unit)
{
    int best = -1, d0 = outer_kept_dim(p);
    int64_t most = 1;
    if (d0 >= 0 && d0 < p->m - 1 && p->n[d0] >= SPLIT_OUTER_PIECES * mf_parallel_threads()) {
        *unit = 1;
        return d0;
    }
    for (int d = 0; d < p->m; d++) {
        if (p->red[d])
            continue;
        int64_t u = d == p->m - 1 ? COLUMN_BLOCK : 1, pieces = (p->n[d] + u - 1) / u;
        if (pieces > most) {
            most = pieces;
            best = d;
            *unit = u;
        }
    }
    return best;
}

/* ---- threads: one long row -------------------------------------------------------- */

#define MAX_PARTS 64
#define ROW_SPLIT_DEPTH 5 /* up to 32 subtrees: even work on a few threads */

typedef MfReduceAcc Acc;

typedef struct RowJob {
    const Walk *w;
    int64_t s;
    int64_t at[MAX_PARTS], n[MAX_PARTS]; /* subtrees: elements [at, at + n) */
    Acc vals[MAX_PARTS];
    int nparts;
} RowJob;

/* Collects the subtrees of [at, at + n) at 'depth' levels down, in order. */
static void collect_parts(RowJob *j, int64_t at, int64_t n, int depth)
{
    if (depth == 0 || n <= j->w->k->leaf) {
        j->at[j->nparts] = at;
        j->n[j->nparts++] = n;
        return;
    }
    int64_t h = tree_half(n, j->w->k->leaf);
    collect_parts(j, at, h, depth - 1);
    collect_parts(j, at + h, n - h, depth - 1);
}

/* The value of the tree over 'n' elements from the values of its subtrees
 * 'depth' levels down (or its leaves), taken in order from '*next': the
 * tree that collect_parts cut. */
static Acc tree_of_values(const Kernels *k, const Acc *vals, int64_t n, int depth,
                          int64_t *next)
{
    if (depth == 0 || n <= k->leaf)
        return vals[(*next)++];
    int64_t h = tree_half(n, k->leaf);
    Acc a = tree_of_values(k, vals, h, depth - 1, next);
    Acc b = tree_of_values(k, vals, n - h, depth - 1, next);
    k->combine(&a, &b);
    return a;
}

static void row_parts(void *ctx, int64_t b, int64_t e)
{
    RowJob *j = ctx;
    for (int64_t i = b; i < e; i++)
        j->w->k->value(&j->vals[i], j->w->x + (size_t)(j->at[i] * j->s) * j->w->es, j->n[i],
                       j->s);
}

/* One row of 'n' elements, stride 's', into the single accumulator. */
static void walk_long_row(const Walk *w, int64_t n, int64_t s)
{
    RowJob *j = &(RowJob){.w = w, .s = s};
    collect_parts(j, 0, n, ROW_SPLIT_DEPTH);
    mf_parallel_for(j->nparts, 1, row_parts, j);
    int64_t next = 0;
    Acc v = tree_of_values(w->k, j->vals, n, ROW_SPLIT_DEPTH, &next);
    w->k->combine(w->acc, &v);
}

/* ---- entry ------------------------------------------------------------------------ */

/* Sets the accumulators, walks the plan (split over the pool when it is
 * large) and writes the output. */
static void walk(const Walk *w, const Plan *p, int64_t numel, int64_t nout)
{
    int64_t unit = 1;
    int d = split_dim(p, &unit), d0 = outer_kept_dim(p);
    bool split = numel >= SPLIT_MIN && mf_parallel_threads() >= 2;
    if (split && d >= 0) {
        SplitJob j = {w, p, d, unit, d == d0};
        int64_t pieces = (p->n[d] + unit - 1) / unit;
        int64_t per_piece = numel / pieces, min_pieces = SPLIT_MIN / 2 / (per_piece + 1) + 1;
        if (!j.tiles)
            acc_init(w, 0, nout);
        mf_parallel_for(pieces, min_pieces, walk_pieces, &j);
        if (!j.tiles)
            acc_finish(w, 0, nout);
    } else if (d0 >= 0) {
        walk_tiles(w, p, d0, 0, p->n[d0]);
    } else {
        acc_init(w, 0, nout);
        if (split && p->m == 1)
            walk_long_row(w, p->n[0], p->xs[0]);
        else
            walk_plan(w, p, w->x, w->acc);
        acc_finish(w, 0, nout);
    }
}

/* True when a dim longer than 1 has stride 0 (a BroadcastTo view). */
static bool has_stretched_dim(const MfTensor *x)
{
    for (int i = 0; i < x->rank; i++)
        if (x->shape[i] > 1 && x->strides[i] == 0)
            return true;
    return false;
}

/* A stretched input is reduced as its values written out: the order of
 * combination follows the merged layout, and a sum of a broadcast must
 * have the bits it had when BroadcastTo copied. */
static MfStatus reduce_copy(MfReduceKind kind, const MfTensor *x, const bool *reduced,
                            MfTensor *out, const char *who)
{
    MfTensor *xc = mf_tensor_clone(x);
    if (!xc)
        return MF_ENOMEM;
    MfStatus st = mf_reduce_into(kind, xc, reduced, out, who);
    mf_tensor_release(xc);
    return st;
}

MfStatus mf_reduce_into(MfReduceKind kind, const MfTensor *x, const bool *reduced,
                        MfTensor *out, const char *who)
{
    int64_t n = mf_tensor_numel(out);
    if (n == 0)
        return MF_OK;
    if (has_stretched_dim(x))
        return reduce_copy(kind, x, reduced, out, who);
    Plan p;
    plan_build(&p, x, reduced);
    MfReduceKind wk = kind == MF_REDUCE_MEAN ? MF_REDUCE_SUM : kind;
    const Kernels *k = &kernels[wk][x->dtype];
    size_t nbytes = (size_t)n * 8;
    /* accumulators of the output's own size live in it */
    bool in_place = k->acc_size == mf_dtype_size(out->dtype);
    void *acc = in_place ? mf_tensor_data(out) : mf_alloc(nbytes);
    if (!acc)
        return mf_err_nomem(who, nbytes);
    Walk w = {k, mf_tensor_data(x), acc, mf_dtype_size(x->dtype), k->acc_size,
              wk, x->dtype, mf_tensor_data(out), kind == MF_REDUCE_MEAN, p.count};
    int64_t numel = mf_tensor_numel(x);
    if (numel > 0) {
        walk(&w, &p, numel, n);
    } else { /* an empty reduction: the identity */
        acc_init(&w, 0, n);
        acc_finish(&w, 0, n);
    }
    if (!in_place)
        mf_dealloc(acc, nbytes);
    return MF_OK;
}

/* ---- a row that comes a piece at a time --------------------------------------------- */

static const Kernels *kernels_of(MfReduceKind kind, MfDType dt)
{
    return &kernels[kind == MF_REDUCE_MEAN ? MF_REDUCE_SUM : kind][dt];
}

int64_t mf_reduce_leaf_len(MfReduceKind kind, MfDType dt)
{
    return kernels_of(kind, dt)->leaf;
}

void mf_reduce_leaf(MfReduceKind kind, MfDType dt, const void *x, int64_t n, MfReduceAcc *v)
{
    kernels_of(kind, dt)->value(v, x, n, 1);
}

/* What mf_reduce_into does with one row of 'n' (walk_long_row, or the
 * serial walk's row): the identity, combined with the tree's value, then
 * written out. */
void mf_reduce_leaves_into(MfReduceKind kind, const MfReduceAcc *leaves, int64_t n,
                           MfTensor *out)
{
    MfReduceKind wk = kind == MF_REDUCE_MEAN ? MF_REDUCE_SUM : kind;
    const Kernels *k = kernels_of(kind, out->dtype);
    Acc acc;
    bool in_place = k->acc_size == mf_dtype_size(out->dtype);
    Walk w = {k, NULL, in_place ? mf_tensor_data(out) : (char *)&acc, 0, k->acc_size,
              wk, out->dtype, mf_tensor_data(out), kind == MF_REDUCE_MEAN, n};
    acc_init(&w, 0, 1);
    if (n > 0) {
        int64_t next = 0;
        Acc v = tree_of_values(k, leaves, n, INT_MAX, &next);
        k->combine(w.acc, &v);
    }
    acc_finish(&w, 0, 1);
}

/* ---- columns a piece at a time (reduce_walk.h) ----------------------------------------- */

_Static_assert(MF_REDUCE_ROW_GROUP == ROW_GROUP, "the header's row group is the kernels'");

size_t mf_reduce_acc_size(MfReduceKind kind, MfDType dt)
{
    return kernels_of(kind, dt)->acc_size;
}

/* A walk of the accumulators 'acc' into 'out' (NULL: none), as mf_reduce_into's. */
static Walk cols_walk(MfReduceKind kind, MfDType dt, void *acc, void *out, int64_t count)
{
    const Kernels *k = kernels_of(kind, dt);
    MfReduceKind wk = kind == MF_REDUCE_MEAN ? MF_REDUCE_SUM : kind;
    return (Walk){k, NULL, acc, mf_dtype_size(dt), k->acc_size,
                  wk, dt, out, kind == MF_REDUCE_MEAN, count};
}

void mf_reduce_cols_init(MfReduceKind kind, MfDType dt, void *acc, int64_t n)
{
    Walk w = cols_walk(kind, dt, acc, NULL, 0);
    acc_init(&w, 0, n);
}

void mf_reduce_cols(MfReduceKind kind, MfDType dt, void *acc, const void *x, int64_t rows,
                    int64_t n)
{
    kernels_of(kind, dt)->cols(acc, x, rows, n, n, 1);
}

void mf_reduce_cols_finish(MfReduceKind kind, const void *acc, int64_t n, int64_t count,
                           MfTensor *out)
{
    Walk w = cols_walk(kind, out->dtype, (void *)acc, mf_tensor_data(out), count);
    if (w.as == mf_dtype_size(out->dtype)) /* mf_reduce_into keeps these in the output */
        memcpy(w.out, acc, (size_t)n * w.as);
    acc_finish(&w, 0, n);
}

double mf_sum_row_f32(const float *x, int64_t n)
{
    return sum_f32_tree(x, n, 1);
}

void mf_sum_rows2_f32(const float *a, const float *b, int64_t n, double *sa, double *sb)
{
    sum_f32_pair(a, b, n, sa, sb);
}

double mf_sqdev_row_f32(const float *x, int64_t n, float c)
{
    return sqdev_f32_tree(x, n, c);
}

double mf_scaled_dev_row_f32(const float *x, const float *dy, float *out, int64_t n, float c,
                             float r)
{
    return scaled_f32_tree(x, dy, out, n, c, r);
}

double mf_sum_row_f64(const double *x, int64_t n)
{
    return sum_f64_tree(x, n, 1);
}

double mf_max_row_f32(const float *x, int64_t n)
{
    return max_f32_tree(x, n, 1);
}
