/* test_reduce.c — reductions, arg-reductions and clipping: values against
 * hand-computed results, strided inputs, dtypes, empty reductions, unknown
 * dims in inference, every error path, and allocation failures. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/clip.h"
#include "core/ops/reduce.h"
#include "core/ops/reduce_walk.h"

static const int64_t S23[2] = {2, 3};
static const double V23[6] = {1, 2, 3, 4, 5, 6};

static MfTensor *reduce(MfOpId op, MfTensor *t, const int64_t *axes, int naxes, bool keep)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_reduce(op, t, axes, naxes, keep, &out), MF_OK);
    return out;
}

static void assert_shape(const MfTensor *t, int rank, const int64_t *shape)
{
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->shape[i], shape[i]);
}

/* Reduces, checks values and shape, and releases the result. */
static void check(MfOpId op, MfTensor *t, const int64_t *axes, int naxes, bool keep, int rank,
                  const int64_t *shape, const double *expect, double tol)
{
    MfTensor *r = reduce(op, t, axes, naxes, keep);
    assert_shape(r, rank, shape);
    assert_values(r, expect, mf_shape_numel(rank, shape), tol);
    mf_tensor_release(r);
}

static void test_sum_axes(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    check(MF_OP_SUM, t, NULL, 0, false, 0, NULL, (double[]){21}, 0);
    check(MF_OP_SUM, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3}, (double[]){5, 7, 9}, 0);
    check(MF_OP_SUM, t, (int64_t[]){1}, 1, false, 1, (int64_t[]){2}, (double[]){6, 15}, 0);
    check(MF_OP_SUM, t, (int64_t[]){-1}, 1, true, 2, (int64_t[]){2, 1}, (double[]){6, 15}, 0);
    check(MF_OP_SUM, t, NULL, 0, true, 2, (int64_t[]){1, 1}, (double[]){21}, 0);
    /* no axes (TensorFlow's axis=[]): nothing is reduced */
    check(MF_OP_SUM, t, (int64_t[]){0}, 0, false, 2, S23, V23, 0);
    mf_tensor_release(t);
}

static void test_mean_max_min_prod(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT64, 2, S23, (double[]){1, -2, 3, 4, 5, -6});
    check(MF_OP_MEAN, t, NULL, 0, false, 0, NULL, (double[]){5.0 / 6}, 1e-12);
    check(MF_OP_MEAN, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3},
          (double[]){2.5, 1.5, -1.5}, 1e-12);
    check(MF_OP_MAX, t, (int64_t[]){1}, 1, false, 1, (int64_t[]){2}, (double[]){3, 5}, 0);
    check(MF_OP_MIN, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3}, (double[]){1, -2, -6}, 0);
    check(MF_OP_PROD, t, NULL, 0, false, 0, NULL, (double[]){720}, 0);
    check(MF_OP_PROD, t, (int64_t[]){1}, 1, false, 1, (int64_t[]){2}, (double[]){-6, -120}, 0);
    mf_tensor_release(t);
}

/* A rank-3 tensor reduced over the middle axis, over the outer two, and
 * over the first and last (the walk's mixed patterns). */
static void test_rank3_patterns(void **state)
{
    (void)state;
    int64_t s[3] = {2, 3, 2};
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i;
    MfTensor *t = make_tensor(MF_INT32, 3, s, v);
    check(MF_OP_SUM, t, (int64_t[]){1}, 1, false, 2, (int64_t[]){2, 2},
          (double[]){6, 9, 24, 27}, 0);
    check(MF_OP_SUM, t, (int64_t[]){0, 1}, 2, false, 1, (int64_t[]){2}, (double[]){30, 36}, 0);
    check(MF_OP_SUM, t, (int64_t[]){0, 2}, 2, true, 3, (int64_t[]){1, 3, 1},
          (double[]){14, 22, 30}, 0);
    check(MF_OP_MAX, t, (int64_t[]){2, 0}, 2, false, 1, (int64_t[]){3}, (double[]){7, 9, 11}, 0);
    mf_tensor_release(t);
}

/* A transposed view (non-contiguous) reduces like its contiguous copy. */
static void test_strided_input(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    MfTensor *tt = mf_tensor_view(t, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    assert_non_null(tt);
    check(MF_OP_SUM, tt, (int64_t[]){1}, 1, false, 1, (int64_t[]){3}, (double[]){5, 7, 9}, 0);
    check(MF_OP_SUM, tt, (int64_t[]){0}, 1, false, 1, (int64_t[]){2}, (double[]){6, 15}, 0);
    check(MF_OP_MAX, tt, NULL, 0, false, 0, NULL, (double[]){6}, 0);
    MfTensor *am = NULL;
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, tt, 0, &am), MF_OK);
    assert_values(am, (double[]){3, 3}, 2, 0);
    mf_tensor_release(am);
    mf_tensor_release(tt);
    mf_tensor_release(t);
}

/* float32 sums accumulate in double: a million 0.1f add up to 100000 within
 * float32 rounding of the result, where a float accumulator drifts by ~1%. */
static void test_float32_accuracy(void **state)
{
    (void)state;
    int64_t n = 1000000;
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 1, &n);
    assert_non_null(t);
    float *d = mf_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = 0.1f;
    MfTensor *s = reduce(MF_OP_SUM, t, NULL, 0, false);
    assert_values(s, (double[]){(double)0.1f * 1e6}, 1, 0.01);
    MfTensor *m = reduce(MF_OP_MEAN, t, NULL, 0, false);
    assert_values(m, (double[]){(double)0.1f}, 1, 1e-8);
    mf_tensor_release(s);
    mf_tensor_release(m);
    mf_tensor_release(t);
}

/* Float32 sums along the last axis give every row the bits of that row
 * summed alone (mf_sum_row_f32): short rows are summed two at a time, and
 * an odd row, a row with a tail past the last 32 elements, a row longer
 * than one block of 256 and rows of a sliced (strided) view must not tell. */
static void test_float32_rows_match_one_row(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    for (int64_t n = 1; n <= 300; n += (n < 40 || n > 250) ? 1 : 7) {
        int64_t rows = 5, wide = n + 3;
        MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, wide});
        assert_non_null(t);
        float *d = mf_tensor_data(t);
        for (int64_t i = 0; i < rows * wide; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d[i] = (float)((double)(seed >> 11) * 0x1p-53 * 8 - 4) * (i % 5 == 0 ? 1e4f : 1);
        }
        MfTensor *full = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){n, 1}, 0);
        MfTensor *sliced = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){wide, 1}, 1);
        assert_non_null(full);
        assert_non_null(sliced);
        for (int v = 0; v < 2; v++) {
            MfTensor *r = reduce(MF_OP_SUM, v ? sliced : full, (int64_t[]){1}, 1, false);
            const float *got = mf_tensor_data(r);
            for (int64_t i = 0; i < rows; i++) {
                float want = (float)mf_sum_row_f32(d + (v ? i * wide + 1 : i * n), n);
                if (memcmp(&got[i], &want, sizeof want) != 0)
                    fail_msg("row %lld of %lld (%s): %.9g, alone %.9g", (long long)i,
                             (long long)n, v ? "sliced" : "contiguous", (double)got[i], (double)want);
            }
            mf_tensor_release(r);
        }
        mf_tensor_release(sliced);
        mf_tensor_release(full);
        mf_tensor_release(t);
    }
}

/* Rows read from beyond L2 (more than 1 MiB of them: reduce_walk.c
 * requests the rows ahead, two tiles of 2048 rows and a part of one)
 * give each row's sum and max as that row alone, contiguous or sliced,
 * for rows of one line, a block (the longest that are prefetched, 1 KiB),
 * a block and one, and rows of 4 KiB and one more. */
static void test_float32_rows_beyond_l2_match_one_row(void **state)
{
    (void)state;
    const int64_t lengths[] = {16, 256, 257, 1024, 1025};
    uint64_t seed = 4242;
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int64_t n = lengths[li], wide = n + 3, rows = (1 << 20) / (n * 4) + 4100;
        MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, wide});
        assert_non_null(t);
        float *d = mf_tensor_data(t);
        for (int64_t i = 0; i < rows * wide; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d[i] = (float)((double)(seed >> 11) * 0x1p-53 * 8 - 4);
        }
        MfTensor *full = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){n, 1}, 0);
        MfTensor *sliced = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){wide, 1}, 1);
        assert_non_null(full);
        assert_non_null(sliced);
        for (int v = 0; v < 4; v++) {
            bool max = v & 1;
            MfTensor *r = reduce(max ? MF_OP_MAX : MF_OP_SUM, v & 2 ? sliced : full,
                                 (int64_t[]){1}, 1, false);
            const float *got = mf_tensor_data(r);
            for (int64_t i = 0; i < rows; i++) {
                const float *row = d + (v & 2 ? i * wide + 1 : i * n);
                float want = (float)(max ? mf_max_row_f32(row, n) : mf_sum_row_f32(row, n));
                if (memcmp(&got[i], &want, sizeof want) != 0)
                    fail_msg("%s of row %lld of %lld x %lld (%s): %.9g, alone %.9g",
                             max ? "max" : "sum", (long long)i, (long long)rows, (long long)n,
                             v & 2 ? "sliced" : "contiguous", (double)got[i], (double)want);
            }
            mf_tensor_release(r);
        }
        mf_tensor_release(sliced);
        mf_tensor_release(full);
        mf_tensor_release(t);
    }
}

/* The documented order of a float32 row sum, written plainly: leaves of at
 * most 2048 elements split at whole leaves, half on each side; in a leaf,
 * blocks of 256 folded in 32 float lanes from zero, each block's lanes
 * added into 32 double lanes; lanes l and l + 16, l and l + 8, l and l + 4
 * combined, then (0 + 1) + (2 + 3); then the tail past the last 32, in
 * double. */
static double row_sum_in_order(const float *x, int64_t n)
{
    if (n > 2048) {
        int64_t h = (n / 2048 + 1) / 2 * 2048;
        return row_sum_in_order(x, h) + row_sum_in_order(x + h, n - h);
    }
    int64_t whole = n - n % 32;
    double d[32] = {0}, r = 0;
    if (whole > 0) {
        for (int64_t b = 0; b < whole; b += 256) {
            float f[32] = {0};
            for (int64_t i = b; i < whole && i < b + 256; i += 32)
                for (int l = 0; l < 32; l++)
                    f[l] += x[i + l];
            for (int l = 0; l < 32; l++)
                d[l] = b == 0 ? (double)f[l] : d[l] + (double)f[l];
        }
        for (int w = 16; w >= 4; w /= 2)
            for (int l = 0; l < w; l++)
                d[l] += d[l + w];
        r = (d[0] + d[1]) + (d[2] + d[3]);
    }
    for (int64_t i = whole; i < n; i++)
        r += (double)x[i];
    return r;
}

/* Values whose sum depends on the order of every addition, in float and
 * in double: +-2^60 (sums of them are exact, and they cancel) among values
 * of a few units, which each addition to a 2^60 drops. */
static float order_sensitive(uint64_t seed, int64_t i)
{
    if (i % 11 == 0)
        return seed >> 63 ? 0x1p60f : -0x1p60f;
    return (float)((double)(seed >> 11) * 0x1p-53 * 8 - 4) * (i % 7 == 0 ? 1e3f : 1);
}

/* Float32 sums along the last axis of many rows follow the documented
 * order on every instruction-set path (reduce_walk.c sums 8 short rows at
 * once with AVX-512, 2 with AVX2, one by one otherwise): rows of every
 * length up to a block and past it, with and without a tail, groups of 8
 * rows and the rows left over, contiguous and sliced; and a row alone
 * (mf_sum_row_f32), up to several leaves. */
static void test_float32_rows_follow_the_order(void **state)
{
    (void)state;
    uint64_t seed = 777;
    for (int64_t n = 1; n <= 300; n++) {
        int64_t rows = 19, wide = n + 3;
        MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, wide});
        assert_non_null(t);
        float *d = mf_tensor_data(t);
        for (int64_t i = 0; i < rows * wide; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d[i] = order_sensitive(seed, i);
        }
        for (int v = 0; v < 2; v++) {
            int64_t rs = v ? wide : n;
            MfTensor *x = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){rs, 1}, 0);
            assert_non_null(x);
            MfTensor *r = reduce(MF_OP_SUM, x, (int64_t[]){1}, 1, false);
            const float *got = mf_tensor_data(r);
            for (int64_t i = 0; i < rows; i++) {
                float want = (float)row_sum_in_order(d + i * rs, n);
                if (memcmp(&got[i], &want, sizeof want) != 0)
                    fail_msg("row %lld of %lld x %lld, rows %lld apart: %.9g, want %.9g",
                             (long long)i, (long long)rows, (long long)n, (long long)rs,
                             (double)got[i], (double)want);
            }
            mf_tensor_release(r);
            mf_tensor_release(x);
        }
        mf_tensor_release(t);
    }
    /* the max of rows of signed zeros and negative values, which a zero
     * tops: which zero depends on the order of the steps */
    for (int64_t n = 1; n <= 300; n += n < 40 ? 1 : 9) {
        int64_t rows = 19;
        MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, n});
        assert_non_null(t);
        float *d = mf_tensor_data(t);
        for (int64_t i = 0; i < rows * n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d[i] = i % 3 ? -(float)(seed >> 40) : seed >> 63 ? 0.0f : -0.0f;
        }
        MfTensor *r = reduce(MF_OP_MAX, t, (int64_t[]){1}, 1, false);
        const float *got = mf_tensor_data(r);
        for (int64_t i = 0; i < rows; i++) {
            float want = (float)mf_max_row_f32(d + i * n, n);
            if (memcmp(&got[i], &want, sizeof want) != 0)
                fail_msg("max of row %lld of %lld x %lld: %a, alone %a", (long long)i,
                         (long long)rows, (long long)n, (double)got[i], (double)want);
        }
        mf_tensor_release(r);
        mf_tensor_release(t);
    }
    enum { LONG = 9000 };
    static float a[LONG];
    for (int i = 0; i < LONG; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = order_sensitive(seed, i);
    }
    for (int64_t n = 1; n <= LONG; n += n < 600 ? 13 : 1031) {
        double got = mf_sum_row_f32(a, n), want = row_sum_in_order(a, n);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("a row of %lld alone: %a, want %a", (long long)n, got, want);
    }
}

/* Columns of wide rows (reduce_walk.c folds them a tile of columns at a
 * time): a column's float32 sum follows the documented order (groups of 8
 * rows summed in float from zero, each added into a double), its max is
 * the plain max; tiles, vectors of 32 columns and the columns past them,
 * contiguous and sliced rows. */
static void test_float32_wide_columns_follow_the_order(void **state)
{
    (void)state;
    int64_t rows = 19, n = 2 * 1024 + 37, wide = n + 5;
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, wide});
    assert_non_null(t);
    float *d = mf_tensor_data(t);
    uint64_t seed = 99;
    for (int64_t i = 0; i < rows * wide; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        d[i] = (float)((double)(seed >> 11) * 0x1p-53 * 8 - 4) * (i % 3 == 0 ? 1e3f : 1);
    }
    for (int v = 0; v < 4; v++) {
        bool max = v & 1;
        int64_t rs = v & 2 ? wide : n;
        MfTensor *x = mf_tensor_view(t, 2, (int64_t[]){rows, n}, (int64_t[]){rs, 1}, 0);
        assert_non_null(x);
        MfTensor *r = reduce(max ? MF_OP_MAX : MF_OP_SUM, x, (int64_t[]){0}, 1, false);
        const float *got = mf_tensor_data(r);
        for (int64_t k = 0; k < n; k++) {
            double acc = 0;
            float hi = -INFINITY;
            for (int64_t r0 = 0; r0 < rows; r0 += 8) {
                float f = 0;
                for (int64_t i = r0; i < rows && i < r0 + 8; i++) {
                    f += d[i * rs + k];
                    hi = d[i * rs + k] > hi ? d[i * rs + k] : hi;
                }
                acc += (double)f;
            }
            float want = max ? hi : (float)acc;
            if (memcmp(&got[k], &want, sizeof want) != 0)
                fail_msg("%s of column %lld of (%lld, %lld), rows %lld apart: %.9g, want %.9g",
                         max ? "max" : "sum", (long long)k, (long long)rows, (long long)n,
                         (long long)rs, (double)got[k], (double)want);
        }
        mf_tensor_release(r);
        mf_tensor_release(x);
    }
    mf_tensor_release(t);
}

/* The row helpers of the row kernels (layer_norm.c): two rows summed
 * together, and a row's squared deviations summed as they are made, give
 * the bits of mf_sum_row_f32 over the rows (over the squares written out),
 * for rows of one block, several blocks, several leaves and with tails. */
static void test_float32_row_helpers_match_row_sum(void **state)
{
    (void)state;
    enum { MAX_N = 5000 };
    static float a[MAX_N], b[MAX_N], sq[MAX_N], scaled[MAX_N + 1];
    uint64_t seed = 99;
    for (int i = 0; i < MAX_N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (float)((double)(seed >> 11) * 0x1p-53 * 8 - 3);
        b[i] = a[i] * 0.37f + (float)(i % 11);
    }
    for (int64_t n = 1; n <= MAX_N; n += n < 300 ? 1 : 397) {
        double sa, sb, want_a = mf_sum_row_f32(a, n), want_b = mf_sum_row_f32(b, n);
        mf_sum_rows2_f32(a, b, n, &sa, &sb);
        if (memcmp(&sa, &want_a, sizeof sa) != 0 || memcmp(&sb, &want_b, sizeof sb) != 0)
            fail_msg("two rows of %lld: %a %a, alone %a %a", (long long)n, sa, sb, want_a, want_b);
        float ca = (float)(want_a / (double)n);
        for (int64_t i = 0; i < n; i++) {
            float d = a[i] - ca;
            sq[i] = d * d;
        }
        double want_sq = mf_sum_row_f32(sq, n), got_sq = mf_sqdev_row_f32(a, n, ca);
        if (memcmp(&got_sq, &want_sq, sizeof got_sq) != 0)
            fail_msg("squared deviations of %lld: %a, written out %a", (long long)n, got_sq,
                     want_sq);
        /* LayerNormGrad's dy * ((x - m) * r): written as the plain loop writes
         * it, summed as mf_sum_row_f32 sums it afterwards */
        float r = 0.731f;
        for (int64_t i = 0; i < n; i++)
            sq[i] = b[i] * ((a[i] - ca) * r);
        double want_sc = mf_sum_row_f32(sq, n);
        memset(scaled, 0xff, sizeof scaled);
        double got_sc = mf_scaled_dev_row_f32(a, b, scaled, n, ca, r);
        if (memcmp(&got_sc, &want_sc, sizeof got_sc) != 0 ||
            memcmp(scaled, sq, (size_t)n * sizeof *sq) != 0 || scaled[n] == scaled[n])
            fail_msg("scaled deviations of %lld: %a, written out %a", (long long)n, got_sc,
                     want_sc);
    }
}

static void test_int_dtypes(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2};
    MfTensor *a = make_tensor(MF_INT32, 2, s, (double[]){1, 2, -1, -2});
    /* integer mean truncates as TensorFlow's: 3/2 = 1, -3/2 = -1 */
    check(MF_OP_MEAN, a, (int64_t[]){1}, 1, false, 1, (int64_t[]){2}, (double[]){1, -1}, 0);
    check(MF_OP_MIN, a, NULL, 0, false, 0, NULL, (double[]){-2}, 0);
    MfTensor *b = make_tensor(MF_INT64, 2, s, (double[]){1000000, 1000000, 1000, 3});
    check(MF_OP_PROD, b, NULL, 0, false, 0, NULL, (double[]){3e15}, 0);
    check(MF_OP_SUM, b, (int64_t[]){0}, 1, false, 1, (int64_t[]){2}, (double[]){1001000, 1000003},
          0);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

static void test_nan_propagates(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, (double[]){1, DNAN, 3, 4, 5, 6});
    check(MF_OP_MAX, t, (int64_t[]){1}, 1, false, 1, (int64_t[]){2}, (double[]){DNAN, 6}, 0);
    check(MF_OP_MIN, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3}, (double[]){1, DNAN, 3}, 0);
    mf_tensor_release(t);
}

/* Float32 max and min take a plain vector max and fold a piece again
 * NaN-propagating when it held a NaN: a NaN anywhere (first vector, middle,
 * the tail past the last 32, a second leaf of 4096) makes its row's or
 * column's result that NaN, payload and all, and leaves the others at the
 * true extremum. */
static void test_float32_extrema_nan_anywhere(void **state)
{
    (void)state;
    const int64_t lengths[] = {32, 33, 64, 255, 256, 300, 4096, 5000};
    const uint32_t payload = 0x7fc01234u;
    float nan;
    memcpy(&nan, &payload, sizeof nan);
    uint64_t seed = 777;
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int64_t n = lengths[li], at[] = {0, 7, 31, n / 2, n - 1};
        for (size_t ai = 0; ai < sizeof at / sizeof *at; ai++) {
            for (int cols = 0; cols < 2; cols++) {
                /* rows: (11, n) over axis 2, NaN in row 'hit' (a group of 8
                 * rows and 3 more; the 8-row kernel notes NaNs by row mod 4);
                 * columns: (n, 40) over axis 1 (32 in vectors, 8 one by one),
                 * NaN in column 'hit' */
                int64_t hit = (int64_t)(ai + li) % 4 == 3 ? 7 : (int64_t)(ai + li) % 4;
                int64_t m = cols ? 40 : 11, shape[2] = {cols ? n : 11, cols ? 40 : n};
                MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, shape);
                assert_non_null(t);
                float *d = mf_tensor_data(t), hi[40], lo[40];
                for (int k = 0; k < m; k++)
                    hi[k] = -INFINITY, lo[k] = INFINITY;
                for (int64_t i = 0; i < m * n; i++) {
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    d[i] = (float)((double)(seed >> 11) * 0x1p-53 * 200 - 100);
                    int64_t k = cols ? i % m : i / n;
                    hi[k] = d[i] > hi[k] ? d[i] : hi[k];
                    lo[k] = d[i] < lo[k] ? d[i] : lo[k];
                }
                d[cols ? at[ai] * m + hit : hit * n + at[ai]] = nan;
                for (int op = 0; op < 2; op++) {
                    MfTensor *r = reduce(op ? MF_OP_MIN : MF_OP_MAX, t, (int64_t[]){cols ? 0 : 1},
                                         1, false);
                    const float *got = mf_tensor_data(r);
                    for (int64_t k = 0; k < m; k++) {
                        uint32_t bits;
                        memcpy(&bits, &got[k], sizeof bits);
                        if (k == hit ? bits != payload : got[k] != (op ? lo[k] : hi[k]))
                            fail_msg("%s of %s of %lld, NaN at %lld: result %lld is %a",
                                     op ? "min" : "max", cols ? "columns" : "rows",
                                     (long long)n, (long long)at[ai], (long long)k,
                                     (double)got[k]);
                    }
                    mf_tensor_release(r);
                }
                mf_tensor_release(t);
            }
        }
    }
}

static void test_empty_reductions(void **state)
{
    (void)state;
    int64_t s[2] = {0, 3};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, s);
    assert_non_null(t);
    check(MF_OP_SUM, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3}, (double[]){0, 0, 0}, 0);
    check(MF_OP_PROD, t, (int64_t[]){0}, 1, false, 1, (int64_t[]){3}, (double[]){1, 1, 1}, 0);
    check(MF_OP_MEAN, t, NULL, 0, false, 0, NULL, (double[]){DNAN}, 0);
    check(MF_OP_MAX, t, (int64_t[]){1}, 1, false, 1, (int64_t[]){0}, NULL, 0);
    MfTensor *out = NULL;
    assert_int_equal(mf_reduce(MF_OP_MAX, t, (int64_t[]){0}, 1, false, &out), MF_EARG);
    assert_null(out);
    assert_error_contains("reduce_max: axis 1 has size 0");
    assert_int_equal(mf_argreduce(MF_OP_ARGMIN, t, 0, &out), MF_EARG);
    assert_error_contains("argmin: axis 1 has size 0");
    MfTensor *i = mf_tensor_new(MF_INT32, 2, s);
    assert_int_equal(mf_reduce(MF_OP_MEAN, i, NULL, 0, false, &out), MF_EARG);
    assert_error_contains("reduce_mean: axis 1 has size 0");
    mf_tensor_release(i);
    mf_tensor_release(t);
}

static void test_scalar_input(void **state)
{
    (void)state;
    MfTensor *t = mf_tensor_scalar(MF_FLOAT64, 2.5);
    check(MF_OP_SUM, t, NULL, 0, false, 0, NULL, (double[]){2.5}, 0);
    check(MF_OP_MAX, t, NULL, 0, true, 0, NULL, (double[]){2.5}, 0);
    MfTensor *out = NULL;
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, t, 0, &out), MF_EARG);
    assert_error_contains("argmax: a scalar has no axes");
    mf_tensor_release(t);
}

static void test_reduce_errors(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    MfTensor *b = make_tensor(MF_BOOL, 2, S23, V23);
    MfTensor *out = NULL;
    assert_int_equal(mf_reduce(MF_OP_SUM, t, (int64_t[]){2}, 1, false, &out), MF_EARG);
    assert_null(out);
    assert_error_contains("reduce_sum: axis 3 out of range for rank 2 (axes are 1-based: 1..2");
    assert_int_equal(mf_reduce(MF_OP_PROD, t, (int64_t[]){1, -1}, 2, false, &out), MF_EARG);
    assert_error_contains("reduce_prod: axis 2 is listed twice");
    assert_int_equal(mf_reduce(MF_OP_SUM, t, (int64_t[]){0}, 9, false, &out), MF_EARG);
    assert_error_contains("reduce_sum: expected at most 8 axes, got 9");
    assert_int_equal(mf_reduce(MF_OP_MEAN, b, NULL, 0, false, &out), MF_EDTYPE);
    assert_error_contains("reduce_mean: expected a numeric dtype");
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, t, 2, &out), MF_EARG);
    assert_error_contains("argmax: axis 3 out of range for rank 2");
    assert_int_equal(mf_argreduce(MF_OP_ARGMIN, b, 0, &out), MF_EDTYPE);
    assert_error_contains("argmin: expected a numeric dtype");
    mf_tensor_release(t);
    mf_tensor_release(b);
}

static void test_argmax_argmin(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, (double[]){3, 7, 7, 9, 1, 9});
    MfTensor *r = NULL;
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, t, 1, &r), MF_OK);
    assert_int_equal(r->dtype, MF_INT64);
    assert_values(r, (double[]){2, 1}, 2, 0); /* ties: the first wins; 1-based */
    mf_tensor_release(r);
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, t, 0, &r), MF_OK);
    assert_values(r, (double[]){2, 1, 2}, 3, 0);
    mf_tensor_release(r);
    assert_int_equal(mf_argreduce(MF_OP_ARGMIN, t, -1, &r), MF_OK);
    assert_values(r, (double[]){1, 2}, 2, 0);
    mf_tensor_release(r);
    MfTensor *i = make_tensor(MF_INT64, 2, S23, (double[]){5, -1, 4, -7, 2, 8});
    assert_int_equal(mf_argreduce(MF_OP_ARGMIN, i, 0, &r), MF_OK);
    assert_values(r, (double[]){2, 1, 1}, 3, 0);
    mf_tensor_release(r);
    mf_tensor_release(i);
    mf_tensor_release(t);
}

/* As NumPy: the first NaN wins, both along rows and down columns. */
static void test_arg_nan(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT64, 2, S23, (double[]){1, DNAN, DNAN, 9, 2, DNAN});
    MfTensor *r = NULL;
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, t, 1, &r), MF_OK);
    assert_values(r, (double[]){2, 3}, 2, 0);
    mf_tensor_release(r);
    assert_int_equal(mf_argreduce(MF_OP_ARGMIN, t, 0, &r), MF_OK);
    assert_values(r, (double[]){1, 1, 1}, 3, 0);
    mf_tensor_release(r);
    mf_tensor_release(t);
}

/* Inference keeps unknown dims (graph mode) and drops or keeps reduced ones. */
static void test_infer_unknown_dims(void **state)
{
    (void)state;
    MfTensor *x = mf_tensor_symbolic(MF_FLOAT32, 3, (int64_t[]){-1, 4, -1}, NULL, 0);
    MfAttrs a = mf_attrs_default();
    a.axes[0] = 1;
    a.naxes = 1;
    a.keepdims = true;
    MfOpCall c = {.op = MF_OP_SUM, .ninputs = 1, .inputs = &x, .attrs = &a};
    assert_int_equal(mf_op_table[MF_OP_SUM]->infer(&c), MF_OK);
    assert_int_equal(c.out[0].rank, 3);
    assert_int_equal(c.out[0].shape[0], -1);
    assert_int_equal(c.out[0].shape[1], 1);
    assert_int_equal(c.out[0].shape[2], -1);
    a.axis = 0;
    c.op = MF_OP_ARGMAX;
    assert_int_equal(mf_op_table[MF_OP_ARGMAX]->infer(&c), MF_OK);
    assert_int_equal(c.out[0].rank, 2);
    assert_int_equal(c.out[0].shape[0], 4);
    assert_int_equal(c.out[0].shape[1], -1);
    assert_int_equal(c.out[0].dtype, MF_INT64);
    assert_true(mf_op_table[MF_OP_ARGMAX]->flags & MF_OP_NONDIFF);
    assert_false(mf_op_table[MF_OP_SUM]->flags & MF_OP_NONDIFF);
    mf_tensor_release(x);
}

/* ---- clipping ------------------------------------------------------------------------ */

static void test_clip_by_value(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    MfTensor *lo = mf_tensor_scalar(MF_FLOAT32, 2), *hi = mf_tensor_scalar(MF_FLOAT32, 5);
    MfTensor *out = NULL;
    assert_int_equal(mf_clip_by_value(t, lo, hi, &out), MF_OK);
    assert_values(out, (double[]){2, 2, 3, 4, 5, 5}, 6, 0);
    mf_tensor_release(out);
    MfTensor *row = make_tensor(MF_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 3, 6});
    /* TensorFlow's order, maximum(minimum(t, hi), lo): where lo > hi, lo wins */
    assert_int_equal(mf_clip_by_value(t, row, hi, &out), MF_OK);
    assert_values(out, (double[]){1, 3, 6, 4, 5, 6}, 6, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_clip_by_value(t, hi, lo, &out), MF_EARG);
    assert_null(out);
    assert_error_contains("clip_by_value: lo (5) must be <= hi (2)");
    MfTensor *big = mf_tensor_zeros(MF_FLOAT32, 3, (int64_t[]){4, 2, 3});
    assert_int_equal(mf_clip_by_value(t, big, hi, &out), MF_ESHAPE);
    assert_error_contains("clip_by_value: lo of shape (4,2,3) would broadcast t of shape (2,3)");
    MfTensor *d = mf_tensor_scalar(MF_FLOAT64, 9);
    assert_int_equal(mf_clip_by_value(t, lo, d, &out), MF_EDTYPE);
    assert_error_contains("clip_by_value: minimum: dtypes differ: float32 and float64");
    mf_tensor_release(d);
    mf_tensor_release(big);
    mf_tensor_release(row);
    mf_tensor_release(lo);
    mf_tensor_release(hi);
    mf_tensor_release(t);
}

static void test_clip_by_norm(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){3, 4, 0, 0});
    MfTensor *c = mf_tensor_scalar(MF_FLOAT32, 1), *big = mf_tensor_scalar(MF_FLOAT32, 10);
    MfTensor *out = NULL;
    assert_int_equal(mf_clip_by_norm(t, c, NULL, 0, &out), MF_OK);
    assert_values(out, (double[]){0.6, 0.8, 0, 0}, 4, 1e-6);
    mf_tensor_release(out);
    /* per row: the zero row stays zero (not NaN) */
    assert_int_equal(mf_clip_by_norm(t, c, (int64_t[]){1}, 1, &out), MF_OK);
    assert_values(out, (double[]){0.6, 0.8, 0, 0}, 4, 1e-6);
    mf_tensor_release(out);
    assert_int_equal(mf_clip_by_norm(t, big, NULL, 0, &out), MF_OK); /* under the norm: as is */
    assert_values(out, (double[]){3, 4, 0, 0}, 4, 1e-6);
    mf_tensor_release(out);
    mf_tensor_release(big);
    MfTensor *z = mf_tensor_zeros(MF_FLOAT32, 2, s);
    assert_int_equal(mf_clip_by_norm(z, c, NULL, 0, &out), MF_OK);
    assert_values(out, (double[]){0, 0, 0, 0}, 4, 0);
    mf_tensor_release(out);
    mf_tensor_release(z);
    mf_tensor_release(c);
    mf_tensor_release(t);
}

static void test_clip_by_norm_errors(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    MfTensor *i = make_tensor(MF_INT32, 2, S23, V23);
    MfTensor *c = mf_tensor_scalar(MF_FLOAT32, 1), *zero = mf_tensor_scalar(MF_FLOAT32, 0);
    MfTensor *c64 = mf_tensor_scalar(MF_FLOAT64, 1);
    MfTensor *out = NULL;
    assert_int_equal(mf_clip_by_norm(i, c, NULL, 0, &out), MF_EDTYPE);
    assert_error_contains("clip_by_norm: expected a float tensor (float32 or float64), got int32");
    assert_int_equal(mf_clip_by_norm(t, zero, NULL, 0, &out), MF_EARG);
    assert_error_contains("clip_by_norm: clip_norm must be > 0, got 0");
    assert_int_equal(mf_clip_by_norm(t, c64, NULL, 0, &out), MF_EDTYPE);
    assert_error_contains("clip_by_norm: multiply: dtypes differ: float32 and float64");
    assert_int_equal(mf_clip_by_norm(t, c, (int64_t[]){5}, 1, &out), MF_EARG);
    assert_error_contains("clip_by_norm: reduce_sum: axis 6 out of range");
    assert_null(out);
    mf_tensor_release(c64);
    mf_tensor_release(zero);
    mf_tensor_release(c);
    mf_tensor_release(i);
    mf_tensor_release(t);
}

static void test_global_norm(void **state)
{
    (void)state;
    MfTensor *a = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4});
    MfTensor *b = make_tensor(MF_FLOAT32, 1, (int64_t[]){1}, (double[]){12});
    MfTensor *d = mf_tensor_scalar(MF_FLOAT64, 1);
    MfTensor *out = NULL;
    assert_int_equal(mf_global_norm(3, (MfTensor *[]){a, NULL, b}, &out), MF_OK);
    assert_int_equal(out->rank, 0);
    assert_values(out, (double[]){13}, 1, 1e-5);
    mf_tensor_release(out);
    assert_int_equal(mf_global_norm(2, (MfTensor *[]){NULL, NULL}, &out), MF_OK);
    assert_values(out, (double[]){0}, 1, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_global_norm(2, (MfTensor *[]){a, d}, &out), MF_EDTYPE);
    assert_null(out);
    assert_error_contains("global_norm: entries 1 and 2 have different dtypes: float32 and "
                          "float64");
    MfTensor *i = mf_tensor_scalar(MF_INT32, 1);
    assert_int_equal(mf_global_norm(2, (MfTensor *[]){a, i}, &out), MF_EDTYPE);
    assert_error_contains("global_norm: expected float tensors, entry 2 is int32");
    mf_tensor_release(i);
    mf_tensor_release(d);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

static void test_clip_by_global_norm(void **state)
{
    (void)state;
    MfTensor *a = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4});
    MfTensor *b = make_tensor(MF_FLOAT32, 1, (int64_t[]){1}, (double[]){12});
    MfTensor *c = mf_tensor_scalar(MF_FLOAT32, 6.5), *big = mf_tensor_scalar(MF_FLOAT32, 100);
    MfTensor *outs[3], *norm = NULL;
    assert_int_equal(mf_clip_by_global_norm(3, (MfTensor *[]){a, NULL, b}, c, NULL, outs, &norm),
                     MF_OK);
    assert_values(outs[0], (double[]){1.5, 2}, 2, 1e-6);
    assert_null(outs[1]);
    assert_values(outs[2], (double[]){6}, 1, 1e-6);
    assert_values(norm, (double[]){13}, 1, 1e-5);
    for (int k = 0; k < 3; k++)
        mf_tensor_release(outs[k]);
    mf_tensor_release(norm);
    /* under the clip norm: unchanged; 'use_norm' replaces the computed norm */
    assert_int_equal(mf_clip_by_global_norm(1, &a, big, NULL, outs, NULL), MF_OK);
    assert_values(outs[0], (double[]){3, 4}, 2, 1e-5);
    mf_tensor_release(outs[0]);
    assert_int_equal(mf_clip_by_global_norm(1, &a, c, big, outs, &norm), MF_OK);
    assert_values(outs[0], (double[]){3 * 0.065, 4 * 0.065}, 2, 1e-6);
    assert_values(norm, (double[]){100}, 1, 0);
    mf_tensor_release(outs[0]);
    mf_tensor_release(norm);
    mf_tensor_release(big);
    mf_tensor_release(c);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

/* A non-finite global norm turns every output into NaN, as in TensorFlow. */
static void test_clip_by_global_norm_nonfinite(void **state)
{
    (void)state;
    MfTensor *a = make_tensor(MF_FLOAT64, 1, (int64_t[]){2}, (double[]){DINF, 1});
    MfTensor *c = mf_tensor_scalar(MF_FLOAT64, 1), *out = NULL, *norm = NULL;
    assert_int_equal(mf_clip_by_global_norm(1, &a, c, NULL, &out, &norm), MF_OK);
    assert_values(out, (double[]){DNAN, DNAN}, 2, 0);
    assert_true(isinf(mf_tensor_get(norm, 0)));
    mf_tensor_release(out);
    mf_tensor_release(norm);
    mf_tensor_release(c);
    mf_tensor_release(a);
}

static void test_clip_by_global_norm_errors(void **state)
{
    (void)state;
    MfTensor *a = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4});
    MfTensor *neg = mf_tensor_scalar(MF_FLOAT32, -1), *c64 = mf_tensor_scalar(MF_FLOAT64, 1);
    MfTensor *outs[2] = {a, a}, *norm = a;
    assert_int_equal(mf_clip_by_global_norm(2, (MfTensor *[]){a, NULL}, neg, NULL, outs, &norm),
                     MF_EARG);
    assert_null(outs[0]);
    assert_null(outs[1]);
    assert_null(norm);
    assert_error_contains("clip_by_global_norm: clip_norm must be > 0, got -1");
    assert_int_equal(mf_clip_by_global_norm(1, &a, a, NULL, outs, &norm), MF_ESHAPE);
    assert_error_contains("clip_by_global_norm: clip_norm must be a scalar, got rank 1");
    assert_int_equal(mf_clip_by_global_norm(1, &a, c64, NULL, outs, &norm), MF_EDTYPE);
    assert_null(outs[0]);
    assert_error_contains("clip_by_global_norm: divide: dtypes differ: float32 and float64");
    mf_tensor_release(c64);
    mf_tensor_release(neg);
    mf_tensor_release(a);
}

/* Fails each allocation in turn: every failure is MF_ENOMEM with a message
 * and leaks nothing (the teardown counts live tensors). */
static void test_out_of_memory(void **state)
{
    (void)state;
    MfTensor *t = make_tensor(MF_FLOAT32, 2, S23, V23);
    MfTensor *c = mf_tensor_scalar(MF_FLOAT32, 1);
    for (int kind = 0; kind < 4; kind++) {
        for (int64_t k = 1;; k++) {
            MfTensor *out = NULL;
            mf_alloc_fail_at(k);
            MfStatus st = kind == 0   ? mf_reduce(MF_OP_MEAN, t, (int64_t[]){0}, 1, false, &out)
                          : kind == 1 ? mf_clip_by_norm(t, c, NULL, 0, &out)
                          : kind == 2 ? mf_clip_by_global_norm(1, &t, c, NULL, &out, NULL)
                                      : mf_argreduce(MF_OP_ARGMAX, t, 0, &out);
            mf_alloc_fail_at(0);
            if (st == MF_OK) {
                mf_tensor_release(out);
                break;
            }
            assert_int_equal(st, MF_ENOMEM);
            assert_null(out);
            assert_true(strlen(mf_err_msg()) > 0);
            mf_err_clear();
            assert_int_equal(mf_tensor_live_count(), 2);
        }
    }
    mf_tensor_release(c);
    mf_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_sum_axes),
        TEST(test_mean_max_min_prod),
        TEST(test_rank3_patterns),
        TEST(test_strided_input),
        TEST(test_float32_accuracy),
        TEST(test_float32_rows_match_one_row),
        TEST(test_float32_rows_beyond_l2_match_one_row),
        TEST(test_float32_rows_follow_the_order),
        TEST(test_float32_wide_columns_follow_the_order),
        TEST(test_float32_row_helpers_match_row_sum),
        TEST(test_int_dtypes),
        TEST(test_nan_propagates),
        TEST(test_float32_extrema_nan_anywhere),
        TEST(test_empty_reductions),
        TEST(test_scalar_input),
        TEST(test_reduce_errors),
        TEST(test_argmax_argmin),
        TEST(test_arg_nan),
        TEST(test_infer_unknown_dims),
        TEST(test_clip_by_value),
        TEST(test_clip_by_norm),
        TEST(test_clip_by_norm_errors),
        TEST(test_global_norm),
        TEST(test_clip_by_global_norm),
        TEST(test_clip_by_global_norm_nonfinite),
        TEST(test_clip_by_global_norm_errors),
        TEST(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
