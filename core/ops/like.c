/* like.c — ops that take a shape from another tensor at run time:
 *   ReshapeLike(x, like)      x reshaped to like's shape
 *   BroadcastToLike(x, like)  x broadcast to like's shape
 *   SumToLike(x, like)        x summed over the axes along which like was
 *                             broadcast to x's shape (leading axes like
 *                             lacks, axes where like is 1), shaped like like
 *   Conv2DBackpropInputLike(filter, out_backprop, like)
 *                             Conv2DBackpropInput with input_sizes = like's
 *                             shape (TensorFlow's form: sizes as an input)
 *
 * Why: gradient functions undo reshapes and broadcasts with the input's
 * shape. In graph mode a placeholder may have unknown (-1) dims, and then
 * that shape exists only when the graph runs (TensorFlow builds Shape and
 * BroadcastGradientArgs nodes for this). These ops take 'like' as an input,
 * so the executor hands them its real shape; only its shape is read, and no
 * gradient flows to it. Building, they give 'like's static shape (with its
 * unknown dims) to what follows.
 *
 * Each delegates to Reshape, BroadcastTo, Sum or Conv2DBackpropInput with
 * attributes computed
 * from the run-time shapes, so the kernels and their results are those of
 * the ops a known shape would have used. Gradient functions reach these ops
 * through core/grad.h ('mf_grad_unbroadcast', 'mf_grad_broadcast_like',
 * 'mf_grad_reshape_like') and conv_grad.c, which choose them only when a
 * shape is unknown; the ops are not bound in Lua. */
#include "../grad.h"
#include "common.h"
#include "conv.h"

/* Output 0: x's dtype, like's (static) shape. */
static void spec_from_like(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0], *like = c->inputs[1];
    c->noutputs = 1;
    c->out[0].dtype = x->dtype;
    c->out[0].rank = like->rank;
    for (int d = 0; d < like->rank; d++)
        c->out[0].shape[d] = like->shape[d];
}

static bool known(const MfTensor *t)
{
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0)
            return false;
    return true;
}

/* "wrong shapes" for 'c', naming both shapes. */
static MfStatus shapes_error(const MfOpCall *c, const char *what)
{
    char a[MF_MAX_RANK * 24 + 8], b[MF_MAX_RANK * 24 + 8];
    const MfTensor *x = c->inputs[0], *like = c->inputs[1];
    return mf_err_set(MF_ESHAPE, "%s: cannot %s a tensor of shape %s to the shape %s",
                      op_api(c), what, mf_shape_str(x->rank, x->shape, a, sizeof a),
                      mf_shape_str(like->rank, like->shape, b, sizeof b));
}

/* True when a tensor of shape 'small' broadcasts to shape 'big' (aligned
 * at the right; 1 stretches; an unknown dim matches anything). */
static bool broadcasts_to(const MfTensor *small, const MfTensor *big)
{
    int lead = big->rank - small->rank;
    if (lead < 0)
        return false;
    for (int d = 0; d < small->rank; d++) {
        int64_t s = small->shape[d], b = big->shape[d + lead];
        if (s != b && s != 1 && s >= 0 && b >= 0)
            return false;
    }
    return true;
}

/* Runs 'op' with 'attrs' on x (input 0) into 'outs': infer, then forward. */
static MfStatus delegate(const MfOpCall *c, MfOpId op, const MfAttrs *a, MfTensor **outs,
                         MfOpCall *d)
{
    *d = (MfOpCall){.op = op, .ninputs = 1, .inputs = c->inputs, .attrs = a};
    MfStatus st = mf_op_table[op]->infer(d);
    if (st != MF_OK)
        return st;
    return outs ? mf_op_table[op]->forward(d, outs) : MF_OK;
}

/* Attributes holding like's run-time shape in 'ints' (Reshape, BroadcastTo). */
static MfAttrs shape_attrs(const MfTensor *like)
{
    MfAttrs a = mf_attrs_default();
    a.nints = like->rank;
    for (int d = 0; d < like->rank; d++)
        a.ints[d] = like->shape[d];
    return a;
}

/* ---- ReshapeLike ---------------------------------------------------------------- */

static MfStatus reshape_like_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0], *like = c->inputs[1];
    spec_from_like(c);
    if (known(x) && known(like) && mf_tensor_numel(x) != mf_tensor_numel(like))
        return shapes_error(c, "reshape");
    return MF_OK;
}

static MfStatus reshape_like_forward(const MfOpCall *c, MfTensor **outs)
{
    MfAttrs a = shape_attrs(c->inputs[1]);
    MfOpCall d;
    return delegate(c, MF_OP_RESHAPE, &a, outs, &d);
}

static MfStatus reshape_like_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_grad_reshape_like(g->doutputs[0], g->call->inputs[0], &dinputs[0]);
}

const MfOpDesc mf_desc_reshape_like = {
    .name = "ReshapeLike", .api = "reshape_like", .arity = 2, .flags = MF_OP_VIEW,
    .infer = reshape_like_infer, .forward = reshape_like_forward, .backward = reshape_like_grad,
};

/* ---- BroadcastToLike ------------------------------------------------------------ */

static MfStatus broadcast_like_infer(MfOpCall *c)
{
    spec_from_like(c);
    return broadcasts_to(c->inputs[0], c->inputs[1]) ? MF_OK : shapes_error(c, "broadcast");
}

static MfStatus broadcast_like_forward(const MfOpCall *c, MfTensor **outs)
{
    MfAttrs a = shape_attrs(c->inputs[1]);
    MfOpCall d;
    return delegate(c, MF_OP_BROADCAST_TO, &a, outs, &d);
}

static MfStatus broadcast_like_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_grad_unbroadcast(g->doutputs[0], g->call->inputs[0], &dinputs[0]);
}

const MfOpDesc mf_desc_broadcast_to_like = {
    .name = "BroadcastToLike", .api = "broadcast_to_like", .arity = 2, .flags = MF_OP_VIEW,
    .infer = broadcast_like_infer, .forward = broadcast_like_forward,
    .backward = broadcast_like_grad,
};

/* ---- SumToLike ------------------------------------------------------------------ */

static MfStatus sum_like_infer(MfOpCall *c)
{
    MfStatus st = mf_check_dtype(c, c->inputs[0], MF_NUMERIC,
                                 "a numeric dtype (float32, float64, int32, int64)");
    if (st != MF_OK)
        return st;
    spec_from_like(c);
    return broadcasts_to(c->inputs[1], c->inputs[0]) ? MF_OK : shapes_error(c, "sum");
}

/* Sum with keepdims over the broadcast axes, written through a view of the
 * output shaped like the keepdims result (same elements, same order). */
static MfStatus sum_like_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0], *like = c->inputs[1];
    MfAttrs a = mf_attrs_default();
    int lead = x->rank - like->rank;
    for (int d = 0; d < x->rank; d++)
        if (d < lead || (like->shape[d - lead] == 1 && x->shape[d] != 1))
            a.axes[a.naxes++] = d;
    if (a.naxes == 0) {
        mf_tensor_copy_into(outs[0], x);
        return MF_OK;
    }
    a.keepdims = true;
    MfOpCall d;
    MfStatus st = delegate(c, MF_OP_SUM, &a, NULL, &d);
    if (st != MF_OK)
        return st;
    int64_t strides[MF_MAX_RANK];
    mf_shape_strides(d.out[0].rank, d.out[0].shape, strides);
    MfTensor *v = mf_tensor_view(outs[0], d.out[0].rank, d.out[0].shape, strides,
                                 outs[0]->offset);
    if (!v)
        return mf_err_nomem(op_api(c), sizeof *v);
    st = mf_op_table[MF_OP_SUM]->forward(&d, &v);
    mf_tensor_release(v);
    return st;
}

static MfStatus sum_like_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_grad_broadcast_like(g->doutputs[0], g->call->inputs[0], &dinputs[0]);
}

const MfOpDesc mf_desc_sum_to_like = {
    .name = "SumToLike", .api = "sum_to_like", .arity = 2, .infer = sum_like_infer,
    .forward = sum_like_forward, .backward = sum_like_grad,
};

/* ---- Conv2DBackpropInputLike ---------------------------------------------------- */

/* The Conv2DBackpropInput call on (filter, out_backprop) with input_sizes
 * from like's shape (static while building, real when running). */
static MfStatus backprop_input_call(const MfOpCall *c, MfAttrs *a, MfOpCall *d)
{
    const MfTensor *like = c->inputs[2];
    if (like->rank != 4)
        return mf_err_set(MF_ESHAPE, "%s: the input must have rank 4 (NHWC), got rank %d",
                          op_api(c), like->rank);
    *a = *c->attrs;
    a->nints = 4;
    for (int d4 = 0; d4 < 4; d4++)
        a->ints[d4] = like->shape[d4];
    *d = (MfOpCall){.op = MF_OP_CONV2D_BACKPROP_INPUT, .ninputs = 2, .inputs = c->inputs,
                    .attrs = a};
    return mf_op_table[MF_OP_CONV2D_BACKPROP_INPUT]->infer(d);
}

static MfStatus backprop_input_like_infer(MfOpCall *c)
{
    MfAttrs a;
    MfOpCall d;
    MfStatus st = backprop_input_call(c, &a, &d);
    if (st != MF_OK)
        return st;
    c->noutputs = d.noutputs;
    c->out[0] = d.out[0];
    return MF_OK;
}

static MfStatus backprop_input_like_forward(const MfOpCall *c, MfTensor **outs)
{
    MfAttrs a;
    MfOpCall d;
    MfStatus st = backprop_input_call(c, &a, &d);
    return st != MF_OK ? st : mf_op_table[MF_OP_CONV2D_BACKPROP_INPUT]->forward(&d, outs);
}

/* As Conv2DBackpropInput's (inputs 0 and 1 are the same); 'like' gets none. */
static MfStatus backprop_input_like_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_conv2d_backprop_input_grad(g, dinputs);
}

static MfCost backprop_input_like_cost(const MfOpCall *c)
{
    MfAttrs a;
    MfOpCall d;
    MfCost none = {0, 0};
    if (backprop_input_call(c, &a, &d) != MF_OK)
        return none;
    return mf_op_table[MF_OP_CONV2D_BACKPROP_INPUT]->cost(&d);
}

const MfOpDesc mf_desc_conv2d_backprop_input_like = {
    .name = "Conv2DBackpropInputLike", .api = "conv2d_backprop_input_like", .arity = 3,
    .infer = backprop_input_like_infer, .forward = backprop_input_like_forward,
    .backward = backprop_input_like_grad, .cost = backprop_input_like_cost,
};
