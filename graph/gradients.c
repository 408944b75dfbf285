/* gradients.c — 'mf_graph_gradients': a graph's nodes as the records of the
 * backward walk (autodiff/walk.h).
 *
 * A node output's key is its slot (node * MF_MAX_OUTPUTS + output) + 1. The
 * walk marks what the xs reach, this file seeds each y's gradient (grad_ys,
 * or ones_like(y)), the walk goes backward over the nodes in creation order
 * reversed, and this file collects the xs' gradients. Here a node's gradient
 * runs with the graph as the default, so the ops it calls become nodes
 * (under "gradients/<node>_grad/"). A node carrying a custom gradient
 * (custom_gradient.c) runs the user's function instead, for the inputs f
 * was called with; a read of a graph variable passes its gradient to the
 * variable. A Slice's gradient waits until the walk reaches its input, so
 * that Slices tiling it become one ConcatV2 (autodiff/slices.h).
 * Every tensor in the walk's table is owned by the walk and released at the end. */
#include "gradients.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/slices.h"
#include "autodiff/walk.h"
#include "core/alloc.h"
#include "core/create.h"
#include "core/grad.h"
#include "core/shape.h"
#include "graph_impl.h"

#define SCOPE_MAX 256

typedef struct Walk {
    MfGraphRecords recs;     /* first: the walk's 'self' is also the records' */
    MfAdWalk ad;
    MfGraph *g;
    int n;                   /* nodes when the walk started */
    int *pend_head;          /* per tensor slot: the last Slice of it whose gradient
                              * waits (node index + 1; 0: none), see defer_slice */
    int *pend_next;          /* per node: the Slice deferred before it (index + 1) */
    MfTensor **pend_dy;      /* per node: a deferred Slice's output gradient (owned) */
} Walk;

static int slot(int node, int output)
{
    return node * MF_MAX_OUTPUTS + output;
}

static MfAdKey key(MfNodeInput in)
{
    return mf_graph_key(in);
}

static MfNodeInput from_key(MfAdKey k)
{
    return (MfNodeInput){(int)((k - 1) / MF_MAX_OUTPUTS), (int)((k - 1) % MF_MAX_OUTPUTS)};
}

static bool reached(const Walk *w, MfNodeInput in)
{
    return mf_ad_walk_reached(&w->ad, key(in));
}

static void walk_free(Walk *w)
{
    mf_ad_walk_free(&w->ad);
    if (w->pend_dy)
        for (int i = 0; i < w->n; i++)
            mf_tensor_release(w->pend_dy[i]);
    mf_free(w->pend_dy);
    mf_free(w->pend_head);
    mf_free(w->pend_next);
    mf_graph_records_free(&w->recs);
}

static const MfAdRecordsOps graph_records;

static MfStatus walk_init(Walk *w, MfGraph *g)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    w->n = mf_graph_nnodes(g);
    mf_graph_records_init(&w->recs, g, 0, INT_MAX);
    mf_ad_walk_init(&w->ad, &graph_records, w, w->n);
    size_t nt = (size_t)(w->n ? w->n : 1) * MF_MAX_OUTPUTS, nn = (size_t)(w->n ? w->n : 1);
    w->pend_head = mf_calloc(nt, sizeof *w->pend_head);
    w->pend_next = mf_calloc(nn, sizeof *w->pend_next);
    w->pend_dy = mf_calloc(nn, sizeof *w->pend_dy);
    if (!w->pend_head || !w->pend_next || !w->pend_dy)
        return mf_err_nomem("gradients", (unsigned long long)nt * sizeof *w->pend_head +
                            nn * (sizeof *w->pend_next + sizeof *w->pend_dy));
    return MF_OK;
}

/* Checks that 't' is a symbolic tensor of 'g'. 'what' is "ys" or "xs". */
static MfStatus check_member(MfGraph *g, const MfTensor *t, const char *what, int i)
{
    if (!t->node)
        return mf_err_set(MF_EARG, "gradients: %s[%d] is a concrete tensor, not a graph tensor "
                          "(build it inside g:as_default)", what, i + 1);
    if (mf_tensor_graph(t) != g)
        return mf_err_set(MF_EARG, "gradients: %s[%d] ('%s') is a tensor of another graph",
                          what, i + 1, ((const MfNode *)t->node)->name);
    return MF_OK;
}

/* A READ of a graph variable passes its gradient to the variable's output
 * (TF1: ReadVariableOp's gradient is the identity to the handle), so
 * mf.gradients(f(v:read_value()), {v}) is connected. A read with a
 * fallback input (v:initialized_value()) is not: the initial value is not
 * trained. Returns the VARIABLE node's index, or -1. */
static int read_source(const MfNode *nd)
{
    return nd->kind == MF_NODE_READ && !nd->var && nd->ninputs == 0 ? nd->ref : -1;
}

/* True when node 'i' is one the walk may pass gradients through: an op
 * (a differentiable one, built inside [lo, hi): a tape's recording window)
 * or a variable read. */
static bool passes(const MfGraphRecords *w, const MfNode *nd)
{
    if (read_source(nd) >= 0)
        return true;
    return nd->kind == MF_NODE_OP && (nd->override || mf_op_differentiable(nd->op)) &&
           nd->index >= w->lo && nd->index < w->hi;
}

/* "(2,3) (float32)": a shape and dtype, for the messages below. */
static const char *spec_text(int rank, const int64_t *shape, MfDType dt, char *buf, size_t cap)
{
    char dims[64];
    snprintf(buf, cap, "%s (%s)", mf_shape_str(rank, shape, dims, sizeof dims),
             mf_dtype_name(dt));
    return buf;
}

/* True when the dims agree, an unknown (-1) dim agreeing with any. */
static bool spec_fits(const MfTensor *t, const MfTensorSpec *s)
{
    if (t->dtype != s->dtype || t->rank != s->rank)
        return false;
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] != s->shape[d] && t->shape[d] >= 0 && s->shape[d] >= 0)
            return false;
    return true;
}

/* Checks that 'gr' (owned) fits the tensor 'in' ('who' names the node
 * whose gradient produced it); on error releases it and sets '*grp' NULL. */
static MfStatus check_fits(Walk *w, MfNodeInput in, MfTensor **grp, const char *who)
{
    const MfNode *p = mf_graph_node(w->g, in.node);
    const MfTensorSpec *s = &p->out[in.output];
    MfTensor *gr = *grp;
    if (spec_fits(gr, s))
        return MF_OK;
    char a[96], b[96];
    spec_text(gr->rank, gr->shape, gr->dtype, a, sizeof a);
    mf_tensor_release(gr);
    *grp = NULL;
    return mf_err_set(MF_EINTERNAL, "gradients: the gradient from '%s' for '%s:%d' has "
                      "shape %s, expected %s", who, p->name, in.output, a,
                      spec_text(s->rank, s->shape, s->dtype, b, sizeof b));
}

/* Adds 'gr' (owned) to the gradient of the tensor 'in', checked first. */
static MfStatus accumulate(Walk *w, MfNodeInput in, MfTensor *gr, const char *who)
{
    MfStatus st = check_fits(w, in, &gr, who);
    return st != MF_OK ? st : mf_ad_walk_add(&w->ad, key(in), gr);
}

/* ones_like(y): a constant when y's shape is known, else Pow(y, 0) (1 for
 * every value, NaN and infinities included). */
static MfStatus ones_like(MfTensor *y, MfTensor **out)
{
    for (int d = 0; d < y->rank; d++)
        if (y->shape[d] < 0) {
            MfTensor *zero = NULL;
            MfStatus st = mf_grad_const(y, 0.0, &zero);
            if (st == MF_OK)
                st = mf_binary(MF_OP_POW, y, zero, out);
            mf_tensor_release(zero);
            return st;
        }
    return mf_create_fill("gradients", y->dtype, y->rank, y->shape, 1.0, out);
}

/* A concrete 'v' (owned) becomes a Const node named 'name' of 'g' (so every
 * gradient handed out is symbolic); a symbolic one is returned as is. */
static MfStatus as_node(MfGraph *g, MfTensor *v, const char *name, MfTensor **out)
{
    if (v->node) {
        *out = v;
        return MF_OK;
    }
    MfStatus st = mf_graph_constant(g, v, name, out);
    mf_tensor_release(v);
    return st;
}

static MfStatus seed(Walk *w, int i, MfTensor *y, MfTensor *gy)
{
    MfNodeInput at = {((MfNode *)y->node)->index, y->node_output};
    MfTensor *v = NULL;
    char name[32];
    snprintf(name, sizeof name, "grad_ys_%d", i);
    if (!gy) {
        MfStatus st = ones_like(y, &v);
        if (st == MF_OK)
            st = as_node(w->g, v, name, &v);
        return st != MF_OK ? st : accumulate(w, at, v, "ones_like");
    }
    MfTensorSpec s = {.dtype = y->dtype, .rank = y->rank};
    memcpy(s.shape, y->shape, sizeof s.shape);
    if (!spec_fits(gy, &s)) {
        char a[64], b[64];
        mf_shape_str(gy->rank, gy->shape, a, sizeof a);
        mf_shape_str(y->rank, y->shape, b, sizeof b);
        return mf_err_set(MF_EARG, "gradients: grad_ys[%d] has shape %s (%s) but ys[%d] has "
                          "shape %s (%s)", i + 1, a, mf_dtype_name(gy->dtype), i + 1, b,
                          mf_dtype_name(y->dtype));
    }
    mf_tensor_retain(gy);
    MfStatus st = as_node(w->g, gy, name, &v);
    return st != MF_OK ? st : accumulate(w, at, v, "grad_ys");
}

static bool spec_unknown(const MfTensorSpec *s)
{
    for (int d = 0; d < s->rank; d++)
        if (s->shape[d] < 0)
            return true;
    return false;
}

static bool spec_known(const MfTensorSpec *s)
{
    for (int d = 0; d < s->rank; d++)
        if (s->shape[d] < 0)
            return false;
    return true;
}

/* The static spec of data input 'k' of 'nd'. */
static const MfTensorSpec *input_spec(const Walk *w, const MfNode *nd, int k)
{
    return &mf_graph_node(w->g, nd->inputs[k].node)->out[nd->inputs[k].output];
}

/* mf.linalg's ops: every input's matrix dims (the last two) known and at
 * most one unknown batch dim (the gradients' products fold the batch dims
 * with a Reshape). */
static bool matrices_known(const Walk *w, const MfNode *nd)
{
    for (int k = 0; k < nd->ninputs; k++) {
        const MfTensorSpec *s = input_spec(w, nd, k);
        int unknown = 0;
        for (int d = 0; d < s->rank - 2; d++)
            unknown += s->shape[d] < 0;
        if (s->rank < 2 || s->shape[s->rank - 1] < 0 || s->shape[s->rank - 2] < 0 || unknown > 1)
            return false;
    }
    return true;
}

/* Shape ops whose gradients read some dims statically: right when those
 * dims are known. Concat: each input's size along the axis (the offsets of
 * the slices). Slice: an unknown dim must be sliced whole (begin 0, size
 * -1; the padding back is then 0). Pad: an unknown dim must have no
 * padding after it (the slice back runs "to the end"). Convolutions: the
 * filter's shape (the input's is taken at run time); depthwise ones also
 * the input's height and width (only the batch may be unknown). */
static bool shape_op_dims_known(const Walk *w, const MfNode *nd)
{
    const MfTensorSpec *x = input_spec(w, nd, 0);
    const int64_t *ints = nd->attrs.ints;
    int r = x->rank;
    switch (nd->op) {
    case MF_OP_CONCAT: {
        int64_t axis = nd->attrs.axis < 0 ? nd->attrs.axis + r : nd->attrs.axis;
        for (int k = 0; k < nd->ninputs; k++)
            if (input_spec(w, nd, k)->shape[axis] < 0)
                return false;
        return true;
    }
    case MF_OP_SLICE:
        for (int d = 0; d < r; d++)
            if (x->shape[d] < 0 && (ints[d] != 0 || ints[r + d] != -1))
                return false;
        return true;
    case MF_OP_PAD:
        for (int d = 0; d < r; d++)
            if (x->shape[d] < 0 && ints[2 * d + 1] != 0)
                return false;
        return true;
    case MF_OP_CONV2D: /* the filter's shape is read; the input's taken at run time */
        return spec_known(input_spec(w, nd, 1));
    case MF_OP_CONV2D_BACKPROP_INPUT:
    case MF_OP_CONV2D_BACKPROP_INPUT_LIKE:
        return spec_known(input_spec(w, nd, 0));
    case MF_OP_CONV2D_BACKPROP_FILTER:
        return true;
    case MF_OP_DEPTHWISE_CONV2D: /* the filter's shape and the input's H, W are read */
        return spec_known(input_spec(w, nd, 1)) && x->shape[1] >= 0 && x->shape[2] >= 0;
    case MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT:
        return spec_known(input_spec(w, nd, 0)) && nd->attrs.ints[1] >= 0 &&
               nd->attrs.ints[2] >= 0;
    case MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER:
        return x->shape[1] >= 0 && x->shape[2] >= 0;
    case MF_OP_MATRIX_INVERSE:
    case MF_OP_MATRIX_SOLVE:
    case MF_OP_CHOLESKY:
    case MF_OP_MATRIX_DETERMINANT:
        return matrices_known(w, nd);
    default:
        return false;
    }
}

/* Ops whose gradients are right with unknown (-1) dims: they take shapes
 * at run time (core/grad.h's helpers, Size nodes) or need none. Each is
 * checked against tape gradients with every dim unknown, and with only the
 * batch dim unknown (tests/unit/test_graph_grad_sym.c); an op enters this
 * list only with passing cases there. Squeeze without axes is left out:
 * which axes are 1 is known only at run time, so the rank of its output is
 * too. */
static bool takes_unknown_dims(const Walk *w, const MfNode *nd)
{
    static const MfOpId ok[] = {
        MF_OP_MATMUL, MF_OP_BATCH_MATMUL, MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN,
        MF_OP_PROD, MF_OP_SELECT, MF_OP_CAST, MF_OP_TRANSPOSE, MF_OP_RESHAPE,
        MF_OP_EXPAND_DIMS, MF_OP_REVERSE, MF_OP_BROADCAST_TO, MF_OP_UNSORTED_SEGMENT_SUM,
        MF_OP_SOFTMAX, MF_OP_LOG_SOFTMAX, MF_OP_SOFTMAX_XENT, MF_OP_SPARSE_SOFTMAX_XENT,
        MF_OP_BIAS_ADD, MF_OP_MAX_POOL, MF_OP_AVG_POOL, MF_OP_MAX_POOL_GRAD,
        MF_OP_AVG_POOL_GRAD, MF_OP_MAX_POOL_GRAD_GRAD, MF_OP_RESHAPE_LIKE,
        MF_OP_BROADCAST_TO_LIKE, MF_OP_SUM_TO_LIKE, MF_OP_STACK, MF_OP_RELU_GRAD,
        MF_OP_FUSED_BATCH_NORM, MF_OP_LSTM_CELL, MF_OP_CUMSUM, MF_OP_CUMPROD,
        MF_OP_TOP_K, MF_OP_SORT, MF_OP_GATHER_ALONG_AXIS, MF_OP_SCATTER_ALONG_AXIS,
        MF_OP_GATHER_ND, MF_OP_SCATTER_ND, MF_OP_SCATTER_ND_LIKE, MF_OP_MATRIX_BAND_PART,
        MF_OP_TRILU, MF_OP_GELU, MF_OP_GELU_GRAD, MF_OP_SILU_GRAD, MF_OP_ATTENTION,
        MF_OP_SIGMOID_GRAD, MF_OP_TANH_GRAD,
    };
    if (mf_op_table[nd->op]->flags & MF_OP_SIMPLE)
        return true;
    if (nd->op == MF_OP_SQUEEZE)
        return nd->attrs.naxes > 0;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (ok[i] == nd->op)
            return true;
    return shape_op_dims_known(w, nd);
}

/* Refuses, naming the node and its op, the gradient of an op not known to
 * be right with unknown dims when its inputs or outputs have some. */
static MfStatus check_known(const Walk *w, const MfNode *nd)
{
    const MfOpDesc *d = mf_op_table[nd->op];
    if (takes_unknown_dims(w, nd))
        return MF_OK;
    bool unknown = false;
    for (int k = 0; k < nd->ninputs; k++) {
        const MfNode *p = mf_graph_node(w->g, nd->inputs[k].node);
        unknown |= spec_unknown(&p->out[nd->inputs[k].output]);
    }
    for (int j = 0; j < nd->noutputs; j++)
        unknown |= spec_unknown(&nd->out[j]);
    if (!unknown)
        return MF_OK;
    return mf_err_set(MF_ESHAPE, "gradients: node '%s' (%s) has an input or output with "
                      "unknown (?) dims; the gradient of %s needs fully known shapes for now "
                      "(give the placeholder a full shape)", nd->name, d->name, d->api);
}

/* Pushes "a/b_grad" for the node named "a/b"; returns the mark to pop. */
static int push_op_scope(MfGraph *g, const char *name)
{
    char buf[SCOPE_MAX];
    int first = -1, m;
    snprintf(buf, sizeof buf, "%s_grad", name);
    for (char *part = buf, *slash; part; part = slash ? slash + 1 : NULL) {
        slash = strchr(part, '/');
        if (slash)
            *slash = '\0';
        if (mf_graph_push_scope(g, part, &m) != MF_OK) {
            mf_err_clear();
            break;
        }
        if (first < 0)
            first = m;
    }
    return first;
}

/* Symbolic inputs and outputs of 'nd' for its gradient call; 'ts' has
 * ninputs + noutputs entries, owned by the caller. */
static MfStatus node_tensors(Walk *w, const MfNode *nd, MfTensor **ts)
{
    for (int k = 0; k < nd->ninputs; k++) {
        MfNodeInput in = nd->inputs[k];
        if (!(ts[k] = mf_graph_output(mf_graph_node(w->g, in.node), in.output)))
            return MF_ENOMEM;
    }
    for (int j = 0; j < nd->noutputs; j++)
        if (!(ts[nd->ninputs + j] = mf_graph_output((MfNode *)nd, j)))
            return MF_ENOMEM;
    return MF_OK;
}

/* Calls the op's gradient for 'nd' (under "<name>_grad/") from 'dout' into
 * 'din' (owned) for the inputs with 'needs'. */
static MfStatus op_backward(Walk *w, MfNode *nd, MfTensor **dout, const bool *needs,
                            MfTensor **din)
{
    MfStatus st = check_known(w, nd);
    if (st != MF_OK)
        return st;
    int ni = nd->ninputs, nt = ni + nd->noutputs;
    MfTensor **ts = mf_calloc((size_t)(nt + 1), sizeof *ts);
    if (!ts)
        st = mf_err_nomem("gradients", (unsigned long long)(nt + 1) * sizeof *ts);
    if (st == MF_OK && (st = node_tensors(w, nd, ts)) == MF_OK) {
        MfOpCall c = {.op = nd->op, .ninputs = ni, .inputs = ts, .attrs = &nd->attrs,
                      .noutputs = nd->noutputs};
        memcpy(c.out, nd->out, (size_t)nd->noutputs * sizeof *c.out);
        MfGradCall gc = {.call = &c, .outputs = ts + ni, .doutputs = dout, .needs = needs,
                         .override = nd->override};
        int mark = push_op_scope(w->g, nd->name);
        st = mf_grad_call(&gc, din);
        if (mark >= 0)
            mf_graph_pop_scope(w->g, mark);
    }
    for (int k = 0; ts && k < nt; k++)
        mf_tensor_release(ts[k]);
    mf_free(ts);
    return st;
}

/* Checks the gradient 'gr' a custom gradient function gave for its input
 * 'k': an integer one is dropped, a concrete one becomes a Const node; one
 * of another graph or shaped unlike the input is the user's error. On error
 * or drop '*grp' is released and set NULL. */
static MfStatus custom_check(Walk *w, const MfNode *nd, int k, MfTensor **grp)
{
    MfNodeInput in = nd->grad->inputs[k];
    const MfTensorSpec *s = &mf_graph_node(w->g, in.node)->out[in.output];
    MfTensor *gr = *grp;
    *grp = NULL;
    if (!mf_grad_is_float(gr->dtype)) {
        mf_tensor_release(gr);
        return MF_OK;
    }
    if (gr->node && mf_tensor_graph(gr) != w->g) {
        mf_tensor_release(gr);
        return mf_err_set(MF_EARG, "gradients: custom_gradient '%s': the gradient function "
                          "returned a tensor of another graph for input %d", nd->name, k + 1);
    }
    if (!spec_fits(gr, s)) {
        char a[96], b[96];
        spec_text(gr->rank, gr->shape, gr->dtype, a, sizeof a);
        mf_tensor_release(gr);
        return mf_err_set(MF_EARG, "gradients: custom_gradient '%s': the gradient function "
                          "returned shape %s for input %d, expected %s like the input",
                          nd->name, a, k + 1, spec_text(s->rank, s->shape, s->dtype, b, sizeof b));
    }
    MfStatus st = as_node(w->g, gr, NULL, &gr);
    if (st == MF_OK && (st = check_fits(w, in, &gr, nd->name)) == MF_OK)
        *grp = gr;
    return st;
}

/* A custom gradient's node: its function builds the input gradients from
 * the symbolic output gradient (under "<name>_grad/"); the nodes between
 * its inputs and its output get nothing from it. */
static MfStatus custom_backward(Walk *w, MfNode *nd, MfTensor **dout, MfTensor **din)
{
    MfNodeGrad *f = nd->grad;
    if (!f->backward)
        return mf_err_set(MF_EARG, "gradients: custom_gradient '%s': its gradient function was "
                          "released when its trace finished; ask for gradients inside the "
                          "traced function", nd->name);
    int ni = f->ninputs;
    MfTensor **ts = mf_calloc((size_t)(ni + 1), sizeof *ts);
    MfStatus st = ts ? MF_OK : mf_err_nomem("gradients", (ni + 1ULL) * sizeof *ts);
    for (int k = 0; k < ni && st == MF_OK; k++) {
        MfNodeInput in = f->inputs[k];
        if (!(ts[k] = mf_graph_output(mf_graph_node(w->g, in.node), in.output)))
            st = MF_ENOMEM;
    }
    if (st == MF_OK) {
        int mark = push_op_scope(w->g, nd->name);
        st = f->backward(f, nd->noutputs, dout, ni, ts, din);
        if (mark >= 0)
            mf_graph_pop_scope(w->g, mark);
    }
    for (int k = 0; ts && k < ni; k++)
        mf_tensor_release(ts[k]);
    mf_free(ts);
    return st;
}

/* ---- the graph's nodes for the walk ---------------------------------------------- */

/* A node's record: a read passes its gradient to the variable, a custom
 * gradient's node to the inputs f was called with, an op to its inputs. */
void mf_graph_records_init(MfGraphRecords *r, MfGraph *g, int lo, int hi)
{
    *r = (MfGraphRecords){.g = g, .lo = lo, .hi = hi, .capkeys = MF_GRAPH_INLINE_KEYS};
    r->keys = r->inline_keys;
}

void mf_graph_records_free(MfGraphRecords *r)
{
    if (r->keys != r->inline_keys)
        mf_free(r->keys);
    r->keys = r->inline_keys;
}

MfStatus mf_graph_describe(void *self, int64_t k, MfAdRecord *r)
{
    MfGraphRecords *w = self;
    const MfNode *nd = mf_graph_node(w->g, (int)k);
    int src = read_source(nd);
    int ni = src >= 0 ? 1 : nd->grad ? nd->grad->ninputs : nd->ninputs;
    const MfNodeInput *in = nd->grad ? nd->grad->inputs : nd->inputs;
    if (ni > w->capkeys) {
        MfAdKey *keys = mf_calloc((size_t)ni, sizeof *keys);
        if (!keys)
            return mf_err_nomem("gradients", (unsigned long long)ni * sizeof *keys);
        mf_graph_records_free(w);
        w->keys = keys;
        w->capkeys = ni;
    }
    for (int i = 0; i < ni; i++)
        w->keys[i] = src >= 0 ? key((MfNodeInput){src, 0}) : key(in[i]);
    *r = (MfAdRecord){.passes = passes(w, nd), .op = src >= 0 ? MF_NOPS : nd->op,
                      .attrs = &nd->attrs, .override = nd->override,
                      .custom = nd->grad != NULL && src < 0, .ninputs = ni,
                      .noutputs = nd->noutputs, .inputs = w->keys};
    for (int j = 0; j < nd->noutputs; j++) {
        r->outputs[j] = key((MfNodeInput){(int)k, j});
        r->float_outputs |= (unsigned)mf_dtype_is_float(nd->out[j].dtype) << j;
    }
    return MF_OK;
}

static MfStatus flush_slices(Walk *w, MfNodeInput in);

/* Before a node gives up its outputs' gradients: the Slices of them that wait. */
static MfStatus before(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *r)
{
    (void)ad;
    Walk *w = self;
    MfStatus st = MF_OK;
    for (int j = 0; j < r->noutputs && st == MF_OK; j++)
        st = flush_slices(w, (MfNodeInput){(int)k, j});
    return st;
}

/* Slice node 'nd' as autodiff/slices.h's tiling rule sees it (false: not
 * a plain Slice with static begin and size). */
static bool slice_window(const Walk *w, const MfNode *nd, MfSliceWindow *s)
{
    int r = nd->out[0].rank;
    if (nd->op != MF_OP_SLICE || nd->ninputs != 1 || r < 1 || nd->attrs.nints != 2 * r)
        return false;
    *s = (MfSliceWindow){.rank = r, .begin = nd->attrs.ints, .size = nd->attrs.ints + r,
                         .dims = input_spec(w, nd, 0)->shape};
    return true;
}

/* A Slice cutting its input along one axis: its gradient waits until the
 * walk reaches the input (flush_slices), so that Slices tiling the input
 * (mf.split, a recurrent layer's steps) give one ConcatV2 of their dys
 * instead of a full-size Pad each, added up (autodiff/slices.h). */
static bool defer_slice(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *r,
                        MfTensor **dout, bool *needs)
{
    (void)ad;
    (void)needs;
    Walk *w = self;
    const MfNode *nd = mf_graph_node(w->g, (int)k);
    MfSliceWindow win;
    if (r->op != MF_OP_SLICE || r->custom || nd->override || !dout[0] ||
        !reached(w, nd->inputs[0]) || !slice_window(w, nd, &win) ||
        mf_slice_window_axis(&win) < 0)
        return false;
    int s = slot(nd->inputs[0].node, nd->inputs[0].output);
    w->pend_next[nd->index] = w->pend_head[s];
    w->pend_head[s] = nd->index + 1;
    mf_tensor_retain(dout[0]);
    w->pend_dy[nd->index] = dout[0];
    return true;
}

static MfStatus backward(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *r,
                         MfTensor **dout, const bool *needs, MfTensor **din)
{
    (void)ad;
    Walk *w = self;
    MfNode *nd = mf_graph_node(w->g, (int)k);
    if (r->op == MF_NOPS) {   /* a read: its gradient is its output's */
        mf_tensor_retain(dout[0]);
        din[0] = dout[0];
        return MF_OK;
    }
    return r->custom ? custom_backward(w, nd, dout, din) : op_backward(w, nd, dout, needs, din);
}

static MfStatus check(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *r, int i,
                      MfTensor **g)
{
    (void)ad;
    Walk *w = self;
    const MfNode *nd = mf_graph_node(w->g, (int)k);
    if (r->custom)
        return custom_check(w, nd, i, g);
    return check_fits(w, from_key(r->inputs[i]), g, nd->name);
}

static const MfAdRecordsOps graph_records = {
    .who = "gradients", .describe = mf_graph_describe, .before = before, .shortcut = defer_slice,
    .backward = backward, .check = check,
};


static MfStatus check_args(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                           MfTensor *const *xs, MfTensor *const *grad_ys)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < ny && st == MF_OK; i++)
        st = check_member(g, ys[i], "ys", i);
    for (int i = 0; i < nx && st == MF_OK; i++)
        st = check_member(g, xs[i], "xs", i);
    for (int i = 0; grad_ys && i < ny && st == MF_OK; i++)
        if (grad_ys[i] && grad_ys[i]->node && mf_tensor_graph(grad_ys[i]) != g)
            st = mf_err_set(MF_EARG, "gradients: grad_ys[%d] is a tensor of another graph",
                            i + 1);
    return st;
}

/* ConcatV2 of the Slices' gradients in position order, added to 'in's. */
static MfStatus concat_slices(Walk *w, MfNodeInput in, int n, MfNode **nodes,
                              const int *order, int axis)
{
    MfTensor **parts = mf_calloc((size_t)n, sizeof *parts);
    if (!parts)
        return mf_err_nomem("gradients", (unsigned long long)n * sizeof *parts);
    for (int i = 0; i < n; i++)
        parts[i] = w->pend_dy[nodes[order[i]]->index];
    MfAttrs a = mf_attrs_default();
    a.axis = axis;
    MfTensor *sum = NULL;
    int mark = push_op_scope(w->g, nodes[order[0]]->name);
    MfStatus st = mf_op1(MF_OP_CONCAT, n, parts, &a, &sum);
    if (mark >= 0)
        mf_graph_pop_scope(w->g, mark);
    mf_free(parts);
    return st != MF_OK ? st : accumulate(w, in, sum, nodes[order[0]]->name);
}

/* A waiting Slice's own gradient (a Pad of its dy), added to its input's. */
static MfStatus run_slice(Walk *w, MfNode *nd)
{
    MfTensor *dout[MF_MAX_OUTPUTS] = {w->pend_dy[nd->index]}, *din = NULL;
    bool needs = reached(w, nd->inputs[0]);
    MfStatus st = op_backward(w, nd, dout, &needs, &din);
    if (st == MF_OK && din && needs)
        return accumulate(w, nd->inputs[0], din, nd->name);
    mf_tensor_release(din);
    return st;
}

/* The waiting Slice gradients of tensor 'in': one ConcatV2 when they tile
 * it, else each Slice's own gradient (in the walk's order: latest first). */
static MfStatus flush_slices(Walk *w, MfNodeInput in)
{
    int s = slot(in.node, in.output), n = 0;
    for (int k = w->pend_head[s]; k; k = w->pend_next[k - 1])
        n++;
    if (n == 0)
        return MF_OK;
    MfNode **nodes = mf_calloc((size_t)n, sizeof *nodes);
    int *order = mf_calloc((size_t)n, sizeof *order);
    MfSliceWindow *wins = mf_calloc((size_t)n, sizeof *wins);
    MfStatus st = nodes && order && wins ? MF_OK
                  : mf_err_nomem("gradients", (unsigned long long)n *
                                 (sizeof *nodes + sizeof *order + sizeof *wins));
    int i = 0, axis = -1;
    for (int k = w->pend_head[s]; k && st == MF_OK; k = w->pend_next[k - 1]) {
        nodes[i] = mf_graph_node(w->g, k - 1);
        slice_window(w, nodes[i], &wins[i]);   /* deferred: a window (defer_slice) */
        i++;
    }
    w->pend_head[s] = 0;
    if (st == MF_OK && mf_slices_tile(n, wins, order, &axis))
        st = concat_slices(w, in, n, nodes, order, axis);
    else
        for (i = n - 1; i >= 0 && st == MF_OK; i--)
            st = run_slice(w, nodes[i]);
    for (i = 0; nodes && i < n && nodes[i]; i++) {   /* the rest: walk_free */
        mf_tensor_release(w->pend_dy[nodes[i]->index]);
        w->pend_dy[nodes[i]->index] = NULL;
    }
    mf_free(nodes);
    mf_free(order);
    mf_free(wins);
    return st;
}

/* Seeds, walks back, and collects the xs' gradients. */
static MfStatus walk(Walk *w, int ny, MfTensor *const *ys, int nx, MfTensor *const *xs,
                     MfTensor *const *grad_ys, MfTensor **grads)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < nx && st == MF_OK; i++)
        st = mf_ad_walk_source(&w->ad, key((MfNodeInput){((MfNode *)xs[i]->node)->index,
                                                         xs[i]->node_output}));
    if (st == MF_OK)
        st = mf_ad_walk_mark(&w->ad);
    for (int i = 0; i < ny && st == MF_OK; i++)
        if (mf_grad_is_float(ys[i]->dtype))
            st = seed(w, i, ys[i], grad_ys ? grad_ys[i] : NULL);
    if (st == MF_OK)
        st = mf_ad_walk_back(&w->ad);
    for (int i = 0; i < nx && st == MF_OK; i++)
        st = flush_slices(w, (MfNodeInput){((MfNode *)xs[i]->node)->index, xs[i]->node_output});
    for (int i = 0; i < nx && st == MF_OK; i++) {
        MfNodeInput at = {((MfNode *)xs[i]->node)->index, xs[i]->node_output};
        MfTensor *gr = mf_ad_walk_gradient(&w->ad, key(at));
        if (gr && mf_grad_is_float(xs[i]->dtype)) {
            mf_tensor_retain(gr);
            grads[i] = gr;
        }
    }
    return st;
}


MfStatus mf_graph_gradients(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                            MfTensor *const *xs, MfTensor *const *grad_ys, MfTensor **grads)
{
    if (!g)
        g = ny ? mf_tensor_graph(ys[0]) : NULL;
    if (!g)
        g = mf_graph_default();
    if (!g) {
        for (int i = 0; i < nx; i++)
            grads[i] = NULL;
        return mf_err_set(MF_EARG, "gradients: ys must be graph tensors (build them inside "
                          "g:as_default); for eager gradients use mf.GradientTape");
    }
    return mf_graph_gradients_window(g, ny, ys, nx, xs, grad_ys, 0, INT_MAX, grads);
}

static MfStatus gradients_window(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                                 MfTensor *const *xs, MfTensor *const *grad_ys, int lo, int hi,
                                 MfTensor **grads);

/* 'n' tensors into 'out' (owned): a concrete tensor made while 'g' was
 * built (mf.zeros{3} inside g:as_default) stands for the Const node that
 * holds it, as TensorFlow's constants are graph tensors (a Const node is
 * made when no op used it yet: nothing depends on it, its gradient is nil). */
static MfStatus graph_tensors(MfGraph *g, int n, MfTensor *const *ts, MfTensor **out)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < n; i++) {
        MfNode *k = NULL;
        out[i] = NULL;
        if (st != MF_OK || ts[i]->node) {
            mf_tensor_retain(ts[i]);
            out[i] = ts[i];
        } else if ((st = mf_graph_const_for_(g, ts[i], &k)) == MF_OK &&
                   !(out[i] = mf_graph_output(k, 0))) {
            st = MF_ENOMEM;
        }
    }
    return st;
}

MfStatus mf_graph_gradients_window(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                                   MfTensor *const *xs, MfTensor *const *grad_ys, int lo,
                                   int hi, MfTensor **grads)
{
    MfTensor **all = mf_calloc((size_t)(ny + nx + 1), sizeof *all);
    if (!all)
        return mf_err_nomem("gradients", (unsigned long long)(ny + nx + 1) * sizeof *all);
    MfStatus st = graph_tensors(g, ny, ys, all);
    if (st == MF_OK)
        st = graph_tensors(g, nx, xs, all + ny);
    if (st == MF_OK)
        st = gradients_window(g, ny, all, nx, all + ny, grad_ys, lo, hi, grads);
    else
        for (int i = 0; i < nx; i++)
            grads[i] = NULL;
    for (int i = 0; i < ny + nx; i++)
        mf_tensor_release(all[i]);
    mf_free(all);
    return st;
}

static MfStatus gradients_window(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                                 MfTensor *const *xs, MfTensor *const *grad_ys, int lo, int hi,
                                 MfTensor **grads)
{
    for (int i = 0; i < nx; i++)
        grads[i] = NULL;
    MfStatus st = check_args(g, ny, ys, nx, xs, grad_ys);
    if (st != MF_OK)
        return st;
    if (mf_op_exec_running())
        return mf_err_set(MF_EARG, "gradients: cannot build gradients while a graph runs");
    Walk w;
    int smark = -1;
    bool pushed = false;
    st = walk_init(&w, g);
    w.recs.lo = lo;
    w.recs.hi = hi;
    if (st == MF_OK && mf_graph_default() != g && (st = mf_graph_push_default(g)) == MF_OK)
        pushed = true;
    if (st == MF_OK)
        st = mf_graph_push_scope(g, "gradients", &smark);
    if (st == MF_OK)
        st = walk(&w, ny, ys, nx, xs, grad_ys, grads);
    if (smark >= 0)
        mf_graph_pop_scope(g, smark);
    if (pushed)
        mf_graph_pop_default();
    walk_free(&w);
    if (st != MF_OK)
        for (int i = 0; i < nx; i++) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    return st;
}

/* ---- sources that are variables (tapes inside mf.trace) ------------------------ */

/* The tensors of 'g' standing for source i into xs[*nx..] (owned): a
 * graph variable's output (its reads pass gradients to it), a captured
 * eager variable's values in 'g', or a symbolic tensor of 'g'. */
static MfStatus source_xs(MfGraph *g, MfVariable *v, MfTensor *t, MfTensor **xs, int *nx,
                          int cap)
{
    if (v && v->value && !v->value->node) {
        int k = mf_graph_captured_reads(g, v, xs + *nx, cap - *nx);
        for (int i = 0; i < k && *nx + i < cap; i++)
            if (!xs[*nx + i])
                return MF_ENOMEM;
        if (*nx + k > cap)
            return mf_err_set(MF_EARG, "gradients: variable '%s' has %d values in one graph; "
                              "at most %d are supported", v->name, k, cap - *nx);
        *nx += k;
        return MF_OK;
    }
    MfTensor *one = v ? v->value : t;
    if (one && !one->node) {   /* a concrete tensor used in 'g' is its Const node */
        MfNode *k = mf_graph_find_const_(g, one);
        if (!k || *nx >= cap)
            return MF_OK;
        return (xs[(*nx)++] = mf_graph_output(k, 0)) ? MF_OK : MF_ENOMEM;
    }
    if (!one || mf_tensor_graph(one) != g || *nx >= cap)
        return MF_OK;
    mf_tensor_retain(one);
    xs[(*nx)++] = one;
    return MF_OK;
}

/* Sums the 'k' gradients 'gs' (owned, NULL = none) into '*out' (owned). */
static MfStatus sum_grads(int k, MfTensor **gs, MfTensor **out)
{
    MfStatus st = MF_OK;
    *out = NULL;
    for (int i = 0; i < k; i++) {
        MfTensor *gi = gs[i];
        gs[i] = NULL;
        if (!gi || st != MF_OK) {
            mf_tensor_release(gi);
            continue;
        }
        if (!*out) {
            *out = gi;
            continue;
        }
        MfTensor *sum = NULL;
        st = mf_binary(MF_OP_ADD, *out, gi, &sum);
        mf_tensor_release(gi);
        mf_tensor_release(*out);
        *out = sum;
    }
    return st;
}

enum { PER_SOURCE = 64 };

static MfStatus sources_run(MfGraph *g, MfTensor *y, MfTensor *grad_y, int lo, int hi, int n,
                            MfVariable *const *vars, MfTensor *const *tensors, int *first,
                            MfTensor **xs, MfTensor **gs, MfTensor **grads)
{
    int nx = 0, cap = n * PER_SOURCE;
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++) {
        first[i] = nx;
        st = source_xs(g, vars ? vars[i] : NULL, tensors ? tensors[i] : NULL, xs, &nx, cap);
    }
    first[n] = nx;
    if (st == MF_OK && nx > 0)
        st = mf_graph_gradients_window(g, 1, &y, nx, xs, grad_y ? &grad_y : NULL, lo, hi, gs);
    bool pushed = false;
    if (st == MF_OK && mf_graph_default() != g && (st = mf_graph_push_default(g)) == MF_OK)
        pushed = true;
    for (int i = 0; i < n && st == MF_OK; i++)
        st = sum_grads(first[i + 1] - first[i], gs + first[i], &grads[i]);
    if (pushed)
        mf_graph_pop_default();
    return st;
}

MfStatus mf_graph_gradients_sources(MfGraph *g, MfTensor *y, MfTensor *grad_y, int lo, int hi,
                                    int n, MfVariable *const *vars, MfTensor *const *tensors,
                                    MfTensor **grads)
{
    for (int i = 0; i < n; i++)
        grads[i] = NULL;
    size_t cap = (size_t)(n ? n : 1) * PER_SOURCE;
    int *first = mf_calloc((size_t)n + 1, sizeof *first);
    MfTensor **xs = mf_calloc(cap, sizeof *xs), **gs = mf_calloc(cap, sizeof *gs);
    MfStatus st = first && xs && gs ? MF_OK
                  : mf_err_nomem("gradients", (unsigned long long)cap * 2 * sizeof *xs);
    if (st == MF_OK)
        st = sources_run(g, y, grad_y, lo, hi, n, vars, tensors, first, xs, gs, grads);
    for (size_t i = 0; xs && gs && i < cap; i++) {
        mf_tensor_release(xs[i]);
        mf_tensor_release(gs[i]);
    }
    mf_free(first);
    mf_free(xs);
    mf_free(gs);
    if (st != MF_OK)
        for (int i = 0; i < n; i++) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    return st;
}

