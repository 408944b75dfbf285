/* variable.c — Variables: a refcounted holder of the current value tensor, a
 * name and a 'trainable' flag (see variable.h). Assigning swaps the value
 * tensor; earlier reads keep the old tensor (reads are snapshots). */
#include <string.h>

#include "alloc.h"
#include "op.h"
#include "variable.h"

static int64_t live_variables;
static int64_t next_id = 1;
static void (*read_hook)(MfVariable *v);
static MfTensor *(*value_hook)(MfVariable *v);

MfVariable *mf_variable_new(MfTensor *initial, const char *name, bool trainable)
{
    if (!name || !*name)
        name = "Variable";
    size_t len = strlen(name) + 1;
    MfVariable *v = mf_alloc(sizeof *v);
    char *copy = mf_alloc(len);
    if (!v || !copy) {
        if (v)
            mf_dealloc(v, sizeof *v);
        if (copy)
            mf_dealloc(copy, len);
        mf_err_nomem("Variable", (unsigned long long)(sizeof *v + len));
        return NULL;
    }
    memcpy(copy, name, len);
    v->refcount = 1;
    v->id = next_id++;
    v->name = copy;
    v->trainable = trainable;
    v->value = initial;
    if (initial)
        mf_tensor_retain(initial);
    live_variables++;
    return v;
}

void mf_variable_retain(MfVariable *v)
{
    if (v)
        v->refcount++;
}

void mf_variable_release(MfVariable *v)
{
    if (!v || --v->refcount > 0)
        return;
    mf_tensor_release(v->value);
    mf_dealloc(v->name, strlen(v->name) + 1);
    mf_dealloc(v, sizeof *v);
    live_variables--;
}

MfTensor *mf_variable_read(MfVariable *v)
{
    if (read_hook)
        read_hook(v);
    if (value_hook && v->value && !v->value->node) {
        MfTensor *t = value_hook(v);
        if (t)
            return t;
    }
    return v->value;
}

/* Checks that 'x' may replace the value of 'v' (same dtype and shape,
 * concrete); 'fname' names the user's function in the message. */
static MfStatus check_fits(const char *fname, const MfVariable *v, const MfTensor *x)
{
    char want[160], got[160];
    if (x->node)
        return mf_err_set(MF_EARG, "%s: variable '%s' takes a concrete tensor, got a symbolic "
                          "(graph) tensor", fname, v->name);
    if (!v->value)
        return MF_OK;
    bool same = x->dtype == v->value->dtype && x->rank == v->value->rank;
    for (int i = 0; same && i < x->rank; i++)
        same = x->shape[i] == v->value->shape[i];
    if (same)
        return MF_OK;
    mf_shape_str(v->value->rank, v->value->shape, want, sizeof want);
    mf_shape_str(x->rank, x->shape, got, sizeof got);
    return mf_err_set(x->dtype == v->value->dtype ? MF_ESHAPE : MF_EDTYPE,
                      "%s: variable '%s' has shape %s %s, got %s %s", fname, v->name, want,
                      mf_dtype_name(v->value->dtype), got, mf_dtype_name(x->dtype));
}

MfStatus mf_variable_assign(MfVariable *v, MfTensor *x)
{
    MfStatus st = check_fits("assign", v, x);
    if (st != MF_OK)
        return st;
    mf_tensor_retain(x);
    mf_tensor_release(v->value);
    v->value = x;
    return MF_OK;
}

MfStatus mf_variable_assign_value(MfVariable *v, MfTensor *x)
{
    MfStatus st = check_fits("assign", v, x);
    if (st != MF_OK)
        return st;
    /* a header of its own: a gradient tape knows 'x' by its id, and no
     * gradient flows through an assign (TensorFlow gives None there) */
    MfTensor *own = mf_tensor_view(x, x->rank, x->shape, x->strides, x->offset);
    if (!own)
        return mf_err_nomem("assign", sizeof *own);
    mf_tensor_release(v->value);
    v->value = own;
    return MF_OK;
}

/* value (op) x, checked to keep the variable's dtype and shape. */
static MfStatus assign_op(MfVariable *v, MfTensor *x, MfOpId op, const char *fname)
{
    if (!v->value)
        return mf_err_set(MF_EARG, "%s: variable '%s' has no value yet", fname, v->name);
    if (x->dtype != v->value->dtype) {
        char want[160], got[160];
        mf_shape_str(v->value->rank, v->value->shape, want, sizeof want);
        mf_shape_str(x->rank, x->shape, got, sizeof got);
        return mf_err_set(MF_EDTYPE, "%s: variable '%s' has shape %s %s, got %s %s", fname,
                          v->name, want, mf_dtype_name(v->value->dtype), got,
                          mf_dtype_name(x->dtype));
    }
    MfTensor *r = NULL;
    const MfRecorder *rec = mf_op_recorder();   /* not recorded: no gradient flows through */
    mf_op_set_recorder(NULL);
    MfStatus st = mf_binary(op, v->value, x, &r);
    mf_op_set_recorder(rec);
    if (st != MF_OK)
        return st;
    st = check_fits(fname, v, r);
    if (st == MF_OK) {
        mf_tensor_release(v->value);
        v->value = r;
    } else {
        mf_tensor_release(r);
    }
    return st;
}

MfStatus mf_variable_assign_add(MfVariable *v, MfTensor *x)
{
    return assign_op(v, x, MF_OP_ADD, "assign_add");
}

MfStatus mf_variable_assign_sub(MfVariable *v, MfTensor *x)
{
    return assign_op(v, x, MF_OP_SUB, "assign_sub");
}

void mf_variable_set_read_hook(void (*hook)(MfVariable *v))
{
    read_hook = hook;
}

void mf_variable_set_value_hook(MfTensor *(*hook)(MfVariable *v))
{
    value_hook = hook;
}

int64_t mf_variable_live_count(void)
{
    return live_variables;
}
