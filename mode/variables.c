/* variables.c — eager or graph: the one place that decides where an
 * operation on a Variable or a constant goes (see mode.h).
 *
 * The rule, TensorFlow's: while a graph is being built (it is the default
 * and the executor is not running its nodes) or an operand is a symbolic
 * tensor, the operation becomes a node of that graph; otherwise it runs now.
 * A Variable made in a graph is a VARIABLE node (its value lives in each
 * session); an eager Variable used while a graph is built (mf.trace) is
 * captured by reference, so its assigns are nodes that write it when the
 * graph runs.
 *
 * Ownership: tensors returned through 'out' are owned by the caller; nodes
 * are borrowed from their graph. */
#include "core/ops/compare.h"
#include "mode.h"

MfGraph *mf_mode_graph_of(const MfTensor *t)
{
    MfGraph *g = mf_mode_graph();
    return g ? g : t ? mf_tensor_graph(t) : NULL;
}

MfStatus mf_mode_variable(MfTensor *initial, int dtype, const char *name, bool trainable,
                          MfVariable **eager, MfNode **node)
{
    *eager = NULL;
    *node = NULL;
    MfTensor *cast = NULL;
    if (dtype >= 0 && (MfDType)dtype != initial->dtype) {
        MfStatus st = mf_cast(initial, (MfDType)dtype, &cast);
        if (st != MF_OK)
            return st;
        initial = cast;
    }
    MfGraph *g = mf_mode_graph_of(initial);
    MfStatus st = g ? mf_graph_check_name(g, "Variable", name) : MF_OK;
    if (g && st == MF_OK)
        st = mf_graph_variable(g, initial, name, trainable, node);
    if (!g && !(*eager = mf_variable_new(initial, name, trainable)))
        st = MF_ENOMEM;
    mf_tensor_release(cast);
    return st;
}

/* The eager assign of 'kind' (core/variable.h). */
static MfStatus assign_now(MfVariable *v, MfAssignKind kind, MfTensor *value)
{
    switch (kind) {
    case MF_ASSIGN_ADD: return mf_variable_assign_add(v, value);
    case MF_ASSIGN_SUB: return mf_variable_assign_sub(v, value);
    case MF_ASSIGN_SET: break;
    }
    return mf_variable_assign_value(v, value);
}

MfStatus mf_mode_assign(MfVariable *v, MfAssignKind kind, MfTensor *value, MfTensor **out)
{
    *out = NULL;
    if (!v->value)
        return mf_err_set(MF_EARG, "assign: variable '%s' has no value yet", v->name);
    MfNode *n = mf_mode_variable_node(v);
    if (n)
        return mf_graph_assign(n, kind, value, out);
    MfGraph *g = mf_mode_graph_of(value);
    if (g)
        return mf_graph_assign_captured(g, v, kind, value, out);
    return assign_now(v, kind, value);
}

MfStatus mf_mode_read(MfVariable *v, MfTensor **out)
{
    *out = NULL;
    MfNode *n = mf_mode_variable_node(v);
    if (n)                 /* a read node: it reads when it runs */
        return mf_graph_read(n, out);
    MfTensor *t = mf_variable_read(v);
    if (!t)
        return mf_err_set(MF_EARG, "read_value: variable '%s' has no value yet", v->name);
    if (t->node) {         /* a capture: a tensor that keeps its graph alive */
        *out = mf_graph_output(t->node, t->node_output);
        return *out ? MF_OK : mf_err_nomem("read_value", sizeof **out);
    }
    mf_tensor_retain(t);
    *out = t;
    return MF_OK;
}

MfStatus mf_mode_constant(MfTensor *value, const char *name, MfTensor **out)
{
    MfGraph *g = mf_mode_graph();
    if (!g || value->node) {
        mf_tensor_retain(value);
        *out = value;
        return MF_OK;
    }
    return mf_graph_constant(g, value, name, out);
}
