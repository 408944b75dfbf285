/* custom_gradient.c — mf.custom_gradient's engine half (TensorFlow's
 * tf.custom_gradient): after the user's f ran, its result y gets the
 * user's gradient function. It lives in mode/ because it chooses between
 * the two modes: in a graph being built the function hangs on a node
 * (graph/gradients.h), eagerly it is recorded on the tapes (eager.h).
 *
 * Ownership: 'mf_custom_gradient_attach' takes the caller's reference of
 * the function; a graph node keeps it through a small MfNodeGrad wrapper
 * (freed with the graph), tapes through their records. */
#include "core/alloc.h"

#include "graph/gradients.h"
#include "mode.h"

MfCustomScope mf_custom_gradient_begin(void)
{
    MfCustomScope s = {mf_mode_graph(), -1, 0};
    if (s.g)
        s.first = mf_graph_nnodes(s.g);
    s.reads = mf_tape_custom_begin();
    return s;
}

/* The function, as a graph node holds it: 'drop' lets it go early (a
 * trace that finished), 'free' with the graph. */
typedef struct NodeFn {
    MfNodeGrad base;
    MfTapeFunction *fn;   /* one reference; NULL once dropped */
    MfNodeInput inputs[];
} NodeFn;

static MfStatus nodefn_backward(MfNodeGrad *f, int noutputs, MfTensor *const *doutputs,
                                int ninputs, MfTensor *const *inputs, MfTensor **dinputs)
{
    MfTapeFunction *fn = ((NodeFn *)f)->fn;
    return fn->backward(fn, noutputs, doutputs, ninputs, inputs, dinputs);
}

static void nodefn_drop(MfNodeGrad *f)
{
    NodeFn *nf = (NodeFn *)f;
    if (nf->fn)
        mf_tape_function_release(nf->fn);
    nf->fn = NULL;
}

static void nodefn_free(MfNodeGrad *f)
{
    nodefn_drop(f);
    mf_free(f);
}

/* y built into a graph: the Identity carrying 'fn' (graph/gradients.h). */
static MfStatus attach_to_graph(const MfCustomScope *s, MfTapeFunction *fn, int nin,
                                MfTensor *const *in, MfTensor *y, MfTensor **out)
{
    NodeFn *nf = mf_malloc(sizeof *nf + (size_t)(nin ? nin : 1) * sizeof nf->inputs[0]);
    if (!nf) {
        mf_tape_function_release(fn);
        return mf_err_nomem("custom_gradient", sizeof *nf);
    }
    nf->fn = fn;
    nf->base = (MfNodeGrad){.name = "custom_gradient", .ninputs = nin, .inputs = nf->inputs,
                            .backward = nodefn_backward, .drop = nodefn_drop,
                            .free = nodefn_free};
    /* a read counts from where f started, when f built into y's graph */
    int first = mf_tensor_graph(y) == s->g ? s->first : -1;
    return mf_graph_custom_gradient(first, nin, in, y, &nf->base, out);
}

/* Eagerly, as TensorFlow 2: the tapes recorded what f did (so a gradient
 * function using f's intermediates, e.g. exp(x), has higher-order
 * gradients through them); y is replaced by an unrecorded Identity of it,
 * and 'fn' is recorded as the op from the inputs (the Variables' values
 * last) to that Identity, so a gradient reaching it never flows into what
 * f did. */
static MfStatus record_on_tapes(MfTapeFunction *fn, int nin, MfTensor *const *in, int nvars,
                                MfVariable *const *vars, MfTensor *y, MfTensor **out)
{
    MfTensor **all = mf_malloc((size_t)(nin + nvars + 1) * sizeof *all);
    if (!all) {
        mf_tape_function_release(fn);
        return mf_err_nomem("custom_gradient", (size_t)(nin + nvars + 1) * sizeof *all);
    }
    for (int i = 0; i < nin; i++)
        all[i] = in[i];
    for (int j = 0; j < nvars; j++)
        all[nin + j] = vars[j]->value;
    mf_tape_suspend();
    MfStatus st = mf_unary(MF_OP_IDENTITY, y, out);
    mf_tape_resume();
    if (st == MF_OK)
        st = mf_tape_record_function(fn, nin + nvars, all, 1, out);
    mf_tape_function_release(fn);
    mf_free(all);
    if (st != MF_OK) {
        mf_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

MfStatus mf_custom_gradient_attach(const MfCustomScope *s, MfTapeFunction *fn, int nin,
                                   MfTensor *const *in, int nvars, MfVariable *const *vars,
                                   MfTensor *y, MfTensor **out)
{
    *out = NULL;
    if (y->node && nvars > 0) {
        mf_tape_function_release(fn);
        return mf_err_set(MF_EARG, "custom_gradient: f reads the trainable variable '%s', "
                          "which is not one of its inputs; in a graph pass the variable to f "
                          "as an argument", vars[0]->name);
    }
    if (y->node)   /* building a graph: the gradient walk calls the function */
        return attach_to_graph(s, fn, nin, in, y, out);
    if (mf_tape_any_recording())
        return record_on_tapes(fn, nin, in, nvars, vars, y, out);
    mf_tape_function_release(fn);
    return MF_OK;
}
