/* half.h — float16 (IEEE binary16) and bfloat16 as storage: conversions to
 * and from float32 and float64, rounding to nearest even. Tensors of these
 * dtypes hold 2-byte elements; ops compute in float32 (core/half_call.c).
 *
 * NaN keeps its sign and top payload bits and comes out quiet, as the F16C
 * instructions do, so the scalar code here and a vector path agree bit for
 * bit. float64 -> float16 rounds once, from the double (NumPy's
 * astype(float16)); float64 -> bfloat16 goes through float32 (PyTorch's
 * c10::BFloat16 from a double), which can round twice. */
#ifndef MF_HALF_H
#define MF_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t mf_f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static inline float mf_f32_from_bits(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* float32 -> float16. Below 2^-14 (half's subnormals) adding 0.5, whose
 * float32 ulp is half's subnormal step 2^-24, rounds in the FPU; the bits
 * above 0.5's then count steps (1024 steps is the smallest normal, which is
 * its encoding). Normal numbers round by adding half an ulp minus one plus
 * the kept bit's parity, then shift. 65520 and above round to infinity. */
static inline uint16_t mf_f32_to_f16(float f)
{
    uint32_t x = mf_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        uint32_t r = mf_f32_bits(mf_f32_from_bits(ax) + 0.5f);
        return (uint16_t)(sign | (r - 0x3f000000u));
    }
    ax += 0xc8000fffu + ((ax >> 13) & 1u);   /* rebias 127 -> 15: -(112 << 23) */
    return (uint16_t)(sign | (ax >> 13));
}

static inline float mf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return mf_f32_from_bits(sign | 0x7f800000u | (mant ? 0x400000u | (mant << 13) : 0));
    if (exp == 0) {
        float v = (float)mant * 0x1p-24f;   /* exact: at most 11 bits */
        return mant ? mf_f32_from_bits(sign | mf_f32_bits(v)) : mf_f32_from_bits(sign);
    }
    return mf_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* float64 -> float16 in one rounding: as mf_f32_to_f16, with 2^28 (whose
 * double ulp is 2^-24) for the subnormal range. */
static inline uint16_t mf_f64_to_f16(double d)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax > 0x7ff0000000000000ull)
        return (uint16_t)(sign | 0x7e00u | ((ax >> 42) & 0x3ffu));
    if (ax >= 0x40effe0000000000ull)   /* 65520 */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x3f10000000000000ull) {   /* 2^-14 */
        double a;
        memcpy(&a, &ax, sizeof a);
        double steps = ((a + 0x1p28) - 0x1p28) * 0x1p24;   /* 0 .. 1024, exact */
        return (uint16_t)(sign | (uint16_t)steps);
    }
    ax += 0xc100000000000000ull + 0x1ffffffffffull + ((ax >> 42) & 1u);   /* 1023 -> 15 */
    return (uint16_t)(sign | (uint16_t)(ax >> 42));
}

/* float32 -> bfloat16: the top 16 bits, rounded to nearest even. */
static inline uint16_t mf_f32_to_bf16(float f)
{
    uint32_t x = mf_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static inline float mf_bf16_to_f32(uint16_t b)
{
    return mf_f32_from_bits((uint32_t)b << 16);
}

/* Bulk conversions of contiguous arrays (F16C where the CPU has it, the
 * same bits as the scalar functions above). */
void mf_f16_from_f32(uint16_t *dst, const float *src, int64_t n);
void mf_f16_to_f32_n(float *dst, const uint16_t *src, int64_t n);

#endif
