/* nn.h — the neural-network ops (core/ops/nn.c) and their gradients
 * (core/ops/nn_grad.c): Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits,
 * SparseSoftmaxCrossEntropyWithLogits and BiasAdd, plus the composites that
 * TensorFlow also writes in Python (sigmoid cross-entropy, l2_loss,
 * dropout). The pooling ops live in pool.h.
 *
 * Attributes read by the ops:
 *   Softmax, LogSoftmax: 'axis' (0-based; negative counts from the end).
 *   BiasAdd:             'n' = 1 for NCHW (bias along axis 1), else NHWC
 *                        (bias along the last axis).
 * The cross-entropy ops take (logits, labels) as TensorFlow's raw ops do
 * (features first) and have two outputs: the per-row loss over the last
 * axis (shape logits.shape[:-1]) and 'backprop' = softmax(logits) - labels.
 * Sparse labels are int32 / int64 class numbers 1..C (1-based, as the Lua
 * API); a label outside 1..C is an MF_EARG error naming the range.
 *
 * Every function here goes through 'mf_op_call', so it works in eager and
 * graph mode and is recorded by tapes. On success '*out' is an owned
 * reference; on failure it is NULL and a message is pending (err.h). */
#ifndef MF_OPS_NN_H
#define MF_OPS_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "../grad.h"

/* softmax(x) along 'axis' (0-based, negative from the end); float dtypes. */
MfStatus mf_softmax(MfTensor *x, int64_t axis, MfTensor **out);

/* log(softmax(x)) along 'axis', computed as x - max - log(sum(exp(x - max))). */
MfStatus mf_log_softmax(MfTensor *x, int64_t axis, MfTensor **out);

/* -sum(labels * log_softmax(logits)) over the last axis: one loss per row. */
MfStatus mf_softmax_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out);

/* The same with 'labels' int32 / int64 classes 1..C, shaped logits.shape[:-1]. */
MfStatus mf_sparse_softmax_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out);

/* The two with the classes along 'axis' (0-based, -1 the last), as
 * TensorFlow's 'axis': it is moved to the end first; the loss has the
 * logits' other axes, in order. Dense labels broadcast to the logits' shape
 * (TensorFlow 2), here and in mf_softmax_cross_entropy. */
MfStatus mf_softmax_cross_entropy_axis(MfTensor *labels, MfTensor *logits, int64_t axis,
                                       MfTensor **out);
MfStatus mf_sparse_softmax_cross_entropy_axis(MfTensor *labels, MfTensor *logits, int64_t axis,
                                              MfTensor **out);

/* TensorFlow's stable max(x, 0) - x * z + log(1 + exp(-|x|)), elementwise,
 * with x = logits and z = labels of the same shape and float dtype. */
MfStatus mf_sigmoid_cross_entropy(MfTensor *labels, MfTensor *logits, MfTensor **out);

/* sum(t^2) / 2 as a scalar of t's float dtype. */
MfStatus mf_l2_loss(MfTensor *t, MfTensor **out);

/* value + bias, with the 1-D 'bias' along the last axis (NHWC) or along
 * axis 1 ('nchw'). */
MfStatus mf_bias_add(MfTensor *value, MfTensor *bias, bool nchw, MfTensor **out);

/* x * mask / (1 - rate) with mask = (uniform[0,1) >= rate), drawn by the op
 * RandomUniform with the resolved op seed 'seed' (core/rng.h). 'rate' must
 * be in [0, 1); rate 0 returns 'x' itself (retained). Float dtypes. */
MfStatus mf_dropout(MfTensor *x, double rate, uint64_t seed, MfTensor **out);

/* The same with the rate, or with 'keep_prob' TensorFlow 1.x's keep
 * probability (rate = 1 - keep_prob), as a rank-0 tensor of x's dtype: a
 * placeholder fed at run time, or a concrete value (checked: rate in
 * [0, 1), keep_prob in (0, 1]). x may have unknown (-1) dims: the mask then
 * takes x's run-time shape. */
MfStatus mf_dropout_by(MfTensor *x, MfTensor *p, bool keep_prob, uint64_t seed, MfTensor **out);

/* dropout as a front end calls it (mf.nn.dropout): the rate, or with
 * 'keep_prob' TensorFlow 1.x's keep probability (checked: in (0, 1]; rate
 * = 1 - keep_prob), as a number 'v' or as a rank-0 tensor 'p'; the op seed
 * is resolved here from the call's optional 'seed' (core/rng.h
 * mf_rng_op_seed), for a number only when a mask is drawn (0 < rate < 1),
 * so a rate of 0 leaves the seed sequence as it was. '*out' is owned. */
MfStatus mf_dropout_number(MfTensor *x, double v, bool keep_prob, bool has_seed, int64_t seed,
                           MfTensor **out);
MfStatus mf_dropout_tensor(MfTensor *x, MfTensor *p, bool keep_prob, bool has_seed,
                           int64_t seed, MfTensor **out);

/* Relu's gradient as one op (ReluGrad, nn_relu.c): 'dy' where 'x' > 0, else
 * 0; 'dy' and 'x' share one shape and one numeric dtype. */
MfStatus mf_relu_backprop(MfTensor *dy, MfTensor *x, MfTensor **out);

/* Relu's forward kernel for a contiguous input of any numeric dtype, split
 * over the worker pool (elementwise: the same bits on any thread count);
 * false, with nothing written, for a non-contiguous input. */
bool mf_relu_forward_split(const MfTensor *x, MfTensor *out);

/* Gradients (nn_grad.c): MfOpDesc 'backward' functions, see op.h. */
MfStatus mf_softmax_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_log_softmax_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_xent_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sparse_xent_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_bias_add_grad(const MfGradCall *g, MfTensor **dinputs);

#endif
