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
 * doc/design.md; an MfSession (graph/session.c) runs fetches with feeds.
 *
 * Ownership: '_new' returns a reference the caller owns; getters borrow;
 * tensors returned through 'MfTensor **out' are owned by the caller. */
#ifndef MF_GRAPH_H
#define MF_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "present/format.h"
#include "core/op.h"
#include "core/variable.h"

typedef struct MfGraph MfGraph;

typedef enum MfNodeKind {
    MF_NODE_OP,          /* an op of the table: 'op', 'attrs' */
    MF_NODE_PLACEHOLDER, /* fed at run time: 'out[0]' is its dtype and shape */
    MF_NODE_CONST,       /* 'value' */
    MF_NODE_NOOP,        /* no outputs, only control inputs (mf.group) */
    MF_NODE_VARIABLE,    /* "VariableV2": its output is the session's current value */
    MF_NODE_READ,        /* "ReadVariableOp": reads 'ref' (or the eager 'var') when it runs */
    MF_NODE_ASSIGN       /* "Assign"/"AssignAdd"/"AssignSub": input 0 into 'ref' */
} MfNodeKind;
#define MF_NODE_NKINDS (MF_NODE_ASSIGN + 1)   /* keep after the last */

/* How an assign node combines its input with the variable's value. */
typedef enum MfAssignKind { MF_ASSIGN_SET, MF_ASSIGN_ADD, MF_ASSIGN_SUB } MfAssignKind;

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
    /* Variables (graph/variables.c). VARIABLE: 'ref' is its initializer
     * (an ASSIGN node), 'trainable' its collection. READ / ASSIGN: 'ref' is
     * the VARIABLE node, or -1 with 'var' set: an eager MfVariable captured
     * by reference (mf.trace), retained. ASSIGN: 'assign' says how. */
    int ref;
    bool trainable;
    /* PLACEHOLDER made without a shape (mf.placeholder("float32")): takes a
     * value of any shape; while the graph is built it stands for a scalar
     * (TensorFlow 1.x's keep_prob, learning rates). */
    bool any_shape;
    MfAssignKind assign;
    struct MfVariable *var;
    /* custom_gradient (graph/gradients.h): the gradient walk calls it
     * instead of the op's gradient; owned, freed with the node. */
    struct MfNodeGrad *grad;
    /* A registered gradient replacing the op's (gradient_override_map at
     * creation; borrowed: registered gradients are permanent). */
    MfGradFn *override;
    /* Where the user made it ("script.lua:12"), noted while check_numerics
     * is on (core/numerics.h) for its message; owned, NULL otherwise. */
    char *made;
} MfNode;

/* A gradient written by the user for one node (mf.custom_gradient in graph
 * mode): 'backward' receives the node's output gradients (symbolic) and
 * writes owned gradients for the 'ninputs' tensors 'inputs' (of the node's
 * graph; NULL: none), while the gradient graph is built. 'backward' NULL:
 * the function was dropped (a finished trace): asking fails loudly. */
typedef struct MfNodeGrad MfNodeGrad;
struct MfNodeGrad {
    const char *name;
    int ninputs;
    MfNodeInput *inputs;
    MfStatus (*backward)(MfNodeGrad *f, int noutputs, MfTensor *const *doutputs,
                         int ninputs, MfTensor *const *inputs, MfTensor **dinputs);
    void (*drop)(MfNodeGrad *f);   /* releases what 'backward' needs */
    void (*free)(MfNodeGrad *f);   /* 'drop' (if not yet) and frees 'f' */
};

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

/* The node's op name with its non-default attributes, as every listing
 * shows it: "MatMul[transpose_a]", "Sum[axis=2, keepdims]", "Relu"
 * (mf_attrs_format, core/op.h). Returns 'buf'. */
const char *mf_node_label(const MfNode *n, char *buf, size_t size);

/* Only the attributes of that label: "axis=2, keepdims", "" when none
 * (g:nodes()'s 'attrs'). Returns 'buf'. */
const char *mf_node_attrs_text(const MfNode *n, char *buf, size_t size);

/* The text listings of graph/listing.c and graph/dot.c, appended to 'out'
 * (core/strbuf.h; the caller frees it). Each returns MF_OK, or MF_ENOMEM
 * with a message (the text is then incomplete).
 * - mf_graph_listing: what print(g) shows, "mf.Graph with 3 nodes" then one
 *   line per node in creation order;
 * - mf_node_listing_line: one such line, "add_1 = AddV2(add:0, Const:0; ^init)
 *   -> float32 (?,3)": the label, '&v' for the variable a read or assign
 *   refers to, the data inputs, the control inputs after ';' as '^name', a
 *   small Const's values, then each output's dtype and shape;
 * - mf_graph_dot: Graphviz text (g:to_dot()): forward, backward
 *   ("gradients/") and training (an optimizer's updates) nodes in separate
 *   clusters, control edges dashed, variable references dotted. */
MfStatus mf_graph_listing(const MfGraph *g, MfStrBuf *out);
MfStatus mf_node_listing_line(const MfNode *n, MfStrBuf *out);
/* print(t) of any tensor: a graph tensor as TensorFlow shows it, with the
 * op that makes it, "<mf.Tensor 'add:0' shape=(?,3) dtype=float32
 * op=AddV2>"; a concrete one as mf_format_tensor writes it with 'opt'. */
MfStatus mf_graph_format_tensor(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out);
MfStatus mf_graph_dot(const MfGraph *g, MfStrBuf *out);

/* The picture on disk (graph/render.c). mf_graph_write_dot writes
 * mf_graph_dot's text to 'path' (g:write_dot); mf_graph_render runs
 * Graphviz's 'dot' on it (through '<path>.dot', removed after), writing
 * 'path' in the format its extension names (png svg pdf jpg gif ps; png
 * otherwise) (g:render). A failed write leaves no partial file. Errors,
 * MF_EIO: "write_dot: cannot write '<path>': <reason>", "render: Graphviz
 * 'dot' is not installed ..." (only when no 'dot' is on $PATH), "render:
 * cannot start dot: ...", "render: 'dot' failed writing '<path>' (exit
 * status N)"; MF_ENOMEM. */
MfStatus mf_graph_write_dot(const MfGraph *g, const char *path);
MfStatus mf_graph_render(const MfGraph *g, const char *path);

/* The default graph stack. 'push' retains 'g' and makes it the graph that
 * ops are built into (NULL: eager execution until the pop, TensorFlow's
 * init_scope); 'pop' undoes the latest push. mf_graph_default is borrowed
 * (NULL when none). */
MfStatus mf_graph_push_default(MfGraph *g);
void mf_graph_pop_default(void);
MfGraph *mf_graph_default(void);

/* The default graph for 'fname' (placeholder, name_scope, a Session without
 * a graph ...), borrowed; NULL with a message saying how to build one when
 * no graph is being built. */
MfGraph *mf_graph_default_for(const char *fname);

/* 'given' when not NULL, else the default graph for 'fname', a function
 * that also takes the graph as its argument (mf.global_variables(g) ...):
 * without either, NULL with a message saying both ways. Borrowed. */
MfGraph *mf_graph_given_or_default(MfGraph *given, const char *fname);

/* A function graph is one mf.trace builds: variables a layer makes while
 * tracing are made eagerly, outside it (mf.init_scope). */
void mf_graph_mark_function(MfGraph *g);
bool mf_graph_is_function(const MfGraph *g);

/* Fusion (graph/fusion.c, doc/design.md "Fusion"): when a graph runs,
 * chains of elementwise ops (up to a reduction) run as one fused node, bit
 * for bit as they would one by one. On by default.
 * mf_fusion_set_enabled(false) (mf.config{fusion = false}) turns it off for
 * every graph; mf_graph_set_fusion(g, false) (mf.trace(f, {fusion =
 * false})) for 'g' alone (MF_ENOMEM with a message). mf_graph_fusion_on
 * says whether runs of 'g' fuse. */
void mf_fusion_set_enabled(bool on);
bool mf_fusion_enabled(void);
MfStatus mf_graph_set_fusion(MfGraph *g, bool on);
bool mf_graph_fusion_on(const MfGraph *g);

/* Checks a node name a user gave to 'fname' (e.g. "placeholder") for a
 * node of 'g' (NULL: no scope): NULL passes (the caller picks a default);
 * '' or a name with ':' in it (':' separates a node from its output index),
 * or one too long with the scope, fails with a message naming 'fname', what
 * was expected and what was given. Every path taking a user's node name
 * reports through this one check. */
MfStatus mf_graph_check_name(const MfGraph *g, const char *fname, const char *name);

/* Name scopes: 'push' appends "name/" to the scope of new node names and
 * returns a mark for 'pop'. Fails when 'name' is empty or has ':' in it. */
MfStatus mf_graph_push_scope(MfGraph *g, const char *name, int *mark);
void mf_graph_pop_scope(MfGraph *g, int mark);

/* Control dependencies: nodes built while pushed get the 'n' nodes 'deps'
 * (of 'g') as control inputs. Returns a mark for 'pop'. */
MfStatus mf_graph_push_control(MfGraph *g, int n, MfNode *const *deps, int *mark);
void mf_graph_pop_control(MfGraph *g, int mark);

/* Adds a placeholder of 'dt' and 'shape' (-1: unknown; 'rank' -1: any
 * shape, see MfNode.any_shape); 'name' NULL means
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

/* 't' itself (eager tensors, strong symbolic ones), or, when 't' is one of
 * its graph's weak tensors (a captured variable's current read), a strong
 * tensor of the same node output, and the reference to 't' is released: a
 * weak tensor must not outlive its graph in a Lua box or other owner.
 * NULL (with a message) when out of memory; 't' is then released too. */
MfTensor *mf_graph_strengthen(MfTensor *t);

/* The graph a symbolic tensor belongs to (borrowed), or NULL. */
MfGraph *mf_tensor_graph(const MfTensor *t);

/* Writes "add:0" for a symbolic tensor ("" otherwise); returns 'buf'. */
char *mf_graph_tensor_name(const MfTensor *t, char *buf, int cap);

/* Writes the name of data input 'k' of 'n', "add:0", as listings and
 * g:nodes() show it; returns 'buf' (MF_INPUT_NAME_CAP holds any: node
 * names are shorter than 256 bytes). */
#define MF_INPUT_NAME_CAP 288
char *mf_node_input_name(const MfNode *n, int k, char *buf, int cap);

/* The tensor named "node:index" (or "node", index 0), owned; NULL with a
 * message naming 'fname' when there is none. */
MfTensor *mf_graph_get_tensor(MfGraph *g, const char *name, const char *fname);

/* ---- is a graph being built (graph/building.c) --------------------------------
 * The one answer to "do ops become nodes now": every folder asks these
 * (graph.c's builder, the capture of eager Variables, train/, mode/). */

/* The graph ops are built into now: the default graph, except while the
 * executor runs nodes (their ops run). NULL: eager. Borrowed. */
MfGraph *mf_mode_graph(void);

/* The VARIABLE node of a graph Variable handle (its value is that node's
 * output), or NULL for an eager Variable. Borrowed. */
MfNode *mf_mode_variable_node(const struct MfVariable *v);

/* True when 'v' belongs where ops go now: to the graph being built, or, with
 * none, 'v' is eager (TensorFlow lists only the current graph's). */
bool mf_mode_variable_here(const struct MfVariable *v);

/* ---- the executor (graph/exec.c) ---------------------------------------- */

/* One step of a recorded schedule: the node run, its in-degree in the
 * table (data and control edges in this run), and the ready queue right
 * after it ran and its consumers were queued (at most MF_SCHED_READY_MAX
 * names kept; 'nready' is the full length). */
#define MF_SCHED_READY_MAX 64
typedef struct MfSchedStep {
    int node;
    const char *op;      /* a fused node's label ("Fused[Mul, Tanh]", borrowed from the
                          * graph until nodes are added to it), or NULL: the node's op */
    int indegree;
    int nready;
    int ready[MF_SCHED_READY_MAX];
} MfSchedStep;

typedef struct MfSchedule {
    int nsteps;
    MfSchedStep *steps;
} MfSchedule;

void mf_schedule_free(MfSchedule *s);

/* One row of a printed schedule: a step (its node's name and op, in-degree,
 * the ready queue after it ran) or a fed node (name and op only). NULL
 * strings print as "?". */
typedef struct MfSchedRow {
    const char *name, *op;
    int indegree;
    int nready;
    const char *const *ready;
} MfSchedRow;

/* Appends the schedule as a table to 'out' (graph/schedule_text.c): a
 * header, the 'fed' rows marked "fed, not run", then one numbered row per
 * step, columns as wide as the longest name and op (within limits).
 * MF_ENOMEM naming "Schedule" when the text is incomplete. */
MfStatus mf_schedule_text(const MfSchedRow *steps, int nsteps, const MfSchedRow *fed, int nfed,
                          MfStrBuf *out);

/* The values of a graph's variables in one session: 'vals[i]' is the
 * current value of VARIABLE node i (owned), NULL before it is initialised. */
typedef struct MfVarStore {
    int cap;
    MfTensor **vals;
} MfVarStore;

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

/* mf_exec_run with the variable values in 'vars' (VARIABLE, READ and
 * ASSIGN nodes read and write there); mf_exec_run has none, so a graph
 * with variables runs through a session (mf_session_run). */
MfStatus mf_exec_run_vars(MfVarStore *vars, MfGraph *g, int nfetch, MfTensor *const *fetches,
                          int ntargets, MfNode *const *targets, int nfeed,
                          MfTensor *const *fed, MfTensor *const *feeds,
                          const MfExecOptions *opt, MfTensor **results, MfSchedule **sched);

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

/* A fetch given by name, as TensorFlow 1.x's sess.run reads it: "node"
 * naming a node without outputs (an operation: "init", a train op) is run
 * for its effect ('*op', borrowed; '*t' NULL); any other "node" or
 * "node:index" fetches that tensor ('*t', owned; '*op' NULL). Fails naming
 * 'fname' when the graph has no such tensor. */
MfStatus mf_session_fetch_name(MfGraph *g, const char *name, const char *fname, MfTensor **t,
                               MfNode **op);

/* A value fed to 'key' that the face made from plain data (a number or an
 * array) is converted to the key's dtype, as TensorFlow converts a fed list
 * to the placeholder's dtype; a tensor given as it is stays unconverted
 * (mf_exec_run checks its dtype). '*out' owned: 'value' retained, or its
 * cast. */
MfStatus mf_session_feed_value(const MfTensor *key, MfTensor *value, bool from_data,
                               MfTensor **out);

/* ---- one sess:run call (graph/run_request.c) -----------------------------
 * TensorFlow 1.x's fetches and feeds, added one by one, then the run. The
 * request owns a reference to every tensor it holds (free it with
 * mf_run_request_free, also after an error); the session is borrowed.
 * A fetch is a tensor, an operation (run for its effects; no value) or a
 * name (mf_session_fetch_name). A feed is a key, a graph tensor or a
 * tensor name ('key' NULL; '*out' is the key, borrowed, whose dtype plain
 * data takes), then its value (mf_session_feed_value). Errors name "run": a
 * key with values, an unknown name, the executor's. */
typedef struct MfRunRequest MfRunRequest;
MfRunRequest *mf_run_request_new(MfSession *s);
void mf_run_request_free(MfRunRequest *r);
MfStatus mf_run_request_fetch(MfRunRequest *r, MfTensor *t);
MfStatus mf_run_request_fetch_op(MfRunRequest *r, MfNode *op);
MfStatus mf_run_request_fetch_name(MfRunRequest *r, const char *name);
MfStatus mf_run_request_feed_key(MfRunRequest *r, MfTensor *key, const char *name,
                                 const MfTensor **out);
MfStatus mf_run_request_feed_value(MfRunRequest *r, MfTensor *value, bool from_data);

/* Runs the request once; with 'schedule' its schedule is kept as rows. */
MfStatus mf_run_request_run(MfRunRequest *r, bool schedule);

/* The number of fetches, and the value of fetch 'i' after the run (a new
 * reference; NULL for an operation). */
int mf_run_request_nfetch(const MfRunRequest *r);
MfTensor *mf_run_request_result(const MfRunRequest *r, int i);

/* The run's schedule as mf_schedule_text's rows (borrowed from the
 * request): returns the number of steps; '*fed' the fed nodes ('*nfed').
 * 0 and none when no schedule was asked for. */
int mf_run_request_schedule(const MfRunRequest *r, const MfSchedRow **steps,
                            const MfSchedRow **fed, int *nfed);

/* The current value of VARIABLE node 'var' in the session ('*out' owned);
 * fails naming the variable when it is not initialised. */
MfStatus mf_session_variable_value(MfSession *s, const MfNode *var, MfTensor **out);

/* Sets the value of VARIABLE node 'var' (checked against its dtype and
 * shape), e.g. a Saver's restore. */
MfStatus mf_session_set_variable(MfSession *s, const MfNode *var, MfTensor *value);

/* The session's variable store (borrowed). */
MfVarStore *mf_session_vars(MfSession *s);

/* ---- variables (graph/variables.c) ---------------------------------------- */

/* Adds a variable (TF1's VariableV2) named 'name' (NULL: "Variable"; made
 * unique) holding 'initial' (a concrete tensor, kept as a Const node
 * "<name>/initial_value", or a symbolic tensor of 'g', e.g. a random op),
 * and its initializer, the ASSIGN node "<name>/Assign" ('(*var)->ref').
 * The variable joins the global collection, and the trainable one when
 * 'trainable'. '*var' is borrowed; mf_graph_output(*var, 0) reads it. */
MfStatus mf_graph_variable(MfGraph *g, MfTensor *initial, const char *name, bool trainable,
                           MfNode **var);

/* The graph's variables in creation order (all, or the trainable ones):
 * writes up to 'cap' borrowed nodes to 'out' (may be NULL) and returns how
 * many there are. */
int mf_graph_variables(const MfGraph *g, bool trainable_only, MfNode **out, int cap);

/* A NoOp ("init" by default) running the initializers of the 'n' VARIABLE
 * nodes 'vars' (vars NULL: every variable of 'g' made so far). */
MfStatus mf_graph_variables_initializer(MfGraph *g, int n, MfNode *const *vars,
                                        const char *name, MfNode **op);

/* Adds an ASSIGN node "<var>/Assign" ("AssignAdd", "AssignSub") writing
 * 'value' (concrete or symbolic, the variable's dtype; SET: its shape; ADD,
 * SUB: broadcastable to it) into VARIABLE node 'var'; with the control
 * dependencies in force. '*out' (owned) is the variable's new value. */
MfStatus mf_graph_assign(MfNode *var, MfAssignKind kind, MfTensor *value, MfTensor **out);

/* Adds a READ node of VARIABLE 'var' (v:read_value()): it reads when it
 * runs, so control dependencies order it after assigns. '*out' owned. */
MfStatus mf_graph_read(MfNode *var, MfTensor **out);

/* v:initialized_value() (TF1): a READ node "<var>/initialized_value" that
 * gives the variable's value once it is initialised and, before, its
 * initial value (the initializer's input, computed in the same run, so the
 * variable and one initialised from it agree whichever initializer runs
 * first). Use it in the initial value of another variable. '*out' owned. */
MfStatus mf_graph_initialized_value(MfNode *var, MfTensor **out);

/* Eager variables inside a graph (mf.trace): captured by reference. The
 * value of 'v' in 'g' as a symbolic tensor (borrowed, lives as long as
 * 'g'): a READ node of 'v' made on first use, or, after an assign to 'v'
 * in 'g', that assign's output. Assigns to 'v' in 'g' run in the order they
 * were built, after the reads built before them (automatic control
 * dependencies, as in tf.function), so the graph computes what eager code
 * computes. */
MfStatus mf_graph_capture(MfGraph *g, struct MfVariable *v, MfTensor **out);
MfStatus mf_graph_assign_captured(MfGraph *g, struct MfVariable *v, MfAssignKind kind,
                                  MfTensor *value, MfTensor **out);

/* The ASSIGN nodes on captured variables (they run on every call of a
 * traced function even when no result depends on them); as
 * mf_graph_variables. */
int mf_graph_captured_assigns(const MfGraph *g, MfNode **out, int cap);

/* A node of 'g' that writes the captured eager variables 'vars' in place
 * when it runs (an optimizer's Apply* op inside mf.trace; graph/exec.c
 * hands it the variables' own buffers, copied first when shared): it runs
 * on every call of the traced function, as the assigns do, and the next
 * use of each variable in 'g' reads it anew after the node. */
MfStatus mf_graph_captured_update(MfGraph *g, MfNode *node, int nvars, MfVariable *const *vars);

/* Every tensor of 'g' that is a value of captured eager variable 'v': its
 * READ nodes' outputs and each assign's (reads after an assign use it).
 * A tape's gradient w.r.t. 'v' is the sum of theirs. Writes up to 'cap'
 * owned tensors (NULL where out of memory) and returns how many there are
 * (0: 'v' is not used in 'g'). */
int mf_graph_captured_reads(const MfGraph *g, const MfVariable *v, MfTensor **out, int cap);

/* The variable store: the value of VARIABLE 'node' (borrowed, NULL when not
 * initialised), and setting it (retained; the old one released). */
MfTensor *mf_varstore_get(const MfVarStore *s, int node);
MfStatus mf_varstore_set(MfVarStore *s, int node, MfTensor *value);
void mf_varstore_clear(MfVarStore *s);

/* ---- tracing (graph/trace.c) ---------------------------------------------- */

/* A traced function for one input signature: its graph, placeholders (one
 * per tensor argument), results and a private session. */
typedef struct MfTrace MfTrace;

/* A new trace with an empty graph (borrowed via mf_trace_graph); NULL with
 * a message on failure. Build it with the graph as the default. */
MfTrace *mf_trace_new(void);
void mf_trace_free(MfTrace *t);
MfGraph *mf_trace_graph(const MfTrace *t);

/* Adds the placeholder for the next tensor argument (dtype and shape of
 * 'example'); '*ph' owned. */
MfStatus mf_trace_add_arg(MfTrace *t, const MfTensor *example, const char *name,
                          MfTensor **ph);

/* Ends tracing: the 'n' results (symbolic tensors of the graph; concrete
 * ones become Const nodes). */
MfStatus mf_trace_finish(MfTrace *t, int n, MfTensor *const *results);
int mf_trace_nresults(const MfTrace *t);

/* Runs the graph: 'args' (one concrete tensor per placeholder) fed, every
 * captured assign run; 'results' gets mf_trace_nresults owned values. */
MfStatus mf_trace_call(MfTrace *t, int nargs, MfTensor *const *args, MfTensor **results);

/* ---- a traced call's signature (graph/trace_signature.c) -------------------
 * The key of a traced function's cache of traces, appended part by part as
 * the face walks the call's arguments: a tensor by dtype and shape; an
 * integer, float, string, boolean or nil by value; an array's items between
 * mf_sig_array_begin and mf_sig_array_end, each followed by
 * mf_sig_array_item_end; anything else by identity (its type name and
 * address). mf_sig_arg_end ends each argument. Two calls get one key only
 * when every part is equal. */
void mf_sig_tensor(MfStrBuf *b, const MfTensor *t);
void mf_sig_integer(MfStrBuf *b, long long v);
void mf_sig_number(MfStrBuf *b, double v);
void mf_sig_string(MfStrBuf *b, const char *s, size_t n);
void mf_sig_boolean(MfStrBuf *b, bool v);
void mf_sig_nil(MfStrBuf *b);
void mf_sig_identity(MfStrBuf *b, const char *type, const void *p);
void mf_sig_array_begin(MfStrBuf *b);
void mf_sig_array_item_end(MfStrBuf *b);
void mf_sig_array_end(MfStrBuf *b);
void mf_sig_arg_end(MfStrBuf *b);

/* TensorFlow warns when a tf.function keeps retracing; so does mf.trace,
 * once per function, at its MF_TRACE_RETRACE_WARNING-th trace. True when
 * trace number 'count' is that one, with the warning in 'buf' ('where': the
 * caller's place, e.g. " (called at x.lua:3)", or ""); the face prints it. */
#define MF_TRACE_RETRACE_WARNING 10
bool mf_trace_retrace_warning(int count, const char *where, char *buf, size_t cap);

/* Writes into 'buf' why mf.gradients(y, {x}) is nil, or that it is
 * connected (graph/explain.c): the target does not depend on the source,
 * or the first node that cut the path (stop_gradient, an op without a
 * gradient, integer outputs, an assign op). MF_EARG when y and x are not
 * tensors of one graph; MF_ENOMEM. */
MfStatus mf_graph_explain(const MfTensor *y, const MfTensor *x, char *buf, size_t cap);

#endif
