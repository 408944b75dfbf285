/* window.h — the geometry of windowed ops, in one place: convolutions
 * (conv.c, depthwise.c, conv2d_transpose), pooling (pool.c) and, through
 * mf.nn.conv_output_size / mf.nn.conv_padding, the Keras layers
 * (lib/layers.lua).
 *
 * The rule is TensorFlow's (tensorflow/core/framework/kernel_shape_util.cc,
 * GetWindowedOutputSizeVerbose). Along one spatial axis of size 'in', with a
 * window of 'k' taps, stride 's' and dilation 'd', the dilated window spans
 * ek = (k - 1) * d + 1 and
 *   VALID: out = ceil((in - ek + 1) / s) = (in - ek) / s + 1, 0 when ek > in
 *          (the ops refuse that), no padding;
 *   SAME:  out = ceil(in / s),
 *          pad_total = max((out - 1) * s + ek - in, 0),
 *          pad_before = pad_total / 2, pad_after = pad_total - pad_before
 *          (the extra row or column goes after: bottom, right).
 * Every size may be up to INT64_MAX: no step overflows (a span that does
 * not fit is INT64_MAX, and SAME's padding is computed as ek minus a
 * number in [1, s]).
 *
 * Windows (strides, dilations, ksize) are int64_t[4] in the data format's
 * order, an entry 0 meaning 1 (so a zeroed MfAttrs is stride 1, no
 * dilation). The kernels work in NHWC; an NCHW call reorders its windows
 * and transposes its activations around the NHWC op. */
#ifndef MF_OPS_WINDOW_H
#define MF_OPS_WINDOW_H

#include <stdint.h>

#include "../op.h"

/* MfAttrs.padding: the index of the choice in mf_padding_names. */
typedef enum MfPadding { MF_PADDING_VALID, MF_PADDING_SAME } MfPadding;
#define MF_NPADDINGS (MF_PADDING_SAME + 1)   /* keep after the last */

/* MfAttrs.data_format (conv, depthwise, pooling, bias_add). */
typedef enum MfDataFormat { MF_NHWC, MF_NCHW } MfDataFormat;
#define MF_NDATA_FORMATS (MF_NCHW + 1)   /* keep after the last */

/* {"VALID", "SAME", NULL} and {"NHWC", "NCHW", NULL}: the choices of the
 * ops' padding and data_format attributes, in enum order. */
extern const char *const mf_padding_names[];
extern const char *const mf_data_format_names[];

/* The axis permutations NCHW -> NHWC ({0, 2, 3, 1}) and back ({0, 3, 1, 2}),
 * for mf_transpose. */
extern const int64_t mf_nchw_to_nhwc[4], mf_nhwc_to_nchw[4];

/* A stride, dilation or ksize entry: 0 means 1. */
int64_t mf_window_one_if_zero(int64_t v);

/* The span (k - 1) * d + 1 of a dilated window axis (1 for k < 1); INT64_MAX
 * when it does not fit, which the ops refuse before any kernel runs. */
int64_t mf_window_extent(int64_t k, int64_t d);

/* One spatial axis under the rule above: the output size and the padding
 * before and after ('pad_after' may be NULL). An unknown (negative) 'in' or
 * 'k' gives out -1 and no padding; VALID with ek > in (or a span over
 * int64) gives out 0. An empty input pads as TensorFlow's formula says
 * (SAME: out 0, pad_total ek - s), though no kernel runs on it. 's' and 'd'
 * must be >= 1. */
void mf_window_axis(MfPadding padding, int64_t in, int64_t k, int64_t s, int64_t d,
                    int64_t *out, int64_t *pad_before, int64_t *pad_after);

/* The op's MfAttrs with its windows (strides, dilations, ksize) reordered
 * from 'format' to NHWC and data_format NHWC. */
MfAttrs mf_window_nhwc_attrs(const MfAttrs *a, MfDataFormat format);

/* ---- checks the conv family shares (each names the function 'fname') ------ */

/* padding is VALID or SAME: "FNAME: padding must be VALID (0) or SAME (1), got 7". */
MfStatus mf_window_check_padding(const char *fname, int padding);

/* 'what' ("strides", "dilations") of 'format' order: positive on the
 * spatial axes, 1 on the batch and channel axes. */
MfStatus mf_window_check_steps(const char *fname, const int64_t v[4], const char *what,
                               MfDataFormat format);

/* 't' has rank 4: "FNAME: expected WHAT of rank 4 (LAYOUT), got shape ...". */
MfStatus mf_window_check_rank4(const char *fname, const MfTensor *t, const char *what,
                               const char *layout);

/* The filter kh x kw (unknown: negative) with dilations dh, dw fits an input
 * H x W: its dilated span fits in int64 and, with VALID padding, in the
 * input. */
MfStatus mf_window_check_fit(const char *fname, MfPadding padding, const int64_t hw[2],
                             const int64_t k[2], const int64_t d[2]);

#endif
