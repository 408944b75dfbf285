/* custom_gradient.c — mf.custom_gradient in graph mode (gradients.h): the
 * Identity node that marks f's result and carries the user's gradient
 * function (run by the walk in gradients.c), the check that f read no
 * trainable variable besides its inputs, and dropping the functions when a
 * trace finishes. */
#include "gradients.h"

#include "graph_impl.h"

/* Where input 'x' of a custom gradient is in 'g' (a concrete one: its
 * Const node, made if f did not use it). */
static MfStatus custom_input(MfGraph *g, MfTensor *x, int k, MfNodeInput *at)
{
    if (!x->node) {
        MfNode *c = NULL;
        MfStatus st = mf_graph_const_for_(g, x, &c);
        if (st == MF_OK)
            *at = (MfNodeInput){c->index, 0};
        return st;
    }
    if (mf_tensor_graph(x) != g)
        return mf_err_set(MF_EARG, "custom_gradient: input %d is a tensor of another graph than "
                          "f's result", k + 1);
    *at = (MfNodeInput){((MfNode *)x->node)->index, x->node_output};
    return MF_OK;
}

/* True when one of the inputs 'ins' is the graph variable node 'var' or a
 * read of it, or (var NULL) a read of the captured eager variable 'ev'. */
static bool input_var(const MfGraph *g, int nin, const MfNodeInput *ins, const MfNode *var,
                      const MfVariable *ev)
{
    for (int k = 0; k < nin; k++) {
        const MfNode *in = mf_graph_node(g, ins[k].node);
        if (ev ? in->kind == MF_NODE_READ && in->var == ev
               : in == var || (in->kind == MF_NODE_READ && !in->var && in->ref == var->index))
            return true;
    }
    return false;
}

/* The name of a trainable variable node 'nd' reads (a READ node, or any
 * node taking a graph variable's output) that is not one of the inputs,
 * else NULL. */
static const char *foreign_read(const MfGraph *g, const MfNode *nd, int nin,
                                const MfNodeInput *ins)
{
    if (nd->kind == MF_NODE_READ && nd->var)
        return nd->var->trainable && !input_var(g, nin, ins, NULL, nd->var) ? nd->var->name
                                                                             : NULL;
    if (nd->kind == MF_NODE_READ && nd->ref >= 0) {
        const MfNode *v = mf_graph_node(g, nd->ref);
        return v->trainable && !input_var(g, nin, ins, v, NULL) ? v->name : NULL;
    }
    for (int k = 0; k < nd->ninputs; k++) {
        const MfNode *p = mf_graph_node(g, nd->inputs[k].node);
        if (p->kind == MF_NODE_VARIABLE && p->trainable && !input_var(g, nin, ins, p, NULL))
            return p->name;
    }
    return NULL;
}

/* The trainable variables f read (nodes 'first'.. of 'g') must be among
 * its inputs: the gradient function gives gradients for those only. */
static MfStatus check_reads(MfGraph *g, int first, int ninputs, const MfNodeInput *ins)
{
    for (int i = first < 0 ? mf_graph_nnodes(g) : first; i < mf_graph_nnodes(g); i++) {
        const char *name = foreign_read(g, mf_graph_node(g, i), ninputs, ins);
        if (name)
            return mf_err_set(MF_EARG, "custom_gradient: f reads the trainable variable '%s', "
                              "which is not one of its inputs: the gradient function gives "
                              "gradients for the inputs only, so its gradient would be "
                              "missing; pass the variable to f as an argument", name);
    }
    return MF_OK;
}

MfStatus mf_graph_custom_gradient(int first, int ninputs, MfTensor *const *inputs, MfTensor *y,
                                  MfNodeGrad *fn, MfTensor **out)
{
    *out = NULL;
    MfGraph *g = mf_tensor_graph(y);
    MfStatus st = g ? MF_OK : mf_err_set(MF_EINTERNAL, "custom_gradient: y is not symbolic");
    if (st == MF_OK && mf_op_exec_running())
        st = mf_err_set(MF_EARG, "custom_gradient: cannot build a graph while a graph runs");
    bool pushed = false;
    int smark = -1;
    if (st == MF_OK && mf_graph_default() != g && (st = mf_graph_push_default(g)) == MF_OK)
        pushed = true;
    for (int k = 0; k < ninputs && st == MF_OK; k++)
        st = custom_input(g, inputs[k], k, &fn->inputs[k]);
    if (st == MF_OK)
        st = check_reads(g, first, ninputs, fn->inputs);
    if (st == MF_OK)
        st = mf_graph_push_scope(g, "custom_gradient", &smark);
    if (st == MF_OK)
        st = mf_unary(MF_OP_IDENTITY, y, out);
    if (smark >= 0)
        mf_graph_pop_scope(g, smark);
    if (pushed)
        mf_graph_pop_default();
    if (st == MF_OK && !(*out)->node) {   /* the builder always returns a node output */
        mf_tensor_release(*out);
        *out = NULL;
        st = mf_err_set(MF_EINTERNAL, "custom_gradient: the Identity was not built into the "
                        "graph");
    }
    if (st != MF_OK) {
        fn->free(fn);
        return st;
    }
    ((MfNode *)(*out)->node)->grad = fn;
    return MF_OK;
}

void mf_graph_drop_custom_gradients(MfGraph *g)
{
    for (int i = 0, n = mf_graph_nnodes(g); i < n; i++) {
        MfNodeGrad *f = mf_graph_node(g, i)->grad;
        if (f && f->backward) {
            f->drop(f);
            f->backward = NULL;
        }
    }
}
