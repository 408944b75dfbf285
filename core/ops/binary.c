/* binary.c — elementwise binary arithmetic with NumPy broadcasting:
 * AddV2, Sub, Mul, RealDiv, FloorMod, Pow, Maximum, Minimum, SquaredDifference.
 *
 * Kernels walk rows with 'MfLoop' and run a typed loop per dtype, with
 * separate loops for the common stride patterns (both contiguous, one side
 * a broadcast scalar; binary_rows.h, shared with compare.c) so the compiler
 * can vectorise them. Integer arithmetic wraps (computed in unsigned types)
 * as TensorFlow's does, instead of being undefined behaviour. Integer
 * division is floor division; an integer division or modulo by zero is an
 * error. */
#include <math.h>

#include "binary_rows.h"
#include "common.h"
#include "grads_math.h"
#include "vecmath.h"

/* Runs EXPR (in terms of 'a' and 'b' of type T) over every row, into a T
 * output. */
#define BINARY_ROWS(T, EXPR) BINARY_ROWS_TO(T, T, EXPR)

/* Dispatches on dtype: FEXPR for floats, IEXPR for ints ('U' is the unsigned
 * type of the same width, for wrapping arithmetic). */
#define BINARY_FORWARD(FEXPR, IEXPR)                                               \
    MfTensor *out = outs[0];                                                       \
    switch (out->dtype) {                                                          \
    case MF_FLOAT32: { BINARY_ROWS(float, FEXPR); break; }                         \
    case MF_FLOAT64: { BINARY_ROWS(double, FEXPR); break; }                        \
    case MF_INT32: {                                                               \
        typedef uint32_t U __attribute__((unused));                                \
        BINARY_ROWS(int32_t, IEXPR);                                               \
        break;                                                                     \
    }                                                                              \
    case MF_INT64: {                                                               \
        typedef uint64_t U __attribute__((unused));                                \
        BINARY_ROWS(int64_t, IEXPR);                                               \
        break;                                                                     \
    }                                                                              \
    default: return mf_err_set(MF_EINTERNAL, "%s: no kernel for %s", op_api(c),    \
                               mf_dtype_name(out->dtype));                         \
    }                                                                              \
    return MF_OK

/* uint8 for the ops that allow it (add, subtract, multiply, maximum,
 * minimum: wrapping, as TensorFlow's), ahead of BINARY_FORWARD. */
#define BINARY_FORWARD_U8(EXPR)                                                    \
    if (outs[0]->dtype == MF_UINT8) {                                              \
        MfTensor *out = outs[0];                                                   \
        BINARY_ROWS(uint8_t, EXPR);                                                \
        return MF_OK;                                                              \
    }

/* add, subtract, multiply, maximum, minimum also take uint8 (wrapping). */
static bool takes_uint8(MfOpId op)
{
    return op == MF_OP_ADD || op == MF_OP_SUB || op == MF_OP_MUL || op == MF_OP_MAXIMUM ||
           op == MF_OP_MINIMUM;
}

static MfStatus infer_numeric(MfOpCall *c)
{
    if (takes_uint8(c->op))
        return mf_infer_broadcast(c, MF_NUMERIC | MF_MASK(MF_UINT8),
                                  "a numeric dtype (float32, float64, int32, int64, uint8)", -1);
    if (c->inputs[0]->dtype == MF_UINT8 && c->inputs[1]->dtype == MF_UINT8)
        return mf_err_set(MF_EDTYPE, "%s: uint8 is not supported (add, subtract, multiply, "
                          "maximum and minimum are): cast it first, mf.cast(x, \"int32\") or "
                          "\"float32\"", op_api(c));
    return mf_infer_broadcast(c, MF_NUMERIC, "a numeric dtype (float32, float64, int32, int64)",
                              -1);
}

/* True when the integer divisor input holds a zero (checked before dividing). */
static bool has_int_zero(const MfTensor *t)
{
    int64_t n = mf_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (mf_tensor_get(t, i) == 0)
            return true;
    return false;
}

static MfStatus check_int_divisor(const MfOpCall *c)
{
    const MfTensor *b = c->inputs[1];
    if (mf_dtype_is_int(b->dtype) && has_int_zero(b))
        return mf_err_set(MF_EARG, "%s: integer division by zero", op_api(c));
    return MF_OK;
}

/* Floor division and modulo for integers (Python's and TensorFlow's rules). */
#define IFLOORDIV(a, b) ((a) / (b) - (((a) % (b) != 0) && (((a) < 0) != ((b) < 0))))
#define IFLOORMOD(a, b)                                                            \
    ((a) % (b) + ((((a) % (b)) != 0 && (((a) % (b)) < 0) != ((b) < 0)) ? (b) : 0))

static inline float fmodf_floor(float a, float b)
{
    float r = fmodf(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static inline double fmod_floor(double a, double b)
{
    double r = fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static inline int64_t ipow(int64_t a, int64_t b)
{
    uint64_t r = 1, base = (uint64_t)a;
    for (; b > 0; b >>= 1) {
        if (b & 1)
            r *= base;
        base *= base;
    }
    return (int64_t)r;
}

static bool has_negative(const MfTensor *t)
{
    int64_t n = mf_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (mf_tensor_get(t, i) < 0)
            return true;
    return false;
}

/* NaN propagates through maximum/minimum, as in TensorFlow. Large float
 * calls are split over the worker pool by the dispatcher
 * (MF_OP_ELEMENTWISE, elementwise_split.c). */
#define MAXIMUM_F ((a > b || a != a) ? a : b)
#define MINIMUM_F ((a < b || a != a) ? a : b)

static MfStatus add_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD_U8((uint8_t)(a + b))
    BINARY_FORWARD(a + b, (U)a + (U)b);
}

static MfStatus sub_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD_U8((uint8_t)(a - b))
    BINARY_FORWARD(a - b, (U)a - (U)b);
}

static MfStatus mul_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD_U8((uint8_t)(a * b))
    BINARY_FORWARD(a * b, (U)a * (U)b);
}

static MfStatus div_forward(const MfOpCall *c, MfTensor **outs)
{
    MfStatus st = check_int_divisor(c);
    if (st != MF_OK)
        return st;
    BINARY_FORWARD(a / b, (b == -1 ? (U)0 - (U)a : (U)IFLOORDIV(a, b)));
}

static MfStatus mod_forward(const MfOpCall *c, MfTensor **outs)
{
    MfStatus st = check_int_divisor(c);
    if (st != MF_OK)
        return st;
    MfTensor *out = outs[0];
    switch (out->dtype) {
    case MF_FLOAT32: BINARY_ROWS(float, fmodf_floor(a, b)); break;
    case MF_FLOAT64: BINARY_ROWS(double, fmod_floor(a, b)); break;
    case MF_INT32: BINARY_ROWS(int32_t, b == -1 ? 0 : IFLOORMOD(a, b)); break;
    case MF_INT64: BINARY_ROWS(int64_t, b == -1 ? 0 : IFLOORMOD(a, b)); break;
    default: return mf_err_set(MF_EINTERNAL, "mod: no kernel for this dtype");
    }
    return MF_OK;
}

static MfStatus pow_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_dtype_is_int(c->inputs[1]->dtype) && has_negative(c->inputs[1]))
        return mf_err_set(MF_EARG, "pow: integers to negative integer powers are not allowed "
                          "(cast to float first)");
    if (mf_vec_pow(c->inputs[0], c->inputs[1], outs[0]))
        return MF_OK;
    MfTensor *out = outs[0];
    switch (out->dtype) {
    case MF_FLOAT32: BINARY_ROWS(float, powf(a, b)); break;
    case MF_FLOAT64: BINARY_ROWS(double, pow(a, b)); break;
    case MF_INT32: BINARY_ROWS(int32_t, (int32_t)ipow(a, b)); break;
    case MF_INT64: BINARY_ROWS(int64_t, ipow(a, b)); break;
    default: return mf_err_set(MF_EINTERNAL, "pow: no kernel for this dtype");
    }
    return MF_OK;
}

static MfStatus maximum_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD_U8(a > b ? a : b)
    BINARY_FORWARD(MAXIMUM_F, a > b ? a : b);
}

static MfStatus minimum_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD_U8(a < b ? a : b)
    BINARY_FORWARD(MINIMUM_F, a < b ? a : b);
}

/* (x - y)^2: the difference rounded once, then squared (TensorFlow's) */
static MfStatus squared_difference_forward(const MfOpCall *c, MfTensor **outs)
{
    BINARY_FORWARD((a - b) * (a - b), ((U)a - (U)b) * ((U)a - (U)b));
}

#define BINARY_OP(sym, tfname, apiname, fwd, bwd, ...)                             \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = 2, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,         \
        .infer = infer_numeric,                                                    \
        .forward = fwd, .backward = bwd, .cost = mf_cost_elementwise,              \
        .lua = apiname, .inputs = "x, y", .summary = __VA_ARGS__,                 \
    }

BINARY_OP(mf_desc_add, "AddV2", "add", add_forward, mf_add_grad,
         "elementwise x + y (broadcasting)",
    .topic = "math",
    .grad_note = "dx = dy and dy_input = dy, each summed over the axes it was broadcast along",
    .details =
        "Elementwise a + b with broadcasting (NumPy/TensorFlow rules: trailing dimensions align, "
        "size 1 stretches). Either side may be a Lua number, which takes the tensor's dtype; two "
        "tensors must have the same dtype. Same as the + operator.",
    .example =
        "mf.add(mf.tensor{1, 2}, 10)                  --> {11, 12}\n"
        "mf.add(mf.tensor{{1}, {2}}, mf.tensor{10, 20})  --> {{11, 21}, {12, 22}}");
BINARY_OP(mf_desc_sub, "Sub", "subtract", sub_forward, mf_sub_grad,
         "elementwise x - y (broadcasting)",
    .topic = "math",
    .grad_note = "dx = dy, dy_input = -dy, each summed over its broadcast axes",
    .details =
        "Elementwise a - b with broadcasting; the - operator.",
    .example =
        "a = mf.tensor{5, 7}\n"
        "mf.subtract(a, 2)     --> {3, 5}\n"
        "10 - a                --> {5, 3}");
BINARY_OP(mf_desc_mul, "Mul", "multiply", mul_forward, mf_mul_grad,
         "elementwise x * y (broadcasting)",
    .topic = "math",
    .grad_note = "dx = dy * y, dy_input = dy * x, each summed over its broadcast axes",
    .details =
        "Elementwise a * b with broadcasting (not the matrix product: see mf.matmul); the * "
        "operator.",
    .example =
        "a = mf.tensor{{1, 2}, {3, 4}}\n"
        "mf.multiply(a, mf.tensor{10, 100})   --> {{10, 200}, {30, 400}}");
BINARY_OP(mf_desc_div, "RealDiv", "divide", div_forward, mf_div_grad,
         "elementwise x / y (broadcasting)",
    .topic = "math",
    .grad_note = "dx = dy / y, dy_input = -dy * x / y^2, each summed over its broadcast axes",
    .details =
        "Elementwise a / b with broadcasting; the / operator. Integer tensors divide with "
        "floor division.",
    .example =
        "mf.divide(mf.tensor{1, 3}, 2)        --> {0.5, 1.5}");
BINARY_OP(mf_desc_mod, "FloorMod", "mod", mod_forward, mf_mod_grad,
         "elementwise floor modulo: the sign of y (as Python)",
    .topic = "math",
    .details =
        "Elementwise remainder of floor division (TensorFlow's floormod): the result has the "
        "sign of b, as Lua's %; the % operator.",
    .example =
        "mf.mod(mf.tensor{5, -5}, 3)          --> {2, 1}");
BINARY_OP(mf_desc_pow, "Pow", "pow", pow_forward, mf_pow_grad,
         "elementwise x ^ y",
    .topic = "math",
    .grad_note = "dx = dy * p x^(p-1), dp = dy * x^p log(x)",
    .details =
        "Elementwise a raised to the power b, with broadcasting; the ^ operator."
        MF_VEC_ACCURACY_FLOAT("2"),
    .example =
        "mf.pow(mf.tensor{2, 3}, 2)           --> {4, 9}\n"
        "2 ^ mf.tensor{1, 3}                  --> {2, 8}");
BINARY_OP(mf_desc_maximum, "Maximum", "maximum", maximum_forward, mf_maximum_grad,
         "elementwise larger of x and y",
    .topic = "math",
    .details =
        "Elementwise larger of a and b, with broadcasting.",
    .example =
        "mf.maximum(mf.tensor{1, 5}, mf.tensor{3, 2})   --> {3, 5}");
BINARY_OP(mf_desc_minimum, "Minimum", "minimum", minimum_forward, mf_minimum_grad,
         "elementwise smaller of x and y",
    .topic = "math",
    .details =
        "Elementwise smaller of a and b, with broadcasting.",
    .example =
        "mf.minimum(mf.tensor{1, 5}, 2)       --> {1, 2}");
BINARY_OP(mf_desc_squared_difference, "SquaredDifference", "squared_difference",
          squared_difference_forward, mf_squared_difference_grad,
         "elementwise (x - y)^2 (broadcasting)",
    .topic = "math",
    .grad_note = "dx = 2 dy (x - y), dy_input = -2 dy (x - y), each summed over its broadcast "
                 "axes",
    .details =
        "Elementwise (x - y)^2 with broadcasting in one pass (TensorFlow's SquaredDifference), "
        "float or integer (integers wrap, as TensorFlow's).",
    .example =
        "mf.squared_difference(mf.tensor{1, 5}, 3)   --> {4, 4}");
