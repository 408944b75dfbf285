/* trace_signature.c — the input signature of a traced function's call
 * (mf.trace, TensorFlow's tf.function): the key of its cache of traces.
 * Per argument: a tensor by dtype and shape (any values share one trace);
 * a number, string or boolean by value (code that branches on it traces
 * again); an array recursively; anything else (a Variable, a function, an
 * object) by identity. The face walks its values and appends each part; the
 * encoding is injective, so two calls share a key only when they share a
 * trace: every part starts with its own letter, strings carry their length,
 * and separators cannot occur inside a part. */
#include <stdio.h>

#include "graph.h"

void mf_sig_tensor(MfStrBuf *b, const MfTensor *t)
{
    char shape[MF_MAX_RANK * 24 + 8];
    mf_strbuf_addf(b, "T%s%s", mf_dtype_name(t->dtype),
                   mf_shape_str(t->rank, t->shape, shape, sizeof shape));
}

/* Integers and floats differ (1 and 1.0 trace apart, as Lua tells them
 * apart); a float by all of its digits, so no two values share a key. */
void mf_sig_integer(MfStrBuf *b, long long v)
{
    mf_strbuf_addf(b, "I%lld", v);
}

void mf_sig_number(MfStrBuf *b, double v)
{
    mf_strbuf_addf(b, "N%.17g", v);
}

/* "S<length>:" and the bytes, NUL and backslash escaped (the key is a C
 * string; the length keeps "a;" from looking like an argument end). */
void mf_sig_string(MfStrBuf *b, const char *s, size_t n)
{
    mf_strbuf_addf(b, "S%zu:", n);
    char run[256];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (used + 3 > sizeof run) {
            run[used] = '\0';
            mf_strbuf_add(b, run);
            used = 0;
        }
        if (s[i] == '\0' || s[i] == '\\') {
            run[used++] = '\\';
            run[used++] = s[i] ? '\\' : '0';
        } else {
            run[used++] = s[i];
        }
    }
    run[used] = '\0';
    mf_strbuf_add(b, run);
}

void mf_sig_boolean(MfStrBuf *b, bool v)
{
    mf_strbuf_add(b, v ? "true" : "false");
}

void mf_sig_nil(MfStrBuf *b)
{
    mf_strbuf_add(b, "nil");
}

void mf_sig_identity(MfStrBuf *b, const char *type, const void *p)
{
    mf_strbuf_addf(b, "%s@%p", type, p);
}

void mf_sig_array_begin(MfStrBuf *b)
{
    mf_strbuf_add(b, "{");
}

void mf_sig_array_item_end(MfStrBuf *b)
{
    mf_strbuf_add(b, ",");
}

void mf_sig_array_end(MfStrBuf *b)
{
    mf_strbuf_add(b, "}");
}

void mf_sig_arg_end(MfStrBuf *b)
{
    mf_strbuf_add(b, ";");
}

/* Usually a Lua number that changes every call (a learning rate, a step),
 * which is part of the signature by value. */
bool mf_trace_retrace_warning(int count, const char *where, char *buf, size_t cap)
{
    if (count != MF_TRACE_RETRACE_WARNING)
        return false;
    snprintf(buf, cap, "a traced function has been traced %d times%s: one trace per new "
             "signature (tensor dtypes and shapes, the values of Lua numbers, strings and "
             "booleans); pass values that change from call to call as tensors to reuse one "
             "trace", count, where);
    return true;
}
