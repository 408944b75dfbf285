/* fusion.c — the fusion pass (fusion.h; doc/design.md "Fusion"): which
 * nodes of a graph run together as one fused node.
 *
 * One pass from the last node back (consumers were made after their
 * producers): an elementwise node whose consumers all belong to one group
 * joins it when its output has the group's shape and dtype; any other
 * elementwise node, or a reduction, starts a group of its own. Groups of
 * one node are dropped. The plan depends on the graph alone (not on what a
 * run fetches: the executor runs a group unfused when a run fetches or
 * feeds one of its inner values), so print(g) and g:render show the same
 * groups every run uses, and it is cached in the graph until nodes are
 * added. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "fusion.h"
#include "graph_impl.h"

struct GraphFusion {
    bool off;               /* mf_graph_set_fusion(g, false) */
    MfFusionPlan *plan;     /* for the graph's nodes when it was made, or NULL */
};

static bool fusion_off;     /* mf.config{fusion = false} */

/* Ops whose output element is a function of the input elements at the same
 * (broadcast) position alone, computed the same wherever it sits: the ops
 * a group may chain. */
static const bool elementwise_op[MF_NOPS] = {
    [MF_OP_ADD] = true, [MF_OP_SUB] = true, [MF_OP_MUL] = true, [MF_OP_DIV] = true,
    [MF_OP_POW] = true, [MF_OP_MAXIMUM] = true, [MF_OP_MINIMUM] = true,
    [MF_OP_NEG] = true, [MF_OP_ABS] = true, [MF_OP_SIGN] = true, [MF_OP_SQUARE] = true,
    [MF_OP_SQRT] = true, [MF_OP_RSQRT] = true, [MF_OP_EXP] = true, [MF_OP_LOG] = true,
    [MF_OP_LOG1P] = true, [MF_OP_SIN] = true, [MF_OP_COS] = true, [MF_OP_TANH] = true,
    [MF_OP_SIGMOID] = true, [MF_OP_RELU] = true, [MF_OP_SOFTPLUS] = true,
    [MF_OP_FLOOR] = true, [MF_OP_CEIL] = true, [MF_OP_ROUND] = true, [MF_OP_TAN] = true,
    [MF_OP_SINH] = true, [MF_OP_COSH] = true, [MF_OP_ASIN] = true, [MF_OP_ACOS] = true,
    [MF_OP_ATAN] = true, [MF_OP_EXPM1] = true, [MF_OP_ERF] = true,
    [MF_OP_RECIPROCAL] = true, [MF_OP_ATANH] = true, [MF_OP_ASINH] = true,
    [MF_OP_GELU] = true, [MF_OP_GELU_GRAD] = true, [MF_OP_SILU] = true,
    [MF_OP_SILU_GRAD] = true, [MF_OP_ERFC] = true, [MF_OP_ACOSH] = true,
    [MF_OP_SQUARED_DIFFERENCE] = true, [MF_OP_SIGMOID_GRAD] = true, [MF_OP_TANH_GRAD] = true,
};

/* Reductions that may end a group (their first input a member). */
static const bool reduction_op[MF_NOPS] = {
    [MF_OP_SUM] = true, [MF_OP_MEAN] = true, [MF_OP_MAX] = true, [MF_OP_MIN] = true,
    [MF_OP_PROD] = true,
};

void mf_fusion_set_enabled(bool on)
{
    fusion_off = !on;
}

bool mf_fusion_enabled(void)
{
    return !fusion_off;
}

static void plan_free(MfFusionPlan *p);

/* Frees the state (graph.c calls it through MfGraphExt when the graph goes). */
static void fusion_free(void *state)
{
    struct GraphFusion *gf = state;
    plan_free(gf->plan);
    mf_free(gf);
}

static struct GraphFusion *fusion_state(MfGraph *g)
{
    MfGraphExt *slot = mf_graph_fusion_slot_(g);
    if (!slot->state && (slot->state = mf_calloc(1, sizeof(struct GraphFusion))))
        slot->free = fusion_free;
    else if (!slot->state)
        mf_err_nomem("fusion", sizeof(struct GraphFusion));
    return slot->state;
}

MfStatus mf_graph_set_fusion(MfGraph *g, bool on)
{
    struct GraphFusion *gf = fusion_state(g);
    if (!gf)
        return MF_ENOMEM;
    gf->off = !on;
    return MF_OK;
}

bool mf_graph_fusion_on(const MfGraph *g)
{
    const struct GraphFusion *gf = mf_graph_fusion_slot_((MfGraph *)g)->state;
    return !fusion_off && !(gf && gf->off);
}

static void plan_free(MfFusionPlan *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->ngroups; k++) {
        MfFusedGroup *fg = &p->groups[k];
        mf_free(fg->members);
        mf_free(fg->arg_start);
        mf_free(fg->args);
        mf_free(fg->inputs);
        mf_free(fg->label);
    }
    mf_free(p->groups);
    mf_free(p->group_of);
    mf_free(p);
}

/* ---- the pass ------------------------------------------------------------- */

/* What the pass reads of the graph: each node's consumers (data edges, as
 * CSR lists, with the input position) and whether another node waits for
 * it (a control input: it must run on its own); then, per node, the root
 * of the group it joined (-1: none). */
typedef struct Pass {
    const MfGraph *g;
    int nn;
    int *cstart, *cons, *cpos;
    bool *ctrl;
    int *root;
} Pass;

static void pass_free(Pass *p)
{
    mf_free(p->cstart);
    mf_free(p->cons);
    mf_free(p->cpos);
    mf_free(p->ctrl);
    mf_free(p->root);
}

static MfStatus pass_init(Pass *p, const MfGraph *g)
{
    int nn = p->nn = mf_graph_nnodes(g);
    p->g = g;
    p->cstart = mf_calloc((size_t)nn + 2, sizeof *p->cstart);
    p->ctrl = mf_calloc((size_t)nn + 1, sizeof *p->ctrl);
    p->root = mf_malloc(((size_t)nn + 1) * sizeof *p->root);
    if (!p->cstart || !p->ctrl || !p->root)
        return mf_err_nomem("fusion", ((unsigned long long)nn + 2) * 3 * sizeof(int));
    for (int i = 0; i < nn; i++) {
        const MfNode *n = mf_graph_node(g, i);
        p->root[i] = -1;
        for (int k = 0; k < n->ncontrol; k++)
            p->ctrl[n->control[k]] = true;
        for (int k = 0; k < n->ninputs; k++)
            p->cstart[n->inputs[k].node + 1]++;
    }
    for (int i = 0; i < nn; i++)
        p->cstart[i + 1] += p->cstart[i];
    size_t ne = (size_t)p->cstart[nn] + 1;
    p->cons = mf_malloc(ne * sizeof *p->cons);
    p->cpos = mf_malloc(ne * sizeof *p->cpos);
    int *fill = mf_malloc(((size_t)nn + 1) * sizeof *fill);
    if (!p->cons || !p->cpos || !fill) {
        mf_free(fill);
        return mf_err_nomem("fusion", (unsigned long long)ne * 2 * sizeof(int));
    }
    memcpy(fill, p->cstart, (size_t)nn * sizeof *fill);
    for (int i = 0; i < nn; i++) {
        const MfNode *n = mf_graph_node(g, i);
        for (int k = 0; k < n->ninputs; k++) {
            int at = fill[n->inputs[k].node]++;
            p->cons[at] = i;
            p->cpos[at] = k;
        }
    }
    mf_free(fill);
    return MF_OK;
}

static bool is_float(MfDType dt)
{
    return dt == MF_FLOAT32 || dt == MF_FLOAT64;
}

/* The elementwise spec of the group rooted at 'r': the root's output, or
 * a reduction's input. */
static const MfTensorSpec *group_spec(const MfGraph *g, int r)
{
    const MfNode *n = mf_graph_node(g, r);
    if (!reduction_op[n->op])
        return &n->out[0];
    return &mf_graph_node(g, n->inputs[0].node)->out[n->inputs[0].output];
}

static bool spec_equal(const MfTensorSpec *a, const MfTensorSpec *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* Whether every control input of node 'i' is one of node 'r''s too: a
 * group runs when its root may, so a member that waits for no more than
 * the root does still runs after what it waits for. (The nodes built
 * under one mf.control_dependencies, an optimizer's finite check under
 * AdamW's, share theirs.) */
static bool controls_within(const MfGraph *g, int i, int r)
{
    const MfNode *n = mf_graph_node(g, i), *root = mf_graph_node(g, r);
    for (int k = 0; k < n->ncontrol; k++) {
        bool found = false;
        for (int j = 0; j < root->ncontrol && !found; j++)
            found = root->control[j] == n->control[k];
        if (!found)
            return false;
    }
    return true;
}

/* The root of the group every consumer of node 'i' belongs to, when 'i'
 * may join it; else -1. */
static int joinable(const Pass *p, int i)
{
    const MfNode *n = mf_graph_node(p->g, i);
    if (!elementwise_op[n->op] || p->ctrl[i] || p->cstart[i] == p->cstart[i + 1])
        return -1;
    int r = p->root[p->cons[p->cstart[i]]];
    for (int k = p->cstart[i]; k < p->cstart[i + 1] && r >= 0; k++) {
        int c = p->cons[k];
        bool into_reduction = c == r && reduction_op[mf_graph_node(p->g, c)->op];
        if (p->root[c] != r || (into_reduction && p->cpos[k] != 0))
            r = -1;
    }
    return r >= 0 && spec_equal(&n->out[0], group_spec(p->g, r)) && controls_within(p->g, i, r)
               ? r : -1;
}

/* Assigns every node its group's root (one pass from the last node). */
static void assign_roots(Pass *p)
{
    for (int i = p->nn - 1; i >= 0; i--) {
        const MfNode *n = mf_graph_node(p->g, i);
        if (n->kind != MF_NODE_OP || n->noutputs != 1 || !is_float(n->out[0].dtype) ||
            !(elementwise_op[n->op] || (reduction_op[n->op] && n->ninputs == 1)))
            continue;
        int r = joinable(p, i);
        p->root[i] = r >= 0 ? r : i;
    }
}

/* ---- the groups ------------------------------------------------------------ */

/* The external input 'in' of 'fg' as an argument (-(k + 1)), added when new. */
static int external_arg(MfFusedGroup *fg, MfNodeInput in)
{
    for (int k = 0; k < fg->ninputs; k++)
        if (fg->inputs[k].node == in.node && fg->inputs[k].output == in.output)
            return -(k + 1);
    fg->inputs[fg->ninputs++] = in;
    return -fg->ninputs;
}

/* Fills the arguments, inputs and label of 'fg' (its members are set);
 * 'pos' maps a member's node index to its position. */
static MfStatus describe_group(const MfGraph *g, MfFusedGroup *fg, const int *pos)
{
    int nargs = 0;
    size_t label_len = 16;
    for (int m = 0; m < fg->nmembers; m++) {
        const MfNode *n = mf_graph_node(g, fg->members[m]);
        nargs += n->ninputs;
        label_len += strlen(mf_node_op_name(n)) + 2;
    }
    fg->arg_start = mf_malloc(((size_t)fg->nmembers + 1) * sizeof *fg->arg_start);
    fg->args = mf_malloc(((size_t)nargs + 1) * sizeof *fg->args);
    fg->inputs = mf_malloc(((size_t)nargs + 1) * sizeof *fg->inputs);
    fg->label = mf_malloc(label_len);
    if (!fg->arg_start || !fg->args || !fg->inputs || !fg->label)
        return mf_err_nomem("fusion", (unsigned long long)label_len + (size_t)nargs * 12);
    int a = 0;
    size_t used = (size_t)snprintf(fg->label, label_len, "Fused[");
    for (int m = 0; m < fg->nmembers; m++) {
        const MfNode *n = mf_graph_node(g, fg->members[m]);
        fg->arg_start[m] = a;
        for (int k = 0; k < n->ninputs; k++) {
            int p = pos[n->inputs[k].node];
            fg->args[a++] = p >= 0 ? p : external_arg(fg, n->inputs[k]);
        }
        used += (size_t)snprintf(fg->label + used, label_len - used, "%s%s", m ? ", " : "",
                                 mf_node_op_name(n));
    }
    fg->arg_start[fg->nmembers] = a;
    snprintf(fg->label + used, label_len - used, "]");
    return MF_OK;
}

/* The members of the group rooted at 'r' (node indices in order), their
 * positions in 'pos' (left at -1 for the other nodes after the call). */
static MfStatus collect_group(const Pass *p, int r, int count, MfFusedGroup *fg, int *pos)
{
    fg->root = r;
    fg->reduces = reduction_op[mf_graph_node(p->g, r)->op];
    fg->members = mf_malloc((size_t)count * sizeof *fg->members);
    if (!fg->members)
        return mf_err_nomem("fusion", (unsigned long long)count * sizeof *fg->members);
    for (int i = 0; i <= r; i++)
        if (p->root[i] == r) {
            pos[i] = fg->nmembers;
            fg->members[fg->nmembers++] = i;
        }
    MfStatus st = describe_group(p->g, fg, pos);
    for (int m = 0; m < fg->nmembers; m++)
        pos[fg->members[m]] = -1;
    return st;
}

/* The groups of two nodes or more, from the roots 'p' assigned. */
static MfStatus make_groups(const Pass *p, MfFusionPlan *plan)
{
    int nn = p->nn, *count = mf_calloc((size_t)nn + 1, sizeof *count);
    int *pos = mf_malloc(((size_t)nn + 1) * sizeof *pos);
    plan->groups = mf_calloc((size_t)nn / 2 + 1, sizeof *plan->groups);
    if (!count || !pos || !plan->groups) {
        mf_free(count);
        mf_free(pos);
        return mf_err_nomem("fusion", ((unsigned long long)nn + 1) * sizeof(MfFusedGroup));
    }
    for (int i = 0; i < nn; i++) {
        pos[i] = -1;
        if (p->root[i] >= 0)
            count[p->root[i]]++;
    }
    MfStatus st = MF_OK;
    for (int r = 0; r < nn && st == MF_OK; r++) {
        if (count[r] < 2)
            continue;
        MfFusedGroup *fg = &plan->groups[plan->ngroups++];
        st = collect_group(p, r, count[r], fg, pos);
        for (int m = 0; m < fg->nmembers; m++)
            plan->group_of[fg->members[m]] = plan->ngroups - 1;
    }
    mf_free(count);
    mf_free(pos);
    return st;
}

static MfStatus build_plan(const MfGraph *g, MfFusionPlan **out)
{
    Pass p = {0};
    MfFusionPlan *plan = mf_calloc(1, sizeof *plan);
    MfStatus st = plan ? pass_init(&p, g) : mf_err_nomem("fusion", sizeof *plan);
    if (st == MF_OK) {
        plan->nnodes = p.nn;
        plan->group_of = mf_malloc(((size_t)p.nn + 1) * sizeof *plan->group_of);
        if (!plan->group_of)
            st = mf_err_nomem("fusion", ((unsigned long long)p.nn + 1) * sizeof(int));
        for (int i = 0; i < p.nn && st == MF_OK; i++)
            plan->group_of[i] = -1;
    }
    if (st == MF_OK) {
        assign_roots(&p);
        st = make_groups(&p, plan);
    }
    pass_free(&p);
    if (st != MF_OK) {
        plan_free(plan);
        plan = NULL;
    }
    *out = plan;
    return st;
}

/* Control edges: besides new nodes, what changes a plan (a member may not
 * take part in one; graph/variables.c adds some to existing nodes). */
static int64_t control_edges(const MfGraph *g)
{
    int64_t n = 0;
    for (int i = 0; i < mf_graph_nnodes(g); i++)
        n += mf_graph_node(g, i)->ncontrol;
    return n;
}

MfStatus mf_fusion_plan_any(MfGraph *g, const MfFusionPlan **out)
{
    *out = NULL;
    struct GraphFusion *gf = fusion_state(g);
    if (!gf)
        return MF_ENOMEM;
    int64_t ncontrol = control_edges(g);
    if (!gf->plan || gf->plan->nnodes != mf_graph_nnodes(g) || gf->plan->ncontrol != ncontrol) {
        MfFusionPlan *plan;
        MfStatus st = build_plan(g, &plan);
        if (st != MF_OK)
            return st;
        plan->ncontrol = ncontrol;
        plan_free(gf->plan);
        gf->plan = plan;
    }
    *out = gf->plan;
    return MF_OK;
}

MfStatus mf_fusion_plan(MfGraph *g, const MfFusionPlan **out)
{
    *out = NULL;
    return mf_graph_fusion_on(g) ? mf_fusion_plan_any(g, out) : MF_OK;
}
