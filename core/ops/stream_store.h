/* stream_store.h — writing a large elementwise result around the caches.
 *
 * A store to a line that is not in cache first reads the line from memory
 * (read for ownership): for an op over 4M floats (16 MB per operand, three
 * operands past a 32 MB L3) a quarter to a third of the traffic. A
 * non-temporal store writes whole lines to memory without reading them and
 * leaves the cache to the inputs. The result is then not in cache for the
 * next op, so only calls that touch MF_STREAM_MIN_BYTES and more stream: a
 * loop of such ops evicts its own results from L3 before the next op reads
 * them anyway. Measured (AMD EPYC Zen 5, 1 thread, C loops): an
 * add of 2M/4M floats alone 371/1034 -> 294/809 us, followed by a multiply
 * reading its result 897/2377 -> 857/2232 us; at 1M floats (4 MiB) even
 * (395/387 us), at 131k the pair is 10% slower (33.4 -> 36.5 us: the next
 * op reads the result from memory instead of L2/L3).
 *
 * The decision counts what the call (or the one thread's piece of a split
 * call) touches: its output and each input as large, MF_STREAM_MIN_BYTES
 * and more streams. What stays below it stays in L3 from call to call,
 * where streaming would send it to memory: 4M floats split over 2 threads
 * (each core 8 MiB in, 8 MiB out) ran abs, reciprocal and a row multiply
 * at 0.26-0.28 ms with plain stores and 0.36-0.40 ms streamed (the table
 * of 19:00, session 18), while binary ops (24 MiB per core) gained, 0.52
 * -> 0.39 ms. The values stored are the same either way. */
#ifndef MF_OPS_STREAM_STORE_H
#define MF_OPS_STREAM_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "../tensor.h"

#define MF_STREAM_MIN_BYTES ((size_t)20 << 20)
#define MF_STREAM_LINE 64
/* elements of type T in one line */
#define MF_STREAM_W(T) ((int64_t)(MF_STREAM_LINE / sizeof(T)))

/* True when an elementwise kernel should stream its output 'out' (the
 * whole result or one thread's piece), reading the 'ninputs' tensors of
 * 'inputs': those as large as 'out' count, a broadcast row or value does
 * not (it is read from cache). */
static inline bool mf_stream_output(const MfTensor *out, int ninputs, MfTensor *const *inputs)
{
    int64_t n = mf_tensor_numel(out), operands = 1;
    for (int i = 0; i < ninputs; i++)
        operands += mf_tensor_numel(inputs[i]) == n;
    return (size_t)(n * operands) * mf_dtype_size(out->dtype) >= MF_STREAM_MIN_BYTES;
}

/* Elements of 'esize' bytes from 'o' to its first line boundary (at most n):
 * non-temporal stores of whole lines start there. */
static inline int64_t mf_stream_head(const void *o, int64_t n, size_t esize)
{
    int64_t h = (int64_t)((MF_STREAM_LINE - (uintptr_t)o % MF_STREAM_LINE) % MF_STREAM_LINE /
                          esize);
    return h < n ? h : n;
}

/* One line from 'src' (aligned) to 'dst' (aligned) with non-temporal
 * stores. Called on a local array just computed, GCC keeps the line in a
 * vector register: one vmovntdq per line with AVX-512. */
static inline void mf_stream_line(void *dst, const void *src)
{
#if defined(__AVX512F__)
    _mm512_stream_si512((__m512i *)dst, _mm512_load_si512(src));
#elif defined(__AVX__)
    __m256i *d = dst;
    const __m256i *s = src;
    _mm256_stream_si256(d, _mm256_load_si256(s));
    _mm256_stream_si256(d + 1, _mm256_load_si256(s + 1));
#elif defined(__SSE2__)
    __m128i *d = dst;
    const __m128i *s = src;
    for (int k = 0; k < 4; k++)
        _mm_stream_si128(d + k, _mm_load_si128(s + k));
#else
    memcpy(dst, src, MF_STREAM_LINE);
#endif
}

/* After a kernel's last non-temporal store: they are weakly ordered, so
 * the thread that hands the result on (a pool worker finishing its piece)
 * must make them visible first. */
static inline void mf_stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* Runs the statements '...' for every index i in [0, n): they set 'v_'
 * (of type TO), stored to o[i]. When 'stream' is true, the whole lines of
 * 'o' are written with non-temporal stores, each line's elements computed
 * first into a local array; the kernel calls mf_stream_fence when done.
 * The statements come last so that their commas need no parentheses. */
#define MF_STORE_RUN(TO, o, n, stream, ...)                                        \
    do {                                                                           \
        int64_t s_ = 0, n_ = (n);                                                  \
        if (stream) {                                                              \
            s_ = mf_stream_head((o), n_, sizeof(TO));                              \
            for (int64_t i = 0; i < s_; i++) {                                     \
                TO v_;                                                             \
                __VA_ARGS__;                                                       \
                (o)[i] = v_;                                                       \
            }                                                                      \
            for (; s_ + MF_STREAM_W(TO) <= n_; s_ += MF_STREAM_W(TO)) {            \
                _Alignas(MF_STREAM_LINE) TO line_[MF_STREAM_W(TO)];                \
                for (int64_t i = s_; i < s_ + MF_STREAM_W(TO); i++) {              \
                    TO v_;                                                         \
                    __VA_ARGS__;                                                   \
                    line_[i - s_] = v_;                                            \
                }                                                                  \
                mf_stream_line((o) + s_, line_);                                   \
            }                                                                      \
        }                                                                          \
        for (int64_t i = s_; i < n_; i++) {                                        \
            TO v_;                                                                 \
            __VA_ARGS__;                                                           \
            (o)[i] = v_;                                                           \
        }                                                                          \
    } while (0)

#endif
