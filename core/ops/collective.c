/* collective.c — MPIAllreduce, the collective op: the elementwise sum,
 * mean, max or min of one tensor over every process of a distributed run
 * (Horovod's HorovodAllreduce). One op for eager calls and graph nodes, so
 * a graph's allreduce shows in print(g), the schedule and the profiler like
 * any other op. The transport is distributed/'s (core/collective.h); with none
 * registered (one process), the result is the input.
 *
 * Its nonblocking pair, for graph mode's overlap with the backward pass:
 * MPIAllreduceStart(x) starts the reduction into its output and returns at
 * once (the output's values are not ready yet); MPIAllreduceWait(that
 * output) completes it and gives the result. Between the two the graph
 * executor runs other nodes and moves the request on (collective.h). The
 * requests started and not yet waited for are kept here.
 *
 * No gradient: DistributedOptimizer applies them to gradients, after the
 * backward pass (MF_OP_NONDIFF). */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../collective.h"
#include "../profile/profile.h"
#include "common.h"

static const MfCollective *hook;

void mf_collective_set(const MfCollective *c)
{
    hook = c;
}

void mf_collective_join_failed(const char *why)
{
    if (hook && hook->join_failed)
        hook->join_failed(hook->self, why);
}

const char *mf_reduce_name(MfReduceOp op)
{
    static const char *const names[] = {
        [MF_REDUCE_SUM] = "sum", [MF_REDUCE_MEAN] = "mean", [MF_REDUCE_MAX] = "max",
        [MF_REDUCE_MIN] = "min",
    };
    _Static_assert(MF_COUNTOF(names) == MF_NREDUCE, "one name per MfReduceOp");
    return op < MF_NREDUCE ? names[op] : NULL;
}

static MfStatus allreduce_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    int op = c->attrs->reduce_op;
    if (op < 0 || op >= MF_NREDUCE)
        return mf_err_set(MF_EARG, "allreduce: op must be sum, mean, max or min (code 0..3), "
                          "got code %d", op);
    if (op == MF_REDUCE_MEAN && !mf_dtype_is_float(x->dtype))
        return mf_err_set(MF_EDTYPE, "allreduce: op 'mean' needs a float32 or float64 tensor, "
                          "got %s (use op 'sum')", mf_dtype_name(x->dtype));
    mf_spec_like(c, x, x->dtype);
    return MF_OK;
}

static MfStatus allreduce_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    if (hook)
        return hook->allreduce(hook->self, x, outs[0], (MfReduceOp)c->attrs->reduce_op,
                               c->attrs->signature);
    mf_tensor_copy_into(outs[0], x);
    return MF_OK;
}

/* The bytes reduced (the payload; a ring allreduce sends about twice that). */
static MfCost allreduce_cost(const MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    double bytes = (double)mf_tensor_numel(x) * (double)mf_dtype_size(x->dtype);
    MfCost cost = {0, bytes};
    return cost;
}

const MfOpDesc mf_desc_allreduce = {
    .name = "MPIAllreduce", .api = "allreduce", .arity = 1,
    .flags = MF_OP_NONDIFF | MF_OP_EFFECTS,
    .infer = allreduce_infer, .forward = allreduce_forward, .cost = allreduce_cost,
};

/* ---- the nonblocking pair ------------------------------------------------------ */

/* One started allreduce: it reads 'in' and writes 'out' (both retained). */
typedef struct Pending {
    MfTensor *in, *out;
    void *req;
    bool done;   /* 'test' said so: only 'wait' (which frees it) is left */
} Pending;

static Pending *pending;
static int npending, cap_pending;
static bool immediate;

void mf_collective_set_immediate(bool on)
{
    immediate = on;
}

int mf_collective_pending(void)
{
    return npending;
}

static MfStatus remember(MfTensor *in, MfTensor *out, void *req)
{
    if (npending == cap_pending) {
        int cap = cap_pending ? 2 * cap_pending : 8;
        Pending *p = mf_realloc(pending, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("allreduce_start", (size_t)cap * sizeof *p);
        pending = p;
        cap_pending = cap;
    }
    mf_tensor_retain(in);
    mf_tensor_retain(out);
    pending[npending++] = (Pending){in, out, req, false};
    return MF_OK;
}

/* Waits for pending request 'k' and forgets it (keeping the order);
 * 'timed': a profiler row of its own (not inside a Wait node's). */
static MfStatus finish(int k, bool timed)
{
    Pending p = pending[k];
    memmove(pending + k, pending + k + 1, (size_t)(npending - k - 1) * sizeof *pending);
    npending--;
    MfProfSpan span;
    if (timed)
        mf_prof_begin(&span);
    MfStatus st = hook->wait(hook->self, p.req);
    if (timed)
        mf_prof_end_op(&span, "MPIAllreduceWait", 0, 0);
    mf_tensor_release(p.in);
    mf_tensor_release(p.out);
    return st;
}

MfStatus mf_collective_progress(void)
{
    if (npending == 0)
        return MF_OK;
    MfProfSpan span;
    mf_prof_begin(&span);
    MfStatus st = MF_OK;
    bool done = true;
    /* one transport call moves every request on: test the oldest not done */
    for (int k = 0; k < npending && done && st == MF_OK; k++)
        if (!pending[k].done && (st = hook->test(hook->self, pending[k].req, &done)) == MF_OK)
            pending[k].done = done;
    mf_prof_end_op(&span, "MPIAllreduceWait", 0, 0);
    return st;
}

MfStatus mf_collective_wait_all(void)
{
    if (npending == 0)
        return MF_OK;
    char saved[1024];   /* the message of an error being reported */
    snprintf(saved, sizeof saved, "%s", mf_err_msg() ? mf_err_msg() : "");
    MfStatus first = MF_OK;
    while (npending > 0) {
        MfStatus st = finish(0, true);
        if (first == MF_OK && st != MF_OK) {
            first = st;
            snprintf(saved, sizeof saved, "%s", mf_err_msg() ? mf_err_msg() : "");
        }
    }
    if (saved[0])
        mf_err_set(first == MF_OK ? MF_EARG : first, "%s", saved);
    return first;
}

/* MPIAllreduceStart: the reduction of x into a new output, started;
 * without a nonblocking transport (or 'immediate') it is done when the op
 * returns, and
 * with no transport at all (one process) the output is x itself (a view:
 * no copy, a one-process graph pays nothing). */
static MfStatus start_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = c->inputs[0];
    if (!hook)
        outs[0] = mf_tensor_view(x, x->rank, x->shape, x->strides, x->offset);
    else
        outs[0] = mf_tensor_new(x->dtype, x->rank, x->shape);
    if (!outs[0])
        return MF_ENOMEM;
    if (!hook)
        return MF_OK;
    if (!hook->start || immediate)
        return allreduce_forward(c, outs);
    void *req = NULL;
    MfStatus st = hook->start(hook->self, x, outs[0], (MfReduceOp)c->attrs->reduce_op,
                              c->attrs->signature, &req);
    if (st == MF_OK && (st = remember(x, outs[0], req)) != MF_OK)
        hook->wait(hook->self, req);   /* no room to remember it: complete it now */
    return st;
}

/* MPIAllreduceWait: the result of the allreduce that writes x (x itself,
 * through a new handle), once it is complete; a tensor no pending
 * allreduce writes is complete already. */
static MfStatus wait_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = c->inputs[0];
    MfStatus st = MF_OK;
    for (int k = 0; k < npending; k++)
        if (pending[k].out->storage == x->storage) {
            st = finish(k, false);
            break;
        }
    if (st != MF_OK)
        return st;
    outs[0] = mf_tensor_view(x, x->rank, x->shape, x->strides, x->offset);
    return outs[0] ? MF_OK : MF_ENOMEM;
}

static MfStatus wait_infer(MfOpCall *c)
{
    mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return MF_OK;
}

static MfCost no_cost(const MfOpCall *c)
{
    (void)c;
    MfCost cost = {0, 0};
    return cost;
}

const MfOpDesc mf_desc_allreduce_start = {
    .name = "MPIAllreduceStart", .api = "allreduce_start", .arity = 1,
    .flags = MF_OP_NONDIFF | MF_OP_VIEW | MF_OP_ASYNC_START, .infer = allreduce_infer,
    .forward = start_forward, .cost = allreduce_cost,
};

const MfOpDesc mf_desc_allreduce_wait = {
    .name = "MPIAllreduceWait", .api = "allreduce_wait", .arity = 1,
    .flags = MF_OP_NONDIFF | MF_OP_VIEW | MF_OP_ASYNC_WAIT, .infer = wait_infer,
    .forward = wait_forward, .cost = no_cost,
};
