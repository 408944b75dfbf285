/* vecmath_avx512.c — vecmath_kernels.h compiled for avx512 (flags in the
 * Makefile); the table is chosen at run time by vecmath.c. */
#define MF_VEC_TABLE mf_vec_kernels_avx512
#define MF_VEC_AVX512 1 /* the AVX-512 intrinsics of vecmath_kernels.h */
#include "vecmath_kernels.h"
#include "vecmath_f64_kernels.h"
