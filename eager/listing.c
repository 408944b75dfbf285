/* listing.c — the text of print(tape): a header, then one line per record
 * naming its inputs as the tape does (mf_tape_label), with the op's
 * non-default attributes, the shapes in and out, and marks for custom and
 * registered gradients. Pure text: repl/lmf_tape.c only binds it. */
#include <stdio.h>

#include "eager.h"

static void add_shapes(MfStrBuf *b, int n, MfTensor *const *ts)
{
    for (int i = 0; i < n; i++) {
        char shape[96];
        mf_strbuf_addf(b, "%s%s", i ? ", " : "",
                       mf_shape_str(ts[i]->rank, ts[i]->shape, shape, sizeof shape));
    }
}

/* "Sum[axis=2, keepdims](t1, w)" naming each input as the listing does. */
static void add_call(MfStrBuf *b, const MfTape *t, const MfTapeEntry *e)
{
    mf_strbuf_add(b, e->name);
    if (e->attrs[0])
        mf_strbuf_addf(b, "[%s]", e->attrs);
    mf_strbuf_add(b, "(");
    for (int i = 0; i < e->ninputs; i++) {
        char label[96];
        mf_tape_label(t, e->inputs[i], label, sizeof label);
        mf_strbuf_addf(b, "%s%s", i ? ", " : "", label);
    }
    mf_strbuf_add(b, ")");
}

/* One record: "  3  t3 = Mul(t1, w)     (2,3), (3,) -> (2,3)  [marks]". */
static void add_record(MfStrBuf *b, const MfTape *t, int64_t k)
{
    MfTapeEntry e = mf_tape_entry(t, k);
    size_t start = b->len;
    mf_strbuf_addf(b, "\n%5lld  t%lld = ", (long long)k + 1, (long long)k + 1);
    add_call(b, t, &e);
    while (!b->failed && b->len - start < 35)   /* align the shapes */
        mf_strbuf_add(b, " ");
    mf_strbuf_add(b, " ");
    add_shapes(b, e.ninputs, e.inputs);
    mf_strbuf_add(b, " -> ");
    add_shapes(b, e.noutputs, e.outputs);
    if (e.custom)
        mf_strbuf_add(b, "  [custom_gradient]");
    if (e.gradient)
        mf_strbuf_addf(b, "  [gradient: %s]", e.gradient);
}

MfStatus mf_tape_listing(const MfTape *t, MfStrBuf *out)
{
    int64_t n = mf_tape_count(t);
    mf_strbuf_addf(out, "<GradientTape %s, %s, %lld record%s>",
                   mf_tape_persistent(t) ? "persistent" : "non-persistent",
                   mf_tape_recording(t) ? "recording" : "stopped", (long long)n,
                   n == 1 ? "" : "s");
    for (int64_t k = 0; k < n; k++)
        add_record(out, t, k);
    return mf_strbuf_status(out, "GradientTape listing");
}
