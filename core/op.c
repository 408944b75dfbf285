/* op.c — the op table and the dispatcher 'mf_op_call' (see op.h).
 *
 * The eager fast path is: infer, allocate the outputs, run the kernel, and
 * only when a recorder is registered, record. No graph or tape code is
 * reached when neither is in use, and the profiler costs one branch when
 * it is off. */
#include "op.h"

#include <string.h>

#include "half_call.h"
#include "numerics.h"
#include "ops/common.h"
#include "profile/profile.h"

#define MF_OP(id, desc) extern const MfOpDesc desc;
#include "oplist.h"
#undef MF_OP

const MfOpDesc *const mf_op_table[MF_NOPS] = {
#define MF_OP(id, desc) [id] = &desc,
#include "oplist.h"
#undef MF_OP
};
/* The enum and the table come from one list; a table written out by hand
 * (or an entry listed twice) would not keep one descriptor per MfOpId. */
enum { OPLIST_ENTRIES = 0
#define MF_OP(id, desc) + 1
#include "oplist.h"
#undef MF_OP
};
_Static_assert(MF_COUNTOF(mf_op_table) == MF_NOPS && (int)OPLIST_ENTRIES == (int)MF_NOPS,
               "one descriptor per MfOpId");

/* declared next to the C functions they call */
extern const MfOpDesc mf_desc_clip_by_value, mf_desc_clip_by_norm, mf_desc_clip_by_average_norm,
    mf_desc_l2_loss, mf_desc_sigmoid_xent, mf_desc_conv2d_transpose, mf_desc_tril, mf_desc_triu;

const MfOpDesc *const mf_composite_table[] = {
    &mf_desc_clip_by_value, &mf_desc_clip_by_norm, &mf_desc_clip_by_average_norm,
    &mf_desc_l2_loss, &mf_desc_sigmoid_xent, &mf_desc_conv2d_transpose, &mf_desc_tril,
    &mf_desc_triu, NULL,
};

volatile int mf_interrupted;

static const MfBuilder *builder;
static const MfRecorder *recorder;

void mf_op_set_builder(const MfBuilder *b)
{
    builder = b;
}

/* How deep the graph executor is in running nodes (runs nest: a node may
 * run a session of its own). The one home of the eager-or-graph question
 * "is a graph being run now?", below graph/ and train/, which ask it. */
static int exec_depth;

void mf_op_exec_enter(void)
{
    exec_depth++;
}

void mf_op_exec_leave(void)
{
    exec_depth--;
}

bool mf_op_exec_running(void)
{
    return exec_depth > 0;
}

static const MfRecorder *forward;

void mf_op_set_forward(const MfRecorder *r)
{
    forward = r;
}

void mf_op_set_recorder(const MfRecorder *r)
{
    recorder = r;
}

const MfRecorder *mf_op_recorder(void)
{
    return recorder;
}

MfAttrs mf_attrs_default(void)
{
    MfAttrs a;
    memset(&a, 0, sizeof a);
    a.dtype = MF_FLOAT32;
    return a;
}

MfOpId mf_op_find(const char *name)
{
    for (int i = 0; i < MF_NOPS; i++)
        if (strcmp(mf_op_table[i]->name, name) == 0)
            return (MfOpId)i;
    return MF_NOPS;
}

static bool any_symbolic(int n, MfTensor *const *inputs)
{
    for (int i = 0; i < n; i++)
        if (inputs[i]->node)
            return true;
    return false;
}

static void release_outputs(MfTensor **outs)
{
    for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
        mf_tensor_release(outs[i]);
        outs[i] = NULL;
    }
}

/* Allocates the inferred outputs; on failure names the op. */
static MfStatus allocate_outputs(const MfOpCall *c, MfTensor **outs)
{
    for (int i = 0; i < c->noutputs; i++) {
        const MfTensorSpec *s = &c->out[i];
        outs[i] = mf_tensor_new(s->dtype, s->rank, s->shape);
        if (!outs[i]) {
            mf_err_prefix("%s", mf_op_table[c->op]->api);
            return MF_ENOMEM;
        }
    }
    return MF_OK;
}

/* True when the call has nothing to compute: every input and output is
 * empty and the op has no effect beyond its outputs. Its kernel is not run:
 * a kernel walks rows of an axis, and (2^36, 0) has 2^36 empty ones
 * (mf.sort took over a minute). Outputs are checked first: they are rarely
 * empty, so a call usually pays one numel. */
static bool nothing_to_compute(const MfOpDesc *d, const MfOpCall *c)
{
    if (d->flags & (MF_OP_RANDOM | MF_OP_EFFECTS | MF_OP_ASYNC_START | MF_OP_ASYNC_WAIT))
        return false;
    for (int i = 0; i < c->noutputs; i++)
        if (mf_shape_numel(c->out[i].rank, c->out[i].shape) != 0)
            return false;
    for (int i = 0; i < c->ninputs; i++)
        if (mf_tensor_numel(c->inputs[i]) != 0)
            return false;
    return c->noutputs > 0;
}

/* The kernel part of an eager call: infer, allocate, forward. Inlined so
 * that the profiler, when off, adds only its branch to the eager path. */
static inline __attribute__((always_inline)) MfStatus
run_kernel(const MfOpDesc *d, MfOpCall *c, MfTensor **outs)
{
    MfStatus st = d->infer(c);
    if (st != MF_OK)
        return st;
    if (d->flags & MF_OP_VIEW)
        return d->forward(c, outs);
    if ((st = allocate_outputs(c, outs)) != MF_OK || nothing_to_compute(d, c))
        return st;
    if ((d->flags & MF_OP_ELEMENTWISE) && mf_elementwise_split(d, c, outs))
        return MF_OK;
    return d->forward(c, outs);
}

/* run_kernel inside an op span of the profiler, named by the pending graph
 * node or else the op's label (its name and non-default attributes), with the descriptor's cost (an
 * elementwise estimate when it has none; zero when 'infer' failed). */
static MfStatus run_kernel_profiled(const MfOpDesc *d, MfOpCall *c, MfTensor **outs)
{
    const char *node = mf_prof_take_node();
    char label[256];   /* formatted before the span: its time is not the op's */
    int rank = c->ninputs && c->inputs[0] ? c->inputs[0]->rank : -1;
    mf_op_label(c->op, c->attrs, rank, label, sizeof label);
    MfProfSpan span;
    mf_prof_begin(&span);
    MfStatus st = run_kernel(d, c, outs);
    MfCost cost = {0, 0};
    if (st == MF_OK)
        cost = d->cost ? d->cost(c) : mf_cost_elementwise(c);
    mf_prof_end_op_call(&span, node, d->name, label, cost.flops, cost.bytes);
    return st;
}

static MfStatus run_eager(MfOpCall *c, MfTensor **outs)
{
    const MfOpDesc *d = mf_op_table[c->op];
    MfStatus st = mf_prof_on ? run_kernel_profiled(d, c, outs) : run_kernel(d, c, outs);
    if (st == MF_OK && mf_numerics_on)
        st = mf_numerics_check(c, outs);
    if (st == MF_OK && recorder)
        st = recorder->record(recorder->self, c, outs);
    return st;
}

MfStatus mf_op_call(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                    MfTensor **outs, int *noutputs)
{
    static const MfAttrs no_attrs;
    const MfOpDesc *d = mf_op_table[op];
    for (int i = 0; i < MF_MAX_OUTPUTS; i++)
        outs[i] = NULL;
    /* a fixed arity may be followed by up to 'optional_inputs' more */
    if (ninputs < d->arity ||
        (ninputs > d->arity + d->optional_inputs && !(d->flags & MF_OP_VARIADIC)))
        return mf_err_set(MF_EARG, "%s: expected %d input(s), got %d", d->api, d->arity,
                          ninputs);
    for (int i = 0; i < ninputs; i++)
        if (!inputs[i])
            return mf_err_set(MF_EARG, "%s: input %d is missing", d->api, i + 1);
    if (mf_half_call_wanted(op, ninputs, inputs))
        return mf_half_call(op, ninputs, inputs, attrs, outs, noutputs);
    /* Fields are set one by one: an initializer would zero all the output
     * specs, a few hundred bytes per op that 'infer' writes anyway. */
    MfOpCall c;
    c.op = op;
    c.ninputs = ninputs;
    c.inputs = inputs;
    c.attrs = attrs ? attrs : &no_attrs;
    c.noutputs = 0;
    MfStatus st;
    /* Symbolic tensors exist only once a graph (and so the builder) does. */
    if (builder && (builder->building(builder->self) || any_symbolic(ninputs, inputs))) {
        st = builder->build(builder->self, &c, outs);
    } else {
        st = run_eager(&c, outs);
    }
    if (st == MF_OK && forward && !exec_depth)
        st = forward->record(forward->self, &c, outs);
    if (st != MF_OK) {
        release_outputs(outs);
        return st;
    }
    if (noutputs)
        *noutputs = c.noutputs;
    return MF_OK;
}

MfStatus mf_op1(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                MfTensor **out)
{
    MfTensor *outs[MF_MAX_OUTPUTS];
    MfStatus st = mf_op_call(op, ninputs, inputs, attrs, outs, NULL);
    *out = outs[0];
    for (int i = 1; i < MF_MAX_OUTPUTS; i++)
        mf_tensor_release(outs[i]);
    return st;
}

MfStatus mf_unary(MfOpId op, MfTensor *x, MfTensor **out)
{
    return mf_op1(op, 1, &x, NULL, out);
}

MfStatus mf_binary(MfOpId op, MfTensor *a, MfTensor *b, MfTensor **out)
{
    MfTensor *in[2] = {a, b};
    return mf_op1(op, 2, in, NULL, out);
}
