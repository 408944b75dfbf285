/* variables.c — graph variables (TensorFlow 1.x's VariableV2 model), their
 * collections and initializers, assign nodes, the session variable store,
 * and eager variables captured by reference (mf.trace). See graph.h.
 *
 * A VARIABLE node has no inputs; its value lives in each session's store,
 * so two sessions on one graph hold independent values. Its initializer is
 * an ASSIGN node whose input is the initial value; the global initializer
 * is a NoOp with those assigns as control inputs.
 *
 * Captures: inside a graph, an eager MfVariable reads as a READ node that
 * reads the variable when the graph runs. Assigns to it are chained with
 * control edges (each after the previous assign and the first read), and
 * reads after an assign use the assign's output, so a traced function
 * computes exactly what the same code computes eagerly. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "graph_impl.h"

typedef struct Capture {
    MfVariable *v;       /* borrowed: the READ node retains it */
    int read;            /* its READ node */
    int last;            /* the latest assign (or in-place update) to it, or -1 */
    MfTensor *cur;       /* weak: what reading it gives now; NULL after an in-place
                          * update: the next use makes a READ node after it */
} Capture;

typedef struct IntList {
    int n, cap;
    int *a;
} IntList;

struct GraphVars {
    IntList vars;        /* VARIABLE nodes in creation order */
    IntList assigns;     /* ASSIGN nodes on captured variables */
    Capture *caps;
    int ncaps, caps_cap;
};

static void graph_vars_free(struct GraphVars *gv)
{
    if (!gv)
        return;
    mf_free(gv->vars.a);
    mf_free(gv->assigns.a);
    mf_free(gv->caps);
    mf_free(gv);
}

static struct GraphVars *vars_of(MfGraph *g)
{
    struct GraphVars **slot = mf_graph_vars_slot_(g);
    if (*slot)
        return *slot;
    if (!(*slot = mf_calloc(1, sizeof **slot)))
        mf_err_nomem("graph", sizeof **slot);
    else
        mf_graph_vars_owned_(g, graph_vars_free);
    return *slot;
}

static MfStatus list_push(IntList *l, int x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        int *p = mf_realloc(l->a, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("graph", (unsigned long long)cap * sizeof *p);
        l->a = p;
        l->cap = cap;
    }
    l->a[l->n++] = x;
    return MF_OK;
}

/* ---- graph variables --------------------------------------------------------- */

/* The node index behind 'value' in 'g': symbolic (checked to be of 'g') or
 * a Const node for a concrete tensor. */
static MfStatus input_of(MfGraph *g, MfTensor *value, const char *fname, MfNodeInput *in)
{
    if (value->node) {
        if (mf_tensor_graph(value) != g)
            return mf_err_set(MF_EARG, "%s: the value is a tensor of another graph ('%s')",
                              fname, ((MfNode *)value->node)->name);
        in->node = ((MfNode *)value->node)->index;
        in->output = value->node_output;
        return MF_OK;
    }
    MfNode *k;
    MfStatus st = mf_graph_const_for_(g, value, &k);
    in->node = st == MF_OK ? k->index : -1;
    in->output = 0;
    return st;
}

/* Adds the ASSIGN node named 'name' (full name, unscoped) of 'value' into
 * node 'ref' (or captured 'var'). */
static MfStatus add_assign(MfGraph *g, int ref, MfVariable *var, MfAssignKind kind,
                           MfNodeInput in, const MfTensorSpec *spec, const char *name,
                           MfNode **out)
{
    MfNode *a;
    MfNodeInput *ins = mf_malloc(sizeof *ins);
    if (!ins)
        return mf_err_nomem("assign", sizeof *ins);
    MfStatus st = mf_graph_add_node_(g, MF_NODE_ASSIGN, "Assign", name, true, &a);
    if (st != MF_OK) {
        mf_free(ins);
        return st;
    }
    *ins = in;
    a->inputs = ins;
    a->ninputs = 1;
    a->ref = ref;
    a->assign = kind;
    a->var = var;
    mf_variable_retain(var);
    a->noutputs = 1;
    a->out[0] = *spec;
    *out = a;
    return MF_OK;
}

/* "<var>/<suffix>" for the name of a node that belongs to 'var'. */
static void sub_name(char *buf, size_t cap, const char *var, const char *suffix)
{
    size_t n = strlen(var);
    if (n > cap - 24)
        n = cap - 24;
    memcpy(buf, var, n);
    strcpy(buf + n, "/");
    strcat(buf + n, suffix);
}

static MfStatus make_variable(MfGraph *g, MfTensor *initial, const char *name, bool trainable,
                              MfNode **var)
{
    MfNode *v;
    MfStatus st = mf_graph_add_node_(g, MF_NODE_VARIABLE, "Variable", name, false, &v);
    if (st != MF_OK)
        return st;
    v->trainable = trainable;
    v->noutputs = 1;
    v->out[0].dtype = initial->dtype;
    v->out[0].rank = initial->rank;
    memcpy(v->out[0].shape, initial->shape, (size_t)initial->rank * sizeof *initial->shape);
    char full[300];
    MfNodeInput in;
    if (initial->node) {
        st = input_of(g, initial, "Variable", &in);
    } else {
        /* a Const named after the variable (its name already has the scope) */
        MfNode *k;
        sub_name(full, sizeof full, v->name, "initial_value");
        st = mf_graph_add_node_(g, MF_NODE_CONST, "Const", full, true, &k);
        if (st == MF_OK) {
            mf_tensor_retain(initial);
            k->value = initial;
            k->noutputs = 1;
            k->out[0] = v->out[0];
            in.node = k->index;
            in.output = 0;
        }
    }
    MfNode *a;
    sub_name(full, sizeof full, v->name, "Assign");
    if (st == MF_OK)
        st = add_assign(g, v->index, NULL, MF_ASSIGN_SET, in, &v->out[0], full, &a);
    if (st != MF_OK)
        return st;
    v->ref = a->index;
    *var = v;
    return MF_OK;
}

MfStatus mf_graph_variable(MfGraph *g, MfTensor *initial, const char *name, bool trainable,
                           MfNode **var)
{
    *var = NULL;
    struct GraphVars *gv = vars_of(g);
    if (!gv)
        return MF_ENOMEM;
    if (initial->node && mf_tensor_graph(initial) != g)
        return mf_err_set(MF_EARG, "Variable: the initial value is a tensor of another graph "
                          "('%s')", ((MfNode *)initial->node)->name);
    int mark = mf_graph_suspend_control_(g);
    MfStatus st = make_variable(g, initial, name, trainable, var);
    mf_graph_resume_control_(g, mark);
    if (st == MF_OK)
        st = list_push(&gv->vars, (*var)->index);
    return st;
}

int mf_graph_variables(const MfGraph *g, bool trainable_only, MfNode **out, int cap)
{
    struct GraphVars *gv = *mf_graph_vars_slot_((MfGraph *)g);
    int n = 0;
    for (int i = 0; gv && i < gv->vars.n; i++) {
        MfNode *v = mf_graph_node(g, gv->vars.a[i]);
        if (trainable_only && !v->trainable)
            continue;
        if (out && n < cap)
            out[n] = v;
        n++;
    }
    return n;
}

MfStatus mf_graph_variables_initializer(MfGraph *g, int n, MfNode *const *vars,
                                        const char *name, MfNode **op)
{
    int total = vars ? n : mf_graph_variables(g, false, NULL, 0);
    MfNode **deps = mf_malloc((size_t)(total + 1) * sizeof *deps);
    if (!deps)
        return mf_err_nomem("global_variables_initializer",
                            (unsigned long long)(total + 1) * sizeof *deps);
    if (!vars)
        mf_graph_variables(g, false, deps, total);
    MfStatus st = MF_OK;
    for (int i = 0; i < total && st == MF_OK; i++) {
        MfNode *v = vars ? vars[i] : deps[i];
        if (v->graph != g || v->kind != MF_NODE_VARIABLE)
            st = mf_err_set(MF_EARG, "variables_initializer: item %d ('%s') is not a variable "
                            "of this graph", i + 1, v->name);
        else
            deps[i] = mf_graph_node(g, v->ref);
    }
    if (st == MF_OK) {
        int mark = mf_graph_suspend_control_(g);
        st = mf_graph_group(g, total, deps, name ? name : "init", op);
        mf_graph_resume_control_(g, mark);
    }
    mf_free(deps);
    return st;
}

/* Checks at build time that 'value' fits the variable (dtype; SET: shape). */
static MfStatus check_assign(const MfNode *var, MfAssignKind kind, const MfTensor *value,
                             const char *fname)
{
    const MfTensorSpec *s = &var->out[0];
    char want[MF_MAX_RANK * 24 + 8], got[MF_MAX_RANK * 24 + 8];
    bool fits = value->dtype == s->dtype;
    if (kind == MF_ASSIGN_SET) {
        fits = fits && value->rank == s->rank;
        for (int i = 0; fits && i < s->rank; i++)
            fits = value->shape[i] < 0 || s->shape[i] < 0 || value->shape[i] == s->shape[i];
    } else {
        fits = fits && value->rank <= s->rank;
    }
    if (fits)
        return MF_OK;
    return mf_err_set(value->dtype == s->dtype ? MF_ESHAPE : MF_EDTYPE,
                      "%s: variable '%s' has shape %s %s, got %s %s", fname, var->name,
                      mf_shape_str(s->rank, s->shape, want, sizeof want),
                      mf_dtype_name(s->dtype),
                      mf_shape_str(value->rank, value->shape, got, sizeof got),
                      mf_dtype_name(value->dtype));
}

static const char *assign_fname(MfAssignKind kind)
{
    return kind == MF_ASSIGN_ADD ? "assign_add" : kind == MF_ASSIGN_SUB ? "assign_sub" : "assign";
}

static const char *assign_base(MfAssignKind kind)
{
    return kind == MF_ASSIGN_ADD ? "AssignAdd" : kind == MF_ASSIGN_SUB ? "AssignSub" : "Assign";
}

/* The ASSIGN node on 'var' (VARIABLE or captured READ), not yet output. */
static MfStatus build_assign(MfNode *var, MfAssignKind kind, MfTensor *value, MfNode **out)
{
    MfGraph *g = var->graph;
    const char *fname = assign_fname(kind);
    MfStatus st = check_assign(var, kind, value, fname);
    MfNodeInput in;
    if (st == MF_OK)
        st = input_of(g, value, fname, &in);
    char full[300];
    sub_name(full, sizeof full, var->name, assign_base(kind));
    if (st == MF_OK)
        st = add_assign(g, var->kind == MF_NODE_VARIABLE ? var->index : -1, var->var, kind, in,
                        &var->out[0], full, out);
    return st;
}

MfStatus mf_graph_assign(MfNode *var, MfAssignKind kind, MfTensor *value, MfTensor **out)
{
    *out = NULL;
    if (var->kind != MF_NODE_VARIABLE)
        return mf_err_set(MF_EARG, "%s: '%s' is not a variable", assign_fname(kind), var->name);
    MfNode *a;
    MfStatus st = build_assign(var, kind, value, &a);
    if (st != MF_OK)
        return st;
    *out = mf_graph_output(a, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

MfStatus mf_graph_read(MfNode *var, MfTensor **out)
{
    *out = NULL;
    if (var->kind != MF_NODE_VARIABLE)
        return mf_err_set(MF_EARG, "read_value: '%s' is not a variable", var->name);
    char full[300];
    sub_name(full, sizeof full, var->name, "read");
    MfNode *r;
    MfStatus st = mf_graph_add_node_(var->graph, MF_NODE_READ, "read", full, true, &r);
    if (st != MF_OK)
        return st;
    r->ref = var->index;
    r->noutputs = 1;
    r->out[0] = var->out[0];
    *out = mf_graph_output(r, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

MfStatus mf_graph_initialized_value(MfNode *var, MfTensor **out)
{
    *out = NULL;
    if (var->kind != MF_NODE_VARIABLE)
        return mf_err_set(MF_EARG, "initialized_value: '%s' is not a variable", var->name);
    MfNodeInput *ins = mf_malloc(sizeof *ins);
    if (!ins)
        return mf_err_nomem("initialized_value", sizeof *ins);
    *ins = mf_graph_node(var->graph, var->ref)->inputs[0]; /* what the initializer assigns */
    char full[300];
    sub_name(full, sizeof full, var->name, "initialized_value");
    MfNode *r;
    /* no control dependencies: it must not order the initializers that use it */
    int mark = mf_graph_suspend_control_(var->graph);
    MfStatus st = mf_graph_add_node_(var->graph, MF_NODE_READ, "read", full, true, &r);
    mf_graph_resume_control_(var->graph, mark);
    if (st != MF_OK) {
        mf_free(ins);
        return st;
    }
    r->inputs = ins;
    r->ninputs = 1;
    r->ref = var->index;
    r->noutputs = 1;
    r->out[0] = var->out[0];
    *out = mf_graph_output(r, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

/* ---- captured eager variables ---------------------------------------------- */

static Capture *find_capture(struct GraphVars *gv, const MfVariable *v)
{
    for (int i = 0; i < gv->ncaps; i++)
        if (gv->caps[i].v == v)
            return &gv->caps[i];
    return NULL;
}

/* The capture entry of 'v' in 'g', with its READ node made on first use. */
static MfStatus capture_of(MfGraph *g, MfVariable *v, Capture **out)
{
    struct GraphVars *gv = vars_of(g);
    if (!gv)
        return MF_ENOMEM;
    if ((*out = find_capture(gv, v)))
        return MF_OK;
    if (gv->ncaps == gv->caps_cap) {
        int cap = gv->caps_cap ? 2 * gv->caps_cap : 4;
        Capture *p = mf_realloc(gv->caps, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("graph", (unsigned long long)cap * sizeof *p);
        gv->caps = p;
        gv->caps_cap = cap;
    }
    MfNode *r;
    int mark = mf_graph_suspend_control_(g);
    /* named after the variable unless its name cannot be a node name */
    const char *base = *v->name && !strchr(v->name, ':') ? v->name : "ReadVariableOp";
    MfStatus st = mf_graph_add_node_(g, MF_NODE_READ, base, NULL, true, &r);
    mf_graph_resume_control_(g, mark);
    if (st != MF_OK)
        return st;
    r->var = v;
    mf_variable_retain(v);
    r->noutputs = 1;
    r->out[0].dtype = v->value->dtype;
    r->out[0].rank = v->value->rank;
    memcpy(r->out[0].shape, v->value->shape, (size_t)v->value->rank * sizeof *v->value->shape);
    MfTensor *cur = mf_graph_weak_output_(r, 0);
    if (!cur)
        return MF_ENOMEM;
    Capture *c = &gv->caps[gv->ncaps++];
    c->v = v;
    c->read = r->index;
    c->last = -1;
    c->cur = cur;
    *out = c;
    return MF_OK;
}

/* A new READ node of captured 'c' ordered after its latest update (an
 * in-place Apply op wrote the variable): what reading it gives from now. */
static MfStatus reread(MfGraph *g, Capture *c)
{
    const MfNode *first = mf_graph_node(g, c->read);
    MfNode *r;
    int mark = mf_graph_suspend_control_(g);
    MfStatus st = mf_graph_add_node_(g, MF_NODE_READ, first->name, NULL, true, &r);
    mf_graph_resume_control_(g, mark);
    if (st != MF_OK)
        return st;
    r->var = c->v;
    mf_variable_retain(c->v);
    r->noutputs = 1;
    r->out[0] = first->out[0];
    st = mf_graph_add_control(r, mf_graph_node(g, c->last));
    if (st == MF_OK && !(c->cur = mf_graph_weak_output_(r, 0)))
        st = MF_ENOMEM;
    return st;
}

MfStatus mf_graph_capture(MfGraph *g, MfVariable *v, MfTensor **out)
{
    *out = NULL;
    if (!v->value || v->value->node)
        return mf_err_set(MF_EARG, "capture: variable '%s' is not an eager variable with a "
                          "value", v->name);
    Capture *c;
    MfStatus st = capture_of(g, v, &c);
    if (st == MF_OK && !c->cur)
        st = reread(g, c);
    if (st == MF_OK)
        *out = c->cur;
    return st;
}

MfStatus mf_graph_captured_update(MfGraph *g, MfNode *node, int nvars, MfVariable *const *vars)
{
    struct GraphVars *gv = vars_of(g);
    if (!gv)
        return MF_ENOMEM;
    MfStatus st = list_push(&gv->assigns, node->index);
    for (int i = 0; i < nvars && st == MF_OK; i++) {
        Capture *c;
        st = capture_of(g, vars[i], &c);
        if (st == MF_OK) {
            c->last = node->index;
            c->cur = NULL;
        }
    }
    return st;
}

MfStatus mf_graph_assign_captured(MfGraph *g, MfVariable *v, MfAssignKind kind,
                                  MfTensor *value, MfTensor **out)
{
    *out = NULL;
    MfTensor *cur;
    MfStatus st = mf_graph_capture(g, v, &cur);
    if (st != MF_OK)
        return st;
    struct GraphVars *gv = vars_of(g);
    Capture *c = find_capture(gv, v);
    MfNode *a;
    st = build_assign(mf_graph_node(g, c->read), kind, value, &a);
    if (st != MF_OK)
        return st;
    /* after the previous assign, or (the first) after the read built before it */
    st = mf_graph_add_control(a, mf_graph_node(g, c->last >= 0 ? c->last : c->read));
    if (st == MF_OK)
        st = list_push(&gv->assigns, a->index);
    MfTensor *now = st == MF_OK ? mf_graph_weak_output_(a, 0) : NULL;
    if (!now)
        return st == MF_OK ? MF_ENOMEM : st;
    c->last = a->index;
    c->cur = now;
    *out = mf_graph_output(a, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

int mf_graph_captured_reads(const MfGraph *g, const MfVariable *v, MfTensor **out, int cap)
{
    int n = 0;
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        MfNode *a = mf_graph_node(g, i);
        if (a->var != v || (a->kind != MF_NODE_READ && a->kind != MF_NODE_ASSIGN))
            continue;
        if (n < cap)
            out[n] = mf_graph_output(a, 0);
        n++;
    }
    return n;
}

int mf_graph_captured_assigns(const MfGraph *g, MfNode **out, int cap)
{
    struct GraphVars *gv = *mf_graph_vars_slot_((MfGraph *)g);
    int n = gv ? gv->assigns.n : 0;
    for (int i = 0; out && i < n && i < cap; i++)
        out[i] = mf_graph_node(g, gv->assigns.a[i]);
    return n;
}

/* ---- the variable store -------------------------------------------------------- */

MfTensor *mf_varstore_get(const MfVarStore *s, int node)
{
    return s && node < s->cap ? s->vals[node] : NULL;
}

MfStatus mf_varstore_set(MfVarStore *s, int node, MfTensor *value)
{
    if (node >= s->cap) {
        int cap = 2 * (node + 1);
        MfTensor **p = mf_realloc(s->vals, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("variables", (unsigned long long)cap * sizeof *p);
        memset(p + s->cap, 0, (size_t)(cap - s->cap) * sizeof *p);
        s->vals = p;
        s->cap = cap;
    }
    mf_tensor_retain(value);
    mf_tensor_release(s->vals[node]);
    s->vals[node] = value;
    return MF_OK;
}

void mf_varstore_clear(MfVarStore *s)
{
    for (int i = 0; i < s->cap; i++)
        mf_tensor_release(s->vals[i]);
    mf_free(s->vals);
    s->vals = NULL;
    s->cap = 0;
}
