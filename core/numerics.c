/* numerics.c — the check of mf.debugging.enable_check_numerics (see numerics.h). */
#include "numerics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"

bool mf_numerics_on;

static MfWhereFn where_fn;
static MfNumericsScope backward;     /* the record whose gradient runs, or none */
static const char *node_name, *node_made;

void mf_numerics_enable(bool on)
{
    mf_numerics_on = on;
}

void mf_numerics_set_where(MfWhereFn fn)
{
    where_fn = fn;
}

MfNumericsScope mf_numerics_enter_backward(const char *what, long long index)
{
    MfNumericsScope prev = backward;
    backward.what = what;
    backward.index = index;
    return prev;
}

void mf_numerics_leave_backward(MfNumericsScope prev)
{
    backward = prev;
}

void mf_numerics_set_node(const char *name, const char *made)
{
    node_name = name;
    node_made = made;
}

void mf_numerics_where(char *buf, size_t cap)
{
    buf[0] = '\0';
    if (where_fn)
        where_fn(buf, cap);
    size_t len = strlen(buf);
    if (backward.what && len < cap) {
        if (backward.index >= 0)
            snprintf(buf + len, cap - len, "%sin the gradient of %s (tape record %lld)",
                     len ? ", " : "", backward.what, backward.index + 1);
        else
            snprintf(buf + len, cap - len, "%sin the gradient of %s", len ? ", " : "",
                     backward.what);
    }
}

/* What 't' holds: its finite range and its count of NaN and Inf. */
typedef struct Range {
    double lo, hi;
    int64_t finite, nan, inf, first_bad;
} Range;

static Range range_of(const MfTensor *t)
{
    Range r = {INFINITY, -INFINITY, 0, 0, 0, -1};
    int64_t n = mf_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = mf_tensor_get(t, i);
        if (isfinite(v)) {
            r.finite++;
            r.lo = v < r.lo ? v : r.lo;
            r.hi = v > r.hi ? v : r.hi;
            continue;
        }
        if (r.first_bad < 0)
            r.first_bad = i;
        if (isnan(v))
            r.nan++;
        else
            r.inf++;
    }
    return r;
}

/* "float32 (2,3) in [-1, 4], 1 NaN" */
static void describe(MfStrBuf *b, const MfTensor *t)
{
    char shape[MF_MAX_RANK * 24 + 8];
    mf_shape_str(t->rank, t->shape, shape, sizeof shape);
    mf_strbuf_addf(b, "%s %s", mf_dtype_name(t->dtype), shape);
    Range r = range_of(t);
    if (r.finite)
        mf_strbuf_addf(b, " in [%.6g, %.6g]", r.lo, r.hi);
    else if (mf_tensor_numel(t) == 0)
        mf_strbuf_addf(b, " (empty)");
    if (r.nan)
        mf_strbuf_addf(b, ", %lld NaN", (long long)r.nan);
    if (r.inf)
        mf_strbuf_addf(b, ", %lld Inf", (long long)r.inf);
}

static void name_input(MfStrBuf *b, const MfOpDesc *d, int k)
{
    size_t len = 0;
    const char *name = d->flags & MF_OP_VARIADIC ? NULL : mf_op_input_name(d, k, &len);
    if (name && len > 0)
        mf_strbuf_addf(b, "%.*s ", (int)len, name);
    else
        mf_strbuf_addf(b, "input %d ", k + 1);
}

static void place(MfStrBuf *b)
{
    char where[512];
    if (node_name) {
        mf_strbuf_addf(b, "; graph node '%s'", node_name);
        if (node_made && node_made[0])
            mf_strbuf_addf(b, ", made at %s", node_made);
        return;
    }
    mf_numerics_where(where, sizeof where);
    if (where[0])
        mf_strbuf_addf(b, "; at %s", where);
}

static MfStatus report(const MfOpCall *c, MfTensor *const *outs, int k, Range r)
{
    const MfOpDesc *d = mf_op_table[c->op];
    MfStrBuf b = {0};
    const char *what = r.nan && r.inf ? "NaN and Inf" : r.nan ? "NaN" : "Inf";
    mf_strbuf_addf(&b, "check_numerics: %s (%s) produced %s in output %d (%lld of %lld "
                     "values, the first at flat index %lld); ", d->name, d->api, what, k + 1,
                     (long long)(r.nan + r.inf), (long long)mf_tensor_numel(outs[k]),
                     (long long)r.first_bad + 1);
    for (int i = 0; i < c->ninputs; i++) {
        mf_strbuf_addf(&b, i ? ", " : "inputs: ");
        name_input(&b, d, i);
        describe(&b, c->inputs[i]);
    }
    place(&b);
    MfStatus st = mf_err_set(MF_EARG, "%s", b.data ? b.data : "check_numerics: out of memory");
    mf_strbuf_free(&b);
    return st;
}

MfStatus mf_numerics_check(const MfOpCall *c, MfTensor *const *outs)
{
    for (int k = 0; k < c->noutputs; k++) {
        const MfTensor *t = outs[k];
        if (!t || mf_tensor_all_finite(t))
            continue;
        return report(c, outs, k, range_of(t));
    }
    return MF_OK;
}
