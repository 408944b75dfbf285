/* vecmath_f64_kernels.h — float64 kernels of vecmath.h (exp, expm1, log,
 * log1p, softplus, tanh, sigmoid) in double lanes, 4 per AVX2 vector and 8 per AVX-512;
 * included after vecmath_kernels.h (whose helpers it uses) by the same
 * three files, so each instruction set gets its own table.
 *
 * libm computes these one element at a time; here the loops have no
 * branches (both sides of a choice computed, one selected) so GCC
 * vectorises them. Accuracy against long double libm, checked by
 * tests/unit/test_vecmath_f64.c (the bound it asserts, the maximum it saw):
 *   exp: x = k ln2 + r, |r| <= ln2 / 2, r kept as r + rlo; expm1(r) by its
 *       Taylor series to r^13 (truncation under 5e-18); 2^k as two factors
 *       so that k = 1024 and subnormal results need no branch. 1 ulp.
 *   expm1: |x| < ln2: its Taylor series to x^17; else the same reduction
 *       and 2^k expm1(r) + (2^k - 1) in one FMA (no cancellation there:
 *       r >= 0 for k = 1; 2^k - 1 exact to k = 53, past it the 1 moves into
 *       expm1(r) as 2^-k); e^x - 1 as exp past x = 700. 1 ulp.
 *   log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1 exact, s = f /
 *       (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with R the
 *       series 2 s^2/3 + 2 s^4/5 + ... to s^20; e ln2 in two parts (the high
 *       part's product exact). Subnormals scaled by 2^54 first. 1 ulp.
 *   log1p: log(u) + (x - (u - 1)) / u with u = 1 + x rounded (the
 *       correction restores what rounding u lost). 2 ulp.
 *   softplus: max(x, 0) + log1p(e^-|x|). 2.5 ulp.
 *   tanh: |x| < 1: -t / (2 + t) with t = expm1(-2|x|); else (1 - e) / (1 + e)
 *       with e = e^(-2|x|) (one reduction for both); the sign of x. 2.5 ulp (expm1's error is
 *       amplified by 2 / (2 + t)).
 *   sigmoid: 1 / (1 + e) for x >= 0, e / (1 + e) below, e = e^-|x|. 2.5 ulp.
 * The special values (+-0, +-inf, NaN, the overflow and underflow edges)
 * are libm's. */
#ifndef MF_VEC_TABLE
#error "vecmath_f64_kernels.h is included by vecmath_{avx512,avx2,scalar}.c"
#endif

/* x limited to [lo, hi] (NaN becomes hi: callers put NaN back) */
MF_VEC_INLINE double vm_clamp64(double x, double lo, double hi)
{
    x = x < hi ? x : hi;
    return x > lo ? x : lo;
}

/* 2^k for an integer-valued k in [-1022, 1023] */
MF_VEC_INLINE double vm_pow2_64(double k)
{
    const double shifter = 0x1.8p52;
    return vm_from_bits((vm_bits(k + shifter) + 1023) << 52);
}

/* expm1(r) for x = k ln2 + r, k in *k; x in [-746, 710] */
MF_VEC_INLINE double vm_expm1_reduced64(double x, double *k)
{
    const double shifter = 0x1.8p52; /* adding it rounds to an integer */
    double kk = __builtin_fma(x, 0x1.71547652b82fep0, shifter) - shifter;
    double rhi = __builtin_fma(kk, -0x1.62e42fefa3800p-1, x); /* exact: ln2's top bits */
    double c = kk * -0x1.ef35793c76730p-45;
    double r = rhi + c, rlo = (rhi - r) + c;
    double p = 1.0 / 6227020800; /* 1/13! */
    p = __builtin_fma(p, r, 1.0 / 479001600);
    p = __builtin_fma(p, r, 1.0 / 39916800);
    p = __builtin_fma(p, r, 1.0 / 3628800);
    p = __builtin_fma(p, r, 1.0 / 362880);
    p = __builtin_fma(p, r, 1.0 / 40320);
    p = __builtin_fma(p, r, 1.0 / 5040);
    p = __builtin_fma(p, r, 1.0 / 720);
    p = __builtin_fma(p, r, 1.0 / 120);
    p = __builtin_fma(p, r, 1.0 / 24);
    p = __builtin_fma(p, r, 1.0 / 6);
    p = __builtin_fma(p, r, 0.5);
    *k = kk;
    /* e^(r + rlo) - 1 = expm1(r) + rlo e^r, e^r ~ 1 + r at rlo's scale */
    return r + __builtin_fma(r * r, p, __builtin_fma(rlo, r, rlo));
}

MF_VEC_INLINE double vm_exp64(double x)
{
    double k, p = vm_expm1_reduced64(vm_clamp64(x, -746.0, 710.0), &k);
    /* 2^k = 2^ka 2^kb: k = 1024 (near DBL_MAX) and k < -1022 (subnormal
     * results, rounded once by the last product) need no branch */
    const double shifter = 0x1.8p52;
    double ka = (k * 0.5 + shifter) - shifter, kb = k - ka;
    double y = __builtin_fma(p, vm_pow2_64(ka), vm_pow2_64(ka)) * vm_pow2_64(kb);
    return x != x ? x : y;
}

/* expm1(x) for |x| < ln2 by its Taylor series to x^17 (truncation under
 * 6e-18 relative), where 2^k expm1(r) + 2^k - 1 would cancel (k = 1, r < 0) */
MF_VEC_INLINE double vm_expm1_small64(double x)
{
    double p = 1.0 / 355687428096000;
    p = __builtin_fma(p, x, 1.0 / 20922789888000);
    p = __builtin_fma(p, x, 1.0 / 1307674368000);
    p = __builtin_fma(p, x, 1.0 / 87178291200);
    p = __builtin_fma(p, x, 1.0 / 6227020800);
    p = __builtin_fma(p, x, 1.0 / 479001600);
    p = __builtin_fma(p, x, 1.0 / 39916800);
    p = __builtin_fma(p, x, 1.0 / 3628800);
    p = __builtin_fma(p, x, 1.0 / 362880);
    p = __builtin_fma(p, x, 1.0 / 40320);
    p = __builtin_fma(p, x, 1.0 / 5040);
    p = __builtin_fma(p, x, 1.0 / 720);
    p = __builtin_fma(p, x, 1.0 / 120);
    p = __builtin_fma(p, x, 1.0 / 24);
    p = __builtin_fma(p, x, 1.0 / 6);
    p = __builtin_fma(p, x, 0.5);
    return __builtin_fma(x * x, p, x);
}

MF_VEC_INLINE double vm_expm1_64(double x)
{
    /* below -60, e^x is under half an ulp of -1 */
    double k, p = vm_expm1_reduced64(vm_clamp64(x, -60.0, 710.0), &k);
    /* 2^k (p + 1) - 1: s - 1 is exact up to k = 53 */
    double s = vm_pow2_64(k < 53.0 ? k : 53.0);
    double y = __builtin_fma(s, p, s - 1.0);
    /* past it the 1 moves into p as 2^-k (exact or far below the result;
     * nothing past k = 100), and 2^k is two factors (k reaches 1024) */
    const double shifter = 0x1.8p52;
    double ka = (k * 0.5 + shifter) - shifter, kb = k - ka;
    double q = p - vm_pow2_64(k < 100.0 ? -k : -100.0);
    double big = __builtin_fma(vm_pow2_64(ka), q, vm_pow2_64(ka)) * vm_pow2_64(kb);
    y = k > 53.0 ? big : y;
    y = fabs(x) < 0x1.62e42fefa39efp-1 ? vm_expm1_small64(x) : y;
    return x != x || x == 0 ? x : y; /* -0 stays -0 */
}

/* log(x) for any x: NaN below 0, -inf at 0, inf at inf, NaN for NaN */
MF_VEC_INLINE double vm_log64(double x)
{
    const uint64_t sqrt_half = 0x3fe6a09e667f3bcdu;
    bool tiny = x < 0x1p-1022;
    double xs = tiny ? x * 0x1p54 : x; /* subnormals made normal */
    uint64_t u = vm_bits(xs) - sqrt_half;
    double m = vm_from_bits((u & 0x000fffffffffffffu) + sqrt_half);
    /* the exponent field relative to sqrt(1/2) as a double (see vm_log) */
    double e = vm_from_bits(0x4330000000000000u | ((u >> 52) ^ 0x800u)) - (0x1p52 + 2048.0);
    e = tiny ? e - 54.0 : e;
    double f = m - 1.0, s = f / (2.0 + f), z = s * s;
    double p = 2.0 / 21;
    p = __builtin_fma(p, z, 2.0 / 19);
    p = __builtin_fma(p, z, 2.0 / 17);
    p = __builtin_fma(p, z, 2.0 / 15);
    p = __builtin_fma(p, z, 2.0 / 13);
    p = __builtin_fma(p, z, 2.0 / 11);
    p = __builtin_fma(p, z, 2.0 / 9);
    p = __builtin_fma(p, z, 2.0 / 7);
    p = __builtin_fma(p, z, 2.0 / 5);
    p = __builtin_fma(p, z, 2.0 / 3);
    double big_r = z * p, hfsq = 0.5 * f * f;
    const double ln2_hi = 0x1.62e42feep-1, ln2_lo = 0x1.a39ef35793c76p-33;
    double y = e * ln2_hi - ((hfsq - __builtin_fma(s, hfsq + big_r, e * ln2_lo)) - f);
    y = x == 0 ? -HUGE_VAL : y;
    y = x < 0 ? (double)NAN : y;
    y = x == HUGE_VAL ? x : y;
    return x != x ? x : y;
}

/* log(1 + x): log(u) for u = 1 + x rounded, plus the first-order
 * correction (x - (u - 1)) / u for what the rounding of u lost */
MF_VEC_INLINE double vm_log1p64(double x)
{
    double u = 1.0 + x;
    double y = vm_log64(u) + (x - (u - 1.0)) / u;
    y = x == -1.0 ? -HUGE_VAL : y;
    y = x == HUGE_VAL ? x : y;
    return x != x || x == 0 ? x : y; /* -0 stays -0 */
}

/* log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|) */
MF_VEC_INLINE double vm_softplus64(double x)
{
    double y = (x > 0 ? x : 0.0) + vm_log1p64(vm_exp64(-fabs(x)));
    return x != x ? x : y;
}

MF_VEC_INLINE double vm_tanh64(double x)
{
    /* one reduction of -2|x| gives both e = e^(-2|x|) and t = e - 1 */
    double a = fabs(x), z = vm_clamp64(-2.0 * a, -60.0, 0.0);
    double k, p = vm_expm1_reduced64(z, &k), s = vm_pow2_64(k);
    double t = a < 0x1.62e42fefa39efp-2 ? vm_expm1_small64(z) : __builtin_fma(s, p, s - 1.0);
    double e = __builtin_fma(p, s, s);
    double y = a < 1.0 ? -t / (2.0 + t) : (1.0 - e) / (1.0 + e);
    return x != x ? x : copysign(y, x);
}

MF_VEC_INLINE double vm_sigmoid64(double x)
{
    double e = vm_exp64(-fabs(x));
    double y = (x >= 0 ? 1.0 : e) / (1.0 + e);
    return x != x ? x : y;
}

#define MF_VEC_LOOP64(name, fn)                                                     \
    static void name(const double *x, double *y, int64_t n)                        \
    {                                                                              \
        for (int64_t i = 0; i < n; i++)                                            \
            y[i] = fn(x[i]);                                                       \
    }

MF_VEC_LOOP64(k64_exp, vm_exp64)
MF_VEC_LOOP64(k64_expm1, vm_expm1_64)
MF_VEC_LOOP64(k64_log, vm_log64)
MF_VEC_LOOP64(k64_log1p, vm_log1p64)
MF_VEC_LOOP64(k64_softplus, vm_softplus64)
MF_VEC_LOOP64(k64_tanh, vm_tanh64)
MF_VEC_LOOP64(k64_sigmoid, vm_sigmoid64)

extern const MfVecKernel64 MF_VEC_JOIN(MF_VEC_TABLE, _f64)[MF_VEC_COUNT];
const MfVecKernel64 MF_VEC_JOIN(MF_VEC_TABLE, _f64)[MF_VEC_COUNT] = {
    [MF_VEC_EXP] = k64_exp,   [MF_VEC_EXPM1] = k64_expm1,     [MF_VEC_LOG] = k64_log,
    [MF_VEC_TANH] = k64_tanh, [MF_VEC_SIGMOID] = k64_sigmoid, [MF_VEC_LOG1P] = k64_log1p,
    [MF_VEC_SOFTPLUS] = k64_softplus,
};
