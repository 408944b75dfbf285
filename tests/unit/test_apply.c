/* test_apply.c — the fused training ops (core/ops/apply.c): each op over
 * several steps against TensorFlow 1.x's formulas computed here, in float64
 * and float32 (the float32 reference is computed in float, as TensorFlow's
 * kernels do); Nesterov variants; output 0 is the variable; the refusal to
 * write into a shared or non-contiguous buffer; every shape and dtype
 * check; and the optimizers' copy-on-write (a tensor read from a Variable
 * before a step keeps its values). */
#include "testutil.h"

#include "core/variable.h"
#include "train/train.h"

#define N 4
#define STEPS 4

static const double W0[N] = {0.3, -0.4, 1.2, 0.05};
static const double G[N] = {0.5, -1.5, 2.0, -0.02};

/* Hyperparameters used by every test. */
#define LR 0.05
#define MOM 0.9
#define RHO 0.9
#define EPS 1e-7
#define B1 0.9
#define B2 0.999

/* The gradient at step t: changes sign and size so slots matter. */
static double grad(int t, int i)
{
    return G[i] * (1.0 + 0.25 * t) * (t % 2 ? -1.0 : 1.0);
}

/* Reference state for one op in type T: var and up to two slots. */
#define REF_STEP(T, SQRT, SUF)                                                              \
    static void ref_##SUF(MfOpId op, bool nesterov, int t, T *w, T *s0, T *s1)              \
    {                                                                                       \
        const T lr = (T)LR, mom = (T)MOM, rho = (T)RHO, eps = (T)EPS;                       \
        const T b1 = (T)B1, b2 = (T)B2;                                                     \
        T b1p = (T)1, b2p = (T)1;                                                           \
        for (int k = 0; k <= t; k++) {                                                      \
            b1p *= b1;                                                                      \
            b2p *= b2;                                                                      \
        }                                                                                   \
        T alpha = lr * SQRT((T)1 - b2p) / ((T)1 - b1p);                                     \
        for (int i = 0; i < N; i++) {                                                       \
            T g = (T)grad(t, i);                                                            \
            if (op == MF_OP_APPLY_GRADIENT_DESCENT) {                                       \
                w[i] -= g * lr;                                                             \
            } else if (op == MF_OP_APPLY_MOMENTUM) {                                        \
                s0[i] = s0[i] * mom + g;                                                    \
                w[i] -= nesterov ? g * lr + s0[i] * mom * lr : s0[i] * lr;                  \
            } else if (op == MF_OP_APPLY_ADAGRAD) {                                         \
                s0[i] += g * g;                                                             \
                w[i] -= g * lr * ((T)1 / SQRT(s0[i]));                                      \
            } else if (op == MF_OP_APPLY_RMSPROP) {                                         \
                s0[i] += (g * g - s0[i]) * ((T)1 - rho);                                    \
                s1[i] = s1[i] * mom + g * lr / SQRT(s0[i] + eps);                           \
                w[i] -= s1[i];                                                              \
            } else {                                                                        \
                s0[i] += (g - s0[i]) * ((T)1 - b1);                                         \
                s1[i] += (g * g - s1[i]) * ((T)1 - b2);                                     \
                T dir = nesterov ? g * ((T)1 - b1) + s0[i] * b1 : s0[i];                    \
                w[i] -= dir * alpha / (SQRT(s1[i]) + eps);                                  \
            }                                                                               \
        }                                                                                   \
    }

REF_STEP(float, sqrtf, f32)
REF_STEP(double, sqrt, f64)

static MfTensor *vec(MfDType dt, const double *v)
{
    const int64_t shape[1] = {N};
    return make_tensor(dt, 1, shape, v);
}

/* The inputs of 'op' at step t, TensorFlow's order; returns how many.
 * Scalars and the gradient are new tensors the caller releases from
 * index 'nstate' on. */
static int build_inputs(MfOpId op, MfDType dt, int t, MfTensor **state, MfTensor **in,
                        int *nstate)
{
    double g[N];
    for (int i = 0; i < N; i++)
        g[i] = grad(t, i);
    double b1p, b2p;
    MfTensor *gt = vec(dt, g);
    int k = 0;
    int ns = op == MF_OP_APPLY_GRADIENT_DESCENT ? 1 : op == MF_OP_APPLY_MOMENTUM ||
             op == MF_OP_APPLY_ADAGRAD ? 2 : 3;
    for (; k < ns; k++)
        in[k] = state[k];
    *nstate = ns;
    if (op == MF_OP_APPLY_ADAM) {
        /* the powers as the reference keeps them: products in the dtype */
        float p1 = 1, p2 = 1;
        double q1 = 1, q2 = 1;
        for (int j = 0; j <= t; j++)
            p1 *= (float)B1, p2 *= (float)B2, q1 *= B1, q2 *= B2;
        b1p = dt == MF_FLOAT32 ? (double)p1 : q1;
        b2p = dt == MF_FLOAT32 ? (double)p2 : q2;
        in[k++] = mf_tensor_scalar(dt, b1p);
        in[k++] = mf_tensor_scalar(dt, b2p);
    }
    in[k++] = mf_tensor_scalar(dt, LR);
    if (op == MF_OP_APPLY_RMSPROP) {
        in[k++] = mf_tensor_scalar(dt, RHO);
        in[k++] = mf_tensor_scalar(dt, MOM);
        in[k++] = mf_tensor_scalar(dt, EPS);
    }
    if (op == MF_OP_APPLY_ADAM) {
        in[k++] = mf_tensor_scalar(dt, B1);
        in[k++] = mf_tensor_scalar(dt, B2);
        in[k++] = mf_tensor_scalar(dt, EPS);
    }
    in[k++] = gt;
    if (op == MF_OP_APPLY_MOMENTUM)
        in[k++] = mf_tensor_scalar(dt, MOM);
    return k;
}

static void release_from(MfTensor **in, int from, int n)
{
    for (int i = from; i < n; i++)
        mf_tensor_release(in[i]);
}

/* STEPS steps of 'op' in 'dt' against the reference. */
static void check_op(MfOpId op, MfDType dt, bool nesterov)
{
    static const double zeros[N] = {0};
    const double acc0[N] = {0.1, 0.1, 0.1, 0.1}, ms0[N] = {1, 1, 1, 1};
    const double *init0 = op == MF_OP_APPLY_ADAGRAD ? acc0 : op == MF_OP_APPLY_RMSPROP ? ms0
                                                                                      : zeros;
    MfTensor *state[3] = {vec(dt, W0), vec(dt, init0), vec(dt, zeros)};
    float w32[N], a32[N], b32[N];
    double w64[N], a64[N], b64[N];
    for (int i = 0; i < N; i++) {
        w32[i] = (float)W0[i], a32[i] = (float)init0[i], b32[i] = 0;
        w64[i] = W0[i], a64[i] = init0[i], b64[i] = 0;
    }
    MfAttrs attrs = mf_attrs_default();
    attrs.use_nesterov = nesterov;
    for (int t = 0; t < STEPS; t++) {
        MfTensor *in[10], *out = NULL;
        int ns, n = build_inputs(op, dt, t, state, in, &ns);
        assert_int_equal(mf_op1(op, n, in, &attrs, &out), MF_OK);
        assert_ptr_equal(out, state[0]);
        mf_tensor_release(out);
        release_from(in, ns, n);
        ref_f32(op, nesterov, t, w32, a32, b32);
        ref_f64(op, nesterov, t, w64, a64, b64);
    }
    double ew[N], ea[N], eb[N];
    for (int i = 0; i < N; i++) {
        ew[i] = dt == MF_FLOAT32 ? (double)w32[i] : w64[i];
        ea[i] = dt == MF_FLOAT32 ? (double)a32[i] : a64[i];
        eb[i] = dt == MF_FLOAT32 ? (double)b32[i] : b64[i];
    }
    double tol = dt == MF_FLOAT32 ? 2e-7 : 1e-15;
    assert_values(state[0], ew, N, tol);
    if (op != MF_OP_APPLY_GRADIENT_DESCENT)
        assert_values(state[1], ea, N, tol);
    if (op == MF_OP_APPLY_RMSPROP || op == MF_OP_APPLY_ADAM)
        assert_values(state[2], eb, N, tol);
    for (int i = 0; i < 3; i++)
        mf_tensor_release(state[i]);
}

static void test_formulas(void **st)
{
    (void)st;
    static const MfOpId ops[] = {MF_OP_APPLY_GRADIENT_DESCENT, MF_OP_APPLY_MOMENTUM,
                                 MF_OP_APPLY_ADAGRAD, MF_OP_APPLY_RMSPROP, MF_OP_APPLY_ADAM};
    for (int d = 0; d < 2; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            check_op(ops[k], d ? MF_FLOAT64 : MF_FLOAT32, false);
}

static void test_nesterov(void **st)
{
    (void)st;
    check_op(MF_OP_APPLY_MOMENTUM, MF_FLOAT32, true);
    check_op(MF_OP_APPLY_MOMENTUM, MF_FLOAT64, true);
    check_op(MF_OP_APPLY_ADAM, MF_FLOAT32, true);
    check_op(MF_OP_APPLY_ADAM, MF_FLOAT64, true);
}

/* AdamW's decoupled decay as ApplyAdam's optional 11th input: the bits of
 * ApplyAdam without it followed by var -= wd * (the value before the step),
 * computed here in the dtype, for both dtypes, with and without Nesterov;
 * a 12th input is refused. */
static void check_adam_decay(MfDType dt, bool nesterov)
{
    static const double zeros[N] = {0};
    const double wd = 0.0123;
    MfTensor *a[3] = {vec(dt, W0), vec(dt, zeros), vec(dt, zeros)};
    MfTensor *b[3] = {vec(dt, W0), vec(dt, zeros), vec(dt, zeros)};
    MfAttrs attrs = mf_attrs_default();
    attrs.use_nesterov = nesterov;
    for (int t = 0; t < STEPS; t++) {
        double before[N];
        for (int i = 0; i < N; i++)
            before[i] = mf_tensor_get(b[0], i);
        MfTensor *in[12], *out = NULL;
        int ns, n = build_inputs(MF_OP_APPLY_ADAM, dt, t, a, in, &ns);
        in[n] = mf_tensor_scalar(dt, wd);
        assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n + 1, in, &attrs, &out), MF_OK);
        assert_ptr_equal(out, a[0]);
        mf_tensor_release(out);
        release_from(in, ns, n + 1);
        n = build_inputs(MF_OP_APPLY_ADAM, dt, t, b, in, &ns);
        assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n, in, &attrs, &out), MF_OK);
        mf_tensor_release(out);
        release_from(in, ns, n);
        for (int i = 0; i < N; i++) {   /* the decay as a second op would round it */
            double w = mf_tensor_get(b[0], i);
            double x = dt == MF_FLOAT32 ? (double)((float)w - (float)wd * (float)before[i])
                                        : w - wd * before[i];
            mf_tensor_set(b[0], i, x);
        }
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < N; i++)
                assert_true(mf_tensor_get(a[k], i) == mf_tensor_get(b[k], i));
    }
    MfTensor *in[12], *out = NULL;
    int ns, n = build_inputs(MF_OP_APPLY_ADAM, dt, 0, a, in, &ns);
    in[n] = mf_tensor_scalar(dt, wd);
    in[n + 1] = mf_tensor_scalar(dt, wd);
    assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n + 2, in, &attrs, &out), MF_EARG);
    assert_error_contains("apply_adam: expected 10 input(s), got 12");
    release_from(in, ns, n + 2);
    for (int k = 0; k < 3; k++) {
        mf_tensor_release(a[k]);
        mf_tensor_release(b[k]);
    }
}

static void test_adam_weight_decay(void **st)
{
    (void)st;
    for (int d = 0; d < 2; d++) {
        check_adam_decay(d ? MF_FLOAT64 : MF_FLOAT32, false);
        check_adam_decay(d ? MF_FLOAT64 : MF_FLOAT32, true);
    }
}

/* ApplyAdam on (grad, grad_scale) with attrs.grad_scaled against ApplyAdam
 * on the product Mul(grad, grad_scale) (what a clipped gradient was before
 * the optimizers passed its factors): the same bits of var, m and v over
 * STEPS steps, with and without weight_decay and Nesterov. */
static void check_adam_scaled(MfDType dt, bool nesterov, bool decay)
{
    static const double zeros[N] = {0};
    MfTensor *a[3] = {vec(dt, W0), vec(dt, zeros), vec(dt, zeros)};
    MfTensor *b[3] = {vec(dt, W0), vec(dt, zeros), vec(dt, zeros)};
    MfAttrs plain = mf_attrs_default(), scaled = mf_attrs_default();
    plain.use_nesterov = scaled.use_nesterov = nesterov;
    scaled.grad_scaled = true;
    for (int t = 0; t < STEPS; t++) {
        MfTensor *in[12], *out = NULL, *prod = NULL;
        MfTensor *scale = mf_tensor_scalar(dt, 0.3711 / (t + 1));   /* rounds in the product */
        int ns, n = build_inputs(MF_OP_APPLY_ADAM, dt, t, a, in, &ns);
        if (decay)
            in[n++] = mf_tensor_scalar(dt, 0.0123);
        in[n++] = scale;
        assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n, in, &scaled, &out), MF_OK);
        assert_ptr_equal(out, a[0]);
        mf_tensor_release(out);
        release_from(in, ns, n);
        n = build_inputs(MF_OP_APPLY_ADAM, dt, t, b, in, &ns);
        scale = mf_tensor_scalar(dt, 0.3711 / (t + 1));
        assert_int_equal(mf_binary(MF_OP_MUL, in[9], scale, &prod), MF_OK);
        mf_tensor_release(in[9]);
        mf_tensor_release(scale);
        in[9] = prod;
        if (decay)
            in[n++] = mf_tensor_scalar(dt, 0.0123);
        assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n, in, &plain, &out), MF_OK);
        mf_tensor_release(out);
        release_from(in, ns, n);
        size_t bytes = N * mf_dtype_size(dt);
        for (int k = 0; k < 3; k++)
            assert_memory_equal(mf_tensor_data(a[k]), mf_tensor_data(b[k]), bytes);
    }
    for (int k = 0; k < 3; k++) {
        mf_tensor_release(a[k]);
        mf_tensor_release(b[k]);
    }
}

/* Runs ApplyAdam on W0 with gradient 'g' times 'scale' (float32) under
 * 'policy'; returns its status and checks that nothing was written
 * unless it ran. */
static MfStatus adam_scaled_policy(double g, double scale, MfApplyNonfinite policy)
{
    static const double zeros[N] = {0};
    MfTensor *state[3] = {vec(MF_FLOAT32, W0), vec(MF_FLOAT32, zeros), vec(MF_FLOAT32, zeros)};
    MfTensor *in[12], *out = NULL;
    MfAttrs attrs = mf_attrs_default();
    attrs.grad_scaled = true;
    attrs.nonfinite = (int)policy;
    int ns, n = build_inputs(MF_OP_APPLY_ADAM, MF_FLOAT32, 0, state, in, &ns);
    mf_tensor_set(in[9], 2, g);
    in[n++] = mf_tensor_scalar(MF_FLOAT32, scale);
    MfStatus st = mf_op1(MF_OP_APPLY_ADAM, n, in, &attrs, &out);
    if (st != MF_OK || policy == MF_APPLY_NONFINITE_SKIP)
        assert_values(state[0], W0, N, 1e-7);
    mf_tensor_release(out);
    release_from(in, ns, n);
    for (int k = 0; k < 3; k++)
        mf_tensor_release(state[k]);
    return st;
}

static void test_adam_grad_scale(void **st)
{
    (void)st;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 4; k++)
            check_adam_scaled(d ? MF_FLOAT64 : MF_FLOAT32, k & 1, k & 2);
    /* the product's overflow is a non-finite gradient (finite factors) */
    assert_int_equal(adam_scaled_policy(1e30, 1e10, MF_APPLY_NONFINITE_ERROR), MF_EARG);
    assert_error_contains("apply_adam: the gradient holds NaN or Inf and nonfinite = \"error\"");
    assert_int_equal(adam_scaled_policy(1e30, 1e-10, MF_APPLY_NONFINITE_ERROR), MF_OK);
    assert_int_equal(adam_scaled_policy(2.0, NAN, MF_APPLY_NONFINITE_ERROR), MF_EARG);
    assert_error_contains("apply_adam: the gradient holds NaN or Inf");
    assert_int_equal(adam_scaled_policy(1e30, 1e10, MF_APPLY_NONFINITE_SKIP), MF_OK);
    /* grad_scaled: ApplyAdam's, with its input */
    static const double zeros[N] = {0};
    MfTensor *state[3] = {vec(MF_FLOAT32, W0), vec(MF_FLOAT32, zeros), vec(MF_FLOAT32, zeros)};
    MfTensor *in[12], *out = NULL;
    MfAttrs attrs = mf_attrs_default();
    attrs.grad_scaled = true;
    int ns, n = build_inputs(MF_OP_APPLY_ADAM, MF_FLOAT32, 0, state, in, &ns);
    assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n, in, &attrs, &out), MF_EARG);
    assert_error_contains("apply_adam: expected 10 input(s), weight_decay if any, then "
                          "grad_scale (attrs.grad_scaled), got 10");
    in[n] = mf_tensor_scalar(MF_FLOAT64, 0.5);
    assert_int_equal(mf_op1(MF_OP_APPLY_ADAM, n + 1, in, &attrs, &out), MF_EDTYPE);
    assert_error_contains("apply_adam: grad_scale has dtype float64, expected the variable's "
                          "float32");
    release_from(in, ns, n + 1);
    MfTensor *gd_in[3] = {state[0], mf_tensor_scalar(MF_FLOAT32, 1), vec(MF_FLOAT32, G)};
    assert_int_equal(mf_op1(MF_OP_APPLY_GRADIENT_DESCENT, 3, gd_in, &attrs, &out), MF_EARG);
    assert_error_contains("apply_gradient_descent: grad_scaled is ApplyAdam's attribute");
    release_from(gd_in, 1, 3);
    assert_values(state[0], W0, N, 1e-7);
    for (int k = 0; k < 3; k++)
        mf_tensor_release(state[k]);
}

/* ApplyGradientDescent(W0, alpha, G with g at element 1) under 'policy'
 * and attrs.gated; the status, and whether var changed. */
static MfStatus gd_gated(double alpha, double g, MfApplyNonfinite policy, bool *wrote)
{
    MfTensor *var = vec(MF_FLOAT32, W0), *grad = vec(MF_FLOAT32, G), *out = NULL;
    mf_tensor_set(grad, 1, g);
    MfTensor *in[3] = {var, mf_tensor_scalar(MF_FLOAT32, alpha), grad};
    MfAttrs attrs = mf_attrs_default();
    attrs.gated = true;
    attrs.nonfinite = (int)policy;
    MfStatus s = mf_op1(MF_OP_APPLY_GRADIENT_DESCENT, 3, in, &attrs, &out);
    *wrote = mf_tensor_get(var, 0) != (double)(float)W0[0];
    mf_tensor_release(out);
    release_from(in, 0, 3);
    return s;
}

/* attrs.gated (a finite gate covers the gradient: train/graph_train.c):
 * with every scalar finite the gradient is not scanned (the gate vouches
 * for it), with one not finite it is, and the message names the gradient
 * or the scalar as without the gate; "skip" likewise. */
static void test_gated_scans_after_a_bad_scalar(void **st)
{
    (void)st;
    bool wrote = false;
    assert_int_equal(gd_gated(0.5, NAN, MF_APPLY_NONFINITE_ERROR, &wrote), MF_OK);
    assert_true(wrote);
    assert_int_equal(gd_gated(INFINITY, NAN, MF_APPLY_NONFINITE_ERROR, &wrote), MF_EARG);
    assert_error_contains("apply_gradient_descent: the gradient holds NaN or Inf");
    assert_false(wrote);
    assert_int_equal(gd_gated(INFINITY, 1.0, MF_APPLY_NONFINITE_ERROR, &wrote), MF_EARG);
    assert_error_contains("apply_gradient_descent: alpha is NaN or Inf");
    assert_false(wrote);
    assert_int_equal(gd_gated(INFINITY, 1.0, MF_APPLY_NONFINITE_SKIP, &wrote), MF_OK);
    assert_false(wrote);
    assert_int_equal(gd_gated(0.5, 1.0, MF_APPLY_NONFINITE_SKIP, &wrote), MF_OK);
    assert_true(wrote);
}

static void test_flags_and_names(void **st)
{
    (void)st;
    for (int op = MF_OP_APPLY_GRADIENT_DESCENT; op <= MF_OP_APPLY_ADAM; op++)
        assert_true(mf_op_table[op]->flags & MF_OP_NONDIFF);
    assert_int_equal(mf_op_find("ApplyAdam"), MF_OP_APPLY_ADAM);
    assert_int_equal(mf_op_find("ApplyRMSProp"), MF_OP_APPLY_RMSPROP);
    assert_int_equal(mf_op_table[MF_OP_APPLY_ADAM]->arity, 10);
}

/* Runs ApplyGradientDescent(var, lr, g) and returns its status. */
static MfStatus gd(MfTensor *var, MfTensor *lr, MfTensor *g)
{
    MfTensor *in[3] = {var, lr, g}, *out = NULL;
    MfStatus s = mf_op1(MF_OP_APPLY_GRADIENT_DESCENT, 3, in, NULL, &out);
    mf_tensor_release(out);
    return s;
}

static void test_refuses_shared_buffers(void **st)
{
    (void)st;
    MfTensor *var = vec(MF_FLOAT32, W0), *g = vec(MF_FLOAT32, G);
    MfTensor *lr = mf_tensor_scalar(MF_FLOAT32, 1);
    mf_tensor_retain(var); /* a second holder: the buffer is shared */
    assert_int_equal(gd(var, lr, g), MF_EARG);
    assert_error_contains("apply_gradient_descent: var must be a contiguous buffer that "
                          "nothing else references");
    assert_values(var, W0, N, 1e-7);
    mf_tensor_release(var);
    const int64_t shape[1] = {N};
    const int64_t strides[1] = {1};
    MfTensor *view = mf_tensor_view(var, 1, shape, strides, 0); /* shares the storage */
    assert_int_equal(gd(var, lr, g), MF_EARG);
    assert_error_contains("var must be a contiguous buffer");
    mf_tensor_release(view);
    assert_int_equal(gd(var, lr, g), MF_OK);
    /* the same buffer twice as var and slot */
    MfTensor *in[5] = {var, var, lr, g, lr}, *out = NULL;
    assert_int_equal(mf_op1(MF_OP_APPLY_MOMENTUM, 5, in, NULL, &out), MF_EARG);
    assert_error_contains("apply_momentum: accum must be");
    mf_tensor_release(var);
    mf_tensor_release(g);
    mf_tensor_release(lr);
}

static void test_checks(void **st)
{
    (void)st;
    MfTensor *var = vec(MF_FLOAT32, W0), *g = vec(MF_FLOAT32, G), *g64 = vec(MF_FLOAT64, G);
    MfTensor *lr = mf_tensor_scalar(MF_FLOAT32, 1), *lr64 = mf_tensor_scalar(MF_FLOAT64, 1);
    const int64_t s2[1] = {2};
    const double two[2] = {1, 2};
    MfTensor *short_g = make_tensor(MF_FLOAT32, 1, s2, two);
    MfTensor *ivar = vec(MF_INT32, W0);
    assert_int_equal(gd(var, lr, g64), MF_EDTYPE);
    assert_error_contains("apply_gradient_descent: delta has dtype float64, expected the "
                          "variable's float32");
    assert_int_equal(gd(var, lr64, g), MF_EDTYPE);
    assert_error_contains("alpha has dtype float64");
    assert_int_equal(gd(var, lr, short_g), MF_ESHAPE);
    assert_error_contains("delta has shape (2,), expected the variable's shape (4,)");
    assert_int_equal(gd(var, g, g), MF_ESHAPE);
    assert_error_contains("alpha must be a scalar, got shape (4,)");
    assert_int_equal(gd(ivar, lr, g), MF_EDTYPE);
    assert_error_contains("apply_gradient_descent");
    MfTensor *in[2] = {var, lr}, *out = NULL;
    assert_int_equal(mf_op1(MF_OP_APPLY_GRADIENT_DESCENT, 2, in, NULL, &out), MF_EARG);
    assert_error_contains("expected 3 input(s), got 2");
    assert_values(var, W0, N, 1e-7);
    MfTensor *all[] = {var, g, g64, lr, lr64, short_g, ivar};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
}

/* A tensor read from a Variable before a step keeps its values: the
 * optimizer copies the shared buffer, then updates the copy in place; the
 * next step, with nobody else holding it, writes without copying. */
static void test_copy_on_write(void **st)
{
    (void)st;
    MfTensor *x = vec(MF_FLOAT32, W0), *g = vec(MF_FLOAT32, G);
    MfVariable *v = mf_variable_new(x, "w", true);
    MfOptConfig cfg = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    MfOptimizer *o = mf_optimizer_new(&cfg);
    MfGradVar pair = {g, v, NULL};
    assert_int_equal(mf_optimizer_apply(o, 1, &pair, NULL, NULL), MF_OK);
    assert_ptr_not_equal(v->value, x);   /* 'x' was shared: copied */
    assert_values(x, W0, N, 1e-7);
    MfTensor *now = v->value;
    assert_int_equal(mf_optimizer_apply(o, 1, &pair, NULL, NULL), MF_OK);
    assert_ptr_equal(v->value, now);     /* sole owner: updated in place */
    mf_tensor_retain(now);               /* a user reads it */
    double seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = mf_tensor_get(now, i);
    assert_int_equal(mf_optimizer_apply(o, 1, &pair, NULL, NULL), MF_OK);
    assert_ptr_not_equal(v->value, now);
    assert_values(now, seen, N, 0);
    MfVariable *m = NULL;
    assert_int_equal(mf_optimizer_get_slot(o, v, "m", &m), MF_OK);
    assert_true(mf_tensor_get(m->value, 0) > 0);
    mf_tensor_release(now);
    mf_optimizer_release(o);
    mf_variable_release(v);
    mf_tensor_release(x);
    mf_tensor_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_formulas),
        TEST(test_nesterov),
        TEST(test_adam_weight_decay),
        TEST(test_adam_grad_scale),
        TEST(test_gated_scans_after_a_bad_scalar),
        TEST(test_flags_and_names),
        TEST(test_refuses_shared_buffers),
        TEST(test_checks),
        TEST(test_copy_on_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
