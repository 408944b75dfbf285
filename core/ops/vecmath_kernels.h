/* vecmath_kernels.h — the bodies of vecmath.h's kernels, included by
 * vecmath_avx512.c, vecmath_avx2.c and vecmath_scalar.c, which define
 * MF_VEC_TABLE (the name of the kernel table they export) and are compiled
 * with their own -march (Makefile) and -fno-trapping-math (so that GCC may
 * evaluate both sides of a choice and vectorise the loops).
 *
 * Every kernel computes in float lanes, 8 per AVX2 vector and 16 per
 * AVX-512, with Cephes's float polynomials (S. L. Moshier, public domain)
 * or polynomials of their own, and explicit fmaf; a few ulp (the bounds
 * tests/unit/test_vecmath.c checks and help states: exp 1.1, sigmoid 2.3,
 * tanh 2.6, erf 2.5, log 0.8, log1p 1.5, expm1 1.5, softplus 1.9, sin 1.9,
 * cos 1.9, tan 2.0, atan 2.3, erfc 3.6, gelu 3.1, silu 3.1, asinh 1.6,
 * acosh 2.1, atanh 1.3, pow 1.2 measured). Double precision appears only
 * in trig's reduction of large arguments and gelu's tanh form's argument.
 *
 * Float lanes:
 *   exp: x = k ln2 + r, |r| <= ln2 / 2, e^r by Cephes's expf polynomial,
 *       2^k as two factors (subnormal results rounded once, inf past
 *       FLT_MAX); blocks of x in [-87.33, 88.37] with one factor, no limits.
 *   sigmoid: 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = e^-|x|.
 *   tanh: w / (w + 1) with w = expm1(2|x|) / 2 (exp's reduction, a
 *       shorter polynomial); the sign of x.
 *   log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(m) by Cephes's logf
 *       polynomial in m - 1 (subnormals scaled by 2^23 first).
 *   log1p: log(u) + (x - (u - 1)) / u with u = 1 + x rounded.
 *   erf: |x| < 1: x P(x^2) (Cephes erff); 1 <= |x| < 4:
 *       1 - e^(-x^2) erfcx(x), erfcx by a degree-12 polynomial
 *       (tools/gen_vecmath_erf.py, 6e-9 relative); |x| >= 4: 1.
 *
 *   expm1: as exp, then 2^k expm1(r) + (2^k - 1) in one FMA.
 *   softplus: max(x, 0) + log1p(e^-|x|), log1p as above.
 *   atan: Cephes atanf (pi/2 - atan(1/|x|), pi/4 + atan((|x|-1)/(|x|+1))
 *       by range, pi/2 and pi/4 in two parts).
 *   sin, cos: x = (n + h) pi + r, |r| <= pi/2 (h = 0 for sin, 1/2 for
 *       cos), in float (pi in three floats, FMAs) below |x| = 1024 and in
 *       double above; one polynomial of degree 9 for sin r
 *       (tools/gen_vecmath_sin.py), signed by n's parity.
 *   tan: x = k pi/2 + r, |r| <= pi/4, the same way (the rounding of r kept
 *       as r + lo); Cephes's tanf polynomial, -1 / it in odd quadrants.
 *   sin, cos, tan: |x| >= 2^20, inf and NaN go to libm (blocks with such
 *       lanes, after the vector loop).
 *   asinh: log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x| (the sum's
 *       rounding carried into log1p), log(2a) from 2^12, a - a^3/6 below
 *       2^-12; acosh: log1p(t + sqrt(t (t + 2))), t = x - 1, log(2x) from
 *       2^12; atanh: log1p(2a / (1 - a)) / 2, the quotient in two floats;
 *       a + a^3/3 below 2^-12.
 *   pow(a, b): e^(b log|a|) with log|a| in two floats (about 2^-34
 *       relative: vmf_log_ext, a 16-entry table of log(c) and a two-term
 *       series; the AVX-512 path looks the table up with permutes of
 *       registers) and the product b log|a| in two floats into exp's
 *       kernel, for finite a > 0 and finite b, and for finite a < 0 with
 *       an integer b, the sign by b's parity; every other pair (zeros,
 *       infinities, NaN, a negative base to a fraction) goes to libm's
 *       powf in a fix-up pass (blocks with such pairs).
 *   erfc, gelu, silu: see their functions.
 *
 * No branches inside a vector: both sides of a choice are computed and one
 * is selected, so that GCC vectorises the loops. Where a rare range costs
 * much (gelu's far tail, trig's large arguments, exp's edges, libm's
 * lanes), the kernels check a block of VM_BLOCK elements first and run a
 * shorter body when it has none: an element gets the same bits either way. */
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

MF_VEC_INLINE float vm_nan_through(float x, float y)
{
    return x != x ? x : y;
}

/* ---- float lanes: exp, sigmoid and tanh computed in float (8 lanes per
 * AVX2 vector, 16 per AVX-512), every multiply-add an explicit fmaf ---- */

MF_VEC_INLINE float vmf_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

MF_VEC_INLINE uint32_t vmf_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^(x + lo) = 2^k y for a tiny 'lo' (the low part of an argument carried
 * in two floats, or 0): x = k ln2 + r, |r| <= ln2 / 2 (vmf_exp_reduce
 * returns r), y = e^r in [0.70, 1.42] by Cephes's expf polynomial; k in *k */
MF_VEC_INLINE float vmf_exp_reduce(float x, float lo, int32_t *k)
{
    const float shifter = 0x1.8p23f; /* adding it rounds to an integer in the low bits */
    float kf = __builtin_fmaf(x, 0x1.715476p0f, shifter);
    *k = (int32_t)(vmf_bits(kf) - 0x4b400000u);
    kf -= shifter;
    float r = __builtin_fmaf(kf, -0.693359375f, x); /* ln2 in two parts (Cephes) */
    return __builtin_fmaf(kf, 2.12194440e-4f, r) + lo;
}

MF_VEC_INLINE float vmf_exp_core(float x, float lo, int32_t *k)
{
    float r = vmf_exp_reduce(x, lo, k);
    float p = 1.9875691500e-4f;
    p = __builtin_fmaf(p, r, 1.3981999507e-3f);
    p = __builtin_fmaf(p, r, 8.3334519073e-3f);
    p = __builtin_fmaf(p, r, 4.1665795894e-2f);
    p = __builtin_fmaf(p, r, 1.6666665459e-1f);
    p = __builtin_fmaf(p, r, 5.0000001201e-1f);
    return __builtin_fmaf(p, r * r, r) + 1.0f;
}

/* e^(x + lo) 2^shift for x in [-104, 89] (callers clamp; x down to -120
 * with a shift of 24): 2^(k + shift) as two factors 2^(k>>1) 2^(k-(k>>1)),
 * each a normal float for k in [-150, 128], so that a result in the
 * subnormal range is rounded once (by the last multiply) and one past
 * FLT_MAX becomes inf. A shift lets a caller keep the digits of a result it
 * multiplies further before it underflows. */
MF_VEC_INLINE float vmf_exp_parts(float x, float lo, int32_t shift)
{
    int32_t ki;
    float y = vmf_exp_core(x, lo, &ki);
    ki += shift;
    int32_t k1 = ki >> 1;
    float s1 = vmf_from_bits((uint32_t)(k1 + 127) << 23);
    float s2 = vmf_from_bits((uint32_t)(ki - k1 + 127) << 23);
    return y * s1 * s2;
}

/* e^(x + lo) 2^shift where k + shift is in [-126, 127] (one scale factor;
 * the bits of vmf_exp_parts wherever its result is normal) */
MF_VEC_INLINE float vmf_exp_shifted(float x, float lo, int32_t shift)
{
    int32_t ki;
    float y = vmf_exp_core(x, lo, &ki);
    return y * vmf_from_bits((uint32_t)(ki + shift + 127) << 23);
}

/* e^(x + lo) for x in [-87.33, 88.37] (k in [-126, 127]: one scale factor) */
MF_VEC_INLINE float vmf_exp_normal(float x, float lo)
{
    return vmf_exp_shifted(x, lo, 0);
}

/* (a low part of -0: r + -0 is r, and GCC drops the add) */
MF_VEC_INLINE float vmf_exp(float x)
{
    return vmf_exp_parts(x, -0.0f, 0);
}

/* the float's bits as an integer of the same order (-0 just below +0) */
MF_VEC_INLINE int32_t vmf_ordered(float x)
{
    int32_t i = (int32_t)vmf_bits(x);
    return i ^ ((i >> 31) & 0x7fffffff);
}

/* x limited to [lo, hi] (NaN becomes lo or hi: callers put NaN back), on
 * the ordered bits: two integer min/max instructions, where GCC turns float
 * compare-and-selects into a cascade of selects through what follows */
MF_VEC_INLINE float vmf_clamp(float x, float lo, float hi)
{
    int32_t i = vmf_ordered(x), l = vmf_ordered(lo), h = vmf_ordered(hi);
    i = i < h ? i : h;
    i = i > l ? i : l;
    return vmf_from_bits((uint32_t)(i ^ ((i >> 31) & 0x7fffffff)));
}

/* min(|x|, lim) for lim >= 0 (NaN becomes lim: callers put NaN back), on
 * the bits: nonnegative floats order as their bits do, and an integer min
 * is one vector instruction where a float compare-and-select is several */
MF_VEC_INLINE float vmf_abs_min(float x, float lim)
{
    int32_t b = (int32_t)(vmf_bits(x) & 0x7fffffffu), l = (int32_t)vmf_bits(lim);
    return vmf_from_bits((uint32_t)(b < l ? b : l));
}

/* e^x; without 'full' for x in [-87.33, 88.37] only (not NaN): no limits,
 * one scale factor 2^k (k in [-126, 127]), the same bits */
MF_VEC_INLINE float vm_expf(float x, bool full)
{
    if (full)
        return vm_nan_through(x, vmf_exp(vmf_clamp(x, -104.0f, 89.0f)));
    return vmf_exp_normal(x, -0.0f);
}

/* the lanes exp's short path leaves out (NaN too) */
MF_VEC_INLINE bool vm_exp_full(float x)
{
    return !(x >= -87.33f && x <= 88.37f);
}

MF_VEC_INLINE bool vm_never(float x)
{
    (void)x;
    return false;
}

/* the lanes sigmoid's short body leaves out (NaN too) */
MF_VEC_INLINE bool vm_sigmoid_full(float x)
{
    return !(__builtin_fabsf(x) <= 87.33f);
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e = e^-|x| never
 * overflows, and a tiny result keeps its digits; without 'full' for
 * |x| <= 87.33 only (not NaN): e with one scale factor, no limits, the same
 * bits (as exp's short body) */
MF_VEC_INLINE float vm_sigmoidf(float x, bool full)
{
    if (!full) {
        float e = vmf_exp_normal(-__builtin_fabsf(x), -0.0f);
        float d = 1.0f + e;
        return x >= 0 ? 1.0f / d : e / d;
    }
    float e = vmf_exp(-vmf_clamp(__builtin_fabsf(x), 0.0f, 104.0f));
    float d = 1.0f + e;
    float y = x >= 0 ? 1.0f / d : e / d;
    return vm_nan_through(x, y);
}

/* tanh |x| = w / (w + 1) with w = expm1(2|x|) / 2, the sign of x (NaN
 * carried through by the arithmetic). 2|x| limited to 20 (e^20 makes it 1
 * in float; the comparison lets NaN through); 2|x| = k ln2 + r, expm1(r) =
 * r + r^2 q(r) with q one degree shorter than exp's (2^-27.4 relative,
 * tools/gen_vecmath_tanh.py), then w = s expm1(r) + (s - 1/2) with s =
 * 2^(k-1) in one FMA (exact for k = 0). One exponential and one division
 * in every lane, where a polynomial below 0.625 and 1 - 2 / (e^2x + 1)
 * above took both and a select: 1.25x faster, 2.6 ulp where that had 1.3
 * (the rounding of w + 1 counts in full for small x). */
MF_VEC_INLINE float vm_tanhf(float x)
{
    float a2 = 2.0f * __builtin_fabsf(x);
    int32_t k;
    float r = vmf_exp_reduce(a2 > 20.0f ? 20.0f : a2, -0.0f, &k);
    float q = 1.382197835e-03f;
    q = __builtin_fmaf(q, r, 8.368704468e-03f);
    q = __builtin_fmaf(q, r, 4.166825488e-02f);
    q = __builtin_fmaf(q, r, 1.666652113e-01f);
    q = __builtin_fmaf(q, r, 4.999999404e-01f);
    float em = __builtin_fmaf(q, r * r, r);
    float s = vmf_from_bits((uint32_t)(k - 1 + 127) << 23);
    float w = __builtin_fmaf(em, s, s - 0.5f);
    return __builtin_copysignf(w / (w + 1.0f), x);
}

/* log of a finite x > 0, subnormals too (scaled by 2^23 first: vmf_log;
 * vmf_log_scaled takes a normal x, times 2^scaled): x = 2^e m with m in
 * [sqrt(1/2), sqrt(2)), f = m - 1, log(1 + f) by Cephes's logf polynomial,
 * e ln2 in two parts */
MF_VEC_INLINE float vmf_log_scaled(float x, float scaled)
{
    uint32_t u = vmf_bits(x) - 0x3f3504f3u; /* the exponent relative to sqrt(1/2)'s */
    float e = (float)((int32_t)u >> 23) - scaled;
    float f = vmf_from_bits((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float z = f * f, z2 = z * z;
    /* the polynomial by Estrin's scheme: depth 4 multiply-adds, not 8 (the
     * kernel is bound by its dependency chain; p's roundings are scaled by
     * f^3 below) */
    float p01 = __builtin_fmaf(-2.4999993993e-1f, f, 3.3333331174e-1f);
    float p23 = __builtin_fmaf(-1.6668057665e-1f, f, 2.0000714765e-1f);
    float p45 = __builtin_fmaf(-1.2420140846e-1f, f, 1.4249322787e-1f);
    float p67 = __builtin_fmaf(-1.1514610310e-1f, f, 1.1676998740e-1f);
    float p03 = __builtin_fmaf(p23, z, p01), p47 = __builtin_fmaf(p67, z, p45);
    float p = __builtin_fmaf(__builtin_fmaf(7.0376836292e-2f, z2, p47), z2, p03);
    float y = f * z * p;
    y = __builtin_fmaf(e, -2.12194440e-4f, y);
    y = __builtin_fmaf(-0.5f, z, y);
    return __builtin_fmaf(e, 0.693359375f, f + y);
}

MF_VEC_INLINE float vmf_log(float x)
{
    bool sub = x < 0x1p-126f;
    return vmf_log_scaled(sub ? x * 0x1p23f : x, sub ? 23.0f : 0.0f);
}

/* 'y' (log of x where x is finite and > 0) with libm's values elsewhere */
MF_VEC_INLINE float vmf_log_special(float x, float y)
{
    y = x < 0 ? __builtin_nanf("") : y;
    y = x == 0 ? -__builtin_inff() : y;
    y = x == __builtin_inff() ? x : y;
    return vm_nan_through(x, y);
}

/* log x; without 'full' for normal finite x > 0 only (the bits of the full
 * body: no subnormal scaling, no special values) */
MF_VEC_INLINE float vm_logf(float x, bool full)
{
    if (!full)
        return vmf_log_scaled(x, 0.0f);
    float safe = x > 0 && x < __builtin_inff() ? x : 1.0f;
    return vmf_log_special(x, vmf_log(safe));
}

/* the lanes log's short body leaves out (NaN too) */
MF_VEC_INLINE bool vm_log_full(float x)
{
    return !(x >= 0x1p-126f && x < __builtin_inff());
}

/* log(1 + x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the
 * quotient puts back what the rounding of u lost (x itself when u is 1) */
MF_VEC_INLINE float vm_log1pf(float x, bool full)
{
    float u = 1.0f + x; /* 0 or at least 2^-24: never subnormal */
    if (!full) { /* -1 < x < inf: u is normal and finite */
        float y = vmf_log_scaled(u, 0.0f) + (x - (u - 1.0f)) / u;
        return x == 0 ? x : y;
    }
    float safe = u > 0 && u < __builtin_inff() ? u : 1.0f;
    float y = vmf_log_scaled(safe, 0.0f) + (x - (safe - 1.0f)) / safe;
    y = vmf_log_special(u, y);
    return x == 0 ? x : vm_nan_through(x, y); /* -0 stays -0 */
}

/* the lanes log1p's short body leaves out (NaN too) */
MF_VEC_INLINE bool vm_log1p_full(float x)
{
    return !(x > -1.0f && x < __builtin_inff());
}

/* |x| < 1: x P(x^2) (Cephes erff); 1 <= |x| < 4: 1 - e^(-x^2) erfcx(|x|),
 * erfcx by a degree-12 polynomial in t = (|x| - 2.5) / 1.5
 * (tools/gen_vecmath_erf.py, 6e-9 relative), x^2 carried as z + lo (an
 * FMA gives the low part) into the exponential; |x| >= 4: 1 */
/* erf(a) = a P(a^2) for |a| < 1 (Cephes erff), z = a^2 */
MF_VEC_INLINE float vmf_erf_small(float a, float z)
{
    float p = 7.853861353153693e-5f;
    p = __builtin_fmaf(p, z, -8.010193625184903e-4f);
    p = __builtin_fmaf(p, z, 5.188327685732524e-3f);
    p = __builtin_fmaf(p, z, -2.685381193529856e-2f);
    p = __builtin_fmaf(p, z, 1.128358514861418e-1f);
    p = __builtin_fmaf(p, z, -3.761262582423300e-1f);
    p = __builtin_fmaf(p, z, 1.128379165726710e+0f);
    return a * p;
}

MF_VEC_INLINE float vm_erff(float x)
{
    float a = vmf_clamp(__builtin_fabsf(x), 0.0f, 4.0f);
    float z = a * a;
    float small = vmf_erf_small(a, z);
    float t = (a - 2.5f) * (1.0f / 1.5f);
    float q = 1.3365836187822328e-05f;
    q = __builtin_fmaf(q, t, -3.6888910956996241e-05f);
    q = __builtin_fmaf(q, t, 5.6303575554381281e-05f);
    q = __builtin_fmaf(q, t, -0.00014405779222976978f);
    q = __builtin_fmaf(q, t, 0.00041298692321112019f);
    q = __builtin_fmaf(q, t, -0.0010170089409380111f);
    q = __builtin_fmaf(q, t, 0.0024024874304833248f);
    q = __builtin_fmaf(q, t, -0.0055673803225479157f);
    q = __builtin_fmaf(q, t, 0.012489520417599414f);
    q = __builtin_fmaf(q, t, -0.02700571687064194f);
    q = __builtin_fmaf(q, t, 0.056110488189833968f);
    q = __builtin_fmaf(q, t, -0.11152100511306037f);
    q = __builtin_fmaf(q, t, 0.21080636406114392f);
    float lo = __builtin_fmaf(a, a, -z); /* a^2 = z + lo exactly */
    float e = vmf_exp(-z);
    e = __builtin_fmaf(-lo, e, e); /* e^-(z + lo) */
    float y = a < 1.0f ? small : __builtin_fmaf(-e, q, 1.0f);
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

/* erfcx(a) = e^(a^2) erfc(a) for 1/2 <= a <= 4: a polynomial in
 * t = (a - 2.25) / 1.75 (tools/gen_vecmath_erfc.py, 6e-9 relative) */
MF_VEC_INLINE float vmf_erfcx_near(float a)
{
    float t = (a - 2.25f) * (1.0f / 1.75f);
    float p = 4.6250810847119916e-05f;
    p = __builtin_fmaf(p, t, -0.00011032686646433165f);
    p = __builtin_fmaf(p, t, 8.4809568684986343e-05f);
    p = __builtin_fmaf(p, t, -0.00017900480621135462f);
    p = __builtin_fmaf(p, t, 0.00062452326015568149f);
    p = __builtin_fmaf(p, t, -0.0013312242380842955f);
    p = __builtin_fmaf(p, t, 0.0025689228451328968f);
    p = __builtin_fmaf(p, t, -0.0051309291759006016f);
    p = __builtin_fmaf(p, t, 0.010013750661608959f);
    p = __builtin_fmaf(p, t, -0.018779038082716422f);
    p = __builtin_fmaf(p, t, 0.033941955979429082f);
    p = __builtin_fmaf(p, t, -0.058963521385549222f);
    p = __builtin_fmaf(p, t, 0.09797742849704992f);
    p = __builtin_fmaf(p, t, -0.1548513973470797f);
    return __builtin_fmaf(p, t, 0.23108725873039199f);
}

/* a erfcx(a) for 4 <= a <= 10.25, s = 1/a^2: a polynomial in s
 * (tools/gen_vecmath_erfc.py, 3e-11 relative) */
MF_VEC_INLINE float vmf_erfcx_far(float s)
{
    float t = (s - 0.03600907198096371f) * (1.0f / 0.026490928019036287f);
    float q = 8.5636123818535139e-09f;
    q = __builtin_fmaf(q, t, -8.2419468461706167e-08f);
    q = __builtin_fmaf(q, t, 9.1194182683209976e-07f);
    q = __builtin_fmaf(q, t, -1.263388129408924e-05f);
    q = __builtin_fmaf(q, t, 0.00023273584494984376f);
    q = __builtin_fmaf(q, t, -0.0067593765669586962f);
    return __builtin_fmaf(q, t, 0.5545362670315247f);
}

/* e^-(z + lo) 2^shift for a square z + lo (lo from an FMA), z <= 110 */
MF_VEC_INLINE float vmf_exp_neg_square(float z, float lo, int32_t shift)
{
    return vmf_exp_parts(-vmf_clamp(z, 0.0f, 110.0f), -lo, shift);
}

/* a < 5/8: 1 - erf(a); 5/8 <= a <= 10.25: e^(-a^2) erfcx(a); 2 - erfc(|x|)
 * for x < 0. The switch is at 5/8, not at erfcx_near's edge 1/2: just
 * above 1/2 the polynomial's and the exponential's errors add up to 4.6
 * ulp (every pattern, x = 0x1.11e142p-1), while 1 - erf(a) stays within
 * 3.6 ulp up to 5/8 (erfc(a) > 0.37: little cancellation) */
MF_VEC_INLINE float vm_erfcf(float x)
{
    float a = vmf_clamp(__builtin_fabsf(x), 0.0f, 10.25f);
    float z = a * a;
    float er = vmf_erf_small(a, z);
    float q = a < 4.0f ? vmf_erfcx_near(a) : vmf_erfcx_far(1.0f / z) / a;
    float c = vmf_exp_neg_square(z, __builtin_fmaf(a, a, -z), 0) * q;
    float y = a < 0.625f ? (x < 0 ? 1.0f + er : 1.0f - er) : (x < 0 ? 2.0f - c : c);
    return vm_nan_through(x, y);
}

/* gelu's far tail, x < -4 sqrt 2 (u = |x|): q(u) = erfcx(u / sqrt 2) =
 * e^(u^2/2) erfc(u / sqrt 2) as a polynomial in u itself, degree 11 on
 * 4 sqrt 2 <= u <= 14.5 (no rounded u / sqrt 2, no division;
 * tools/gen_vecmath_gelu.py, 1.6e-7 relative evaluated in float) */
#define VM_GELU_FAR 5.65685425f /* 4 sqrt 2 */

/* the lanes that need the far polynomial (gelu's kernels skip it in blocks
 * without one) */
MF_VEC_INLINE bool vm_gelu_far(float x)
{
    return !(x >= -VM_GELU_FAR); /* NaN too */
}

MF_VEC_INLINE float vmf_gelu_q_far(float u)
{
    float t = u - 10.0784273f;
    float p = -5.96341553e-13f;
    p = __builtin_fmaf(p, t, 6.69632839e-12f);
    p = __builtin_fmaf(p, t, -3.96840651e-11f);
    p = __builtin_fmaf(p, t, 4.33651115e-10f);
    p = __builtin_fmaf(p, t, -5.47014833e-09f);
    p = __builtin_fmaf(p, t, 5.91792393e-08f);
    p = __builtin_fmaf(p, t, -6.27331701e-07f);
    p = __builtin_fmaf(p, t, 6.67324048e-06f);
    p = __builtin_fmaf(p, t, -7.04256963e-05f);
    p = __builtin_fmaf(p, t, 0.000736486341f);
    p = __builtin_fmaf(p, t, -0.00763384579f);
    return __builtin_fmaf(p, t, 0.0784101188f);
}

/* Phi(x) = q e s / 2 for x < -4 sqrt 2, in pieces: u = |x| limited to
 * 14.5 (past it gelu is -0 and its gradient 0), q = erfcx(u / sqrt 2) by
 * the far polynomial and e = e^(-x^2/2) 2^24 (x^2 = z + lo exactly) with
 * s = 2^-24, so that a caller multiplies before it rounds a subnormal */
typedef struct {
    float q, e, s;
} VmPhiFar;

MF_VEC_INLINE VmPhiFar vmf_phi_far(float x)
{
    VmPhiFar f;
    float uf = vmf_abs_min(x, 14.5f);
    float zf = uf * uf, lof = __builtin_fmaf(uf, uf, -zf);
    f.q = vmf_gelu_q_far(uf);
    f.e = vmf_exp_parts(-0.5f * zf, -0.5f * lof, 24);
    f.s = 0x1p-24f;
    return f;
}

/* gelu's forward: Phi(-u) = erfc(u / sqrt 2) / 2 = e^G(u) for u = |x| <= 4 sqrt 2,
 * G(u) = -u^2/2 + L(u), L(u) = log(erfcx(u / sqrt 2) / 2) = C0 + C1 u + s(u)
 * (tools/gen_vecmath_gelu.py). One exponential of an argument assembled near
 * its small reduced value: with G = k ln2 + r, r = (C0 - k ln2_hi) + zc
 * (exact) + C1 u (one rounding, result below 0.7) + s + zlo - k ln2_lo, where
 * -u^2/2 = zc + zlo with zc on a grid of 2^-20. C0 and C1 have few bits so
 * that those steps are exact; s (|s| < 0.27) is a polynomial in t = u - 2 of
 * degree 11, in three short chains (latency); k comes from a quadratic in t
 * (within 0.06 of G / ln2, so |r| < 0.4), not from s, for the same reason. */
#define VM_GELU_C0 -0.8125f
#define VM_GELU_C1 -0.3515625f
MF_VEC_INLINE float vmf_gelu_s(float t)
{
    float a = -0.00989252795f;
    a = __builtin_fmaf(a, t, 0.0571397804f);
    a = __builtin_fmaf(a, t, -0.0216530766f);
    a = __builtin_fmaf(a, t, -0.26755935f);
    float b = -1.79426445e-06f;
    b = __builtin_fmaf(b, t, 2.88510309e-05f);
    b = __builtin_fmaf(b, t, -0.000242536305f);
    b = __builtin_fmaf(b, t, 0.00164218352f);
    float c = 1.74288428e-09f;
    c = __builtin_fmaf(c, t, -2.64901665e-08f);
    c = __builtin_fmaf(c, t, 1.59128092e-07f);
    c = __builtin_fmaf(c, t, -3.64673269e-07f);
    float t2 = t * t, t4 = t2 * t2;
    return __builtin_fmaf(__builtin_fmaf(c, t4, b), t4, a);
}

/* Phi(-u) = scale (1 + m) */
typedef struct {
    float m, scale;
} VmGeluTail;

MF_VEC_INLINE VmGeluTail vmf_gelu_tail(float u)
{
    float t = u - 2.0f;
    float s = vmf_gelu_s(t);
    float kq = __builtin_fmaf(__builtin_fmaf(-0.651232123f, t, -3.48651528f), t, -5.43029404f);
    float kf = __builtin_rintf(kq);
    float h = -0.5f * u, zc = __builtin_fmaf(h, u, 24.0f) - 24.0f; /* rounded to 2^-20 */
    float zlo = __builtin_fmaf(h, u, -zc);
    float kc = __builtin_fmaf(kf, -0.693359375f, VM_GELU_C0); /* exact: a multiple of 2^-9 */
    float small = __builtin_fmaf(kf, 2.12194440e-4f, zlo);
    float r = __builtin_fmaf(VM_GELU_C1, u, kc + zc) + (s + small);
    float r2 = r * r; /* e^r = 1 + r + r^2 p(r), |r| < 0.4: 8e-9 relative */
    float pb = __builtin_fmaf(0.001379039953f, r, 0.008380407467f);
    float pc = __builtin_fmaf(0.1666640788f, r, 0.499999851f);
    float p = __builtin_fmaf(__builtin_fmaf(pb, r, 0.04166970775f), r2, pc);
    VmGeluTail g;
    g.m = __builtin_fmaf(p, r2, r);
    g.scale = vmf_from_bits((uint32_t)((int32_t)kf + 127) << 23);
    return g;
}

/* x Phi(x): x - x Phi(-x) for x > 0 (x limited to 2^100 in the product, so
 * that inf stays inf; past 4 sqrt 2 that is x), x Phi(x) with one rounding
 * for x <= 0 (-0 kept); with 'far', lanes below -4 sqrt 2 take
 * vmf_phi_far's pieces (the other lanes the same bits) and NaN goes
 * through. No cancellation anywhere. */
MF_VEC_INLINE float vm_geluf(float x, bool far)
{
    VmGeluTail g = vmf_gelu_tail(vmf_abs_min(x, VM_GELU_FAR));
    int32_t xb = (int32_t)vmf_bits(x), big = 0x71800000; /* 2^100 */
    float xm = vmf_from_bits((uint32_t)(xb < big ? xb : big));
    float q = __builtin_fmaf(g.m, g.scale, g.scale), xs = x * g.scale;
    float y = x > 0 ? __builtin_fmaf(-q, xm, x) : __builtin_fmaf(g.m, xs, xs);
    y = vmf_from_bits(vmf_bits(y) | (vmf_bits(x) & 0x80000000u));
    if (far) { /* a compile-time choice: the blocks without such x skip it */
        VmPhiFar f = vmf_phi_far(x);
        float xn = x > -14.5f ? x : -14.5f;
        float neg = (((xn * 0.5f) * f.q) * f.e) * f.s;
        y = vm_nan_through(x, x < -VM_GELU_FAR ? neg : y);
    }
    return y;
}

/* gelu's gradient's polynomial H in t = u - 3 on [0, 6]
 * (tools/gen_vecmath_gelu.py grad_poly), in four short chains joined by
 * t^4 (latency, as vmf_gelu_s) */
MF_VEC_INLINE float vmf_gelu_grad_h(float t)
{
    float a = -0.000904057117f;
    a = __builtin_fmaf(a, t, 0.00432317285f);
    a = __builtin_fmaf(a, t, -0.020113185f);
    a = __builtin_fmaf(a, t, 0.0909267589f);
    float b = -1.34588799e-06f;
    b = __builtin_fmaf(b, t, 7.06083483e-06f);
    b = __builtin_fmaf(b, t, -3.65692285e-05f);
    b = __builtin_fmaf(b, t, 0.000184181554f);
    float c = -1.15583576e-09f;
    c = __builtin_fmaf(c, t, 5.3621183e-09f);
    c = __builtin_fmaf(c, t, -4.56948221e-08f);
    c = __builtin_fmaf(c, t, 2.62341956e-07f);
    float d = __builtin_fmaf(-7.27668689e-11f, t, 4.89952579e-10f);
    float t2 = t * t, t4 = t2 * t2;
    return __builtin_fmaf(__builtin_fmaf(__builtin_fmaf(d, t4, c), t4, b), t4, a);
}

/* dy (Phi(x) + x phi(x)), phi(x) = e^(-x^2/2) / sqrt(2 pi), with one
 * exponential and one polynomial: for u = |x| (limited to 6),
 * Phi(x) + x phi(x) = e P(u) for x < 0 and 1 - e P(u) for x >= 0, where
 * e = e^(-u^2/2) (u^2 = z + lo exactly) and P(u) = h(u) - u / sqrt(2 pi),
 * h(u) = erfcx(u / sqrt 2) / 2 = 1/2 + u (-1/sqrt(2 pi) + u H(u)) (small u
 * keep their digits; no erf branch). Past 6, 1 - e P is 1 in float. With
 * 'far', lanes below -4 sqrt 2 take vmf_phi_far's pieces (the other lanes
 * the same bits). */
MF_VEC_INLINE float vm_gelu_gradf(float dy, float x, bool far)
{
    const float inv_sqrt_2pi = 0.398942280401432678f;
    float u = vmf_abs_min(x, 6.0f);
    float z = u * u, lo = __builtin_fmaf(u, u, -z);
    float e = vmf_exp_normal(-0.5f * z, -0.5f * lo);
    float hu = __builtin_fmaf(vmf_gelu_grad_h(u - 3.0f), u, -inv_sqrt_2pi);
    float p = __builtin_fmaf(-u, inv_sqrt_2pi, __builtin_fmaf(hu, u, 0.5f));
    float d = x < 0 ? e * p : __builtin_fmaf(-e, p, 1.0f);
    if (far) { /* a compile-time choice: the blocks without such x skip it */
        VmPhiFar f = vmf_phi_far(x);
        float xn = x > -14.5f ? x : -14.5f;
        float neg = __builtin_fmaf(xn, inv_sqrt_2pi, 0.5f * f.q) * (f.e * f.s);
        d = vm_nan_through(x, x < -VM_GELU_FAR ? neg : d);
    }
    return dy * d;
}

/* sigmoid(v) in pieces: e = e^-|v| 2^24 (|v| = hi + lo <= 115 in two
 * floats for the exponential) and d = 1 + e^-|v|: sigmoid(v) = 1 / d for
 * v >= 0 and e 2^-24 / d below */
typedef struct {
    float e, d;
} VmSigmoid;

MF_VEC_INLINE VmSigmoid vmf_sigmoid_split(float hi, float lo)
{
    VmSigmoid s;
    s.e = vmf_exp_parts(-hi, -lo, 24);
    s.d = 1.0f + s.e * 0x1p-24f;
    return s;
}

/* for a double 'v' (gelu's tanh form: its cubic's rounding would be
 * amplified by |v|) */
MF_VEC_INLINE VmSigmoid vmf_sigmoid_parts(double v)
{
    double av = __builtin_fabs(v);
    av = av < 115.0 ? av : 115.0;
    float hi = (float)av;
    return vmf_sigmoid_split(hi, (float)(av - (double)hi));
}

/* for a float 'v' (silu: v = x, exact; no double lanes) */
MF_VEC_INLINE VmSigmoid vmf_sigmoid_partsf(float v)
{
    return vmf_sigmoid_split(vmf_abs_min(v, 115.0f), 0.0f);
}

/* x sigmoid(v) with one division ('neg': v < 0): x / d for v >= 0;
 * x e / (d 2^24) below (exact scaling: a subnormal result is rounded once);
 * x limited to [-120, inf) there (0 anyway) */
MF_VEC_INLINE float vmf_times_sigmoid(float x, bool neg, VmSigmoid s)
{
    float xn = x > -120.0f ? x : -120.0f;
    float num = neg ? xn * s.e : x, den = neg ? s.d * 0x1p24f : s.d;
    return vm_nan_through(x, num / den);
}

/* 2 sqrt(2/pi) (x + 0.044715 x^3) in double: gelu's tanh form is
 * x (1 + tanh(v / 2)) / 2 = x sigmoid(v) */
#define VM_GELU_K1 1.5957691216057308 /* 2 sqrt(2 / pi) */
#define VM_GELU_K3 0.071354816272919  /* 2 sqrt(2 / pi) 0.044715 */
MF_VEC_INLINE double vm_gelu_tanh_arg(float x)
{
    double d = x;
    return d * __builtin_fma(VM_GELU_K3, d * d, VM_GELU_K1);
}

MF_VEC_INLINE float vm_gelu_tanhf(float x)
{
    double v = vm_gelu_tanh_arg(x);
    return vmf_times_sigmoid(x, v < 0, vmf_sigmoid_parts(v));
}

/* the lanes silu's short body leaves out (NaN too) */
MF_VEC_INLINE bool vm_silu_full(float x)
{
    return !(__builtin_fabsf(x) <= 80.0f);
}

/* x sigmoid(x); without 'full' for |x| <= 80 only: e^-|x| 2^24 with one
 * scale factor (k + 24 >= -92), no limits, no NaN; the same bits */
MF_VEC_INLINE float vm_siluf(float x, bool full)
{
    if (full)
        return vmf_times_sigmoid(x, x < 0, vmf_sigmoid_partsf(x));
    VmSigmoid s;
    s.e = vmf_exp_shifted(-__builtin_fabsf(x), -0.0f, 24);
    s.d = 1.0f + s.e * 0x1p-24f;
    float num = x < 0 ? x * s.e : x, den = x < 0 ? s.d * 0x1p24f : s.d;
    return num / den;
}

/* f'(x) for f = x sigmoid(v(x)): s (1 + x (1 - s) v'), s = sigmoid(v);
 * 1 - s as e / d or 1 / d, whichever does not cancel (one division: 1 / d);
 * below v = 0 the product is formed scaled by 2^24 (a tiny s keeps its
 * digits); x limited to [-30, 30] for gelu's tanh form (s is 0 or 1 past
 * it: f' is 0 or 1) */
MF_VEC_INLINE float vmf_times_sigmoid_grad(float x, bool neg, VmSigmoid s, float dv)
{
    float inv = 1.0f / s.d;
    float comp = neg ? inv : (s.e * 0x1p-24f) * inv;
    float f = __builtin_fmaf(x * comp, dv, 1.0f);
    return neg ? ((s.e * inv) * f) * 0x1p-24f : f * inv; /* s = e 2^-24 / d below 0 */
}

MF_VEC_INLINE float vm_gelu_tanh_gradf(float dy, float x)
{
    float xc = vmf_clamp(x, -30.0f, 30.0f);
    float dv = __builtin_fmaf((float)(3 * VM_GELU_K3), xc * xc, (float)VM_GELU_K1);
    double v = vm_gelu_tanh_arg(xc);
    float d = vmf_times_sigmoid_grad(xc, v < 0, vmf_sigmoid_parts(v), dv);
    return dy * vm_nan_through(x, d);
}

MF_VEC_INLINE float vm_silu_gradf(float dy, float x)
{
    float xc = vmf_clamp(x, -120.0f, 120.0f);
    float d = vmf_times_sigmoid_grad(xc, xc < 0, vmf_sigmoid_partsf(xc), 1.0f);
    return dy * vm_nan_through(x, d);
}

/* expm1 in float lanes: x = k ln2 + r (as exp), expm1(r) = r + r^2 P(r)
 * (Cephes's expf polynomial), then 2^k expm1(r) + (2^k - 1) formed as
 * 2 (s expm1(r) + (s - 1/2)) with s = 2^(k-1) (one FMA; the doubling
 * overflows to inf past FLT_MAX); x limited to [-20, 89] */
MF_VEC_INLINE float vm_expm1f(float x)
{
    const float shifter = 0x1.8p23f;
    float xc = vmf_clamp(x, -20.0f, 89.0f); /* e^-20 is lost beside -1 */
    float k = __builtin_fmaf(xc, 0x1.715476p0f, shifter);
    int32_t ki = (int32_t)(vmf_bits(k) - 0x4b400000u);
    k -= shifter;
    float r = __builtin_fmaf(k, -0.693359375f, xc);
    r = __builtin_fmaf(k, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = __builtin_fmaf(p, r, 1.3981999507e-3f);
    p = __builtin_fmaf(p, r, 8.3334519073e-3f);
    p = __builtin_fmaf(p, r, 4.1665795894e-2f);
    p = __builtin_fmaf(p, r, 1.6666665459e-1f);
    p = __builtin_fmaf(p, r, 5.0000001201e-1f);
    float em = __builtin_fmaf(p, r * r, r);
    float s = vmf_from_bits((uint32_t)(ki - 1 + 127) << 23); /* k - 1 >= -127: normal */
    float y = 2.0f * __builtin_fmaf(em, s, s - 0.5f);
    y = x == 0 ? x : y; /* -0 stays -0 */
    return vm_nan_through(x, y);
}

/* max(x, 0) + log1p(e), e = e^-|x|: log1p as vm_log1pf computes it */
MF_VEC_INLINE float vm_softplusf(float x)
{
    float e = vmf_exp(-vmf_clamp(__builtin_fabsf(x), 0.0f, 104.0f));
    float u = 1.0f + e; /* in [1, 2] */
    float l = vmf_log_scaled(u, 0.0f) + (e - (u - 1.0f)) / u;
    return vm_nan_through(x, (x > 0 ? x : 0.0f) + l);
}

/* Cephes atanf: |x| > tan(3pi/8): pi/2 - atan(1/|x|); > tan(pi/8):
 * pi/4 + atan((|x| - 1) / (|x| + 1)); below, the odd polynomial alone */
MF_VEC_INLINE float vm_atanf(float x)
{
    float a = __builtin_fabsf(x);
    bool big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
    float t = big ? -1.0f / a : mid ? (a - 1.0f) / (a + 1.0f) : a;
    /* pi/2 and pi/4 in two parts: the low part joins the small terms */
    float hi = big ? 0x1.921fb6p+0f : mid ? 0x1.921fb6p-1f : 0.0f;
    float lo = big ? -4.37113883e-8f : mid ? -2.18556941e-8f : 0.0f;
    float z = t * t;
    float p = 8.05374449538e-2f;
    p = __builtin_fmaf(p, z, -1.38776856032e-1f);
    p = __builtin_fmaf(p, z, 1.99777106478e-1f);
    p = __builtin_fmaf(p, z, -3.33329491539e-1f);
    float y = hi + __builtin_fmaf(p * z, t, t + lo);
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

/* tan's reduction: x = k pi/2 + r for |x| < 2^20 in double (pi/2 in two
 * parts, FMAs), so that r keeps its digits near the zeros of tan, then r
 * as floats r + lo; the quadrant k mod 4. */
typedef struct {
    float r, lo;
    uint32_t quadrant;
} VmTrigArg;

MF_VEC_INLINE VmTrigArg vmf_trig_reduce(float x)
{
    const double shifter = 0x1.8p52;
    double d = x;
    double k = __builtin_fma(d, 0x1.45f306dc9c883p-1, shifter); /* x 2/pi */
    VmTrigArg a;
    a.quadrant = (uint32_t)vm_bits(k);
    k -= shifter;
    double r = __builtin_fma(-k, 0x1.921fb54442d18p+0, d); /* pi/2 in two parts */
    r = __builtin_fma(-k, 0x1.1a62633145c07p-54, r);
    a.r = (float)r;
    a.lo = (float)(r - (double)a.r);
    return a;
}

/* the same for |x| < VM_TRIG_FLOAT in float: k (< 652) times pi/2 in
 * three floats P1 + P2 + P3: r0 = x - k P1 is exact (k P1 and x are
 * multiples of 2^-23 or finer, and the difference is below 2); -k P2 = m +
 * mlo exactly (an FMA); r0 + m = r + e exactly (2Sum: near a zero of sin
 * or cos r is far below r0 and m, and both roundings matter); lo = e + mlo
 * - k P3 */
#define VM_TRIG_FLOAT 1024.0f
MF_VEC_INLINE VmTrigArg vmf_trig_reduce_float(float x)
{
    const float shifter = 0x1.8p23f, p2 = -0x1.777a5cp-25f;
    float k = __builtin_fmaf(x, 0x1.45f306p-1f, shifter); /* x 2/pi */
    VmTrigArg a;
    a.quadrant = vmf_bits(k) - 0x4b400000u;
    k -= shifter;
    float r0 = __builtin_fmaf(-k, 0x1.921fb6p+0f, x);
    float m = -k * p2, mlo = __builtin_fmaf(-k, p2, -m);
    float r = r0 + m, bb = r - r0, e = (r0 - (r - bb)) + (m - bb);
    a.r = r;
    a.lo = __builtin_fmaf(-k, -0x1.ee59dap-50f, e + mlo);
    return a;
}

/* x's reduction: in float below VM_TRIG_FLOAT; with 'big' (a compile-time
 * choice: blocks without such x skip it) in double above */
MF_VEC_INLINE VmTrigArg vmf_trig_arg(float x, bool big)
{
    VmTrigArg a = vmf_trig_reduce_float(x);
    if (big) {
        VmTrigArg d = vmf_trig_reduce(x);
        bool is_big = !(__builtin_fabsf(x) < VM_TRIG_FLOAT);
        a.r = is_big ? d.r : a.r;
        a.lo = is_big ? d.lo : a.lo;
        a.quadrant = is_big ? d.quadrant : a.quadrant;
    }
    return a;
}

/* sin(r) for |r| <= pi/2 (a little past: the reductions round x / pi
 * first): r + r z P(z) with z = r^2, P of degree 3 fitted to sin's
 * relative error (2^-26; tools/gen_vecmath_sin.py) */
MF_VEC_INLINE float vmf_sin_poly(float r)
{
    float z = r * r;
    float p = 2.605736199e-06f;
    p = __builtin_fmaf(p, z, -1.980958332e-04f);
    p = __builtin_fmaf(p, z, 8.333065547e-03f);
    p = __builtin_fmaf(p, z, -1.666665971e-01f);
    return __builtin_fmaf(r * z, p, r);
}

/* x = (n + h) pi + r with n an integer and |r| <= pi/2 (h = 0 for sin,
 * 1/2 for cos); 'sign' is n's parity in bit 31 */
typedef struct {
    float r;
    uint32_t sign;
} VmHalfTurns;

/* for |x| < VM_TRIG_FLOAT in float, pi in three floats P1 + P2 + P3:
 * x - (n + h) P1 is exact (an FMA; both are multiples of 2^-23 from
 * |x| = 1 up, and the difference is below 2; below, only cos's n + h =
 * +-1/2 can round it, where r is near -+pi/2, far from a zero), the next
 * two FMAs round once each: r is within about 1 ulp of its own */
MF_VEC_INLINE VmHalfTurns vmf_half_turns_float(float x, float h)
{
    const float shifter = 0x1.8p23f, inv_pi = 0x1.45f306p-2f;
    float k = h == 0 ? __builtin_fmaf(x, inv_pi, shifter) : __builtin_fmaf(x, inv_pi, -h) + shifter;
    VmHalfTurns a = {.sign = vmf_bits(k) << 31};
    k = (k - shifter) + h;
    float r = __builtin_fmaf(-k, 0x1.921fb6p+1f, x);
    r = __builtin_fmaf(-k, -0x1.777a5cp-24f, r);
    a.r = __builtin_fmaf(-k, -0x1.ee59dap-49f, r);
    return a;
}

/* the same for |x| < 2^20 in double, pi in two doubles (r rounded once) */
MF_VEC_INLINE VmHalfTurns vmf_half_turns(float x, double h)
{
    const double shifter = 0x1.8p52, inv_pi = 0x1.45f306dc9c883p-2;
    double d = x;
    double k = __builtin_fma(d, inv_pi, -h) + shifter;
    VmHalfTurns a = {.sign = (uint32_t)vm_bits(k) << 31};
    k = (k - shifter) + h;
    double r = __builtin_fma(-k, 0x1.921fb54442d18p+1, d);
    a.r = (float)__builtin_fma(-k, 0x1.1a62633145c07p-53, r);
    return a;
}

/* sin x (h = 0) or cos x = -sin(x - pi/2) (h = 1/2) for |x| < 2^20:
 * (-1)^n sin(r), for cos the sign flipped once more. One polynomial in
 * every lane, where a quarter-turn reduction needs sin's and cos's and a
 * select. With 'big' (a compile-time choice: blocks without such x skip
 * it) the double reduction from VM_TRIG_FLOAT up. */
MF_VEC_INLINE float vmf_sin_half_turns(float x, float h, bool big)
{
    VmHalfTurns a = vmf_half_turns_float(x, h);
    if (big) {
        VmHalfTurns d = vmf_half_turns(x, h);
        bool is_big = !(__builtin_fabsf(x) < VM_TRIG_FLOAT);
        a.r = is_big ? d.r : a.r;
        a.sign = is_big ? d.sign : a.sign;
    }
    uint32_t sign = h == 0 ? a.sign : a.sign ^ 0x80000000u;
    return vmf_from_bits(vmf_bits(vmf_sin_poly(a.r)) ^ sign);
}

/* the lanes the vector code leaves to libm */
MF_VEC_INLINE bool vm_trig_fixup(float x)
{
    return !(__builtin_fabsf(x) < 0x1p20f);
}

/* x, or 0 in the lanes libm redoes (only blocks with 'big' have them) */
MF_VEC_INLINE float vm_trig_safe(float x, bool big)
{
    return big && vm_trig_fixup(x) ? 0.0f : x;
}

MF_VEC_INLINE float vm_sinf(float x, bool big)
{
    float y = vmf_sin_half_turns(vm_trig_safe(x, big), 0.0f, big);
    return x == 0 ? x : y; /* -0 stays -0 */
}

MF_VEC_INLINE float vm_cosf(float x, bool big)
{
    return vmf_sin_half_turns(vm_trig_safe(x, big), 0.5f, big);
}

/* Cephes's tanf polynomial on r (|r| <= pi/4): t = r + r z P(z) with
 * z = r^2, the reduction's low part added as tan' = 1 + t^2 times it; in
 * the odd quadrants -1 / t. One polynomial where sin / cos took two and
 * their corrections (0.069 -> 0.052 ms over 131,072 floats, AVX-512 on an
 * Ice Lake Xeon; 1.95 ulp where that was 2.2). */
MF_VEC_INLINE float vm_tanf(float x, bool big)
{
    VmTrigArg a = vmf_trig_arg(vm_trig_safe(x, big), big);
    float r = a.r, z = r * r;
    float p = 9.38540185543e-3f;
    p = __builtin_fmaf(p, z, 3.11992232697e-3f);
    p = __builtin_fmaf(p, z, 2.44301354525e-2f);
    p = __builtin_fmaf(p, z, 5.34112807005e-2f);
    p = __builtin_fmaf(p, z, 1.33387994085e-1f);
    p = __builtin_fmaf(p, z, 3.33331568548e-1f);
    float t = r + __builtin_fmaf(r * z, p, a.lo);
    t = __builtin_fmaf(a.lo, t * t, t);
    float y = (a.quadrant & 1) != 0 ? -1.0f / t : t;
    return x == 0 ? x : y; /* -0 stays -0 */
}

/* the lanes that need sin's double reduction (NaN too) */
MF_VEC_INLINE bool vm_trig_big(float x)
{
    return !(__builtin_fabsf(x) < VM_TRIG_FLOAT);
}

/* log1p(v + vlo) for v >= 0 (vlo a small correction, |vlo| about v's
 * last place): log(u) + ((v - (u - 1)) + vlo) inv_u with u =
 * 1 + v rounded, as vm_log1pf, but with 'inv_u' (1 / (1 + v) to about
 * 2^-20, which is all the correction needs) from the caller: asinh and
 * acosh have it without a division (asinh 1.13x faster). When 'big'
 * instead log(2 w) (the lanes where asinh and acosh are log(2 |x|) in
 * float; w normal and finite). */
MF_VEC_INLINE float vmf_log1p_or_log2x(float v, float vlo, float inv_u, bool big, float w)
{
    float u = 1.0f + v;
    float c = (v - (u - 1.0f)) + vlo;
    float arg = big ? w : u;
    return vmf_log_scaled(arg, big ? -1.0f : 0.0f) + (big ? 0.0f : c * inv_u);
}

/* asinh in float lanes: log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x|
 * below 2^12 (no cancellation: the sum's rounding kept in 'lo'), log(2a)
 * above (asinh(a) - log(2a) = 1 / (4 a^2) is below 2^-26 there); the sign
 * of x. Without 'full' for 2^-12 <= |x| < 2^12 only (the kernels' blocks
 * without other lanes): the selects for the other ranges left out, the
 * same bits. */
#define VM_ASINH_BIG 0x1p12f
/* below it asinh and atanh are x -+ x^3 / 6 or 3 (the next terms are
 * below 2^-26 of x), where log1p's roundings near 1 would cost 2 ulp */
#define VM_TINY 0x1p-12f
MF_VEC_INLINE float vm_asinhf(float x, bool full)
{
    float a = __builtin_fabsf(x);
    bool big = full && !(a < VM_ASINH_BIG);
    float am = big ? 1.0f : a; /* no overflow in a^2 */
    float z = am * am, s = __builtin_sqrtf(1.0f + z);
    float w = z / (1.0f + s);
    float v = am + w, lo = w - (v - am); /* w <= am: exact */
    /* 1 + v = am + s, whose inverse is s - am (their product is s^2 - am^2
     * = 1): s's rounding costs it 2^-23 am^2 relative, where the correction
     * it scales is 2^-24 of 1 + v */
    float y = vmf_log1p_or_log2x(v, lo, s - am, big, vmf_abs_min(a, 0x1.fffffep127f));
    if (!full)
        return __builtin_copysignf(y, x);
    y = a < VM_TINY ? __builtin_fmaf(a * a, a * (-1.0f / 6), a) : y;
    y = a == __builtin_inff() ? a : y;
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

/* the lanes asinh's short body leaves out (NaN too) */
MF_VEC_INLINE bool vm_asinh_full(float x)
{
    float a = __builtin_fabsf(x);
    return !(a >= VM_TINY && a < VM_ASINH_BIG);
}

/* acosh in float lanes: with t = x - 1 (exact below 2^12),
 * log1p(t + sqrt(t (t + 2))) (t (t + 2) by one FMA, the sum's rounding kept)
 * below 2^12, log(2x) above (the difference is below 2^-26); NaN below 1.
 * Without 'full' for 1 <= x < 2^12 only (as asinh) */
MF_VEC_INLINE float vm_acoshf(float x, bool full)
{
    bool big = full && !(x < VM_ASINH_BIG);
    float t = !full || (x > 1.0f && !big) ? x - 1.0f : 0.0f;
    float s = __builtin_sqrtf(__builtin_fmaf(t, t, 2.0f * t));
    float v = t + s, lo = t - (v - s); /* t <= s: exact */
    /* 1 + v = x + s, whose inverse is x - s (as asinh's) */
    float y = vmf_log1p_or_log2x(v, lo, (1.0f + t) - s, big, vmf_abs_min(x, 0x1.fffffep127f));
    if (!full)
        return y;
    y = x == __builtin_inff() ? x : y;
    y = x < 1.0f ? __builtin_nanf("") : y;
    return vm_nan_through(x, y);
}

MF_VEC_INLINE bool vm_acosh_full(float x)
{
    return !(x >= 1.0f && x < VM_ASINH_BIG);
}

/* atanh in float lanes: log1p(2a / (1 - a)) / 2 for a = |x| < 1, the
 * quotient carried as q + qlo: 1 - a = d + dlo exactly, q = 2a (1 / d)
 * (the remainder 2a - q d exact by an FMA), qlo = (2a - q (d + dlo)) / d;
 * 1 at a = 1 makes inf, NaN above; the sign of x. Without 'full' for
 * 2^-12 <= |x| < 1 only (as asinh). One division of the two (1 / (d p)
 * with p = 1 + a gives both inverses), or none (Newton's reciprocal),
 * made it no faster: the kernel is bound by its other operations. */
MF_VEC_INLINE float vm_atanhf(float x, bool full)
{
    float a = __builtin_fabsf(x);
    float ac = !full || a < 1.0f ? a : 0.0f;
    float d = 1.0f - ac, dlo = (1.0f - d) - ac;
    float n = 2.0f * ac, r = 1.0f / d;
    float q = n * r;
    float qlo = __builtin_fmaf(-q, dlo, __builtin_fmaf(-q, d, n)) * r;
    float y = 0.5f * vmf_log1p_or_log2x(q, qlo, 1.0f / (1.0f + q), false, 1.0f);
    if (!full)
        return __builtin_copysignf(y, x);
    y = a < VM_TINY ? __builtin_fmaf(a * a, a * (1.0f / 3), a) : y;
    y = a == 1.0f ? __builtin_inff() : y;
    y = a > 1.0f ? __builtin_nanf("") : y;
    return vm_nan_through(x, __builtin_copysignf(y, x));
}

MF_VEC_INLINE bool vm_atanh_full(float x)
{
    float a = __builtin_fabsf(x);
    return !(a >= VM_TINY && a < 1.0f);
}

#define MF_VEC_LOOP(name, fn)                                                       \
    static void name(const float *x, float *y, int64_t n)                          \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            y[i] = fn(x[i]);                                                       \
    }

/* elements per block of the kernels that check a block before they run it */
enum { VM_BLOCK = 32 };

/* pow's pairs the vector code leaves to libm */
MF_VEC_INLINE bool vm_pow_fixup(float a, float b)
{
    float m = __builtin_fabsf(a);
    bool integer = __builtin_rintf(b) == b;
    return !(m >= 0x1p-126f && m < __builtin_inff() && __builtin_fabsf(b) < __builtin_inff() &&
             (a > 0 || integer));
}

/* the exponents b log|a| whose e^ is not a normal float (NaN too): libm's */
MF_VEC_INLINE bool vm_pow_edge(float th)
{
    return !(th >= -87.33f && th <= 88.37f);
}

/* a float pair hi + lo */
typedef struct {
    float hi, lo;
} VmF2;

/* pow's logarithm: x = 2^e m with m in [1 - 2^-6, 2 - 2^-5), cut by the
 * top four bits of m's offset field into 16 intervals around
 * c = 1 + i/16 (i = 0: [1 - 2^-6, 1 + 2^-5), around 1, so that log x near 1
 * keeps its relative accuracy), and log(c) = hi + lo, hi on a grid of
 * 2^-17 (tools/gen_vecmath_powlog.py) */
#define VM_LOG_OFF 0x3f7c0000u /* 1 - 2^-6 */
/* ln2 = hi + lo, hi on a grid of 2^-17 (e hi + log(c)_hi is exact), so
 * that lo is below 2^-19 and its rounding (2^-43) is far below what the
 * sum e ln2 + log(m) keeps where it nearly cancels (x just below 1) */
#define VM_LN2_HI17 0x1.62e4p-1f
#define VM_LN2_LO17 0x1.7f7d1cp-20f
static const float vm_log_c[16] = {
    0x1p+0f, 0x1.1p+0f, 0x1.2p+0f, 0x1.3p+0f,
    0x1.4p+0f, 0x1.5p+0f, 0x1.6p+0f, 0x1.7p+0f,
    0x1.8p+0f, 0x1.9p+0f, 0x1.ap+0f, 0x1.bp+0f,
    0x1.cp+0f, 0x1.dp+0f, 0x1.ep+0f, 0x1.fp+0f,
};
static const float vm_log_c_hi[16] = {
    0.0f, 0x1.f0ap-5f, 0x1.e27p-4f, 0x1.5ff4p-3f,
    0x1.c9p-3f, 0x1.1676p-2f, 0x1.4618p-2f, 0x1.739ep-2f,
    0x1.9f32p-2f, 0x1.c9p-2f, 0x1.f128p-2f, 0x1.0be7p-1f,
    0x1.1e86p-1f, 0x1.307dp-1f, 0x1.41d9p-1f, 0x1.52a3p-1f,
};
static const float vm_log_c_lo[16] = {
    0.0f, 0x1.86008cp-20f, 0x1.db8abcp-22f, -0x1.f1eb0ep-20f,
    -0x1.070cacp-20f, -0x1.aa2a2cp-21f, 0x1.78438cp-19f, -0x1.012886p-19f,
    0x1.f65fccp-21f, -0x1.070cacp-19f, 0x1.ebf5ep-19f, 0x1.721296p-20f,
    -0x1.431f7ep-22f, 0x1.ccd3c4p-19f, -0x1.7b98d6p-25f, -0x1.6cd21ep-20f,
};

/* log(x) as hi + lo within about 2^-34 relative (2^-34.6 over all normal
 * floats) for a normal finite x > 0
 * (pow's logarithm in float lanes): with the interval's c (m - c and 2c
 * exact), log(m) = log(c) + 2 atanh(s) with s = (m - c) / (m + c),
 * |s| < 0.0154, carried as sh + sl (the quotient's remainder by an FMA),
 * 2 atanh(s) = 2s + s^3 (2/3 + 2/5 s^2) (truncation 2^-38 relative);
 * e ln2_hi + log(c)_hi is exact (on a grid of 2^-17, below 2^7), the low
 * parts are below 2^-18. vm_pow_exponents16 computes the same with
 * AVX-512 permutes for the table look-ups: keep the two in step. */
MF_VEC_INLINE VmF2 vmf_log_ext(float x)
{
    uint32_t u = vmf_bits(x) - VM_LOG_OFF;
    float e = (float)((int32_t)u >> 23);
    float m = vmf_from_bits((u & 0x007fffffu) + VM_LOG_OFF);
    uint32_t i = (u >> 19) & 15;
    float c = vm_log_c[i], lch = vm_log_c_hi[i], lcl = vm_log_c_lo[i];
    float n = m - c;                                   /* exact */
    float dh = 2.0f * c + n, dl = n - (dh - 2.0f * c); /* m + c = dh + dl exactly */
    float r = 1.0f / dh;
    float sh = n * r;
    float sl = __builtin_fmaf(-sh, dl, __builtin_fmaf(-sh, dh, n)) * r;
    float z = sh * sh;
    float t = sh * z * __builtin_fmaf(0.4f, z, 2.0f / 3);
    float p = __builtin_fmaf(e, VM_LN2_HI17, lch); /* exact */
    float q = __builtin_fmaf(e, VM_LN2_LO17, lcl) + __builtin_fmaf(2.0f, sl, t);
    /* |p| > 0.058 > |2 sh| unless p is 0 (and |p| > 0.031 > 0.017 where
     * e is -1 and c near 2): the sum's error is exact; lo is that error
     * plus the low terms (a few units of hi's last place at most, which
     * pow's b lo keeps) */
    VmF2 l;
    l.hi = p + 2.0f * sh;
    l.lo = (2.0f * sh - (l.hi - p)) + q;
    return l;
}

/* pow's exponent b log|a| = th + tl in float lanes (the product's rounding
 * by an FMA). The lanes vm_pow_fixup or vm_pow_edge pick get some value
 * (libm redoes them). */
MF_VEC_INLINE void vm_pow_exponent(float a, float b, float *th, float *tl)
{
    VmF2 l = vmf_log_ext(__builtin_fabsf(a));
    *th = b * l.hi;
    *tl = __builtin_fmaf(b, l.hi, -*th) + b * l.lo;
}

/* vm_pow_exponents' flags */
enum { VM_POW_ANY = 1, VM_POW_NEG = 2 };

#if defined(MF_VEC_AVX512) && defined(__AVX512F__)
#include <immintrin.h>

/* vm_pow_exponent on 16 lanes (the first 'm' of them: masked loads and
 * stores) with the table look-ups as permutes of registers (GCC makes
 * gathers of vmf_log_ext's): the same operations in the same order, or
 * ones that round the same (2c + n as one FMA: 2c is exact; dh - 2c is
 * exact), so the bits are those of the other paths */
MF_VEC_INLINE uint32_t vm_pow_exponents16(const float *a, const float *b, int sb, int64_t m,
                                          float *th, float *tl)
{
    __mmask16 k = m >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << m) - 1);
    __m512 va = _mm512_maskz_loadu_ps(k, a);
    __m512 vb = sb ? _mm512_maskz_loadu_ps(k, b) : _mm512_set1_ps(b[0]);
    const __m512i off = _mm512_set1_epi32((int)VM_LOG_OFF);
    const __m512 two = _mm512_set1_ps(2.0f);
    __m512i u = _mm512_sub_epi32(_mm512_castps_si512(_mm512_abs_ps(va)), off);
    __m512 e = _mm512_cvtepi32_ps(_mm512_srai_epi32(u, 23));
    __m512 mm = _mm512_castsi512_ps(
        _mm512_add_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x007fffff)), off));
    __m512i i = _mm512_srli_epi32(u, 19); /* the permutes read the low 4 bits */
    __m512 c = _mm512_permutexvar_ps(i, _mm512_loadu_ps(vm_log_c));
    __m512 lch = _mm512_permutexvar_ps(i, _mm512_loadu_ps(vm_log_c_hi));
    __m512 lcl = _mm512_permutexvar_ps(i, _mm512_loadu_ps(vm_log_c_lo));
    __m512 n = _mm512_sub_ps(mm, c);
    __m512 dh = _mm512_fmadd_ps(two, c, n);
    __m512 dl = _mm512_sub_ps(n, _mm512_fnmadd_ps(two, c, dh));
    __m512 r = _mm512_div_ps(_mm512_set1_ps(1.0f), dh);
    __m512 sh = _mm512_mul_ps(n, r);
    __m512 sl = _mm512_mul_ps(_mm512_fnmadd_ps(sh, dl, _mm512_fnmadd_ps(sh, dh, n)), r);
    __m512 z = _mm512_mul_ps(sh, sh);
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(sh, z),
                             _mm512_fmadd_ps(_mm512_set1_ps(0.4f), z,
                                             _mm512_set1_ps(2.0f / 3)));
    __m512 p = _mm512_fmadd_ps(e, _mm512_set1_ps(VM_LN2_HI17), lch);
    __m512 q = _mm512_add_ps(_mm512_fmadd_ps(e, _mm512_set1_ps(VM_LN2_LO17), lcl),
                             _mm512_fmadd_ps(two, sl, t));
    __m512 s2 = _mm512_add_ps(sh, sh);
    __m512 hi = _mm512_add_ps(p, s2);
    __m512 lo = _mm512_add_ps(_mm512_sub_ps(s2, _mm512_sub_ps(hi, p)), q);
    __m512 vth = _mm512_mul_ps(vb, hi);
    __m512 vtl = _mm512_add_ps(_mm512_fmsub_ps(vb, hi, vth), _mm512_mul_ps(vb, lo));
    _mm512_mask_storeu_ps(th, k, vth);
    _mm512_mask_storeu_ps(tl, k, vtl);
    /* vm_pow_fixup by classes: a NaN, zero, inf or subnormal (0xbf), b NaN
     * or inf (0x99), a negative (0x40: finite, nonzero) and b not an
     * integer; vm_pow_edge; a's sign bits for VM_POW_NEG */
    __mmask16 fix = _mm512_fpclass_ps_mask(va, 0xbf) | _mm512_fpclass_ps_mask(vb, 0x99) |
                    (_mm512_fpclass_ps_mask(va, 0x40) &
                     _mm512_cmp_ps_mask(_mm512_roundscale_ps(vb, _MM_FROUND_TO_NEAREST_INT), vb,
                                        _CMP_NEQ_UQ));
    __mmask16 edge = _mm512_cmp_ps_mask(vth, _mm512_set1_ps(-87.33f), _CMP_NGE_UQ) |
                     _mm512_cmp_ps_mask(vth, _mm512_set1_ps(88.37f), _CMP_NLE_UQ);
    __mmask16 neg = _mm512_movepi32_mask(_mm512_castps_si512(va));
    return (uint32_t)((fix | edge) & k) | (uint32_t)(neg & k) << 16;
}
#endif

/* th[i] + tl[i] = b[i * sb] log|a[i]| for i < m (m <= VM_POW_BLOCK);
 * returns VM_POW_ANY when some pair is vm_pow_fixup's or vm_pow_edge's,
 * VM_POW_NEG when some a has its sign bit set */
MF_VEC_INLINE int vm_pow_exponents(const float *restrict a, const float *restrict b, int sb,
                                   int64_t m, float *restrict th, float *restrict tl)
{
    int flags = 0;
#if defined(MF_VEC_AVX512) && defined(__AVX512F__)
    uint32_t masks = 0;
    for (int64_t i = 0; i < m; i += 16)
        masks |= vm_pow_exponents16(a + i, b + i * sb, sb, m - i, th + i, tl + i);
    flags = (masks & 0xffff ? VM_POW_ANY : 0) | (masks >> 16 ? VM_POW_NEG : 0);
#else
    int any = 0;
    uint32_t neg = 0;
    for (int64_t i = 0; i < m; i++) {
        vm_pow_exponent(a[i], b[i * sb], &th[i], &tl[i]);
        any |= vm_pow_fixup(a[i], b[i * sb]) | vm_pow_edge(th[i]);
        neg |= vmf_bits(a[i]);
    }
    flags = (any ? VM_POW_ANY : 0) | (neg >> 31 ? VM_POW_NEG : 0);
#endif
    return flags;
}

/* e^(th + tl) as exp's float kernel computes it, for a normal result (one
 * scale factor); with 'neg' (the block has bases below 0; b is an integer
 * there) the sign by b's parity for a < 0 */
MF_VEC_INLINE float vm_pow_finish(float th, float tl, float a, float b, bool neg)
{
    float y = vmf_exp_normal(th, tl);
    if (!neg)
        return y;
    float half = 0.5f * b;
    bool odd = __builtin_rintf(half) != half;
    return a < 0 && odd ? -y : y;
}

/* y[i] = a[i]^b[i * sb] for i < m (m <= VM_POW_BLOCK): the exponents
 * first, then their exponentials (two short dependency chains overlap
 * better than one long one), then libm's powf for the pairs vm_pow_fixup
 * picks (zeros, subnormal bases, inf, NaN, negative bases to fractions)
 * and those whose result is not a normal float (vm_pow_edge) */
enum { VM_POW_BLOCK = 64 };
MF_VEC_INLINE void vm_pow_block(const float *restrict a, const float *restrict b, int sb,
                                float *restrict y, int64_t m)
{
    float th[VM_POW_BLOCK], tl[VM_POW_BLOCK];
    int flags = vm_pow_exponents(a, b, sb, m, th, tl);
    if (flags & VM_POW_NEG)
        for (int64_t i = 0; i < m; i++)
            y[i] = vm_pow_finish(th[i], tl[i], a[i], b[i * sb], true);
    else
        for (int64_t i = 0; i < m; i++)
            y[i] = vm_pow_finish(th[i], tl[i], a[i], b[i * sb], false);
    for (int64_t i = 0; (flags & VM_POW_ANY) && i < m; i++)
        if (vm_pow_fixup(a[i], b[i * sb]) || vm_pow_edge(th[i]))
            y[i] = powf(a[i], b[i * sb]);
}

/* y[i] = a[i]^b[i * SB] ('SB' 1: b contiguous; 0: one exponent) by blocks
 * of VM_POW_BLOCK (whole blocks with a constant length: no loop tails) */
#define MF_VEC_POW_LOOP(name, SB)                                                   \
    static void name(const float *restrict a, const float *restrict b, float *restrict y, \
                     int64_t n)                                                    \
    {                                                                              \
        int64_t c = 0;                                                             \
        for (; c + VM_POW_BLOCK <= n; c += VM_POW_BLOCK)                           \
            vm_pow_block(a + c, b + c * SB, SB, y + c, VM_POW_BLOCK);              \
        if (c < n)                                                                 \
            vm_pow_block(a + c, b + c * SB, SB, y + c, n - c);                     \
    }

MF_VEC_POW_LOOP(k_pow, 1)
MF_VEC_POW_LOOP(k_pow_scalar, 0)

/* Kernels by blocks of VM_BLOCK elements: a block where no element needs
 * 'full' (the usual case) runs fn(x, false), the others fn(x, true) and
 * then libm's 'lib' on the lanes 'fix' picks. fn(x, false) gives the bits
 * of fn(x, true) for the elements it is used on, so a result does not
 * depend on which block an element falls in. */

/* whether one of 16 flags (0 or -1) is set: on AVX-512 one test into a mask
 * register, where GCC's reduction of a vector of flags takes eight steps */
_Static_assert(VM_BLOCK == 32, "VM_BLOCK_ANY folds a block into 16 flags");
MF_VEC_INLINE bool vm_any16(const int32_t *f)
{
#if defined(MF_VEC_AVX512) && defined(__AVX512F__)
    __m512i v = _mm512_loadu_si512(f);
    return _mm512_test_epi32_mask(v, v) != 0;
#else
    int32_t any = 0;
    for (int i = 0; i < 16; i++)
        any |= f[i];
    return any != 0;
#endif
}

/* any = whether pred(x[i]) holds for some i < m (m <= VM_BLOCK): a whole
 * block as 16 flags and one vm_any16 (the kernels 3-11% faster than with
 * GCC's reduction of 'any |= pred(x[i])') */
#define VM_BLOCK_ANY(any, x, m, pred)                                               \
    do {                                                                           \
        if ((m) == VM_BLOCK) {                                                     \
            int32_t flags_[VM_BLOCK / 2];                                          \
            for (int64_t i_ = 0; i_ < VM_BLOCK / 2; i_++)                          \
                flags_[i_] = -(int32_t)(pred((x)[i_]) | pred((x)[i_ + 16]));       \
            (any) = vm_any16(flags_);                                              \
        } else {                                                                   \
            (any) = 0;                                                             \
            for (int64_t i_ = 0; i_ < (m); i_++)                                   \
                (any) |= pred((x)[i_]);                                            \
        }                                                                          \
    } while (0)

#define MF_VEC_LOOP_BLOCKS(name, fn, full, fix, lib)                                \
    MF_VEC_INLINE void name##_block(const float *restrict x, float *restrict y,     \
                                    int64_t m)                                     \
    {                                                                              \
        int slow;                                                                  \
        VM_BLOCK_ANY(slow, x, m, full);                                            \
        if (!slow && m == VM_BLOCK) { /* two halves interleaved: more to overlap */ \
            for (int64_t i = 0; i < VM_BLOCK / 2; i++) {                           \
                y[i] = fn(x[i], false);                                            \
                y[i + VM_BLOCK / 2] = fn(x[i + VM_BLOCK / 2], false);              \
            }                                                                      \
            return;                                                                \
        }                                                                          \
        if (!slow) {                                                               \
            for (int64_t i = 0; i < m; i++)                                        \
                y[i] = fn(x[i], false);                                            \
            return;                                                                \
        }                                                                          \
        for (int64_t i = 0; i < m; i++)                                            \
            y[i] = fn(x[i], true);                                                 \
        for (int64_t i = 0; i < m; i++)                                            \
            if (fix(x[i]))                                                         \
                y[i] = lib(x[i]);                                                  \
    }                                                                              \
    static void name(const float *restrict x, float *restrict y, int64_t n)        \
    {                                                                              \
        int64_t b = 0;                                                             \
        for (; b + VM_BLOCK <= n; b += VM_BLOCK)                                   \
            name##_block(x + b, y + b, VM_BLOCK);                                  \
        name##_block(x + b, y + b, n - b);                                         \
    }

MF_VEC_LOOP_BLOCKS(k_sin, vm_sinf, vm_trig_big, vm_trig_fixup, sinf)
MF_VEC_LOOP_BLOCKS(k_cos, vm_cosf, vm_trig_big, vm_trig_fixup, cosf)
MF_VEC_LOOP_BLOCKS(k_tan, vm_tanf, vm_trig_big, vm_trig_fixup, tanf)
MF_VEC_LOOP_BLOCKS(k_gelu, vm_geluf, vm_gelu_far, vm_never, expf)
MF_VEC_LOOP(k_atan, vm_atanf)
MF_VEC_LOOP_BLOCKS(k_asinh, vm_asinhf, vm_asinh_full, vm_never, asinhf)
MF_VEC_LOOP_BLOCKS(k_atanh, vm_atanhf, vm_atanh_full, vm_never, atanhf)
MF_VEC_LOOP_BLOCKS(k_exp, vm_expf, vm_exp_full, vm_never, expf)
MF_VEC_LOOP(k_expm1, vm_expm1f)
MF_VEC_LOOP_BLOCKS(k_log, vm_logf, vm_log_full, vm_never, logf)
MF_VEC_LOOP_BLOCKS(k_log1p, vm_log1pf, vm_log1p_full, vm_never, log1pf)
MF_VEC_LOOP(k_tanh, vm_tanhf)
MF_VEC_LOOP_BLOCKS(k_sigmoid, vm_sigmoidf, vm_sigmoid_full, vm_never, expf)
MF_VEC_LOOP(k_softplus, vm_softplusf)
MF_VEC_LOOP(k_erf, vm_erff)
MF_VEC_LOOP(k_erfc, vm_erfcf)
MF_VEC_LOOP_BLOCKS(k_acosh, vm_acoshf, vm_acosh_full, vm_never, acoshf)
MF_VEC_LOOP(k_gelu_tanh, vm_gelu_tanhf)
MF_VEC_LOOP_BLOCKS(k_silu, vm_siluf, vm_silu_full, vm_never, expf)

#define MF_VEC_GRAD_LOOP(name, fn)                                                  \
    static void name(const float *dy, const float *x, float *dx, int64_t n)        \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            dx[i] = fn(dy[i], x[i]);                                               \
    }

MF_VEC_GRAD_LOOP(k_gelu_tanh_grad, vm_gelu_tanh_gradf)

/* gelu's gradient by blocks, as MF_VEC_LOOP_BLOCKS runs gelu */
MF_VEC_INLINE void k_gelu_grad_block(const float *restrict dy, const float *restrict x,
                                     float *restrict dx, int64_t m)
{
    int far;
    VM_BLOCK_ANY(far, x, m, vm_gelu_far);
    if (far)
        for (int64_t i = 0; i < m; i++)
            dx[i] = vm_gelu_gradf(dy[i], x[i], true);
    else
        for (int64_t i = 0; i < m; i++)
            dx[i] = vm_gelu_gradf(dy[i], x[i], false);
}

static void k_gelu_grad(const float *restrict dy, const float *restrict x, float *restrict dx,
                        int64_t n)
{
    int64_t b = 0;
    for (; b + VM_BLOCK <= n; b += VM_BLOCK)
        k_gelu_grad_block(dy + b, x + b, dx + b, VM_BLOCK);
    k_gelu_grad_block(dy + b, x + b, dx + b, n - b);
}
MF_VEC_GRAD_LOOP(k_silu_grad, vm_silu_gradf)

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
    [MF_VEC_ASINH] = k_asinh, [MF_VEC_ATANH] = k_atanh, [MF_VEC_ERFC] = k_erfc,
    [MF_VEC_ACOSH] = k_acosh, [MF_VEC_GELU] = k_gelu, [MF_VEC_GELU_TANH] = k_gelu_tanh,
    [MF_VEC_SILU] = k_silu,
};

extern const MfVecGradKernel MF_VEC_JOIN(MF_VEC_TABLE, _grad)[MF_VEC_GRAD_COUNT];
const MfVecGradKernel MF_VEC_JOIN(MF_VEC_TABLE, _grad)[MF_VEC_GRAD_COUNT] = {
    [MF_VEC_GELU_GRAD] = k_gelu_grad, [MF_VEC_GELU_TANH_GRAD] = k_gelu_tanh_grad,
    [MF_VEC_SILU_GRAD] = k_silu_grad,
};
