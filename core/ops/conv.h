/* conv.h — 2-D convolution: the ops Conv2D, Conv2DBackpropInput and
 * Conv2DBackpropFilter (conv.c), their gradients (conv_grad.c), the
 * im2col / col2im steps they are lowered to (im2col.c), and composites that
 * accept TensorFlow's NCHW layout by transposing around the NHWC ops.
 *
 * Layouts as TensorFlow: input NHWC [N, H, W, Cin], filter HWIO
 * [kh, kw, Cin, Cout], output NHWC [N, Ho, Wo, Cout]. Attributes read
 * (MfAttrs): 'strides[4]' and 'dilations[4]' in NHWC order (the batch and
 * channel entries must be 1; a 0 entry means 1, so a zeroed MfAttrs is
 * stride 1 and no dilation), 'padding' (MfPadding, window.h), and for the
 * backprops 'ints[0..3]' (nints 4): input_sizes (NHWC) for
 * Conv2DBackpropInput, filter_sizes (HWIO) for Conv2DBackpropFilter. Those
 * sizes are attributes, as Reshape's shape is, rather than TensorFlow's
 * int32 input; an input_sizes batch or channel entry of -1 is taken from
 * out_backprop and the filter (graph gradients with an unknown batch).
 *
 * Output sizes and padding follow TensorFlow's rule (window.h; VALID with a
 * dilated filter larger than the input is an error).
 *
 * Lowering (doc/design.md "Conv2D lowered to GEMMs"), every GEMM through
 * mf_gemm, named by the op:
 *   Conv2D:               patches [N*Ho*Wo, kh*kw*Cin] x filter [kh*kw*Cin, Cout];
 *   Conv2DBackpropFilter: patches^T [kh*kw*Cin, N*Ho*Wo] x dy [N*Ho*Wo, Cout];
 *   Conv2DBackpropInput:  dy [N*Ho*Wo, Cout] x filter^T [Cout, kh*kw*Cin], then
 *                         col2im adds the patches back into dx.
 * The patch matrix is built a tile of rows at a time so it never exceeds
 * MF_CONV_PATCH_BYTES (whole images per tile when one fits). A 1x1 filter
 * with stride 1 needs no patches: the input itself is the [N*H*W, Cin]
 * matrix (and dx is written by the GEMM directly). */
#ifndef MF_OPS_CONV_H
#define MF_OPS_CONV_H

#include <stdbool.h>

#include "../op.h"
#include "window.h"

/* The bound on the scratch patch matrix of one tile: 64 MiB. Within it a
 * tile aims at MF_CONV_TILE_BYTES (4 MiB, so im2col's output is still in
 * cache when the GEMM reads it: 1.3-1.7x faster than 64 MiB tiles on the
 * benchmark shapes) but keeps at least MF_CONV_TILE_MIN_ROWS and 8 * Cout
 * patch rows, so each GEMM keeps one long dimension. */
#define MF_CONV_PATCH_BYTES ((int64_t)64 << 20)
#define MF_CONV_TILE_BYTES ((int64_t)4 << 20)
#define MF_CONV_TILE_MIN_ROWS 1024

/* The geometry of one convolution, NHWC / HWIO. */
typedef struct MfConvGeom {
    int64_t N, H, W, C;       /* input */
    int64_t kh, kw, O;        /* filter: kh x kw x C x O */
    int64_t Ho, Wo;           /* output spatial size */
    int64_t sh, sw, dh, dw;   /* strides and dilations */
    int64_t pad_top, pad_left;
} MfConvGeom;

/* ---- im2col.c ---------------------------------------------------------------- */

/* Writes rows [r0, r1) of the patch matrix of 'x' (contiguous NHWC of
 * element size 'es') into 'patches' (row-major, kh*kw*C columns; row r is
 * output position (n, oh, ow) = r in row-major order; column (i, j, c) is
 * filter tap (i, j), channel c). Taps in the padding are zeros. */
void mf_im2col(const MfConvGeom *g, size_t es, const void *x, int64_t r0, int64_t r1,
               void *patches);

/* The adjoint of mf_im2col: adds rows [r0, r1) of 'patches' into 'dx'
 * (contiguous NHWC, float32 when 'f64' is false, else float64); taps in the
 * padding are dropped. */
void mf_col2im(const MfConvGeom *g, bool f64, const void *patches, int64_t r0, int64_t r1,
               void *dx);

/* ---- algorithms (conv_algo.c, conv_direct.c, winograd.c) -----------------------
 * Three kernels compute the same convolution:
 *   im2col   (conv.c): the patch matrix and one GEMM per tile; any shape and
 *            dtype; float64 always takes it (exact up to DGEMM's rounding);
 *   direct   (conv_direct.c): float32, any filter, stride and dilation;
 *            accumulates each output pixel's channels in registers, for few
 *            input channels (a first layer's K = 9 GEMM wastes BLAS);
 *   winograd (winograd.c): float32 3x3 filters, stride 1, no dilation;
 *            F(4x4, 3x3): transforms and 36 GEMMs, 4x fewer multiply-adds.
 * The choice: a call's MfAttrs.conv_algorithm, else the process-wide
 * setting (mf_conv_set_algorithm; mf.config{conv_algorithm = ...}), both
 * MF_CONV_AUTO by default. 'auto' is a fixed rule on the shape, the same
 * for the forward pass and both backprops (Cin and Cout of the forward
 * convolution):
 *   Cin <= MF_CONV_DIRECT_MAX_CIN                       -> direct
 *   3x3, stride 1, no dilation, Cin and Cout >= MF_CONV_WINOGRAD_MIN_CH
 *                                                       -> winograd
 *   otherwise                                           -> im2col.
 * An explicit choice the shape does not allow (winograd on a strided or
 * 5x5 conv; direct where its buffers would not fit, see
 * mf_conv_direct_fits; anything on float64) runs im2col. */
#define MF_CONV_DIRECT_MAX_CIN 4
#define MF_CONV_WINOGRAD_MIN_CH 16

typedef enum MfConvAlgo {
    MF_CONV_AUTO, MF_CONV_IM2COL, MF_CONV_WINOGRAD, MF_CONV_DIRECT
} MfConvAlgo;
#define MF_CONV_NALGOS (MF_CONV_DIRECT + 1)   /* keep after the last */

/* "auto", "im2col", "winograd", "direct" (NULL-terminated, in enum order;
 * the choices of conv2d's 'algorithm' attribute). */
extern const char *const mf_conv_algo_names[];
const char *const *mf_conv_algorithm_names(void);
/* The MfConvAlgo named 'name', or -1. */
int mf_conv_algorithm_parse(const char *name);
void mf_conv_set_algorithm(MfConvAlgo a);
MfConvAlgo mf_conv_get_algorithm(void);
/* True for 3x3 filters at stride 1 without dilation. */
bool mf_conv_winograd_fits(const MfConvGeom *g);
/* The kernel that runs geometry 'g' of dtype 'dt' when the call asks for
 * 'wanted' (MF_CONV_AUTO: the process-wide setting, then the rule). */
MfConvAlgo mf_conv_choose(const MfConvGeom *g, MfDType dt, MfConvAlgo wanted);
/* Runs call 'c' (Conv2D or a backprop, geometry 'g') with the direct or
 * Winograd kernel when chosen, into 'out', and returns true with '*st';
 * false when im2col should run. */
bool mf_conv_fast_path(const MfOpCall *c, const MfConvGeom *g, MfTensor *out, MfStatus *st);

/* True when the direct kernels' sizes for 'g' fit: the padded input (its
 * rows span the dilated filter and the strides), the backprop-input ring
 * and the loop strides, in int64 and within MF_MAX_TENSOR_BYTES. A huge
 * dilation or stride (SAME, dilations 2^59) fails this: im2col's buffers
 * grow with the output, not with the span, and run it instead. */
bool mf_conv_direct_fits(const MfConvGeom *g);
/* conv_direct.c: float32, contiguous NHWC / HWIO, geometry 'g'
 * (mf_conv_direct_fits(g) must hold). */
MfStatus mf_conv_direct_forward(const char *op, const MfConvGeom *g, const float *x,
                                const float *w, float *y);
MfStatus mf_conv_direct_backprop_input(const char *op, const MfConvGeom *g, const float *w,
                                       const float *dy, float *dx);
MfStatus mf_conv_direct_backprop_filter(const char *op, const MfConvGeom *g, const float *x,
                                        const float *dy, float *dw);

/* winograd.c: float32, 3x3, stride 1, no dilation ('op' names GEMMs and
 * errors). */
MfStatus mf_winograd_forward(const char *op, const MfConvGeom *g, const float *x,
                             const float *w, float *y);
MfStatus mf_winograd_backprop_input(const char *op, const MfConvGeom *g, const float *w,
                                    const float *dy, float *dx);
MfStatus mf_winograd_backprop_filter(const char *op, const MfConvGeom *g, const float *x,
                                     const float *dy, float *dw);
/* Frees the cached filter transforms. */
void mf_winograd_cache_clear(void);

/* ---- composites (conv.c) ------------------------------------------------------- */

/* Conv2D of 'x' with 'w'. With 'nchw', 'x' is [N, C, H, W], 'a->strides'
 * and 'a->dilations' are in NCHW order, and the result is NCHW: the op runs
 * on Transposes, so gradients flow. '*out' is owned on success. */
MfStatus mf_conv2d(MfTensor *x, MfTensor *w, const MfAttrs *a, bool nchw, MfTensor **out);

/* Conv2DBackpropInput: the gradient of a Conv2D input of shape 'sizes'
 * (NCHW order with 'nchw') given 'w' and 'dy'. '*out' is owned. */
MfStatus mf_conv2d_backprop_input(const int64_t sizes[4], MfTensor *w, MfTensor *dy,
                                  const MfAttrs *a, bool nchw, MfTensor **out);

/* Conv2DBackpropFilter: the gradient of a filter of shape 'sizes' (HWIO)
 * given the input 'x' and 'dy'. '*out' is owned. */
MfStatus mf_conv2d_backprop_filter(MfTensor *x, const int64_t sizes[4], MfTensor *dy,
                                   const MfAttrs *a, bool nchw, MfTensor **out);

/* What each backprop entry (the binder's call of conv2d/depthwise backprops
 * and conv2d_transpose) does first: one output (*nout), 'nhwc' = 'a' with
 * the NHWC layout the kernels take (the caller passes a->data_format
 * apart), and MF_EARG naming 'fname' unless 'a' holds the 4 sizes ('what':
 * "input_sizes", "filter_sizes", "output_shape") in ints/nints. */
MfStatus mf_conv_entry_begin(const char *fname, const char *what, const MfAttrs *a,
                             MfAttrs *nhwc, int *nout);

/* ---- gradients (conv_grad.c) ------------------------------------------------------ */

MfStatus mf_conv2d_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_conv2d_backprop_input_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_conv2d_backprop_filter_grad(const MfGradCall *g, MfTensor **dinputs);

#endif
