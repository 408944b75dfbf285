/* collective.c — MPIAllreduce, the collective op: the elementwise sum,
 * mean, max or min of one tensor over every process of a distributed run
 * (Horovod's HorovodAllreduce). One op for eager calls and graph nodes, so
 * a graph's allreduce shows in print(g), the schedule and the profiler like
 * any other op. The transport is dist/'s (core/collective.h); with none
 * registered (one process), the result is the input.
 *
 * No gradient: DistributedOptimizer applies it to gradients, after the
 * backward pass (MF_OP_NONDIFF). */
#include <string.h>

#include "../collective.h"
#include "common.h"

static const MfCollective *hook;

void mf_collective_set(const MfCollective *c)
{
    hook = c;
}

const MfCollective *mf_collective_get(void)
{
    return hook;
}

const char *mf_reduce_name(MfReduceOp op)
{
    static const char *const names[] = {"sum", "mean", "max", "min"};
    return op < MF_NREDUCE ? names[op] : NULL;
}

static MfStatus allreduce_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    int64_t op = c->attrs->n;
    if (op < 0 || op >= MF_NREDUCE)
        return mf_err_set(MF_EARG, "allreduce: op must be sum, mean, max or min (code 0..3), "
                          "got code %lld", (long long)op);
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
        return hook->allreduce(hook->self, x, outs[0], (MfReduceOp)c->attrs->n, c->attrs->seed);
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
    .name = "MPIAllreduce", .api = "allreduce", .arity = 1, .flags = MF_OP_NONDIFF,
    .infer = allreduce_infer, .forward = allreduce_forward, .cost = allreduce_cost,
};
