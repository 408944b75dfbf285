/* fusion.h — what graph/fusion.c (the pass) and graph/fusion_run.c (the
 * fused node's kernel) share with the executor and the listings of graph/,
 * and nobody else (doc/design.md "Fusion").
 *
 * The pass reads a graph and groups elementwise op nodes into fused nodes;
 * it never changes the graph: the graph a user differentiates stays the
 * one the user built, and the executor runs a group as one node. A group
 * has a root (its last node: an elementwise op, or a reduction whose first
 * input is a member) and members before it whose every consumer, in the
 * whole graph, is a later member of the same group, whose output has the
 * group's elementwise shape and dtype, and which take part in no control
 * dependency. So the values of the other members are needed by nobody
 * else and the group computes exactly what its nodes compute one by one.
 *
 * Ownership: a plan belongs to its graph (graph.c frees it with the graph)
 * and is replaced when nodes are added: what borrows from it (a recorded
 * schedule's labels) is valid until then. */
#ifndef MF_GRAPH_FUSION_H
#define MF_GRAPH_FUSION_H

#include "graph.h"

typedef struct MfFusedGroup {
    int root;              /* node index of the last member */
    int nmembers;          /* at least 2, the root included */
    bool reduces;          /* the root is a reduction of the member before it */
    int *members;          /* node indices in creation order, the root last */
    /* Member m's data inputs: args[arg_start[m] .. arg_start[m + 1]), each
     * a member's position (>= 0) or an external input, -(k + 1) for
     * 'inputs[k]'. */
    int *arg_start;
    int *args;
    int ninputs;
    MfNodeInput *inputs;   /* external inputs, in the order members first read them */
    char *label;           /* "Fused[Mul, Erf, AddV2, Mul]": the members' op names */
} MfFusedGroup;

typedef struct MfFusionPlan {
    int nnodes;            /* the graph's node and control edge counts when it was made */
    int64_t ncontrol;
    int ngroups;
    MfFusedGroup *groups;
    int *group_of;         /* per node: the group it belongs to, or -1 */
} MfFusionPlan;

/* The plan of 'g' (borrowed from the graph; remade when nodes were added),
 * in '*out'; NULL when fusion is off for 'g' (mf_fusion_enabled,
 * mf_graph_set_fusion). MF_ENOMEM with a message. */
MfStatus mf_fusion_plan(MfGraph *g, const MfFusionPlan **out);

/* The plan 'g' would have with fusion on, whatever the settings say (the
 * listings show it, with a note when fusion is off). Same errors. */
MfStatus mf_fusion_plan_any(MfGraph *g, const MfFusionPlan **out);

/* Runs group 'fg' of 'g' on the values of its external inputs ('in', in
 * the order of fg->inputs), writing the root's value (owned) into '*out'.
 * Each element goes through the members' own kernels ('forward' of their
 * descriptors) in the members' order, a block of elements at a time, so
 * the result is bit-identical to running the nodes one by one; when the
 * values' dtypes or shapes do not allow blocks (a member broadcasting to a
 * shape smaller than the group's, integers), the members run one by one
 * through the dispatcher, which then reports any error as it would
 * unfused. Errors: the members' own. */
MfStatus mf_fusion_run(const MfGraph *g, const MfFusedGroup *fg, MfTensor *const *in,
                       MfTensor **out);

#endif
