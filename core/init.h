/* init.h — the math of the weight initialisers (mf.initializers), as
 * TensorFlow defines it: fan computation, variance scaling (glorot_uniform,
 * glorot_normal, he_normal) and orthogonal matrices.
 *
 * Random values come from the seeded random ops (core/ops/random.h), so the
 * same seed gives the same values. Each function returns MF_OK and an owned
 * tensor in '*out', or a status with a message naming 'who' (the user's
 * initialiser, e.g. "glorot_uniform") and '*out' NULL. */
#ifndef MF_INIT_H
#define MF_INIT_H

#include <stdint.h>

#include "err.h"
#include "tensor.h"

/* Which fan scales the variance: fan_in, fan_out or their average. */
typedef enum MfFanMode { MF_FAN_IN, MF_FAN_OUT, MF_FAN_AVG } MfFanMode;

/* The distribution of variance scaling. Truncated normals are drawn within
 * 2 stddev, so their stddev is divided by 0.87962566103423978 (the stddev of
 * a standard normal truncated to [-2, 2]) to keep the requested variance. */
typedef enum MfInitDist {
    MF_INIT_TRUNCATED_NORMAL,
    MF_INIT_UNTRUNCATED_NORMAL,
    MF_INIT_UNIFORM
} MfInitDist;

/* TensorFlow's _compute_fans: scalar 1, 1; rank 1: shape[0] for both;
 * rank 2: shape[0], shape[1]; higher (conv kernels): the receptive field
 * size (product of all but the last two dims) times shape[-2], shape[-1]. */
void mf_init_fans(int rank, const int64_t *shape, double *fan_in, double *fan_out);

/* VarianceScaling: variance = scale / max(1, fan); truncated normal with
 * stddev sqrt(variance) / 0.8796..., untruncated normal with stddev
 * sqrt(variance), or uniform in [-sqrt(3 variance), sqrt(3 variance)).
 * Float dtypes only (MF_EDTYPE otherwise). */
MfStatus mf_init_variance_scaling(const char *who, int rank, const int64_t *shape, MfDType dt,
                                  double scale, MfFanMode mode, MfInitDist dist, uint64_t seed,
                                  MfTensor **out);

/* glorot_uniform: uniform in [-limit, limit), limit = sqrt(6 / (fan_in + fan_out)). */
MfStatus mf_init_glorot_uniform(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                                MfTensor **out);

/* glorot_normal: truncated normal, stddev sqrt(2 / (fan_in + fan_out)) / 0.8796... */
MfStatus mf_init_glorot_normal(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                               MfTensor **out);

/* he_normal: truncated normal, stddev sqrt(2 / fan_in) / 0.8796... */
MfStatus mf_init_he_normal(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                           MfTensor **out);

/* An orthogonal matrix times 'gain' (rank >= 2; a higher rank is flattened
 * to (prod(shape[:-1]), shape[-1])): the Q of the QR decomposition of a
 * standard normal matrix of shape (max(rows, cols), min(rows, cols)), its
 * columns multiplied by the signs of diag(R), transposed when rows < cols.
 * So W^T W = gain^2 I when rows >= cols, W W^T = gain^2 I otherwise.
 * Computed in float64 (LAPACK's dgeqrf / dorgqr), then cast to 'dt'.
 * Errors: MF_ESHAPE (rank < 2), MF_EDTYPE (not float), MF_ENOMEM. */
MfStatus mf_init_orthogonal(int rank, const int64_t *shape, MfDType dt, double gain,
                            uint64_t seed, MfTensor **out);

/* ---- the named initialisers of mf.initializers -------------------------- */

typedef enum MfInitKind {
    MF_INIT_KIND_ZEROS,
    MF_INIT_KIND_ONES,
    MF_INIT_KIND_CONSTANT,
    MF_INIT_KIND_NORMAL,
    MF_INIT_KIND_TRUNCATED_NORMAL,
    MF_INIT_KIND_RANDOM_UNIFORM,
    MF_INIT_KIND_VARIANCE_SCALING,
    MF_INIT_KIND_ORTHOGONAL
} MfInitKind;

/* One named initialiser (Keras's and TensorFlow's names): its options, in
 * order, with "seed" last when it draws random values, and the defaults of
 * the options before "seed"; variance scaling's scale, fan mode and
 * distribution. */
typedef struct MfInitDef {
    const char *name;      /* "glorot_uniform" */
    MfInitKind kind;
    const char *keys[4];   /* option names, NULL-terminated */
    double dflt[3];        /* defaults of keys[0..] before "seed" */
    double scale;          /* variance scaling */
    MfFanMode mode;
    MfInitDist dist;
} MfInitDef;

/* The initialisers: zeros, ones, constant, random_normal, truncated_normal,
 * random_uniform, glorot_uniform, glorot_normal, he_normal, he_uniform,
 * lecun_normal, lecun_uniform, orthogonal. */
extern const MfInitDef mf_init_defs[];
extern const int mf_init_ndefs;

/* The initialiser named 'name', or NULL. */
const MfInitDef *mf_init_find(const char *name);

/* Runs initialiser 'd' (any kind but constant, whose value is the caller's:
 * mf_init_constant) for 'shape' and 'dt': opt[k] is the value of option
 * d->keys[k] (those before "seed"), 'seed' the op seed already resolved
 * (mf_rng_op_seed). random_normal and truncated_normal need a float dtype
 * and stddev >= 0, random_uniform any dtype but bool. Errors name d->name. */
MfStatus mf_init_run(const MfInitDef *d, const double *opt, uint64_t seed, int rank,
                     const int64_t *shape, MfDType dt, MfTensor **out);

/* constant(value) for a tensor value: a one-element (non-graph) value fills
 * 'shape'; otherwise the value must have as many elements as 'shape' and is
 * reshaped to it, then cast to 'dt'. Errors are "constant: ...". */
MfStatus mf_init_constant(MfTensor *value, int rank, const int64_t *shape, MfDType dt,
                          MfTensor **out);

#endif
