/* test_grad_registry.c — core/grad_registry.c: registering gradients by
 * name, gradient_override_map's entries by op type and gradient name, and
 * the check of what a registered gradient returns (run by 'mf_grad_call'),
 * with each error's status and message. Registered gradients are permanent,
 * so every test registers names of its own. */
#include "testutil.h"

#include "core/grad.h"
#include "core/grad_registry.h"

/* A registered gradient returning a tensor of 'shape' (rank 'rank') for
 * input 1, whatever the op's input is. */
typedef struct ShapedGrad {
    MfGradFn base;
    int rank;
    int64_t shape[2];
} ShapedGrad;

static MfStatus shaped_backward(MfGradFn *f, const MfGradCall *g, MfTensor **din)
{
    ShapedGrad *s = (ShapedGrad *)f;
    (void)g;
    din[0] = mf_tensor_new(MF_FLOAT64, s->rank, s->shape);
    return din[0] ? MF_OK : MF_ENOMEM;
}

/* Runs gradient 'f' as the override of Square on an input of 'xshape'. */
static MfStatus run_square_grad(MfGradFn *f, int xrank, const int64_t *xshape, MfTensor **dx)
{
    MfTensor *x = mf_tensor_new(MF_FLOAT64, xrank, xshape);
    MfTensor *y = mf_tensor_new(MF_FLOAT64, xrank, xshape);
    assert_non_null(x);
    assert_non_null(y);
    MfOpCall call = {.op = MF_OP_SQUARE, .ninputs = 1, .inputs = &x, .noutputs = 1};
    MfGradCall g = {.call = &call, .outputs = &y, .doutputs = &y, .override = f};
    MfStatus st = mf_grad_call(&g, dx);
    mf_tensor_release(x);
    mf_tensor_release(y);
    return st;
}

static void test_register_names(void **state)
{
    (void)state;
    static ShapedGrad a = {.base = {.backward = shaped_backward}};
    int before = mf_grad_count();
    assert_int_equal(mf_grad_register("RegA", &a.base), MF_OK);
    assert_ptr_equal(mf_grad_find("RegA"), &a.base);
    assert_string_equal(a.base.name, "RegA");
    assert_int_equal(mf_grad_count(), before + 1);
    assert_int_equal(mf_grad_register("RegA", &a.base), MF_EARG);
    assert_error_contains("RegisterGradient: a gradient named 'RegA' is registered already");
    assert_int_equal(mf_grad_register("", &a.base), MF_EARG);
    assert_error_contains("RegisterGradient: the name must not be empty");
    assert_null(mf_grad_find("RegB"));
}

static void test_override_by_names(void **state)
{
    (void)state;
    static ShapedGrad a = {.base = {.backward = shaped_backward}};
    assert_int_equal(mf_grad_register("OverA", &a.base), MF_OK);
    assert_int_equal(mf_grad_override_begin_named("Sqare", "OverA"), -1);
    assert_error_contains("gradient_override_map: no op type 'Sqare' (op types are "
                          "TensorFlow's names");
    assert_int_equal(mf_grad_override_begin_named("Square", "Nope"), -1);
    assert_error_contains("gradient_override_map: no gradient registered as 'Nope' (register "
                          "it first with mf.RegisterGradient(\"Nope\", fn))");
    assert_null(mf_grad_override(MF_OP_SQUARE));
    int mark = mf_grad_override_begin_named("Square", "OverA");
    assert_true(mark >= 0);
    assert_ptr_equal(mf_grad_override(MF_OP_SQUARE), &a.base);
    assert_null(mf_grad_override(MF_OP_MUL));
    mf_grad_override_end(mark);
    assert_null(mf_grad_override(MF_OP_SQUARE));
}

static void test_result_shape_checked(void **state)
{
    (void)state;
    static ShapedGrad good = {.base = {.backward = shaped_backward}, .rank = 1, .shape = {2}};
    static ShapedGrad bad = {.base = {.backward = shaped_backward}, .rank = 1, .shape = {3}};
    static ShapedGrad rank2 = {.base = {.backward = shaped_backward}, .rank = 2, .shape = {2, 1}};
    assert_int_equal(mf_grad_register("ResultGood", &good.base), MF_OK);
    assert_int_equal(mf_grad_register("ResultBad", &bad.base), MF_OK);
    assert_int_equal(mf_grad_register("ResultRank2", &rank2.base), MF_OK);
    const int64_t two[] = {2};
    MfTensor *dx = NULL;
    assert_int_equal(run_square_grad(&good.base, 1, two, &dx), MF_OK);
    assert_non_null(dx);
    assert_int_equal(dx->shape[0], 2);
    mf_tensor_release(dx);
    /* a wrong shape fails, and mf_grad_call releases the result */
    assert_int_equal(run_square_grad(&bad.base, 1, two, &dx), MF_EARG);
    assert_null(dx);
    assert_error_contains("gradient 'ResultBad' (registered for Square): result 1 has shape "
                          "(3,), but input 1 has shape (2,)");
    assert_int_equal(run_square_grad(&rank2.base, 1, two, &dx), MF_EARG);
    assert_error_contains("result 1 has shape (2,1), but input 1 has shape (2,)");
}

static void test_result_unknown_dims(void **state)
{
    (void)state;
    static ShapedGrad g = {.base = {.backward = shaped_backward}, .rank = 1, .shape = {3}};
    assert_int_equal(mf_grad_register("ResultLoose", &g.base), MF_OK);
    /* an input of unknown size (graph mode) matches any size */
    MfTensor *x = mf_tensor_new(MF_FLOAT64, 1, (const int64_t[]){1});
    assert_non_null(x);
    x->shape[0] = -1;   /* as a symbolic tensor's spec */
    MfTensor *dx = mf_tensor_new(MF_FLOAT64, 1, g.shape);
    MfOpCall call = {.op = MF_OP_SQUARE, .ninputs = 1, .inputs = &x, .noutputs = 1};
    MfGradCall gc = {.call = &call, .override = &g.base};
    assert_int_equal(mf_grad_check_result(&g.base, &gc, 0, dx), MF_OK);
    assert_int_equal(mf_grad_check_result(&g.base, &gc, 0, NULL), MF_OK);
    x->shape[0] = 1;
    assert_int_equal(mf_grad_check_result(&g.base, &gc, 0, dx), MF_EARG);
    assert_error_contains("result 1 has shape (3,), but input 1 has shape (1,)");
    mf_tensor_release(dx);
    mf_tensor_release(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_register_names),
        TEST(test_override_by_names),
        TEST(test_result_shape_checked),
        TEST(test_result_unknown_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
