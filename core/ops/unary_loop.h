/* unary_loop.h — the typed row loops of the elementwise unary kernels
 * (unary.c, unary_more.c): UNARY_FORWARD(F32, F64, IEXPR) writes outs[0]
 * from c->inputs[0] with one expression per dtype class, 'a' being the
 * input element; NOINT stands for the integer expression of ops that take
 * floats only (their 'infer' refused integers already). */
#ifndef MF_OPS_UNARY_LOOP_H
#define MF_OPS_UNARY_LOOP_H

#include "common.h"
#include "loop.h"
#include "stream_store.h"

#define UNARY_ROWS(T, EXPR)                                                        \
    do {                                                                           \
        MfLoop l;                                                                  \
        MfTensor *ts[2] = {out, c->inputs[0]};                                     \
        mf_loop_init(&l, 2, ts, out->rank, out->shape);                            \
        bool stream_ = mf_stream_output(out, 1, c->inputs);                        \
        char *p[2];                                                                \
        while (mf_loop_next(&l, p)) {                                              \
            T *o = (T *)p[0];                                                      \
            const T *x = (const T *)p[1];                                          \
            int64_t n = l.n, sx = l.step[1];                                       \
            if (sx == 1)                                                           \
                MF_STORE_RUN(T, o, n, stream_, T a = x[i]; v_ = (EXPR));           \
            else                                                                   \
                MF_STORE_RUN(T, o, n, stream_, T a = x[i * sx]; v_ = (EXPR));      \
        }                                                                          \
        if (stream_)                                                               \
            mf_stream_fence();                                                     \
    } while (0)

/* F32 and F64 are the float expressions; IEXPR the integer one (NULL-like
 * 'NOINT' when the op refuses integers, which 'infer' already ensured). */
#define UNARY_FORWARD(F32, F64, IEXPR)                                             \
    MfTensor *out = outs[0];                                                       \
    switch (out->dtype) {                                                          \
    case MF_FLOAT32: UNARY_ROWS(float, F32); break;                                \
    case MF_FLOAT64: UNARY_ROWS(double, F64); break;                               \
    case MF_INT32: {                                                               \
        typedef uint32_t U __attribute__((unused));                                \
        UNARY_ROWS(int32_t, IEXPR);                                                \
        break;                                                                     \
    }                                                                              \
    case MF_INT64: {                                                               \
        typedef uint64_t U __attribute__((unused));                                \
        UNARY_ROWS(int64_t, IEXPR);                                                \
        break;                                                                     \
    }                                                                              \
    default: return mf_err_set(MF_EINTERNAL, "%s: no kernel for %s", op_api(c),    \
                               mf_dtype_name(out->dtype));                         \
    }                                                                              \
    return MF_OK


#define NOINT ((void)a, 0)

#endif
