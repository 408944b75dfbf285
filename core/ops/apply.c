/* apply.c — TensorFlow's training ops: ApplyGradientDescent, ApplyMomentum,
 * ApplyAdagrad, ApplyRMSProp, ApplyAdam, and ApplyLion. Each updates a variable's buffer
 * and its slot buffers in one pass, in place, with TensorFlow 1.x's formulas
 * (training_ops.cc), computed in the variable's dtype (float32 or float64):
 *   GradientDescent  var -= grad * alpha
 *   Momentum         accum = accum * momentum + grad
 *                    var -= accum * lr   (nesterov: grad * lr + accum * momentum * lr)
 *   Adagrad          accum += grad^2;  var -= grad * lr / sqrt(accum)
 *   RMSProp          ms += (grad^2 - ms) * (1 - rho)
 *                    mom = mom * momentum + grad * lr / sqrt(ms + epsilon);  var -= mom
 *   Adam             alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
 *                    m += (grad - m) * (1 - beta1);  v += (grad^2 - v) * (1 - beta2)
 *                    var -= m * alpha / (sqrt(v) + epsilon)
 *                    (nesterov: (grad * (1 - beta1) + m * beta1) instead of m)
 *                    optional 11th input weight_decay (AdamW's decoupled decay,
 *                    not TensorFlow's): then var = (var - step) - weight_decay *
 *                    var_before, rounded as Adam's op then var -= weight_decay * var
 *                    with the value from before the step (one pass, not three)
 *                    attrs.grad_scaled: a last input grad_scale, and the update uses
 *                    grad * grad_scale, each product rounded as Mul(grad, grad_scale)
 *                    rounds it (the optimizers read a clipped gradient g * coef
 *                    so, train/optimizers.c: the product is never written)
 *   Lion             c = beta1 * m + (1 - beta1) * grad    (Chen et al. 2023,
 *                    var -= lr * (sign(c) + wd * var)       Algorithm 2; not a
 *                    m = beta2 * m + (1 - beta2) * grad     TensorFlow 1.x op)
 * Inputs follow TensorFlow's order; hyperparameters are scalar tensors of
 * the variable's dtype. 'attrs.use_nesterov' asks for Nesterov
 * (ApplyMomentum, ApplyAdam). 'attrs.nonfinite' (MfApplyNonfinite) says what a gradient
 * holding NaN or Inf does: written as any other (the default, TensorFlow's),
 * an error before anything is written, or a skip (nothing written); under
 * the last two a scalar input (the rate) holding NaN or Inf does the same.
 * 'attrs.gated' says the step's finite gate covers the gradient (its rate
 * is made NaN or Inf when any gradient of the step is not finite,
 * train/graph_train.c): the gradient is then scanned only when a scalar is
 * not finite, to name the fault as an ungated op would.
 *
 * In place, yet tensors stay immutable: an Apply op writes only into
 * buffers that nobody else can see. Each updated input (var and its slots)
 * must hold the only reference to its header and to its storage (the one
 * of the Variable that owns it), be contiguous and distinct from the
 * others; anything else is refused, so a tensor a user read earlier never
 * changes. The optimizer copies a shared buffer before the op runs
 * (copy-on-write, train/). Output 0 is 'var' itself, retained (TensorFlow's
 * "out"); holding it makes the buffer shared, so the next step copies.
 * The ops have no gradient (MF_OP_NONDIFF). */
#include <float.h>
#include <math.h>

#include "common.h"

/* The inputs of one Apply op: 'nstate' buffers updated in place (var
 * first), the gradient at 'grad', scalars everywhere else. 'flops' per
 * element feeds the profiler. */
typedef struct ApplyInputs {
    int nstate;
    int grad;
    double flops;
    const char *names[11];
} ApplyInputs;

static const ApplyInputs sig_gd = {1, 2, 2, {"var", "alpha", "delta"}};
static const ApplyInputs sig_momentum = {2, 3, 4, {"var", "accum", "lr", "grad", "momentum"}};
static const ApplyInputs sig_adagrad = {2, 3, 6, {"var", "accum", "lr", "grad"}};
static const ApplyInputs sig_rmsprop = {3, 7, 10, {"var", "ms", "mom", "lr", "rho", "momentum",
                                                   "epsilon", "grad"}};
static const ApplyInputs sig_adam = {3, 9, 13, {"var", "m", "v", "beta1_power", "beta2_power",
                                                "lr", "beta1", "beta2", "epsilon", "grad",
                                                "weight_decay"}};
static const ApplyInputs sig_lion = {2, 6, 10, {"var", "m", "lr", "beta1", "beta2",
                                                "weight_decay", "grad"}};

/* The index of ApplyAdam's gradient scale input (the last, with
 * attrs.grad_scaled), or -1. */
static int scale_input(const MfOpCall *c, const ApplyInputs *s)
{
    return s == &sig_adam && c->attrs->grad_scaled ? c->ninputs - 1 : -1;
}

static const char *input_name(const MfOpCall *c, const ApplyInputs *s, int i)
{
    return i == scale_input(c, s) ? "grad_scale" : s->names[i];
}

/* ---- shape and dtype checks (symbolic inputs too) --------------------------------- */

/* Same shape, an unknown dim (-1) matching anything. */
static bool fits(const MfTensor *a, const MfTensor *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i] && a->shape[i] >= 0 && b->shape[i] >= 0)
            return false;
    return true;
}

static MfStatus check_input(const MfOpCall *c, const ApplyInputs *s, int i)
{
    const MfTensor *var = c->inputs[0], *x = c->inputs[i];
    char vs[96], xs[96];
    mf_shape_str(var->rank, var->shape, vs, sizeof vs);
    mf_shape_str(x->rank, x->shape, xs, sizeof xs);
    const char *name = input_name(c, s, i);
    if (x->dtype != var->dtype)
        return mf_err_set(MF_EDTYPE, "%s: %s has dtype %s, expected the variable's %s",
                          op_api(c), name, mf_dtype_name(x->dtype), mf_dtype_name(var->dtype));
    if (i < s->nstate || i == s->grad) {
        if (!fits(var, x))
            return mf_err_set(MF_ESHAPE, "%s: %s has shape %s, expected the variable's shape %s",
                              op_api(c), name, xs, vs);
    } else if (x->rank != 0) {
        return mf_err_set(MF_ESHAPE, "%s: %s must be a scalar, got shape %s", op_api(c), name,
                          xs);
    }
    return MF_OK;
}

/* The first scalar input (a rate, a beta, ...) that is NaN or Inf, or -1.
 * Under "skip" and "error" such a step is refused as a non-finite gradient
 * is: the optimizers' finite gate (train/graph_train.c) multiplies the rate
 * by 1/ok, one scalar product that makes every Apply node of a step with a
 * non-finite gradient skip (or the first one fail), where multiplying each
 * gradient by it was a pass over every gradient. */
static int nonfinite_scalar(const MfOpCall *c, const ApplyInputs *s)
{
    for (int i = s->nstate; i < c->ninputs; i++)
        if (i != s->grad && i != scale_input(c, s) && !mf_tensor_all_finite(c->inputs[i]))
            return i;
    return -1;
}

/* Whether every product x[i] * scale, rounded in the dtype, is finite
 * (compare and OR, no early exit: the loop vectorizes). */
#define SCALED_FINITE(T, SUF, ABS, MAXV)                                                    \
    static bool scaled_finite_##SUF(const T *x, int64_t n, T scale)                        \
    {                                                                                       \
        int bad = 0;                                                                        \
        for (int64_t i = 0; i < n; i++)                                                     \
            bad |= !(ABS(x[i] * scale) <= MAXV);                                            \
        return !bad;                                                                        \
    }

SCALED_FINITE(float, f32, fabsf, FLT_MAX)
SCALED_FINITE(double, f64, fabs, DBL_MAX)

/* Whether the gradient the update uses (grad, or grad * grad_scale) is
 * finite: the scaled one is checked as the product Mul would have written. */
static bool grad_finite(const MfOpCall *c, const ApplyInputs *s)
{
    int k = scale_input(c, s);
    const MfTensor *g = c->inputs[s->grad];
    if (k < 0 || !g->storage || !c->inputs[k]->storage)
        return mf_tensor_all_finite(g);
    MfTensor *x = mf_tensor_contiguous((MfTensor *)g);
    if (!x)   /* out of memory: element by element */
        return mf_tensor_all_finite(g) && mf_tensor_all_finite(c->inputs[k]);
    int64_t n = mf_tensor_numel(x);
    const void *scale = mf_tensor_data(c->inputs[k]);
    bool ok = x->dtype == MF_FLOAT32
                  ? scaled_finite_f32(mf_tensor_data(x), n, *(const float *)scale)
                  : scaled_finite_f64(mf_tensor_data(x), n, *(const double *)scale);
    mf_tensor_release(x);
    return ok;
}

/* Whether the gradient the update uses holds NaN or Inf, given the first
 * non-finite scalar input 'bad' (-1: none): under a finite gate every
 * scalar finite means every gradient of the step is, without a scan. */
static bool grad_nonfinite(const MfOpCall *c, const ApplyInputs *s, int bad)
{
    return !(c->attrs->gated && bad < 0) && !grad_finite(c, s);
}

/* ApplyAdam's inputs: 10, weight_decay (11), and grad_scale last with
 * attrs.grad_scaled; no other op takes a gradient scale. */
static MfStatus check_optional(const MfOpCall *c, const ApplyInputs *s)
{
    bool scaled = c->attrs->grad_scaled;
    if (scaled && s != &sig_adam)
        return mf_err_set(MF_EARG, "%s: grad_scaled is ApplyAdam's attribute, not this op's",
                          op_api(c));
    if (!scaled && c->ninputs > 11)
        return mf_err_set(MF_EARG, "%s: expected 10 input(s), got %d (weight_decay may be an "
                          "11th; a grad_scale input needs attrs.grad_scaled)", op_api(c),
                          c->ninputs);
    if (scaled && c->ninputs < 11)
        return mf_err_set(MF_EARG, "%s: expected 10 input(s), weight_decay if any, then "
                          "grad_scale (attrs.grad_scaled), got %d", op_api(c), c->ninputs);
    return MF_OK;
}

static MfStatus apply_infer(MfOpCall *c, const ApplyInputs *s)
{
    const MfTensor *var = c->inputs[0];
    MfStatus st = mf_check_dtype(c, var, MF_FLOATS, "a float32 or float64 variable");
    if (st == MF_OK && (s == &sig_adam || c->attrs->grad_scaled))
        st = check_optional(c, s);
    for (int i = 1; i < c->ninputs && st == MF_OK; i++)
        st = check_input(c, s, i);
    /* here, not in the kernel: a session stages a write after its infer,
     * so a refused gradient fails the run before any variable changes */
    bool check = st == MF_OK && c->attrs->nonfinite == MF_APPLY_NONFINITE_ERROR;
    int bad = check ? nonfinite_scalar(c, s) : -1;
    if (check && grad_nonfinite(c, s, bad))
        st = mf_err_set(MF_EARG, "%s: the gradient holds NaN or Inf and nonfinite = \"error\" "
                        "(nothing was written)", op_api(c));
    else if (check && bad >= 0)
        st = mf_err_set(MF_EARG, "%s: %s is NaN or Inf: the gradient holds NaN or Inf "
                        "(another variable's of the step), or the value given is not finite; "
                        "nonfinite = \"error\" (nothing was written)", op_api(c),
                        input_name(c, s, bad));
    if (st == MF_OK)
        mf_spec_like(c, var, var->dtype);
    return st;
}

/* The updated inputs are contiguous, distinct and referenced by nobody
 * but their owner: the condition under which writing in place cannot
 * change a tensor someone else holds. */
static MfStatus check_exclusive(const MfOpCall *c, const ApplyInputs *s)
{
    if (mf_tensor_numel(c->inputs[0]) == 0)
        return MF_OK; /* nothing is written (an empty tensor may share a buffer) */
    for (int i = 0; i < s->nstate; i++) {
        const MfTensor *x = c->inputs[i];
        bool alone = x->refcount == 1 && x->storage && x->storage->refcount == 1 &&
                     mf_tensor_is_contiguous(x);
        for (int j = 0; j < i && alone; j++)
            alone = c->inputs[j] != x;
        if (!alone)
            return mf_err_set(MF_EARG, "%s: %s must be a contiguous buffer that nothing else "
                              "references (an optimizer copies a shared variable before "
                              "updating it in place)", op_api(c), s->names[i]);
    }
    return MF_OK;
}

static MfCost apply_cost(const MfOpCall *c, const ApplyInputs *s)
{
    const MfTensor *var = c->inputs[0];
    double n = (double)mf_tensor_numel(var), es = (double)mf_dtype_size(var->dtype);
    /* each state buffer is read and written, the gradient read */
    MfCost cost = {s->flops * n, (2.0 * s->nstate + 1) * n * es};
    return cost;
}

/* ---- kernels, one set per float type ----------------------------------------------- */

/* Scalar input 'i' as a T. */
#define SCALAR(T, i) (*(const T *)mf_tensor_data(c->inputs[i]))

/* Adam's update of every element with direction DIR (m, or Nesterov's), then
 * DECAY (AdamW's "- wd * w", w the value before the step; or nothing): the
 * step is subtracted first and the decay after, as two ops would round.
 * gi is the gradient times gs (grad_scale, or 1: exact, the same bits). */
#define ADAM_LOOP(T, SQRT, DIR, DECAY)                                                      \
    for (int64_t i = 0; i < n; i++) {                                                       \
        const T w = var[i], gi = g[i] * gs;                                                 \
        m[i] += (gi - m[i]) * one_b1;                                                       \
        v[i] += (gi * gi - v[i]) * one_b2;                                                  \
        var[i] = (w - DIR * alpha / (SQRT(v[i]) + eps)) DECAY;                              \
    }

#define APPLY_KERNELS(T, SQRT, SUF)                                                         \
    static void gd_##SUF(const MfOpCall *c, int64_t n, const T *g)                         \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]);                                              \
        const T lr = SCALAR(T, 1);                                                          \
        for (int64_t i = 0; i < n; i++)                                                     \
            var[i] -= g[i] * lr;                                                            \
    }                                                                                       \
    static void momentum_##SUF(const MfOpCall *c, int64_t n, const T *g)                   \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]), *accum = mf_tensor_data(c->inputs[1]);      \
        const T lr = SCALAR(T, 2), mom = SCALAR(T, 4);                                      \
        if (c->attrs->use_nesterov) {                                                       \
            for (int64_t i = 0; i < n; i++) {                                               \
                accum[i] = accum[i] * mom + g[i];                                           \
                var[i] -= g[i] * lr + accum[i] * mom * lr;                                  \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < n; i++) {                                               \
                accum[i] = accum[i] * mom + g[i];                                           \
                var[i] -= accum[i] * lr;                                                    \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static void adagrad_##SUF(const MfOpCall *c, int64_t n, const T *g)                    \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]), *accum = mf_tensor_data(c->inputs[1]);      \
        const T lr = SCALAR(T, 2);                                                          \
        for (int64_t i = 0; i < n; i++) {                                                   \
            accum[i] += g[i] * g[i];                                                        \
            var[i] -= g[i] * lr * ((T)1 / SQRT(accum[i]));                                  \
        }                                                                                   \
    }                                                                                       \
    static void rmsprop_##SUF(const MfOpCall *c, int64_t n, const T *g)                    \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]), *ms = mf_tensor_data(c->inputs[1]);         \
        T *mom = mf_tensor_data(c->inputs[2]);                                              \
        const T lr = SCALAR(T, 3), rho1 = (T)1 - SCALAR(T, 4), m = SCALAR(T, 5);            \
        const T eps = SCALAR(T, 6);                                                         \
        for (int64_t i = 0; i < n; i++) {                                                   \
            ms[i] += (g[i] * g[i] - ms[i]) * rho1;                                          \
            mom[i] = mom[i] * m + g[i] * lr / SQRT(ms[i] + eps);                            \
            var[i] -= mom[i];                                                               \
        }                                                                                   \
    }                                                                                       \
    static void adam_##SUF(const MfOpCall *c, int64_t n, const T *g)                       \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]), *m = mf_tensor_data(c->inputs[1]);          \
        T *v = mf_tensor_data(c->inputs[2]);                                                \
        const T b1p = SCALAR(T, 3), b2p = SCALAR(T, 4), lr = SCALAR(T, 5);                  \
        const T b1 = SCALAR(T, 6), b2 = SCALAR(T, 7), eps = SCALAR(T, 8);                   \
        const T alpha = lr * SQRT((T)1 - b2p) / ((T)1 - b1p);                               \
        const T one_b1 = (T)1 - b1, one_b2 = (T)1 - b2;                                     \
        const bool nesterov = c->attrs->use_nesterov;                                       \
        /* a loop per case rather than a test per element: each vectorizes */              \
        const bool scaled = c->attrs->grad_scaled, decay = c->ninputs - scaled > 10;        \
        const T wd = decay ? SCALAR(T, 10) : (T)0;                                          \
        const T gs = scaled ? SCALAR(T, c->ninputs - 1) : (T)1;                             \
        if (decay && nesterov) {                                                            \
            ADAM_LOOP(T, SQRT, (gi * one_b1 + m[i] * b1), -wd * w);                         \
        } else if (decay) {                                                                 \
            ADAM_LOOP(T, SQRT, m[i], -wd * w);                                              \
        } else if (nesterov) {                                                              \
            ADAM_LOOP(T, SQRT, (gi * one_b1 + m[i] * b1), );                                \
        } else {                                                                            \
            ADAM_LOOP(T, SQRT, m[i], );                                                     \
        }                                                                                   \
    }

/* sign(c): -1, 0 or 1 (0 for a zero, as numpy's and the paper's) */
#define LION_KERNEL(T, SUF)                                                                 \
    static void lion_##SUF(const MfOpCall *c, int64_t n, const T *g)                       \
    {                                                                                       \
        T *var = mf_tensor_data(c->inputs[0]), *m = mf_tensor_data(c->inputs[1]);          \
        const T lr = SCALAR(T, 2), b1 = SCALAR(T, 3), b2 = SCALAR(T, 4);                    \
        const T wd = SCALAR(T, 5), one_b1 = (T)1 - b1, one_b2 = (T)1 - b2;                  \
        for (int64_t i = 0; i < n; i++) {                                                   \
            T u = b1 * m[i] + one_b1 * g[i];                                                \
            T sign = (T)((u > 0) - (u < 0));                                                \
            var[i] = var[i] - lr * (sign + wd * var[i]);                                    \
            m[i] = b2 * m[i] + one_b2 * g[i];                                               \
        }                                                                                   \
    }

APPLY_KERNELS(float, sqrtf, f32)
LION_KERNEL(float, f32)
LION_KERNEL(double, f64)
APPLY_KERNELS(double, sqrt, f64)

typedef void (*KernelF32)(const MfOpCall *c, int64_t n, const float *g);
typedef void (*KernelF64)(const MfOpCall *c, int64_t n, const double *g);

/* Checks that writing in place is safe, runs the kernel of var's dtype on a
 * contiguous gradient, and hands back 'var' as output 0. */
static MfStatus apply_forward(const MfOpCall *c, MfTensor **outs, const ApplyInputs *s,
                              KernelF32 k32, KernelF64 k64)
{
    int bad = c->attrs->nonfinite == MF_APPLY_NONFINITE_SKIP ? nonfinite_scalar(c, s) : -1;
    if (c->attrs->nonfinite == MF_APPLY_NONFINITE_SKIP && (bad >= 0 || grad_nonfinite(c, s, bad))) {
        mf_tensor_retain(c->inputs[0]);   /* the step is skipped: nothing written */
        outs[0] = c->inputs[0];
        return MF_OK;
    }
    MfStatus st = check_exclusive(c, s);
    if (st != MF_OK)
        return st;
    MfTensor *var = c->inputs[0];
    MfTensor *g = mf_tensor_contiguous(c->inputs[s->grad]);
    if (!g) {
        mf_err_prefix("%s", op_api(c));
        return MF_ENOMEM;
    }
    int64_t n = mf_tensor_numel(var);
    if (var->dtype == MF_FLOAT32)
        k32(c, n, mf_tensor_data(g));
    else
        k64(c, n, mf_tensor_data(g));
    mf_tensor_release(g);
    mf_tensor_retain(var);
    outs[0] = var;
    return MF_OK;
}

/* ---- the descriptors ----------------------------------------------------------------- */

#define APPLY_OP(sym, tfname, apiname, nin, nopt, nstate, sig, kern)                       \
    static MfStatus kern##_infer(MfOpCall *c)                                               \
    {                                                                                       \
        return apply_infer(c, &sig);                                                        \
    }                                                                                       \
    static MfStatus kern##_forward(const MfOpCall *c, MfTensor **outs)                     \
    {                                                                                       \
        return apply_forward(c, outs, &sig, kern##_f32, kern##_f64);                        \
    }                                                                                       \
    static MfCost kern##_cost(const MfOpCall *c)                                            \
    {                                                                                       \
        return apply_cost(c, &sig);                                                         \
    }                                                                                       \
    const MfOpDesc sym = {                                                                  \
        .name = tfname, .api = apiname, .arity = nin,                                       \
        .flags = MF_OP_NONDIFF | MF_OP_VIEW, .infer = kern##_infer,                         \
        .forward = kern##_forward, .backward = NULL, .cost = kern##_cost,                   \
        .inplace = (nstate), .optional_inputs = (nopt),                                     \
    }

APPLY_OP(mf_desc_apply_gradient_descent, "ApplyGradientDescent", "apply_gradient_descent", 3, 0,
         1, sig_gd, gd);
APPLY_OP(mf_desc_apply_momentum, "ApplyMomentum", "apply_momentum", 5, 0, 2, sig_momentum,
         momentum);
APPLY_OP(mf_desc_apply_adagrad, "ApplyAdagrad", "apply_adagrad", 4, 0, 2, sig_adagrad, adagrad);
APPLY_OP(mf_desc_apply_rmsprop, "ApplyRMSProp", "apply_rms_prop", 8, 0, 3, sig_rmsprop, rmsprop);
/* optional: weight_decay (AdamW's), grad_scale (attrs.grad_scaled); see the top */
APPLY_OP(mf_desc_apply_adam, "ApplyAdam", "apply_adam", 10, 2, 3, sig_adam, adam);
APPLY_OP(mf_desc_apply_lion, "ApplyLion", "apply_lion", 7, 0, 2, sig_lion, lion);
