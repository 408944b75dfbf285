/* graph.h — graph mode: the graph IR, the in-degree executor and sessions.
 *
 * A graph is a refcounted list of nodes in creation order. A node is an op
 * from the one op table (core/op.h), a placeholder (dtype and shape, -1 for
 * unknown dims, fed at run time), a constant (a concrete tensor it holds) or
 * a no-op (only control inputs; mf.group). Its data inputs are
 * (node, output index) pairs, its control inputs are nodes that must run
 * first. Names are unique in a graph ("add", "add_1", "layer1/matmul");
 * tensors are named "node:index".
 *
 * Building: while a graph is the default (mf_graph_push_default), the
 * dispatcher hands every op to the graph's builder, which runs the op's
 * 'infer' on the inputs' specs, adds a node and returns symbolic outputs
 * (mf_tensor_symbolic, 'node' pointing at the MfNode). A concrete tensor
 * used as an input becomes a Const node. Symbolic tensors retain their
 * graph, so a graph lives while any of its tensors does.
 *
 * Running: mf_exec_run (graph/exec.c) is the in-degree executor of
 * DESIGN.md; an MfSession (graph/session.c) runs fetches with feeds.
 *
 * Ownership: '_new' returns a reference the caller owns; getters borrow;
 * tensors returned through 'MfTensor **out' are owned by the caller. */
#ifndef MF_GRAPH_H
#define MF_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/op.h"

typedef struct MfGraph MfGraph;

typedef enum MfNodeKind {
    MF_NODE_OP,          /* an op of the table: 'op', 'attrs' */
    MF_NODE_PLACEHOLDER, /* fed at run time: 'out[0]' is its dtype and shape */
    MF_NODE_CONST,       /* 'value' */
    MF_NODE_NOOP         /* no outputs, only control inputs (mf.group) */
} MfNodeKind;

typedef struct MfNodeInput {
    int node;            /* index of the producing node */
    int output;
} MfNodeInput;

typedef struct MfNode {
    MfGraph *graph;      /* borrowed: the graph owns its nodes */
    int index;           /* creation order, 0-based */
    MfNodeKind kind;
    MfOpId op;           /* MF_NODE_OP only */
    char *name;          /* unique in the graph, with its scope */
    int ninputs;
    MfNodeInput *inputs;
    int ncontrol;
    int *control;        /* indices of control inputs */
    MfAttrs attrs;
    int noutputs;
    MfTensorSpec out[MF_MAX_OUTPUTS];
    MfTensor *value;     /* MF_NODE_CONST: owned */
} MfNode;

/* A new empty graph (NULL with a message on failure). */
MfGraph *mf_graph_new(void);
void mf_graph_retain(MfGraph *g);
void mf_graph_release(MfGraph *g);

/* Nodes in creation order (borrowed). */
int mf_graph_nnodes(const MfGraph *g);
MfNode *mf_graph_node(const MfGraph *g, int i);

/* The node named 'name' (borrowed), or NULL. */
MfNode *mf_graph_find(const MfGraph *g, const char *name);

/* The node's kind as users see it: the op's TensorFlow name, "Placeholder",
 * "Const" or "NoOp". */
const char *mf_node_op_name(const MfNode *n);

/* The default graph stack. 'push' retains 'g' and makes it the graph that
 * ops are built into; 'pop' undoes the latest push. mf_graph_default is
 * borrowed (NULL when none). */
MfStatus mf_graph_push_default(MfGraph *g);
void mf_graph_pop_default(void);
MfGraph *mf_graph_default(void);

/* Name scopes: 'push' appends "name/" to the scope of new node names and
 * returns a mark for 'pop'. Fails when 'name' is empty or has ':' in it. */
MfStatus mf_graph_push_scope(MfGraph *g, const char *name, int *mark);
void mf_graph_pop_scope(MfGraph *g, int mark);

/* Control dependencies: nodes built while pushed get the 'n' nodes 'deps'
 * (of 'g') as control inputs. Returns a mark for 'pop'. */
MfStatus mf_graph_push_control(MfGraph *g, int n, MfNode *const *deps, int *mark);
void mf_graph_pop_control(MfGraph *g, int mark);

/* Adds a placeholder of 'dt' and 'shape' (-1: unknown); 'name' NULL means
 * "Placeholder". '*out' is its symbolic output, owned. */
MfStatus mf_graph_placeholder(MfGraph *g, MfDType dt, int rank, const int64_t *shape,
                              const char *name, MfTensor **out);

/* Adds a Const node holding 'value' (retained); its output in '*out'. */
MfStatus mf_graph_constant(MfGraph *g, MfTensor *value, const char *name, MfTensor **out);

/* Adds a NoOp whose control inputs are 'deps' (mf.group); '*node' is the
 * new node (borrowed). */
MfStatus mf_graph_group(MfGraph *g, int n, MfNode *const *deps, const char *name,
                        MfNode **node);

/* Adds 'dep' as a control input of 'n' (both of one graph). May create a
 * cycle: the executor detects it. */
MfStatus mf_graph_add_control(MfNode *n, MfNode *dep);

/* A symbolic tensor for output 'output' of 'n' (owned), or NULL. */
MfTensor *mf_graph_output(MfNode *n, int output);

/* The graph a symbolic tensor belongs to (borrowed), or NULL. */
MfGraph *mf_tensor_graph(const MfTensor *t);

/* Writes "add:0" for a symbolic tensor ("" otherwise); returns 'buf'. */
char *mf_graph_tensor_name(const MfTensor *t, char *buf, int cap);

/* The tensor named "node:index" (or "node", index 0), owned; NULL with a
 * message naming 'fname' when there is none. */
MfTensor *mf_graph_get_tensor(MfGraph *g, const char *name, const char *fname);

/* ---- the executor (graph/exec.c) ---------------------------------------- */

/* One step of a recorded schedule: the node run, its in-degree in the
 * table (data and control edges in this run), and the ready queue right
 * after it ran and its consumers were queued (at most MF_SCHED_READY_MAX
 * names kept; 'nready' is the full length). */
#define MF_SCHED_READY_MAX 64
typedef struct MfSchedStep {
    int node;
    int indegree;
    int nready;
    int ready[MF_SCHED_READY_MAX];
} MfSchedStep;

typedef struct MfSchedule {
    int nsteps;
    MfSchedStep *steps;
} MfSchedule;

void mf_schedule_free(MfSchedule *s);

typedef struct MfExecOptions {
    bool schedule;                                   /* fill '*sched' */
    void (*on_node)(void *ctx, const MfNode *n);     /* after each node, or NULL */
    void *ctx;
} MfExecOptions;

/* Runs what 'fetches' (symbolic tensors of 'g') and 'targets' (nodes run
 * for their effects, e.g. a group) need, with the concrete 'feeds[i]'
 * replacing the symbolic 'fed[i]' (any tensor of 'g', checked for dtype
 * and shape). Fails naming the node: missing feed, cycle, foreign tensor,
 * an op's own error, MF_EINTR on Ctrl-C.
 * On success 'results[i]' holds an owned value per fetch; with
 * opt->schedule, '*sched' is an owned schedule (mf_schedule_free). */
MfStatus mf_exec_run(MfGraph *g, int nfetch, MfTensor *const *fetches, int ntargets,
                     MfNode *const *targets, int nfeed, MfTensor *const *fed,
                     MfTensor *const *feeds, const MfExecOptions *opt, MfTensor **results,
                     MfSchedule **sched);

/* True while the executor runs nodes (the builder stays out of the way). */
bool mf_exec_running(void);

/* mf_op1 run eagerly even while a graph is the default (e.g. to convert a
 * fed value); '*out' owned on success. */
MfStatus mf_exec_eager(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                       MfTensor **out);

/* ---- sessions (graph/session.c) ------------------------------------------ */

typedef struct MfSession MfSession;

/* A session on 'g' (retained); NULL with a message on failure. */
MfSession *mf_session_new(MfGraph *g);
void mf_session_free(MfSession *s);
MfGraph *mf_session_graph(const MfSession *s);

/* Closes the session; later runs fail. */
void mf_session_close(MfSession *s);
bool mf_session_closed(const MfSession *s);

/* mf_exec_run on the session's graph, failing when the session is closed. */
MfStatus mf_session_run(MfSession *s, int nfetch, MfTensor *const *fetches, int ntargets,
                        MfNode *const *targets, int nfeed, MfTensor *const *fed,
                        MfTensor *const *feeds, const MfExecOptions *opt,
                        MfTensor **results, MfSchedule **sched);

#endif
