/* test_optimizer.c — train/: the five optimizers over several steps against
 * TensorFlow 1.x's formulas computed here independently (float64 and
 * float32), slots (names, initial values, TF names), Adam's beta powers,
 * the global step, compute_gradients under a tape, and
 * each error path's status and message. */
#include "testutil.h"

#include "core/clip.h"
#include "core/ops/reduce.h"
#include "core/variable.h"
#include "eager/eager.h"
#include "graph/graph.h"
#include "train/train.h"

#define N 3
#define STEPS 5

static const double W0[N] = {0.3, -0.4, 1.2};

/* The gradient fed at step t (fixed, so the rule is tested alone). */
static double grad_at(int t, int i)
{
    static const double base[N] = {0.5, -1.5, 2.0};
    return base[i] * (1.0 + 0.3 * t) + (t % 2 ? 0.25 : -0.1);
}

/* Reference state: w and up to two slots per element, plus Adam's t. */
typedef struct Ref {
    double w[N], s0[N], s1[N];
    int t;
} Ref;

static void ref_init(Ref *r, const MfOptConfig *c)
{
    for (int i = 0; i < N; i++) {
        r->w[i] = W0[i];
        r->s0[i] = c->kind == MF_OPT_ADAGRAD ? c->initial_accumulator_value
                   : c->kind == MF_OPT_RMSPROP ? 1.0 : 0.0;
        r->s1[i] = 0;
    }
    r->t = 0;
}

static void ref_step(Ref *r, const MfOptConfig *c, int t)
{
    double lr = c->lr;
    r->t++;
    double lr_t = lr * sqrt(1 - pow(c->beta2, r->t)) / (1 - pow(c->beta1, r->t));
    for (int i = 0; i < N; i++) {
        double g = grad_at(t, i);
        switch (c->kind) {
        case MF_OPT_SGD: r->w[i] -= lr * g; break;
        case MF_OPT_MOMENTUM:
            r->s0[i] = r->s0[i] * c->momentum + g;
            r->w[i] -= c->use_nesterov ? lr * g + lr * c->momentum * r->s0[i] : lr * r->s0[i];
            break;
        case MF_OPT_ADAGRAD:
            r->s0[i] += g * g;
            r->w[i] -= lr * g / sqrt(r->s0[i]);
            break;
        case MF_OPT_RMSPROP:
            r->s0[i] = c->decay * r->s0[i] + (1 - c->decay) * g * g;
            r->s1[i] = c->momentum * r->s1[i] + lr * g / sqrt(r->s0[i] + c->epsilon);
            r->w[i] -= r->s1[i];
            break;
        case MF_OPT_ADAM:
            r->s0[i] = c->beta1 * r->s0[i] + (1 - c->beta1) * g;
            r->s1[i] = c->beta2 * r->s1[i] + (1 - c->beta2) * g * g;
            r->w[i] -= lr_t * r->s0[i] / (sqrt(r->s1[i]) + c->epsilon);
            break;
        case MF_OPT_LION: {   /* Chen et al. 2023, Algorithm 2 */
            double u = c->beta1 * r->s0[i] + (1 - c->beta1) * g;
            r->w[i] -= lr * ((u > 0) - (u < 0) + c->weight_decay * r->w[i]);
            r->s0[i] = c->beta2 * r->s0[i] + (1 - c->beta2) * g;
            break;
        }
        }
    }
}

static MfVariable *make_var(MfDType dt, const char *name)
{
    const int64_t shape[1] = {N};
    MfTensor *x = make_tensor(dt, 1, shape, W0);
    MfVariable *v = mf_variable_new(x, name, true);
    mf_tensor_release(x);
    assert_non_null(v);
    return v;
}

static void run_case(const MfOptConfig *c, MfDType dt)
{
    double tol = dt == MF_FLOAT64 ? 1e-12 : 3e-5;
    MfOptimizer *o = mf_optimizer_new(c);
    assert_non_null(o);
    MfVariable *w = make_var(dt, "w");
    Ref r;
    ref_init(&r, c);
    const int64_t shape[1] = {N};
    for (int t = 0; t < STEPS; t++) {
        double g[N];
        for (int i = 0; i < N; i++)
            g[i] = grad_at(t, i);
        MfGradVar pair = {make_tensor(dt, 1, shape, g), w, NULL};
        assert_int_equal(mf_optimizer_apply(o, 1, &pair, NULL, NULL), MF_OK);
        mf_tensor_release(pair.grad);
        ref_step(&r, c, t);
        assert_values(w->value, r.w, N, tol);
    }
    const char *names[2];
    int ns = mf_optimizer_slot_names(o, names);
    for (int k = 0; k < ns; k++) {
        MfVariable *slot;
        assert_int_equal(mf_optimizer_get_slot(o, w, names[k], &slot), MF_OK);
        assert_non_null(slot);
        assert_false(slot->trainable);
        assert_values(slot->value, k ? r.s1 : r.s0, N, tol * 10);
    }
    mf_optimizer_release(o);
    mf_variable_release(w);
    assert_int_equal(mf_variable_live_count(), 0);
}

static void run_both(MfOptConfig c)
{
    run_case(&c, MF_FLOAT64);
    run_case(&c, MF_FLOAT32);
}

static void test_sgd(void **state)
{
    (void)state;
    run_both(mf_opt_config_default(MF_OPT_SGD, 0.05));
}

static void test_momentum(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_MOMENTUM, 0.05);
    c.momentum = 0.9;
    run_both(c);
    c.use_nesterov = true;
    run_both(c);
}

static void test_adagrad(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAGRAD, 0.1);
    run_both(c);
    c.initial_accumulator_value = 0.7;
    run_both(c);
}

static void test_rmsprop(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_RMSPROP, 0.01);
    run_both(c);
    c.decay = 0.8;
    c.momentum = 0.5;
    c.epsilon = 1e-6;
    run_both(c);
}

static void test_adam(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    run_both(c);
    c.beta1 = 0.5;
    c.beta2 = 0.9;
    c.epsilon = 1e-4;
    run_both(c);
}

/* Lion: the descriptor entry and ApplyLion against the paper's lines */
static void test_lion(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_LION, 0.01);
    assert_true(c.beta1 == 0.9 && c.beta2 == 0.99 && c.weight_decay == 0);
    run_both(c);
    c.beta1 = 0.5;
    c.beta2 = 0.9;
    c.weight_decay = 0.3;
    run_both(c);
}

/* Slot names (TensorFlow's), beta powers, global step, skipped NULL grads,
 * a tensor learning rate. */
static void test_slots_and_step(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    MfOptimizer *o = mf_optimizer_new(&c);
    MfVariable *w = make_var(MF_FLOAT32, "w"), *u = make_var(MF_FLOAT32, "u");
    MfTensor *zero = mf_tensor_scalar(MF_INT64, 0);
    MfVariable *gs = mf_variable_new(zero, "global_step", false);
    mf_tensor_release(zero);
    MfVariable *slot;
    assert_int_equal(mf_optimizer_get_slot(o, w, "m", &slot), MF_OK);
    assert_null(slot);
    assert_null(mf_optimizer_nonslot(o, "beta1_power"));
    const int64_t shape[1] = {N};
    MfGradVar pairs[2] = {{make_tensor(MF_FLOAT32, 1, shape, W0), w, NULL}, {NULL, u, NULL}};
    for (int t = 0; t < 3; t++)
        assert_int_equal(mf_optimizer_apply(o, 2, pairs, NULL, gs), MF_OK);
    assert_int_equal(mf_tensor_get_int(gs->value, 0), 3);
    assert_int_equal(mf_optimizer_nvars(o), 1);
    assert_ptr_equal(mf_optimizer_var(o, 0), w);
    assert_int_equal(mf_optimizer_get_slot(o, w, "v", &slot), MF_OK);
    assert_string_equal(slot->name, "w/Adam_1");
    assert_int_equal(mf_optimizer_get_slot(o, u, "m", &slot), MF_OK);
    assert_null(slot);                                       /* NULL gradient: skipped */
    assert_values(u->value, W0, N, 1e-7);
    double b1p = 0.9 * 0.9 * 0.9 * 0.9;
    assert_values(mf_optimizer_nonslot(o, "beta1_power")->value, &b1p, 1, 1e-7);
    /* apply_gradients' nonfinite option by name */
    MfApplyNonfinite policy = MF_APPLY_NONFINITE_APPLY;
    assert_int_equal(mf_apply_nonfinite_named("minimize", "skip", "skip", &policy), MF_OK);
    assert_int_equal(policy, MF_APPLY_NONFINITE_SKIP);
    assert_int_equal(mf_apply_nonfinite_named("minimize", NULL, "true", &policy), MF_EARG);
    assert_error_contains("minimize: nonfinite must be \"error\", \"skip\" or \"apply\", got true");
    /* opt:variables(): w's slots (u got none), then the beta powers */
    MfVariable *own[4];
    assert_int_equal(mf_optimizer_variables(o, NULL, 0), 4);
    assert_int_equal(mf_optimizer_variables(o, own, 4), 4);
    assert_string_equal(own[0]->name, "w/Adam");
    assert_string_equal(own[1]->name, "w/Adam_1");
    assert_ptr_equal(own[2], mf_optimizer_nonslot(o, "beta1_power"));
    assert_ptr_equal(own[3], mf_optimizer_nonslot(o, "beta2_power"));
    assert_int_equal(mf_optimizer_variables(o, own, 1), 4);   /* counts past 'cap' */
    assert_int_equal(mf_optimizer_get_slot(o, w, "rms", &slot), MF_EARG);
    assert_error_contains("get_slot: AdamOptimizer has slots \"m\" and \"v\", got \"rms\"");
    /* a learning rate given per apply (float64 on a float32 variable) */
    MfOptConfig sc = mf_opt_config_default(MF_OPT_SGD, 1);
    MfOptimizer *sgd = mf_optimizer_new(&sc);
    MfTensor *lr = mf_tensor_scalar(MF_FLOAT64, 0.5);
    MfGradVar p = {pairs[0].grad, u, NULL};
    assert_int_equal(mf_optimizer_apply(sgd, 1, &p, lr, NULL), MF_OK);
    double want[N];
    for (int i = 0; i < N; i++)
        want[i] = W0[i] - 0.5 * W0[i];
    assert_values(u->value, want, N, 1e-7);
    mf_tensor_release(lr);
    mf_tensor_release(pairs[0].grad);
    mf_optimizer_release(sgd);
    mf_optimizer_release(o);
    mf_variable_release(w);
    mf_variable_release(u);
    mf_variable_release(gs);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* ---- compute_gradients ------------------------------------------------------------- */

typedef struct LossCtx {
    MfVariable *a, *b;
} LossCtx;

/* loss = sum(a * a) + 0 * nothing: b is not read. */
static MfStatus loss_fn(void *ctx, MfTensor **loss)
{
    LossCtx *c = ctx;
    MfTensor *x = mf_variable_read(c->a), *sq = NULL;
    MfStatus st = mf_binary(MF_OP_MUL, x, x, &sq);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, sq, NULL, 0, false, loss);
    mf_tensor_release(sq);
    return st;
}

static MfStatus failing_loss(void *ctx, MfTensor **loss)
{
    (void)ctx;
    (void)loss;
    return mf_err_set(MF_EARG, "my loss failed");
}

static void test_compute_gradients(void **state)
{
    (void)state;
    LossCtx ctx = {make_var(MF_FLOAT64, "a"), make_var(MF_FLOAT64, "b")};
    MfGradVar *pairs;
    int n;
    MfTensor *loss;
    assert_int_equal(mf_train_compute_gradients(loss_fn, &ctx, 0, NULL, &loss, &pairs, &n), MF_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(pairs[0].var, ctx.a);
    double g[N], l = 0;
    for (int i = 0; i < N; i++) {
        g[i] = 2 * W0[i];
        l += W0[i] * W0[i];
    }
    assert_values(pairs[0].grad, g, N, 1e-12);
    assert_values(loss, &l, 1, 1e-12);
    mf_grad_vars_free(pairs, n);
    mf_tensor_release(loss);
    MfVariable *list[2] = {ctx.b, ctx.a};
    assert_int_equal(mf_train_compute_gradients(loss_fn, &ctx, 2, list, NULL, &pairs, &n), MF_OK);
    assert_int_equal(n, 2);
    assert_null(pairs[0].grad);                              /* kept, with no gradient */
    assert_non_null(pairs[1].grad);
    mf_grad_vars_free(pairs, n);
    assert_int_equal(mf_train_compute_gradients(failing_loss, &ctx, 0, NULL, &loss, &pairs, &n),
                     MF_EARG);
    assert_error_contains("my loss failed");
    assert_null(pairs);
    assert_int_equal(mf_tape_live_count(), 0);
    mf_variable_release(ctx.a);
    mf_variable_release(ctx.b);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* ---- description and names ------------------------------------------------------------ */

/* print(opt)'s text for 'c' ('lr_callable' as the face says). */
static void expect_description(const MfOptConfig *c, bool lr_callable, const char *want)
{
    MfOptimizer *o = mf_optimizer_new(c);
    assert_non_null(o);
    MfStrBuf b = {0};
    assert_int_equal(mf_optimizer_describe(o, lr_callable, &b), MF_OK);
    assert_string_equal(b.data, want);
    mf_strbuf_free(&b);
    mf_optimizer_release(o);
}

static void test_describe_and_names(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAM, 0.001);
    expect_description(&c, false, "AdamOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.999, "
                                  "epsilon=1e-08, epsilon_placement=tensorflow) name=\"Adam\", "
                                  "slots: m, v (for 0 variables)");
    c = mf_opt_config_default(MF_OPT_MOMENTUM, 0.5);
    c.momentum = 0.9;
    c.use_nesterov = true;
    c.name = "mom";
    expect_description(&c, true, "MomentumOptimizer(learning_rate=<function>, momentum=0.9, "
                                 "use_nesterov=true) name=\"mom\", slots: momentum (for 0 "
                                 "variables)");
    c = mf_opt_config_default(MF_OPT_SGD, 1);
    MfTensor *quarter = mf_tensor_scalar(MF_FLOAT32, 0.25);
    MfVariable *lr = mf_variable_new(quarter, "lr", false);   /* retains its value */
    mf_tensor_release(quarter);
    assert_non_null(lr);
    c.lr_var = lr;
    expect_description(&c, false, "GradientDescentOptimizer(learning_rate=<Variable 'lr'>) "
                                  "name=\"GradientDescent\", slots: none");
    mf_variable_release(lr);
    assert_string_equal(mf_opt_kind_class(MF_OPT_RMSPROP), "RMSPropOptimizer");
    assert_string_equal(mf_opt_kind_class((MfOptKind)99), "Optimizer");
    c = mf_opt_config_default(MF_OPT_ADAGRAD, 0.1);
    const char *bad[] = {"", "a:b", "a/b"};
    for (int i = 0; i < 3; i++) {
        c.name = bad[i];
        assert_null(mf_optimizer_new(&c));
        assert_error_contains("' (expected a non-empty name without ':' or '/')");
    }
    assert_int_equal(mf_variable_live_count(), 0);
}

/* The class table (train/opt_classes.c): names, defaults, the options each
 * constructor takes, the required arguments' messages, set_hyper's checks. */
/* A hyperparameter given as a tensor: a concrete scalar of a number dtype is
 * read; a bool, a vector or a graph tensor (no value yet) is refused, and the
 * message names the constructor and the hyperparameter. */
static void test_hyper_from_tensor(void **state)
{
    (void)state;
    double v = 0;
    MfTensor *half = mf_tensor_scalar(MF_FLOAT64, 0.5), *yes = mf_tensor_scalar(MF_BOOL, 1);
    assert_int_equal(mf_opt_hyper_from_tensor("AdamOptimizer", "beta1", half, &v), MF_OK);
    assert_true(v == 0.5);
    assert_int_equal(mf_opt_hyper_from_tensor("AdamOptimizer", "beta1", yes, &v), MF_EARG);
    assert_error_contains("AdamOptimizer: beta1 must be a scalar number, got a bool tensor");
    MfTensor *pair = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    assert_int_equal(mf_opt_hyper_from_tensor("MomentumOptimizer", "momentum", pair, &v), MF_EARG);
    assert_error_contains("momentum must be a scalar number, got a float32 tensor of rank 1");
    MfGraph *g = mf_graph_new();
    MfTensor *ph = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "b", &ph), MF_OK);
    assert_int_equal(mf_opt_hyper_from_tensor("AdamOptimizer", "beta2", ph, &v), MF_EARG);
    assert_error_contains("AdamOptimizer: beta2 is a graph tensor");
    assert_true(v == 0.5);   /* a refused value leaves the result alone */
    MfTensor *all[] = {half, yes, pair, ph};
    for (int i = 0; i < 4; i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

static void test_class_table(void **state)
{
    (void)state;
    const MfOptClass *adam = mf_opt_class(MF_OPT_ADAM);
    assert_string_equal(adam->class_name, "AdamOptimizer");
    assert_string_equal(adam->default_name, "Adam");
    assert_true(adam->default_lr == 0.001);
    assert_true(isnan(mf_opt_class(MF_OPT_SGD)->default_lr));
    assert_null(mf_opt_class((MfOptKind)MF_OPT_NKINDS));
    assert_string_equal(mf_opt_kind_class((MfOptKind)MF_OPT_NKINDS), "Optimizer");
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    assert_true(c.beta1 == 0.9 && c.beta2 == 0.999 && c.epsilon == 1e-8);
    c = mf_opt_config_default(MF_OPT_RMSPROP, 0.1);
    assert_true(c.decay == 0.9 && c.momentum == 0 && c.epsilon == 1e-10);
    assert_true(mf_opt_config_default(MF_OPT_ADAGRAD, 0.1).initial_accumulator_value == 0.1);
    const char *names[MF_OPT_MAX_OPTIONS + 1];
    assert_int_equal(mf_opt_option_names(MF_OPT_MOMENTUM, names), 1);
    assert_string_equal(names[0], "use_nesterov");
    assert_string_equal(names[1], "name");
    assert_null(names[2]);
    assert_int_equal(mf_opt_option_names(MF_OPT_ADAM, names), 0);
    assert_string_equal(names[2], "epsilon");
    assert_int_equal(mf_opt_option_names(MF_OPT_SGD, names), 0);
    assert_string_equal(names[0], "name");
    const MfOptHyper *h = mf_opt_find_hyper(MF_OPT_MOMENTUM, "use_nesterov");
    assert_true(h && h->is_bool && !h->per_apply);
    c = mf_opt_config_default(MF_OPT_MOMENTUM, 0.1);
    mf_opt_hyper_set(&c, h, 1);
    assert_true(c.use_nesterov && mf_opt_hyper_get(&c, h) == 1);
    assert_true(mf_opt_find_hyper(MF_OPT_MOMENTUM, "momentum")->positional);
    assert_null(mf_opt_find_hyper(MF_OPT_ADAM, "momentum"));
    assert_int_equal(mf_opt_missing(MF_OPT_SGD, "learning_rate"), MF_EARG);
    assert_error_contains("GradientDescentOptimizer: learning_rate is required (TensorFlow 1.x "
                          "gives it no default; e.g. GradientDescentOptimizer(0.01))");
    assert_int_equal(mf_opt_missing(MF_OPT_MOMENTUM, "momentum"), MF_EARG);
    assert_error_contains("MomentumOptimizer(learning_rate, momentum [, {use_nesterov}]): "
                          "momentum is required (TensorFlow 1.x gives it no default)");
    /* set_hyper: names of the class only, checked as the constructor checks */
    MfOptimizer *o = mf_optimizer_new(&(MfOptConfig){.kind = MF_OPT_ADAM, .lr = 0.1,
                                                      .beta1 = 0.9, .beta2 = 0.999});
    assert_non_null(o);
    assert_int_equal(mf_optimizer_set_hyper(o, "beta1", 0.5), MF_OK);
    assert_true(mf_optimizer_config(o)->beta1 == 0.5);
    assert_int_equal(mf_optimizer_set_hyper(o, "beta1", 1), MF_EARG);
    assert_error_contains("AdamOptimizer: beta1 must be in [0, 1), got 1");
    assert_true(mf_optimizer_config(o)->beta1 == 0.5);
    assert_int_equal(mf_optimizer_set_hyper(o, "momentum", 0.5), MF_EARG);
    assert_error_contains("AdamOptimizer: no hyperparameter 'momentum'");
    mf_optimizer_release(o);
}

/* ---- errors ------------------------------------------------------------------------ */

static void expect_bad_config(MfOptConfig c, const char *part)
{
    assert_null(mf_optimizer_new(&c));
    assert_error_contains(part);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_bad_config(mf_opt_config_default(MF_OPT_SGD, 0),
                      "GradientDescentOptimizer: learning_rate must be > 0, got 0");
    expect_bad_config(mf_opt_config_default(MF_OPT_SGD, DNAN), "learning_rate must be > 0");
    MfOptConfig c = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    c.beta2 = 1;
    expect_bad_config(c, "AdamOptimizer: beta2 must be in [0, 1), got 1");
    c = mf_opt_config_default(MF_OPT_MOMENTUM, 0.1);
    c.momentum = -0.5;
    expect_bad_config(c, "MomentumOptimizer: momentum must be in [0, inf], got -0.5");
    c = mf_opt_config_default(MF_OPT_ADAGRAD, 0.1);
    c.initial_accumulator_value = 0;
    expect_bad_config(c, "AdagradOptimizer: initial_accumulator_value must be > 0, got 0");
    c = mf_opt_config_default(MF_OPT_RMSPROP, 0.1);
    c.epsilon = -1;
    expect_bad_config(c, "RMSPropOptimizer: epsilon must be in [0, inf], got -1");
    const int64_t shape[1] = {2};
    c = mf_opt_config_default(MF_OPT_SGD, 0);
    c.lr_tensor = mf_tensor_zeros(MF_FLOAT32, 1, shape);
    expect_bad_config(c, "learning_rate must be a scalar number");
    mf_tensor_release(c.lr_tensor);
}

static void test_apply_errors(void **state)
{
    (void)state;
    MfOptConfig c = mf_opt_config_default(MF_OPT_MOMENTUM, 0.1);
    c.momentum = 0.9;
    MfOptimizer *o = mf_optimizer_new(&c);
    MfVariable *w = make_var(MF_FLOAT32, "w");
    const int64_t s2[1] = {2}, s3[1] = {N};
    MfTensor *bad = mf_tensor_zeros(MF_FLOAT32, 1, s2);
    MfTensor *good = make_tensor(MF_FLOAT32, 1, s3, W0);
    MfGradVar pairs[2] = {{good, w, NULL}, {bad, w, NULL}};
    assert_int_equal(mf_optimizer_apply(o, 2, pairs, NULL, NULL), MF_ESHAPE);
    assert_error_contains("apply_gradients: pair 2: gradient (2,) float32 does not fit variable "
                          "'w' (3,) float32");
    assert_values(w->value, W0, N, 1e-7);                    /* nothing changed */
    assert_int_equal(mf_optimizer_nvars(o), 0);              /* no slots made either */
    MfTensor *ival = mf_tensor_zeros(MF_INT32, 1, s3);
    MfVariable *iv = mf_variable_new(ival, "iv", true);
    MfGradVar ip = {ival, iv, NULL};
    assert_int_equal(mf_optimizer_apply(o, 1, &ip, NULL, NULL), MF_EDTYPE);
    assert_error_contains("variable 'iv' (pair 1) has dtype int32");
    assert_int_equal(mf_optimizer_apply(o, 1, pairs, NULL, w), MF_EARG);
    assert_error_contains("global_step must be a scalar int64 or int32 Variable");
    MfTensor *neg = mf_tensor_scalar(MF_FLOAT32, -1);
    assert_int_equal(mf_optimizer_apply(o, 1, pairs, neg, NULL), MF_EARG);
    assert_error_contains("learning_rate must be finite and >= 0, got -1");
    MfGradVar none = {good, NULL, NULL};
    assert_int_equal(mf_optimizer_apply(o, 1, &none, NULL, NULL), MF_EARG);
    assert_error_contains("pair 1 has no variable");
    mf_tensor_release(neg);
    mf_tensor_release(bad);
    mf_tensor_release(good);
    mf_tensor_release(ival);
    mf_variable_release(iv);
    mf_variable_release(w);
    mf_optimizer_release(o);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* ---- clipping edge cases (issue 5: zero norms, infinite clip_norm, non-finite norm) -- */

static void test_clip_edge_cases(void **state)
{
    (void)state;
    const int64_t s2[1] = {2};
    MfTensor *a = make_tensor(MF_FLOAT32, 1, s2, (double[]){3, 4});
    MfTensor *z = make_tensor(MF_FLOAT32, 1, s2, (double[]){0, 0});
    MfTensor *bad = make_tensor(MF_FLOAT32, 1, s2, (double[]){DINF, 1});
    MfTensor *inf = mf_tensor_scalar(MF_FLOAT32, DINF), *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfTensor *out = NULL, *norm = NULL;
    assert_int_equal(mf_clip_by_norm(a, inf, NULL, 0, &out), MF_OK);
    assert_values(out, (double[]){3, 4}, 2, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_clip_by_norm(z, one, NULL, 0, &out), MF_OK);
    assert_values(out, (double[]){0, 0}, 2, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_clip_by_global_norm_ex(1, &a, inf, NULL, MF_NONFINITE_ERROR, &out, &norm),
                     MF_OK);
    assert_values(out, (double[]){3, 4}, 2, 0);
    assert_values(norm, (double[]){5}, 1, 1e-6);
    mf_tensor_release(out);
    mf_tensor_release(norm);
    assert_int_equal(mf_clip_by_global_norm_ex(1, &bad, one, NULL, MF_NONFINITE_NAN, &out, NULL),
                     MF_OK);
    assert_values(out, (double[]){DNAN, DNAN}, 2, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_clip_by_global_norm_ex(1, &bad, one, NULL, MF_NONFINITE_ERROR, &out, &norm),
                     MF_EARG);
    assert_error_contains("clip_by_global_norm: the global norm is inf");
    assert_null(out);
    assert_null(norm);
    MfTensor *ts[3] = {a, z, bad};
    for (int i = 0; i < 3; i++)
        mf_tensor_release(ts[i]);
    mf_tensor_release(inf);
    mf_tensor_release(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_sgd),          TEST(test_momentum),          TEST(test_adagrad),
        TEST(test_rmsprop),      TEST(test_adam), TEST(test_lion), TEST(test_slots_and_step),
        TEST(test_compute_gradients), TEST(test_config_errors), TEST(test_class_table),
        TEST(test_hyper_from_tensor), TEST(test_apply_errors),
        TEST(test_clip_edge_cases), TEST(test_describe_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
