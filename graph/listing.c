/* listing.c — the text of print(g) and g:nodes(): one line per node, with
 * the op's non-default attributes from its schema (core/attrs.c), inputs
 * as "name:k", control inputs as "^name" after a ';', and output specs.
 * Pure text: the face (repl/lmf_graph.c) only binds it. */
#include <stdio.h>
#include <string.h>

#include "core/clocale.h"
#include "fusion.h"
#include "graph.h"

/* The rank of the first input of op node 'n' (-1 when none or unknown). */
static int first_rank(const MfNode *n)
{
    if (!n->ninputs)
        return -1;
    return mf_graph_node(n->graph, n->inputs[0].node)->out[n->inputs[0].output].rank;
}

const char *mf_node_attrs_text(const MfNode *n, char *buf, size_t size)
{
    buf[0] = '\0';
    if (n->kind == MF_NODE_OP)
        mf_attrs_format(n->op, &n->attrs, first_rank(n), buf, size);
    return buf;
}

const char *mf_node_label(const MfNode *n, char *buf, size_t size)
{
    if (n->kind == MF_NODE_OP)
        return mf_op_label(n->op, &n->attrs, first_rank(n), buf, size);
    snprintf(buf, size, "%s", mf_node_op_name(n));
    return buf;
}

/* "float32 (?,3)" */
static void add_spec(MfStrBuf *b, const MfTensorSpec *s)
{
    char shape[MF_MAX_RANK * 24 + 8];
    mf_strbuf_addf(b, "%s %s", mf_dtype_name(s->dtype),
                   mf_shape_str(s->rank, s->shape, shape, sizeof shape));
}

/* The variable a READ or ASSIGN node refers to (a graph variable's node, or
 * a captured eager variable's name), or NULL. */
static const char *ref_name(const MfNode *n)
{
    if (n->kind != MF_NODE_READ && n->kind != MF_NODE_ASSIGN)
        return NULL;
    if (n->var)
        return n->var->name;
    return n->ref >= 0 ? mf_graph_node(n->graph, n->ref)->name : NULL;
}

/* A small Const shows its values: "Const(2)", "Const(0.5, 1)"; larger
 * ones only their shape (after the arrow). */
static void add_const_values(MfStrBuf *b, const MfNode *n)
{
    const MfTensor *v = n->value;
    if (n->kind != MF_NODE_CONST || !v || v->rank > 1 || mf_tensor_numel(v) > 4)
        return;
    MfCLocale loc = mf_c_locale_begin();   /* "0.5" whatever os.setlocale says */
    for (int64_t i = 0; i < mf_tensor_numel(v); i++)
        mf_strbuf_addf(b, "%s%.6g", i ? ", " : "", mf_tensor_get(v, i));
    mf_c_locale_end(loc);
}

MfStatus mf_node_listing_line(const MfNode *n, MfStrBuf *out)
{
    const MfGraph *g = n->graph;
    char label[256];
    mf_strbuf_addf(out, "%s = %s(", n->name, mf_node_label(n, label, sizeof label));
    const char *ref = ref_name(n);
    if (ref)             /* the variable an assign writes or a read reads */
        mf_strbuf_addf(out, "&%s%s", ref, n->ninputs ? ", " : "");
    for (int k = 0; k < n->ninputs; k++)
        mf_strbuf_addf(out, "%s%s:%d", k ? ", " : "", mf_graph_node(g, n->inputs[k].node)->name,
                       n->inputs[k].output);
    /* a small Const's values stand where its inputs would: before the ';' */
    size_t before_values = out->len;
    add_const_values(out, n);
    bool any_inputs = n->ninputs || out->len > before_values;
    for (int k = 0; k < n->ncontrol; k++)
        mf_strbuf_addf(out, "%s^%s", k ? ", " : (any_inputs ? "; " : ""),
                       mf_graph_node(g, n->control[k])->name);
    mf_strbuf_add(out, ")");
    for (int k = 0; k < n->noutputs; k++) {
        mf_strbuf_add(out, k ? ", " : " -> ");
        add_spec(out, &n->out[k]);
    }
    return mf_strbuf_status(out, "Graph listing");
}

MfStatus mf_graph_format_tensor(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out)
{
    if (!t->node)
        return mf_format_tensor(t, opt, out);
    char name[300], shape[MF_MAX_RANK * 24 + 8];
    mf_graph_tensor_name(t, name, sizeof name);
    mf_strbuf_addf(out, "<mf.Tensor '%s' shape=%s dtype=%s op=%s>", name,
                   mf_shape_str(t->rank, t->shape, shape, sizeof shape),
                   mf_dtype_name(t->dtype), mf_node_op_name(t->node));
    return mf_strbuf_status(out, "print");
}

/* The fused nodes a run makes (fusion.h): "  gelu = Fused[Mul, Erf](x:0,
 * Const:0) of multiply, gelu -> float32 (2,3)". */
static MfStatus add_fused(const MfGraph *g, MfStrBuf *out)
{
    const MfFusionPlan *plan;
    MfStatus st = mf_fusion_plan((MfGraph *)g, &plan);   /* the plan is a cache */
    if (st != MF_OK || !plan || plan->ngroups == 0)
        return st;
    mf_strbuf_addf(out, "\nfused when run (help \"fusion\"; mf.config{fusion = false} turns "
                   "it off): %d node%s", plan->ngroups, plan->ngroups == 1 ? "" : "s");
    for (int k = 0; k < plan->ngroups; k++) {
        const MfFusedGroup *fg = &plan->groups[k];
        const MfNode *root = mf_graph_node(g, fg->root);
        mf_strbuf_addf(out, "\n  %s = %s(", root->name, fg->label);
        for (int i = 0; i < fg->ninputs; i++)
            mf_strbuf_addf(out, "%s%s:%d", i ? ", " : "",
                           mf_graph_node(g, fg->inputs[i].node)->name, fg->inputs[i].output);
        mf_strbuf_add(out, ") of ");
        for (int m = 0; m < fg->nmembers; m++)
            mf_strbuf_addf(out, "%s%s", m ? ", " : "", mf_graph_node(g, fg->members[m])->name);
        mf_strbuf_add(out, " -> ");
        add_spec(out, &root->out[0]);
    }
    return MF_OK;
}

MfStatus mf_graph_listing(const MfGraph *g, MfStrBuf *out)
{
    int nn = mf_graph_nnodes(g);
    mf_strbuf_addf(out, "mf.Graph with %d node%s", nn, nn == 1 ? "" : "s");
    for (int i = 0; i < nn; i++) {
        mf_strbuf_add(out, "\n  ");
        mf_node_listing_line(mf_graph_node(g, i), out);
    }
    MfStatus st = add_fused(g, out);
    return st != MF_OK ? st : mf_strbuf_status(out, "Graph listing");
}
