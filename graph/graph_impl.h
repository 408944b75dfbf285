/* graph_impl.h — what graph/graph.c shares with the other files of graph/
 * (variables.c, trace.c) and nobody else: adding nodes, the Const node of a
 * concrete tensor, suspending control dependencies, and "weak" symbolic
 * tensors the graph itself keeps without keeping itself alive. */
#ifndef MF_GRAPH_IMPL_H
#define MF_GRAPH_IMPL_H

#include "autodiff/walk.h"
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
 * the function the graph frees it with when the graph is freed, given once
 * the slot is filled. */
struct GraphVars **mf_graph_vars_slot_(MfGraph *g);
void mf_graph_vars_owned_(MfGraph *g, void (*vars_free)(struct GraphVars *vars));

/* State another file of graph/ keeps per graph (fusion.c's setting and
 * plan): graph.c frees it with 'free' when the graph is freed, through the
 * pointer, so graph.c does not call into that file. */
typedef struct MfGraphExt {
    void *state;
    void (*free)(void *state);
} MfGraphExt;
MfGraphExt *mf_graph_fusion_slot_(MfGraph *g);

/* A new graph, without the hooks (hooks.c's mf_graph_new installs them
 * first). */
MfGraph *mf_graph_alloc_(void);

/* The builder the dispatcher calls (core/op.h's MfBuilder, installed by
 * hooks.c): whether a graph is being built now, and adding the node of a
 * call to it. */
bool mf_graph_building_(void *self);
MfStatus mf_graph_build_(void *self, MfOpCall *c, MfTensor **outs);

/* A graph's nodes as the backward walk's records (autodiff/walk.h), for
 * the walk (gradients.c) and explain (explain.c): a node output's key is
 * mf_graph_key; only ops built in [lo, hi) pass gradients (a tape's
 * window inside mf.trace), variable reads always. 'describe' writes a
 * record's input keys into 'keys' (grown as needed). */
#define MF_GRAPH_INLINE_KEYS 16
typedef struct MfGraphRecords {
    MfGraph *g;
    int lo, hi;
    MfAdKey inline_keys[MF_GRAPH_INLINE_KEYS];
    MfAdKey *keys;
    int capkeys;
} MfGraphRecords;

static inline MfAdKey mf_graph_key(MfNodeInput in)
{
    return (MfAdKey)in.node * MF_MAX_OUTPUTS + in.output + 1;
}

void mf_graph_records_init(MfGraphRecords *r, MfGraph *g, int lo, int hi);
void mf_graph_records_free(MfGraphRecords *r);
/* MfAdRecordsOps.describe, 'self' an MfGraphRecords. */
MfStatus mf_graph_describe(void *self, int64_t k, MfAdRecord *r);

#endif
