/* graph_impl.h — what graph/graph.c shares with the other files of graph/
 * (variables.c, trace.c) and nobody else: adding nodes, the Const node of a
 * concrete tensor, suspending control dependencies, and "weak" symbolic
 * tensors the graph itself keeps without keeping itself alive. */
#ifndef MF_GRAPH_IMPL_H
#define MF_GRAPH_IMPL_H

#include "graph.h"

/* Adds a node of 'kind' named scope + ('name' or 'base') made unique, with
 * the control dependencies in force; '*out' borrowed. 'raw': 'name' is a
 * full name, the scope is not prepended. */
MfStatus mf_graph_add_node_(MfGraph *g, MfNodeKind kind, const char *base, const char *name,
                            bool raw, MfNode **out);

/* The Const node holding concrete 't' (one per tensor), made on first use. */
MfStatus mf_graph_const_for_(MfGraph *g, MfTensor *t, MfNode **out);

/* The Const node of concrete 't' when 't' was used in 'g', else NULL. */
MfNode *mf_graph_find_const_(const MfGraph *g, const MfTensor *t);

/* Control dependencies in force: 'suspend' clears them and returns a mark
 * for 'resume' (variables ignore them, as TensorFlow's init_scope). */
int mf_graph_suspend_control_(MfGraph *g);
void mf_graph_resume_control_(MfGraph *g, int mark);

/* A symbolic tensor for output 'k' of 'n' that does not retain the graph
 * (owned by the graph: released when the graph is freed). */
MfTensor *mf_graph_weak_output_(MfNode *n, int k);

/* Per-graph variable bookkeeping (variables.c): the slot in MfGraph, and
 * freeing it (called while the graph is being freed). */
struct GraphVars **mf_graph_vars_slot_(MfGraph *g);
void mf_graph_vars_free_(struct GraphVars *gv);

/* State another file of graph/ keeps per graph (fusion.c's setting and
 * plan): graph.c frees it with 'free' when the graph is freed, through the
 * pointer, so graph.c does not call into that file. */
typedef struct MfGraphExt {
    void *state;
    void (*free)(void *state);
} MfGraphExt;
MfGraphExt *mf_graph_fusion_slot_(MfGraph *g);

/* The value hook of core/variable.c: while a graph is being built, an eager
 * variable reads as its capture in that graph. */
MfTensor *mf_graph_capture_hook_(MfVariable *v);

#endif
