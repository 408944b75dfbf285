/* create.h — creation helpers that make concrete (eager) tensors: fill
 * (zeros, ones, fill, *_like), eye, range and linspace.
 *
 * These are plain functions, not ops: their results are constants, which a
 * graph can hold like any other tensor. Each returns MF_OK and an owned
 * tensor in '*out', or a status with a message that names the user-facing
 * function ('who' where the caller chooses it, e.g. "zeros") and '*out' NULL. */
#ifndef MF_CREATE_H
#define MF_CREATE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "tensor.h"

/* Checks that a tensor of 'dt' and 'shape' can be made: rank 0..8, dims
 * >= 0 (unknown -1 refused), at most MF_MAX_TENSOR_BYTES. MF_ESHAPE or
 * MF_ENOMEM with "WHO: shape (1000000,1000000) of float32 is too large ...". */
MfStatus mf_create_check_size(const char *who, MfDType dt, int rank, const int64_t *shape);

/* A tensor of 'shape' with every element 'value' converted to 'dt'
 * (bool: value != 0). */
MfStatus mf_create_fill(const char *who, MfDType dt, int rank, const int64_t *shape,
                        double value, MfTensor **out);

/* Same, with an integer value stored exactly (int64 beyond 2^53). */
MfStatus mf_create_fill_int(const char *who, MfDType dt, int rank, const int64_t *shape,
                            int64_t value, MfTensor **out);

/* A value given to fill with (mf.fill's, mf.constant(value, {shape})'s):
 * a boolean or a number as the user wrote it; 'is_int' when 'i' holds it
 * exactly (a Lua integer, a boolean as 0 or 1, an integer tensor's
 * element), else 'x' does; 'dtype' is the dtype of a one-element tensor
 * given as the value, -1 for a plain value. */
typedef struct MfScalar {
    bool is_bool, is_int;
    int64_t i;
    double x;
    int dtype;
} MfScalar;

/* A tensor of 'shape' filled with 'v', of dtype 'dt' (< 0: the value
 * decides: a tensor's dtype, bool for a boolean, float32 for a number).
 * MF_EARG "WHO: a boolean value does not fit dtype float32" (or a number
 * for bool), "WHO: the value for an integer dtype must be an integer, got
 * 2.5", "WHO: the value 3000000000 does not fit int32". */
MfStatus mf_create_fill_scalar(const char *who, int dt, const MfScalar *v, int rank,
                               const int64_t *shape, MfTensor **out);

/* The value of a one-element concrete tensor given to fill with, as an
 * MfScalar keeping its dtype. MF_EARG "WHO: value must be a number, a
 * boolean or a one-element tensor" for a symbolic or larger tensor. */
MfStatus mf_create_scalar_of(const char *who, const MfTensor *t, MfScalar *v);

/* A shape given as a tensor (mf.shape(x)): a 1-D int32/int64 tensor of at
 * most MF_MAX_RANK entries, each >= 0, read into 'shape' with '*rank' their
 * count; a symbolic one gives '*rank' MF_CREATE_RUN_TIME_SHAPE (its values
 * exist when the graph runs: the caller builds the op with that tensor as
 * its shape input). MF_EARG "WHO: a shape tensor must be a 1-D int32/int64
 * tensor of at most 8 entries", "WHO: shape entry 2 must be >= 0, got -1". */
#define MF_CREATE_RUN_TIME_SHAPE (-2)
MfStatus mf_create_shape_of(const char *who, const MfTensor *t, int64_t *shape, int *rank);

/* zeros_like / ones_like: 'value' (0 or 1) in dtype 'dt' in the shape of
 * 't': a concrete tensor when the shape is known, else (a graph tensor
 * with unknown dims) the FillLike op, which takes the shape when the graph
 * runs. */
MfStatus mf_create_like(const char *who, MfTensor *t, MfDType dt, int value, MfTensor **out);

/* A 'rows' x 'cols' matrix with ones on the main diagonal ("eye");
 * MF_ESHAPE "eye: sizes must be >= 0, got R x C" for a negative size. */
MfStatus mf_create_eye(MfDType dt, int64_t rows, int64_t cols, MfTensor **out);

/* mf.constant(data, {dtype, shape}) for the data tensor 't': 't' itself
 * (retained) when 'rank' < 0, else the concrete 't' (its data) as a view of
 * 'shape', which must hold as many elements. Errors ("constant: ..."):
 * MF_EDTYPE when 'dt' (>= 0: asked) is not t's dtype (no conversion);
 * MF_ESHAPE for a shape given to a symbolic tensor or another element
 * count; MF_ENOMEM. */
MfStatus mf_create_constant(MfTensor *t, int dt, int rank, const int64_t *shape,
                            MfTensor **out);

/* start, start + delta, ... while before 'limit' (exclusive), as tf.range;
 * empty when delta points away from limit. Float dtypes. MF_EARG when delta
 * is 0 or an argument is not finite. */
MfStatus mf_create_range(MfDType dt, double start, double limit, double delta, MfTensor **out);

/* The same with exact integers, for int32 / int64 (int32 also checks that
 * start and limit fit). */
MfStatus mf_create_range_int(MfDType dt, int64_t start, int64_t limit, int64_t delta,
                             MfTensor **out);

/* mf.range's arguments and choice of kernel and dtype: 'v' holds the 'n'
 * (1 to 3) numbers given, as tf.range takes them: limit; start, limit; or
 * start, limit, delta (start 0 and delta 1 when not given). 'all_int' says
 * they were given as integers (then 'iv' holds them exactly, past 2^53
 * too). The dtype is 'dt' when >= 0, else int32 for integers and float32
 * otherwise. An integer dtype needs integral values (within 2^53 when not
 * given as integers); bool is refused (MF_EDTYPE). */
MfStatus mf_create_range_of(int n, const double v[3], const int64_t iv[3], bool all_int, int dt,
                            MfTensor **out);

/* 'n' >= 1 evenly spaced values from 'a' to 'b', both included (float
 * dtypes); n = 1 gives {a}. */
MfStatus mf_create_linspace(MfDType dt, double a, double b, int64_t n, MfTensor **out);

#endif
