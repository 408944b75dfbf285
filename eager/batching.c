/* batching.c — the batching rule of each op (see batching.h), grouped by
 * family. Every rule calls ops, so it runs eagerly, builds nodes inside
 * mf.trace, and tapes record it. To give an op a rule, add its line to
 * 'rules' below: tests/unit/test_batching.c checks it against a loop over
 * examples and lists the ops that have none. */
#include "batching.h"

#include "core/alloc.h"
#include "core/ops/view.h"
#include "core/ops/window.h"

#define ALL ~0u
#define IN(i) (1u << (i))

static bool in_mask(unsigned mask, int i)
{
    return i < 32 && (mask & IN(i));
}

static const char *op_name(const MfBatchCall *b)
{
    return mf_op_table[b->call->op]->name;
}

/* The rank of input 'i' as one example sees it. */
static int logical_rank(const MfBatchCall *b, int i)
{
    return b->call->inputs[i]->rank - (b->batched[i] ? 1 : 0);
}

static MfStatus retained(MfTensor *x, MfTensor **out)
{
    mf_tensor_retain(x);
    *out = x;
    return MF_OK;
}

/* Batched 'x' (B, d...) as (B, 1 (pad times), d...). */
static MfStatus pad_after_batch(MfTensor *x, int pad, MfTensor **out)
{
    if (pad <= 0)
        return retained(x, out);
    if (x->rank + pad > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "vmap: rank %d with the batch axis, at most %d",
                          x->rank + pad, MF_MAX_RANK);
    int64_t shape[MF_MAX_RANK];
    shape[0] = x->shape[0];
    for (int d = 0; d < pad; d++)
        shape[1 + d] = 1;
    for (int d = 1; d < x->rank; d++)
        shape[pad + d] = x->shape[d];
    return mf_reshape(x, x->rank + pad, shape, out);
}

/* Unbatched 'x' for each of 'size' examples: (size, x's shape). */
static MfStatus broadcast_batch(MfTensor *x, int64_t size, MfTensor **out)
{
    if (x->rank + 1 > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "vmap: rank %d with the batch axis, at most %d",
                          x->rank + 1, MF_MAX_RANK);
    MfAttrs a = mf_attrs_default();
    a.nints = x->rank + 1;
    a.ints[0] = size;
    for (int d = 0; d < x->rank; d++)
        a.ints[d + 1] = x->shape[d];
    return mf_op1(MF_OP_BROADCAST_TO, 1, &x, &a, out);
}

/* 'x' with its first 'n' axes replaced by 'rank' axes of 'shape'. */
static MfStatus reshape_front(MfTensor *x, int n, int rank, const int64_t *shape,
                              MfTensor **out)
{
    int64_t s[MF_MAX_RANK];
    int r = rank + x->rank - n;
    if (r > MF_MAX_RANK || r < 0)
        return mf_err_set(MF_ESHAPE, "vmap: rank %d with the batch axis, at most %d", r,
                          MF_MAX_RANK);
    for (int d = 0; d < rank; d++)
        s[d] = shape[d];
    for (int d = n; d < x->rank; d++)
        s[rank + d - n] = x->shape[d];
    return mf_reshape(x, r, s, out);
}

/* The inputs a rule passes to the op: owned, released together. */
typedef struct Args {
    MfTensor *small[8], **t;
    int n;
} Args;

static MfStatus args_init(Args *a, int n)
{
    a->n = n;
    a->t = n > 8 ? mf_calloc((size_t)n, sizeof *a->t) : a->small;
    for (int i = 0; n <= 8 && i < n; i++)
        a->small[i] = NULL;
    return a->t ? MF_OK : mf_err_nomem("vmap", (unsigned long long)n * sizeof *a->t);
}

static void args_free(Args *a)
{
    for (int i = 0; a->t && i < a->n; i++)
        mf_tensor_release(a->t[i]);
    if (a->t && a->t != a->small)
        mf_free(a->t);
}

/* The op on 'in' with 'attrs'; every output batched (or none, 'batched'). */
static MfStatus call_op(const MfBatchCall *b, Args *in, const MfAttrs *attrs, bool batched,
                        MfTensor **outs, bool *ob)
{
    int nout = 0;
    MfStatus st = mf_op_call(b->call->op, in->n, in->t, attrs, outs, &nout);
    for (int k = 0; k < MF_MAX_OUTPUTS; k++)
        ob[k] = st == MF_OK && k < nout && batched;
    return st;
}

/* ---- the families ------------------------------------------------------------- */

/* 'op' on the inputs, each batched one with ones after the batch axis up
 * to the largest rank, so that broadcasting pairs each example with itself
 * and repeats an unbatched input for every example; a batched input must
 * have 'min_rank' axes per example (the matrices of a BatchMatMul). */
static MfStatus broadcast_batched(const MfBatchCall *b, MfOpId op, int min_rank,
                                  MfTensor **outs, bool *ob)
{
    const MfOpCall *c = b->call;
    int rank = 0, nout = 0;
    for (int i = 0; i < c->ninputs; i++)
        rank = logical_rank(b, i) > rank ? logical_rank(b, i) : rank;
    Args in;
    MfStatus st = args_init(&in, c->ninputs);
    for (int i = 0; i < c->ninputs && st == MF_OK; i++) {
        if (b->batched[i] && logical_rank(b, i) < min_rank)
            st = mf_err_set(MF_EARG, "vmap: %s of a vector per example (input %d) has no "
                            "batching rule; make it a matrix (reshape)", op_name(b), i + 1);
        else
            st = b->batched[i] ? pad_after_batch(c->inputs[i], rank - logical_rank(b, i),
                                                 &in.t[i])
                               : retained(c->inputs[i], &in.t[i]);
    }
    if (st == MF_OK)
        st = mf_op_call(op, in.n, in.t, c->attrs, outs, &nout);
    for (int k = 0; k < MF_MAX_OUTPUTS; k++)
        ob[k] = st == MF_OK && k < nout;
    args_free(&in);
    return st;
}

static MfStatus elementwise(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    return broadcast_batched(b, b->call->op, 0, outs, ob);
}

/* The AXIS and AXES attributes of 'd' in 'a' one axis up ('rank': that of
 * one example's first input); MF_EARG for a shape-like attribute. */
static MfStatus shift_axes(const MfBatchCall *b, int rank, MfAttrs *a)
{
    const MfOpDesc *d = mf_op_table[b->call->op];
    for (int k = 0; k < d->nattrs; k++) {
        const MfAttrDef *def = &d->attrs[k];
        if (def->type == MF_ATTR_AXIS) {
            int64_t *v = MF_ATTR_FIELD(a, def, int64_t);
            *v += *v >= 0;
        } else if (def->type == MF_ATTR_AXES) {
            int64_t *v = MF_ATTR_FIELD(a, def, int64_t);
            int *n = &MF_ATTR_COUNT(a, def);
            if ((def->flags & MF_ATTR_ALL_AXES) && a->all_axes && rank > 0) {
                for (int j = 0; j < rank; j++)
                    v[j] = j + 1;
                *n = rank;
                a->all_axes = false;
            } else {
                for (int j = 0; j < *n; j++)
                    v[j] += v[j] >= 0;
            }
        } else if (def->type == MF_ATTR_INTS || def->type == MF_ATTR_PAIRS ||
                   def->type == MF_ATTR_WINDOW) {
            return mf_err_set(MF_EARG, "vmap: %s has no batching rule for its attribute '%s' "
                              "(eager/batching.c)", op_name(b), def->name);
        }
    }
    return MF_OK;
}

/* The inputs of 'mask' batched (an unbatched one repeated), the others as
 * they are, which must be unbatched. */
static MfStatus batch_inputs(const MfBatchCall *b, unsigned mask, Args *in)
{
    const MfOpCall *c = b->call;
    MfStatus st = args_init(in, c->ninputs);
    for (int i = 0; i < c->ninputs && st == MF_OK; i++) {
        if (!in_mask(mask, i) && b->batched[i])
            return mf_err_set(MF_EARG, "vmap: %s with a batched input %d has no batching rule "
                              "(only inputs that are not batched there)", op_name(b), i + 1);
        st = in_mask(mask, i) && !b->batched[i] ? broadcast_batch(c->inputs[i], b->size, &in->t[i])
                                                : retained(c->inputs[i], &in->t[i]);
    }
    return st;
}

static MfStatus axes(const MfBatchCall *b, unsigned mask, MfTensor **outs, bool *ob)
{
    MfAttrs a = *b->call->attrs;
    Args in = {.t = NULL};
    MfStatus st = shift_axes(b, logical_rank(b, 0), &a);
    if (st == MF_OK && (b->call->op == MF_OP_SUM || b->call->op == MF_OP_MEAN ||
                        b->call->op == MF_OP_MAX || b->call->op == MF_OP_MIN ||
                        b->call->op == MF_OP_PROD) && a.all_axes) {
        /* every axis of a scalar example: nothing to reduce */
        a.all_axes = false;
        a.naxes = 0;
        st = mf_op1(MF_OP_IDENTITY, 1, b->call->inputs, NULL, &outs[0]);
        ob[0] = st == MF_OK;
        return st;
    }
    if (st == MF_OK)
        st = batch_inputs(b, mask, &in);
    if (st == MF_OK)
        st = call_op(b, &in, &a, true, outs, ob);
    args_free(&in);
    return st;
}

/* Outputs (size * n, rest...) back to (size, n, rest...). */
static MfStatus split_rows(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfStatus st = MF_OK;
    for (int k = 0; k < MF_MAX_OUTPUTS && outs[k] && st == MF_OK; k++) {
        MfTensor *y = outs[k], *split = NULL;
        if (y->rank < 1 || y->shape[0] < 0 || y->shape[0] % b->size)
            return mf_err_set(MF_EARG, "vmap: %s: output %d does not keep the rows apart",
                              op_name(b), k + 1);
        int64_t s[2] = {b->size, y->shape[0] / b->size};
        st = reshape_front(y, 1, 2, s, &split);
        mf_tensor_release(y);
        outs[k] = split;
        ob[k] = true;
    }
    return st;
}

static MfStatus rows(const MfBatchCall *b, unsigned mask, MfTensor **outs, bool *ob)
{
    const MfOpCall *c = b->call;
    Args in = {.t = NULL};
    MfStatus st = batch_inputs(b, mask, &in);
    for (int i = 0; i < c->ninputs && st == MF_OK; i++) {
        if (!in_mask(mask, i))
            continue;
        MfTensor *x = in.t[i];
        int64_t merged = x->rank >= 2 ? x->shape[0] * x->shape[1] : 0;
        st = x->rank < 2 ? mf_err_set(MF_EARG, "vmap: %s needs rows in input %d of each "
                                      "example, got a scalar", op_name(b), i + 1)
                         : reshape_front(x, 2, 1, &merged, &in.t[i]);
        if (st == MF_OK)
            mf_tensor_release(x);
    }
    if (st == MF_OK)
        st = call_op(b, &in, c->attrs, false, outs, ob);
    if (st == MF_OK)
        st = split_rows(b, outs, ob);
    args_free(&in);
    return st;
}

/* ---- rules of their own --------------------------------------------------------- */

/* Ops on the innermost matrices whose batch axes broadcast (BatchMatMul,
 * attention): the batch becomes one more batch axis. */
static MfStatus batch_matmul_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    return broadcast_batched(b, MF_OP_BATCH_MATMUL, 2, outs, ob);
}

/* With dropout, a loop over examples would draw each example's mask at the
 * same flat indices; one batched call draws them at other ones: refused. */
static MfStatus attention_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    if (b->call->attrs->scalar[1] > 0)
        return mf_err_set(MF_EARG, "vmap: %s with dropout has no batching rule (its mask "
                          "would differ from a loop over examples)", op_name(b));
    return broadcast_batched(b, b->call->op, 2, outs, ob);
}

/* MatMul of a batched 'a' and a shared 'b': one GEMM over the rows of
 * every example; otherwise a BatchMatMul. */
static MfStatus matmul_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    if (b->batched[0] && !b->batched[1] && !b->call->attrs->transpose_a)
        return rows(b, IN(0), outs, ob);
    return batch_matmul_rule(b, outs, ob);
}

/* Reshape, BroadcastTo: the batch size before the shape attribute. */
static MfStatus shape_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    const MfOpCall *c = b->call;
    MfAttrs a = *c->attrs;
    if (c->ninputs > 1 || a.nints + 1 > MF_MAX_RANK)
        return mf_err_set(MF_EARG, "vmap: %s with a shape given as a tensor has no batching "
                          "rule", op_name(b));
    for (int d = a.nints; d > 0; d--)
        a.ints[d] = a.ints[d - 1];
    a.ints[0] = b->size;
    a.nints++;
    Args in;
    MfStatus st = args_init(&in, 1);
    if (st == MF_OK)   /* BroadcastTo aligns trailing axes: the example's axes first */
        st = c->op == MF_OP_BROADCAST_TO
                 ? pad_after_batch(c->inputs[0], c->attrs->nints - logical_rank(b, 0), &in.t[0])
                 : retained(c->inputs[0], &in.t[0]);
    if (st == MF_OK)
        st = call_op(b, &in, &a, true, outs, ob);
    args_free(&in);
    return st;
}

/* Transpose: the batch axis stays first. */
static MfStatus transpose_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfAttrs a = *b->call->attrs;
    int rank = logical_rank(b, 0);
    for (int j = rank; j > 0; j--)   /* no perm: the axes reversed */
        a.axes[j] = (a.naxes ? a.axes[j - 1] : rank - j) + 1;
    a.axes[0] = 0;
    a.naxes = rank + 1;
    MfStatus st = mf_op1(MF_OP_TRANSPOSE, 1, b->call->inputs, &a, &outs[0]);
    ob[0] = st == MF_OK;
    return st;
}

/* Attributes with one entry per axis ('halves' of them: slice's begin and
 * size, pad's pairs), each given 'first' for the batch axis. */
static MfStatus per_axis_rule(const MfBatchCall *b, int halves, const int64_t *first,
                              MfTensor **outs, bool *ob)
{
    MfAttrs a = *b->call->attrs;
    int per = a.nints / halves;
    if (a.nints + halves > 2 * MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "vmap: %s: too many axes with the batch axis", op_name(b));
    for (int h = halves - 1; h >= 0; h--) {
        for (int j = per - 1; j >= 0; j--)
            a.ints[h * (per + 1) + 1 + j] = b->call->attrs->ints[h * per + j];
        a.ints[h * (per + 1)] = first[h];
    }
    a.nints += halves;
    MfStatus st = mf_op1(b->call->op, 1, b->call->inputs, &a, &outs[0]);
    ob[0] = st == MF_OK;
    return st;
}

static MfStatus slice_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    const int64_t first[2] = {0, b->size};
    return per_axis_rule(b, 2, first, outs, ob);
}

static MfStatus tile_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    const int64_t first[1] = {1};
    return per_axis_rule(b, 1, first, outs, ob);
}

/* Pad: pairs {before, after} per axis, {0, 0} for the batch axis. */
static MfStatus pad_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfAttrs a = *b->call->attrs;
    if (a.nints + 2 > 2 * MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "vmap: %s: too many axes with the batch axis", op_name(b));
    for (int j = a.nints - 1; j >= 0; j--)
        a.ints[j + 2] = a.ints[j];
    a.ints[0] = a.ints[1] = 0;
    a.nints += 2;
    Args in;
    MfStatus st = args_init(&in, b->call->ninputs);
    for (int i = 0; i < in.n && st == MF_OK; i++)
        if (i > 0 && b->batched[i])
            st = mf_err_set(MF_EARG, "vmap: %s with a batched padding value has no batching "
                            "rule", op_name(b));
        else
            st = retained(b->call->inputs[i], &in.t[i]);
    if (st == MF_OK)
        st = call_op(b, &in, &a, true, outs, ob);
    args_free(&in);
    return st;
}

/* Squeeze of every axis of size 1: those of one example, named. */
static MfStatus squeeze_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfAttrs a = *b->call->attrs;
    const MfTensor *x = b->call->inputs[0];
    if (a.naxes == 0) {
        for (int d = 1; d < x->rank; d++)
            if (x->shape[d] == 1)
                a.axes[a.naxes++] = d;
    } else {
        for (int j = 0; j < a.naxes; j++)
            a.axes[j]++;
    }
    MfStatus st = mf_op1(MF_OP_SQUEEZE, 1, b->call->inputs, &a, &outs[0]);
    ob[0] = st == MF_OK;
    return st;
}

/* The shape of one example's input 1 (the 'like' of the *_like ops). */
static int like_shape(const MfBatchCall *b, int64_t *shape)
{
    const MfTensor *l = b->call->inputs[1];
    int off = b->batched[1] ? 1 : 0;
    for (int d = off; d < l->rank; d++)
        shape[d - off] = l->shape[d];
    return l->rank - off;
}

/* 'x' reshaped to one example's 'like' shape, after the batch size when
 * 'batched'. */
static MfStatus reshape_to(MfTensor *x, bool batched, int64_t size, int rank,
                           const int64_t *shape, MfTensor **out)
{
    int64_t s[MF_MAX_RANK + 1];
    int off = batched ? 1 : 0;
    s[0] = size;
    for (int d = 0; d < rank; d++)
        s[d + off] = shape[d];
    return mf_reshape(x, rank + off, s, out);
}

static MfStatus reshape_like_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfTensor *const *in = b->call->inputs;
    int64_t s[MF_MAX_RANK];
    int r = like_shape(b, s);
    MfStatus st = b->batched[0] && b->batched[1]
                      ? mf_op1(MF_OP_RESHAPE_LIKE, 2, in, b->call->attrs, &outs[0])
                      : reshape_to(in[0], b->batched[0], b->size, r, s, &outs[0]);
    ob[0] = st == MF_OK && b->batched[0];
    return st;
}

static MfStatus broadcast_to_like_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfTensor *const *in = b->call->inputs, *x = NULL;
    MfAttrs a = mf_attrs_default();
    int off = b->batched[0] ? 1 : 0;
    a.nints = like_shape(b, a.ints + off) + off;
    a.ints[0] = off ? b->size : a.ints[0];
    MfStatus st = off ? pad_after_batch(in[0], a.nints - off - logical_rank(b, 0), &x)
                      : retained(in[0], &x);
    MfTensor *pair[2] = {x, in[1]};
    if (st == MF_OK && off && b->batched[1])
        st = mf_op1(MF_OP_BROADCAST_TO_LIKE, 2, pair, b->call->attrs, &outs[0]);
    else if (st == MF_OK)
        st = mf_op1(MF_OP_BROADCAST_TO, 1, &x, &a, &outs[0]);
    ob[0] = st == MF_OK && off;
    mf_tensor_release(x);
    return st;
}

/* SumToLike: the sum over the axes one example's 'like' does not have or
 * has as 1, then its shape. */
static MfStatus sum_to_like_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    MfTensor *x = b->call->inputs[0], *summed = NULL;
    int64_t s[MF_MAX_RANK];
    int r = like_shape(b, s), off = b->batched[0] ? 1 : 0, rx = x->rank - off;
    MfAttrs a = mf_attrs_default();
    a.keepdims = true;
    for (int j = 0; j < rx; j++) {
        int lj = j - (rx - r);
        if (lj < 0 || (s[lj] == 1 && x->shape[off + j] != 1))
            a.axes[a.naxes++] = off + j;
    }
    MfStatus st = a.naxes ? mf_op1(MF_OP_SUM, 1, &x, &a, &summed) : retained(x, &summed);
    if (st == MF_OK)
        st = reshape_to(summed, off, b->size, r, s, &outs[0]);
    ob[0] = st == MF_OK && off;
    mf_tensor_release(summed);
    return st;
}

/* BiasAdd: a shared bias adds to every example as it is; a batched one
 * is an AddV2 that broadcasts (NHWC: the bias runs along the last axis). */
static MfStatus bias_add_rule(const MfBatchCall *b, MfTensor **outs, bool *ob)
{
    if (b->call->attrs->data_format != MF_NHWC)
        return mf_err_set(MF_EARG, "vmap: %s in NCHW has no batching rule", op_name(b));
    if (b->batched[0] && !b->batched[1]) {
        MfStatus st = mf_op_call(MF_OP_BIAS_ADD, 2, b->call->inputs, b->call->attrs, outs, NULL);
        ob[0] = st == MF_OK;
        return st;
    }
    MfOpCall add = *b->call;
    add.op = MF_OP_ADD;
    add.attrs = NULL;
    MfBatchCall ab = {&add, b->batched, b->size};
    MfAttrs none = mf_attrs_default();
    add.attrs = &none;
    return elementwise(&ab, outs, ob);
}

/* ---- the table -------------------------------------------------------------------- */

#define ELEMENTWISE {MF_BATCH_ELEMENTWISE, 0, NULL}
#define AXES(m) {MF_BATCH_AXES, (m), NULL}
#define ROWS(m) {MF_BATCH_ROWS, (m), NULL}
#define OWN(f) {MF_BATCH_OWN, 0, (f)}

/* Ops flagged MF_OP_ELEMENTWISE need no line: they are ELEMENTWISE. */
static const MfBatchRule rules[MF_NOPS] = {
    /* elementwise (broadcasting) without the flag */
    [MF_OP_IDENTITY] = ELEMENTWISE, [MF_OP_STOP_GRADIENT] = ELEMENTWISE,
    [MF_OP_CAST] = ELEMENTWISE, [MF_OP_SELECT] = ELEMENTWISE, [MF_OP_EQUAL] = ELEMENTWISE,
    [MF_OP_NOT_EQUAL] = ELEMENTWISE, [MF_OP_LESS] = ELEMENTWISE,
    [MF_OP_LESS_EQUAL] = ELEMENTWISE, [MF_OP_GREATER] = ELEMENTWISE,
    [MF_OP_GREATER_EQUAL] = ELEMENTWISE, [MF_OP_LOGICAL_AND] = ELEMENTWISE,
    [MF_OP_LOGICAL_OR] = ELEMENTWISE, [MF_OP_LOGICAL_NOT] = ELEMENTWISE,
    [MF_OP_IS_NAN] = ELEMENTWISE, [MF_OP_IS_INF] = ELEMENTWISE, [MF_OP_IS_FINITE] = ELEMENTWISE,
    /* same-shape inputs, no axes: every input batched */
    [MF_OP_RELU_GRAD] = AXES(ALL), [MF_OP_GELU_GRAD] = AXES(ALL), [MF_OP_SILU_GRAD] = AXES(ALL),
    [MF_OP_SIGMOID_GRAD] = AXES(ALL), [MF_OP_TANH_GRAD] = AXES(ALL),
    /* axes one up */
    [MF_OP_SUM] = AXES(ALL), [MF_OP_MEAN] = AXES(ALL), [MF_OP_MAX] = AXES(ALL),
    [MF_OP_MIN] = AXES(ALL), [MF_OP_PROD] = AXES(ALL), [MF_OP_ARGMAX] = AXES(ALL),
    [MF_OP_ARGMIN] = AXES(ALL), [MF_OP_ANY] = AXES(ALL), [MF_OP_ALL] = AXES(ALL),
    [MF_OP_CUMSUM] = AXES(ALL), [MF_OP_CUMPROD] = AXES(ALL), [MF_OP_REVERSE] = AXES(ALL),
    [MF_OP_SOFTMAX] = AXES(ALL), [MF_OP_LOG_SOFTMAX] = AXES(ALL),
    [MF_OP_SOFTMAX_GRAD] = AXES(ALL), [MF_OP_LOG_SOFTMAX_GRAD] = AXES(ALL),
    [MF_OP_LAYER_NORM] = AXES(ALL), [MF_OP_LAYER_NORM_GRAD] = AXES(ALL),
    [MF_OP_CONCAT] = AXES(ALL), [MF_OP_STACK] = AXES(ALL), [MF_OP_EXPAND_DIMS] = AXES(ALL),
    [MF_OP_SORT] = AXES(ALL), [MF_OP_ARGSORT] = AXES(ALL), [MF_OP_TOP_K] = AXES(ALL),
    [MF_OP_GATHER_ALONG_AXIS] = AXES(ALL), [MF_OP_GATHER] = AXES(IN(0)),
    [MF_OP_ONE_HOT] = AXES(ALL),
    /* the innermost matrices, any batch axes before them */
    [MF_OP_MATRIX_BAND_PART] = AXES(ALL), [MF_OP_TRILU] = AXES(ALL),
    [MF_OP_MATRIX_INVERSE] = AXES(ALL), [MF_OP_MATRIX_SOLVE] = AXES(ALL),
    [MF_OP_CHOLESKY] = AXES(ALL), [MF_OP_MATRIX_DETERMINANT] = AXES(ALL),
    /* independent rows */
    [MF_OP_SOFTMAX_XENT] = ROWS(ALL), [MF_OP_SPARSE_SOFTMAX_XENT] = ROWS(ALL),
    [MF_OP_MAX_POOL] = ROWS(IN(0)), [MF_OP_AVG_POOL] = ROWS(IN(0)),
    [MF_OP_CONV2D] = ROWS(IN(0)), [MF_OP_DEPTHWISE_CONV2D] = ROWS(IN(0)),
    /* their own */
    [MF_OP_MATMUL] = OWN(matmul_rule), [MF_OP_BATCH_MATMUL] = OWN(batch_matmul_rule),
    [MF_OP_ATTENTION] = OWN(attention_rule),
    [MF_OP_RESHAPE] = OWN(shape_rule), [MF_OP_BROADCAST_TO] = OWN(shape_rule),
    [MF_OP_TRANSPOSE] = OWN(transpose_rule), [MF_OP_SLICE] = OWN(slice_rule),
    [MF_OP_TILE] = OWN(tile_rule), [MF_OP_PAD] = OWN(pad_rule),
    [MF_OP_SQUEEZE] = OWN(squeeze_rule), [MF_OP_BIAS_ADD] = OWN(bias_add_rule),
    [MF_OP_RESHAPE_LIKE] = OWN(reshape_like_rule),
    [MF_OP_BROADCAST_TO_LIKE] = OWN(broadcast_to_like_rule),
    [MF_OP_SUM_TO_LIKE] = OWN(sum_to_like_rule),
};

MfBatchRule mf_batch_rule(MfOpId op)
{
    MfBatchRule none = {MF_BATCH_NONE, 0, NULL}, ew = ELEMENTWISE;
    if (op >= MF_NOPS)
        return none;
    if (rules[op].kind != MF_BATCH_NONE)
        return rules[op];
    return mf_op_table[op]->flags & MF_OP_ELEMENTWISE ? ew : none;
}

const char *mf_batch_kind_name(MfBatchKind kind)
{
    static const char *const names[] = {"none", "elementwise", "axes", "rows", "own"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

MfStatus mf_batch_call(const MfBatchCall *b, MfTensor **outs, bool *out_batched)
{
    const MfOpCall *c = b->call;
    MfBatchRule r = mf_batch_rule(c->op);
    bool any = false;
    for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
        outs[k] = NULL;
        out_batched[k] = false;
    }
    for (int i = 0; i < c->ninputs; i++)
        any = any || b->batched[i];
    MfStatus st;
    switch (any ? r.kind : MF_BATCH_NONE) {
    case MF_BATCH_ELEMENTWISE: st = elementwise(b, outs, out_batched); break;
    case MF_BATCH_AXES: st = axes(b, r.mask, outs, out_batched); break;
    case MF_BATCH_ROWS: st = rows(b, r.mask, outs, out_batched); break;
    case MF_BATCH_OWN: st = r.own(b, outs, out_batched); break;
    default:
        if (!any)   /* nothing batched: the op as it is */
            return mf_op_call(c->op, c->ninputs, c->inputs, c->attrs, outs, NULL);
        return mf_err_set(MF_EARG, "vmap: %s (%s) has no batching rule (add its line to the "
                          "table in eager/batching.c); help(mf.vmap) lists what vmap covers",
                          mf_op_table[c->op]->name, mf_op_table[c->op]->api);
    }
    if (st != MF_OK)
        for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
            mf_tensor_release(outs[k]);
            outs[k] = NULL;
            out_batched[k] = false;
        }
    return st;
}
