/* test_nn.c — the NN ops against hand and naive computations: softmax and
 * log_softmax (axes, stability, strided input), the three cross-entropies
 * (1-based sparse labels and their range error), l2_loss, bias_add (NHWC,
 * NCHW), dropout (seeded, rate 0 identity, rate errors), max_pool and
 * avg_pool with TensorFlow's SAME / VALID sizes and their gradient ops
 * against naive loops, and the error paths. */
#include <float.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/ops/nn.h"
#include "core/ops/pool.h"
#include "core/ops/reduce_walk.h"
#include "core/ops/view.h"

static MfTensor *mat(MfDType dt, int64_t r, int64_t c, const double *v)
{
    return make_tensor(dt, 2, (int64_t[]){r, c}, v);
}

/* Naive softmax of rows of length n (stride 1); with 'f32', x - max is
 * rounded to float as the float32 composition (Sub, then Exp) rounds it: an
 * error of up to 1e-6 relative in exp(x - max) when x - max is near -40. */
static void ref_softmax_in(const double *x, double *y, int64_t rows, int64_t n, bool logarithm,
                           bool f32)
{
    for (int64_t r = 0; r < rows; r++) {
        double m = -DBL_MAX, s = 0;
        for (int64_t j = 0; j < n; j++)
            m = fmax(m, x[r * n + j]);
        for (int64_t j = 0; j < n; j++)
            s += exp(f32 ? (double)(float)(x[r * n + j] - m) : x[r * n + j] - m);
        for (int64_t j = 0; j < n; j++) {
            double d = f32 ? (double)(float)(x[r * n + j] - m) : x[r * n + j] - m;
            y[r * n + j] = logarithm ? d - log(s) : exp(d) / s;
        }
    }
}

static void ref_softmax(const double *x, double *y, int64_t rows, int64_t n, bool logarithm)
{
    ref_softmax_in(x, y, rows, n, logarithm, false);
}

static void test_softmax_values(void **state)
{
    (void)state;
    const double v[6] = {1, 2, 3, -1, 0, 4};
    double e[6], el[6];
    ref_softmax(v, e, 2, 3, false);
    ref_softmax(v, el, 2, 3, true);
    MfTensor *x = mat(MF_FLOAT64, 2, 3, v), *y = NULL;
    assert_int_equal(mf_softmax(x, -1, &y), MF_OK);
    assert_values(y, e, 6, 1e-15);
    mf_tensor_release(y);
    assert_int_equal(mf_log_softmax(x, 1, &y), MF_OK);
    assert_values(y, el, 6, 1e-14);
    mf_tensor_release(y);
    /* axis 0: columns */
    assert_int_equal(mf_softmax(x, 0, &y), MF_OK);
    double c0 = 1 / (1 + exp(-2.0)), c2 = 1 / (1 + exp(1.0));
    assert_values(y, (double[]){c0, c0, c2, 1 - c0, 1 - c0, 1 - c2}, 6, 1e-12);
    mf_tensor_release(y);
    mf_tensor_release(x);
}

static void test_softmax_stable_float32_strided(void **state)
{
    (void)state;
    MfTensor *x = mat(MF_FLOAT32, 1, 3, (double[]){1000, 1001, 1002}), *y = NULL;
    double e[3];
    ref_softmax((double[]){0, 1, 2}, e, 1, 3, false);
    assert_int_equal(mf_softmax(x, -1, &y), MF_OK);
    assert_int_equal(y->dtype, MF_FLOAT32);
    assert_values(y, e, 3, 1e-6);
    mf_tensor_release(y);
    assert_int_equal(mf_log_softmax(x, -1, &y), MF_OK);
    ref_softmax((double[]){0, 1, 2}, e, 1, 3, true);
    assert_values(y, e, 3, 1e-5);
    mf_tensor_release(y);
    mf_tensor_release(x);
    /* a transposed (strided) input: softmax over its rows */
    x = mat(MF_FLOAT64, 3, 2, (double[]){1, -1, 2, 0, 3, 4});
    MfTensor *t = NULL;
    assert_int_equal(mf_transpose(x, NULL, 0, &t), MF_OK);
    assert_int_equal(mf_softmax(t, -1, &y), MF_OK);
    double e2[6];
    ref_softmax((double[]){1, 2, 3, -1, 0, 4}, e2, 2, 3, false);
    assert_values(y, e2, 6, 1e-14);
    mf_tensor_release(y);
    mf_tensor_release(t);
    mf_tensor_release(x);
}

/* Uniform values in [-lo_hi, lo_hi) from a fixed LCG, as doubles. */
static double *lcg_values(int64_t n, double lo_hi, uint32_t seed)
{
    double *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = lo_hi * ((double)(seed >> 8) / (double)(1u << 23) - 1.0);
    }
    return v;
}

/* The float32 row kernels (softmax.c) against the composition (max, Sub,
 * Exp, Sum, Div) on the same float32 inputs: within 4 ulp of the result
 * (softmax), or of the magnitudes log-softmax subtracts; the last axis
 * (rows of 1000, several leaves of the row sum) and the middle one. */
static void test_softmax_float32_matches_formula(void **state)
{
    (void)state;
    int64_t rows = 37, n = 1000, total = rows * n;
    double *v = lcg_values(total, 20, 7), *e = malloc((size_t)total * sizeof *e);
    assert_non_null(e);
    MfTensor *x = mat(MF_FLOAT32, rows, n, v), *y = NULL;
    for (int64_t i = 0; i < total; i++) /* the formula sees the float32 inputs */
        v[i] = mf_tensor_get(x, i);
    for (int lg = 0; lg < 2; lg++) {
        ref_softmax_in(v, e, rows, n, lg, true);
        assert_int_equal((lg ? mf_log_softmax : mf_softmax)(x, -1, &y), MF_OK);
        int64_t bad = 0;
        for (int64_t i = 0; i < total; i++) {
            double scale = lg ? fabs(v[i]) + 20 + fabs(e[i]) : fabs(e[i]);
            bad += !(fabs(mf_tensor_get(y, i) - e[i]) <= 4 * 0x1p-24 * scale + 1e-37);
        }
        mf_tensor_release(y);
        assert_int_equal(bad, 0);
    }
    mf_tensor_release(x);
    /* the middle axis of (5, 40, 7): transposed to rows for the formula */
    int64_t shape[3] = {5, 40, 7};
    x = make_tensor(MF_FLOAT32, 3, shape, v);
    double *rows_v = malloc(1400 * sizeof *rows_v);
    assert_non_null(rows_v);
    for (int64_t o = 0; o < 5; o++)
        for (int64_t j = 0; j < 40; j++)
            for (int64_t i = 0; i < 7; i++)
                rows_v[(o * 7 + i) * 40 + j] = mf_tensor_get(x, (o * 40 + j) * 7 + i);
    ref_softmax_in(rows_v, e, 35, 40, false, true);
    assert_int_equal(mf_softmax(x, 1, &y), MF_OK);
    int64_t bad = 0;
    for (int64_t o = 0; o < 5; o++)
        for (int64_t j = 0; j < 40; j++)
            for (int64_t i = 0; i < 7; i++) {
                double want = e[(o * 7 + i) * 40 + j];
                bad += !(fabs(mf_tensor_get(y, (o * 40 + j) * 7 + i) - want)
                         <= 4 * 0x1p-24 * want + 1e-37);
            }
    mf_tensor_release(y);
    mf_tensor_release(x);
    free(rows_v);
    free(v);
    free(e);
    assert_int_equal(bad, 0);
}

/* SoftmaxGrad and LogSoftmaxGrad in float32 against their formulas in
 * double (TensorFlow's nn_grad.py): (dy - sum(dy * y)) * y and dy - exp(y)
 * * sum(dy), rows of 300, within 8 ulp of the magnitudes involved. */
static void test_softmax_grad_ops_float32(void **state)
{
    (void)state;
    int64_t rows = 11, n = 300, total = rows * n;
    double *yv = lcg_values(total, 1, 3), *dv = lcg_values(total, 1, 4);
    MfTensor *y = mat(MF_FLOAT32, rows, n, yv), *dy = mat(MF_FLOAT32, rows, n, dv);
    MfAttrs a = mf_attrs_default();
    a.axis = -1;
    int64_t bad = 0;
    for (int lg = 0; lg < 2; lg++) {
        MfTensor *dx = NULL, *in[2] = {y, dy};
        assert_int_equal(mf_op1(lg ? MF_OP_LOG_SOFTMAX_GRAD : MF_OP_SOFTMAX_GRAD, 2, in, &a,
                                &dx), MF_OK);
        for (int64_t r = 0; r < rows; r++) {
            double s = 0, mag = 0;
            for (int64_t j = 0; j < n; j++) {
                double yy = mf_tensor_get(y, r * n + j), d = mf_tensor_get(dy, r * n + j);
                s += lg ? d : d * yy;
                mag += fabs(lg ? d : d * yy);
            }
            for (int64_t j = 0; j < n; j++) {
                double yy = mf_tensor_get(y, r * n + j), d = mf_tensor_get(dy, r * n + j);
                double want = lg ? d - exp(yy) * s : (d - s) * yy;
                double scale = lg ? fabs(d) + exp(yy) * mag : (fabs(d) + mag) * fabs(yy);
                bad += !(fabs(mf_tensor_get(dx, r * n + j) - want) <= 8 * 0x1p-24 * scale);
            }
        }
        mf_tensor_release(dx);
    }
    mf_tensor_release(y);
    mf_tensor_release(dy);
    free(yv);
    free(dv);
    assert_int_equal(bad, 0);
}

/* SoftmaxGrad in float32 has the bits of its composition: p = dy * y
 * (Mul), dot = the row sum of p (Sum over the last axis, mf_sum_row_f32),
 * dx = (dy - dot) * y (softmax.c sums p as it writes it), for rows of one
 * element, a part of a vector, a block, several leaves and with tails,
 * with -0, infinities and NaN among them. */
static void test_softmax_grad_float32_bits_of_composition(void **state)
{
    (void)state;
    const int64_t lengths[] = {1, 31, 256, 300, 2049, 5000};
    uint64_t seed = 31337;
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int64_t n = lengths[li], rows = 3;
        MfTensor *y = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, n});
        MfTensor *dy = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){rows, n});
        assert_non_null(y);
        assert_non_null(dy);
        float *yv = mf_tensor_data(y), *dv = mf_tensor_data(dy);
        for (int64_t i = 0; i < rows * n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            yv[i] = (float)((double)(seed >> 11) * 0x1p-53) / (float)n;
            dv[i] = (float)((double)(seed >> 11) * 0x1p-53 * 2 - 1) * (i % 7 == 0 ? 1e3f : 1);
        }
        yv[n / 2] = -0.0f;                        /* row 0 */
        dv[n + n / 3] = INFINITY;                 /* row 1 */
        dv[2 * n + n - 1] = NAN;                  /* row 2 */
        MfAttrs a = mf_attrs_default();
        a.axis = -1;
        MfTensor *dx = NULL, *in[2] = {y, dy};
        assert_int_equal(mf_op1(MF_OP_SOFTMAX_GRAD, 2, in, &a, &dx), MF_OK);
        const float *got = mf_tensor_data(dx);
        float *p = malloc((size_t)n * sizeof *p);
        assert_non_null(p);
        for (int64_t r = 0; r < rows; r++) {
            const float *yr = yv + r * n, *dr = dv + r * n;
            for (int64_t i = 0; i < n; i++)
                p[i] = dr[i] * yr[i];
            float dot = (float)mf_sum_row_f32(p, n);
            for (int64_t i = 0; i < n; i++) {
                float want = (dr[i] - dot) * yr[i];
                if (memcmp(&got[r * n + i], &want, sizeof want) != 0)
                    fail_msg("SoftmaxGrad of rows of %lld, row %lld, element %lld: %a, "
                             "composition %a", (long long)n, (long long)r, (long long)i,
                             (double)got[r * n + i], (double)want);
            }
        }
        free(p);
        mf_tensor_release(dx);
        mf_tensor_release(y);
        mf_tensor_release(dy);
    }
}

/* LayerNorm and LayerNormGrad in float32 (layer_norm.c) against their
 * formulas in double on the same inputs (torch.nn.functional.layer_norm's,
 * and its gradient rstd * (dy - mean(dy) - xhat * mean(dy * xhat))): rows of
 * 300, within 8 ulp of the magnitudes involved. */
static void test_layer_norm_float32(void **state)
{
    (void)state;
    int64_t rows = 9, n = 300, total = rows * n;
    double *xv = lcg_values(total, 3, 5), *dv = lcg_values(total, 1, 6), eps = 1e-3;
    MfTensor *x = mat(MF_FLOAT32, rows, n, xv), *dy = mat(MF_FLOAT32, rows, n, dv);
    MfAttrs a = mf_attrs_default();
    a.scalar[0] = eps;
    MfTensor *y = NULL, *dx = NULL, *in[2] = {x, dy};
    assert_int_equal(mf_op1(MF_OP_LAYER_NORM, 1, in, &a, &y), MF_OK);
    assert_int_equal(mf_op1(MF_OP_LAYER_NORM_GRAD, 2, in, &a, &dx), MF_OK);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; r++) {
        double m = 0, v = 0, mdy = 0, mdx = 0;
        for (int64_t j = 0; j < n; j++)
            m += mf_tensor_get(x, r * n + j) / (double)n;
        for (int64_t j = 0; j < n; j++)
            v += pow(mf_tensor_get(x, r * n + j) - m, 2) / (double)n;
        double rs = 1 / sqrt(v + eps);
        for (int64_t j = 0; j < n; j++) {
            double xh = (mf_tensor_get(x, r * n + j) - m) * rs, d = mf_tensor_get(dy, r * n + j);
            mdy += d / (double)n;
            mdx += d * xh / (double)n;
        }
        for (int64_t j = 0; j < n; j++) {
            double xh = (mf_tensor_get(x, r * n + j) - m) * rs, d = mf_tensor_get(dy, r * n + j);
            bad += !(fabs(mf_tensor_get(y, r * n + j) - xh) <= 8 * 0x1p-24 * (fabs(xh) + 1));
            double want = rs * (d - mdy - xh * mdx);
            double scale = rs * (fabs(d) + fabs(mdy) + fabs(xh * mdx) + 1e-3);
            bad += !(fabs(mf_tensor_get(dx, r * n + j) - want) <= 16 * 0x1p-24 * scale);
        }
    }
    mf_tensor_release(y);
    mf_tensor_release(dx);
    mf_tensor_release(x);
    mf_tensor_release(dy);
    free(xv);
    free(dv);
    assert_int_equal(bad, 0);
}

static void test_softmax_errors(void **state)
{
    (void)state;
    MfTensor *x = mat(MF_INT32, 1, 2, (double[]){1, 2}), *y = NULL;
    assert_int_equal(mf_softmax(x, -1, &y), MF_EDTYPE);
    assert_error_contains("softmax: expected a float dtype");
    mf_tensor_release(x);
    x = mat(MF_FLOAT32, 1, 2, (double[]){1, 2});
    assert_int_equal(mf_log_softmax(x, 2, &y), MF_EARG);
    assert_error_contains("log_softmax: axis 3 out of range for rank 2 (axes are 1-based");
    mf_tensor_release(x);
    x = mf_tensor_scalar(MF_FLOAT32, 1);
    assert_int_equal(mf_softmax(x, 0, &y), MF_ESHAPE);
    assert_error_contains("rank >= 1");
    mf_tensor_release(x);
    assert_null(y);
}

static void test_softmax_cross_entropy(void **state)
{
    (void)state;
    const double lv[6] = {1, 2, 3, 0.5, -1, 2}, zv[6] = {0, 0, 1, 0.25, 0.25, 0.5};
    double ls[6];
    ref_softmax(lv, ls, 2, 3, true);
    MfTensor *logits = mat(MF_FLOAT64, 2, 3, lv), *labels = mat(MF_FLOAT64, 2, 3, zv);
    MfTensor *loss = NULL, *in[2] = {logits, labels}, *outs[MF_MAX_OUTPUTS];
    assert_int_equal(mf_softmax_cross_entropy(labels, logits, &loss), MF_OK);
    assert_int_equal(loss->rank, 1);
    assert_values(loss, (double[]){-ls[2], -(0.25 * ls[3] + 0.25 * ls[4] + 0.5 * ls[5])}, 2,
                  1e-14);
    mf_tensor_release(loss);
    int n = 0;
    assert_int_equal(mf_op_call(MF_OP_SOFTMAX_XENT, 2, in, NULL, outs, &n), MF_OK);
    assert_int_equal(n, 2);
    double bp[6];
    for (int i = 0; i < 6; i++)
        bp[i] = exp(ls[i]) - zv[i];
    assert_values(outs[1], bp, 6, 1e-14);
    for (int i = 0; i < n; i++)
        mf_tensor_release(outs[i]);
    mf_tensor_release(labels);
    labels = mat(MF_FLOAT64, 3, 2, zv);
    assert_int_equal(mf_softmax_cross_entropy(labels, logits, &loss), MF_ESHAPE);
    assert_error_contains("labels and logits must have the same shape, got labels (3,2) and "
                          "logits (2,3)");
    mf_tensor_release(labels);
    labels = mat(MF_FLOAT32, 2, 3, zv);
    assert_int_equal(mf_softmax_cross_entropy(labels, logits, &loss), MF_EDTYPE);
    assert_error_contains("dtypes differ");
    mf_tensor_release(labels);
    mf_tensor_release(logits);
}

static void test_sparse_cross_entropy(void **state)
{
    (void)state;
    const double lv[6] = {1, 2, 3, 0.5, -1, 2};
    double ls[6];
    ref_softmax(lv, ls, 2, 3, true);
    MfTensor *logits = mat(MF_FLOAT32, 2, 3, lv), *loss = NULL;
    MfTensor *labels = make_tensor(MF_INT32, 1, (int64_t[]){2}, (double[]){3, 1});
    assert_int_equal(mf_sparse_softmax_cross_entropy(labels, logits, &loss), MF_OK);
    assert_values(loss, (double[]){-ls[2], -ls[3]}, 2, 1e-6);
    mf_tensor_release(loss);
    mf_tensor_release(labels);
    labels = make_tensor(MF_INT64, 1, (int64_t[]){2}, (double[]){1, 4});
    assert_int_equal(mf_sparse_softmax_cross_entropy(labels, logits, &loss), MF_EARG);
    assert_error_contains("sparse_softmax_cross_entropy_with_logits: label 4 at position 2 is "
                          "out of range 1..3 (labels are 1-based");
    mf_tensor_release(labels);
    labels = make_tensor(MF_INT64, 1, (int64_t[]){2}, (double[]){0, 1});
    assert_int_equal(mf_sparse_softmax_cross_entropy(labels, logits, &loss), MF_EARG);
    assert_error_contains("label 0 at position 1 is out of range 1..3");
    mf_tensor_release(labels);
    labels = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    assert_int_equal(mf_sparse_softmax_cross_entropy(labels, logits, &loss), MF_EDTYPE);
    assert_error_contains("int32 or int64 labels");
    mf_tensor_release(labels);
    labels = make_tensor(MF_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    assert_int_equal(mf_sparse_softmax_cross_entropy(labels, logits, &loss), MF_ESHAPE);
    assert_error_contains("shape of logits without its last axis, got labels (3,) and logits "
                          "(2,3)");
    mf_tensor_release(labels);
    mf_tensor_release(logits);
    assert_null(loss);
}

static void test_sigmoid_cross_entropy_and_l2_loss(void **state)
{
    (void)state;
    const double xv[4] = {-200, -1, 0.5, 300}, zv[4] = {0, 1, 0.3, 1};
    MfTensor *x = mat(MF_FLOAT64, 2, 2, xv), *z = mat(MF_FLOAT64, 2, 2, zv), *y = NULL;
    assert_int_equal(mf_sigmoid_cross_entropy(z, x, &y), MF_OK);
    double e[4];
    for (int i = 0; i < 4; i++) {
        double s = 1 / (1 + exp(-xv[i]));
        e[i] = fabs(xv[i]) > 50 ? fmax(xv[i], 0) - xv[i] * zv[i]
                                : -zv[i] * log(s) - (1 - zv[i]) * log(1 - s);
    }
    assert_values(y, e, 4, 1e-12);
    mf_tensor_release(y);
    assert_int_equal(mf_l2_loss(z, &y), MF_OK);
    assert_int_equal(y->rank, 0);
    assert_values(y, (double[]){(1 + 0.09 + 1) / 2}, 1, 1e-15);
    mf_tensor_release(y);
    mf_tensor_release(z);
    z = mat(MF_FLOAT64, 1, 4, zv);
    assert_int_equal(mf_sigmoid_cross_entropy(z, x, &y), MF_ESHAPE);
    assert_error_contains("sigmoid_cross_entropy_with_logits: labels and logits must have the "
                          "same shape");
    mf_tensor_release(z);
    mf_tensor_release(x);
    x = mat(MF_INT32, 1, 2, (double[]){1, 2});
    assert_int_equal(mf_l2_loss(x, &y), MF_EDTYPE);
    assert_error_contains("l2_loss: expected float input");
    mf_tensor_release(x);
}

static void test_bias_add(void **state)
{
    (void)state;
    int64_t s3[3] = {2, 2, 3};
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i;
    MfTensor *x = make_tensor(MF_INT32, 3, s3, v), *y = NULL;
    MfTensor *b = make_tensor(MF_INT32, 1, (int64_t[]){3}, (double[]){10, 20, 30});
    assert_int_equal(mf_bias_add(x, b, false, &y), MF_OK);
    double e[12];
    for (int i = 0; i < 12; i++)
        e[i] = i + 10 * (i % 3 + 1);
    assert_values(y, e, 12, 0);
    mf_tensor_release(y);
    mf_tensor_release(b);
    /* NCHW: bias along axis 2 (size 2) */
    b = make_tensor(MF_INT32, 1, (int64_t[]){2}, (double[]){100, 200});
    assert_int_equal(mf_bias_add(x, b, true, &y), MF_OK);
    for (int i = 0; i < 12; i++)
        e[i] = i + ((i / 3) % 2 ? 200 : 100);
    assert_values(y, e, 12, 0);
    mf_tensor_release(y);
    assert_int_equal(mf_bias_add(x, b, false, &y), MF_ESHAPE);
    assert_error_contains("bias_add: bias must be 1-D with the size of value's last axis (3), "
                          "got bias (2,) for value (2,2,3)");
    mf_tensor_release(b);
    b = make_tensor(MF_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    assert_int_equal(mf_bias_add(x, b, false, &y), MF_EDTYPE);
    assert_error_contains("dtypes differ");
    mf_tensor_release(b);
    mf_tensor_release(x);
}

/* ReluGrad: dy where x > 0 (0 itself gives 0, as TensorFlow), in float
 * and integer dtypes; mismatched shapes and dtypes are errors. */
static void test_relu_grad(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    double xv[6] = {-1, 0, 2, 3, -0.5, 1e-30}, dyv[6] = {10, 20, 30, 40, 50, 60};
    double e[6] = {0, 0, 30, 40, 0, 60};
    MfDType dts[3] = {MF_FLOAT32, MF_FLOAT64, MF_INT64};
    for (int k = 0; k < 3; k++) {
        MfTensor *x = make_tensor(dts[k], 2, s, xv), *dy = make_tensor(dts[k], 2, s, dyv);
        MfTensor *dx = NULL;
        assert_int_equal(mf_relu_backprop(dy, x, &dx), MF_OK);
        if (dts[k] == MF_INT64)
            e[5] = 0; /* 1e-30 truncates to 0 */
        assert_values(dx, e, 6, 0);
        assert_int_equal(dx->dtype, dts[k]);
        mf_tensor_release(dx);
        mf_tensor_release(dy);
        mf_tensor_release(x);
    }
    MfTensor *x = make_tensor(MF_FLOAT32, 2, s, xv), *dx = NULL;
    MfTensor *dy = make_tensor(MF_FLOAT32, 1, (int64_t[]){6}, dyv);
    assert_int_equal(mf_relu_backprop(dy, x, &dx), MF_ESHAPE);
    assert_error_contains("relu_grad: gradients and features must have one shape, got (6,) "
                          "and (2,3)");
    mf_tensor_release(dy);
    dy = make_tensor(MF_FLOAT64, 2, s, dyv);
    assert_int_equal(mf_relu_backprop(dy, x, &dx), MF_EDTYPE);
    assert_error_contains("relu_grad: dtypes differ: float64 and float32");
    assert_null(dx);
    mf_tensor_release(dy);
    mf_tensor_release(x);
}

static void test_dropout(void **state)
{
    (void)state;
    int64_t n = 1000;
    MfTensor *x = mf_tensor_new(MF_FLOAT32, 1, &n), *y = NULL, *y2 = NULL;
    for (int64_t i = 0; i < n; i++)
        ((float *)mf_tensor_data(x))[i] = 1.0f + (float)i;
    assert_int_equal(mf_dropout(x, 0, 7, &y), MF_OK);
    assert_ptr_equal(x, y);
    mf_tensor_release(y);
    assert_int_equal(mf_dropout(x, 0.25, 7, &y), MF_OK);
    assert_int_equal(mf_dropout(x, 0.25, 7, &y2), MF_OK);
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = mf_tensor_get(y, i), xi = 1.0 + (double)i;
        assert_true(a == 0 || fabs(a - xi / 0.75) < 1e-3 * xi);
        assert_true(a == mf_tensor_get(y2, i));
        zeros += a == 0;
    }
    assert_true(zeros > 180 && zeros < 320);
    mf_tensor_release(y);
    mf_tensor_release(y2);
    assert_int_equal(mf_dropout(x, 1, 7, &y), MF_EARG);
    assert_error_contains("dropout: rate must be in [0, 1)");
    assert_int_equal(mf_dropout(x, -0.5, 7, &y), MF_EARG);
    assert_error_contains("got -0.5");
    mf_tensor_release(x);
    x = mf_tensor_scalar(MF_INT32, 1);
    assert_int_equal(mf_dropout(x, 0.5, 7, &y), MF_EDTYPE);
    assert_error_contains("dropout: expected float x");
    mf_tensor_release(x);
}

/* The front end's rule: keep_prob checked and turned into a rate, the op
 * seed resolved from the call's seed (the same seed, the same mask), and
 * no seed drawn when no mask is (rate 0). */
static void test_dropout_front_end(void **state)
{
    (void)state;
    int64_t n = 200;
    MfTensor *x = mf_tensor_new(MF_FLOAT32, 1, &n), *y = NULL, *y2 = NULL;
    for (int64_t i = 0; i < n; i++)
        ((float *)mf_tensor_data(x))[i] = 1.0f;
    assert_int_equal(mf_dropout_number(x, 0.5, true, true, 3, &y), MF_OK);
    assert_int_equal(mf_dropout_number(x, 0.5, false, true, 3, &y2), MF_OK);
    for (int64_t i = 0; i < n; i++) {
        assert_true(mf_tensor_get(y, i) == 0 || mf_tensor_get(y, i) == 2);
        assert_true(mf_tensor_get(y, i) == mf_tensor_get(y2, i));   /* keep 0.5 = rate 0.5 */
    }
    mf_tensor_release(y);
    mf_tensor_release(y2);
    assert_int_equal(mf_dropout_number(x, 1, true, false, 0, &y), MF_OK);
    assert_ptr_equal(x, y);   /* keep everything: x itself */
    mf_tensor_release(y);
    assert_int_equal(mf_dropout_number(x, 0, true, false, 0, &y), MF_EARG);
    assert_error_contains("dropout: keep_prob must be in (0, 1], got 0");
    assert_null(y);
    assert_int_equal(mf_dropout_number(x, 1.5, true, false, 0, &y), MF_EARG);
    assert_error_contains("got 1.5");
    MfTensor *p = mf_tensor_scalar(MF_FLOAT32, 0.75);
    assert_int_equal(mf_dropout_tensor(x, p, true, true, 5, &y), MF_OK);
    assert_int_equal(mf_dropout_number(x, 0.25, false, true, 5, &y2), MF_OK);
    for (int64_t i = 0; i < n; i++)
        assert_true(fabs(mf_tensor_get(y, i) - mf_tensor_get(y2, i)) < 1e-6);
    mf_tensor_release(y);
    mf_tensor_release(y2);
    mf_tensor_release(p);
    mf_tensor_release(x);
}

/* ---- pooling against naive loops ---------------------------------------------- */

typedef struct PoolCfg {
    int64_t n, h, w, c, k, s;
    int same;
} PoolCfg;

/* TensorFlow's output size and padding before, computed independently. */
static void tf_size(int64_t in, int64_t k, int64_t s, int same, int64_t *out, int64_t *pad)
{
    if (same) {
        *out = (int64_t)ceil((double)in / (double)s);
        int64_t total = (*out - 1) * s + k - in;
        *pad = total < 0 ? 0 : total / 2;
    } else {
        *out = (int64_t)ceil((double)(in - k + 1) / (double)s);
        *pad = 0;
    }
}

#define IDX(b, i, j, ch, H, W, C) ((((b) * (H) + (i)) * (W) + (j)) * (C) + (ch))

/* Naive max / avg pool and both gradients for dy = 'dy' (as many as y). */
static void ref_pool(const PoolCfg *p, const double *x, const double *dy, double *y,
                     double *dxmax, double *dxavg, int64_t oh, int64_t ow, int64_t pt,
                     int64_t pl)
{
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < p->c; ch++) {
                    double best = -DBL_MAX, sum = 0;
                    int64_t at = -1, cnt = 0;
                    for (int64_t a = 0; a < p->k; a++)
                        for (int64_t q = 0; q < p->k; q++) {
                            int64_t hi = i * p->s - pt + a, wj = j * p->s - pl + q;
                            if (hi < 0 || hi >= p->h || wj < 0 || wj >= p->w)
                                continue;
                            double v = x[IDX(b, hi, wj, ch, p->h, p->w, p->c)];
                            if (v > best)
                                best = v, at = IDX(b, hi, wj, ch, p->h, p->w, p->c);
                            sum += v;
                            cnt++;
                        }
                    int64_t o = IDX(b, i, j, ch, oh, ow, p->c);
                    y[2 * o] = best;
                    y[2 * o + 1] = sum / (double)cnt;
                    dxmax[at] += dy[o];
                    for (int64_t a = 0; a < p->k; a++)
                        for (int64_t q = 0; q < p->k; q++) {
                            int64_t hi = i * p->s - pt + a, wj = j * p->s - pl + q;
                            if (hi >= 0 && hi < p->h && wj >= 0 && wj < p->w)
                                dxavg[IDX(b, hi, wj, ch, p->h, p->w, p->c)] += dy[o] / (double)cnt;
                        }
                }
}

static MfTensor *pool_grad(MfOpId op, int n, MfTensor **in, const MfAttrs *a)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(op, n, in, a, &out), MF_OK);
    return out;
}

/* Every second element of 'v' from 'start'. */
static double *every_other(const double *v, int64_t n, int start)
{
    double *r = malloc((size_t)n * sizeof *r);
    assert_non_null(r);
    for (int64_t i = 0; i < n; i++)
        r[i] = v[2 * i + start];
    return r;
}

static void check_pool(const PoolCfg *p)
{
    int64_t oh, ow, pt, pl, nx = p->n * p->h * p->w * p->c;
    tf_size(p->h, p->k, p->s, p->same, &oh, &pt);
    tf_size(p->w, p->k, p->s, p->same, &ow, &pl);
    int64_t ny = p->n * oh * ow * p->c;
    double *x = malloc((size_t)nx * sizeof *x), *dy = malloc((size_t)ny * sizeof *dy);
    double *y = calloc((size_t)ny * 2, sizeof *y), *dxm = calloc((size_t)nx, sizeof *dxm);
    double *dxa = calloc((size_t)nx, sizeof *dxa);
    assert_true(x && dy && y && dxm && dxa);
    for (int64_t i = 0; i < nx; i++)
        x[i] = sin(0.7 * (double)i + 0.3) * 3;   /* no ties */
    for (int64_t i = 0; i < ny; i++)
        dy[i] = cos(0.3 * (double)i);
    ref_pool(p, x, dy, y, dxm, dxa, oh, ow, pt, pl);
    int64_t xs[4] = {p->n, p->h, p->w, p->c}, ys[4] = {p->n, oh, ow, p->c};
    MfTensor *xt = make_tensor(MF_FLOAT64, 4, xs, x), *dyt = make_tensor(MF_FLOAT64, 4, ys, dy);
    int64_t ks[4] = {1, p->k, p->k, 1}, ss[4] = {1, p->s, p->s, 1};
    MfTensor *mx = NULL, *av = NULL;
    assert_int_equal(mf_max_pool(xt, ks, ss, p->same, &mx), MF_OK);
    assert_int_equal(mf_avg_pool(xt, ks, ss, p->same, &av), MF_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(mx->shape[i], ys[i]);
    double *ym = every_other(y, ny, 0), *ya = every_other(y, ny, 1);
    assert_values(mx, ym, ny, 1e-15);
    assert_values(av, ya, ny, 1e-14);
    MfAttrs a = mf_attrs_default();
    memcpy(a.ksize, ks, sizeof ks);
    memcpy(a.strides, ss, sizeof ss);
    a.padding = p->same;
    MfTensor *gm = pool_grad(MF_OP_MAX_POOL_GRAD, 3, (MfTensor *[]){xt, mx, dyt}, &a);
    MfTensor *ga = pool_grad(MF_OP_AVG_POOL_GRAD, 2, (MfTensor *[]){xt, dyt}, &a);
    assert_values(gm, dxm, nx, 1e-14);
    assert_values(ga, dxa, nx, 1e-14);
    /* MaxPoolGradGrad reads its input at the argmax: with ddx = x it gives y */
    MfTensor *gg = pool_grad(MF_OP_MAX_POOL_GRAD_GRAD, 3, (MfTensor *[]){xt, mx, xt}, &a);
    assert_values(gg, ym, ny, 1e-15);
    MfTensor *all[] = {xt, dyt, mx, av, gm, ga, gg};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
    free(x), free(dy), free(y), free(dxm), free(dxa), free(ym), free(ya);
}

static void test_pool_against_naive(void **state)
{
    (void)state;
    static const PoolCfg cfgs[] = {
        {1, 4, 4, 1, 2, 2, 0}, {1, 4, 4, 1, 2, 2, 1}, {2, 5, 5, 3, 3, 2, 1},
        {2, 5, 5, 3, 3, 2, 0}, {1, 7, 6, 2, 3, 1, 1}, {1, 7, 6, 2, 3, 3, 1},
        {1, 6, 6, 4, 1, 1, 0}, {3, 8, 5, 2, 4, 3, 1}, {1, 3, 3, 1, 3, 1, 0},
        {1, 2, 9, 2, 2, 5, 1},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
        check_pool(&cfgs[i]);
}

/* MaxPoolGrad routes each window's gradient to its first maximum (row-major
 * window order), ties and NaN included. Windows that tile the input take a
 * kernel of their own (core/ops/pool.c): on a 4x4 input it must agree with
 * the general kernel, which a 5x5 input (its last row and column in no
 * VALID window) takes, on the 4x4 corner they share. */
static MfTensor *max_pool_grad_of(MfDType dt, int64_t hw, const double *x, const double *dy)
{
    int64_t xs[4] = {1, hw, hw, 2}, ys[4] = {1, 2, 2, 2};
    MfTensor *xt = make_tensor(dt, 4, xs, x), *dyt = make_tensor(dt, 4, ys, dy), *y = NULL;
    int64_t k2[4] = {1, 2, 2, 1};
    assert_int_equal(mf_max_pool(xt, k2, k2, 0, &y), MF_OK);
    MfAttrs a = mf_attrs_default();
    memcpy(a.ksize, k2, sizeof k2);
    memcpy(a.strides, k2, sizeof k2);
    MfTensor *g = pool_grad(MF_OP_MAX_POOL_GRAD, 3, (MfTensor *[]){xt, y, dyt}, &a);
    mf_tensor_release(xt), mf_tensor_release(dyt), mf_tensor_release(y);
    return g;
}

static void test_max_pool_grad_ties_and_nan(void **state)
{
    (void)state;
    /* (h, w, channel) of a 4x4x2 input; windows: rows/cols {0,1} and {2,3} */
    double x4[32] = {0}, x5[50], dy[8] = {1, 10, 2, 20, 3, 30, 4, 40}, want[32] = {0};
#define AT(h, w, ch) (((h) * 4 + (w)) * 2 + (ch))
    /* window (0,0): channel 0 all equal -> first; channel 1 max twice -> first */
    x4[AT(0, 1, 1)] = 5, x4[AT(1, 0, 1)] = 5;
    want[AT(0, 0, 0)] = 1, want[AT(0, 1, 1)] = 10;
    /* window (0,1): -0 then +0 (equal) -> first; NaN first -> the NaN */
    x4[AT(0, 2, 0)] = -0.0, x4[AT(0, 2, 1)] = DNAN, x4[AT(1, 3, 1)] = 7;
    x4[AT(0, 3, 0)] = 0.0, x4[AT(1, 2, 0)] = -1, x4[AT(1, 3, 0)] = -1;
    want[AT(0, 2, 0)] = 2, want[AT(0, 2, 1)] = 20;
    /* window (1,0): a NaN after the maximum still wins (NaN propagates, as
     * in PyTorch): the first NaN of the window gets the gradient */
    x4[AT(2, 0, 0)] = 3, x4[AT(2, 1, 0)] = DNAN, x4[AT(3, 1, 0)] = 3;
    x4[AT(3, 0, 1)] = 1, x4[AT(3, 1, 1)] = DNAN;
    want[AT(2, 1, 0)] = 3, want[AT(3, 1, 1)] = 30;
    /* window (1,1): the last element is the maximum */
    x4[AT(2, 2, 0)] = -5, x4[AT(2, 3, 0)] = -4, x4[AT(3, 2, 0)] = -3, x4[AT(3, 3, 0)] = -2;
    x4[AT(2, 2, 1)] = 1, x4[AT(3, 3, 1)] = 2;
    want[AT(3, 3, 0)] = 4, want[AT(3, 3, 1)] = 40;
#undef AT
    for (int64_t i = 0; i < 50; i++)
        x5[i] = 9; /* row and column 4: in no window */
    for (int64_t h = 0; h < 4; h++)
        memcpy(x5 + h * 10, x4 + h * 8, 8 * sizeof(double));
    MfDType dts[2] = {MF_FLOAT32, MF_FLOAT64};
    for (int d = 0; d < 2; d++) {
        MfTensor *tiled = max_pool_grad_of(dts[d], 4, x4, dy);
        MfTensor *general = max_pool_grad_of(dts[d], 5, x5, dy);
        assert_values(tiled, want, 32, 0);
        double corner[32];
        for (int64_t h = 0; h < 4; h++)
            for (int64_t i = 0; i < 8; i++)
                corner[h * 8 + i] = mf_tensor_get(general, (h * 5) * 2 + i);
        assert_memory_equal(corner, want, sizeof want);
        mf_tensor_release(tiled), mf_tensor_release(general);
    }
}

static void test_pool_sizes_and_values(void **state)
{
    (void)state;
    /* 1x4x4x1 of 1..16, 2x2 windows, stride 2 */
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i + 1;
    MfTensor *x = make_tensor(MF_FLOAT32, 4, (int64_t[]){1, 4, 4, 1}, v), *y = NULL;
    int64_t k2[4] = {1, 2, 2, 1}, s2[4] = {1, 2, 2, 1}, k3[4] = {1, 3, 3, 1};
    assert_int_equal(mf_max_pool(x, k2, s2, 0, &y), MF_OK);
    assert_values(y, (double[]){6, 8, 14, 16}, 4, 0);
    mf_tensor_release(y);
    assert_int_equal(mf_avg_pool(x, k2, s2, 0, &y), MF_OK);
    assert_values(y, (double[]){3.5, 5.5, 11.5, 13.5}, 4, 1e-6);
    mf_tensor_release(y);
    /* SAME, 3x3 stride 2 on 4x4: out 2x2, pad total 1 -> 0 before, 1 after */
    assert_int_equal(mf_avg_pool(x, k3, s2, 1, &y), MF_OK);
    assert_int_equal(y->shape[1], 2);
    assert_values(y, (double[]){6, 7.5, 12, 13.5}, 4, 1e-6);
    mf_tensor_release(y);
    mf_tensor_release(x);
}

static void test_pool_errors(void **state)
{
    (void)state;
    MfTensor *x = mf_tensor_zeros(MF_FLOAT32, 4, (int64_t[]){1, 2, 2, 1}), *y = NULL;
    int64_t k3[4] = {1, 3, 3, 1}, s1[4] = {1, 1, 1, 1}, kb[4] = {2, 1, 1, 1}, k0[4] = {1, 0, 1, 1};
    assert_int_equal(mf_max_pool(x, k3, s1, 0, &y), MF_ESHAPE);
    assert_error_contains("max_pool: window 3 is larger than the input height 2 with VALID");
    assert_int_equal(mf_avg_pool(x, kb, s1, 1, &y), MF_EARG);
    assert_error_contains("avg_pool: pooling over the batch or channel axis is not supported");
    assert_int_equal(mf_avg_pool(x, k0, s1, 1, &y), MF_EARG);
    assert_error_contains("ksize and strides must be >= 1");
    assert_int_equal(mf_max_pool(x, k3, s1, 1, &y), MF_OK);
    assert_values(y, (double[]){0, 0, 0, 0}, 4, 0);
    mf_tensor_release(y);
    mf_tensor_release(x);
    x = mf_tensor_zeros(MF_FLOAT32, 3, (int64_t[]){2, 2, 1});
    assert_int_equal(mf_max_pool(x, k3, s1, 1, &y), MF_ESHAPE);
    assert_error_contains("expected a rank-4 NHWC input");
    mf_tensor_release(x);
    x = mf_tensor_zeros(MF_INT32, 4, (int64_t[]){1, 2, 2, 1});
    assert_int_equal(mf_max_pool(x, k3, s1, 1, &y), MF_EDTYPE);
    assert_error_contains("max_pool: expected a float dtype");
    mf_tensor_release(x);
    assert_null(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_softmax_values),
        TEST(test_softmax_stable_float32_strided),
        TEST(test_softmax_float32_matches_formula),
        TEST(test_softmax_grad_ops_float32),
        TEST(test_softmax_grad_float32_bits_of_composition),
        TEST(test_layer_norm_float32),
        TEST(test_softmax_errors),
        TEST(test_softmax_cross_entropy),
        TEST(test_sparse_cross_entropy),
        TEST(test_sigmoid_cross_entropy_and_l2_loss),
        TEST(test_bias_add),
        TEST(test_relu_grad),
        TEST(test_dropout),
        TEST(test_dropout_front_end),
        TEST(test_pool_against_naive),
        TEST(test_max_pool_grad_ties_and_nan),
        TEST(test_pool_sizes_and_values),
        TEST(test_pool_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
