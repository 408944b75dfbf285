/* slices.h — the gradient of Slices, in one place for both modes (slices.c).
 *
 * The op's gradient pads dy with zeros to the input's shape (Pad) and the
 * walk adds that to what it holds (AddV2). A tensor cut into T slices
 * (split, a recurrent layer's per-step inputs) then costs T full-size Pads
 * and T full-size adds: quadratic in T. Each mode has a linear answer:
 * - on values (a tape), dy is added into the slice's window of the held
 *   gradient, in place ('mf_slice_accumulate');
 * - in a graph, the gradients of Slices that tile their input along one
 *   axis wait until the walk reaches the input and become one ConcatV2 of
 *   the dys in position order ('mf_slices_tile').
 * Both give the sums the Pads would (old + dy inside a window, old + 0 =
 * old outside it). */
#ifndef MF_AUTODIFF_SLICES_H
#define MF_AUTODIFF_SLICES_H

#include <stdbool.h>

#include "core/op.h"
#include "core/tensor.h"

/* For a record of 'op' with 'attrs' reading 'x': when it is a Slice the walk
 * may handle in place (float values, no other tape recording: a
 * higher-order tape must see the gradient ops), adds 'dy' into the window
 * of '*acc' (the gradient held for 'x', owned by the walk; NULL: a new zero
 * tensor is made there) and returns true. False: nothing changed, take the
 * op's gradient. */
bool mf_slice_accumulate(MfOpId op, const MfAttrs *attrs, bool higher_order, MfTensor *x,
                         MfTensor *dy, MfTensor **acc);

/* True when the walk alone owns 't' (one reference to it and to its
 * storage, contiguous from offset 0): it may be written in place. */
bool mf_accumulator_owned(const MfTensor *t);

/* One Slice as the tiling rule sees it: its begin and size attributes
 * (size -1: to the end) and its input's shape (-1: unknown). */
typedef struct MfSliceWindow {
    int rank;
    const int64_t *begin, *size;
    const int64_t *dims;
} MfSliceWindow;

/* The one axis along which the Slice cuts its input (every other axis
 * whole), or -1: begin/size not static, several axes cut, or none. */
int mf_slice_window_axis(const MfSliceWindow *s);

/* True when the 'n' Slices of one input (windows along one axis, see
 * above) cover it along that axis exactly once, without gaps or overlaps;
 * then 'order' (n entries) lists them by position and '*axis' is the axis. */
bool mf_slices_tile(int n, const MfSliceWindow *s, int *order, int *axis);

#endif
