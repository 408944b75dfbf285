/* shape_grad.c — gradients of the shape ops (see shape_grad.h), as
 * TensorFlow defines them:
 *   ConcatV2     each input gets its slice of dy
 *   Pack         each input gets its slice of dy along the new axis
 *   Slice        dy padded with zeros back to the input's shape (Pad)
 *   GatherV2     dy scattered back with UnsortedSegmentSum (repeated
 *                indices add up), the gathered axis moved first and back
 *   ReverseV2    dy reversed along the same axes
 *   Tile         dy seen as (multiple, size) per tiled axis, summed over
 *                the multiples
 *   Pad          the slice of dy that covers the input
 *   BroadcastTo  dy summed over the broadcast axes (mf_grad_unbroadcast)
 *   Identity     dy
 * Slices and reshapes are views of dy: no data moves for them. */
#include "shape_grad.h"

#include "../grad.h"
#include "reduce.h"
#include "scatter.h"
#include "view.h"

/* Releases 'd[0..n)' and clears them: the error path of multi-input grads. */
static void release_n(MfTensor **d, int n)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(d[i]);
        d[i] = NULL;
    }
}

static int64_t norm(int64_t axis, int rank)
{
    return axis < 0 ? axis + rank : axis;
}

/* Slice attributes covering all of a rank-'r' tensor: begin 0, size -1. */
static MfAttrs whole_slice(int r)
{
    MfAttrs a = mf_attrs_default();
    a.nints = 2 * r;
    for (int d = 0; d < r; d++)
        a.ints[r + d] = -1;
    return a;
}

MfStatus mf_concat_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *dy = g->doutputs[0];
    int r = dy->rank;
    int64_t axis = norm(c->attrs->axis, r), begin = 0;
    MfAttrs a = whole_slice(r);
    for (int i = 0; i < c->ninputs; i++) {
        a.ints[axis] = begin;
        a.ints[r + axis] = c->inputs[i]->shape[axis];
        begin += c->inputs[i]->shape[axis];
        MfStatus st = mf_op1(MF_OP_SLICE, 1, &dy, &a, &dinputs[i]);
        if (st != MF_OK) {
            release_n(dinputs, i);
            return st;
        }
    }
    return MF_OK;
}

/* Entry i is dy's slice i along the stacked axis, reshaped to drop it. */
MfStatus mf_stack_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *dy = g->doutputs[0];
    int r = dy->rank;
    int64_t axis = norm(c->attrs->axis, r);
    MfAttrs a = whole_slice(r);
    a.ints[r + axis] = 1;
    for (int i = 0; i < c->ninputs; i++) {
        const MfTensor *x = c->inputs[i];
        MfTensor *part = NULL;
        a.ints[axis] = i;
        MfStatus st = mf_op1(MF_OP_SLICE, 1, &dy, &a, &part);
        if (st == MF_OK) /* x's shape may be known only at run time (graph mode) */
            st = mf_grad_reshape_like(part, x, &dinputs[i]);
        mf_tensor_release(part);
        if (st != MF_OK) {
            release_n(dinputs, i);
            return st;
        }
    }
    return MF_OK;
}

MfStatus mf_slice_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    const MfTensor *x = c->inputs[0];
    MfTensor *dy = g->doutputs[0];
    MfAttrs a = mf_attrs_default();
    a.nints = 2 * x->rank;
    for (int d = 0; d < x->rank; d++) {
        int64_t begin = c->attrs->ints[d];
        a.ints[2 * d] = begin;
        a.ints[2 * d + 1] = x->shape[d] - begin - dy->shape[d];
    }
    return mf_op1(MF_OP_PAD, 1, &dy, &a, &dinputs[0]);
}

/* 'perm' moves axis 'axis' of a rank-'r' tensor first; 'inv' moves it back. */
static void axis_first(int r, int64_t axis, int64_t *perm, int64_t *inv)
{
    perm[0] = axis;
    for (int i = 0, w = 1; i < r; i++)
        if (i != axis)
            perm[w++] = i;
    for (int i = 0; i < r; i++)
        inv[perm[i]] = i;
}

/* dy reshaped to params' shape with the gathered axis holding all 'm'
 * indices, that axis moved first: the rows UnsortedSegmentSum adds up. */
static MfStatus gather_rows(MfTensor *dy, const MfTensor *p, int64_t axis, int64_t m,
                            const int64_t *perm, MfTensor **rows)
{
    int64_t shape[MF_MAX_RANK];
    for (int d = 0; d < p->rank; d++)
        shape[d] = d == axis ? m : p->shape[d];
    MfTensor *flat = NULL;
    MfStatus st = mf_reshape(dy, p->rank, shape, &flat);
    if (st != MF_OK || axis == 0) {
        *rows = flat;
        return st;
    }
    st = mf_transpose(flat, perm, p->rank, rows);
    mf_tensor_release(flat);
    return st;
}

MfStatus mf_gather_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *p = c->inputs[0], *ix = c->inputs[1];
    int64_t axis = norm(c->attrs->axis, p->rank), m = mf_tensor_numel(ix);
    int64_t perm[MF_MAX_RANK], inv[MF_MAX_RANK];
    axis_first(p->rank, axis, perm, inv);
    MfTensor *ids = NULL, *rows = NULL, *sums = NULL;
    MfStatus st = mf_reshape(ix, 1, &m, &ids);
    if (st == MF_OK)
        st = gather_rows(g->doutputs[0], p, axis, m, perm, &rows);
    if (st == MF_OK)
        st = mf_unsorted_segment_sum(rows, ids, p->shape[axis], &sums);
    if (st == MF_OK && axis == 0) {
        dinputs[0] = sums;
        sums = NULL;
    } else if (st == MF_OK) {
        st = mf_transpose(sums, inv, p->rank, &dinputs[0]);
    }
    mf_tensor_release(ids);
    mf_tensor_release(rows);
    mf_tensor_release(sums);
    return st;
}

MfStatus mf_reverse_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0];
    return mf_op1(MF_OP_REVERSE, 1, &dy, g->call->attrs, &dinputs[0]);
}

/* Reshapes 't' to 'shape' and sums the listed axes away. */
static MfStatus reshape_sum(MfTensor *t, int rank, const int64_t *shape, const int64_t *axes,
                            int naxes, MfTensor **out)
{
    MfTensor *split = NULL;
    MfStatus st = mf_reshape(t, rank, shape, &split);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, split, axes, naxes, false, out);
    mf_tensor_release(split);
    return st;
}

/* Tile's gradient one tiled axis at a time, each a rank-4 (before,
 * multiple, size, after) sum: for ranks whose split shape exceeds 8. */
static MfStatus tile_grad_staged(MfTensor *dy, const MfTensor *x, const int64_t *mult,
                                 MfTensor **out)
{
    MfTensor *cur = dy;
    mf_tensor_retain(cur);
    for (int d = 0; d < x->rank; d++) {
        if (mult[d] == 1)
            continue;
        int64_t shape[4] = {1, mult[d], x->shape[d], 1}, axis = 1;
        for (int k = 0; k < d; k++)
            shape[0] *= x->shape[k];
        for (int k = d + 1; k < x->rank; k++)
            shape[3] *= x->shape[k] * mult[k];
        MfTensor *next = NULL;
        MfStatus st = reshape_sum(cur, 4, shape, &axis, 1, &next);
        mf_tensor_release(cur);
        if (st != MF_OK)
            return st;
        cur = next;
    }
    MfStatus st = mf_reshape(cur, x->rank, x->shape, out);
    mf_tensor_release(cur);
    return st;
}

/* dy split into (multiple, size) along each tiled axis, summed over the
 * multiples in one Sum, reshaped to x's shape. */
MfStatus mf_tile_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfTensor *x = g->call->inputs[0];
    const int64_t *mult = g->call->attrs->ints;
    MfTensor *dy = g->doutputs[0];
    int64_t shape[2 * MF_MAX_RANK], axes[MF_MAX_RANK];
    int r = 0, naxes = 0;
    for (int d = 0; d < x->rank; d++) {
        if (mult[d] != 1) {
            axes[naxes++] = r;
            shape[r++] = mult[d];
        }
        shape[r++] = x->shape[d];
    }
    if (naxes == 0) {
        mf_tensor_retain(dy);
        dinputs[0] = dy;
        return MF_OK;
    }
    if (r > MF_MAX_RANK)
        return tile_grad_staged(dy, x, mult, &dinputs[0]);
    MfTensor *sum = NULL;
    MfStatus st = reshape_sum(dy, r, shape, axes, naxes, &sum);
    if (st == MF_OK)
        st = mf_reshape(sum, x->rank, x->shape, &dinputs[0]);
    mf_tensor_release(sum);
    return st;
}

MfStatus mf_pad_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfTensor *x = g->call->inputs[0];
    MfTensor *dy = g->doutputs[0];
    MfAttrs a = mf_attrs_default();
    a.nints = 2 * x->rank;
    for (int d = 0; d < x->rank; d++) {
        a.ints[d] = g->call->attrs->ints[2 * d];
        a.ints[x->rank + d] = x->shape[d];
    }
    return mf_op1(MF_OP_SLICE, 1, &dy, &a, &dinputs[0]);
}

MfStatus mf_broadcast_to_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_grad_unbroadcast(g->doutputs[0], g->call->inputs[0], &dinputs[0]);
}

MfStatus mf_identity_grad(const MfGradCall *g, MfTensor **dinputs)
{
    mf_tensor_retain(g->doutputs[0]);
    dinputs[0] = g->doutputs[0];
    return MF_OK;
}
