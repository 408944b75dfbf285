/* half.c — bulk float16 conversions: F16C's vcvtps2ph/vcvtph2ps eight at a
 * time where the CPU has them, else the scalar functions of half.h (the same
 * bits: both round to nearest even and quiet NaNs). */
#include "half.h"

#include <immintrin.h>
#include <stdbool.h>

static bool have_f16c(void)
{
    static int known = -1;   /* a benign race: every thread computes the same */
    if (known < 0)
        known = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return known;
}

__attribute__((target("avx,f16c"))) static int64_t f16_from_f32_f16c(uint16_t *dst,
                                                                      const float *src,
                                                                      int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t f16_to_f32_f16c(float *dst,
                                                                    const uint16_t *src,
                                                                    int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    return i;
}

void mf_f16_from_f32(uint16_t *dst, const float *src, int64_t n)
{
    int64_t i = have_f16c() ? f16_from_f32_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = mf_f32_to_f16(src[i]);
}

void mf_f16_to_f32_n(float *dst, const uint16_t *src, int64_t n)
{
    int64_t i = have_f16c() ? f16_to_f32_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = mf_f16_to_f32(src[i]);
}
