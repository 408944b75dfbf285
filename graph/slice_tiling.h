/* slice_tiling.h — Slices that tile a tensor along one axis (slice_tiling.c),
 * so that the gradient builder can join their gradients with one ConcatV2
 * instead of a Pad per Slice added up (graph/gradients.c). */
#ifndef MF_GRAPH_SLICE_TILING_H
#define MF_GRAPH_SLICE_TILING_H

#include <stdbool.h>

#include "graph.h"

/* The one axis along which Slice node 'nd' cuts its input (every other axis
 * whole), or -1: begin/size not static, several axes cut, or none. */
int mf_slice_window_axis(const MfNode *nd);

/* True when the 'n' Slice nodes (windows along one axis, see above) cover
 * their input along that axis exactly once, without gaps or overlaps; then
 * 'order' (n entries) lists them by position and '*axis' is the axis. */
bool mf_slices_tile(int n, const MfNode *const *slices, int *order, int *axis);

#endif
