/* binary_rows.h — the row loop of elementwise ops with two broadcast inputs,
 * shared by binary.c (arithmetic: the output has the inputs' type) and
 * compare.c (comparisons and logic: the output is bool, as uint8_t 0/1).
 *
 * BINARY_ROWS_TO runs an expression over every element with a typed loop
 * per stride pattern (both contiguous, one side a broadcast scalar, any
 * strides) so that the compiler can vectorise the common cases; fully
 * contiguous same-shaped operands skip the row walk altogether, which is
 * what makes small ops cheap. A macro, not a function: the expression is
 * inlined into each loop, with no call per element. */
#ifndef MF_OPS_BINARY_ROWS_H
#define MF_OPS_BINARY_ROWS_H

#include "../op.h"
#include "../shape.h"
#include "loop.h"

/* True when both inputs are contiguous with the output's shape: one flat loop
 * does it, without setting up a row walk. */
static inline bool mf_binary_same_layout(const MfOpCall *c, const MfTensor *out)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    return mf_shape_equal(a->rank, a->shape, out->rank, out->shape) &&
           mf_shape_equal(b->rank, b->shape, out->rank, out->shape) &&
           mf_tensor_is_contiguous(a) && mf_tensor_is_contiguous(b);
}

/* The first element of 't' as a T pointer: mf_tensor_data inlined with the
 * element size known (two out-of-line calls per operand otherwise, a few
 * percent of a 1-element op). */
#define MF_DATA_AS(T, t) ((T *)((char *)(t)->storage->data + (t)->offset * (int64_t)sizeof(T)))

/* Runs EXPR (in terms of 'a' and 'b' of type T, inputs 0 and 1 of the call
 * 'c') over every element of 'out', stored as TO. Needs 'c' and 'out' in
 * scope; 'break' inside it leaves only its own loop. */
#define BINARY_ROWS_TO(T, TO, EXPR)                                                \
    do {                                                                           \
        if (mf_binary_same_layout(c, out)) {                                       \
            TO *o = MF_DATA_AS(TO, out);                                           \
            const T *x = MF_DATA_AS(const T, c->inputs[0]);                        \
            const T *y = MF_DATA_AS(const T, c->inputs[1]);                        \
            int64_t n = mf_tensor_numel(out);                                      \
            for (int64_t i = 0; i < n; i++) {                                      \
                T a = x[i], b = y[i];                                              \
                o[i] = (TO)(EXPR);                                                 \
            }                                                                      \
            break;                                                                 \
        }                                                                          \
        MfLoop l;                                                                  \
        MfTensor *ts[3] = {out, c->inputs[0], c->inputs[1]};                       \
        mf_loop_init(&l, 3, ts, out->rank, out->shape);                            \
        char *p[3];                                                                \
        while (mf_loop_next(&l, p)) {                                              \
            TO *o = (TO *)p[0];                                                    \
            const T *x = (const T *)p[1], *y = (const T *)p[2];                    \
            int64_t n = l.n, sx = l.step[1], sy = l.step[2];                       \
            if (sx == 1 && sy == 1) {                                              \
                for (int64_t i = 0; i < n; i++) {                                  \
                    T a = x[i], b = y[i];                                          \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            } else if (sy == 0) {                                                  \
                const T b = *y;                                                    \
                for (int64_t i = 0; i < n; i++) {                                  \
                    T a = x[i * sx];                                               \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            } else if (sx == 0) {                                                  \
                const T a = *x;                                                    \
                for (int64_t i = 0; i < n; i++) {                                  \
                    T b = y[i * sy];                                               \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            } else {                                                               \
                for (int64_t i = 0; i < n; i++) {                                  \
                    T a = x[i * sx], b = y[i * sy];                                \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            }                                                                      \
        }                                                                          \
    } while (0)

#endif
