/* dot.c — Graphviz text of a graph (g:to_dot(), g:write_dot, g:render).
 *
 * Nodes are drawn in three clusters: the forward graph, the backward one
 * (names under "gradients/") and the training updates (the top-level scopes
 * of the in-place Apply* ops, "Adam/...": an optimizer's nodes). Each node
 * shows its name, its label with attributes (as listings do) and its first
 * output's spec; data edges are plain, control edges dashed, a variable's
 * reads and assigns dotted. The nodes of a fused node (fusion.h) are drawn
 * in a cluster of their own inside their root's, labelled with the fused
 * node's name and members. Pure text: the face only binds it. */
#include <stdbool.h>
#include <string.h>

#include "fusion.h"
#include "graph.h"

enum { PART_FORWARD, PART_BACKWARD, PART_TRAIN, NPARTS };
#define MAX_TRAIN_SCOPES 8

typedef struct Parts {
    const char *scope[MAX_TRAIN_SCOPES];   /* borrowed node names; 'len' chars */
    size_t len[MAX_TRAIN_SCOPES];
    int nscopes;
} Parts;

/* Adds 's' with '"' and '\' escaped. */
static void add_escaped(MfStrBuf *b, const char *s)
{
    char one[3];
    for (; *s; s++) {
        size_t k = 0;
        if (*s == '"' || *s == '\\')
            one[k++] = '\\';
        one[k++] = *s;
        one[k] = '\0';
        mf_strbuf_add(b, one);
    }
}

static void add_node(MfStrBuf *b, const MfNode *n)
{
    static const char *const shapes[] = {"box", "invhouse", "plaintext", "circle",
                                         "cylinder", "ellipse", "cds"};
    _Static_assert(MF_COUNTOF(shapes) == MF_NODE_NKINDS, "one shape per MfNodeKind");
    char label[256], shape[MF_MAX_RANK * 24 + 8];
    mf_strbuf_addf(b, "    n%d [shape=%s, label=\"", n->index, shapes[n->kind]);
    add_escaped(b, n->name);
    mf_strbuf_add(b, "\\n");
    add_escaped(b, mf_node_label(n, label, sizeof label));
    if (n->noutputs)
        mf_strbuf_addf(b, "\\n%s %s", mf_dtype_name(n->out[0].dtype),
                       mf_shape_str(n->out[0].rank, n->out[0].shape, shape, sizeof shape));
    mf_strbuf_add(b, "\"];\n");
}

static void add_edges(MfStrBuf *b, const MfNode *n)
{
    for (int k = 0; k < n->ninputs; k++)
        mf_strbuf_addf(b, "  n%d -> n%d;\n", n->inputs[k].node, n->index);
    for (int k = 0; k < n->ncontrol; k++)
        mf_strbuf_addf(b, "  n%d -> n%d [style=dashed];\n", n->control[k], n->index);
    if (n->kind == MF_NODE_ASSIGN && n->ref >= 0)  /* the variable it writes */
        mf_strbuf_addf(b, "  n%d -> n%d [style=dotted, arrowhead=diamond];\n", n->index,
                       n->ref);
    else if (n->kind == MF_NODE_READ && n->ref >= 0)
        mf_strbuf_addf(b, "  n%d -> n%d [style=dotted];\n", n->ref, n->index);
}

static void find_train_scopes(const MfGraph *g, Parts *p)
{
    p->nscopes = 0;
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        const MfNode *n = mf_graph_node(g, i);
        const char *slash = strchr(n->name, '/');
        if (n->kind != MF_NODE_OP || !mf_op_table[n->op]->inplace || !slash)
            continue;
        size_t len = (size_t)(slash - n->name);
        bool seen = false;
        for (int k = 0; k < p->nscopes && !seen; k++)
            seen = p->len[k] == len && strncmp(p->scope[k], n->name, len) == 0;
        if (!seen && p->nscopes < MAX_TRAIN_SCOPES) {
            p->scope[p->nscopes] = n->name;
            p->len[p->nscopes++] = len;
        }
    }
}

static int part_of(const Parts *p, const MfNode *n)
{
    if (strncmp(n->name, "gradients/", 10) == 0)
        return PART_BACKWARD;
    for (int k = 0; k < p->nscopes; k++)
        if (strncmp(n->name, p->scope[k], p->len[k]) == 0
            && (n->name[p->len[k]] == '/' || n->name[p->len[k]] == '\0'))
            return PART_TRAIN;
    return PART_FORWARD;
}

/* The part a node is drawn in: its fused node's root's, when it has one. */
static int drawn_in(const Parts *p, const MfFusionPlan *plan, const MfNode *n)
{
    int k = plan ? plan->group_of[n->index] : -1;
    return part_of(p, k >= 0 ? mf_graph_node(n->graph, plan->groups[k].root) : n);
}

/* The fused node rooted at 'n' as a cluster of its members. */
static void add_fused(MfStrBuf *b, const MfGraph *g, const MfFusedGroup *fg)
{
    mf_strbuf_addf(b, "    subgraph cluster_fused_%d {\n      style=rounded;\n      label=\"",
                   fg->root);
    add_escaped(b, mf_graph_node(g, fg->root)->name);
    mf_strbuf_add(b, ": ");
    add_escaped(b, fg->label);
    mf_strbuf_add(b, "\";\n");
    for (int m = 0; m < fg->nmembers; m++) {
        mf_strbuf_add(b, "  ");
        add_node(b, mf_graph_node(g, fg->members[m]));
    }
    mf_strbuf_add(b, "    }\n");
}

/* Adds the cluster of 'part' (when it has nodes). */
static void add_cluster(MfStrBuf *b, const MfGraph *g, const Parts *p,
                        const MfFusionPlan *plan, int part)
{
    static const char *const labels[NPARTS] = {"forward", "backward", "train"};
    bool any = false;
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        const MfNode *n = mf_graph_node(g, i);
        int k = plan ? plan->group_of[i] : -1;
        if (drawn_in(p, plan, n) != part || (k >= 0 && plan->groups[k].root != i))
            continue;
        if (!any)
            mf_strbuf_addf(b, "  subgraph cluster_%s {\n    label=\"%s\";\n", labels[part],
                           labels[part]);
        any = true;
        if (k >= 0)
            add_fused(b, g, &plan->groups[k]);
        else
            add_node(b, n);
    }
    if (any)
        mf_strbuf_add(b, "  }\n");
}

MfStatus mf_graph_dot(const MfGraph *g, MfStrBuf *out)
{
    Parts parts;
    find_train_scopes(g, &parts);
    const MfFusionPlan *plan;
    MfStatus st = mf_fusion_plan((MfGraph *)g, &plan);   /* the plan is a cache */
    if (st != MF_OK)
        return st;
    mf_strbuf_add(out, "digraph moonflow {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n");
    for (int part = 0; part < NPARTS; part++)
        add_cluster(out, g, &parts, plan, part);
    for (int i = 0; i < mf_graph_nnodes(g); i++)
        add_edges(out, mf_graph_node(g, i));
    mf_strbuf_add(out, "}\n");
    return mf_strbuf_status(out, "to_dot");
}
