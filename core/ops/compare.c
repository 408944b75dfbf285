/* compare.c — comparisons, logic, select and cast:
 * Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual (broadcasting, one
 * dtype on both sides, bool output), LogicalAnd, LogicalOr, LogicalNot (bool
 * only), IsNan, IsInf, IsFinite (floats), SelectV2 ('where', broadcasting
 * among condition, x and y) and Cast (any of the five dtypes to any other).
 *
 * Kernels walk rows with 'MfLoop' and run one typed loop per dtype; bool
 * results are written as uint8_t 0/1. NaN compares unequal to everything, as
 * IEEE and TensorFlow say. Cast follows TensorFlow: float to int truncates
 * toward zero, to bool is 'x != 0' (NaN is true), int to narrower int wraps.
 * Where TensorFlow's result is undefined (a float out of the integer range, or
 * NaN, cast to an integer) we saturate to the range and map NaN to 0.
 * SelectV2 only moves bytes, so its kernel dispatches on the element size. */
#include "compare.h"

#include <math.h>

#include "../half.h"
#include "binary_rows.h"
#include "common.h"
#include "grads_math.h"
#include "loop.h"

/* Runs EXPR (in terms of 'a' and 'b' of type T) over every row, writing
 * uint8_t 0/1 into 'out' (which is bool). */
#define BOOL_ROWS(T, EXPR) BINARY_ROWS_TO(T, uint8_t, EXPR)

/* Dispatches a comparison on the inputs' dtype (bool only reaches here for
 * Equal and NotEqual, which 'infer' ensured). */
#define COMPARE_FORWARD(EXPR)                                                      \
    MfTensor *out = outs[0];                                                       \
    switch (c->inputs[0]->dtype) {                                                 \
    case MF_FLOAT32: BOOL_ROWS(float, EXPR); break;                                \
    case MF_FLOAT64: BOOL_ROWS(double, EXPR); break;                               \
    case MF_INT32: BOOL_ROWS(int32_t, EXPR); break;                                \
    case MF_INT64: BOOL_ROWS(int64_t, EXPR); break;                                \
    case MF_BOOL: BOOL_ROWS(uint8_t, EXPR); break;                                 \
    case MF_UINT8: BOOL_ROWS(uint8_t, EXPR); break;                                \
    default: return mf_err_set(MF_EINTERNAL, "%s: no kernel for %s", op_api(c),    \
                               mf_dtype_name(c->inputs[0]->dtype));                \
    }                                                                              \
    return MF_OK

/* Runs EXPR (in terms of 'a' of type TI) over every row of input 0, writing
 * TO into 'out'. */
#define MAP_ROWS(TI, TO, EXPR)                                                     \
    do {                                                                           \
        MfLoop l;                                                                  \
        MfTensor *ts[2] = {out, c->inputs[0]};                                     \
        mf_loop_init(&l, 2, ts, out->rank, out->shape);                            \
        char *p[2];                                                                \
        while (mf_loop_next(&l, p)) {                                              \
            TO *o = (TO *)p[0];                                                    \
            const TI *x = (const TI *)p[1];                                        \
            int64_t n = l.n, sx = l.step[1];                                       \
            if (sx == 1) {                                                         \
                for (int64_t i = 0; i < n; i++) {                                  \
                    TI a = x[i];                                                   \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            } else {                                                               \
                for (int64_t i = 0; i < n; i++) {                                  \
                    TI a = x[i * sx];                                              \
                    o[i] = (TO)(EXPR);                                             \
                }                                                                  \
            }                                                                      \
        }                                                                          \
    } while (0)

/* ---- comparisons -------------------------------------------------------- */

static MfStatus infer_equality(MfOpCall *c)
{
    return mf_infer_broadcast(c, MF_ANY | MF_MASK(MF_UINT8),
                              "float32, float64, int32, int64, bool or uint8", MF_BOOL);
}

static MfStatus infer_ordering(MfOpCall *c)
{
    return mf_infer_broadcast(c, MF_NUMERIC | MF_MASK(MF_UINT8),
                              "a numeric dtype (float32, float64, int32, int64, uint8)", MF_BOOL);
}

static MfStatus equal_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a == b);
}

static MfStatus not_equal_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a != b);
}

static MfStatus less_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a < b);
}

static MfStatus less_equal_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a <= b);
}

static MfStatus greater_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a > b);
}

static MfStatus greater_equal_forward(const MfOpCall *c, MfTensor **outs)
{
    COMPARE_FORWARD(a >= b);
}

/* ---- logic --------------------------------------------------------------- */

static MfStatus check_bool(const MfOpCall *c, const MfTensor *t)
{
    if (t->dtype == MF_BOOL)
        return MF_OK;
    return mf_err_set(MF_EDTYPE, "%s: expected bool inputs, got %s (use a comparison or "
                      "mf.cast(t, \"bool\"))", op_api(c), mf_dtype_name(t->dtype));
}

static MfStatus infer_logical_binary(MfOpCall *c)
{
    MfStatus st = check_bool(c, c->inputs[0]);
    if (st == MF_OK)
        st = check_bool(c, c->inputs[1]);
    if (st != MF_OK)
        return st;
    return mf_infer_broadcast(c, MF_MASK(MF_BOOL), "bool", MF_BOOL);
}

static MfStatus infer_logical_not(MfOpCall *c)
{
    MfStatus st = check_bool(c, c->inputs[0]);
    if (st == MF_OK)
        mf_spec_like(c, c->inputs[0], MF_BOOL);
    return st;
}

/* Any nonzero byte counts as true, so the result is always 0/1. */
static MfStatus logical_and_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    BOOL_ROWS(uint8_t, (a != 0) & (b != 0));
    return MF_OK;
}

static MfStatus logical_or_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    BOOL_ROWS(uint8_t, (a != 0) | (b != 0));
    return MF_OK;
}

static MfStatus logical_not_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    MAP_ROWS(uint8_t, uint8_t, a == 0);
    return MF_OK;
}

/* ---- float classification ------------------------------------------------- */

static MfStatus infer_float_class(MfOpCall *c)
{
    MfStatus st = mf_check_dtype(c, c->inputs[0], MF_FLOATS,
                                 "a float dtype (float32 or float64)");
    if (st == MF_OK)
        mf_spec_like(c, c->inputs[0], MF_BOOL);
    return st;
}

#define CLASS_FORWARD(EXPR)                                                        \
    MfTensor *out = outs[0];                                                       \
    if (c->inputs[0]->dtype == MF_FLOAT32)                                         \
        MAP_ROWS(float, uint8_t, EXPR);                                            \
    else                                                                           \
        MAP_ROWS(double, uint8_t, EXPR);                                           \
    return MF_OK

static MfStatus is_nan_forward(const MfOpCall *c, MfTensor **outs)
{
    CLASS_FORWARD(isnan(a) != 0);
}

static MfStatus is_inf_forward(const MfOpCall *c, MfTensor **outs)
{
    CLASS_FORWARD(isinf(a) != 0);
}

static MfStatus is_finite_forward(const MfOpCall *c, MfTensor **outs)
{
    CLASS_FORWARD(isfinite(a) != 0);
}

/* ---- SelectV2 ------------------------------------------------------------- */

/* Broadcasts the three shapes together; one message names all three. */
static MfStatus broadcast3(const MfOpCall *c, MfTensorSpec *out)
{
    int r = 0;
    for (int k = 0; k < 3; k++)
        r = c->inputs[k]->rank > r ? c->inputs[k]->rank : r;
    for (int i = 0; i < r; i++) {
        int64_t d = 1;
        for (int k = 0; k < 3; k++) {
            const MfTensor *t = c->inputs[k];
            int it = t->rank - r + i;
            int64_t x = it >= 0 ? t->shape[it] : 1;
            if (x == 1 || x == d || (x < 0 && d != 1))
                continue; /* an unknown dim defers to a known one */
            if (d == 1 || d < 0) {
                d = x;
                continue;
            }
            char b[3][160];
            for (int j = 0; j < 3; j++)
                mf_shape_str(c->inputs[j]->rank, c->inputs[j]->shape, b[j], sizeof b[j]);
            return mf_err_set(MF_ESHAPE, "where: shapes of condition %s, x %s and y %s do not "
                              "broadcast", b[0], b[1], b[2]);
        }
        out->shape[i] = d;
    }
    out->rank = r;
    return MF_OK;
}

static MfStatus infer_select(MfOpCall *c)
{
    const MfTensor *cond = c->inputs[0];
    if (cond->dtype != MF_BOOL)
        return mf_err_set(MF_EDTYPE, "where: condition must be bool, got %s (use a comparison "
                          "or mf.cast(t, \"bool\"))", mf_dtype_name(cond->dtype));
    MfStatus st = mf_check_same_dtype(c, c->inputs[1], c->inputs[2]);
    if (st != MF_OK)
        return st;
    c->noutputs = 1;
    c->out[0].dtype = c->inputs[1]->dtype;
    return broadcast3(c, &c->out[0]);
}

/* Copies x or y elements of type T (an unsigned type of the element's size). */
#define SELECT_ROWS(T)                                                             \
    do {                                                                           \
        MfLoop l;                                                                  \
        MfTensor *ts[4] = {out, c->inputs[0], c->inputs[1], c->inputs[2]};         \
        mf_loop_init(&l, 4, ts, out->rank, out->shape);                            \
        char *p[4];                                                                \
        while (mf_loop_next(&l, p)) {                                              \
            T *o = (T *)p[0];                                                      \
            const uint8_t *m = (const uint8_t *)p[1];                              \
            const T *x = (const T *)p[2], *y = (const T *)p[3];                    \
            int64_t n = l.n, sm = l.step[1], sx = l.step[2], sy = l.step[3];       \
            if (sm == 1 && sx == 1 && sy == 1) {                                   \
                for (int64_t i = 0; i < n; i++)                                    \
                    o[i] = m[i] ? x[i] : y[i];                                     \
            } else {                                                               \
                for (int64_t i = 0; i < n; i++)                                    \
                    o[i] = m[i * sm] ? x[i * sx] : y[i * sy];                      \
            }                                                                      \
        }                                                                          \
    } while (0)

static MfStatus select_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    switch (mf_dtype_size(out->dtype)) {
    case 1: SELECT_ROWS(uint8_t); break;
    case 4: SELECT_ROWS(uint32_t); break;
    case 8: SELECT_ROWS(uint64_t); break;
    default: return mf_err_set(MF_EINTERNAL, "where: no kernel for %s",
                               mf_dtype_name(out->dtype));
    }
    return MF_OK;
}

/* ---- Cast ------------------------------------------------------------------- */

/* Integer to narrower integer wraps, as TensorFlow (two's complement). */
static inline int32_t wrap_i32(int64_t x)
{
    return (int32_t)(uint32_t)(uint64_t)x;
}

/* Integer to uint8 keeps the low 8 bits (TensorFlow's and NumPy's wrap). */
static inline uint8_t wrap_u8(int64_t x)
{
    return (uint8_t)(uint64_t)x;
}

/* One function per source type TI: a switch over the target. V is the
 * element's value (a float for the half dtypes, whose elements are bits);
 * TOI32/TOI64/TOU8 convert to the integer types (saturating for floats),
 * TOF16/TOBF16 to the half dtypes' bits (half.h). */
#define DEFINE_CAST_FROM(fname, TI, V, TOI32, TOI64, TOU8, TOF16, TOBF16)           \
    static void fname(const MfOpCall *c, MfTensor *out)                            \
    {                                                                              \
        switch (out->dtype) {                                                      \
        case MF_FLOAT32: MAP_ROWS(TI, float, V); break;                            \
        case MF_FLOAT64: MAP_ROWS(TI, double, V); break;                           \
        case MF_INT32: MAP_ROWS(TI, int32_t, TOI32); break;                        \
        case MF_INT64: MAP_ROWS(TI, int64_t, TOI64); break;                        \
        case MF_UINT8: MAP_ROWS(TI, uint8_t, TOU8); break;                         \
        case MF_FLOAT16: MAP_ROWS(TI, uint16_t, TOF16); break;                     \
        case MF_BFLOAT16: MAP_ROWS(TI, uint16_t, TOBF16); break;                   \
        default: MAP_ROWS(TI, uint8_t, (V) != 0); break;                           \
        }                                                                          \
    }

/* Integers go to bfloat16 through float32, as PyTorch's c10::BFloat16. */
#define F16_OF(a) mf_f64_to_f16((double)(a))
#define BF16_OF(a) mf_f32_to_bf16((float)(a))
DEFINE_CAST_FROM(cast_from_f32, float, a, mf_sat_i32((double)a), mf_sat_i64((double)a),
                 mf_sat_u8((double)a), mf_f32_to_f16(a), mf_f32_to_bf16(a))
DEFINE_CAST_FROM(cast_from_f64, double, a, mf_sat_i32(a), mf_sat_i64(a), mf_sat_u8(a),
                 mf_f64_to_f16(a), mf_f32_to_bf16((float)a))
DEFINE_CAST_FROM(cast_from_i32, int32_t, a, a, a, wrap_u8(a), F16_OF(a), BF16_OF(a))
DEFINE_CAST_FROM(cast_from_i64, int64_t, a, wrap_i32(a), a, wrap_u8(a), F16_OF(a), BF16_OF(a))
DEFINE_CAST_FROM(cast_from_bool, uint8_t, a, a != 0, a != 0, a != 0, F16_OF(a), BF16_OF(a))
DEFINE_CAST_FROM(cast_from_u8, uint8_t, a, a, a, a, F16_OF(a), BF16_OF(a))
DEFINE_CAST_FROM(cast_from_f16, uint16_t, mf_f16_to_f32(a),
                 mf_sat_i32((double)mf_f16_to_f32(a)), mf_sat_i64((double)mf_f16_to_f32(a)),
                 mf_sat_u8((double)mf_f16_to_f32(a)), a, mf_f32_to_bf16(mf_f16_to_f32(a)))
DEFINE_CAST_FROM(cast_from_bf16, uint16_t, mf_bf16_to_f32(a),
                 mf_sat_i32((double)mf_bf16_to_f32(a)), mf_sat_i64((double)mf_bf16_to_f32(a)),
                 mf_sat_u8((double)mf_bf16_to_f32(a)), mf_f32_to_f16(mf_bf16_to_f32(a)), a)

/* float32 <-> float16 of contiguous tensors in bulk (F16C where present);
 * false when the call is not that case. */
static bool cast_f16_bulk(const MfOpCall *c, MfTensor *out)
{
    const MfTensor *x = c->inputs[0];
    if (!mf_tensor_is_contiguous(x) || !mf_tensor_is_contiguous(out))
        return false;
    int64_t n = mf_tensor_numel(out);
    if (x->dtype == MF_FLOAT32 && out->dtype == MF_FLOAT16)
        mf_f16_from_f32(mf_tensor_data(out), mf_tensor_data(x), n);
    else if (x->dtype == MF_FLOAT16 && out->dtype == MF_FLOAT32)
        mf_f16_to_f32_n(mf_tensor_data(out), mf_tensor_data(x), n);
    else
        return false;
    return true;
}

static MfStatus infer_cast(MfOpCall *c)
{
    MfDType dt = c->attrs->dtype;
    if ((unsigned)dt >= MF_NDTYPES)
        return mf_err_set(MF_EARG, "cast: unknown target dtype %d (expected float32, float64, "
                          "int32, int64, bool, uint8, float16 or bfloat16)", (int)dt);
    mf_spec_like(c, c->inputs[0], dt);
    return MF_OK;
}

static MfStatus cast_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    if (cast_f16_bulk(c, out))
        return MF_OK;
    switch (c->inputs[0]->dtype) {
    case MF_FLOAT32: cast_from_f32(c, out); break;
    case MF_FLOAT64: cast_from_f64(c, out); break;
    case MF_INT32: cast_from_i32(c, out); break;
    case MF_INT64: cast_from_i64(c, out); break;
    case MF_BOOL: cast_from_bool(c, out); break;
    case MF_UINT8: cast_from_u8(c, out); break;
    case MF_FLOAT16: cast_from_f16(c, out); break;
    case MF_BFLOAT16: cast_from_bf16(c, out); break;
    default: return mf_err_set(MF_EINTERNAL, "cast: no kernel for %s",
                               mf_dtype_name(c->inputs[0]->dtype));
    }
    return MF_OK;
}

/* ---- helpers for other families ---------------------------------------------- */

MfStatus mf_cast(MfTensor *x, MfDType dt, MfTensor **out)
{
    MfAttrs attrs = mf_attrs_default();
    attrs.dtype = dt;
    return mf_op1(MF_OP_CAST, 1, &x, &attrs, out);
}

MfStatus mf_where(MfTensor *cond, MfTensor *x, MfTensor *y, MfTensor **out)
{
    MfTensor *in[3] = {cond, x, y};
    return mf_op1(MF_OP_SELECT, 3, in, NULL, out);
}

/* ---- descriptors ---------------------------------------------------------------- */

#define BOOL_OP(sym, tfname, apiname, ar, inf, fwd, ...)                           \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = ar,                               \
        .flags = MF_OP_SIMPLE | MF_OP_NONDIFF, .infer = inf, .forward = fwd,       \
        .cost = mf_cost_elementwise,                                               \
        .lua = apiname, .inputs = (ar) == 2 ? "x, y" : "x",                        \
        .summary = __VA_ARGS__,                                                    \
    }

BOOL_OP(mf_desc_equal, "Equal", "equal", 2, infer_equality, equal_forward,
        "elementwise x == y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a == b with broadcasting; a bool tensor. (Lua's == on two tensors compares "
        "identity, not values.)",
    .example =
        "mf.equal(mf.tensor{1, 2, 3}, 2)          --> {false, true, false}");
BOOL_OP(mf_desc_not_equal, "NotEqual", "not_equal", 2, infer_equality, not_equal_forward,
        "elementwise x ~= y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a ~= b; a bool tensor.",
    .example =
        "mf.not_equal(mf.tensor{1, 2, 3}, 2)      --> {true, false, true}");
BOOL_OP(mf_desc_less, "Less", "less", 2, infer_ordering, less_forward,
        "elementwise x < y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a < b; a bool tensor. (The < operator cannot be used: Lua wants one "
        "boolean.)",
    .example =
        "mf.less(mf.tensor{1, 2, 3}, 2)           --> {true, false, false}");
BOOL_OP(mf_desc_less_equal, "LessEqual", "less_equal", 2, infer_ordering, less_equal_forward,
        "elementwise x <= y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a <= b; a bool tensor.",
    .example =
        "mf.less_equal(mf.tensor{1, 2, 3}, 2)     --> {true, true, false}");
BOOL_OP(mf_desc_greater, "Greater", "greater", 2, infer_ordering, greater_forward,
        "elementwise x > y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a > b; a bool tensor.",
    .example =
        "mf.greater(mf.tensor{1, 2, 3}, 2)        --> {false, false, true}");
BOOL_OP(mf_desc_greater_equal, "GreaterEqual", "greater_equal", 2, infer_ordering,
        greater_equal_forward,
        "elementwise x >= y, a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise a >= b; a bool tensor.",
    .example =
        "mf.greater_equal(mf.tensor{1, 2, 3}, 2)  --> {false, true, true}");
BOOL_OP(mf_desc_logical_and, "LogicalAnd", "logical_and", 2, infer_logical_binary,
        logical_and_forward,
        "elementwise x and y of bool tensors",
    .topic = "compare",
    .details =
        "Elementwise and of two bool tensors, with broadcasting.",
    .example =
        "mf.logical_and(mf.tensor{true, true, false}, mf.tensor{true, false, false})\n"
        "                                         --> {true, false, false}");
BOOL_OP(mf_desc_logical_or, "LogicalOr", "logical_or", 2, infer_logical_binary,
        logical_or_forward,
        "elementwise x or y of bool tensors",
    .topic = "compare",
    .details =
        "Elementwise or of two bool tensors, with broadcasting.",
    .example =
        "mf.logical_or(mf.tensor{true, false}, mf.tensor{false, false})   --> {true, false}");
BOOL_OP(mf_desc_logical_not, "LogicalNot", "logical_not", 1, infer_logical_not,
        logical_not_forward,
        "elementwise not x of a bool tensor",
    .topic = "compare",
    .details =
        "Elementwise not of a bool tensor.",
    .example =
        "mf.logical_not(mf.tensor{true, false})   --> {false, true}");
BOOL_OP(mf_desc_is_nan, "IsNan", "is_nan", 1, infer_float_class, is_nan_forward,
        "elementwise: is x NaN?",
    .topic = "compare",
    .details =
        "Elementwise: is the element NaN? A bool tensor.",
    .example =
        "mf.is_nan(mf.tensor{1, 0/0})             --> {false, true}");
BOOL_OP(mf_desc_is_inf, "IsInf", "is_inf", 1, infer_float_class, is_inf_forward,
        "elementwise: is x +-infinity?",
    .topic = "compare",
    .details =
        "Elementwise: is the element +inf or -inf? A bool tensor.",
    .example =
        "mf.is_inf(mf.tensor{1, math.huge, -math.huge})   --> {false, true, true}");
BOOL_OP(mf_desc_is_finite, "IsFinite", "is_finite", 1, infer_float_class, is_finite_forward,
        "elementwise: is x neither NaN nor infinite?",
    .topic = "compare",
    .details =
        "Elementwise: is the element neither infinite nor NaN? A bool tensor.",
    .example =
        "mf.is_finite(mf.tensor{1, math.huge, 0/0})       --> {true, false, false}");

/* Differentiable in x and y (the condition gets no gradient). */
const MfOpDesc mf_desc_select = {
    .name = "SelectV2", .api = "where", .arity = 3,
    .infer = infer_select, .forward = select_forward, .backward = mf_select_grad,
    .cost = mf_cost_elementwise, .lua = "where", .inputs = "cond, x, y",
    .like_inputs = 1u << 1 | 1u << 2,
    .summary = "elementwise cond ? x : y (numbers take the other operand's dtype)",
    .topic = "compare",
    .details =
        "Elementwise choice: x where the bool tensor 'cond' is true, y where it is false, with "
        "broadcasting of all three. A Lua number for x or y takes the other's dtype.",
    .example =
        "x = mf.tensor{-1, 2, -3}\n"
        "mf.where(mf.greater(x, 0), x, 0)         --> {0, 2, 0}",
};

/* Differentiable between float dtypes; casts to or from integers pass no
 * gradient (the backward returns none for those). */
static const MfAttrDef cast_attrs[] = {
    {"dtype", MF_ATTR_DTYPE, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(dtype), 0,
     MF_FLOAT32, NULL, NULL},
};

const MfOpDesc mf_desc_cast = {
    .name = "Cast", .api = "cast", .arity = 1, .infer = infer_cast,
    .forward = cast_forward, .backward = mf_cast_grad, .cost = mf_cost_elementwise,
    .attrs = cast_attrs, .nattrs = MF_NATTRS(cast_attrs), .lua = "cast", .inputs = "x",
    .summary = "x converted to dtype; float to int truncates toward zero, to bool is x ~= 0",
    .topic = "creation",
    .details =
        "Converts 't' to another dtype. Float to integer truncates toward zero; anything to bool "
        "is t ~= 0; bool to a number gives 0 or 1. Ops refuse to mix dtypes, so mf.cast is how "
        "two tensors are brought to one dtype. Also a method: t:cast(\"float64\"). To uint8 "
        "(images: add, subtract, multiply, maximum, minimum and comparisons take it, wrapping "
        "modulo 256; other ops ask for a cast): int32/int64 keep the low 8 bits (TensorFlow, "
        "NumPy), floats truncate and saturate to 0..255 (NaN 0). To float16 or bfloat16: "
        "rounded to nearest even (help \"half\").",
    .example =
        "mf.cast(mf.tensor{1.7, -1.7}, \"int32\")   --> {1, -1}\n"
        "mf.cast(mf.tensor{0, 2}, \"bool\")         --> {false, true}\n"
        "mf.cast(mf.tensor{-3, 7.9, 300}, \"uint8\")  --> {0, 7, 255}\n"
        "mf.cast(mf.tensor({256, 257}, \"int32\"), \"uint8\")  --> {0, 1}",
};
