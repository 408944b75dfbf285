/* graph_train.c — training in graph mode: compute_gradients adds the
 * backward graph (mf_graph_gradients) for the loss's graph variables;
 * apply_gradients adds, as TensorFlow 1.x does, slot variables ("w/Adam",
 * "w/Adam_1"; the descriptor's non-slot state, Adam's "beta1_power" and
 * "beta2_power"), the learning rate cast once per dtype, one fused Apply*
 * node per variable under "<opt>/update_<var>/", the powers' assigns after
 * the updates, a group named after the optimizer and, when a
 * global step is given, its AssignAdd after the group: the train op.
 *
 * A graph Variable is handled through an MfVariable "handle" whose value is
 * the VARIABLE node's symbolic output (what repl/ hands out); the values
 * themselves live in each Session. The Apply nodes update the session's
 * buffers in place (graph/exec.c copies a buffer first when something
 * else still holds it), with the same kernels as eager mode, so both modes
 * follow the same trajectory. Like eager apply_gradients, a run of the
 * train op is all-or-nothing: the executor stages every write of the run
 * and commits them only after its last node, so an error (out of memory,
 * Ctrl-C) leaves every variable, slot and the step as they were. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "graph/gradients.h"
#include "optimizer_impl.h"

/* 'st', with the message prefixed by "fname: " unless a step below already
 * began it so: errors name the API function once, however deep they arose. */
static MfStatus prefixed(MfStatus st, const char *fname)
{
    if (st != MF_OK && strncmp(mf_err_msg(), fname, strlen(fname)) != 0)
        mf_err_prefix("%s", fname);
    return st;
}

/* The graph of a Variable handle, or NULL for an eager Variable. */
static MfGraph *graph_of(const MfVariable *v)
{
    return mf_opt_graph_node(v) ? mf_tensor_graph(v->value) : NULL;
}

MfVariable *mf_train_graph_handle(MfNode *node)
{
    MfTensor *sym = mf_graph_output(node, 0);
    MfVariable *v = sym ? mf_variable_new(sym, node->name, node->trainable) : NULL;
    mf_tensor_release(sym);
    return v;
}

/* ---- compute_gradients ----------------------------------------------------------- */

/* Handles of every trainable variable of 'g' (owned array and references). */
static MfStatus trainable_handles(MfGraph *g, MfVariable ***out, int *n)
{
    int count = mf_graph_variables(g, true, NULL, 0);
    MfNode **nodes = mf_alloc_zeroed((size_t)(count + 1) * sizeof *nodes);
    MfVariable **vs = mf_alloc_zeroed((size_t)(count + 1) * sizeof *vs);
    MfStatus st = nodes && vs ? MF_OK : mf_err_nomem("compute_gradients", 0);
    if (st == MF_OK)
        mf_graph_variables(g, true, nodes, count);
    for (int i = 0; i < count && st == MF_OK; i++)
        if (!(vs[i] = mf_train_graph_handle(nodes[i])))
            st = MF_ENOMEM;
    if (nodes)
        mf_dealloc(nodes, (size_t)(count + 1) * sizeof *nodes);
    if (st != MF_OK) {
        for (int i = 0; vs && i < count; i++)
            mf_variable_release(vs[i]);
        if (vs)
            mf_dealloc(vs, (size_t)(count + 1) * sizeof *vs);
        return st;
    }
    *out = vs;
    *n = count;
    return MF_OK;
}

static MfStatus check_loss(const MfTensor *loss)
{
    if (!loss->node)
        return mf_err_set(MF_EARG, "compute_gradients: in graph mode the loss is a graph "
                          "tensor; got a concrete tensor (in eager mode pass a function)");
    if (!mf_dtype_is_float(loss->dtype))
        return mf_err_set(MF_EDTYPE, "compute_gradients: the loss must be float32 or float64, "
                          "got %s", mf_dtype_name(loss->dtype));
    return MF_OK;
}

/* Fills 'pairs' with the gradients of 'loss' for 'vars' (n). */
static MfStatus graph_pairs(MfGraph *g, MfTensor *loss, int n, MfVariable *const *vars,
                            MfGradVar *pairs)
{
    MfTensor **xs = mf_alloc_zeroed((size_t)(n + 1) * sizeof *xs);
    MfTensor **grads = mf_alloc_zeroed((size_t)(n + 1) * sizeof *grads);
    MfStatus st = xs && grads ? MF_OK : mf_err_nomem("compute_gradients", 0);
    for (int i = 0; i < n && st == MF_OK; i++) {
        if (graph_of(vars[i]) != g)
            st = mf_err_set(MF_EARG, "compute_gradients: var_list[%d] ('%s') is not a variable "
                            "of the loss's graph", i + 1, vars[i]->name);
        else
            xs[i] = vars[i]->value;
    }
    if (st == MF_OK)
        st = mf_graph_gradients(g, 1, &loss, n, xs, NULL, grads);
    for (int i = 0; i < n; i++) {
        pairs[i].grad = st == MF_OK ? grads[i] : NULL;
        if (st != MF_OK)
            mf_tensor_release(grads[i]);
        mf_variable_retain(vars[i]);
        pairs[i].var = vars[i];
    }
    if (xs)
        mf_dealloc(xs, (size_t)(n + 1) * sizeof *xs);
    if (grads)
        mf_dealloc(grads, (size_t)(n + 1) * sizeof *grads);
    return st;
}

MfStatus mf_train_compute_gradients_graph(MfTensor *loss, int nvars,
                                          MfVariable *const *var_list, MfGradVar **pairs,
                                          int *npairs)
{
    *pairs = NULL;
    *npairs = 0;
    MfStatus st = check_loss(loss);
    if (st != MF_OK)
        return st;
    MfGraph *g = mf_tensor_graph(loss);
    MfVariable **own = NULL;
    int n = nvars;
    if (!var_list && (st = trainable_handles(g, &own, &n)) != MF_OK)
        return st;
    MfGradVar *p = mf_grad_vars_new(n);
    st = p ? graph_pairs(g, loss, n, var_list ? var_list : own, p) : MF_ENOMEM;
    for (int i = 0; own && i < n; i++)
        mf_variable_release(own[i]);
    if (own)
        mf_dealloc(own, (size_t)(n + 1) * sizeof *own);
    if (st != MF_OK) {
        mf_grad_vars_free(p, p ? n : 0);
        return st;
    }
    *pairs = p;
    *npairs = n;
    return MF_OK;
}

/* ---- slots and Adam's powers as graph variables --------------------------------------- */

/* A graph variable 'name' holding 'init' (not trainable), as a handle. */
static MfStatus new_graph_var(MfGraph *g, MfTensor *init, const char *name, MfVariable **out)
{
    MfNode *node;
    MfStatus st = init ? mf_graph_variable(g, init, name, false, &node) : MF_ENOMEM;
    mf_tensor_release(init);
    if (st == MF_OK && !(*out = mf_train_graph_handle(node)))
        st = MF_ENOMEM;
    return st;
}

static MfStatus graph_slots(MfOptimizer *o, MfGraph *g, MfVariable *var)
{
    if (mf_opt_find_entry(o, var))
        return MF_OK;
    const MfTensorSpec *sp = &((MfNode *)var->value->node)->out[0];
    for (int i = 0; i < sp->rank; i++)
        if (sp->shape[i] < 0)
            return mf_err_set(MF_ESHAPE, "apply_gradients: variable '%s' needs a fully known "
                              "shape to get slots", var->name);
    MfVariable *slots[MF_OPT_MAX_SLOTS] = {NULL, NULL};
    const char *names[MF_OPT_MAX_SLOTS];
    int n = mf_opt_kind_slots(o->cfg.kind, names);
    MfStatus st = MF_OK;
    for (int k = 0; k < n && st == MF_OK; k++) {
        char name[300];
        snprintf(name, sizeof name, k ? "%s/%s_%d" : "%s/%s", var->name, o->cfg.name, k);
        st = new_graph_var(g, mf_opt_slot_value(&o->cfg, k, sp->dtype, sp->rank, sp->shape),
                           name, &slots[k]);
    }
    MfSlotEntry *e;
    if (st == MF_OK)
        st = mf_opt_add_entry(o, var, slots, &e);
    if (st != MF_OK)
        for (int k = 0; k < n; k++)
            mf_variable_release(slots[k]);
    return st;
}

static MfStatus graph_powers(MfOptimizer *o, MfGraph *g, MfDType dt)
{
    const MfOptClass *d = mf_opt_desc(o);
    if (d->npowers == 0)
        return MF_OK;
    MfStatus st = mf_opt_powers_context(o, g);   /* TensorFlow keys the powers by graph */
    if (st != MF_OK || o->power[0])
        return st;
    for (int i = 0; i < d->npowers && st == MF_OK; i++) {
        double init = mf_opt_hyper_get(&o->cfg, &d->hypers[d->powers[i].hyper]);
        st = new_graph_var(g, mf_tensor_scalar(dt, init), d->powers[i].name, &o->power[i]);
    }
    return st;
}

/* ---- apply_gradients ---------------------------------------------------------------- */

/* Pair 'i' (a gradient given) can be applied: a float variable, a gradient
 * of graph 'g' or concrete, with the variable's dtype and rank and dims that
 * agree where both are known. For graph and traced (eager) variables. */
static MfStatus check_grad_fits(MfGraph *g, int i, const MfGradVar *p)
{
    const MfTensor *x = p->var->value, *gr = p->grad;
    if (!mf_dtype_is_float(x->dtype))
        return mf_err_set(MF_EDTYPE, "apply_gradients: variable '%s' (pair %d) has dtype %s; "
                          "optimizers update float32 or float64 variables", p->var->name, i + 1,
                          mf_dtype_name(x->dtype));
    if (gr->node && mf_tensor_graph(gr) != g)
        return mf_err_set(MF_EARG, "apply_gradients: pair %d: the gradient is a tensor of "
                          "another graph", i + 1);
    bool fits = gr->dtype == x->dtype && gr->rank == x->rank;
    for (int d = 0; fits && d < x->rank; d++)
        fits = gr->shape[d] == x->shape[d] || gr->shape[d] < 0 || x->shape[d] < 0;
    if (!fits) {
        char gs[96], vs[96];
        return mf_err_set(MF_ESHAPE, "apply_gradients: pair %d: gradient %s %s does not fit "
                          "variable '%s' %s %s", i + 1, mf_shape_str(gr->rank, gr->shape, gs, 96),
                          mf_dtype_name(gr->dtype), p->var->name,
                          mf_shape_str(x->rank, x->shape, vs, 96), mf_dtype_name(x->dtype));
    }
    return MF_OK;
}

/* Pair 'i' (a gradient given) holds a graph variable of 'g' that fits. */
static MfStatus check_graph_pair(MfGraph *g, int i, const MfGradVar *p)
{
    if (!p->var || graph_of(p->var) != g)
        return mf_err_set(MF_EARG, "apply_gradients: pair %d: expected a variable of the "
                          "graph being trained, got %s", i + 1,
                          p->var ? "an eager Variable" : "nothing");
    return check_grad_fits(g, i, p);
}


/* The graph of the pairs (the first variable's), checked for all. */
static MfStatus check_graph_pairs(MfOptimizer *o, int n, const MfGradVar *pairs, MfGraph **g)
{
    *g = NULL;
    for (int i = 0; i < n && !*g; i++)
        *g = pairs[i].grad ? graph_of(pairs[i].var) : NULL;
    if (!*g)
        return mf_train_err_no_gradients("apply_gradients", n, pairs);
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = check_graph_pair(*g, i, &pairs[i]);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = graph_slots(o, *g, pairs[i].var);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = graph_powers(o, *g, pairs[i].var->value->dtype);
    return st;
}

/* The learning rate as a tensor (owned; symbolic or concrete). */
static MfStatus graph_lr(const MfOptimizer *o, MfTensor *override, MfTensor **out)
{
    MfTensor *t = override ? override : o->cfg.lr_var ? o->cfg.lr_var->value : o->cfg.lr_tensor;
    if (!t) {
        *out = mf_tensor_scalar(MF_FLOAT64, o->cfg.lr);
        return *out ? MF_OK : MF_ENOMEM;
    }
    if (t->rank != 0 || !mf_dtype_is_float(t->dtype))
        return mf_err_set(MF_EARG, "apply_gradients: learning_rate must be a float scalar, got "
                          "a %s tensor of rank %d", mf_dtype_name(t->dtype), t->rank);
    mf_tensor_retain(t);
    *out = t;
    return MF_OK;
}

/* A growable list of nodes the train op waits for. */
typedef struct Deps {
    MfNode **a;
    int n, cap;
} Deps;

static MfStatus deps_push(Deps *d, MfTensor *t)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 8;
        MfNode **p = mf_alloc((size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("apply_gradients", (unsigned long long)cap * sizeof *p);
        if (d->n)
            memcpy(p, d->a, (size_t)d->n * sizeof *p);
        if (d->cap)
            mf_dealloc(d->a, (size_t)d->cap * sizeof *p);
        d->a = p;
        d->cap = cap;
    }
    d->a[d->n++] = t->node;
    return MF_OK;
}

static void deps_free(Deps *d)
{
    if (d->cap)
        mf_dealloc(d->a, (size_t)d->cap * sizeof *d->a);
}

/* The step's finite check in a graph (apply_gradients' {nonfinite}), run
 * with every run of the train op. 'ok' is a float64 scalar, 1 when every
 * gradient of the step is finite, else 0; the rate of every update is
 * multiplied by 'scale' = 1 / ok (1, or +Inf: then every Apply node's rate
 * is not finite, so one bad gradient makes every Apply node skip, or the
 * first one fail, before any variable is written: core/ops/apply.c; a
 * scalar product per dtype, where multiplying each gradient by it was a
 * pass over every gradient); Adam's beta powers and the global step
 * advance by 'ok'. No gate (NULL) for APPLY, and for
 * ERROR in a session, whose writes are staged: each Apply node checks its
 * own gradient, so the message names the variable at fault. */
typedef struct Gate {
    MfApplyNonfinite policy;
    MfTensor *ok, *scale;   /* owned; NULL: no gate */
} Gate;

static void gate_free(Gate *gt)
{
    mf_tensor_release(gt->ok);
    mf_tensor_release(gt->scale);
}

/* 0 when every element of 'x' is finite, else NaN: a float64 scalar
 * (owned), the sum of x * 0. One pass over 'x' (a Mul into a Sum is one
 * fused node when the graph runs), where IsFinite, LogicalNot, a float64
 * Cast and a Sum made four, one of them writing 8 bytes per element. The
 * sum cannot overflow: every term is 0 or NaN. */
static MfStatus nonfinite_marker(MfTensor *x, MfTensor **out)
{
    MfTensor *zero = mf_tensor_scalar(x->dtype, 0), *t[2] = {NULL, NULL};
    MfAttrs a = mf_attrs_default();
    MfStatus st = zero ? mf_binary(MF_OP_MUL, x, zero, &t[0]) : MF_ENOMEM;
    a.all_axes = true;
    if (st == MF_OK)
        st = mf_op1(MF_OP_SUM, 1, &t[0], &a, &t[1]);
    a = mf_attrs_default();
    a.dtype = MF_FLOAT64;
    if (st == MF_OK)
        st = mf_op1(MF_OP_CAST, 1, &t[1], &a, out);
    mf_tensor_release(zero);
    mf_tensor_release(t[0]);
    mf_tensor_release(t[1]);
    return st;
}

static MfStatus gate_build(int n, const MfGradVar *pairs, Gate *gt)
{
    MfTensor *bad = mf_tensor_scalar(MF_FLOAT64, 0), *zero = mf_tensor_scalar(MF_FLOAT64, 0);
    MfTensor *one = mf_tensor_scalar(MF_FLOAT64, 1), *eq = NULL;
    MfStatus st = bad && zero && one ? MF_OK : MF_ENOMEM;
    for (int i = 0; i < n && st == MF_OK; i++) {
        MfTensor *c = NULL, *sum = NULL;
        if (pairs[i].grad && (st = nonfinite_marker(pairs[i].grad, &c)) == MF_OK)
            st = mf_binary(MF_OP_ADD, bad, c, &sum);
        if (sum) {
            mf_tensor_release(bad);
            bad = sum;
        }
        mf_tensor_release(c);
    }
    if (st == MF_OK)
        st = mf_binary(MF_OP_EQUAL, bad, zero, &eq);
    MfAttrs a = mf_attrs_default();
    a.dtype = MF_FLOAT64;
    if (st == MF_OK)
        st = mf_op1(MF_OP_CAST, 1, &eq, &a, &gt->ok);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, one, gt->ok, &gt->scale);
    mf_tensor_release(bad);
    mf_tensor_release(zero);
    mf_tensor_release(one);
    mf_tensor_release(eq);
    return st;
}

/* Each rate cast_rates made, times the gate's scale (when there is a gate). */
static MfStatus gate_rates(const Gate *gt, MfOptRates *lr)
{
    MfStatus st = MF_OK;
    for (int dt = 0; gt->scale && dt < MF_NDTYPES && st == MF_OK; dt++) {
        if (!lr->as[dt])
            continue;
        MfTensor *s = NULL, *gated = NULL;
        st = mf_opt_lr_as(gt->scale, (MfDType)dt, &s);
        if (st == MF_OK)
            st = mf_binary(MF_OP_MUL, lr->as[dt], s, &gated);
        if (st == MF_OK) {
            mf_tensor_release(lr->as[dt]);
            lr->as[dt] = gated;
        }
        mf_tensor_release(s);
    }
    return st;
}

/* A power's factor: its hyperparameter (beta), or 1 when the gate skips the step
 * (beta * ok + (1 - ok), exact for ok = 1 and 0). Owned, of dtype 'dt'. */
static MfStatus gated_beta(const Gate *gt, double beta, MfTensor *beta_t, MfDType dt,
                           MfTensor **out)
{
    MfTensor *b = NULL, *one = mf_tensor_scalar(dt, 1);
    MfTensor *ok = NULL, *t[2] = {NULL, NULL};
    MfStatus st = one ? MF_OK : MF_ENOMEM;
    if (st == MF_OK && beta_t)   /* a graph tensor: read when the graph runs */
        st = mf_opt_lr_as(beta_t, dt, &b);
    else if (st == MF_OK && !(b = mf_tensor_scalar(dt, beta)))
        st = MF_ENOMEM;
    if (st == MF_OK && !gt->ok) {
        mf_tensor_retain(b);
        *out = b;
    } else {
        if (st == MF_OK)
            st = mf_opt_lr_as(gt->ok, dt, &ok);
        if (st == MF_OK)
            st = mf_binary(MF_OP_MUL, b, ok, &t[0]);
        if (st == MF_OK)
            st = mf_binary(MF_OP_SUB, one, ok, &t[1]);
        if (st == MF_OK)
            st = mf_binary(MF_OP_ADD, t[0], t[1], out);
    }
    mf_tensor_release(b);
    mf_tensor_release(one);
    mf_tensor_release(ok);
    mf_tensor_release(t[0]);
    mf_tensor_release(t[1]);
    return st;
}

/* "update_<var>", the scope of a variable's update, with the characters of
 * 'bad' replaced by '_'. */
static void update_scope(char *buf, size_t size, const char *var, const char *bad)
{
    snprintf(buf, size, "update_%s", var);
    for (char *c = buf; *c; c++)
        if (strchr(bad, *c))
            *c = '_';
}

/* The value of variable 'v' in 'g' (borrowed): a graph variable's own, or
 * what an eager one captured by a trace (traced) reads now. */
static MfStatus read_var(MfGraph *g, MfVariable *v, bool traced, MfTensor **out)
{
    if (traced)
        return mf_graph_capture(g, v, out);
    *out = v->value;
    return MF_OK;
}

/* An assign to variable 'v' in 'g': a graph variable's ASSIGN node, or one
 * on an eager Variable captured by a trace (traced). '*out' owned. */
static MfStatus assign_var(MfGraph *g, MfVariable *v, bool traced, MfAssignKind kind,
                           MfTensor *value, MfTensor **out)
{
    if (traced)
        return mf_graph_assign_captured(g, v, kind, value, out);
    return mf_graph_assign(v->value->node, kind, value, out);
}

/* One Apply node for pair 'p' under "<opt>/update_<var>/". */
/* A gradient made as Mul(x, scale), 'scale' a scalar (a clipped gradient,
 * g * coef, as clip_by_global_norm and torch's clip_grad_norm_ make it),
 * updated by Adam: ApplyAdam reads x and scale and multiplies as it goes,
 * rounding as Mul does (core/ops/apply.c), so the product is never
 * written; the Mul node runs only when something else reads it (the
 * finite gate's sum, which it then joins as a fused member). Sets u->grad
 * and u->grad_scale to owned tensors kept in 'held' (both NULL otherwise). */
static MfStatus unscale_grad(MfUpdate *u, MfTensor *held[2])
{
    const MfNode *n = u->grad->node;
    held[0] = held[1] = NULL;
    if (!n || n->kind != MF_NODE_OP || n->op != MF_OP_MUL || n->ninputs != 2 ||
        mf_opt_desc(u->o)->apply != MF_OP_APPLY_ADAM)
        return MF_OK;
    MfNode *x = mf_graph_node(n->graph, n->inputs[0].node);
    MfNode *sc = mf_graph_node(n->graph, n->inputs[1].node);
    const MfTensorSpec *xs = &x->out[n->inputs[0].output], *ss = &sc->out[n->inputs[1].output];
    if (ss->rank != 0 || ss->dtype != u->grad->dtype || xs->dtype != u->grad->dtype)
        return MF_OK;
    held[0] = mf_graph_output(x, n->inputs[0].output);
    held[1] = mf_graph_output(sc, n->inputs[1].output);
    if (!held[0] || !held[1])
        return MF_ENOMEM;
    u->grad = held[0];
    u->grad_scale = held[1];
    return MF_OK;
}

/* The update of 'u', with a scaled gradient's factors when it has them. */
static MfStatus update_unscaled(MfUpdate u)
{
    MfTensor *held[2];
    MfStatus st = unscale_grad(&u, held);
    if (st == MF_OK)
        st = mf_opt_update(&u);
    mf_tensor_release(held[0]);
    mf_tensor_release(held[1]);
    return st;
}

static MfStatus update_one(MfOptimizer *o, MfGraph *g, const MfGradVar *p, MfOptRates *lr,
                           const Gate *gt, Deps *deps)
{
    char scope[300];
    update_scope(scope, sizeof scope, p->var->name, ":/");
    int mark;
    MfStatus st = mf_graph_push_scope(g, scope, &mark);
    if (st != MF_OK)
        return st;
    MfTensor *lr_v = NULL, *out = NULL;
    st = mf_opt_lr_for(lr, p->var->value->dtype, &lr_v);
    if (st == MF_OK) {
        MfSlotEntry *e = mf_opt_find_entry(o, p->var);
        st = update_unscaled((MfUpdate){o, p->var, p->grad, lr_v, e->slot, &out, gt->policy,
                                        p->decay, NULL, gt->ok != NULL});
    }
    if (st == MF_OK)
        st = deps_push(deps, out);
    mf_tensor_release(out);
    mf_graph_pop_scope(g, mark);
    return st;
}

/* Each power times its hyperparameter (Adam: beta1_power *= beta1, ...),
 * after the updates; the powers are graph variables, or eager ones
 * captured by a trace (traced). */
static MfStatus update_powers(MfOptimizer *o, MfGraph *g, bool traced, const Gate *gt,
                              Deps *deps)
{
    const MfOptClass *d = mf_opt_desc(o);
    int mark = -1;
    MfStatus st = d->npowers ? mf_graph_push_control(g, deps->n, deps->a, &mark) : MF_OK;
    for (int i = 0; i < d->npowers && st == MF_OK; i++) {
        int h = d->powers[i].hyper;
        double beta = mf_opt_hyper_get(&o->cfg, &d->hypers[h]);
        MfTensor *p = NULL, *b = NULL, *next = NULL, *out = NULL;
        st = read_var(g, o->power[i], traced, &p);
        if (st == MF_OK)
            st = gated_beta(gt, beta, mf_opt_hyper_tensor(o, h), p->dtype, &b);
        if (st == MF_OK)
            st = mf_binary(MF_OP_MUL, p, b, &next);
        if (st == MF_OK)
            st = assign_var(g, o->power[i], traced, MF_ASSIGN_SET, next, &out);
        if (st == MF_OK)
            st = deps_push(deps, out);
        mf_tensor_release(b);
        mf_tensor_release(next);
        mf_tensor_release(out);
    }
    if (mark >= 0)
        mf_graph_pop_control(g, mark);
    return st;
}

/* The group named after the optimizer and, with a global step (a graph
 * variable, or an eager one captured by a trace), its increment after the
 * group (then the train op). */
static MfStatus finish(MfOptimizer *o, MfGraph *g, Deps *deps, MfVariable *gs, bool traced,
                       const Gate *gt, MfNode **op)
{
    MfNode *group;
    MfStatus st = mf_graph_group(g, deps->n, deps->a, o->cfg.name, &group);
    if (st != MF_OK || !gs) {
        *op = st == MF_OK ? group : NULL;
        return st;
    }
    int mark;
    MfTensor *one = NULL, *out = NULL;   /* 1, or the gate's ok (0 skips) */
    if (gt->ok)
        st = mf_opt_lr_as(gt->ok, gs->value->dtype, &one);
    else if (!(one = mf_tensor_scalar(gs->value->dtype, 1)))
        st = MF_ENOMEM;
    if (st == MF_OK)
        st = mf_graph_push_control(g, 1, &group, &mark);
    if (st == MF_OK) {
        st = one ? assign_var(g, gs, traced, MF_ASSIGN_ADD, one, &out) : MF_ENOMEM;
        mf_graph_pop_control(g, mark);
    }
    *op = st == MF_OK ? out->node : NULL;
    mf_tensor_release(one);
    mf_tensor_release(out);
    return st;
}

static MfStatus check_graph_step(MfGraph *g, MfVariable *gs)
{
    if (!gs)
        return MF_OK;
    const MfTensor *x = gs->value;
    if (graph_of(gs) != g || x->rank != 0 || (x->dtype != MF_INT64 && x->dtype != MF_INT32))
        return mf_err_set(MF_EARG, "apply_gradients: global_step must be a scalar int64 or "
                          "int32 variable of the same graph (see mf.train.global_step())");
    return MF_OK;
}

/* The rate cast to each dtype of the pairs' variables, once, under the
 * optimizer's scope (before the updates' scopes). */
static MfStatus cast_rates(int n, const MfGradVar *pairs, MfOptRates *lr)
{
    MfStatus st = MF_OK;
    MfTensor *t;
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = mf_opt_lr_for(lr, pairs[i].var->value->dtype, &t);
    return st;
}

static MfStatus build_updates(MfOptimizer *o, MfGraph *g, int n, const MfGradVar *pairs,
                              MfOptRates *lr, Gate *gt, Deps *deps)
{
    int mark;
    MfStatus st = mf_graph_push_scope(g, o->cfg.name, &mark);
    if (st != MF_OK)
        return st;
    if (gt->policy == MF_APPLY_NONFINITE_SKIP)
        st = gate_build(n, pairs, gt);
    if (st == MF_OK)
        st = cast_rates(n, pairs, lr);
    if (st == MF_OK)
        st = gate_rates(gt, lr);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = update_one(o, g, &pairs[i], lr, gt, deps);
    if (st == MF_OK)
        st = update_powers(o, g, false, gt, deps);
    mf_graph_pop_scope(g, mark);
    return st;
}

MfStatus mf_optimizer_apply_graph(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                                  MfVariable *global_step, MfNode **train_op)
{
    *train_op = NULL;
    MfGraph *g = NULL;
    MfOptRates rate = {0};
    Deps deps = {NULL, 0, 0};
    Gate gt = {mf_opt_take_nonfinite(o), NULL, NULL};
    MfStatus st = check_graph_pairs(o, n, pairs, &g);
    if (st == MF_OK)
        st = check_graph_step(g, global_step);
    if (st == MF_OK)
        st = mf_opt_check_hyper_tensors(o, g, "apply_gradients");
    if (st == MF_OK)
        st = graph_lr(o, lr, &rate.lr);
    bool pushed = false;
    if (st == MF_OK && mf_graph_default() != g && (st = mf_graph_push_default(g)) == MF_OK)
        pushed = true;
    if (st == MF_OK)
        st = build_updates(o, g, n, pairs, &rate, &gt, &deps);
    if (st == MF_OK)
        st = finish(o, g, &deps, global_step, false, &gt, train_op);
    if (pushed)
        mf_graph_pop_default();
    mf_opt_rates_free(&rate);
    gate_free(&gt);
    deps_free(&deps);
    return prefixed(st, "apply_gradients");
}

/* ---- apply_gradients on eager Variables inside mf.trace ------------------------------ */

/* A handle whose value is what reading captured eager 'v' gives now in
 * 'g' (owned), so mf_opt_update builds the Apply node on it. */
static MfStatus captured_handle(MfGraph *g, MfVariable *v, MfVariable **out)
{
    MfTensor *cur = NULL;
    MfStatus st = mf_graph_capture(g, v, &cur);
    if (st == MF_OK && !(*out = mf_variable_new(cur, v->name, v->trainable)))
        st = MF_ENOMEM;
    return st;
}

/* Pair 'i' (a gradient given) holds an eager Variable, captured by 'g', that fits. */
static MfStatus check_traced_pair(MfGraph *g, int i, const MfGradVar *p)
{
    const MfTensor *x = p->var ? p->var->value : NULL;
    if (!x || x->node)
        return mf_err_set(MF_EARG, "apply_gradients: pair %d: inside mf.trace the variables "
                          "must be eager Variables (captured), got %s", i + 1,
                          x ? "a graph Variable" : "one without a value");
    return check_grad_fits(g, i, p);
}

/* The rate in the trace: the override, or the optimizer's, an eager
 * Variable read when the graph runs (so a decayed rate is seen). Owned. */
static MfStatus traced_lr(MfGraph *g, const MfOptimizer *o, MfTensor *override, MfTensor **out)
{
    if (!override && o->cfg.lr_var && !o->cfg.lr_var->value->node) {
        MfTensor *cur = NULL;
        MfStatus st = mf_graph_capture(g, o->cfg.lr_var, &cur);
        if (st == MF_OK)
            mf_tensor_retain(cur);
        *out = cur;
        return st;
    }
    return graph_lr(o, override, out);
}

/* One Apply node on captured 'p->var' and its eager slots; 'tmp' is the
 * optimizer as the update sees it (Adam's powers as captured handles). */
static MfStatus traced_one(MfGraph *g, const MfOptimizer *tmp, MfOptimizer *o,
                           const MfGradVar *p, MfOptRates *lr, const Gate *gt, Deps *deps)
{
    MfSlotEntry *e = mf_opt_find_entry(o, p->var);
    MfVariable *h = NULL, *hs[MF_OPT_MAX_SLOTS] = {NULL, NULL}, *vars[1 + MF_OPT_MAX_SLOTS];
    MfTensor *lr_v = NULL, *out = NULL;
    int nv = 0;
    MfStatus st = captured_handle(g, p->var, &h);
    vars[nv++] = p->var;
    for (int k = 0; k < MF_OPT_MAX_SLOTS && st == MF_OK && e->slot[k]; k++) {
        st = captured_handle(g, e->slot[k], &hs[k]);
        vars[nv++] = e->slot[k];
    }
    char scope[300];
    update_scope(scope, sizeof scope, p->var->name, ":/");
    int mark = -1;
    if (st == MF_OK)
        st = mf_graph_push_scope(g, scope, &mark);
    if (st == MF_OK)
        st = mf_opt_lr_for(lr, p->var->value->dtype, &lr_v);
    if (st == MF_OK) {
        st = update_unscaled((MfUpdate){tmp, h, p->grad, lr_v, hs, &out, gt->policy, p->decay,
                                        NULL, gt->ok != NULL});
    }
    if (mark >= 0)
        mf_graph_pop_scope(g, mark);
    if (st == MF_OK)
        st = mf_graph_captured_update(g, out->node, nv, vars);
    if (st == MF_OK)
        st = deps_push(deps, out);
    mf_tensor_release(out);
    mf_variable_release(h);
    for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
        mf_variable_release(hs[k]);
    return st;
}

static MfStatus traced_updates(MfGraph *g, MfOptimizer *o, int n, const MfGradVar *pairs,
                               MfOptRates *lr, Gate *gt, Deps *deps)
{
    MfOptimizer tmp = *o;   /* the powers read when the graph runs */
    MfVariable *hp[MF_OPT_MAX_POWERS] = {NULL};
    MfStatus st = MF_OK;
    for (int i = 0; i < mf_opt_desc(o)->npowers && st == MF_OK; i++)
        if ((st = captured_handle(g, o->power[i], &hp[i])) == MF_OK)
            tmp.power[i] = hp[i];
    int mark = -1;
    if (st == MF_OK)
        st = mf_graph_push_scope(g, o->cfg.name, &mark);
    /* a traced run writes each captured variable when its node runs (no
     * staging): the gate makes ERROR fail at the first update, before any */
    if (st == MF_OK && gt->policy != MF_APPLY_NONFINITE_APPLY)
        st = gate_build(n, pairs, gt);
    if (st == MF_OK)
        st = cast_rates(n, pairs, lr);
    if (st == MF_OK)
        st = gate_rates(gt, lr);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = traced_one(g, &tmp, o, &pairs[i], lr, gt, deps);
    if (st == MF_OK)
        st = update_powers(o, g, true, gt, deps);
    if (mark >= 0)
        mf_graph_pop_scope(g, mark);
    for (int i = 0; i < MF_OPT_MAX_POWERS; i++)
        mf_variable_release(hp[i]);
    return st;
}

static MfStatus check_traced(MfOptimizer *o, MfGraph *g, int n, const MfGradVar *pairs,
                             MfVariable *gs)
{
    MfStatus st = MF_OK;
    bool any = false;
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad) {
            any = true;
            st = check_traced_pair(g, i, &pairs[i]);
        }
    if (st == MF_OK && !any)
        st = mf_train_err_no_gradients("apply_gradients", n, pairs);
    if (st == MF_OK && gs && (gs->value->node || gs->value->rank != 0 ||
                              (gs->value->dtype != MF_INT64 && gs->value->dtype != MF_INT32)))
        st = mf_err_set(MF_EARG, "apply_gradients: global_step must be a scalar int64 or int32 "
                        "eager Variable inside mf.trace (see mf.train.global_step())");
    for (int i = 0; i < n && st == MF_OK; i++)
        if (pairs[i].grad)
            st = mf_optimizer_ensure_slots(o, pairs[i].var);
    return st;
}

MfStatus mf_optimizer_apply_traced(MfOptimizer *o, MfGraph *g, int n, const MfGradVar *pairs,
                                   MfTensor *lr, MfVariable *global_step, MfNode **train_op)
{
    *train_op = NULL;
    MfOptRates rate = {0};
    Deps deps = {NULL, 0, 0};
    Gate gt = {mf_opt_take_nonfinite(o), NULL, NULL};
    MfStatus st = check_traced(o, g, n, pairs, global_step);
    if (st == MF_OK)
        st = mf_opt_check_hyper_tensors(o, g, "apply_gradients");
    if (st == MF_OK)
        st = traced_lr(g, o, lr, &rate.lr);
    if (st == MF_OK)
        st = traced_updates(g, o, n, pairs, &rate, &gt, &deps);
    if (st == MF_OK)
        st = finish(o, g, &deps, global_step, true, &gt, train_op);
    mf_opt_rates_free(&rate);
    gate_free(&gt);
    deps_free(&deps);
    return prefixed(st, "apply_gradients");
}

/* compute_gradients of a loss function called inside mf.trace: the ops it
 * built (nodes from 'lo' on) differentiated w.r.t. each pair's variable. */
MfStatus mf_train_traced_gradients(MfGraph *g, MfTensor *loss, int lo, MfGradVar *pairs, int n)
{
    if (!mf_dtype_is_float(loss->dtype))
        return mf_err_set(MF_EDTYPE, "compute_gradients: the loss must be a float tensor, got "
                          "%s", mf_dtype_name(loss->dtype));
    if (mf_tensor_graph(loss) != g)
        return mf_err_set(MF_EARG, "compute_gradients: the loss is a tensor of another graph");
    MfVariable **vs = mf_alloc_zeroed((size_t)(n + 1) * sizeof *vs);
    MfTensor **grads = mf_alloc_zeroed((size_t)(n + 1) * sizeof *grads);
    MfStatus st = vs && grads ? MF_OK : mf_err_nomem("compute_gradients", 0);
    for (int i = 0; i < n && st == MF_OK; i++)
        vs[i] = pairs[i].var;
    if (st == MF_OK)
        st = mf_graph_gradients_sources(g, loss, NULL, lo, mf_graph_nnodes(g), n, vs, NULL,
                                        grads);
    for (int i = 0; i < n && st == MF_OK; i++)
        pairs[i].grad = grads[i];
    if (vs)
        mf_dealloc(vs, (size_t)(n + 1) * sizeof *vs);
    if (grads)
        mf_dealloc(grads, (size_t)(n + 1) * sizeof *grads);
    return prefixed(st, "compute_gradients");
}

/* ---- the global step ------------------------------------------------------------------ */

MfStatus mf_train_graph_global_step(MfGraph *g, MfVariable **step)
{
    *step = NULL;
    MfNode *n = mf_graph_find(g, "global_step");
    if (n && n->kind != MF_NODE_VARIABLE)
        return mf_err_set(MF_EARG, "global_step: the graph has a node 'global_step' that is not "
                          "a variable (%s)", mf_node_op_name(n));
    if (!n) {
        MfTensor *zero = mf_tensor_scalar(MF_INT64, 0);
        MfStatus st = zero ? mf_graph_variable(g, zero, "global_step", false, &n) : MF_ENOMEM;
        mf_tensor_release(zero);
        if (st != MF_OK)
            return st;
    }
    *step = mf_train_graph_handle(n);
    return *step ? MF_OK : MF_ENOMEM;
}
