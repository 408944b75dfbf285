/* exec.c — the in-degree executor (doc/design.md "The in-degree executor").
 *
 * One run: prune the graph to the ancestors of the fetches and targets
 * (data and control edges; a fed tensor cuts the edge to its producer),
 * build the in-degree table and each node's consumer list, queue every
 * node of in-degree 0 in creation order, then pop (FIFO), run, decrement
 * consumers and queue those that reach 0. A value is released when its
 * last consumer in this run has run (fetched values are kept), so peak
 * memory follows the live set. Nonblocking collectives (core/collective.h)
 * change the order: urgent nodes, a start (MF_OP_ASYNC_START) and the
 * nodes that only feed urgent ones (the backward pass, a bucket's packing),
 * run first, smallest output first; a wait (MF_OP_ASYNC_WAIT) goes to a second queue
 * that runs only when the first is empty; a start with no other urgent node
 * ready has nothing to overlap and reduces at once (the blocking call);
 * while a started collective is pending the transport is driven between
 * nodes; a run ends (also on an error) with none pending. So
 * DistributedOptimizer's allreduce of the last layers' gradients travels
 * while the backward pass computes the first layers'. Fewer nodes run than
 * needed means a cycle: the error walks back through unrun producers to
 * name one. Ctrl-C
 * (mf_interrupted) is checked between nodes. In a session, writes to
 * variables are staged and committed once every needed node has run, so a
 * failed train step changes nothing (staged_writes.h).
 *
 * Nodes run through the dispatcher with the builder switched off
 * (mf_op_exec_enter, core/op.h), so ops execute eagerly even inside as_default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/collective.h"
#include "core/numerics.h"
#include "core/profile/profile.h"
#include "core/shape.h"
#include "fusion.h"
#include "graph.h"
#include "staged_writes.h"

enum { UNNEEDED = 0, NEEDED = 1, DONE = 2 };

typedef struct Run {
    MfGraph *g;
    int nn;
    char *state;         /* per node: UNNEEDED, NEEDED, DONE */
    int *indeg;          /* remaining in-degree per node */
    int *indeg0;         /* in-degree in the table, for the schedule */
    int *cstart, *cons;  /* consumers of node i: cons[cstart[i] .. cstart[i+1]) */
    MfTensor **vals;     /* nn * MF_MAX_OUTPUTS, owned */
    MfTensor **fed;      /* nn * MF_MAX_OUTPUTS, borrowed */
    int *uses;           /* remaining consumers per value */
    int *queue;
    int qhead, qtail;
    int *late;           /* ready wait nodes (MF_OP_ASYNC_WAIT), run when 'queue' is empty */
    char *urgent;        /* per node: a start, or feeds only urgent nodes (run first) */
    int64_t *size;       /* per urgent node: elements of its first output (unknown dims: 64) */
    int nurgent;         /* urgent nodes in 'queue' */
    int lhead, ltail;
    int nneeded;
    MfSchedule *sched;
    MfVarStore *vars;    /* the session's variable values, or NULL */
    MfStagedWrites staged; /* the session's writes, committed at the end */
    int failed;          /* the node whose run failed, or -1 */
    const MfFusionPlan *plan; /* the graph's fused groups (fusion.h), or NULL: fusion off */
    char *fused;         /* per group: it runs fused in this run */
} Run;

MfStatus mf_exec_eager(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                       MfTensor **out)
{
    mf_op_exec_enter();
    MfStatus st = mf_op1(op, ninputs, inputs, attrs, out);
    mf_op_exec_leave();
    return st;
}

void mf_schedule_free(MfSchedule *s)
{
    if (s) {
        mf_free(s->steps);
        mf_free(s);
    }
}

static void run_free(Run *r)
{
    mf_staged_free(&r->staged); /* not committed (the run failed): never written */
    /* Most slots are empty by now (values die after their last consumer):
     * test before calling, this loop runs over every node of the graph. */
    if (r->vals)
        for (int i = 0; i < r->nn * MF_MAX_OUTPUTS; i++)
            if (r->vals[i])
                mf_tensor_release(r->vals[i]);
    mf_free(r->state);
    mf_free(r->indeg);
    mf_free(r->indeg0);
    mf_free(r->cstart);
    mf_free(r->cons);
    mf_free(r->vals);
    mf_free(r->fed);
    mf_free(r->uses);
    mf_free(r->queue);
    mf_free(r->late);
    mf_free(r->urgent);
    mf_free(r->size);
    mf_free(r->fused);
    mf_schedule_free(r->sched);
}

static MfStatus run_alloc(Run *r, MfGraph *g)
{
    int nn = mf_graph_nnodes(g);
    size_t nv = (size_t)nn * MF_MAX_OUTPUTS + 1;
    r->g = g;
    r->nn = nn;
    r->state = mf_calloc((size_t)nn + 1, 1);
    r->indeg = mf_calloc((size_t)nn + 1, sizeof *r->indeg);
    r->indeg0 = mf_calloc((size_t)nn + 1, sizeof *r->indeg0);
    r->cstart = mf_calloc((size_t)nn + 2, sizeof *r->cstart);
    r->vals = mf_calloc(nv, sizeof *r->vals);
    r->fed = mf_calloc(nv, sizeof *r->fed);
    r->uses = mf_calloc(nv, sizeof *r->uses);
    r->queue = mf_calloc((size_t)nn + 1, sizeof *r->queue);
    r->late = mf_calloc((size_t)nn + 1, sizeof *r->late);
    r->urgent = mf_calloc((size_t)nn + 1, 1);
    r->size = mf_calloc((size_t)nn + 1, sizeof *r->size);
    if (!r->state || !r->indeg || !r->indeg0 || !r->cstart || !r->vals || !r->fed || !r->uses ||
        !r->queue || !r->late || !r->urgent || !r->size)
        return mf_err_nomem("run", (unsigned long long)nv * 3 * sizeof(void *));
    return MF_OK;
}

static int slot(MfNodeInput in)
{
    return in.node * MF_MAX_OUTPUTS + in.output;
}

static MfNodeInput edge_of(const MfTensor *t)
{
    MfNodeInput e = {((const MfNode *)t->node)->index, t->node_output};
    return e;
}

/* The group node 'i' is the root of when it runs fused in this run, else NULL. */
static const MfFusedGroup *fused_root(const Run *r, int i)
{
    int k = r->fused ? r->plan->group_of[i] : -1;
    return k >= 0 && r->fused[k] && r->plan->groups[k].root == i ? &r->plan->groups[k] : NULL;
}

/* The data inputs of node 'n' in this run: a fused group's external inputs
 * for its root (its other members do not run on their own). */
static const MfNodeInput *node_inputs(const Run *r, const MfNode *n, int *count)
{
    const MfFusedGroup *fg = fused_root(r, n->index);
    *count = fg ? fg->ninputs : n->ninputs;
    return fg ? fg->inputs : n->inputs;
}

/* ---- checking fetches and feeds ------------------------------------------- */

static MfStatus check_tensor(const Run *r, const MfTensor *t, const char *what, int i)
{
    char name[300];
    if (!t || !t->node)
        return mf_err_set(MF_EARG, "run: %s %d is not a graph tensor (it already has values)",
                          what, i + 1);
    if (mf_tensor_graph(t) != r->g)
        return mf_err_set(MF_EARG, "run: %s %d ('%s') is a tensor of another graph, not of "
                          "this session's graph", what, i + 1,
                          mf_graph_tensor_name(t, name, sizeof name));
    return MF_OK;
}

static bool shape_fits(const MfTensor *v, const MfTensor *t)
{
    if (v->rank != t->rank)
        return false;
    for (int i = 0; i < t->rank; i++)
        if (t->shape[i] >= 0 && t->shape[i] != v->shape[i])
            return false;
    return true;
}

/* The feed's value against its key (checked by check_tensor and registered
 * already). */
static MfStatus check_feed(const MfTensor *t, const MfTensor *v)
{
    char name[300], want[MF_MAX_RANK * 24 + 8], got[MF_MAX_RANK * 24 + 8];
    mf_graph_tensor_name(t, name, sizeof name);
    const char *kind = ((MfNode *)t->node)->kind == MF_NODE_PLACEHOLDER ? "placeholder" : "tensor";
    if (!v || v->node)
        return mf_err_set(MF_EARG, "run: the value fed to '%s' must be a tensor with values",
                          name);
    if (v->dtype != t->dtype)
        return mf_err_set(MF_EDTYPE, "run: the value fed to %s '%s' has dtype %s, expected %s "
                          "(use mf.cast)", kind, name, mf_dtype_name(v->dtype),
                          mf_dtype_name(t->dtype));
    if (!((MfNode *)t->node)->any_shape && !shape_fits(v, t))
        return mf_err_set(MF_ESHAPE, "run: the value fed to %s '%s' has shape %s, expected %s",
                          kind, name, mf_shape_str(v->rank, v->shape, got, sizeof got),
                          mf_shape_str(t->rank, t->shape, want, sizeof want));
    return MF_OK;
}

/* ---- pruning and the in-degree table -------------------------------------- */

/* Marks the ancestors of the stacked nodes as needed (iterative DFS). */
static void mark_needed(Run *r, int *stack, int top)
{
    while (top > 0) {
        int i = stack[--top];
        if (r->state[i])
            continue;
        r->state[i] = NEEDED;
        r->nneeded++;
        const MfNode *n = mf_graph_node(r->g, i);
        int nin;
        const MfNodeInput *in = node_inputs(r, n, &nin);
        for (int k = 0; k < nin; k++)
            if (!r->fed[slot(in[k])] && !r->state[in[k].node])
                stack[top++] = in[k].node;
        for (int k = 0; k < n->ncontrol; k++)
            if (!r->state[n->control[k]])
                stack[top++] = n->control[k];
    }
}

/* The stack may hold a node once per incoming edge, so it is sized by the
 * number of edges (plus the roots). */
static MfStatus prune(Run *r, int nfetch, MfTensor *const *fetches, int ntargets,
                      MfNode *const *targets)
{
    size_t cap = (size_t)nfetch + (size_t)ntargets + 1;
    for (int i = 0; i < r->nn; i++) {
        const MfNode *n = mf_graph_node(r->g, i);
        cap += (size_t)n->ninputs + (size_t)n->ncontrol;
    }
    int *stack = mf_malloc(cap * sizeof *stack);
    if (!stack)
        return mf_err_nomem("run", (unsigned long long)cap * sizeof *stack);
    int top = 0;
    for (int i = 0; i < nfetch; i++)
        if (!r->fed[slot(edge_of(fetches[i]))])
            stack[top++] = edge_of(fetches[i]).node;
    for (int i = 0; i < ntargets; i++)
        stack[top++] = targets[i]->index;
    mark_needed(r, stack, top);
    mf_free(stack);
    return MF_OK;
}

/* Adds 1 to the in-degree of 'n' and records it as a consumer of 'p'
 * ('fill': second pass, writes the consumer lists). */
static void add_edge(Run *r, int p, int n, bool fill, int *pos)
{
    if (fill) {
        r->cons[pos[p]++] = n;
    } else {
        r->indeg[n]++;
        r->cstart[p + 1]++;
    }
}

static void scan_edges(Run *r, bool fill, int *pos)
{
    for (int i = 0; i < r->nn; i++) {
        if (r->state[i] != NEEDED)
            continue;
        const MfNode *n = mf_graph_node(r->g, i);
        int nin;
        const MfNodeInput *in = node_inputs(r, n, &nin);
        for (int k = 0; k < nin; k++) {
            if (r->fed[slot(in[k])])
                continue;
            if (!fill)
                r->uses[slot(in[k])]++;
            add_edge(r, in[k].node, i, fill, pos);
        }
        for (int k = 0; k < n->ncontrol; k++)
            add_edge(r, n->control[k], i, fill, pos);
    }
}

static unsigned op_flags(const Run *r, int i)
{
    const MfNode *n = mf_graph_node(r->g, i);
    return n->kind == MF_NODE_OP ? mf_op_table[n->op]->flags : 0;
}

static int64_t out_size(const MfNode *n)
{
    int64_t e = 1;
    for (int d = 0; d < n->out[0].rank; d++)
        e *= n->out[0].shape[d] >= 0 ? n->out[0].shape[d] : 64;
    return e;
}

/* Urgent: the nonblocking collectives' starts and the nodes whose every
 * consumer is urgent (the backward pass, a bucket's packing: what the
 * gradients of a bucket wait for). Consumers were made after their
 * producers: one pass from the last node back. */
static void mark_urgent(Run *r)
{
    for (int i = r->nn - 1; i >= 0; i--) {
        if (r->state[i] != NEEDED)
            continue;
        bool all = r->cstart[i + 1] > r->cstart[i];
        for (int k = r->cstart[i]; k < r->cstart[i + 1] && all; k++)
            all = r->urgent[r->cons[k]];
        r->urgent[i] = (op_flags(r, i) & MF_OP_ASYNC_START) || all;
        r->size[i] = out_size(mf_graph_node(r->g, i));
    }
}

/* Queues ready node 'i' (FIFO), a nonblocking collective's wait apart. */
static void enqueue(Run *r, int i)
{
    r->nurgent += r->urgent[i];
    if (op_flags(r, i) & MF_OP_ASYNC_WAIT)
        r->late[r->ltail++] = i;
    else
        r->queue[r->qtail++] = i;
}

/* The next node: while urgent nodes are ready, the urgent one with the
 * smallest output (then the first made), moved to the head: small work
 * first (a bias's gradient, a bucket's packing, a start), so buckets start
 * early and the large gradient (a first layer's weights) comes last, when
 * its allreduce has nothing left to overlap; otherwise FIFO, then waits. */
static int next_node(Run *r)
{
    if (r->qhead == r->qtail)
        return r->late[r->lhead++];
    if (r->nurgent > 0) {
        int best = -1;
        for (int q = r->qhead; q < r->qtail; q++) {
            int i = r->queue[q];
            if (r->urgent[i] && (best < 0 || r->size[i] < r->size[r->queue[best]] ||
                                 (r->size[i] == r->size[r->queue[best]] && i < r->queue[best])))
                best = q;
        }
        int i = r->queue[best];
        memmove(r->queue + r->qhead + 1, r->queue + r->qhead,
                (size_t)(best - r->qhead) * sizeof *r->queue);
        r->queue[r->qhead] = i;
    }
    return r->queue[r->qhead++];
}

static MfStatus build_table(Run *r)
{
    scan_edges(r, false, NULL);
    for (int i = 0; i < r->nn; i++)
        r->cstart[i + 1] += r->cstart[i];
    size_t ne = (size_t)r->cstart[r->nn] + 1;
    r->cons = mf_malloc(ne * sizeof *r->cons);
    int *pos = mf_malloc(((size_t)r->nn + 1) * sizeof *pos);
    if (!r->cons || !pos) {
        mf_free(pos);
        return mf_err_nomem("run", (unsigned long long)ne * sizeof *r->cons);
    }
    memcpy(pos, r->cstart, (size_t)r->nn * sizeof *pos);
    scan_edges(r, true, pos);
    mf_free(pos);
    memcpy(r->indeg0, r->indeg, (size_t)r->nn * sizeof *r->indeg);
    mark_urgent(r);
    for (int i = 0; i < r->nn; i++)
        if (r->state[i] == NEEDED && r->indeg[i] == 0)
            enqueue(r, i);
    return MF_OK;
}

/* ---- running one node ------------------------------------------------------ */

static MfStatus missing_feed(const MfNode *n)
{
    char shape[MF_MAX_RANK * 24 + 8];
    mf_shape_str(n->out[0].rank, n->out[0].shape, shape, sizeof shape);
    return mf_err_set(MF_EARG, "run: placeholder '%s' (dtype %s, shape %s) must be fed: "
                      "sess:run(fetches, {[%s] = value})", n->name,
                      mf_dtype_name(n->out[0].dtype), shape, n->name);
}

static MfTensor *input_value(const Run *r, MfNodeInput in)
{
    MfTensor *f = r->fed[slot(in)];
    return f ? f : r->vals[slot(in)];
}

static MfStatus take_inplace(Run *r, const MfNode *n, MfTensor **in);

static MfStatus run_op(Run *r, const MfNode *n)
{
    MfTensor *small[8];
    MfTensor **in = n->ninputs <= 8 ? small : mf_malloc((size_t)n->ninputs * sizeof *in);
    if (!in)
        return mf_err_nomem("run", (unsigned long long)n->ninputs * sizeof *in);
    for (int k = 0; k < n->ninputs; k++)
        in[k] = input_value(r, n->inputs[k]);
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    mf_prof_set_node(n->name);
    if (mf_numerics_on)
        mf_numerics_set_node(n->name, n->made);
    bool inplace = mf_op_table[n->op]->inplace > 0;
    bool staged = inplace && mf_staged_can_stage_op(&r->staged, n, r->fed);
    MfStatus st = inplace ? take_inplace(r, n, in) : MF_OK;
    if (st == MF_OK && staged)
        st = mf_staged_add_op(&r->staged, n, in);  /* written at the end of the run */
    if (st == MF_OK && !staged)
        st = mf_op_call(n->op, n->ninputs, in, &n->attrs, outs, &nout);
    mf_prof_set_node(NULL);
    mf_numerics_set_node(NULL, NULL);
    if (in != small)
        mf_free(in);
    if (st != MF_OK) {
        mf_err_prefix("run: node '%s' (%s)", n->name, mf_node_op_name(n));
        return st;
    }
    if (staged)
        return MF_OK; /* its outputs come with its commit */
    for (int k = 0; k < MF_MAX_OUTPUTS; k++)
        r->vals[n->index * MF_MAX_OUTPUTS + k] = outs[k];
    return MF_OK;
}

/* ---- variables: reading and assigning (values in the session's store) -------- */

/* True when the value of VARIABLE 'var' flows (through ops) into another
 * variable's initializer: its initial value reads 'var'. */
static bool feeds_initializer(const MfGraph *g, const MfNode *var)
{
    int nn = mf_graph_nnodes(g);
    char *reach = mf_calloc((size_t)nn, 1);
    if (!reach)
        return false;
    reach[var->index] = 1;
    bool found = false;
    for (int i = var->index + 1; i < nn && !found; i++) {
        const MfNode *n = mf_graph_node(g, i);
        for (int k = 0; k < n->ninputs && !reach[i]; k++)
            reach[i] = reach[n->inputs[k].node];
        if (!reach[i] || n->kind != MF_NODE_ASSIGN || n->ref < 0)
            continue;
        const MfNode *target = mf_graph_node(g, n->ref);
        found = target->kind == MF_NODE_VARIABLE && target->ref == i;
    }
    mf_free(reach);
    return found;
}

/* True when some variable of the store has a value (an initializer ran). */
static bool any_initialised(const MfVarStore *s)
{
    for (int i = 0; s && i < s->cap; i++)
        if (s->vals[i])
            return true;
    return false;
}

/* Says why 'var' has no value, with the likely cause: an initial value
 * reading it, a variable made after the initializer (an optimizer's
 * slots), or no initializer run at all. */
static MfStatus uninitialised(const Run *r, const MfNode *var)
{
    const char *hint =
        feeds_initializer(r->g, var)
            ? "; another variable's initial value reads it: use v:initialized_value() there"
        : any_initialised(r->vars)
            ? "; other variables are: was it made after the initializer was built (an "
              "optimizer's slots are made by minimize/apply_gradients)? Build "
              "mf.global_variables_initializer() after the model and the optimizer, or run "
              "mf.variables_initializer({...}) for the new ones"
            : "";
    return mf_err_set(MF_EARG, "run: variable '%s' is not initialised in this session: run "
                      "mf.global_variables_initializer() first (init = "
                      "mf.global_variables_initializer() while the graph is the default, then "
                      "sess:run(init))%s", var->name, hint);
}

/* The current value of VARIABLE node 'vi' (borrowed), or an error. */
static MfStatus var_value(const Run *r, int vi, MfTensor **out)
{
    const MfNode *var = mf_graph_node(r->g, vi);
    if (!r->vars)
        return mf_err_set(MF_EARG, "run: variable '%s' needs a session (mf_session_run) to hold "
                          "its value", var->name);
    *out = mf_varstore_get(r->vars, vi);
    return *out ? MF_OK : uninitialised(r, var);
}

/* The training ops write their first 'inplace' inputs (a variable and its
 * slots) in place: each must be a VARIABLE of this session, and 'in[k]'
 * becomes the store's tensor itself. This node's claim on the VARIABLE's
 * output is dropped when it is the last consumer, and a value someone
 * still holds (a fetch, a snapshot read earlier in the run) is copied into
 * the store first (copy-on-write), so what was read keeps its values. */
/* A captured eager variable (mf.trace) is written the same way: 'in[k]'
 * becomes its own value tensor, made its sole owner first. */
static MfStatus take_captured(Run *r, const MfNode *src, int s, MfTensor **in)
{
    MfVariable *v = src->var;
    if (r->uses[s] == 1) {
        mf_tensor_release(r->vals[s]);
        r->vals[s] = NULL;
    }
    MfTensor *cur = v->value;
    if (cur->refcount > 1 || cur->storage->refcount > 1 || !mf_tensor_is_contiguous(cur)) {
        MfTensor *copy = mf_tensor_clone(cur);
        if (!copy)
            return MF_ENOMEM;
        mf_tensor_release(v->value);
        v->value = copy;
    }
    *in = v->value;
    return MF_OK;
}

static MfStatus take_inplace(Run *r, const MfNode *n, MfTensor **in)
{
    for (int k = 0; k < mf_op_table[n->op]->inplace; k++) {
        const MfNode *src = mf_graph_node(r->g, n->inputs[k].node);
        int s = slot(n->inputs[k]);
        if (src->var && !r->fed[s] && (src->kind == MF_NODE_READ || src->kind == MF_NODE_ASSIGN)) {
            MfStatus st = take_captured(r, src, s, &in[k]);
            if (st != MF_OK)
                return st;
            continue;
        }
        if (src->kind != MF_NODE_VARIABLE || r->fed[s] || !r->vars)
            return mf_err_set(MF_EARG, "input %d ('%s') must be a graph variable: it is "
                              "updated in place", k + 1, src->name);
        if (r->uses[s] == 1) {
            mf_tensor_release(r->vals[s]);
            r->vals[s] = NULL;
        }
        MfTensor *cur = mf_varstore_get(r->vars, src->index);
        if (!cur)
            return uninitialised(r, src);
        if (cur->refcount > 1 || cur->storage->refcount > 1 || !mf_tensor_is_contiguous(cur)) {
            MfTensor *copy = mf_tensor_clone(cur);
            MfStatus st = copy ? mf_varstore_set(r->vars, src->index, copy) : MF_ENOMEM;
            mf_tensor_release(copy);
            if (st != MF_OK)
                return st;
        }
        in[k] = mf_varstore_get(r->vars, src->index);
    }
    return MF_OK;
}

/* VARIABLE and READ: the value now (a snapshot: assigns swap in new
 * tensors, so what was read stays as it was). A READ with an input
 * (v:initialized_value()) gives that input, the initial value, while the
 * variable is not initialised: TF1's cond(is_initialized, read, initial),
 * so initializers that read other variables work in any order. */
static MfStatus run_read(Run *r, const MfNode *n)
{
    MfTensor *v = NULL;
    MfStatus st = MF_OK;
    if (n->var)
        v = n->var->value;
    else if (n->kind == MF_NODE_READ && n->ninputs == 1 && !mf_varstore_get(r->vars, n->ref))
        v = input_value(r, n->inputs[0]);
    else
        st = var_value(r, n->kind == MF_NODE_VARIABLE ? n->index : n->ref, &v);
    if (st != MF_OK)
        return st;
    mf_tensor_retain(v);
    r->vals[n->index * MF_MAX_OUTPUTS] = v;
    return MF_OK;
}

/* value (op) x with the variable's shape kept, as mf_variable_assign_add. */
static MfStatus combine(const MfNode *n, MfTensor *cur, MfTensor *x, MfTensor **out)
{
    char want[MF_MAX_RANK * 24 + 8], got[MF_MAX_RANK * 24 + 8];
    MfStatus st = mf_binary(n->assign == MF_ASSIGN_ADD ? MF_OP_ADD : MF_OP_SUB, cur, x, out);
    if (st != MF_OK)
        return st;
    if (mf_shape_equal_t(cur, *out))
        return MF_OK;
    mf_shape_str(cur->rank, cur->shape, want, sizeof want);
    mf_shape_str(x->rank, x->shape, got, sizeof got);
    mf_tensor_release(*out);
    *out = NULL;
    return mf_err_set(MF_ESHAPE, "variable of shape %s, got %s", want, got);
}

/* The value ASSIGN 'n' gives its variable (owned in '*out'), checked. */
static MfStatus assign_value(Run *r, const MfNode *n, MfTensor *x, MfTensor **out)
{
    const MfNode *var = mf_graph_node(r->g, n->ref);
    MfTensor *cur = NULL;
    MfStatus st = MF_OK;
    if (n->assign == MF_ASSIGN_SET) {
        if (!r->vars)
            return var_value(r, n->ref, &cur);
        const MfTensorSpec *sp = &var->out[0];
        bool fits = x->dtype == sp->dtype && x->rank == sp->rank;
        for (int i = 0; fits && i < sp->rank; i++)
            fits = sp->shape[i] < 0 || sp->shape[i] == x->shape[i];
        if (!fits) {
            char want[MF_MAX_RANK * 24 + 8], got[MF_MAX_RANK * 24 + 8];
            return mf_err_set(MF_ESHAPE, "variable '%s' has shape %s %s, got %s %s", var->name,
                              mf_shape_str(sp->rank, sp->shape, want, sizeof want),
                              mf_dtype_name(sp->dtype),
                              mf_shape_str(x->rank, x->shape, got, sizeof got),
                              mf_dtype_name(x->dtype));
        }
        mf_tensor_retain(x);
        *out = x;
    } else {
        st = var_value(r, n->ref, &cur);
        if (st == MF_OK)
            st = combine(n, cur, x, out);
    }
    return st;
}

/* ASSIGN 'n' into the session's store: staged when the store already has
 * the variable's slot (the swap at commit then cannot fail), else at once
 * (a first initialisation may grow the store). */
static MfStatus assign_store(Run *r, const MfNode *n, MfTensor *x, MfTensor **out)
{
    bool staged = false;
    MfStatus st = assign_value(r, n, x, out);
    if (st == MF_OK)
        st = mf_staged_add_assign(&r->staged, n, *out, &staged);
    if (st == MF_OK && staged)
        return MF_OK;
    if (st == MF_OK)
        st = mf_varstore_set(r->vars, n->ref, *out);
    if (st != MF_OK) {
        mf_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

/* ASSIGN: into the session's store, or into a captured eager variable
 * (through the same functions as eager v:assign, so results agree). */
static MfStatus run_assign(Run *r, const MfNode *n)
{
    MfTensor *x = input_value(r, n->inputs[0]), *out = NULL;
    MfStatus st;
    if (n->var) {
        st = n->assign == MF_ASSIGN_ADD   ? mf_variable_assign_add(n->var, x)
             : n->assign == MF_ASSIGN_SUB ? mf_variable_assign_sub(n->var, x)
                                          : mf_variable_assign(n->var, x);
        out = n->var->value;
        mf_tensor_retain(out);
    } else {
        st = assign_store(r, n, x, &out);
    }
    if (st != MF_OK) {
        mf_tensor_release(out);
        mf_err_prefix("run: node '%s' (%s)", n->name, mf_node_op_name(n));
        return st;
    }
    r->vals[n->index * MF_MAX_OUTPUTS] = out;
    return MF_OK;
}

/* A fused group's root: the group as one node (fusion_run.c). */
static MfStatus run_fused(Run *r, const MfNode *n, const MfFusedGroup *fg)
{
    MfTensor *small[8];
    MfTensor **in = fg->ninputs <= 8 ? small : mf_malloc((size_t)fg->ninputs * sizeof *in);
    if (!in)
        return mf_err_nomem("run", (unsigned long long)fg->ninputs * sizeof *in);
    for (int k = 0; k < fg->ninputs; k++)
        in[k] = input_value(r, fg->inputs[k]);
    MfStatus st = mf_fusion_run(r->g, fg, in, &r->vals[n->index * MF_MAX_OUTPUTS]);
    if (in != small)
        mf_free(in);
    return st;
}

static MfStatus run_node(Run *r, const MfNode *n)
{
    const MfFusedGroup *fg = fused_root(r, n->index);
    if (fg)
        return run_fused(r, n, fg);
    switch (n->kind) {
    case MF_NODE_VARIABLE:
    case MF_NODE_READ:
        return run_read(r, n);
    case MF_NODE_ASSIGN:
        return run_assign(r, n);
    case MF_NODE_OP:
        return run_op(r, n);
    case MF_NODE_PLACEHOLDER: /* here only as a control input when fed */
        return r->fed[n->index * MF_MAX_OUTPUTS] ? MF_OK : missing_feed(n);
    case MF_NODE_CONST:
        mf_tensor_retain(n->value);
        r->vals[n->index * MF_MAX_OUTPUTS] = n->value;
        return MF_OK;
    default:
        return MF_OK;
    }
}

/* After 'n' ran: release the inputs it was the last consumer of, and its
 * own outputs that nothing in this run consumes. */
static void release_dead(Run *r, const MfNode *n)
{
    int nin;
    const MfNodeInput *in = node_inputs(r, n, &nin);
    for (int k = 0; k < nin; k++) {
        int s = slot(in[k]);
        if (!r->fed[s] && --r->uses[s] == 0) {
            mf_tensor_release(r->vals[s]);
            r->vals[s] = NULL;
        }
    }
    for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
        int s = n->index * MF_MAX_OUTPUTS + k;
        if (r->uses[s] == 0) {
            mf_tensor_release(r->vals[s]);
            r->vals[s] = NULL;
        }
    }
}

static void record_step(Run *r, int i)
{
    MfSchedStep *s = &r->sched->steps[r->sched->nsteps++];
    const MfFusedGroup *fg = fused_root(r, i);
    s->node = i;
    s->op = fg ? fg->label : NULL;
    s->indegree = r->indeg0[i];
    s->nready = r->qtail - r->qhead;
    for (int k = 0; k < s->nready && k < MF_SCHED_READY_MAX; k++)
        s->ready[k] = r->queue[r->qhead + k];
}

/* ---- cycles ------------------------------------------------------------------ */

/* An unrun predecessor of unrun node 'i' (one exists: its in-degree is > 0). */
static int unrun_pred(const Run *r, int i)
{
    const MfNode *n = mf_graph_node(r->g, i);
    int nin;
    const MfNodeInput *in = node_inputs(r, n, &nin);
    for (int k = 0; k < nin; k++)
        if (!r->fed[slot(in[k])] && r->state[in[k].node] == NEEDED)
            return in[k].node;
    for (int k = 0; k < n->ncontrol; k++)
        if (r->state[n->control[k]] == NEEDED)
            return n->control[k];
    return -1;
}

/* Walks back from an unrun node until a node repeats: that loop is a cycle.
 * 'path' and 'pos' reuse the queue and in-degree arrays. */
static MfStatus cycle_error(Run *r, int ran)
{
    int *path = r->queue, *pos = r->indeg0, len = 0, cur = 0;
    for (int i = 0; i < r->nn; i++)
        pos[i] = -1;
    while (r->state[cur] != NEEDED)
        cur++;
    while (cur >= 0 && pos[cur] < 0) {
        pos[cur] = len;
        path[len++] = cur;
        cur = unrun_pred(r, cur);
    }
    char msg[600] = "";
    size_t used = 0;
    int from = cur >= 0 ? pos[cur] : 0;
    if (cur >= 0)
        used = (size_t)snprintf(msg, sizeof msg, "%s", mf_graph_node(r->g, cur)->name);
    for (int k = len - 1; k >= from && used < sizeof msg - 80; k--)
        used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s", used ? " -> " : "",
                                 mf_graph_node(r->g, path[k])->name);
    return mf_err_set(MF_EARG, "run: the graph has a cycle (through control dependencies): "
                      "%s; %d of %d needed nodes could not run", msg, r->nneeded - ran,
                      r->nneeded);
}

/* ---- the loop ----------------------------------------------------------------- */

/* Whether node 'n' (every member, for a fused root) reads a staged write. */
static bool staged_seen(const Run *r, const MfNode *n)
{
    const MfFusedGroup *fg = fused_root(r, n->index);
    if (!fg)
        return mf_staged_seen_by(&r->staged, n, r->fed);
    for (int m = 0; m < fg->nmembers; m++)
        if (mf_staged_seen_by(&r->staged, mf_graph_node(r->g, fg->members[m]), r->fed))
            return true;
    return false;
}

static MfStatus execute(Run *r, const MfExecOptions *opt)
{
    int ran = 0;
    while (r->qhead < r->qtail || r->lhead < r->ltail) {
        int i = next_node(r);
        const MfNode *n = mf_graph_node(r->g, i);
        r->nurgent -= r->urgent[i];
        if (mf_interrupted)
            return mf_err_set(MF_EINTR, "run: interrupted (Ctrl-C) before node '%s', after %d "
                              "of %d nodes; nothing is returned", n->name, ran, r->nneeded);
        MfStatus st = staged_seen(r, n) ? mf_staged_commit(&r->staged, r->vals, r->uses)
                                        : MF_OK;
        /* a start with no other urgent node ready (no gradient work left to
         * run now, only bookkeeping such as the update's casts): nothing to
         * overlap, reduce now */
        bool alone = r->nurgent == 0 && (op_flags(r, i) & MF_OP_ASYNC_START);
        mf_collective_set_immediate(alone);
        if (st == MF_OK)
            st = run_node(r, n);
        mf_collective_set_immediate(false);
        if (st == MF_OK && mf_collective_pending() > 0)
            st = mf_collective_progress();
        if (st != MF_OK) {
            r->failed = i;
            return st;
        }
        r->state[i] = DONE;
        ran++;
        for (int k = r->cstart[i]; k < r->cstart[i + 1]; k++)
            if (--r->indeg[r->cons[k]] == 0)
                enqueue(r, r->cons[k]);
        release_dead(r, n);
        if (r->sched)
            record_step(r, i);
        if (opt && opt->on_node)
            opt->on_node(opt->ctx, n);
    }
    /* every needed node ran: now the staged writes, which cannot fail */
    return ran < r->nneeded ? cycle_error(r, ran)
                            : mf_staged_commit(&r->staged, r->vals, r->uses);
}

/* A checked collective node (its signature exchanged before it runs). */
static bool checked_collective(const MfNode *n)
{
    return n->kind == MF_NODE_OP && (n->op == MF_OP_ALLREDUCE || n->op == MF_OP_ALLREDUCE_START) &&
           n->attrs.signature != 0;
}

/* A run that failed on this process while checked collectives it needed
 * were still to run: the other processes are (or will be) waiting in
 * them, so they are told (collective.h), unless the failure was a
 * collective's own, which every process raised. Without this a caught
 * error leaves this process one run behind the others, whose collectives
 * would then pair with its next run's. */
static void tell_failure(const Run *r)
{
    if (r->failed >= 0 && checked_collective(mf_graph_node(r->g, r->failed)))
        return;
    for (int i = 0; i < r->nn; i++)
        if (r->state[i] == NEEDED && checked_collective(mf_graph_node(r->g, i))) {
            mf_collective_join_failed(mf_err_msg());
            return;
        }
}

/* A group whose inner value (not its root's) this run fetches, feeds or
 * targets runs unfused: that value must exist. */
static void unfuse_at(Run *r, int node)
{
    int k = r->plan->group_of[node];
    if (k >= 0 && r->plan->groups[k].root != node)
        r->fused[k] = 0;
}

/* The graph's fused groups and which of them run fused in this run. */
static MfStatus plan_fusion(Run *r, int nfetch, MfTensor *const *fetches, int ntargets,
                            MfNode *const *targets)
{
    if (mf_numerics_on)   /* check_numerics checks each node's outputs */
        return MF_OK;
    MfStatus st = mf_fusion_plan(r->g, &r->plan);
    if (st != MF_OK || !r->plan || r->plan->ngroups == 0)
        return st;
    r->fused = mf_malloc((size_t)r->plan->ngroups);
    if (!r->fused)
        return mf_err_nomem("run", (unsigned long long)r->plan->ngroups);
    memset(r->fused, 1, (size_t)r->plan->ngroups);
    for (int i = 0; i < nfetch; i++)
        unfuse_at(r, edge_of(fetches[i]).node);
    for (int i = 0; i < ntargets; i++)
        unfuse_at(r, targets[i]->index);
    for (int i = 0; i < r->nn * MF_MAX_OUTPUTS; i++)
        if (r->fed[i])
            unfuse_at(r, i / MF_MAX_OUTPUTS);
    return MF_OK;
}

static MfStatus prepare(Run *r, int nfetch, MfTensor *const *fetches, int ntargets,
                        MfNode *const *targets, int nfeed, MfTensor *const *fed,
                        MfTensor *const *feeds)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < nfetch && st == MF_OK; i++)
        st = check_tensor(r, fetches[i], "fetch", i);
    for (int i = 0; i < ntargets && st == MF_OK; i++)
        if (targets[i]->graph != r->g)
            st = mf_err_set(MF_EARG, "run: op '%s' is in another graph", targets[i]->name);
    for (int i = 0; i < nfeed && st == MF_OK; i++)
        if ((st = check_tensor(r, fed[i], "feed key", i)) == MF_OK && feeds[i] && !feeds[i]->node)
            r->fed[slot(edge_of(fed[i]))] = feeds[i];
    if (st == MF_OK)
        st = plan_fusion(r, nfetch, fetches, ntargets, targets);
    if (st == MF_OK)
        st = prune(r, nfetch, fetches, ntargets, targets);
    if (st == MF_OK)
        st = build_table(r);
    /* the values last: a bad one fails a run whose needed nodes are known
     * (tell_failure) */
    for (int i = 0; i < nfeed && st == MF_OK; i++)
        st = check_feed(fed[i], feeds[i]);
    r->staged.cap = r->nneeded;
    for (int i = 0; i < nfetch && st == MF_OK; i++)
        r->uses[slot(edge_of(fetches[i]))]++;
    return st;
}

static MfStatus alloc_schedule(Run *r)
{
    r->sched = mf_calloc(1, sizeof *r->sched);
    if (r->sched)
        r->sched->steps = mf_calloc((size_t)r->nneeded + 1, sizeof *r->sched->steps);
    if (!r->sched || !r->sched->steps)
        return mf_err_nomem("run", ((unsigned long long)r->nneeded + 1) * sizeof(MfSchedStep));
    return MF_OK;
}

MfStatus mf_exec_run(MfGraph *g, int nfetch, MfTensor *const *fetches, int ntargets,
                     MfNode *const *targets, int nfeed, MfTensor *const *fed,
                     MfTensor *const *feeds, const MfExecOptions *opt, MfTensor **results,
                     MfSchedule **sched)
{
    return mf_exec_run_vars(NULL, g, nfetch, fetches, ntargets, targets, nfeed, fed, feeds, opt,
                            results, sched);
}

MfStatus mf_exec_run_vars(MfVarStore *vars, MfGraph *g, int nfetch, MfTensor *const *fetches,
                          int ntargets, MfNode *const *targets, int nfeed,
                          MfTensor *const *fed, MfTensor *const *feeds,
                          const MfExecOptions *opt, MfTensor **results, MfSchedule **sched)
{
    Run r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < nfetch; i++)
        results[i] = NULL;
    if (sched)
        *sched = NULL;
    MfStatus st = run_alloc(&r, g);
    r.vars = vars;
    r.staged.vars = vars;
    r.staged.nn = r.nn;
    r.failed = -1;
    if (st == MF_OK)
        st = prepare(&r, nfetch, fetches, ntargets, targets, nfeed, fed, feeds);
    if (st == MF_OK && opt && opt->schedule && sched)
        st = alloc_schedule(&r);
    bool executed = st == MF_OK;
    if (executed) {
        mf_op_exec_enter();
        st = execute(&r, opt);
        mf_op_exec_leave();
    }
    if (st != MF_OK && r.state && !mf_op_exec_running())
        tell_failure(&r);
    if (executed) {
        MfStatus done = mf_collective_wait_all();   /* none outlives the run */
        st = st == MF_OK ? done : st;
    }
    for (int i = 0; i < nfetch && st == MF_OK; i++) {
        results[i] = input_value(&r, edge_of(fetches[i]));
        if (!results[i])
            st = mf_err_set(MF_EINTERNAL, "run: fetch %d produced no value", i + 1);
        mf_tensor_retain(results[i]);
    }
    if (st != MF_OK)
        for (int i = 0; i < nfetch; i++) {
            mf_tensor_release(results[i]);
            results[i] = NULL;
        }
    if (st == MF_OK && sched) {
        *sched = r.sched;
        r.sched = NULL;
    }
    run_free(&r);
    return st;
}
