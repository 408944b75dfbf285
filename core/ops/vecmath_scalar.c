/* vecmath_scalar.c — vecmath_kernels.h compiled for scalar (flags in the
 * Makefile); the table is chosen at run time by vecmath.c. */
#define MF_VEC_TABLE mf_vec_kernels_scalar
#include "vecmath_kernels.h"
#include "vecmath_f64_kernels.h"
