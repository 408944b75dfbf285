/* vecmath_kernels.h — the bodies of vecmath.h's kernels, included by
 * vecmath_avx512.c, vecmath_avx2.c and vecmath_scalar.c, which define
 * MF_VEC_TABLE (the name of the kernel table they export) and are compiled
 * with their own -march (Makefile) and -fno-trapping-math (so that GCC may
 * evaluate both sides of a choice and vectorise the loops).
 *
 * Every function converts its float argument to double, computes there
 * with polynomials accurate to about 1e-12 relative (far below a float's
 * 6e-8), and rounds once to float: results are within 1 ulp, and the
 * double range covers float's overflow and subnormal edges, so the final
 * rounding produces inf and subnormals exactly as libm does.
 *
 *   exp, expm1: x = k ln2 + r with |r| <= ln2 / 2, expm1(r) by its Taylor
 *       series to r^10 (truncation under 1e-12 relative), then
 *       e^x = 2^k (1 + expm1(r)), expm1(x) = 2^k expm1(r) + (2^k - 1).
 *   log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) with
 *       s = (m - 1) / (m + 1), the atanh series to s^17.
 *   log1p: log of 1 + x (exact in double when |x| >= 2^-29), x - x^2 / 2
 *       below.
 *   tanh: e / (e + 2) with e = expm1(2|x|), the sign of x.
 *   sigmoid: 1 / (1 + e^-x).
 *   softplus: max(x, 0) + log(1 + e) with e = e^-|x| (e (1 - e / 2) when
 *       e < 1e-5, where 1 + e would round e away).
 *   sin, cos, tan: x = k pi/2 + r (pi/2 in two doubles, FMAs), |r| <= pi/4,
 *       sin r and cos r by their Taylor series to r^15 and r^16, chosen and
 *       signed by k mod 4; tan = sin / cos. |x| >= 2^20, inf and NaN go to
 *       libm (a fix-up pass after the vector loop).
 *   atan: |x| > 1 by pi/2 - atan(1/|x|), then above tan(pi/8) by
 *       pi/4 + atan((t - 1) / (t + 1)), the series to u^33.
 *   asinh: log(|x| + sqrt(x^2 + 1)); x - x^3/6 below 2^-12.
 *   atanh: log((1 + x) / (1 - x)) / 2; x + x^3/3 below 2^-12.
 *   pow(a, b): e^(b log a) for finite a > 0 and finite b (the product's
 *       error, under 200 * 2^-52, is far below a float's), and for finite
 *       a < 0 with an integer b, the sign by b's parity; every other pair
 *       (zeros, infinities, NaN, a negative base to a fraction) goes to
 *       libm's powf in a fix-up pass.
 *   erf: |x| < 1: the Taylor series to x^29; 1 <= |x| < 4:
 *       1 - e^(-x^2) erfcx(x), erfcx by a degree-12 polynomial
 *       (tools/gen_vecmath_erf.py, 6e-9 relative); |x| >= 4: 1.
 *
 * No branches: both sides of a choice are computed and one is selected, so
 * that GCC vectorises the loops. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vecmath.h"

#define MF_VEC_INLINE static inline __attribute__((always_inline))

MF_VEC_INLINE double vm_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

MF_VEC_INLINE uint64_t vm_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* 'x' limited to [-lim, lim] (NaN becomes lim: callers put NaN back) */
MF_VEC_INLINE float vm_clampf(float x, float lim)
{
    x = x < lim ? x : lim;
    return x > -lim ? x : -lim;
}

/* expm1(r) for x = k ln2 + r, and 2^k in *scale; |x| <= 700 */
MF_VEC_INLINE double vm_expm1_reduced(double x, double *scale)
{
    const double shifter = 0x1.8p52; /* adding it rounds to an integer in the low bits */
    double k = __builtin_fma(x, 0x1.71547652b82fep0, shifter);
    uint64_t kbits = vm_bits(k);
    k -= shifter;
    double r = __builtin_fma(k, -0x1.62e42fefa3800p-1, x); /* exact: ln2's top bits */
    r = __builtin_fma(k, -0x1.ef35793c76730p-45, r);
    double p = 1.0 / 3628800;
    p = __builtin_fma(p, r, 1.0 / 362880);
    p = __builtin_fma(p, r, 1.0 / 40320);
    p = __builtin_fma(p, r, 1.0 / 5040);
    p = __builtin_fma(p, r, 1.0 / 720);
    p = __builtin_fma(p, r, 1.0 / 120);
    p = __builtin_fma(p, r, 1.0 / 24);
    p = __builtin_fma(p, r, 1.0 / 6);
    p = __builtin_fma(p, r, 0.5);
    /* the low 12 bits of kbits are k mod 2^12; shifted into the exponent */
    *scale = vm_from_bits((kbits + 1023) << 52);
    return __builtin_fma(p * r, r, r);
}

MF_VEC_INLINE double vm_exp(double x)
{
    double s, p = vm_expm1_reduced(x, &s);
    return __builtin_fma(p, s, s);
}

MF_VEC_INLINE double vm_expm1(double x)
{
    double s, p = vm_expm1_reduced(x, &s);
    return __builtin_fma(p, s, s - 1.0);
}

/* log(x) for finite x > 0 (a normal double) */
MF_VEC_INLINE double vm_log(double x)
{
    const uint64_t sqrt_half = 0x3fe6a09e667f3bcdu;
    /* m = x / 2^e in [sqrt(1/2), sqrt(2)): exponent taken relative to sqrt(1/2) */
    uint64_t u = vm_bits(x) - sqrt_half;
    double m = vm_from_bits((u & 0x000fffffffffffffu) + sqrt_half);
    /* e as a double without an int64 conversion (AVX2 has none): the
     * exponent field (u >> 52, with sign wrap for x < sqrt(1/2)) as the low
     * bits of 2^52 */
    double e = vm_from_bits(0x4330000000000000u | ((u >> 52) ^ 0x800u)) - (0x1p52 + 2048.0);
    double f = m - 1.0, s = f / (2.0 + f), z = s * s;
    double p = 1.0 / 17;
    p = __builtin_fma(p, z, 1.0 / 15);
    p = __builtin_fma(p, z, 1.0 / 13);
    p = __builtin_fma(p, z, 1.0 / 11);
    p = __builtin_fma(p, z, 1.0 / 9);
    p = __builtin_fma(p, z, 1.0 / 7);
    p = __builtin_fma(p, z, 1.0 / 5);
    p = __builtin_fma(p, z, 1.0 / 3);
    double lm = __builtin_fma(2.0 * s * z, p, 2.0 * s);
    return __builtin_fma(e, 0x1.62e42fefa39efp-1, lm);
}

MF_VEC_INLINE float vm_nan_through(float x, float y)
{
    return x != x ? x : y;
}

MF_VEC_INLINE float vm_expf(float x)
{
    float y = (float)vm_exp(vm_clampf(x, 200.0f));
    return vm_nan_through(x, y);
}

MF_VEC_INLINE float vm_expm1f(float x)
{
    float y = (float)vm_expm1(vm_clampf(x, 200.0f));
    y = x == 0 ? x : y; /* -0 stays -0 */
    return vm_nan_through(x, y);
}

/* log of a float's value 'd' (converted: float subnormals are normal
 * doubles), with libm's special values */
MF_VEC_INLINE float vm_log_special(double d)
{
    const float inf = __builtin_inff();
    double safe = d > 0 && d < (double)inf ? d : 1.0;
    float y = (float)vm_log(safe);
    y = d < 0 ? __builtin_nanf("") : y;
    y = d == 0 ? -inf : y;
    y = d == (double)inf ? inf : y;
    return d != d ? (float)d : y;
}

MF_VEC_INLINE float vm_logf(float x)
{
    return vm_nan_through(x, vm_log_special(x));
}

MF_VEC_INLINE float vm_log1pf(float x)
{
    double d = x;
    float y = vm_log_special(1.0 + d);
    float tiny = (float)(d - d * d * 0.5); /* |x| < 2^-29: 1 + x is not exact */
    y = __builtin_fabsf(x) < 0x1p-29f ? tiny : y;
    return vm_nan_through(x, y);
}

MF_VEC_INLINE float vm_tanhf(float x)
{
    double e = vm_expm1(2.0 * (double)vm_clampf(__builtin_fabsf(x), 20.0f));
    float y = __builtin_copysignf((float)(e / (e + 2.0)), x);
    return vm_nan_through(x, y);
}

MF_VEC_INLINE float vm_sigmoidf(float x)
{
    double e = vm_exp(-(double)vm_clampf(x, 200.0f));
    return vm_nan_through(x, (float)(1.0 / (1.0 + e)));
}

MF_VEC_INLINE float vm_softplusf(float x)
{
    double e = vm_exp(-(double)vm_clampf(__builtin_fabsf(x), 200.0f));
    double l = e < 1e-5 ? e * (1.0 - 0.5 * e) : vm_log(1.0 + e);
    return vm_nan_through(x, (float)((x > 0 ? (double)x : 0.0) + l));
}

/* sin (q = 0) or cos (q = 1) of x for |x| < 2^20; tan when 'tan' */
MF_VEC_INLINE double vm_sincostan(double x, uint64_t q, bool tan)
{
    const double shifter = 0x1.8p52;
    double k = __builtin_fma(x, 0x1.45f306dc9c883p-1, shifter); /* x 2/pi */
    uint64_t quadrant = vm_bits(k) + q;
    k -= shifter;
    double r = __builtin_fma(-k, 0x1.921fb54442d18p+0, x); /* pi/2 in two parts */
    r = __builtin_fma(-k, 0x1.1a62633145c07p-54, r);
    double z = r * r;
    double ps = 2.8114572543455206e-15;
    ps = __builtin_fma(ps, z, -7.6471637318198164e-13);
    ps = __builtin_fma(ps, z, 1.6059043836821613e-10);
    ps = __builtin_fma(ps, z, -2.505210838544172e-08);
    ps = __builtin_fma(ps, z, 2.7557319223985893e-06);
    ps = __builtin_fma(ps, z, -0.00019841269841269841);
    ps = __builtin_fma(ps, z, 0.0083333333333333332);
    ps = __builtin_fma(ps, z, -0.16666666666666666);
    double s = __builtin_fma(r * z, ps, r);
    double pc = 4.7794773323873853e-14;
    pc = __builtin_fma(pc, z, -1.1470745597729725e-11);
    pc = __builtin_fma(pc, z, 2.08767569878681e-09);
    pc = __builtin_fma(pc, z, -2.7557319223985888e-07);
    pc = __builtin_fma(pc, z, 2.4801587301587302e-05);
    pc = __builtin_fma(pc, z, -0.0013888888888888889);
    pc = __builtin_fma(pc, z, 0.041666666666666664);
    pc = __builtin_fma(pc, z, -0.5);
    double c = __builtin_fma(z, pc, 1.0);
    bool odd = (quadrant & 1) != 0;
    if (tan) /* a select, like the rest: both quotients are computed */
        return odd ? -c / s : s / c;
    double v = odd ? c : s;
    return (quadrant & 2) != 0 ? -v : v;
}

/* the lanes the vector code leaves to libm */
MF_VEC_INLINE bool vm_trig_fixup(float x)
{
    return !(__builtin_fabsf(x) < 0x1p20f);
}

MF_VEC_INLINE float vm_sinf(float x)
{
    float y = (float)vm_sincostan(vm_trig_fixup(x) ? 0.0f : x, 0, false);
    return x == 0 ? x : y; /* -0 stays -0 */
}

MF_VEC_INLINE float vm_cosf(float x)
{
    return (float)vm_sincostan(vm_trig_fixup(x) ? 0.0f : x, 1, false);
}

MF_VEC_INLINE float vm_tanf(float x)
{
    float y = (float)vm_sincostan(vm_trig_fixup(x) ? 0.0f : x, 0, true);
    return x == 0 ? x : y; /* -0 stays -0 */
}

MF_VEC_INLINE float vm_atanf(float x)
{
    double a = __builtin_fabsf(x);
    bool inv = a > 1.0;
    double t = inv ? 1.0 / a : a;
    bool big = t > 0.41421356237309503;
    double u = big ? (t - 1.0) / (t + 1.0) : t, z = u * u;
    double p = 1.0 / 33;
    p = __builtin_fma(p, z, -1.0 / 31);
    p = __builtin_fma(p, z, 1.0 / 29);
    p = __builtin_fma(p, z, -1.0 / 27);
    p = __builtin_fma(p, z, 1.0 / 25);
    p = __builtin_fma(p, z, -1.0 / 23);
    p = __builtin_fma(p, z, 1.0 / 21);
    p = __builtin_fma(p, z, -1.0 / 19);
    p = __builtin_fma(p, z, 1.0 / 17);
    p = __builtin_fma(p, z, -1.0 / 15);
    p = __builtin_fma(p, z, 1.0 / 13);
    p = __builtin_fma(p, z, -1.0 / 11);
    p = __builtin_fma(p, z, 1.0 / 9);
    p = __builtin_fma(p, z, -1.0 / 7);
    p = __builtin_fma(p, z, 1.0 / 5);
    p = __builtin_fma(p, z, -1.0 / 3);
    double r = __builtin_fma(u * z, p, u) + (big ? 0x1.921fb54442d18p-1 : 0.0);
    r = inv ? 0x1.921fb54442d18p+0 - r : r;
    return vm_nan_through(x, __builtin_copysignf((float)r, x));
}

MF_VEC_INLINE float vm_asinhf(float x)
{
    double a = __builtin_fabsf(x);
    float big = vm_log_special(a + __builtin_sqrt(__builtin_fma(a, a, 1.0)));
    float small = (float)(a - a * a * a * (1.0 / 6));
    float y = a < 0x1p-12 ? small : big;
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

MF_VEC_INLINE float vm_atanhf(float x)
{
    double a = __builtin_fabsf(x);
    float big = 0.5f * vm_log_special((1.0 + a) / (1.0 - a)); /* * 0.5 is exact */
    float small = (float)(a + a * a * a * (1.0 / 3));
    float y = a < 0x1p-12 ? small : big;
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

/* erf(a) for 0 <= a < 1: the Taylor series, 2/sqrt(pi) sum (-1)^n a^(2n+1) / (n! (2n+1)) */
MF_VEC_INLINE double vm_erf_small(double a)
{
    double z = a * a;
    double p = 4.4632242632864775e-13;
    p = __builtin_fma(p, z, -6.7113668551641105e-12);
    p = __builtin_fma(p, z, 9.4227590646504113e-11);
    p = __builtin_fma(p, z, -1.2290555301717926e-09);
    p = __builtin_fma(p, z, 1.4807192815879218e-08);
    p = __builtin_fma(p, z, -1.6365844691234924e-07);
    p = __builtin_fma(p, z, 1.6462114365889246e-06);
    p = __builtin_fma(p, z, -1.492565035840625e-05);
    p = __builtin_fma(p, z, 0.00012055332981789664);
    p = __builtin_fma(p, z, -0.00085483270234508522);
    p = __builtin_fma(p, z, 0.0052239776254421879);
    p = __builtin_fma(p, z, -0.026866170645131252);
    p = __builtin_fma(p, z, 0.11283791670955126);
    p = __builtin_fma(p, z, -0.37612638903183754);
    p = __builtin_fma(p, z, 1.1283791670955126);
    return a * p;
}

/* erf(a) for 1 <= a <= 4: 1 - e^(-a^2) erfcx(a) (a^2 is exact in double) */
MF_VEC_INLINE double vm_erf_large(double a)
{
    double t = (a - 2.5) * (1.0 / 1.5); /* tools/gen_vecmath_erf.py, in t = (a - 2.5) / 1.5 */
    double p = 1.3365836187822328e-05;
    p = __builtin_fma(p, t, -3.6888910956996241e-05);
    p = __builtin_fma(p, t, 5.6303575554381281e-05);
    p = __builtin_fma(p, t, -0.00014405779222976978);
    p = __builtin_fma(p, t, 0.00041298692321112019);
    p = __builtin_fma(p, t, -0.0010170089409380111);
    p = __builtin_fma(p, t, 0.0024024874304833248);
    p = __builtin_fma(p, t, -0.0055673803225479157);
    p = __builtin_fma(p, t, 0.012489520417599414);
    p = __builtin_fma(p, t, -0.02700571687064194);
    p = __builtin_fma(p, t, 0.056110488189833968);
    p = __builtin_fma(p, t, -0.11152100511306037);
    p = __builtin_fma(p, t, 0.21080636406114392);
    return 1.0 - vm_exp(-(a * a)) * p;
}

MF_VEC_INLINE float vm_erff(float x)
{
    double a = vm_clampf(__builtin_fabsf(x), 4.0f);
    double small = vm_erf_small(a < 1.0 ? a : 0.0);
    double large = vm_erf_large(a < 1.0 ? 1.0 : a);
    double r = a < 1.0 ? small : a < 4.0 ? large : 1.0;
    return vm_nan_through(x, __builtin_copysignf((float)r, x));
}

#define MF_VEC_LOOP(name, fn)                                                       \
    static void name(const float *x, float *y, int64_t n)                          \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            y[i] = fn(x[i]);                                                       \
    }

/* pow's pairs the vector code leaves to libm */
MF_VEC_INLINE bool vm_pow_fixup(float a, float b)
{
    float m = __builtin_fabsf(a);
    bool integer = __builtin_rintf(b) == b;
    return !(m > 0 && m < __builtin_inff() && __builtin_fabsf(b) < __builtin_inff() &&
             (a > 0 || integer));
}

MF_VEC_INLINE float vm_powf(float a, float b)
{
    bool fix = vm_pow_fixup(a, b);
    double m = fix ? 1.0 : (double)__builtin_fabsf(a);
    double t = (double)b * vm_log(m);
    t = t < 300.0 ? t : 300.0; /* overflows or underflows a float all the same */
    t = t > -300.0 ? t : -300.0;
    float y = (float)vm_exp(t);
    float half = 0.5f * b;
    bool odd = __builtin_rintf(half) != half; /* b is an integer when a < 0 */
    return a < 0 && odd ? -y : y;
}

/* y[i] = a[i]^b[i * sb] ('sb' 1: b contiguous; 0: one exponent) */
#define MF_VEC_POW_LOOP(name, SB)                                                   \
    static void name(const float *a, const float *b, float *y, int64_t n)          \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            y[i] = vm_powf(a[i], b[i * SB]);                                       \
        for (int64_t i = 0; i < n; i++)                                            \
            if (vm_pow_fixup(a[i], b[i * SB]))                                     \
                y[i] = powf(a[i], b[i * SB]);                                      \
    }

MF_VEC_POW_LOOP(k_pow, 1)
MF_VEC_POW_LOOP(k_pow_scalar, 0)

/* a loop whose lanes 'fix' picks are then computed again by libm's 'lib' */
#define MF_VEC_LOOP_FIXUP(name, fn, fix, lib)                                       \
    static void name(const float *x, float *y, int64_t n)                          \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            y[i] = fn(x[i]);                                                       \
        for (int64_t i = 0; i < n; i++)                                            \
            if (fix(x[i]))                                                         \
                y[i] = lib(x[i]);                                                  \
    }

MF_VEC_LOOP_FIXUP(k_sin, vm_sinf, vm_trig_fixup, sinf)
MF_VEC_LOOP_FIXUP(k_cos, vm_cosf, vm_trig_fixup, cosf)
MF_VEC_LOOP_FIXUP(k_tan, vm_tanf, vm_trig_fixup, tanf)
MF_VEC_LOOP(k_atan, vm_atanf)
MF_VEC_LOOP(k_asinh, vm_asinhf)
MF_VEC_LOOP(k_atanh, vm_atanhf)
MF_VEC_LOOP(k_exp, vm_expf)
MF_VEC_LOOP(k_expm1, vm_expm1f)
MF_VEC_LOOP(k_log, vm_logf)
MF_VEC_LOOP(k_log1p, vm_log1pf)
MF_VEC_LOOP(k_tanh, vm_tanhf)
MF_VEC_LOOP(k_sigmoid, vm_sigmoidf)
MF_VEC_LOOP(k_softplus, vm_softplusf)
MF_VEC_LOOP(k_erf, vm_erff)

#define MF_VEC_JOIN2(a, b) a##b
#define MF_VEC_JOIN(a, b) MF_VEC_JOIN2(a, b)
extern const MfVecPowKernel MF_VEC_JOIN(MF_VEC_TABLE, _pow)[2];
const MfVecPowKernel MF_VEC_JOIN(MF_VEC_TABLE, _pow)[2] = {k_pow_scalar, k_pow};

extern const MfVecKernel MF_VEC_TABLE[MF_VEC_COUNT];
const MfVecKernel MF_VEC_TABLE[MF_VEC_COUNT] = {
    [MF_VEC_EXP] = k_exp,     [MF_VEC_EXPM1] = k_expm1,     [MF_VEC_LOG] = k_log,
    [MF_VEC_LOG1P] = k_log1p, [MF_VEC_TANH] = k_tanh,       [MF_VEC_SIGMOID] = k_sigmoid,
    [MF_VEC_SOFTPLUS] = k_softplus, [MF_VEC_ERF] = k_erf, [MF_VEC_SIN] = k_sin,
    [MF_VEC_COS] = k_cos, [MF_VEC_TAN] = k_tan, [MF_VEC_ATAN] = k_atan,
    [MF_VEC_ASINH] = k_asinh, [MF_VEC_ATANH] = k_atanh,
};
