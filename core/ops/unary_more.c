/* unary_more.c — more elementwise math (doc/api.md "Ops"): Tan, Sinh,
 * Cosh, Asin, Acos, Atan, Expm1, Erf, Erfc, Acosh, Reciprocal, float32 and float64
 * (integer inputs are refused: use mf.cast). Bound as mf.tan(x) ... and
 * tensor methods (MF_OP_SIMPLE); their gradients are in unary_more_grad.c. */
#include <math.h>

#include "common.h"
#include "grads_math.h"
#include "unary_loop.h"
#include "vecmath.h"

static MfStatus tan_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_TAN, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(tanf(a), tan(a), NOINT);
}

static MfStatus sinh_forward(const MfOpCall *c, MfTensor **outs)
{
    UNARY_FORWARD(sinhf(a), sinh(a), NOINT);
}

static MfStatus cosh_forward(const MfOpCall *c, MfTensor **outs)
{
    UNARY_FORWARD(coshf(a), cosh(a), NOINT);
}

static MfStatus asin_forward(const MfOpCall *c, MfTensor **outs)
{
    UNARY_FORWARD(asinf(a), asin(a), NOINT);
}

static MfStatus acos_forward(const MfOpCall *c, MfTensor **outs)
{
    UNARY_FORWARD(acosf(a), acos(a), NOINT);
}

static MfStatus atan_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ATAN, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(atanf(a), atan(a), NOINT);
}

static MfStatus expm1_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_EXPM1, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(expm1f(a), expm1(a), NOINT);
}

static MfStatus erf_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ERF, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(erff(a), erf(a), NOINT);
}

static MfStatus erfc_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ERFC, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(erfcf(a), erfc(a), NOINT);
}

static MfStatus acosh_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ACOSH, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(acoshf(a), acosh(a), NOINT);
}

static MfStatus reciprocal_forward(const MfOpCall *c, MfTensor **outs)
{
    UNARY_FORWARD(1.0f / a, 1.0 / a, NOINT);
}

#define MORE_OP(sym, tfname, apiname, fwd, bwd, ...)                               \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = 1, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,         \
        .infer = mf_infer_float_like, .forward = fwd, .backward = bwd,                     \
        .cost = mf_cost_elementwise, .lua = apiname, .inputs = "x",                \
        .summary = __VA_ARGS__,                                                    \
    }

MORE_OP(mf_desc_tan, "Tan", "tan", tan_forward, mf_tan_grad,
        "elementwise tangent",
    .topic = "math",
    .details =
        "Elementwise the tangent (TensorFlow's Tan), float32 or float64. Gradient: dy * (1 + "
        "y^2)." MF_VEC_ACCURACY_FLOAT("3"),
    .example =
        "mf.tan(mf.tensor{0})                 --> {0}");
MORE_OP(mf_desc_sinh, "Sinh", "sinh", sinh_forward, mf_sinh_grad,
        "elementwise hyperbolic sine",
    .topic = "math",
    .details =
        "Elementwise the hyperbolic sine (TensorFlow's Sinh), float32 or float64. "
        "Gradient: dy * cosh(x).",
    .example =
        "mf.sinh(mf.tensor{0})                --> {0}");
MORE_OP(mf_desc_cosh, "Cosh", "cosh", cosh_forward, mf_cosh_grad,
        "elementwise hyperbolic cosine",
    .topic = "math",
    .details =
        "Elementwise the hyperbolic cosine (TensorFlow's Cosh), float32 or float64. "
        "Gradient: dy * sinh(x).",
    .example =
        "mf.cosh(mf.tensor{0})                --> {1}");
MORE_OP(mf_desc_asin, "Asin", "asin", asin_forward, mf_asin_grad,
        "elementwise arcsine",
    .topic = "math",
    .details =
        "Elementwise the arcsine (x in [-1, 1]) (TensorFlow's Asin), float32 or float64. "
        "Gradient: dy / sqrt(1 - x^2).",
    .example =
        "mf.asin(mf.tensor{0, 1})             --> {0, 1.5708}");
MORE_OP(mf_desc_acos, "Acos", "acos", acos_forward, mf_acos_grad,
        "elementwise arccosine",
    .topic = "math",
    .details =
        "Elementwise the arccosine (x in [-1, 1]) (TensorFlow's Acos), float32 or float64. "
        "Gradient: -dy / sqrt(1 - x^2).",
    .example =
        "mf.acos(mf.tensor{1})                --> {0}");
MORE_OP(mf_desc_atan, "Atan", "atan", atan_forward, mf_atan_grad,
        "elementwise arctangent",
    .topic = "math",
    .details =
        "Elementwise the arctangent (TensorFlow's Atan), float32 or float64. "
        "Gradient: dy / (1 + x^2)." MF_VEC_ACCURACY_FLOAT("2.5"),
    .example =
        "mf.atan(mf.tensor{0})                --> {0}");
MORE_OP(mf_desc_expm1, "Expm1", "expm1", expm1_forward, mf_expm1_grad,
        "elementwise e^x - 1, exact for small x",
    .topic = "math",
    .details =
        "Elementwise exp(x) - 1, accurate near 0 (TensorFlow's Expm1), float32 or float64. "
        "Gradient: dy * (y + 1)." MF_VEC_ACCURACY_BOTH("2", "1"),
    .example =
        "mf.expm1(mf.tensor{0})               --> {0}");
MORE_OP(mf_desc_erf, "Erf", "erf", erf_forward, mf_erf_grad,
        "elementwise error function",
    .topic = "math",
    .details =
        "Elementwise the error function (TensorFlow's Erf), float32 or float64. "
        "Gradient: dy * 2 / sqrt(pi) * exp(-x^2)." MF_VEC_ACCURACY_FLOAT("3"),
    .example =
        "mf.erf(mf.tensor{0})                 --> {0}");
MORE_OP(mf_desc_erfc, "Erfc", "erfc", erfc_forward, mf_erfc_grad,
        "elementwise complementary error function 1 - erf(x)",
    .topic = "math",
    .details =
        "Elementwise 1 - erf(x) without the cancellation of that difference (TensorFlow's "
        "Erfc, torch.erfc), float32 or float64: accurate where erfc(x) is tiny (x up to about "
        "10 in float32). Gradient: -dy * 2 / sqrt(pi) * exp(-x^2)." MF_VEC_ACCURACY_FLOAT("4"),
    .example =
        "mf.erfc(mf.tensor{0, 5})             --> {1, 1.53746e-12}");
MORE_OP(mf_desc_acosh, "Acosh", "acosh", acosh_forward, mf_acosh_grad,
        "elementwise inverse hyperbolic cosine (x >= 1)",
    .topic = "math",
    .details =
        "Elementwise the inverse hyperbolic cosine (TensorFlow's Acosh), float32 or float64; "
        "NaN below 1, as libm. Gradient: dy / sqrt(x^2 - 1)." MF_VEC_ACCURACY_FLOAT("2.5"),
    .example =
        "mf.acosh(mf.tensor{1, 2})            --> {0, 1.31696}");
MORE_OP(mf_desc_reciprocal, "Reciprocal", "reciprocal", reciprocal_forward,
        mf_reciprocal_grad,
        "elementwise 1 / x",
    .topic = "math",
    .details =
        "Elementwise 1 / x (TensorFlow's Reciprocal), float32 or float64. Gradient: -dy * y^2.",
    .example =
        "mf.reciprocal(mf.tensor{2, 4})       --> {0.5, 0.25}");
