/* v8.h — 8-float vectors for the hand-blocked float32 kernels (core/gemm_f32.c,
 * core/ops/attention_tile.c): the type, unaligned loads and stores, and an
 * 8 x 8 transpose. GCC/clang vector extensions: AVX2 under -march=native,
 * two SSE halves elsewhere (the sanitizer build). */
#ifndef MF_V8_H
#define MF_V8_H

#include <stdint.h>

typedef float v8 __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4))); /* unaligned rows */

static inline v8 load8(const float *p)
{
    return *(const v8u *)p;
}

static inline void store8(float *p, v8 x)
{
    *(v8u *)p = x;
}

/* B's row in registers once, not read again by each FMA (GCC folds the
 * loads into the FMAs: then the loads, not the FMAs, limit the speed). */
#ifdef __AVX__
#define IN_REGISTERS(x, y) __asm__("" : "+x"(x), "+x"(y))
#else
#define IN_REGISTERS(x, y) (void)0
#endif

#define SHUF(x, y, ...) __builtin_shufflevector(x, y, __VA_ARGS__)

/* The 8 x 8 block at src (row stride ls) transposed to dst (row stride ld):
 * pairs interleaved, then quadruples, then the 128-bit halves. */
static inline void transpose8(const float *src, int64_t ls, float *dst, int64_t ld)
{
    v8 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        r[i] = load8(src + i * ls);
    for (int i = 0; i < 8; i += 2) {
        t[i] = SHUF(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = SHUF(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; h++) {
            u[i + 2 * h] = SHUF(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[i + 2 * h + 1] = SHUF(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int i = 0; i < 4; i++) {
        store8(dst + i * ld, SHUF(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11));
        store8(dst + (i + 4) * ld, SHUF(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15));
    }
}

#endif
