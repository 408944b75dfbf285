/* vecmath_avx2.c — vecmath_kernels.h compiled for avx2 (flags in the
 * Makefile); the table is chosen at run time by vecmath.c. */
#define MF_VEC_TABLE mf_vec_kernels_avx2
#include "vecmath_kernels.h"
#include "vecmath_f64_kernels.h"
