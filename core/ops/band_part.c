/* band_part.c — MatrixBandPart and Trilu: the elements of the innermost
 * matrices of x inside a band of diagonals, zeros elsewhere.
 *
 * One kernel keeps element (i, j) of every matrix (the last two axes, any
 * batch axes before them) when lo <= j - i <= hi and writes 0 elsewhere:
 *   MatrixBandPart (tf.linalg.band_part, mf.linalg.band_part(x, num_lower,
 *     num_upper)): lo = -num_lower, hi = num_upper, a negative count keeping
 *     the whole triangle;
 *   Trilu (torch.tril / torch.triu, mf.tril(x, k), mf.triu(x, k); the name
 *     is ONNX's): tril keeps j - i <= k, triu keeps j - i >= k.
 * A kept element is copied, so NaN and Inf stay where they are and never
 * leak into the zeros (no multiplication by a mask). Any dtype. Gradient:
 * the same op on dy (the op is a linear projection). */
#include <limits.h>
#include <string.h>

#include "common.h"

#define SHAPE_BUF 160

/* The band of diagonals kept, as offsets j - i. */
typedef struct Band {
    int64_t lo, hi;
} Band;

static Band band_of(const MfOpCall *c)
{
    const MfAttrs *a = c->attrs;
    if (c->op == MF_OP_TRILU)
        return a->upper ? (Band){a->diagonal, INT64_MAX} : (Band){INT64_MIN, a->diagonal};
    return (Band){a->num_lower < 0 ? INT64_MIN : -a->num_lower,
                  a->num_upper < 0 ? INT64_MAX : a->num_upper};
}

static MfStatus band_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    const char *api = c->op == MF_OP_MATRIX_BAND_PART ? "linalg.band_part"
                      : c->attrs->upper                 ? "triu" : "tril";
    char buf[SHAPE_BUF];
    if (x->rank < 2)
        return mf_err_set(MF_ESHAPE, "%s: expected a matrix or a batch of matrices (rank 2 or "
                          "more), got shape %s (rank %d)", api,
                          mf_shape_str(x->rank, x->shape, buf, sizeof buf), x->rank);
    if (c->op == MF_OP_MATRIX_BAND_PART && (c->attrs->num_lower < -1 || c->attrs->num_upper < -1))
        return mf_err_set(MF_EARG, "%s: num_lower and num_upper must be -1 (the whole "
                          "triangle) or >= 0, got %lld and %lld", api,
                          (long long)c->attrs->num_lower, (long long)c->attrs->num_upper);
    mf_spec_like(c, x, x->dtype);
    return MF_OK;
}

/* Row i of one matrix: columns j with lo <= j - i <= hi copied, the rest 0. */
static void band_row(char *dst, const char *src, int64_t i, int64_t n, int64_t cs, Band b,
                     size_t es)
{
    /* first kept column max(0, i + lo), last min(n - 1, i + hi), without
     * overflow (lo and hi may be near INT64_MIN or INT64_MAX) */
    int64_t first = b.lo <= -i ? 0 : b.lo >= n ? n : i + b.lo;
    int64_t last = b.hi >= n - 1 - i ? n - 1 : i + b.hi;
    memset(dst, 0, (size_t)n * es);
    for (int64_t j = first; j <= last; j++)
        memcpy(dst + (size_t)j * es, src + (size_t)(j * cs) * es, es);
}

static MfStatus band_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    int r = x->rank;
    int64_t m = x->shape[r - 2], n = x->shape[r - 1], idx[MF_MAX_RANK] = {0};
    if (mf_tensor_numel(x) == 0)
        return MF_OK;
    int64_t rows = mf_tensor_numel(x) / n;
    size_t es = mf_dtype_size(x->dtype);
    const char *src = mf_tensor_data(x);
    char *dst = mf_tensor_data(outs[0]);
    Band b = band_of(c);
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0; /* the source row idx[0..r-1) */
        for (int d = 0; d < r - 1; d++)
            off += idx[d] * x->strides[d];
        band_row(dst + (size_t)(row * n) * es, src + (size_t)off * es, row % m, n,
                 x->strides[r - 1], b, es);
        for (int d = r - 2; d >= 0 && ++idx[d] == x->shape[d]; d--)
            idx[d] = 0;
    }
    return MF_OK;
}

/* The band of dy: the op is a projection, its own adjoint. */
static MfStatus band_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0];
    return mf_op1(g->call->op, 1, &dy, g->call->attrs, &dinputs[0]);
}

static const MfAttrDef band_part_attrs[] = {
    {"num_lower", MF_ATTR_INT, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(num_lower), 0,
     0, NULL, NULL},
    {"num_upper", MF_ATTR_INT, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(num_upper), 0,
     0, NULL, NULL},
};

const MfOpDesc mf_desc_matrix_band_part = {
    .name = "MatrixBandPart", .api = "linalg.band_part", .arity = 1, .infer = band_infer,
    .forward = band_forward, .backward = band_grad, .cost = mf_cost_elementwise,
    .attrs = band_part_attrs, .nattrs = MF_NATTRS(band_part_attrs), .lua = "linalg.band_part",
    .inputs = "x", .topic = "linalg",
    .summary = "the band of diagonals of each matrix of x, zeros outside it",
    .grad_note = "the band part of dy",
    .details =
        "tf.linalg.band_part: keeps element (i, j) of each innermost matrix (the last two "
        "axes; the axes before them are batches) when (num_lower < 0 or i - j <= num_lower) "
        "and (num_upper < 0 or j - i <= num_upper), and sets the others to zero. -1 keeps the "
        "whole lower (upper) triangle: band_part(x, -1, 0) is the lower triangle with the "
        "diagonal, band_part(x, 0, 0) the diagonal, band_part(x, -1, -1) x itself. Any "
        "dtype; a causal attention mask is band_part(mf.ones{T, T}, -1, 0).",
    .example =
        "x = mf.tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}\n"
        "mf.linalg.band_part(x, -1, 0)      --> {{1, 0, 0}, {4, 5, 0}, {7, 8, 9}}\n"
        "mf.linalg.band_part(x, 0, 1)       --> {{1, 2, 0}, {0, 5, 6}, {0, 0, 9}}",
};

static const MfAttrDef trilu_attrs[] = {
    {"diagonal", MF_ATTR_INT, MF_ATTR_POSITIONAL, MF_ATTR_AT(diagonal), 0, 0, NULL, NULL},
    {"upper", MF_ATTR_BOOL, 0, MF_ATTR_AT(upper), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_trilu = {
    .name = "Trilu", .api = "tril", .arity = 1, .infer = band_infer, .forward = band_forward,
    .backward = band_grad, .cost = mf_cost_elementwise, .attrs = trilu_attrs,
    .nattrs = MF_NATTRS(trilu_attrs),
};

/* mf.tril and mf.triu: Trilu with 'upper' set by the function. */
static MfStatus trilu_call(bool upper, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                           int *nout)
{
    MfAttrs at = a ? *a : mf_attrs_default();
    at.upper = upper;
    return mf_op_call(MF_OP_TRILU, 1, in, &at, outs, nout);
}

static MfStatus tril_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                           int *nout)
{
    (void)n;
    return trilu_call(false, in, a, outs, nout);
}

static MfStatus triu_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                           int *nout)
{
    (void)n;
    return trilu_call(true, in, a, outs, nout);
}

static const MfAttrDef diagonal_attr[] = {
    {"diagonal", MF_ATTR_INT, MF_ATTR_POSITIONAL, MF_ATTR_AT(diagonal), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_tril = {
    .name = "tril", .api = "tril", .arity = 1, .attrs = diagonal_attr, .nattrs = MF_NATTRS(diagonal_attr),
    .lua = "tril", .inputs = "x", .entry = tril_entry, .topic = "linalg",
    .summary = "the lower triangle of each matrix of x (torch.tril), zeros above it",
    .grad_note = "the lower triangle of dy",
    .details =
        "torch.tril: keeps element (i, j) of each innermost matrix when j - i <= diagonal and "
        "sets the others to zero. diagonal = 0 (the default) keeps the main diagonal, 1 one "
        "diagonal above it too, -1 starts one below it. The op is Trilu (ONNX's name), as for "
        "mf.triu. A causal mask: mf.tril(mf.ones{T, T}).",
    .example =
        "x = mf.tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}\n"
        "mf.tril(x)                         --> {{1, 0, 0}, {4, 5, 0}, {7, 8, 9}}\n"
        "mf.tril(x, -1)                     --> {{0, 0, 0}, {4, 0, 0}, {7, 8, 0}}",
};

const MfOpDesc mf_desc_triu = {
    .name = "triu", .api = "triu", .arity = 1, .attrs = diagonal_attr, .nattrs = MF_NATTRS(diagonal_attr),
    .lua = "triu", .inputs = "x", .entry = triu_entry, .topic = "linalg",
    .summary = "the upper triangle of each matrix of x (torch.triu), zeros below it",
    .grad_note = "the upper triangle of dy",
    .details =
        "torch.triu: keeps element (i, j) of each innermost matrix when j - i >= diagonal and "
        "sets the others to zero. diagonal = 0 (the default) keeps the main diagonal, 1 starts "
        "one above it (the positions a causal mask hides), -1 one below. The op is Trilu.",
    .example =
        "x = mf.tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}\n"
        "mf.triu(x)                         --> {{1, 2, 3}, {0, 5, 6}, {0, 0, 9}}\n"
        "mf.triu(x, 1)                      --> {{0, 2, 3}, {0, 0, 6}, {0, 0, 0}}",
};
