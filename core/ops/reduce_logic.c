/* reduce_logic.c — Any and All: logical or / and of a bool tensor over the
 * given axes (TensorFlow's Any and All; mf.reduce_any, mf.reduce_all). They
 * read the attributes of the other reductions (axis, keepdims; no axis:
 * every axis; reduce.h) and have no gradient. Empty reductions give the
 * identities: false for Any, true for All. */
#include <string.h>

#include "common.h"
#include "reduce.h"

static MfStatus logic_infer(MfOpCall *c)
{
    bool reduced[MF_MAX_RANK];
    MfStatus st = mf_check_dtype(c, c->inputs[0], MF_MASK(MF_BOOL),
                                 "bool (compare first, e.g. x > 0, or use mf.cast)");
    if (st == MF_OK)
        st = mf_reduce_dims(c, reduced);
    if (st == MF_OK)
        mf_reduce_spec(c, reduced);
    return st;
}

/* One pass over the input in index order: each element is or-ed (Any) or
 * and-ed (All) into its output element, found through output strides that
 * are 0 along the reduced dims. */
static MfStatus logic_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    bool any = c->op == MF_OP_ANY, reduced[MF_MAX_RANK];
    MfStatus st = mf_reduce_dims(c, reduced);
    if (st != MF_OK)
        return st;
    int64_t os[MF_MAX_RANK], idx[MF_MAX_RANK] = {0}, stride = 1, n = mf_tensor_numel(x);
    for (int d = x->rank - 1; d >= 0; d--) {
        os[d] = reduced[d] ? 0 : stride;
        stride *= reduced[d] ? 1 : x->shape[d];
    }
    uint8_t *out = mf_tensor_data(outs[0]);
    const uint8_t *src = mf_tensor_data(x);
    memset(out, any ? 0 : 1, (size_t)mf_tensor_numel(outs[0]));
    int64_t at = 0, o = 0; /* the input element (through its strides), the output one */
    for (int64_t i = 0; i < n; i++) {
        out[o] = any ? (out[o] | (src[at] != 0)) : (out[o] & (src[at] != 0));
        for (int d = x->rank - 1; d >= 0; d--) { /* the next index, odometer style */
            at += x->strides[d], o += os[d];
            if (++idx[d] < x->shape[d])
                break;
            at -= x->strides[d] * x->shape[d], o -= os[d] * x->shape[d];
            idx[d] = 0;
        }
    }
    return MF_OK;
}

#define LOGIC_OP(sym, tfname, apiname, ...)                                          \
    const MfOpDesc sym = {                                                           \
        .name = tfname, .api = apiname, .arity = 1, .flags = MF_OP_NONDIFF,          \
        .infer = logic_infer, .forward = logic_forward, .cost = mf_cost_elementwise, \
        .attrs = mf_reduce_attrs, .nattrs = MF_REDUCE_NATTRS, .lua = apiname,        \
        .inputs = "x", .summary = __VA_ARGS__,                                       \
    }

LOGIC_OP(mf_desc_any, "Any", "reduce_any",
         "logical or of a bool tensor over the given axes (all when none)",
    .topic = "reduce",
    .details =
        "Logical or of a bool tensor over axis (1-based, a number or a list; every axis when "
        "absent), TensorFlow's reduce_any. An empty reduction is false. No gradient.",
    .example =
        "mf.reduce_any(mf.tensor{{1, 0}, {0, 0}}:greater(0), 2) --> {true, false}");
LOGIC_OP(mf_desc_all, "All", "reduce_all",
         "logical and of a bool tensor over the given axes (all when none)",
    .topic = "reduce",
    .details =
        "Logical and of a bool tensor over axis (1-based, a number or a list; every axis when "
        "absent), TensorFlow's reduce_all. An empty reduction is true. No gradient.",
    .example =
        "mf.reduce_all(mf.tensor{{1, 0}, {1, 1}}:greater(0), 2) --> {false, true}");
