/* graph.c — the graph IR: nodes, data and control edges, unique names,
 * name scopes, the default-graph stack, and the builder that the dispatcher
 * calls in graph mode (see graph.h; hooks.c hands it to the dispatcher).
 *
 * Names: a hash table maps every name handed out, and every base name
 * asked for, to the next suffix to try, so "add", "add_1", "add_2" cost one
 * or two lookups each. Nodes never move (the graph holds pointers), so a
 * symbolic tensor can point at its node; the node hooks of core/tensor.c
 * make such a tensor retain the node's graph. */
#include "graph.h"
#include "graph_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grad_registry.h"
#include "core/numerics.h"
#include "core/rng.h"

#define MAX_DEFAULT_DEPTH 64
#define MAX_NAME 256   /* graph.h's MF_INPUT_NAME_CAP leaves room for ":index" */
#define MAX_USER_NAME (MAX_NAME - 32)   /* a user's name, with the scope */

typedef struct NameSlot {
    char *key;           /* owned; NULL when empty */
    int next;            /* next suffix to try for this base name */
} NameSlot;

struct MfGraph {
    int64_t refcount;
    MfNode **nodes;
    int nnodes, cap;
    NameSlot *names;
    int names_cap, names_count;   /* names_cap: a power of two */
    char scope[MAX_NAME];         /* "" or "outer/inner/" */
    int *ctrl;                    /* control dependencies in force */
    int nctrl, ctrl_cap;
    int *consts;                  /* open addressing on the value's id: Const node + 1 */
    int consts_cap, consts_count; /* consts_cap: a power of two */
    struct GraphVars *vars;       /* variables and captures (variables.c) */
    MfGraphExt fusion;            /* fusion's setting and plan (fusion.c) */
    void (*vars_free)(struct GraphVars *vars);   /* given by variables.c with 'vars' */
    MfTensor **weak;              /* mf_graph_weak_output_ tensors, owned */
    int nweak, weak_cap;
    bool function;                /* mf.trace's graph: init_scope lifts out of it */
};

static MfGraph *default_stack[MAX_DEFAULT_DEPTH];
static int default_depth;

/* ---- names ----------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding 'key', or the empty slot where it would go. */
static NameSlot *name_slot(const MfGraph *g, const char *key)
{
    size_t mask = (size_t)g->names_cap - 1;
    size_t i = (size_t)hash_str(key) & mask;
    while (g->names[i].key && strcmp(g->names[i].key, key) != 0)
        i = (i + 1) & mask;
    return &g->names[i];
}

static MfStatus names_grow(MfGraph *g)
{
    int old_cap = g->names_cap;
    NameSlot *old = g->names;
    int cap = old_cap ? old_cap * 2 : 64;
    NameSlot *fresh = mf_calloc((size_t)cap, sizeof *fresh);
    if (!fresh)
        return mf_err_nomem("graph", (unsigned long long)cap * sizeof *fresh);
    g->names = fresh;
    g->names_cap = cap;
    for (int i = 0; i < old_cap; i++)
        if (old[i].key)
            *name_slot(g, old[i].key) = old[i];
    mf_free(old);
    return MF_OK;
}

/* Records 'key' (copied) as taken. */
static MfStatus name_insert(MfGraph *g, const char *key)
{
    if (2 * (g->names_count + 1) > g->names_cap) {
        MfStatus st = names_grow(g);
        if (st != MF_OK)
            return st;
    }
    NameSlot *s = name_slot(g, key);
    size_t len = strlen(key) + 1;
    s->key = mf_malloc(len);
    if (!s->key)
        return mf_err_nomem("graph", (unsigned long long)len);
    memcpy(s->key, key, len);
    s->next = 1;
    g->names_count++;
    return MF_OK;
}

static bool name_taken(const MfGraph *g, const char *key)
{
    return g->names_cap > 0 && name_slot(g, key)->key != NULL;
}

/* Writes into 'out' a unique name for scope + 'base' and records it. */
static MfStatus unique_name(MfGraph *g, const char *base, char *out)
{
    int n = snprintf(out, MAX_NAME, "%s%s", g->scope, base);
    if (n >= MAX_NAME - 12)
        return mf_err_set(MF_EARG, "graph: node name '%s%s' is too long (at most %d "
                          "characters)", g->scope, base, MAX_NAME - 12);
    if (!name_taken(g, out))
        return name_insert(g, out);
    char want[MAX_NAME];
    memcpy(want, out, (size_t)n + 1);
    NameSlot *s = name_slot(g, want);
    int k = s->next;
    do
        snprintf(out, MAX_NAME, "%.*s_%d", MAX_NAME - 16, want, k++);
    while (name_taken(g, out));
    s->next = k;
    return name_insert(g, out);
}

/* ---- graphs and nodes ------------------------------------------------------ */

MfGraph *mf_graph_alloc_(void)
{
    MfGraph *g = mf_calloc(1, sizeof *g);
    if (!g) {
        mf_err_nomem("Graph", sizeof *g);
        return NULL;
    }
    g->refcount = 1;
    return g;
}

void mf_graph_retain(MfGraph *g)
{
    if (g)
        g->refcount++;
}

static void node_free(MfNode *n)
{
    mf_free(n->name);
    mf_free(n->made);
    mf_free(n->inputs);
    mf_free(n->control);
    mf_tensor_release(n->value);
    mf_variable_release(n->var);
    mf_rng_runs_free(n->attrs.runs);
    if (n->grad)   /* custom_gradient: releases the user's function */
        n->grad->free(n->grad);
    mf_free(n);
}

void mf_graph_release(MfGraph *g)
{
    if (!g || --g->refcount > 0)
        return;
    /* Weak tensors release the graph once more each: keep it from reaching
     * zero again while they go. */
    g->refcount = INT64_MAX / 2;
    for (int i = 0; i < g->nweak; i++)
        mf_tensor_release(g->weak[i]);
    mf_free(g->weak);
    if (g->vars)
        g->vars_free(g->vars);
    if (g->fusion.free)           /* through the pointer: graph.c never calls fusion.c */
        g->fusion.free(g->fusion.state);
    for (int i = 0; i < g->nnodes; i++)
        node_free(g->nodes[i]);
    for (int i = 0; i < g->names_cap; i++)
        mf_free(g->names[i].key);
    mf_free(g->names);
    mf_free(g->nodes);
    mf_free(g->ctrl);
    mf_free(g->consts);
    mf_free(g);
}

int mf_graph_nnodes(const MfGraph *g)
{
    return g->nnodes;
}

MfNode *mf_graph_node(const MfGraph *g, int i)
{
    return g->nodes[i];
}

MfNode *mf_graph_find(const MfGraph *g, const char *name)
{
    for (int i = 0; i < g->nnodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0)
            return g->nodes[i];
    return NULL;
}

const char *mf_node_op_name(const MfNode *n)
{
    switch (n->kind) {
    case MF_NODE_OP: return mf_op_table[n->op]->name;
    case MF_NODE_PLACEHOLDER: return "Placeholder";
    case MF_NODE_CONST: return "Const";
    case MF_NODE_VARIABLE: return "VariableV2";
    case MF_NODE_READ: return "ReadVariableOp";
    case MF_NODE_ASSIGN:
        return n->assign == MF_ASSIGN_ADD ? "AssignAdd"
               : n->assign == MF_ASSIGN_SUB ? "AssignSub" : "Assign";
    default: return "NoOp";
    }
}

static MfStatus reserve_node(MfGraph *g)
{
    if (g->nnodes < g->cap)
        return MF_OK;
    int cap = g->cap ? g->cap * 2 : 16;
    MfNode **p = mf_realloc(g->nodes, (size_t)cap * sizeof *p);
    if (!p)
        return mf_err_nomem("graph", (unsigned long long)cap * sizeof *p);
    g->nodes = p;
    g->cap = cap;
    return MF_OK;
}

MfStatus mf_graph_check_name(const MfGraph *g, const char *fname, const char *name)
{
    if (!name)
        return MF_OK;
    if (!*name || strchr(name, ':'))
        return mf_err_set(MF_EARG, "%s: invalid node name '%s' (expected a non-empty name "
                          "without ':')", fname, name);
    /* leave room for what builders append: "_<k>" to make it unique, and a
     * Variable's "/initial_value" */
    size_t len = (g ? strlen(g->scope) : 0) + strlen(name);
    if (len > MAX_USER_NAME)
        return mf_err_set(MF_EARG, "%s: node name '%s%.32s...' is too long (expected at most "
                          "%d characters with the scope, got %zu)", fname, g ? g->scope : "",
                          name, MAX_USER_NAME, len);
    return MF_OK;
}

/* check_numerics names where a node was made (a failed copy leaves it out). */
static void note_made(MfNode *n)
{
    if (!mf_numerics_on)
        return;
    char where[512];
    mf_numerics_where(where, sizeof where);
    size_t len = strlen(where) + 1;
    if (where[0] && (n->made = mf_malloc(len)))
        memcpy(n->made, where, len);
}

/* Adds a node of 'kind' named (uniquely) scope + ('name' or 'base'), with
 * the control dependencies in force; '*out' is borrowed. The public
 * builders check a user's 'name' naming their API function first; this
 * check is the guard for internal callers ('raw' names are built from
 * checked ones and already carry their scope). */
static MfStatus node_add_in(MfGraph *g, MfNodeKind kind, const char *base, const char *name,
                            bool raw, MfNode **out)
{
    char full[MAX_NAME];
    if (!raw && mf_graph_check_name(g, "graph", name) != MF_OK)
        return MF_EARG;
    MfStatus st = reserve_node(g);
    char saved = g->scope[0];
    if (raw)
        g->scope[0] = '\0';
    if (st == MF_OK)
        st = unique_name(g, name ? name : base, full);
    g->scope[0] = saved;
    if (st != MF_OK)
        return st;
    MfNode *n = mf_calloc(1, sizeof *n);
    size_t len = strlen(full) + 1;
    if (n)
        n->name = mf_malloc(len);
    if (n && g->nctrl)
        n->control = mf_malloc((size_t)g->nctrl * sizeof *n->control);
    if (!n || !n->name || (g->nctrl && !n->control)) {
        if (n)
            node_free(n);
        return mf_err_nomem("graph", sizeof *n + len);
    }
    memcpy(n->name, full, len);
    if (g->nctrl)
        memcpy(n->control, g->ctrl, (size_t)g->nctrl * sizeof *n->control);
    n->ncontrol = g->nctrl;
    n->graph = g;
    n->index = g->nnodes;
    n->kind = kind;
    n->ref = -1;
    n->attrs = mf_attrs_default();
    note_made(n);
    g->nodes[g->nnodes++] = n;
    *out = n;
    return MF_OK;
}

static MfStatus node_add(MfGraph *g, MfNodeKind kind, const char *base, const char *name,
                         MfNode **out)
{
    return node_add_in(g, kind, base, name, false, out);
}

MfStatus mf_graph_add_node_(MfGraph *g, MfNodeKind kind, const char *base, const char *name,
                            bool raw, MfNode **out)
{
    return node_add_in(g, kind, base, name, raw, out);
}

int mf_graph_suspend_control_(MfGraph *g)
{
    int mark = g->nctrl;
    g->nctrl = 0;
    return mark;
}

void mf_graph_resume_control_(MfGraph *g, int mark)
{
    g->nctrl = mark;
}

struct GraphVars **mf_graph_vars_slot_(MfGraph *g)
{
    return &g->vars;
}

MfGraphExt *mf_graph_fusion_slot_(MfGraph *g)
{
    return &g->fusion;
}

void mf_graph_vars_owned_(MfGraph *g, void (*vars_free)(struct GraphVars *vars))
{
    g->vars_free = vars_free;
}

MfTensor *mf_graph_weak_output_(MfNode *n, int k)
{
    MfGraph *g = n->graph;
    if (g->nweak == g->weak_cap) {
        int cap = g->weak_cap ? 2 * g->weak_cap : 8;
        MfTensor **p = mf_realloc(g->weak, (size_t)cap * sizeof *p);
        if (!p) {
            mf_err_nomem("graph", (unsigned long long)cap * sizeof *p);
            return NULL;
        }
        g->weak = p;
        g->weak_cap = cap;
    }
    MfTensor *t = mf_graph_output(n, k);
    if (!t)
        return NULL;
    g->refcount--;       /* the graph keeps 't'; 't' must not keep the graph */
    g->weak[g->nweak++] = t;
    return t;
}

MfTensor *mf_graph_strengthen(MfTensor *t)
{
    MfNode *n = t ? t->node : NULL;
    if (!n)
        return t;
    MfGraph *g = n->graph;
    for (int i = 0; i < g->nweak; i++) {
        if (g->weak[i] != t)
            continue;
        MfTensor *s = mf_graph_output(n, t->node_output);
        mf_tensor_release(t);
        return s;
    }
    return t;
}

MfTensor *mf_graph_output(MfNode *n, int output)
{
    const MfTensorSpec *s = &n->out[output];
    return mf_tensor_symbolic(s->dtype, s->rank, s->shape, n, output);
}

MfGraph *mf_tensor_graph(const MfTensor *t)
{
    return t->node ? ((const MfNode *)t->node)->graph : NULL;
}

char *mf_node_input_name(const MfNode *n, int k, char *buf, int cap)
{
    snprintf(buf, (size_t)cap, "%s:%d", mf_graph_node(n->graph, n->inputs[k].node)->name,
             n->inputs[k].output);
    return buf;
}

char *mf_graph_tensor_name(const MfTensor *t, char *buf, int cap)
{
    if (t->node)
        snprintf(buf, (size_t)cap, "%s:%d", ((const MfNode *)t->node)->name, t->node_output);
    else if (cap > 0)
        buf[0] = '\0';
    return buf;
}

MfTensor *mf_graph_get_tensor(MfGraph *g, const char *name, const char *fname)
{
    char base[MAX_NAME];
    const char *colon = strrchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    long index = 0;
    if (colon) {
        char *end;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || index < 0)
            index = -1;
    }
    MfNode *n = NULL;
    if (len < sizeof base && index >= 0) {
        memcpy(base, name, len);
        base[len] = '\0';
        n = mf_graph_find(g, base);
    }
    if (!n || index >= n->noutputs) {
        mf_err_set(MF_EARG, "%s: no tensor '%s' in the graph (names are \"node:index\", e.g. "
                   "\"add:0\"; g:nodes() lists the nodes)", fname, name);
        return NULL;
    }
    return mf_graph_output(n, (int)index);
}

/* ---- default graph, scopes, control dependencies --------------------------- */

MfStatus mf_graph_push_default(MfGraph *g)
{
    if (default_depth == MAX_DEFAULT_DEPTH)
        return mf_err_set(MF_EARG, "as_default: graphs nested more than %d deep",
                          MAX_DEFAULT_DEPTH);
    mf_graph_retain(g);
    default_stack[default_depth++] = g;
    return MF_OK;
}

void mf_graph_pop_default(void)
{
    if (default_depth > 0)
        mf_graph_release(default_stack[--default_depth]);
}

MfGraph *mf_graph_default(void)
{
    return default_depth ? default_stack[default_depth - 1] : NULL;
}

MfGraph *mf_graph_default_for(const char *fname)
{
    MfGraph *g = mf_graph_default();
    if (!g)
        mf_err_set(MF_EARG, "%s: no graph is being built; call it inside "
                   "g:as_default(function() ... end) with g = mf.Graph()", fname);
    return g;
}

MfGraph *mf_graph_given_or_default(MfGraph *given, const char *fname)
{
    MfGraph *g = given ? given : mf_graph_default();
    if (!g)
        mf_err_set(MF_EARG, "%s: no graph is being built; call it inside "
                   "g:as_default(function() ... end), or pass the graph: %s(g)", fname, fname);
    return g;
}

void mf_graph_mark_function(MfGraph *g)
{
    g->function = true;
}

bool mf_graph_is_function(const MfGraph *g)
{
    return g && g->function;
}

MfStatus mf_graph_push_scope(MfGraph *g, const char *name, int *mark)
{
    size_t len = strlen(g->scope);
    if (!*name || strchr(name, ':') || strchr(name, '/'))
        return mf_err_set(MF_EARG, "name_scope: invalid scope name '%s' (expected a non-empty "
                          "name without ':' or '/')", name);
    if (len + strlen(name) + 2 > MAX_NAME / 2)
        return mf_err_set(MF_EARG, "name_scope: scope '%s%s/' is too long", g->scope, name);
    *mark = (int)len;
    snprintf(g->scope + len, MAX_NAME - len, "%s/", name);
    return MF_OK;
}

void mf_graph_pop_scope(MfGraph *g, int mark)
{
    g->scope[mark] = '\0';
}

MfStatus mf_graph_push_control(MfGraph *g, int n, MfNode *const *deps, int *mark)
{
    for (int i = 0; i < n; i++)
        if (deps[i]->graph != g)
            return mf_err_set(MF_EARG, "control_dependencies: item %d ('%s') is in another "
                              "graph", i + 1, deps[i]->name);
    if (g->nctrl + n > g->ctrl_cap) {
        int cap = 2 * (g->nctrl + n);
        int *p = mf_realloc(g->ctrl, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("control_dependencies", (unsigned long long)cap * sizeof *p);
        g->ctrl = p;
        g->ctrl_cap = cap;
    }
    *mark = g->nctrl;
    for (int i = 0; i < n; i++)
        g->ctrl[g->nctrl++] = deps[i]->index;
    return MF_OK;
}

void mf_graph_pop_control(MfGraph *g, int mark)
{
    g->nctrl = mark;
}

MfStatus mf_graph_add_control(MfNode *n, MfNode *dep)
{
    if (n->graph != dep->graph)
        return mf_err_set(MF_EARG, "control_dependencies: '%s' and '%s' are in different "
                          "graphs", n->name, dep->name);
    int *p = mf_realloc(n->control, (size_t)(n->ncontrol + 1) * sizeof *p);
    if (!p)
        return mf_err_nomem("control_dependencies", sizeof *p);
    n->control = p;
    n->control[n->ncontrol++] = dep->index;
    return MF_OK;
}

/* ---- placeholders, constants, groups ------------------------------------- */

MfStatus mf_graph_placeholder(MfGraph *g, MfDType dt, int rank, const int64_t *shape,
                              const char *name, MfTensor **out)
{
    *out = NULL;
    if (mf_graph_check_name(g, "placeholder", name) != MF_OK)
        return MF_EARG;
    bool any = rank == -1;
    if (any)
        rank = 0;
    if (rank < 0 || rank > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "placeholder: rank %d (at most %d)", rank, MF_MAX_RANK);
    for (int i = 0; i < rank; i++)
        if (shape[i] < -1)
            return mf_err_set(MF_ESHAPE, "placeholder: dim %d is %lld (sizes are >= 0, or -1 "
                              "for unknown)", i + 1, (long long)shape[i]);
    if (mf_shape_check(dt, rank, shape) != MF_OK) {
        mf_err_prefix("placeholder");
        return MF_ESHAPE;
    }
    MfNode *n;
    MfStatus st = node_add(g, MF_NODE_PLACEHOLDER, "Placeholder", name, &n);
    if (st != MF_OK)
        return st;
    n->noutputs = 1;
    n->any_shape = any;
    n->out[0].dtype = dt;
    n->out[0].rank = rank;
    if (rank > 0)
        memcpy(n->out[0].shape, shape, (size_t)rank * sizeof *shape);
    *out = mf_graph_output(n, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

static MfStatus add_constant(MfGraph *g, MfTensor *value, const char *name, MfNode **out)
{
    MfStatus st = node_add(g, MF_NODE_CONST, "Const", name, out);
    if (st != MF_OK)
        return st;
    MfNode *n = *out;
    mf_tensor_retain(value);
    n->value = value;
    n->noutputs = 1;
    n->out[0].dtype = value->dtype;
    n->out[0].rank = value->rank;
    memcpy(n->out[0].shape, value->shape, (size_t)value->rank * sizeof *value->shape);
    return MF_OK;
}

MfStatus mf_graph_constant(MfGraph *g, MfTensor *value, const char *name, MfTensor **out)
{
    *out = NULL;
    if (mf_graph_check_name(g, "constant", name) != MF_OK)
        return MF_EARG;
    if (value->node)
        return mf_err_set(MF_EARG, "constant: the value is a graph tensor, not a value");
    MfNode *n;
    MfStatus st = add_constant(g, value, name, &n);
    if (st != MF_OK)
        return st;
    *out = mf_graph_output(n, 0);
    return *out ? MF_OK : MF_ENOMEM;
}

MfStatus mf_graph_group(MfGraph *g, int n, MfNode *const *deps, const char *name,
                        MfNode **node)
{
    int mark;
    if (mf_graph_check_name(g, "group", name) != MF_OK)
        return MF_EARG;
    for (int i = 0; i < n; i++)   /* checked here so the message names group */
        if (deps[i]->graph != g)
            return mf_err_set(MF_EARG, "group: item %d ('%s') is in another graph", i + 1,
                              deps[i]->name);
    MfStatus st = mf_graph_push_control(g, n, deps, &mark);
    if (st != MF_OK)
        return st;
    st = node_add(g, MF_NODE_NOOP, "NoOp", name, node);
    mf_graph_pop_control(g, mark);
    return st;
}

/* ---- the builder ------------------------------------------------------------ */

/* The graph an op with inputs 'c' is built into: the default one, else
 * that of its first symbolic input. Checks every symbolic input is in it. */
static MfGraph *target_graph(const MfOpCall *c)
{
    const char *api = mf_op_table[c->op]->api;
    MfGraph *g = mf_graph_default();
    for (int i = 0; i < c->ninputs && !g; i++)
        g = mf_tensor_graph(c->inputs[i]);
    for (int i = 0; i < c->ninputs; i++) {
        MfGraph *h = mf_tensor_graph(c->inputs[i]);
        if (h && h != g) {
            mf_err_set(MF_EARG, "%s: input %d ('%s') is a tensor of another graph; build every "
                       "input in the same graph", api, i + 1,
                       ((MfNode *)c->inputs[i]->node)->name);
            return NULL;
        }
    }
    return g;
}

/* The slot of the constant table for the tensor with id 'id'. A Const node
 * holds its value, so an id (unique per process) stays meaningful. */
static int *const_slot(const MfGraph *g, int64_t id)
{
    size_t mask = (size_t)g->consts_cap - 1;
    size_t i = ((size_t)id * 11400714819323198485ull) & mask;
    while (g->consts[i] && g->nodes[g->consts[i] - 1]->value->id != id)
        i = (i + 1) & mask;
    return &g->consts[i];
}

static MfStatus consts_grow(MfGraph *g)
{
    int old_cap = g->consts_cap, *old = g->consts;
    int cap = old_cap ? 2 * old_cap : 32;
    g->consts = mf_calloc((size_t)cap, sizeof *g->consts);
    if (!g->consts) {
        g->consts = old;
        return mf_err_nomem("graph", (unsigned long long)cap * sizeof *old);
    }
    g->consts_cap = cap;
    for (int i = 0; i < old_cap; i++)
        if (old[i])
            *const_slot(g, g->nodes[old[i] - 1]->value->id) = old[i];
    mf_free(old);
    return MF_OK;
}

MfStatus mf_graph_const_for_(MfGraph *g, MfTensor *t, MfNode **out);

/* The Const node holding 't', made on first use: a tensor used twice in a
 * graph is one node. */
MfStatus mf_graph_const_for_(MfGraph *g, MfTensor *t, MfNode **out)
{
    if (2 * (g->consts_count + 1) > g->consts_cap) {
        MfStatus st = consts_grow(g);
        if (st != MF_OK)
            return st;
    }
    int *slot = const_slot(g, t->id);
    if (*slot) {
        *out = g->nodes[*slot - 1];
        return MF_OK;
    }
    MfStatus st = add_constant(g, t, NULL, out);
    if (st == MF_OK) {
        *slot = (*out)->index + 1;
        g->consts_count++;
    }
    return st;
}

MfNode *mf_graph_find_const_(const MfGraph *g, const MfTensor *t)
{
    if (!g->consts_cap)
        return NULL;
    int *slot = const_slot(g, t->id);
    return *slot ? g->nodes[*slot - 1] : NULL;
}

/* Resolves the op's inputs to (node, output) pairs; concrete tensors
 * become Const nodes. 'ins' is owned by the caller. */
static MfStatus resolve_inputs(MfGraph *g, const MfOpCall *c, MfNodeInput *ins)
{
    for (int i = 0; i < c->ninputs; i++) {
        MfTensor *t = c->inputs[i];
        if (t->node) {
            ins[i].node = ((MfNode *)t->node)->index;
            ins[i].output = t->node_output;
            continue;
        }
        MfNode *k;
        MfStatus st = mf_graph_const_for_(g, t, &k);
        if (st != MF_OK)
            return st;
        ins[i].node = k->index;
        ins[i].output = 0;
    }
    return MF_OK;
}

MfStatus mf_graph_build_(void *self, MfOpCall *c, MfTensor **outs)
{
    (void)self;
    const MfOpDesc *d = mf_op_table[c->op];
    MfGraph *g = target_graph(c);
    if (!g)
        return MF_EARG;
    MfStatus st = d->infer(c);
    for (int i = 0; i < c->noutputs && st == MF_OK; i++)   /* no allocation checks them */
        if ((st = mf_shape_check(c->out[i].dtype, c->out[i].rank, c->out[i].shape)) != MF_OK)
            mf_err_prefix("%s", d->api);
    if (st != MF_OK)
        return st;
    MfNodeInput *ins = mf_malloc((size_t)(c->ninputs ? c->ninputs : 1) * sizeof *ins);
    if (!ins)
        return mf_err_nomem(d->api, (unsigned long long)c->ninputs * sizeof *ins);
    MfNode *n = NULL;
    /* A random op node counts its runs (core/rng.h) so that each run draws
     * fresh values, as TensorFlow 1's stateful random ops do. The counters
     * are the node's own: copied attributes never share them. */
    MfRngRuns *runs = NULL;
    st = resolve_inputs(g, c, ins);
    if (st == MF_OK && (d->flags & MF_OP_RANDOM) && !(runs = mf_rng_runs_new(d->api)))
        st = MF_ENOMEM;
    if (st == MF_OK)
        st = node_add(g, MF_NODE_OP, d->api, NULL, &n);
    if (st != MF_OK) {
        mf_rng_runs_free(runs);
        mf_free(ins);
        return st;
    }
    n->op = c->op;
    n->override = mf_grad_override(c->op);
    n->attrs = *c->attrs;
    n->attrs.runs = runs;
    n->inputs = ins;
    n->ninputs = c->ninputs;
    n->noutputs = c->noutputs;
    memcpy(n->out, c->out, (size_t)c->noutputs * sizeof *c->out);
    for (int i = 0; i < n->noutputs; i++)
        if (!(outs[i] = mf_graph_output(n, i)))
            return MF_ENOMEM;
    return MF_OK;
}
