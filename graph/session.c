/* session.c — MfSession: runs fetches of one graph with the in-degree
 * executor, and holds the values of the graph's variables (TensorFlow 1.x:
 * a variable's state lives in the session, so two sessions on one graph
 * have independent values). */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#include "core/alloc.h"
#include "core/rng.h"

struct MfSession {
    MfGraph *g;          /* retained */
    bool closed;
    MfVarStore vars;     /* VARIABLE node index -> current value */
    /* Random context (core/rng.h): random op nodes count their runs per
     * session, so a fresh session of a graph draws the same sequence of
     * values (TensorFlow 1 keeps a random op's state in the session). */
    uint64_t rng;
};

MfSession *mf_session_new(MfGraph *g)
{
    MfSession *s = mf_calloc(1, sizeof *s);
    if (!s) {
        mf_err_nomem("Session", sizeof *s);
        return NULL;
    }
    mf_graph_retain(g);
    s->g = g;
    s->rng = mf_rng_context_new();
    return s;
}

void mf_session_free(MfSession *s)
{
    if (!s)
        return;
    mf_varstore_clear(&s->vars);
    mf_graph_release(s->g);
    mf_free(s);
}

MfGraph *mf_session_graph(const MfSession *s)
{
    return s->g;
}

MfStatus mf_session_fetch_name(MfGraph *g, const char *name, const char *fname, MfTensor **t,
                               MfNode **op)
{
    /* A node with outputs keeps fetching its first output ("v" as "v:0"). */
    MfNode *n = strchr(name, ':') ? NULL : mf_graph_find(g, name);
    *t = NULL;
    *op = n && n->noutputs == 0 ? n : NULL;
    if (*op)
        return MF_OK;
    *t = mf_graph_get_tensor(g, name, fname);
    return *t ? MF_OK : MF_EARG;
}

MfStatus mf_session_feed_value(const MfTensor *key, MfTensor *value, bool from_data,
                               MfTensor **out)
{
    if (!from_data || value->dtype == key->dtype) {
        mf_tensor_retain(value);
        *out = value;
        return MF_OK;
    }
    MfAttrs a = mf_attrs_default();
    a.dtype = key->dtype;
    return mf_exec_eager(MF_OP_CAST, 1, &value, &a, out);
}

/* Closing frees the variables' values too (TensorFlow frees a closed
 * session's resources). */
void mf_session_close(MfSession *s)
{
    s->closed = true;
    mf_varstore_clear(&s->vars);
}

bool mf_session_closed(const MfSession *s)
{
    return s->closed;
}

MfVarStore *mf_session_vars(MfSession *s)
{
    return &s->vars;
}

static MfStatus check_variable(const MfSession *s, const MfNode *var, const char *fname)
{
    if (!var || var->graph != s->g || var->kind != MF_NODE_VARIABLE)
        return mf_err_set(MF_EARG, "%s: '%s' is not a variable of this session's graph", fname,
                          var ? var->name : "(null)");
    if (s->closed)
        return mf_err_set(MF_EARG, "%s: the session is closed", fname);
    return MF_OK;
}

MfStatus mf_session_variable_value(MfSession *s, const MfNode *var, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_variable(s, var, "variable value");
    if (st != MF_OK)
        return st;
    MfTensor *v = mf_varstore_get(&s->vars, var->index);
    if (!v)
        return mf_err_set(MF_EARG, "variable '%s' is not initialised in this session: run "
                          "mf.global_variables_initializer() first", var->name);
    mf_tensor_retain(v);
    *out = v;
    return MF_OK;
}

MfStatus mf_session_set_variable(MfSession *s, const MfNode *var, MfTensor *value)
{
    MfStatus st = check_variable(s, var, "set variable");
    if (st != MF_OK)
        return st;
    const MfTensorSpec *sp = &var->out[0];
    bool fits = value && !value->node && value->dtype == sp->dtype && value->rank == sp->rank;
    for (int i = 0; fits && i < sp->rank; i++)
        fits = sp->shape[i] < 0 || sp->shape[i] == value->shape[i];
    if (!fits) {
        char want[MF_MAX_RANK * 24 + 8], got[MF_MAX_RANK * 24 + 8] = "(no value)";
        if (value)
            mf_shape_str(value->rank, value->shape, got, sizeof got);
        return mf_err_set(MF_ESHAPE, "set variable: variable '%s' has shape %s %s, got %s %s",
                          var->name, mf_shape_str(sp->rank, sp->shape, want, sizeof want),
                          mf_dtype_name(sp->dtype), got,
                          value ? mf_dtype_name(value->dtype) : "");
    }
    return mf_varstore_set(&s->vars, var->index, value);
}

MfStatus mf_session_run(MfSession *s, int nfetch, MfTensor *const *fetches, int ntargets,
                        MfNode *const *targets, int nfeed, MfTensor *const *fed,
                        MfTensor *const *feeds, const MfExecOptions *opt,
                        MfTensor **results, MfSchedule **sched)
{
    if (s->closed) {
        for (int i = 0; i < nfetch; i++)
            results[i] = NULL;
        if (sched)
            *sched = NULL;
        return mf_err_set(MF_EARG, "run: the session is closed");
    }
    uint64_t prev = mf_rng_context_swap(s->rng);
    MfStatus st = mf_exec_run_vars(&s->vars, s->g, nfetch, fetches, ntargets, targets, nfeed,
                                   fed, feeds, opt, results, sched);
    mf_rng_context_swap(prev);
    return st;
}
