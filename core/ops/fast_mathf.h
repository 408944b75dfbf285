/* fast_mathf.h — float32 exp, sigmoid and tanh written so that GCC
 * vectorizes a loop calling them (no libm call, no branch: both sides of a
 * choice are computed and one is selected), for the fused LSTM cell
 * (lstm_cell.c), whose five transcendentals per element dominated an LSTM
 * training step when computed with libm in double.
 *
 * The approximations are Cephes's (S. L. Moshier, public domain; the same
 * polynomials as Eigen's and avx_mathfun's float kernels):
 *   exp: x = n ln2 + r, |r| <= ln2 / 2, e^r by a degree-7 polynomial, 2^n put
 *        into the exponent bits; about 1 ulp over the clamped range.
 *   tanh: |x| < 0.625: x + x^3 P(x^2) (Cephes tanhf, about 1 ulp, exact
 *        near 0); otherwise 1 - 2 / (e^(2|x|) + 1) with the sign of x.
 *   sigmoid: 1 / (1 + e^-x), a few ulp (saturates to 0 and 1 as libm's).
 * Float64 kernels keep libm (gradchecks and PyTorch comparisons at 1e-12). */
#ifndef MF_OPS_FAST_MATHF_H
#define MF_OPS_FAST_MATHF_H

#include <stdint.h>

/* e^x for float32; inputs are clamped to [-88.3, 88.3]: above, the result is
 * e^88.3 (finite), below -87.3 it is 0 or a tiny value (under 1e-38). */
static inline float mf_expf_fast(float x)
{
    const float shifter = 0x1.8p23f; /* adding it rounds to an integer in the low bits */
    /* |x| clamped with one select (two compares would be jump-threaded into
     * branches that stop vectorization) */
    float a = __builtin_fabsf(x);
    x = __builtin_copysignf(a > 88.3f ? 88.3f : a, x);
    float k = x * 1.44269504088896341f + shifter;
    union { float f; int32_t i; } n = {.f = k}, scale;
    k -= shifter;
    float r = x - k * 0.693359375f; /* ln 2 in two parts: the first exact in float */
    r = r + k * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    scale.i = (int32_t)((uint32_t)(n.i - 0x4b400000 + 127) << 23);
    return p * scale.f;
}

static inline float mf_sigmoidf_fast(float x) { return 1.0f / (1.0f + mf_expf_fast(-x)); }

static inline float mf_tanhf_fast(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float small = -5.70498872745e-3f;
    small = small * z + 2.06390887954e-2f;
    small = small * z - 5.37397155531e-2f;
    small = small * z + 1.33314422036e-1f;
    small = small * z - 3.33332819422e-1f;
    small = small * z * x + x;
    float big = 1.0f - 2.0f / (mf_expf_fast(2.0f * a) + 1.0f);
    big = x < 0 ? -big : big;
    return a < 0.625f ? small : big;
}

#endif
