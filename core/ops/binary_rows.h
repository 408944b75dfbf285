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
#include "stream_store.h"

/* True when both inputs are contiguous with the output's shape: one flat loop
 * does it, without setting up a row walk. */
static inline bool mf_binary_same_layout(const MfOpCall *c, const MfTensor *out)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    return mf_shape_equal(a->rank, a->shape, out->rank, out->shape) &&
           mf_shape_equal(b->rank, b->shape, out->rank, out->shape) &&
           mf_tensor_is_contiguous(a) && mf_tensor_is_contiguous(b);
}

/* When one input is contiguous with the output's shape and the other is a
 * contiguous row that broadcasts over the output's leading dims (a bias
 * row): which input is the row (1 or 2, else 0), how many rows and how long.
 * Such a call runs as a plain loop over rows: the row walk's per-row set-up
 * was 9% of a (16384, 256) * (256) multiply. */
static inline int mf_binary_row_layout(const MfOpCall *c, const MfTensor *out, int64_t *rows,
                                       int64_t *len)
{
    if (!mf_tensor_is_contiguous(out))
        return 0;
    for (int side = 1; side <= 2; side++) {
        const MfTensor *full = c->inputs[2 - side], *row = c->inputs[side - 1];
        int lead = 0; /* the row's leading dims of 1 */
        while (lead < row->rank && row->shape[lead] == 1)
            lead++;
        int k = row->rank - lead;
        int64_t n = mf_tensor_numel(row), total = mf_tensor_numel(out);
        if (k == 0 || k > out->rank || n == 0 || n == total ||
            !mf_shape_equal(full->rank, full->shape, out->rank, out->shape) ||
            !mf_tensor_is_contiguous(full) || !mf_tensor_is_contiguous(row) ||
            !mf_shape_equal(k, row->shape + lead, k, out->shape + out->rank - k))
            continue;
        *rows = total / n;
        *len = n;
        return side;
    }
    return 0;
}

/* When one input holds one value for every element of the output (a single
 * element, or a view whose strides are all 0, as BroadcastTo's of a
 * scalar) and the other is contiguous with the output's shape: which input
 * is that value (1 or 2, else 0). Such a call runs as one flat loop with the
 * value in a register: through the row walk, x * 2 over 262,144 floats took
 * 1.8x the time of x * y. */
static inline int mf_binary_scalar_layout(const MfOpCall *c, const MfTensor *out)
{
    if (!mf_tensor_is_contiguous(out) || mf_tensor_numel(out) == 0)
        return 0;
    for (int side = 1; side <= 2; side++) {
        const MfTensor *full = c->inputs[2 - side], *value = c->inputs[side - 1];
        bool one_value = true;
        for (int i = 0; i < value->rank && one_value; i++)
            one_value = value->shape[i] == 1 || value->strides[i] == 0;
        if (one_value && mf_shape_equal(full->rank, full->shape, out->rank, out->shape) &&
            mf_tensor_is_contiguous(full))
            return side;
    }
    return 0;
}

/* The first element of 't' as a T pointer: mf_tensor_data inlined with the
 * element size known (two out-of-line calls per operand otherwise, a few
 * percent of a 1-element op). */
#define MF_DATA_AS(T, t) ((T *)((char *)(t)->storage->data + (t)->offset * (int64_t)sizeof(T)))

/* Runs EXPR (in terms of 'a' and 'b' of type T, inputs 0 and 1 of the call
 * 'c') over every element of 'out', stored as TO. Needs 'c' and 'out' in
 * scope; 'break' inside it leaves only its own loop. A large output is
 * written with non-temporal stores (stream_store.h). */
#define BINARY_ROWS_TO(T, TO, EXPR)                                                \
    do {                                                                           \
        bool stream_ = mf_stream_output(out, 2, c->inputs);                        \
        BINARY_ROWS_WALK_(T, TO, EXPR);                                            \
        if (stream_)                                                               \
            mf_stream_fence();                                                     \
    } while (0)

/* BINARY_ROWS_TO's loops, storing through MF_STORE_RUN ('stream_'). */
#define BINARY_ROWS_WALK_(T, TO, EXPR)                                             \
    do {                                                                           \
        if (mf_binary_same_layout(c, out)) {                                       \
            TO *o = MF_DATA_AS(TO, out);                                           \
            const T *x = MF_DATA_AS(const T, c->inputs[0]);                        \
            const T *y = MF_DATA_AS(const T, c->inputs[1]);                        \
            MF_STORE_RUN(TO, o, mf_tensor_numel(out), stream_,                     \
                         T a = x[i], b = y[i]; v_ = (TO)(EXPR));                   \
            break;                                                                 \
        }                                                                          \
        int scalar_side_ = mf_binary_scalar_layout(c, out);                        \
        if (scalar_side_ != 0) {                                                   \
            TO *o = MF_DATA_AS(TO, out);                                           \
            const T *x = MF_DATA_AS(const T, c->inputs[0]);                        \
            const T *y = MF_DATA_AS(const T, c->inputs[1]);                        \
            int64_t n = mf_tensor_numel(out);                                      \
            if (scalar_side_ == 2) {                                               \
                const T b = *y;                                                    \
                MF_STORE_RUN(TO, o, n, stream_, T a = x[i]; v_ = (TO)(EXPR));      \
            } else {                                                               \
                const T a = *x;                                                    \
                MF_STORE_RUN(TO, o, n, stream_, T b = y[i]; v_ = (TO)(EXPR));      \
            }                                                                      \
            break;                                                                 \
        }                                                                          \
        int64_t row_count_, row_len_;                                              \
        int row_side_ = mf_binary_row_layout(c, out, &row_count_, &row_len_);      \
        if (row_side_ != 0) {                                                      \
            TO *o = MF_DATA_AS(TO, out);                                           \
            const T *x = MF_DATA_AS(const T, c->inputs[0]);                        \
            const T *y = MF_DATA_AS(const T, c->inputs[1]);                        \
            int64_t n = row_len_, sx = row_side_ == 2 ? n : 0, sy = n - sx;        \
            for (int64_t r_ = 0; r_ < row_count_; r_++, x += sx, y += sy, o += n)  \
                MF_STORE_RUN(TO, o, n, stream_, T a = x[i], b = y[i];              \
                             v_ = (TO)(EXPR));                                     \
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
                MF_STORE_RUN(TO, o, n, stream_, T a = x[i], b = y[i];              \
                             v_ = (TO)(EXPR));                                     \
            } else if (sy == 0) {                                                  \
                const T b = *y;                                                    \
                MF_STORE_RUN(TO, o, n, stream_, T a = x[i * sx]; v_ = (TO)(EXPR)); \
            } else if (sx == 0) {                                                  \
                const T a = *x;                                                    \
                MF_STORE_RUN(TO, o, n, stream_, T b = y[i * sy]; v_ = (TO)(EXPR)); \
            } else {                                                               \
                MF_STORE_RUN(TO, o, n, stream_, T a = x[i * sx], b = y[i * sy];    \
                             v_ = (TO)(EXPR));                                     \
            }                                                                      \
        }                                                                          \
    } while (0)

#endif
