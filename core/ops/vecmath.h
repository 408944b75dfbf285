/* vecmath.h — vectorised float32 elementwise math (exp, expm1, log, log1p,
 * tanh, sigmoid, softplus, erf, erfc, sin, cos, tan, atan, asinh, acosh,
 * atanh, gelu, silu, pow; the gradients of gelu and silu) for the ops, with
 * the instruction set chosen at run time.
 *
 * Every one is computed in float lanes within a few ulp (at most 4;
 * vecmath_kernels.h; the bounds are checked by tests/unit/test_vecmath.c
 * over every 97th float bit pattern, and all of them with
 * MF_VECMATH_FULL=1). Overflow, underflow into subnormals, infinities, NaN
 * and signed zeros come out as libm's. Only IEEE operations and explicit
 * fused multiply-adds are used, with no reassociation, so every code path
 * (AVX-512, AVX2,
 * scalar, the vector body or its tail, any thread's chunk) gives the same
 * bits for the same element.
 *
 * The same kernels are compiled three times (vecmath_avx512.c,
 * vecmath_avx2.c, vecmath_scalar.c, each with its own -march in the
 * Makefile); the best one the CPU supports runs, or the one named by the
 * environment variable MF_SIMD=avx512|avx2|scalar (capped by the CPU), which
 * the tests use to run and compare every path. */
#ifndef MF_OPS_VECMATH_H
#define MF_OPS_VECMATH_H

#include <stdbool.h>
#include <stdint.h>

#include "../tensor.h"

/* The sentence the ops' help adds (their .details): MF_VEC_ACCURACY_FLOAT("n"),
 * n the kernel's ulp bound (tests/unit/test_vecmath.c checks it over every
 * 97th float bit pattern and the special values). */
#define MF_VEC_ACCURACY_FLOAT(ulp)                                                 \
    " float32 runs vectorised in float lanes (16 per AVX-512 vector or 8 per AVX2, "   \
    "chosen at run time) within " ulp " ulp of the exact value, with libm's inf, NaN " \
    "and signed zeros; float64 uses libm."
/* The same for the functions with a float64 kernel too (ulp64 its bound,
 * tests/unit/test_vecmath_f64.c). */
#define MF_VEC_ACCURACY_BOTH(ulp, ulp64)                                           \
    " float32 runs vectorised in float lanes (16 per AVX-512 vector or 8 per AVX2, "   \
    "chosen at run time) within " ulp " ulp of the exact value, float64 in double "    \
    "lanes (8 or 4) within " ulp64 " ulp, with libm's inf, NaN and signed zeros."

typedef enum {
    MF_VEC_EXP,
    MF_VEC_EXPM1,
    MF_VEC_LOG,
    MF_VEC_LOG1P,
    MF_VEC_TANH,
    MF_VEC_SIGMOID,
    MF_VEC_SOFTPLUS,
    MF_VEC_ERF,
    MF_VEC_SIN,
    MF_VEC_COS,
    MF_VEC_TAN,
    MF_VEC_ATAN,
    MF_VEC_ASINH,
    MF_VEC_ATANH,
    MF_VEC_ERFC,
    MF_VEC_ACOSH,
    MF_VEC_GELU,
    MF_VEC_GELU_TANH,
    MF_VEC_SILU,
    MF_VEC_COUNT
} MfVecFn;

/* The gradient kernels of the activations: dx = dy * f'(x). */
typedef enum {
    MF_VEC_GELU_GRAD,
    MF_VEC_GELU_TANH_GRAD,
    MF_VEC_SILU_GRAD,
    MF_VEC_GRAD_COUNT
} MfVecGradFn;

typedef enum { MF_SIMD_SCALAR, MF_SIMD_AVX2, MF_SIMD_AVX512 } MfSimd;

/* y[i] = f(x[i]) for i < n on one thread ('x' and 'y' do not overlap). */
typedef void (*MfVecKernel)(const float *x, float *y, int64_t n);

/* y[i] = a[i]^b[i] (b contiguous) or a[i]^b[0] (one exponent). */
typedef void (*MfVecPowKernel)(const float *a, const float *b, float *y, int64_t n);

/* The float64 kernels (exp, expm1, log, tanh, sigmoid: vecmath_f64_kernels.h). */
typedef void (*MfVecKernel64)(const double *x, double *y, int64_t n);

/* dx[i] = dy[i] * f'(x[i]) for i < n on one thread (no overlap with 'dx'). */
typedef void (*MfVecGradKernel)(const float *dy, const float *x, float *dx, int64_t n);

/* The instruction set in use: MF_SIMD's choice, or the best the CPU has. */
MfSimd mf_simd_level(void);

/* Uses 'level' from now on (tests); false, nothing changed, when the CPU
 * lacks it. */
bool mf_simd_set_level(MfSimd level);

/* "avx512", "avx2" or "scalar". */
const char *mf_simd_name(MfSimd level);

/* y[i] = f(x[i]) for i < n, split over the worker pool when n is large. */
void mf_vec_f32(MfVecFn f, const float *x, float *y, int64_t n);

/* True when 'f' has a float64 kernel (vecmath_f64_kernels.h). */
bool mf_vec_has_f64(MfVecFn f);

/* y[i] = f(x[i]) in float64 for i < n, split over the worker pool when n is
 * large; 'f' must have a float64 kernel. */
void mf_vec_f64(MfVecFn f, const double *x, double *y, int64_t n);

/* outs = f(x) elementwise when both are float32, or both float64 and 'f'
 * has a float64 kernel (any strides for 'x'; 'out' is a new tensor of x's
 * shape): true. False (nothing done) otherwise: those keep libm. */
bool mf_vec_unary(MfVecFn f, const MfTensor *x, MfTensor *out);

/* out = dy * f'(x) elementwise when all three are float32 and of one shape
 * (any strides for the inputs; 'out' a new tensor): true. False (nothing
 * done) for other dtypes. */
bool mf_vec_grad(MfVecGradFn f, const MfTensor *dy, const MfTensor *x, MfTensor *out);

/* out = a^b elementwise with broadcasting ('out' a new tensor of the
 * broadcast shape) when all three are float32: true; false otherwise. */
bool mf_vec_pow(const MfTensor *a, const MfTensor *b, MfTensor *out);

#endif
