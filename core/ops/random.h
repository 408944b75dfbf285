/* random.h — random ops: RandomStandardNormal, RandomUniform,
 * RandomUniformInt, TruncatedNormal, RandomShuffle, Multinomial
 * (core/ops/random.c).
 *
 * The first four take no tensor inputs, or one: the shape as a 1-D int
 * tensor (TensorFlow's 'shape' input, e.g. mf.shape(x) of a placeholder
 * with unknown dims), read when the node runs; their attributes are
 *   ints[0..nints) = the output shape (nints = rank), dtype,
 *   seed           = the op seed, already resolved ('mf_rng_op_seed'),
 *   scalar[0..1]   = mean, stddev (normals) or minval, maxval (uniforms).
 * RandomShuffle takes one input and reads only 'seed' (and 'runs');
 * Multinomial takes the logits and reads 'n' (samples per row), 'dtype' and
 * 'seed'.
 * Eager: an op's output depends only on its attributes (and input). A graph
 * node also has 'runs', its run counters: run k of the node in a session
 * uses the key mix(seed, k) (k = 0: the seed itself, as eager mode), so
 * every run draws fresh values and a fresh session, or process, with the
 * same seeds sees the same sequence (TensorFlow 1's stateful random ops).
 *
 * The helpers below build the attributes and call the op through the
 * dispatcher; each returns MF_OK and an owned tensor in '*out', or a status
 * with a message naming the user-facing function (e.g. "random.normal"). */
#ifndef MF_OPS_RANDOM_H
#define MF_OPS_RANDOM_H

#include <stdint.h>

#include "../op.h"

/* Normal values, mean + stddev * N(0, 1) (float dtypes; stddev >= 0). */
MfStatus mf_random_normal(int rank, const int64_t *shape, MfDType dt, double mean,
                          double stddev, uint64_t seed, MfTensor **out);

/* As 'mf_random_normal', but values beyond 2 stddev are drawn again. */
MfStatus mf_random_truncated_normal(int rank, const int64_t *shape, MfDType dt, double mean,
                                    double stddev, uint64_t seed, MfTensor **out);

/* Uniform values in [minval, maxval): RandomUniform for float dtypes,
 * RandomUniformInt for int32 / int64 (integer bounds, minval < maxval).
 * A NaN maxval means none was given (TensorFlow's maxval=None): 1 for float
 * dtypes; integer dtypes need one (MF_EARG "random.uniform: maxval is
 * required ..."). The same holds for mf_random_shaped_by's uniform. */
MfStatus mf_random_uniform(int rank, const int64_t *shape, MfDType dt, double minval,
                           double maxval, uint64_t seed, MfTensor **out);

/* RandomStandardNormal, TruncatedNormal or RandomUniform ('op'; a uniform of
 * an int dtype is RandomUniformInt) with its shape given by the tensor
 * 'shape' (1-D int32/int64, concrete or symbolic); 'a', 'b' are mean and
 * stddev, or minval and maxval. */
MfStatus mf_random_shaped_by(MfOpId op, MfTensor *shape, MfDType dt, double a, double b,
                             uint64_t seed, MfTensor **out);

/* 't' with its slices along axis 1 in a random order (a copy; a scalar is
 * returned as is). */
MfStatus mf_random_shuffle(MfTensor *t, uint64_t seed, MfTensor **out);

/* tf.random.categorical: 'num_samples' classes per row of 'logits' [batch,
 * classes] (float32/float64), drawn with the probabilities softmax(row),
 * 1-based, as a [batch, num_samples] tensor of 'dt' (int32 or int64). A
 * logit of -inf is a class never drawn; a row with a NaN or +Inf logit, or
 * no finite one, is an error (MF_EARG) when the op runs. */
MfStatus mf_random_categorical(MfTensor *logits, int64_t num_samples, MfDType dt, uint64_t seed,
                               MfTensor **out);

#endif
