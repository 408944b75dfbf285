/* half_call.c — ops on float16 and bfloat16 tensors compute in float32.
 * The dispatcher (core/op.c) hands any call with a half input, except Cast,
 * to mf_half_call: it casts the half inputs to float32, calls the op, and
 * casts the op's float32 outputs back to the half dtype. Each step is an op
 * call of its own, so a tape, a graph and the gradients see Cast -> op ->
 * Cast and need nothing more (PyTorch's CPU kernels widen halves the same
 * way, one op at a time). Mixing a half dtype with another float dtype is
 * refused, as other dtype mixes are: moonflow does not promote. */
#include "half_call.h"

#include "alloc.h"
#include "err.h"
#include "numerics.h"
#include "ops/compare.h"

bool mf_half_call_wanted(MfOpId op, int n, MfTensor *const *inputs)
{
    if (op == MF_OP_CAST)
        return false;
    for (int i = 0; i < n; i++)
        if (mf_dtype_is_half(inputs[i]->dtype))
            return true;
    return false;
}

/* The one half dtype of the call's inputs; an error for float16 beside
 * bfloat16 or beside float32/float64, and for ops that write a Variable. */
static MfStatus half_dtype_of(const MfOpDesc *d, int n, MfTensor *const *inputs, MfDType *half)
{
    *half = MF_NDTYPES;
    for (int i = 0; i < n; i++)
        if (mf_dtype_is_half(inputs[i]->dtype) && *half == MF_NDTYPES)
            *half = inputs[i]->dtype;
    if (d->flags & MF_OP_EFFECTS)
        return mf_err_set(MF_EDTYPE, "%s: %s is a storage dtype (ops compute it in float32); "
                          "this op writes state, which holds float32 or float64: cast first",
                          d->api, mf_dtype_name(*half));
    for (int i = 0; i < n; i++) {
        MfDType dt = inputs[i]->dtype;
        if (dt != *half && (mf_dtype_is_half(dt) || mf_dtype_is_float(dt)))
            return mf_err_set(MF_EDTYPE, "%s: input %d is %s and another is %s: cast one "
                              "(moonflow does not promote dtypes)", d->api, i + 1,
                              mf_dtype_name(dt), mf_dtype_name(*half));
    }
    return MF_OK;
}

static void release_all(MfTensor **ts, int n)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

/* The op's float32 outputs cast back to 'half', the others as they are. */
static MfStatus narrow_outputs(MfDType half, MfTensor **wide, int nout, MfTensor **outs)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < nout; i++) {
        if (st == MF_OK && wide[i]->dtype == MF_FLOAT32)
            st = mf_cast(wide[i], half, &outs[i]);
        else if (st == MF_OK) {
            mf_tensor_retain(wide[i]);
            outs[i] = wide[i];
        }
    }
    release_all(wide, nout);
    if (st != MF_OK)
        release_all(outs, nout);
    return st;
}

MfStatus mf_half_call(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                      MfTensor **outs, int *noutputs)
{
    const MfOpDesc *d = mf_op_table[op];
    MfDType half;
    MfStatus st = half_dtype_of(d, ninputs, inputs, &half);
    if (st != MF_OK)
        return st;
    MfTensor **wide_in = mf_calloc((size_t)ninputs, sizeof *wide_in);
    if (!wide_in)
        return mf_err_set(MF_ENOMEM, "%s: out of memory", d->api);
    for (int i = 0; i < ninputs && st == MF_OK; i++) {
        if (mf_dtype_is_half(inputs[i]->dtype))
            st = mf_cast(inputs[i], MF_FLOAT32, &wide_in[i]);
        else {
            mf_tensor_retain(inputs[i]);
            wide_in[i] = inputs[i];
        }
    }
    MfTensor *wide_out[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    if (st == MF_OK)
        st = mf_op_call(op, ninputs, wide_in, attrs, wide_out, &nout);
    release_all(wide_in, ninputs);
    mf_free(wide_in);
    if (st == MF_OK && (st = narrow_outputs(half, wide_out, nout, outs)) != MF_OK &&
        mf_numerics_on)   /* say which op's result left the half dtype's range */
        mf_err_suffix("the float32 result of %s cast back to %s", d->api,
                      mf_dtype_name(half));
    if (st == MF_OK && noutputs)
        *noutputs = nout;
    return st;
}
