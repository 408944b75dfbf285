/* test_variable.c — Variables (assign, assign_add/sub, errors, refcounts,
 * the read hook, live counts) and the initialiser math of core/init.c
 * (fans, variance scaling bounds, orthogonality, reproducibility). */
#include "testutil.h"

#include "core/init.h"
#include "core/variable.h"
#include "present/format.h"

static int var_teardown(void **state)
{
    if (mf_variable_live_count() != 0) {
        print_error("%lld variables still alive after the test\n",
                    (long long)mf_variable_live_count());
        return -1;
    }
    return teardown_engine(state);
}

#define VTEST(fn) cmocka_unit_test_setup_teardown(fn, setup_engine, var_teardown)

static MfTensor *vec(MfDType dt, int64_t n, const double *v)
{
    return make_tensor(dt, 1, &n, v);
}

static void test_new_and_release(void **state)
{
    (void)state;
    double d[3] = {1, 2, 3};
    MfTensor *t = vec(MF_FLOAT32, 3, d);
    MfVariable *v = mf_variable_new(t, NULL, true);
    assert_non_null(v);
    assert_string_equal(v->name, "Variable");
    assert_true(v->trainable);
    assert_ptr_equal(v->value, t);
    assert_int_equal(t->refcount, 2);
    MfVariable *w = mf_variable_new(t, "w", false);
    assert_string_equal(w->name, "w");
    assert_false(w->trainable);
    assert_true(w->id > v->id);
    assert_int_equal(mf_variable_live_count(), 2);
    mf_variable_retain(v);
    mf_variable_release(v);
    assert_int_equal(mf_variable_live_count(), 2);
    mf_variable_release(v);
    mf_variable_release(w);
    assert_int_equal(mf_variable_live_count(), 0);
    assert_int_equal(t->refcount, 1);
    mf_tensor_release(t);
}

static void test_assign_snapshots(void **state)
{
    (void)state;
    double a[2] = {1, 2}, b[2] = {5, 7};
    MfTensor *x = vec(MF_FLOAT64, 2, a), *y = vec(MF_FLOAT64, 2, b);
    MfVariable *v = mf_variable_new(x, "v", true);
    MfTensor *before = mf_variable_read(v);
    mf_tensor_retain(before);
    assert_int_equal(mf_variable_assign(v, y), MF_OK);
    assert_values(before, a, 2, 0);
    assert_values(mf_variable_read(v), b, 2, 0);
    assert_int_equal(mf_variable_assign_add(v, x), MF_OK);
    double sum[2] = {6, 9};
    assert_values(v->value, sum, 2, 0);
    MfTensor *s = mf_tensor_scalar(MF_FLOAT64, 1);
    assert_int_equal(mf_variable_assign_sub(v, s), MF_OK); /* broadcasts */
    double diff[2] = {5, 8};
    assert_values(v->value, diff, 2, 0);
    assert_values(y, b, 2, 0); /* tensors never change */
    mf_tensor_release(s);
    mf_tensor_release(before);
    mf_variable_release(v);
    mf_tensor_release(x);
    mf_tensor_release(y);
}

static void test_assign_errors(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3};
    double d[6] = {0};
    MfTensor *w0 = make_tensor(MF_FLOAT32, 2, s23, d);
    MfTensor *bad = vec(MF_FLOAT32, 3, d), *f64 = make_tensor(MF_FLOAT64, 2, s23, d);
    MfVariable *w = mf_variable_new(w0, "w", true);
    assert_int_equal(mf_variable_assign(w, bad), MF_ESHAPE);
    assert_error_contains("assign: variable 'w' has shape (2,3) float32, got (3,) float32");
    assert_int_equal(mf_variable_assign(w, f64), MF_EDTYPE);
    assert_error_contains("assign: variable 'w' has shape (2,3) float32, got (2,3) float64");
    assert_int_equal(mf_variable_assign_add(w, f64), MF_EDTYPE);
    assert_error_contains("assign_add: variable 'w' has shape (2,3) float32, got (2,3) float64");
    int64_t s13[3] = {4, 2, 3};
    double z[24] = {0};
    MfTensor *big = make_tensor(MF_FLOAT32, 3, s13, z);
    assert_int_equal(mf_variable_assign_sub(w, big), MF_ESHAPE);
    assert_error_contains("assign_sub: variable 'w' has shape (2,3) float32, got (4,2,3)");
    int64_t s2 = 2;
    MfTensor *two = make_tensor(MF_FLOAT32, 1, &s2, d);
    assert_int_equal(mf_variable_assign_add(w, two), MF_ESHAPE);
    assert_error_contains("add:");
    assert_ptr_equal(w->value, w0); /* unchanged after every failure */
    mf_tensor_release(two);
    mf_tensor_release(big);
    mf_variable_release(w);
    mf_tensor_release(w0);
    mf_tensor_release(bad);
    mf_tensor_release(f64);
}

static int hook_calls;
static MfVariable *hook_last;

static void count_reads(MfVariable *v)
{
    hook_calls++;
    hook_last = v;
}

static void test_read_hook(void **state)
{
    (void)state;
    MfTensor *t = mf_tensor_scalar(MF_FLOAT32, 3);
    MfVariable *v = mf_variable_new(t, "x", true);
    mf_variable_set_read_hook(count_reads);
    hook_calls = 0;
    assert_ptr_equal(mf_variable_read(v), t);
    assert_ptr_equal(mf_variable_read(v), t);
    assert_int_equal(hook_calls, 2);
    assert_ptr_equal(hook_last, v);
    assert_int_equal(mf_variable_assign(v, t), MF_OK); /* assign does not read */
    assert_int_equal(hook_calls, 2);
    mf_variable_set_read_hook(NULL);
    mf_variable_read(v);
    assert_int_equal(hook_calls, 2);
    mf_variable_release(v);
    mf_tensor_release(t);
}

static void test_fans(void **state)
{
    (void)state;
    double fi, fo;
    mf_init_fans(0, NULL, &fi, &fo);
    assert_true(fi == 1 && fo == 1);
    int64_t s1 = 7;
    mf_init_fans(1, &s1, &fi, &fo);
    assert_true(fi == 7 && fo == 7);
    int64_t s2[2] = {3, 5};
    mf_init_fans(2, s2, &fi, &fo);
    assert_true(fi == 3 && fo == 5);
    int64_t s4[4] = {3, 3, 16, 32}; /* a conv kernel */
    mf_init_fans(4, s4, &fi, &fo);
    assert_true(fi == 9 * 16 && fo == 9 * 32);
}

static void test_glorot_uniform_bounds(void **state)
{
    (void)state;
    int64_t s[2] = {30, 50};
    MfTensor *w = NULL, *w2 = NULL;
    assert_int_equal(mf_init_glorot_uniform(2, s, MF_FLOAT64, 7, &w), MF_OK);
    assert_int_equal(mf_init_glorot_uniform(2, s, MF_FLOAT64, 7, &w2), MF_OK);
    double limit = sqrt(6.0 / 80), lo = 1, hi = -1;
    for (int64_t i = 0; i < 1500; i++) {
        double x = mf_tensor_get(w, i);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        assert_true(x == mf_tensor_get(w2, i));
    }
    assert_true(lo >= -limit && hi < limit);
    assert_true(lo < -0.9 * limit && hi > 0.9 * limit);
    mf_tensor_release(w);
    mf_tensor_release(w2);
}

static void test_he_normal_std(void **state)
{
    (void)state;
    int64_t s[2] = {400, 300};
    MfTensor *w = NULL;
    assert_int_equal(mf_init_he_normal(2, s, MF_FLOAT32, 3, &w), MF_OK);
    assert_int_equal(w->dtype, MF_FLOAT32);
    double sum = 0, sq = 0, n = 120000, want = sqrt(2.0 / 400);
    for (int64_t i = 0; i < 120000; i++) {
        double x = mf_tensor_get(w, i);
        sum += x;
        sq += x * x;
        assert_true(fabs(x) <= 2 * want / 0.87962566103423978 + 1e-6);
    }
    double sd = sqrt(sq / n - (sum / n) * (sum / n));
    assert_true(fabs(sd - want) < 0.02 * want);
    mf_tensor_release(w);
}

/* max |W^T W - gain^2 I| (rows >= cols) or |W W^T - gain^2 I|. */
static double ortho_error(const MfTensor *w, int64_t rows, int64_t cols, double gain)
{
    int wide = rows < cols;
    int64_t n = wide ? rows : cols, len = wide ? cols : rows;
    double err = 0;
    for (int64_t a = 0; a < n; a++)
        for (int64_t b = 0; b < n; b++) {
            double dot = 0;
            for (int64_t k = 0; k < len; k++)
                dot += wide ? mf_tensor_get(w, a * cols + k) * mf_tensor_get(w, b * cols + k)
                            : mf_tensor_get(w, k * cols + a) * mf_tensor_get(w, k * cols + b);
            double e = fabs(dot - (a == b ? gain * gain : 0));
            err = e > err ? e : err;
        }
    return err;
}

static void test_orthogonal(void **state)
{
    (void)state;
    int64_t tall[2] = {20, 8}, wide[2] = {6, 15}, conv[3] = {2, 5, 4};
    MfTensor *w = NULL;
    assert_int_equal(mf_init_orthogonal(2, tall, MF_FLOAT64, 1.0, 11, &w), MF_OK);
    assert_true(ortho_error(w, 20, 8, 1.0) < 1e-12);
    mf_tensor_release(w);
    assert_int_equal(mf_init_orthogonal(2, wide, MF_FLOAT64, 2.0, 11, &w), MF_OK);
    assert_true(ortho_error(w, 6, 15, 2.0) < 1e-12);
    mf_tensor_release(w);
    assert_int_equal(mf_init_orthogonal(3, conv, MF_FLOAT32, 1.0, 11, &w), MF_OK);
    assert_int_equal(w->rank, 3);
    assert_int_equal(w->dtype, MF_FLOAT32);
    assert_true(ortho_error(w, 10, 4, 1.0) < 1e-5);
    mf_tensor_release(w);
}

static void test_init_errors(void **state)
{
    (void)state;
    int64_t s1 = 4, s2[2] = {3, 3};
    MfTensor *w = NULL;
    assert_int_equal(mf_init_orthogonal(1, &s1, MF_FLOAT32, 1.0, 1, &w), MF_ESHAPE);
    assert_error_contains("orthogonal: the shape must have at least 2 dimensions, got (4,)");
    assert_null(w);
    assert_int_equal(mf_init_orthogonal(2, s2, MF_INT32, 1.0, 1, &w), MF_EDTYPE);
    assert_error_contains("orthogonal: expected a float dtype");
    assert_int_equal(mf_init_glorot_normal(2, s2, MF_INT64, 1, &w), MF_EDTYPE);
    assert_error_contains("glorot_normal: expected a float dtype (float32 or float64), got int64");
    int64_t huge[2] = {1000000000, 1000000000};
    assert_int_equal(mf_init_he_normal(2, huge, MF_FLOAT32, 1, &w), MF_ENOMEM);
    assert_error_contains("he_normal: shape (1000000000,1000000000) of float32 is too large");
    int64_t empty[2] = {0, 3};
    assert_int_equal(mf_init_orthogonal(2, empty, MF_FLOAT32, 1.0, 1, &w), MF_OK);
    assert_int_equal(mf_tensor_numel(w), 0);
    mf_tensor_release(w);
}

/* print(v): the header line, then the values as a tensor prints them
 * (without its shape line); a graph variable has no values to show. */
static void test_format(void **state)
{
    (void)state;
    double d[3] = {1, 2.5, 3};
    MfTensor *t = vec(MF_FLOAT32, 3, d);
    MfVariable *v = mf_variable_new(t, "w", false);
    mf_tensor_release(t);
    MfPrintOptions o = {.precision = 4, .threshold = 1000, .edgeitems = 3, .linewidth = 75};
    MfStrBuf b = {0}, values = {0};
    assert_int_equal(mf_variable_format(v, &o, &b), MF_OK);
    assert_int_equal(mf_format_values(v->value, &o, &values), MF_OK);
    const char *head = "<mf.Variable 'w' shape=(3,) dtype=float32 trainable=false>\n";
    assert_true(strncmp(b.data, head, strlen(head)) == 0);
    assert_string_equal(b.data + strlen(head), values.data);
    mf_strbuf_free(&b);
    mf_strbuf_free(&values);
    mf_variable_release(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        VTEST(test_new_and_release), VTEST(test_assign_snapshots), VTEST(test_assign_errors),
        VTEST(test_read_hook), VTEST(test_fans), VTEST(test_glorot_uniform_bounds),
        VTEST(test_he_normal_std), VTEST(test_orthogonal), VTEST(test_init_errors), VTEST(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
