/* view.c — the view ops: Transpose, Reshape, ExpandDims, Squeeze.
 *
 * Each op is MF_OP_VIEW: 'forward' creates its output itself with
 * 'mf_tensor_view', a new header over the input's storage with permuted,
 * regrouped or extended strides, so no element moves. The one exception is
 * Reshape of a non-contiguous input (a transposed or sliced view): it views
 * a contiguous copy, so the result always reads in row-major order. Sharing
 * storage is safe because tensors are immutable.
 *
 * Attributes (0-based, normalised by the caller):
 *   Transpose  axes[0..naxes) = perm (naxes 0: reverse the axes)
 *   Reshape    ints[0..nints) = the new shape, one entry may be -1
 *   ExpandDims axis = where the new size-1 axis goes (0..rank)
 *   Squeeze    axes[0..naxes) = axes to drop (naxes 0: every size-1 axis)
 * 'infer' accepts unknown input dims (-1, graph mode) and propagates them.
 * Messages name axes 1-based, as the Lua API does. */
#include "view.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "fill.h"
#include "linalg_grad.h"

#define SHAPE_BUF 160

/* Views move no data: no FLOPs, no bytes (the profiler's view of them). */
static MfCost view_cost(const MfOpCall *c)
{
    (void)c;
    return (MfCost){0, 0};
}

static void set_out(MfOpCall *c, const MfTensor *t, int rank, const int64_t *shape)
{
    c->noutputs = 1;
    c->out[0].dtype = t->dtype;
    c->out[0].rank = rank;
    for (int i = 0; i < rank; i++)
        c->out[0].shape[i] = shape[i];
}

/* Makes the view op's output from the inferred shape and 'strides'. */
static MfStatus make_view(const MfOpCall *c, const MfTensor *t, const int64_t *strides,
                          MfTensor **outs)
{
    outs[0] = mf_tensor_view(t, c->out[0].rank, c->out[0].shape, strides, t->offset);
    return outs[0] ? MF_OK : MF_ENOMEM;
}

/* ---- Transpose ------------------------------------------------------------- */

static void get_perm(const MfAttrs *a, int rank, int64_t *perm)
{
    for (int i = 0; i < rank; i++)
        perm[i] = a->naxes == 0 ? rank - 1 - i : a->axes[i];
}

static MfStatus transpose_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    char buf[SHAPE_BUF];
    if (c->attrs->naxes != 0 && c->attrs->naxes != t->rank)
        return mf_err_set(MF_EARG, "transpose: perm has %d entries but the tensor has rank %d "
                          "(shape %s)", c->attrs->naxes, t->rank,
                          mf_shape_str(t->rank, t->shape, buf, sizeof buf));
    int64_t perm[MF_MAX_RANK], shape[MF_MAX_RANK];
    bool seen[MF_MAX_RANK] = {false};
    get_perm(c->attrs, t->rank, perm);
    for (int i = 0; i < t->rank; i++) {
        if (perm[i] < 0 || perm[i] >= t->rank)
            return mf_err_set(MF_EARG, "transpose: perm entry %d is %lld, out of range for "
                              "rank %d (axes are 1-based: 1..%d)", i + 1,
                              (long long)perm[i] + 1, t->rank, t->rank);
        if (seen[perm[i]])
            return mf_err_set(MF_EARG, "transpose: axis %lld appears twice in perm (it must "
                              "list each axis 1..%d once)", (long long)perm[i] + 1, t->rank);
        seen[perm[i]] = true;
        shape[i] = t->shape[perm[i]];
    }
    set_out(c, t, t->rank, shape);
    return MF_OK;
}

static MfStatus transpose_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int64_t perm[MF_MAX_RANK], strides[MF_MAX_RANK];
    get_perm(c->attrs, t->rank, perm);
    for (int i = 0; i < t->rank; i++)
        strides[i] = t->strides[perm[i]];
    return make_view(c, t, strides, outs);
}

static const MfAttrDef transpose_attrs[] = {
    {"perm", MF_ATTR_AXES, MF_ATTR_POSITIONAL, MF_ATTR_AT(axes), MF_ATTR_AT(naxes), 0, NULL,
     NULL},
};

const MfOpDesc mf_desc_transpose = {
    .name = "Transpose", .api = "transpose", .arity = 1, .flags = MF_OP_VIEW,
    .infer = transpose_infer, .forward = transpose_forward,
    .backward = mf_transpose_grad, .cost = view_cost,
    .attrs = transpose_attrs, .nattrs = MF_NATTRS(transpose_attrs), .lua = "transpose",
    .inputs = "x", .summary = "axes permuted by perm (1-based; none: reversed), a view",
    .topic = "linalg",
    .grad_note = "dx = dy transposed by the inverse permutation",
    .details =
        "Permutes the axes: axis i of the result is axis perm[i] of 't' (1-based). Without "
        "'perm' the axes are reversed (the matrix transpose for rank 2). The result is a view.",
    .example =
        "x = mf.tensor{{1, 2, 3}, {4, 5, 6}}\n"
        "mf.transpose(x)                           --> {{1, 4}, {2, 5}, {3, 6}}\n"
        "mf.transpose(mf.zeros{2, 3, 4}, {3, 1, 2}).shape  --> {4, 2, 3}",
};

/* ---- Reshape --------------------------------------------------------------- */

/* Like 'mf_shape_str' but shows a requested -1 as "-1" rather than "?". */
static char *request_str(int rank, const int64_t *shape, char *buf, int cap)
{
    int n = snprintf(buf, (size_t)cap, "(");
    for (int i = 0; i < rank && n < cap; i++)
        n += snprintf(buf + n, (size_t)(cap - n), "%s%lld", i ? "," : "", (long long)shape[i]);
    if (n < cap)
        snprintf(buf + n, (size_t)(cap - n), rank == 1 ? ",)" : ")");
    return buf;
}

/* Checks the requested shape: finds the -1 ('*infer_at', -1 when none) and
 * the product of the other dims. */
static MfStatus reshape_request(const MfOpCall *c, int *infer_at, int64_t *known)
{
    const MfAttrs *a = c->attrs;
    char buf[SHAPE_BUF];
    if (a->nints < 0 || a->nints > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "reshape: the new shape has rank %d, at most %d is "
                          "supported", a->nints, MF_MAX_RANK);
    *infer_at = -1;
    *known = 1;
    /* the product without zero dims: (0,2^40,2^40) is too large too; '*known'
     * (0 or at most 'extent') cannot overflow */
    int64_t extent = 1;
    for (int i = 0; i < a->nints; i++) {
        int64_t d = a->ints[i];
        if (d == -1 && *infer_at >= 0)
            return mf_err_set(MF_ESHAPE, "reshape: only one dimension can be -1 (inferred), "
                              "got shape %s", request_str(a->nints, a->ints, buf, sizeof buf));
        if (d < -1)
            return mf_err_set(MF_ESHAPE, "reshape: dimensions must be >= 0 or -1 (inferred), "
                              "got shape %s", request_str(a->nints, a->ints, buf, sizeof buf));
        if (d == -1)
            *infer_at = i;
        else if (d > 0 && extent > MF_MAX_EXTENT / d)   /* mf_shape_fits's rule */
            return mf_err_set(MF_ESHAPE, "reshape: shape %s is too large",
                              request_str(a->nints, a->ints, buf, sizeof buf));
        else {
            *known *= d;
            extent *= d > 0 ? d : 1;
        }
    }
    return MF_OK;
}

static bool all_known(const MfTensor *t)
{
    for (int i = 0; i < t->rank; i++)
        if (t->shape[i] < 0)
            return false;
    return true;
}

static MfStatus reshape_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    int infer_at = -1;
    int64_t known = 1;
    MfStatus st = reshape_request(c, &infer_at, &known);
    if (st != MF_OK)
        return st;
    set_out(c, t, a->nints, a->ints);
    if (!all_known(t))
        return MF_OK; /* graph mode: the -1 stays unknown until run time */
    int64_t n = mf_tensor_numel(t);
    if (infer_at >= 0 && known > 0 && n % known == 0) {
        c->out[0].shape[infer_at] = n / known;
        return MF_OK;
    }
    if (infer_at < 0 && known == n)
        return MF_OK;
    char from[SHAPE_BUF], to[SHAPE_BUF];
    mf_shape_str(t->rank, t->shape, from, sizeof from);
    request_str(a->nints, a->ints, to, sizeof to);
    if (infer_at < 0)
        return mf_err_set(MF_ESHAPE, "reshape: cannot reshape a tensor of shape %s (%lld "
                          "element%s) into shape %s (%lld element%s)", from, (long long)n,
                          n == 1 ? "" : "s", to, (long long)known, known == 1 ? "" : "s");
    if (known == 0)
        return mf_err_set(MF_ESHAPE, "reshape: cannot infer the -1 in shape %s for a tensor of "
                          "shape %s (%lld elements): the other dimensions multiply to 0", to,
                          from, (long long)n);
    return mf_err_set(MF_ESHAPE, "reshape: cannot reshape a tensor of shape %s (%lld elements) "
                      "into shape %s: %lld is not a multiple of %lld", from, (long long)n, to,
                      (long long)n, (long long)known);
}

static MfStatus reshape_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *src = mf_tensor_contiguous(c->inputs[0]);
    if (!src)
        return MF_ENOMEM;
    int64_t strides[MF_MAX_RANK];
    mf_shape_strides(c->out[0].rank, c->out[0].shape, strides);
    MfStatus st = make_view(c, src, strides, outs);
    mf_tensor_release(src);
    return st;
}

/* shape: an array, a number or a 1-D int tensor; one -1 is inferred; a
 * symbolic one (mf.shape of a -1 placeholder) is read when the graph runs */
static const MfAttrDef reshape_attrs[] = {
    {"shape", MF_ATTR_INTS,
     MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED | MF_ATTR_SHAPE | MF_ATTR_BY_TENSOR,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), -1, NULL, NULL},
};

/* Lua's reshape: with a shape given as a symbolic tensor (a second input)
 * it is ReshapeLike against Fill(shape, 0) (fill.h). */
static MfStatus reshape_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                              int *nout)
{
    if (n == 1)
        return mf_op_call(MF_OP_RESHAPE, 1, in, a, outs, nout);
    *nout = 1;
    MfStatus st = mf_reshape_by(in[0], in[1], outs);
    if (st != MF_OK && strncmp(mf_err_msg(), "reshape", 7) != 0)
        mf_err_prefix("reshape");   /* its inner ops name themselves */
    return st;
}

const MfOpDesc mf_desc_reshape = {
    .name = "Reshape", .api = "reshape", .arity = 1, .flags = MF_OP_VIEW,
    .infer = reshape_infer, .forward = reshape_forward,
    .backward = mf_reshape_back_grad, .cost = view_cost,
    .attrs = reshape_attrs, .nattrs = MF_NATTRS(reshape_attrs), .lua = "reshape",
    .inputs = "x", .summary = "the same elements in a new shape (one -1 is inferred)",
    .entry = reshape_entry,
    .topic = "shape",
    .grad_note = "dx = dy reshaped to x's shape",
    .details =
        "The same elements in a new shape with the same number of elements; one entry may be -1 "
        "and is then inferred. A view when 'x' is contiguous. The shape may be a 1-D int tensor, "
        "also a symbolic one (mf.shape of a placeholder with -1 dims), read when the graph runs.",
    .example =
        "x = mf.reshape(mf.range(6), {2, 3})\n"
        "x                                --> {{0, 1, 2}, {3, 4, 5}}\n"
        "mf.reshape(x, {-1}).shape        --> {6}",
};

/* ---- ExpandDims ------------------------------------------------------------ */

static MfStatus expand_dims_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    int64_t axis = c->attrs->axis;
    if (axis < 0 || axis > t->rank)
        return mf_err_set(MF_EARG, "expand_dims: axis %lld out of range for rank %d (axes are "
                          "1-based: 1..%d)", (long long)axis + 1, t->rank, t->rank + 1);
    if (t->rank == MF_MAX_RANK)
        return mf_err_set(MF_EARG, "expand_dims: the result would have rank %d, at most %d is "
                          "supported", t->rank + 1, MF_MAX_RANK);
    int64_t shape[MF_MAX_RANK];
    for (int i = 0, j = 0; i <= t->rank; i++)
        shape[i] = i == axis ? 1 : t->shape[j++];
    set_out(c, t, t->rank + 1, shape);
    return MF_OK;
}

static MfStatus expand_dims_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int64_t axis = c->attrs->axis, strides[MF_MAX_RANK];
    /* the new axis has size 1, so its stride is never used; this one keeps
     * a contiguous input contiguous */
    int64_t inner = axis < t->rank ? t->strides[axis] * t->shape[axis] : 1;
    for (int i = 0, j = 0; i <= t->rank; i++)
        strides[i] = i == axis ? inner : t->strides[j++];
    return make_view(c, t, strides, outs);
}

static const MfAttrDef expand_dims_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED | MF_ATTR_PAST_END,
     MF_ATTR_AT(axis), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_expand_dims = {
    .name = "ExpandDims", .api = "expand_dims", .arity = 1, .flags = MF_OP_VIEW,
    .infer = expand_dims_infer, .forward = expand_dims_forward,
    .backward = mf_reshape_back_grad, .cost = view_cost,
    .attrs = expand_dims_attrs, .nattrs = MF_NATTRS(expand_dims_attrs), .lua = "expand_dims",
    .inputs = "x", .summary = "a new axis of size 1 at axis (1..rank+1)",
    .topic = "shape",
    .details =
        "Inserts an axis of size 1 at position 'axis' (1 .. rank+1; negative counts from the "
        "end).",
    .example =
        "mf.expand_dims(mf.tensor{1, 2}, 1).shape    --> {1, 2}\n"
        "mf.expand_dims(mf.tensor{1, 2}, 2).shape    --> {2, 1}",
};

/* ---- Squeeze --------------------------------------------------------------- */

/* Marks the axes to drop; with no axes listed, every axis of size 1 (an
 * unknown dim is kept: it may not be 1 at run time). */
static MfStatus squeeze_axes(const MfOpCall *c, bool *drop)
{
    const MfTensor *t = c->inputs[0];
    const MfAttrs *a = c->attrs;
    for (int i = 0; i < t->rank; i++)
        drop[i] = a->naxes == 0 && t->shape[i] == 1;
    for (int k = 0; k < a->naxes; k++) {
        int64_t ax = a->axes[k];
        char buf[SHAPE_BUF];
        if (ax < 0 || ax >= t->rank)
            return mf_err_set(MF_EARG, "squeeze: axis %lld out of range for rank %d (axes are "
                              "1-based: 1..%d)", (long long)ax + 1, t->rank, t->rank);
        if (drop[ax])
            return mf_err_set(MF_EARG, "squeeze: axis %lld is listed twice", (long long)ax + 1);
        if (t->shape[ax] != 1 && t->shape[ax] != -1)
            return mf_err_set(MF_ESHAPE, "squeeze: cannot squeeze axis %lld of size %lld "
                              "(shape %s): only axes of size 1 can be removed",
                              (long long)ax + 1, (long long)t->shape[ax],
                              mf_shape_str(t->rank, t->shape, buf, sizeof buf));
        drop[ax] = true;
    }
    return MF_OK;
}

static MfStatus squeeze_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    bool drop[MF_MAX_RANK];
    MfStatus st = squeeze_axes(c, drop);
    if (st != MF_OK)
        return st;
    int64_t shape[MF_MAX_RANK];
    int r = 0;
    for (int i = 0; i < t->rank; i++)
        if (!drop[i])
            shape[r++] = t->shape[i];
    set_out(c, t, r, shape);
    return MF_OK;
}

static MfStatus squeeze_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    bool drop[MF_MAX_RANK];
    MfStatus st = squeeze_axes(c, drop);
    if (st != MF_OK)
        return st;
    int64_t strides[MF_MAX_RANK];
    int r = 0;
    for (int i = 0; i < t->rank; i++)
        if (!drop[i])
            strides[r++] = t->strides[i];
    return make_view(c, t, strides, outs);
}

static const MfAttrDef squeeze_attrs[] = {
    {"axis", MF_ATTR_AXES, MF_ATTR_POSITIONAL, MF_ATTR_AT(axes), MF_ATTR_AT(naxes), 0, NULL,
     NULL},
};

const MfOpDesc mf_desc_squeeze = {
    .name = "Squeeze", .api = "squeeze", .arity = 1, .flags = MF_OP_VIEW,
    .infer = squeeze_infer, .forward = squeeze_forward,
    .backward = mf_reshape_back_grad, .cost = view_cost,
    .attrs = squeeze_attrs, .nattrs = MF_NATTRS(squeeze_attrs), .lua = "squeeze",
    .inputs = "x", .summary = "the given size-1 axes removed (none given: every size-1 axis)",
    .topic = "shape",
    .details =
        "Removes axes of size 1: the given ones (an error if one is not of size 1), or all of "
        "them when no axis is given.",
    .example =
        "mf.squeeze(mf.zeros{1, 3, 1}).shape         --> {3}\n"
        "mf.squeeze(mf.zeros{1, 3, 1}, 3).shape      --> {1, 3}",
};

/* ---- shorthands ------------------------------------------------------------- */

static int64_t norm_axis(int64_t axis, int n)
{
    return axis < 0 ? axis + n : axis;
}

MfStatus mf_transpose(MfTensor *t, const int64_t *perm, int nperm, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    if (nperm < 0 || nperm > MF_MAX_RANK) {
        *out = NULL;
        return mf_err_set(MF_EARG, "transpose: perm has %d entries but the tensor has rank %d",
                          nperm, t->rank);
    }
    a.naxes = perm ? nperm : 0;
    for (int i = 0; i < a.naxes; i++)
        a.axes[i] = norm_axis(perm[i], t->rank);
    return mf_op1(MF_OP_TRANSPOSE, 1, &t, &a, out);
}

MfStatus mf_reshape(MfTensor *t, int rank, const int64_t *shape, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    if (rank < 0 || rank > MF_MAX_RANK) {
        *out = NULL;
        return mf_err_set(MF_ESHAPE, "reshape: the new shape has rank %d, at most %d is "
                          "supported", rank, MF_MAX_RANK);
    }
    a.nints = rank;
    for (int i = 0; i < rank; i++)
        a.ints[i] = shape[i];
    return mf_op1(MF_OP_RESHAPE, 1, &t, &a, out);
}

MfStatus mf_expand_dims(MfTensor *t, int64_t axis, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.axis = norm_axis(axis, t->rank + 1);
    return mf_op1(MF_OP_EXPAND_DIMS, 1, &t, &a, out);
}

MfStatus mf_squeeze(MfTensor *t, const int64_t *axes, int naxes, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    if (naxes < 0 || naxes > MF_MAX_RANK) {
        *out = NULL;
        return mf_err_set(MF_EARG, "squeeze: %d axes listed, the tensor has rank %d", naxes,
                          t->rank);
    }
    a.naxes = axes ? naxes : 0;
    for (int i = 0; i < a.naxes; i++)
        a.axes[i] = norm_axis(axes[i], t->rank);
    return mf_op1(MF_OP_SQUEEZE, 1, &t, &a, out);
}
