/* slice_tiling.c — when Slice nodes tile their input along one axis.
 *
 * mf.split and a recurrent layer's per-step inputs cut a tensor into T
 * Slices. Each Slice's gradient is a Pad of dy back to the input's shape, and
 * the gradient builder adds the T padded tensors: T full-size Pads and T
 * full-size adds in the graph, quadratic in T (the eager walk adds in place,
 * eager/slice_accumulate.c). When the Slices cover the input along one axis
 * exactly once, the sum of the padded gradients is the ConcatV2 of the dys in
 * position order: one pass over the input's size. */
#include "slice_tiling.h"

#include "graph_impl.h"

/* The input's size along 'axis' (-1: unknown). */
static int64_t input_dim(const MfNode *nd, int axis)
{
    const MfNode *p = mf_graph_node(nd->graph, nd->inputs[0].node);
    return p->out[nd->inputs[0].output].shape[axis];
}

static bool whole(const MfNode *nd, int d)
{
    int r = nd->out[0].rank;
    int64_t begin = nd->attrs.ints[d], size = nd->attrs.ints[r + d], dim = input_dim(nd, d);
    return begin == 0 && (size == -1 || (dim >= 0 && size == dim));
}

int mf_slice_window_axis(const MfNode *nd)
{
    int r = nd->out[0].rank;
    if (nd->op != MF_OP_SLICE || nd->ninputs != 1 || r < 1 || nd->attrs.nints != 2 * r)
        return -1;
    int axis = -1;
    for (int d = 0; d < r; d++) {
        if (whole(nd, d))
            continue;
        if (axis >= 0)
            return -1;
        axis = d;
    }
    return axis;
}

/* The window [begin, end) of Slice 'nd' along 'axis' (false: not static). */
static bool window(const MfNode *nd, int axis, int64_t *begin, int64_t *end)
{
    int r = nd->out[0].rank;
    int64_t size = nd->attrs.ints[r + axis], dim = input_dim(nd, axis);
    *begin = nd->attrs.ints[axis];
    if (size == -1)
        size = dim - *begin;
    *end = *begin + size;
    return dim >= 0 && *begin >= 0 && size >= 0 && *end <= dim;
}

/* 'order' sorted by the windows' begin (insertion sort: a few hundred steps
 * at most, and no comparator state outside the call). */
static void sort_by_begin(int n, const MfNode *const *slices, int axis, int *order)
{
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i;
        for (; j > 0 && slices[order[j - 1]]->attrs.ints[axis] > slices[v]->attrs.ints[axis]; j--)
            order[j] = order[j - 1];
        order[j] = v;
    }
}

bool mf_slices_tile(int n, const MfNode *const *slices, int *order, int *axis)
{
    if (n < 2 || (*axis = mf_slice_window_axis(slices[0])) < 0)
        return false;
    for (int i = 0; i < n; i++) {
        if (mf_slice_window_axis(slices[i]) != *axis ||
            slices[i]->inputs[0].node != slices[0]->inputs[0].node ||
            slices[i]->inputs[0].output != slices[0]->inputs[0].output)
            return false;
        order[i] = i;
    }
    sort_by_begin(n, slices, *axis, order);
    int64_t at = 0, begin, end;
    for (int i = 0; i < n; i++) {
        if (!window(slices[order[i]], *axis, &begin, &end) || begin != at)
            return false;
        at = end;
    }
    return at == input_dim(slices[0], *axis);
}
