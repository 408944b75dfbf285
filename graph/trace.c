/* trace.c — MfTrace: one traced signature of a function (mf.trace, as
 * TensorFlow's tf.function): its graph, a placeholder per tensor argument,
 * the results, and a private session that runs the graph with the
 * in-degree executor on every call. The Lua side (repl/lmf_trace.c) keeps
 * one MfTrace per input signature and calls the function once to build it.
 *
 * Eager variables used inside are captured by reference (variables.c):
 * every call reads their values then, and the assigns on them run on every
 * call, in the order the function made them. Variables made inside the
 * function are graph variables of this trace, initialised when tracing
 * ends. */
#include <stdlib.h>

#include "core/alloc.h"
#include "gradients.h"
#include "graph_impl.h"
#include "interchange.h"

struct MfTrace {
    MfGraph *g;          /* owned */
    MfSession *s;        /* owned */
    int nargs, cap;
    MfTensor **args;     /* placeholders, owned */
    int nres;
    MfTensor **res;      /* symbolic results, owned */
    int ntargets;
    MfNode **targets;    /* captured assigns (borrowed from 'g') */
};

MfTrace *mf_trace_new(void)
{
    MfTrace *t = mf_calloc(1, sizeof *t);
    if (!t) {
        mf_err_nomem("trace", sizeof *t);
        return NULL;
    }
    t->g = mf_graph_new();
    if (t->g)
        mf_graph_mark_function(t->g);
    t->s = t->g ? mf_session_new(t->g) : NULL;
    if (!t->s) {
        mf_trace_free(t);
        return NULL;
    }
    return t;
}

void mf_trace_free(MfTrace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nargs; i++)
        mf_tensor_release(t->args[i]);
    for (int i = 0; i < t->nres; i++)
        mf_tensor_release(t->res[i]);
    mf_free(t->args);
    mf_free(t->res);
    mf_free(t->targets);
    mf_session_free(t->s);
    if (t->g)   /* a custom gradient's function may hold the graph: a cycle */
        mf_graph_drop_custom_gradients(t->g);
    mf_graph_release(t->g);
    mf_free(t);
}

MfGraph *mf_trace_graph(const MfTrace *t)
{
    return t->g;
}

int mf_trace_nresults(const MfTrace *t)
{
    return t->nres;
}

MfStatus mf_trace_add_arg(MfTrace *t, const MfTensor *example, const char *name, MfTensor **ph)
{
    *ph = NULL;
    if (t->nargs == t->cap) {
        int cap = t->cap ? 2 * t->cap : 4;
        MfTensor **p = mf_realloc(t->args, (size_t)cap * sizeof *p);
        if (!p)
            return mf_err_nomem("trace", (unsigned long long)cap * sizeof *p);
        t->args = p;
        t->cap = cap;
    }
    MfStatus st = mf_graph_placeholder(t->g, example->dtype, example->rank, example->shape,
                                       name, ph);
    if (st != MF_OK)
        return st;
    mf_tensor_retain(*ph);
    t->args[t->nargs++] = *ph;
    return MF_OK;
}

/* Result 'x' as a tensor of the trace's graph (owned): concrete ones become
 * Const nodes (a function may return a value it did not compute). */
static MfStatus own_result(MfTrace *t, MfTensor *x, int i, MfTensor **out)
{
    if (!x->node)
        return mf_graph_constant(t->g, x, NULL, out);
    if (mf_tensor_graph(x) != t->g) {
        char name[300];
        return mf_err_set(MF_EARG, "trace: result %d ('%s') is a tensor of another graph", i + 1,
                          mf_graph_tensor_name(x, name, sizeof name));
    }
    /* a fresh tensor that keeps the graph (captures hand out weak ones) */
    *out = mf_graph_output(x->node, x->node_output);
    return *out ? MF_OK : MF_ENOMEM;
}

/* Variables made while tracing get their initial values in the private
 * session now. */
static MfStatus init_variables(MfTrace *t)
{
    if (mf_graph_variables(t->g, false, NULL, 0) == 0)
        return MF_OK;
    MfNode *init;
    MfStatus st = mf_graph_variables_initializer(t->g, 0, NULL, "trace_init", &init);
    if (st == MF_OK)
        st = mf_session_run(t->s, 0, NULL, 1, &init, 0, NULL, NULL, NULL, NULL, NULL);
    return st;
}

MfStatus mf_trace_finish(MfTrace *t, int n, MfTensor *const *results)
{
    t->res = mf_calloc((size_t)n + 1, sizeof *t->res);
    if (!t->res)
        return mf_err_nomem("trace", ((unsigned long long)n + 1) * sizeof *t->res);
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++)
        if ((st = own_result(t, results[i], i, &t->res[i])) == MF_OK)
            t->nres++;
    if (st != MF_OK)
        return st;
    t->ntargets = mf_graph_captured_assigns(t->g, NULL, 0);
    t->targets = mf_calloc((size_t)t->ntargets + 1, sizeof *t->targets);
    if (!t->targets)
        return mf_err_nomem("trace", ((unsigned long long)t->ntargets + 1) * sizeof(MfNode *));
    mf_graph_captured_assigns(t->g, t->targets, t->ntargets);
    /* No gradient is built on a finished trace: its custom gradients'
     * functions (which may capture its tensors, so hold its graph) go. */
    mf_graph_drop_custom_gradients(t->g);
    return init_variables(t);
}

MfStatus mf_trace_call(MfTrace *t, int nargs, MfTensor *const *args, MfTensor **results)
{
    if (nargs != t->nargs)
        return mf_err_set(MF_EARG, "trace: the traced function takes %d tensor argument%s, got "
                          "%d", t->nargs, t->nargs == 1 ? "" : "s", nargs);
    return mf_session_run(t->s, t->nres, t->res, t->ntargets, t->targets, nargs, t->args, args,
                          NULL, results, NULL);
}

MfTensor *const *mf_trace_args(const MfTrace *t, int *n)
{
    *n = t->nargs;
    return t->args;
}

MfTensor *const *mf_trace_results(const MfTrace *t, int *n)
{
    *n = t->nres;
    return t->res;
}

const MfVarStore *mf_trace_vars(const MfTrace *t)
{
    return mf_session_vars(t->s);
}
