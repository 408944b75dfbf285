/* train.c — eager or graph for training: where apply_gradients goes and
 * which global step counts (see mode.h; variables.c decides the same for
 * Variables, assigns and constants).
 *
 * apply_gradients: pairs of graph Variables -> the graph's train op
 * (graph_train.c); eager Variables while a graph is built, or with a
 * symbolic gradient (mf.trace) -> Apply nodes writing the captured
 * Variables when the graph runs; otherwise the update is done now.
 *
 * The global step: while a graph is built, that graph's "global_step"
 * variable; otherwise the process's eager one, made on first use and kept
 * here (one reference) until mf_train_global_step_forget.
 *
 * A traced function's call: its body (inlined into the graph being built,
 * or seen by a recording tape) or its trace run. */
#include "mode.h"

static MfVariable *eager_step;

/* True when a pair's Variable is a graph Variable (graph mode). */
static bool graph_pairs(const MfGradVar *pairs, int n)
{
    for (int i = 0; i < n; i++)
        if (pairs[i].var && pairs[i].var->value && pairs[i].var->value->node)
            return true;
    return false;
}

/* The graph being built when eager Variables are trained in it: the one
 * ops go into, or that of a symbolic gradient. NULL: eager. */
static MfGraph *traced_graph(const MfGradVar *pairs, int n)
{
    MfGraph *g = mf_mode_graph();
    for (int i = 0; i < n && !g; i++)
        if (pairs[i].grad && pairs[i].grad->node)
            g = mf_tensor_graph(pairs[i].grad);
    return g;
}

MfStatus mf_train_apply_gradients(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                                  MfVariable *global_step, MfNode **train_op)
{
    *train_op = NULL;
    if (graph_pairs(pairs, n))
        return mf_optimizer_apply_graph(o, n, pairs, lr, global_step, train_op);
    MfGraph *traced = traced_graph(pairs, n);
    if (traced)
        return mf_optimizer_apply_traced(o, traced, n, pairs, lr, global_step, train_op);
    return mf_optimizer_apply(o, n, pairs, lr, global_step);
}

MfStatus mf_train_global_step(MfVariable **step)
{
    *step = NULL;
    MfGraph *g = mf_mode_graph();
    if (g)
        return mf_train_graph_global_step(g, step);
    if (!eager_step) {
        MfTensor *zero = mf_tensor_scalar(MF_INT64, 0);
        eager_step = zero ? mf_variable_new(zero, "global_step", false) : NULL;
        mf_tensor_release(zero);
        if (!eager_step)
            return MF_ENOMEM;
    }
    mf_variable_retain(eager_step);
    *step = eager_step;
    return MF_OK;
}

MfVariable *mf_train_eager_global_step(void)
{
    return eager_step;
}

void mf_train_global_step_forget(void)
{
    mf_variable_release(eager_step);
    eager_step = NULL;
}

bool mf_train_trace_runs_inline(void)
{
    return mf_mode_graph() || mf_tape_any_recording();
}
