/* test_vecmath_f64.c — the float64 kernels of core/ops/vecmath.h (exp,
 * expm1, log, tanh, sigmoid) against glibc's long double functions (64-bit
 * significands: 11 bits beyond a double, so the reference is exact to
 * about 1/1000 ulp): within their stated ulp bound over spread bit
 * patterns, dense ranges and the special values, with libm's special
 * values; every instruction set gives the same bits; the ops give the same
 * bits on 1, 2 and 3 threads and for strided inputs. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/ops/vecmath.h"
#include "core/ops/view.h"
#include "core/parallel.h"

static long double sigmoid_ref(long double x)
{
    return 1.0L / (1.0L + expl(-x));
}

typedef struct {
    MfVecFn fn;
    MfOpId op;
    const char *name;
    long double (*ref)(long double);
    double (*lib)(double);
    double bound;
} Case;

static double sigmoid_lib(double x)
{
    return (double)sigmoid_ref(x);
}

static long double softplus_ref(long double x)
{
    return (x > 0 ? x : 0.0L) + log1pl(expl(-fabsl(x)));
}

static double softplus_lib(double x)
{
    return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x)));
}

/* The bounds help states; the largest errors seen (avx2 and scalar alike):
 * exp 0.807, expm1 0.881, log 0.736, log1p 1.437, softplus 1.840, tanh 2.192,
 * sigmoid 2.171 ulp. */
static const Case cases[] = {
    {MF_VEC_EXP, MF_OP_EXP, "exp", expl, exp, 1},
    {MF_VEC_EXPM1, MF_OP_EXPM1, "expm1", expm1l, expm1, 1},
    {MF_VEC_LOG, MF_OP_LOG, "log", logl, log, 1},
    {MF_VEC_LOG1P, MF_OP_LOG1P, "log1p", log1pl, log1p, 2},
    {MF_VEC_SOFTPLUS, MF_OP_SOFTPLUS, "softplus", softplus_ref, softplus_lib, 2.5},
    {MF_VEC_TANH, MF_OP_TANH, "tanh", tanhl, tanh, 2.5},
    {MF_VEC_SIGMOID, MF_OP_SIGMOID, "sigmoid", sigmoid_ref, sigmoid_lib, 2.5},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The error of 'y' in ulps of the exact 'ref' as a double (2^-1074 at the
 * least); -1 when a special value differs: NaN for NaN, the same infinity,
 * the same signed zero where the reference is 0 or infinite. */
static double ulp_error(double y, long double ref)
{
    if (isnan(ref))
        return isnan(y) ? 0 : -1;
    if (isnan(y))
        return -1;
    if (isinf(ref) || ref == 0)
        return ((long double)y == ref && !signbit(y) == !signbit(ref)) ? 0 : -1;
    if (isinf(y) && (long double)(double)ref == (long double)y)
        return 0; /* both overflow */
    long double a = fabsl(ref);
    int e;
    frexpl(a > DBL_MAX ? DBL_MAX : a, &e);
    long double u = a < DBL_MIN ? 0x1p-1074L : ldexpl(1.0L, e - 53);
    long double yy = isinf(y) ? copysignl(0x1p1024L, y) : (long double)y;
    return (double)(fabsl(yy - ref) / u);
}

static const double specials[] = {
    0.0, -0.0, 0x1p-1074, -0x1p-1074, 0x1.fffffffffffffp-1023, DBL_MIN, -DBL_MIN,
    DBL_MAX, -DBL_MAX, 1.0, -1.0, 0x1.fffffffffffffp-1, 0x1.0000000000001p0,
    709.782712893383973, 709.782712893384, 709.79, 710.0, -708.4, -708.3964185322641,
    -745.1332191019411, -745.1332191019412, -745.14, -746.0, 700.0, 700.0001, -60.0,
    -60.0001, 1e-300, -1e-300, 0x1p-54, -0x1p-54, 0x1p-27, 19.0, 22.0, -36.7, 37.0,
    0.34657359027997264, -0.34657359027997264, 0.7071067811865476, 1.4142135623730951,
};

/* worst error of case 'c' over 'n' inputs; fails past its bound or at a
 * special-value mismatch */
static double check(const Case *c, const double *x, double *y, int64_t n, double worst)
{
    mf_vec_f64(c->fn, x, y, n);
    for (int64_t i = 0; i < n; i++) {
        double e = ulp_error(y[i], c->ref(x[i]));
        if (e < 0 || e > c->bound) {
            print_error("%s(%a) = %a, long double %La (libm %a)\n", c->name, x[i], y[i],
                        c->ref(x[i]), c->lib(x[i]));
            fail();
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

/* spread bit patterns (both signs, every exponent), dense ranges where the
 * functions do their work, and the specials */
static void test_accuracy(void **state)
{
    (void)state;
    enum { N = 1 << 19 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int k = 0; k < NCASES; k++) {
        const Case *c = &cases[k];
        double worst = check(c, specials, y, (int64_t)(sizeof specials / sizeof *specials), 0);
        for (int i = 0; i < N; i++)
            x[i] = from_bits((uint64_t)i * 0x100000000fd1ull * 4099); /* every class */
        worst = check(c, x, y, N, worst);
        const double span[][2] = {{-750, 750}, {-40, 40}, {-1, 1}, {-1e-6, 1e-6}, {0, 4}};
        for (size_t s = 0; s < sizeof span / sizeof span[0]; s++) {
            for (int i = 0; i < N; i++)
                x[i] = span[s][0] + (span[s][1] - span[s][0]) * ((double)i + 0.5) / N;
            worst = check(c, x, y, N, worst);
        }
        print_message("%-8s %-6s max %.3f ulp\n", c->name, mf_simd_name(mf_simd_level()), worst);
    }
    free(x);
    free(y);
}

/* MF_SIMD=scalar (set by main) capped the choice; the best level the CPU has */
static MfSimd best_level(void)
{
    for (int l = MF_SIMD_AVX512; l > MF_SIMD_SCALAR; l--)
        if (mf_simd_set_level((MfSimd)l))
            return (MfSimd)l;
    return MF_SIMD_SCALAR;
}

static void test_paths_agree(void **state)
{
    (void)state;
    enum { N = 1 << 18 };
    double *x = malloc(N * sizeof *x), *want = malloc(N * sizeof *x), *got = malloc(N * sizeof *x);
    assert_non_null(x);
    assert_non_null(want);
    assert_non_null(got);
    for (int i = 0; i < N; i++)
        x[i] = i % 2 ? from_bits((uint64_t)i * 0x100000000fd1ull * 4099)
                     : ((double)i / N - 0.5) * 1500;
    int tested = 0;
    for (int l = MF_SIMD_AVX2; l <= MF_SIMD_AVX512; l++) {
        if (!mf_simd_set_level((MfSimd)l)) {
            print_message("%s: not on this CPU, not compared\n", mf_simd_name((MfSimd)l));
            continue;
        }
        for (int c = 0; c < NCASES; c++) {
            assert_true(mf_simd_set_level(MF_SIMD_SCALAR));
            mf_vec_f64(cases[c].fn, x, want, N - 3); /* an odd length: the tails too */
            assert_true(mf_simd_set_level((MfSimd)l));
            mf_vec_f64(cases[c].fn, x, got, N - 3);
            assert_memory_equal(want, got, (N - 3) * sizeof *x);
        }
        tested++;
    }
    assert_true(tested > 0 || !__builtin_cpu_supports("avx2"));
    free(x);
    free(want);
    free(got);
}

/* The ops run the kernels on float64 tensors: the same bits as
 * mf_vec_f64, on 1, 2 and 3 threads, and through a strided view. */
static void test_ops_threads_and_strides(void **state)
{
    (void)state;
    int64_t shape[2] = {512, 515}; /* 263,680 elements: split, with a ragged end */
    MfTensor *x = mf_tensor_new(MF_FLOAT64, 2, shape);
    assert_non_null(x);
    double *xd = mf_tensor_data(x);
    int64_t n = 512 * 515;
    for (int64_t i = 0; i < n; i++)
        xd[i] = (double)((i * 7919) % 20001) / 1000.0 - 10.0;
    double *direct = malloc((size_t)n * sizeof *direct);
    assert_non_null(direct);
    best_level();
    for (int k = 0; k < NCASES; k++) {
        mf_vec_f64(cases[k].fn, xd, direct, n);
        MfTensor *ref = NULL;
        mf_parallel_set_threads(1);
        assert_int_equal(mf_unary(cases[k].op, x, &ref), MF_OK);
        assert_memory_equal(direct, mf_tensor_data(ref), (size_t)n * 8);
        mf_parallel_set_one_chunk_each(true);
        for (int t = 2; t <= 3; t++) {
            MfTensor *y = NULL;
            mf_parallel_set_threads(t);
            assert_int_equal(mf_unary(cases[k].op, x, &y), MF_OK);
            assert_int_equal(mf_parallel_last_threads(), t);
            assert_memory_equal(direct, mf_tensor_data(y), (size_t)n * 8);
            mf_tensor_release(y);
        }
        mf_parallel_set_one_chunk_each(false);
        mf_parallel_set_threads(1);
        MfTensor *xt = NULL, *yt = NULL, *ytt = NULL;
        assert_int_equal(mf_transpose(x, NULL, 0, &xt), MF_OK);
        assert_int_equal(mf_unary(cases[k].op, xt, &yt), MF_OK);
        assert_int_equal(mf_transpose(yt, NULL, 0, &ytt), MF_OK);
        MfTensor *c = mf_tensor_contiguous(ytt);
        assert_memory_equal(direct, mf_tensor_data(c), (size_t)n * 8);
        mf_tensor_release(c);
        mf_tensor_release(ytt);
        mf_tensor_release(yt);
        mf_tensor_release(xt);
        mf_tensor_release(ref);
    }
    free(direct);
    mf_tensor_release(x);
}

int main(void)
{
    setenv("MF_SIMD", "scalar", 1);
    const struct CMUnitTest tests[] = {
        TEST(test_accuracy),
        TEST(test_paths_agree),
        TEST(test_ops_threads_and_strides),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* the accuracy once more on the best instruction set */
    if (!failed && best_level() != MF_SIMD_SCALAR) {
        const struct CMUnitTest again[] = {TEST(test_accuracy)};
        failed = cmocka_run_group_tests(again, NULL, NULL);
    }
    return failed;
}
