/* elementwise_split.c — large elementwise calls (ops flagged
 * MF_OP_ELEMENTWISE) cut along one axis of the output and run over the
 * worker pool, the op's own forward on each piece.
 *
 * The axis is the output's first one longer than 1 (the dims before it are
 * 1, so each piece is one block of the output). An input that has that
 * axis at full length is cut with the output; one that broadcasts along it
 * (length 1, or a lower rank) is passed whole: a bias row, a column, a
 * scalar. The pieces are views on the same storage (stack copies of the
 * tensor headers, never retained), and every element is computed by the
 * same expression as in one call, so the result has the same bits for any
 * thread count and any cut. Only float32/float64 calls are cut: their
 * kernels cannot fail (an integer division by zero is an error, and an
 * error message is per thread). */
#include "../parallel.h"
#include "common.h"

/* Below this many output elements per thread a wake-up costs about what
 * it saves. */
enum { SPLIT_MIN_ELEMENTS = 32768, SPLIT_MAX_INPUTS = 4 };

typedef struct {
    const MfOpDesc *d;
    const MfOpCall *c;
    MfTensor *out;
    int axis;
    bool failed; /* a piece's forward failed: the caller runs it whole */
} SplitJob;

/* 't' (read with broadcasting into an output of rank 'out_rank') cut to
 * [lo, hi) along the output's 'axis', into 'v'. */
static void cut(const MfTensor *t, int out_rank, int axis, int64_t lo, int64_t hi, MfTensor *v)
{
    *v = *t;
    v->refcount = 1;
    int a = axis - (out_rank - t->rank);
    if (a < 0 || t->shape[a] == 1)
        return; /* broadcast along the axis: every piece reads it whole */
    v->shape[a] = hi - lo;
    v->offset += lo * t->strides[a];
}

static void split_piece(void *ctx, int64_t lo, int64_t hi)
{
    SplitJob *j = ctx;
    const MfOpCall *c = j->c;
    int rank = j->out->rank;
    MfTensor in[SPLIT_MAX_INPUTS], out;
    MfTensor *ins[SPLIT_MAX_INPUTS], *outs[1] = {&out};
    for (int i = 0; i < c->ninputs; i++) {
        cut(c->inputs[i], rank, j->axis, lo, hi, &in[i]);
        ins[i] = &in[i];
    }
    cut(j->out, rank, j->axis, lo, hi, &out);
    MfOpCall piece = *c;
    piece.inputs = ins;
    piece.out[0].shape[j->axis] = hi - lo;
    if (j->d->forward(&piece, outs) != MF_OK)
        __atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
}

static bool is_float(MfDType dt)
{
    return dt == MF_FLOAT32 || dt == MF_FLOAT64;
}

/* True when the call qualifies: flagged, one float output large enough for
 * two pieces, float inputs, more than one thread. */
static bool worth_splitting(const MfOpDesc *d, const MfOpCall *c, const MfTensor *out)
{
    if (!(d->flags & MF_OP_ELEMENTWISE) || c->noutputs != 1 || c->ninputs > SPLIT_MAX_INPUTS ||
        !is_float(out->dtype) || mf_tensor_numel(out) < 2 * SPLIT_MIN_ELEMENTS ||
        mf_parallel_threads() < 2)
        return false;
    for (int i = 0; i < c->ninputs; i++)
        if (!is_float(c->inputs[i]->dtype) || c->inputs[i]->rank > out->rank)
            return false;
    return true;
}

bool mf_elementwise_split(const MfOpDesc *d, const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    if (!worth_splitting(d, c, out))
        return false;
    int axis = 0;
    while (out->shape[axis] == 1)
        axis++;
    int64_t inner = mf_tensor_numel(out) / out->shape[axis];
    SplitJob job = {d, c, out, axis, false};
    mf_parallel_for(out->shape[axis], (SPLIT_MIN_ELEMENTS + inner - 1) / inner, split_piece,
                    &job);
    return !job.failed;
}
