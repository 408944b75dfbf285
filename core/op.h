/* op.h — the one op table and the one dispatcher.
 *
 * Every op is a 'const MfOpDesc' declared once, next to its kernels, and
 * listed once in oplist.h. Eager execution, graph building, graph execution,
 * gradients, printing, the profiler and the gradcheck tests all read the
 * table.
 *
 * 'mf_op_call' is the single entry for every op:
 *   - graph mode (a builder is registered and says it is building, or an
 *     input is symbolic): the builder adds a node and returns symbolic outputs;
 *   - eager mode: infer the outputs, allocate them, run the kernel now, then
 *     hand the call to the recorder (the gradient tapes), if one is registered.
 * core/ never includes eager/ or graph/: they register through the hooks
 * below. */
#ifndef MF_OP_H
#define MF_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "tensor.h"

#define MF_MAX_OUTPUTS 4

/* The op ids, generated from oplist.h: MF_OP_ADD, MF_OP_MATMUL, ... */
typedef enum MfOpId {
#define MF_OP(id, desc) id,
#include "oplist.h"
#undef MF_OP
    MF_NOPS
} MfOpId;

/* Attributes of one op call. A plain value: tapes and graph nodes copy it.
 * Axes here are 0-based and already normalised (the bindings convert Lua's
 * 1-based and negative axes). Each op documents which fields it reads. */
typedef struct MfAttrs {
    int64_t axes[MF_MAX_RANK];    /* reduction / reverse / squeeze axes; transpose perm */
    int naxes;
    bool all_axes;                /* reductions: reduce over every axis */
    bool keepdims;
    bool reverse;                 /* cumsum, cumprod: from the last element */
    bool exclusive;               /* cumsum, cumprod: leave each element out of its result */
    bool sorted;                  /* top_k: values in descending order (always so here) */
    int direction;                /* sort, argsort: 0 = ASCENDING, 1 = DESCENDING */
    int64_t ints[2 * MF_MAX_RANK]; /* shapes, begin + size, paddings as pairs, multiples */
    int64_t steps[MF_MAX_RANK];   /* strided slices: the step along each axis (>= 1) */
    int nints;
    int64_t axis;                 /* one axis: concat, stack, gather, one_hot, argmax */
    int64_t n;                    /* a count: one_hot depth, top_k's k, scatter's size */
    bool transpose_a, transpose_b;
    double scalar[4];             /* fill value, clip bounds, mean/stddev, minval/maxval */
    MfDType dtype;                /* cast target, dtype of created tensors */
    uint64_t seed;                /* random ops */
    bool use_nesterov;            /* ApplyMomentum, ApplyAdam: Nesterov's update */
    int reduce_op;                /* collectives: MfReduceOp (core/collective.h) */
    /* Collectives: the hash of what this process reduces, exchanged before
     * the reduction when the call is checked (mf_dist_signature); 0: not. */
    uint64_t signature;
    /* Random ops built into a graph: the node's run counters (core/rng.h,
     * owned by the node), so each run draws fresh values; NULL in eager
     * mode, where the values depend on 'seed' alone. */
    struct MfRngRuns *runs;
    int padding;                  /* conv / pool: MfPadding (core/ops/window.h) */
    int conv_algorithm;           /* conv: MfConvAlgo (core/ops/conv.h), 0 = auto */
    int data_format;              /* MfDataFormat (window.h): bias_add; conv/pool entries */
    int64_t strides[4], ksize[4], dilations[4];
    int nonfinite;                /* Apply ops: MfApplyNonfinite */
    bool grad_scaled;             /* ApplyAdam: its last input scales the gradient */
    bool gated;                   /* Apply ops: a finite gate covers the gradient (apply.c) */
    int mode;                     /* pad: 0 = CONSTANT (the one mode supported) */
    int64_t num_lower, num_upper; /* MatrixBandPart: diagonals kept below / above (-1: all) */
    int64_t diagonal;             /* Trilu (tril, triu): the first or last diagonal kept */
    bool upper;                   /* Trilu: the upper triangle (triu), else the lower */
    bool approximate;             /* Gelu, GeluGrad: the tanh form */
    bool causal;                  /* ScaledDotProductAttention: key j <= query i kept */
    bool mask_grad;               /* ScaledDotProductAttentionGrad: also the float mask's */
} MfAttrs;

/* What an Apply op does with a gradient holding NaN or Inf (attrs.nonfinite;
 * opt:apply_gradients' {nonfinite} option): write it (TensorFlow's), fail
 * before writing anything, or write nothing and return the variable. */
typedef enum MfApplyNonfinite {
    MF_APPLY_NONFINITE_APPLY,
    MF_APPLY_NONFINITE_ERROR,
    MF_APPLY_NONFINITE_SKIP,
} MfApplyNonfinite;
#define MF_APPLY_NNONFINITE (MF_APPLY_NONFINITE_SKIP + 1)   /* keep after the last */

/* ---- the attribute schema ----------------------------------------------
 * Each op declares its attributes once, as an array of MfAttrDef: the Lua
 * binder (repl/lmf_op.c) parses calls from it, the listings (print(g), DOT,
 * tapes, profiler rows) format non-default values from it, and help builds
 * the signature from it. A definition names the MfAttrs field that holds
 * the value, so kernels keep reading plain fields. */
typedef enum MfAttrType {
    MF_ATTR_BOOL,    /* bool */
    MF_ATTR_INT,     /* int64_t */
    MF_ATTR_FLOAT,   /* double */
    MF_ATTR_DTYPE,   /* MfDType: "float32", "int64", ... */
    MF_ATTR_ENUM,    /* int: the index of a string in 'choices' ("VALID", "SAME") */
    MF_ATTR_AXIS,    /* int64_t: 0-based here, 1-based (or negative) at the face */
    MF_ATTR_AXES,    /* int64_t[] + int count: an axis or a list of axes, 1-based at the face */
    MF_ATTR_INTS,    /* int64_t[] + int count: a number or a list of integers */
    MF_ATTR_WINDOW,  /* int64_t[4]: n, {h, w} or four entries in the data format's order */
    MF_ATTR_PAIRS,   /* int64_t[] + int count: {{before, after}, ...}, stored flat (paddings) */
} MfAttrType;
/* The number of attribute types, for tables indexed by one (keep after the
 * last; a #define, so switches need no case for it). */
#define MF_ATTR_NTYPES (MF_ATTR_PAIRS + 1)

enum {                              /* MfAttrDef.flags */
    MF_ATTR_POSITIONAL = 1u << 0,   /* may follow the tensor inputs, in declaration order */
    MF_ATTR_REQUIRED = 1u << 1,     /* no default: a call must give it */
    MF_ATTR_ALL_AXES = 1u << 2,     /* AXES: absent means every axis (attrs.all_axes) */
    MF_ATTR_PAST_END = 1u << 3,     /* AXIS: one past the last axis is valid (stack) */
    MF_ATTR_SHAPE = 1u << 4,        /* INTS: a shape (sizes >= 0; with 'dflt' < 0, one -1) */
    MF_ATTR_ONE_BASED = 1u << 5,    /* INTS: positions, 1-based at the face (>= 1), stored
                                     * 0-based (slice's begin) */
    MF_ATTR_PER_AXIS = 1u << 6,     /* INTS: one entry per axis of the first input; absent:
                                     * every entry is 'dflt' (slice's size, -1) */
    /* INTS: two attributes share one array and count, in equal halves
     * (slice: begin, then size) */
    MF_ATTR_FIRST_HALF = 1u << 7,
    MF_ATTR_SECOND_HALF = 1u << 8,
    MF_ATTR_ARG = 1u << 9,          /* given among the tensor inputs, where its name stands
                                     * in the descriptor's 'inputs' (a conv backprop's sizes) */
    MF_ATTR_BY_TENSOR = 1u << 10,   /* INTS: a symbolic (graph) tensor is accepted; the binder
                                     * passes it to 'entry' as one more input (reshape to a
                                     * shape known when the graph runs) */
};

typedef struct MfAttrDef {
    const char *name;
    MfAttrType type;
    unsigned flags;
    size_t offset;                  /* of the value in MfAttrs (MF_ATTR_AT) */
    size_t count_offset;            /* AXES, INTS: of the 'int' count */
    double dflt;                    /* BOOL, INT, FLOAT, DTYPE, ENUM (index), AXIS (as at
                                     * the face: 1-based or negative) */
    const char *const *choices;     /* ENUM: the accepted strings, NULL-terminated */
    const char *alias;              /* another accepted key (TF 1.x's keep_dims) */
} MfAttrDef;

#define MF_ATTR_AT(field) offsetof(MfAttrs, field)
#define MF_NATTRS(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

/* The value of attribute 'def' in 'a' as its declared C type, and the
 * count of an AXES or INTS attribute. */
#define MF_ATTR_FIELD(a, def, type) ((type *)((char *)(a) + (def)->offset))
#define MF_ATTR_CFIELD(a, def, type) ((const type *)((const char *)(a) + (def)->offset))
#define MF_ATTR_COUNT(a, def) (*(int *)((char *)(a) + (def)->count_offset))
#define MF_ATTR_CCOUNT(a, def) (*(const int *)((const char *)(a) + (def)->count_offset))

/* The entries of INTS, AXES or PAIRS attribute 'def' in 'a' as the face
 * writes them (axes and ONE_BASED positions 1-based; a FIRST_HALF or
 * SECOND_HALF attribute its own half; PAIRS flat) into 'out' (room for
 * 2 * MF_MAX_RANK); returns the count (0 for a bad one). */
int mf_attr_face_ints(const MfAttrDef *def, const MfAttrs *a, int64_t *out);

/* The string of value 'v' of ENUM attribute 'def', or NULL out of range. */
const char *mf_attr_choice(const MfAttrDef *def, int v);

/* The name of an attribute type as mf.ops() shows it: "bool", "int",
 * "float", "dtype", "enum", "axis", "axes", "ints", "window". */
const char *mf_attr_type_name(MfAttrType type);

typedef struct MfOpDesc MfOpDesc;   /* below */

/* Formats the attributes of 'op' that differ from their defaults, as the
 * listings show them: "transpose_a", "axis=2, keepdims", "strides=2, SAME"
 * (axes 1-based, as at the face). 'rank' is the rank of the first input
 * (-1: unknown), to tell a default axis counted from the end. Returns the
 * length ('buf' is always terminated; "" when every attribute has its
 * default). */
int mf_attrs_format(MfOpId op, const MfAttrs *a, int rank, char *buf, size_t size);

/* The attributes of 'd' (an op's or a composite's descriptor) as help()
 * lists them: "transpose_a: boolean, default false; transpose_b: ...",
 * from the schema (type, choices, default, required, alias). Returns the
 * length, as mf_attrs_format. */
int mf_attrs_describe(const MfOpDesc *d, char *buf, size_t size);

/* The op's TensorFlow name with those attributes, as listings and profiler
 * rows show it: "MatMul[transpose_a]", "Conv2D[strides=2, SAME]", "Relu".
 * Returns 'buf'. */
const char *mf_op_label(MfOpId op, const MfAttrs *a, int rank, char *buf, size_t size);

/* The defaults of the schema of 'd' written into 'a' (over mf_attrs_default). */
void mf_attrs_apply_defaults(const MfOpDesc *d, MfAttrs *a);

/* The shape and dtype of one output, as 'infer' computes it. */
typedef struct MfTensorSpec {
    MfDType dtype;
    int rank;
    int64_t shape[MF_MAX_RANK];
} MfTensorSpec;

/* One call of one op: what the dispatcher hands to 'infer' and 'forward'. */
typedef struct MfOpCall {
    MfOpId op;
    int ninputs;
    MfTensor *const *inputs;      /* borrowed */
    const MfAttrs *attrs;         /* borrowed */
    int noutputs;                 /* set by 'infer' */
    MfTensorSpec out[MF_MAX_OUTPUTS];
} MfOpCall;

/* What a gradient function receives: the forward call, its outputs and the
 * gradients flowing into those outputs (NULL entries: unconnected). */
typedef struct MfGradFn MfGradFn;

typedef struct MfGradCall {
    const MfOpCall *call;
    MfTensor *const *outputs;
    MfTensor *const *doutputs;
    /* Per input: is its gradient wanted? NULL means all are. A gradient
     * function may skip work for unwanted inputs (as TensorFlow skips
     * unneeded input gradients); it may also compute them anyway. */
    const bool *needs;
    /* A registered gradient that replaces the op's own (core/grad_registry.h),
     * captured when the op was recorded or added to a graph; NULL: the op's. */
    MfGradFn *override;
} MfGradCall;

/* A gradient registered by name (mf.RegisterGradient): 'backward' has the
 * contract of MfOpDesc.backward. 'name' is set by the registry. */
struct MfGradFn {
    const char *name;
    MfStatus (*backward)(MfGradFn *f, const MfGradCall *g, MfTensor **dinputs);
};

/* True when the gradient of input 'i' is wanted. */
static inline bool mf_grad_needs(const MfGradCall *g, int i)
{
    return !g->needs || g->needs[i];
}

/* Cost of one call, for the profiler. */
typedef struct MfCost {
    double flops;
    double bytes;
} MfCost;

enum {
    MF_OP_NONDIFF = 1u << 0,   /* no gradient: comparisons, argmax, floor, casts to int... */
    MF_OP_VIEW = 1u << 1,      /* 'forward' makes its own outputs (views of the input) */
    MF_OP_RANDOM = 1u << 2,    /* output depends on 'attrs.seed', not only on inputs */
    MF_OP_VARIADIC = 1u << 3,  /* takes a list of any length (concat, stack, add_n) */
    MF_OP_SIMPLE = 1u << 4,    /* no attributes: f(x) / f(x, y) */
    MF_OP_NO_METHOD = 1u << 5, /* Lua: mf.X only, no tensor method (list input, property name) */
    /* (1u << 6 was MF_OP_OWN_BINDING: every op with a Lua name is now bound
     * by the schema binder) */
    /* Work that goes on between graph nodes (a nonblocking collective): the
     * graph executor runs a START node as soon as it is ready, ahead of the
     * other ready nodes, and a WAIT node only when no other node is ready,
     * so the work overlaps whatever can run meanwhile. */
    MF_OP_ASYNC_START = 1u << 7,
    MF_OP_ASYNC_WAIT = 1u << 8,
    /* Lua: the inputs may also be given by name in one table, TensorFlow's
     * keyword form (mf.nn.softmax_cross_entropy_with_logits{labels =, logits =}),
     * with the options in that table */
    MF_OP_KEYWORD_INPUTS = 1u << 9,
    /* 'forward' does more than write its outputs (it talks to the other
     * processes): it runs even when every input and output is empty */
    MF_OP_EFFECTS = 1u << 10,
    /* every output element depends only on the inputs' elements at its
     * (broadcast) position: a large call is cut into pieces of the output
     * over the worker pool (core/ops/elementwise_split.c) */
    MF_OP_ELEMENTWISE = 1u << 11,
};

typedef struct MfOpDesc {
    const char *name;   /* TensorFlow's op name: "AddV2", "MatMul" */
    const char *api;    /* the name a user calls and sees in errors: "add", "matmul" */
    int arity;          /* number of tensor inputs (minimum, for variadic ops) */
    unsigned flags;
    /* Checks inputs and attributes and fills c->noutputs and c->out[].
     * Must accept unknown dims (-1) from symbolic inputs and propagate them. */
    MfStatus (*infer)(MfOpCall *c);
    /* Computes the outputs. Normally they arrive allocated and contiguous
     * with the inferred specs; with MF_OP_VIEW, 'forward' creates them. */
    MfStatus (*forward)(const MfOpCall *c, MfTensor **outs);
    /* Writes owned gradients for each input into 'dinputs' (NULL: none),
     * by calling ops through 'mf_op_call', so one definition serves eager
     * tapes and graph gradients. NULL: not written yet (or MF_OP_NONDIFF). */
    MfStatus (*backward)(const MfGradCall *g, MfTensor **dinputs);
    /* FLOPs and bytes of one call (NULL: elementwise estimate). */
    MfCost (*cost)(const MfOpCall *c);
    /* The training ops (core/ops/apply.c) write their first 'inplace'
     * inputs (a variable and its slots) in place; 0 for every other op.
     * The graph executor hands them the session's variable buffers. */
    int inplace;
    /* The schema (see MfAttrDef): attributes in declaration order. */
    const MfAttrDef *attrs;
    int nattrs;
    /* The face: where Lua finds the op ("reduce_sum", "nn.max_pool"; NULL:
     * internal, e.g. gradient ops), its inputs' names for the signature
     * ("x, y"; "list" for a variadic op), and a one-line summary for help. */
    const char *lua;
    const char *inputs;
    const char *summary;
    /* Tensor inputs after the 'arity' required ones that a Lua call may
     * leave out (lstm_cell's c_prev): the binder passes those given. */
    int optional_inputs;
    /* Bit i set: input i is a tensor of 1-based positions at the face
     * (gather's and one_hot's indices). Lua data converts to int64; the
     * binder checks the dtype is an integer one and subtracts 1 with a Sub
     * op, so symbolic (graph) indices work too. */
    unsigned one_based_inputs;
    /* Bit i set: input i gives its dtype to Lua numbers and tables passed
     * for the others of this set (where's x and y, not its condition);
     * 0: every input but those named "indices". */
    unsigned like_inputs;
    /* Bit i set: Lua data given for input i converts to int64 (class
     * labels); inputs named "indices" do so too. */
    unsigned index_inputs;
    /* The input whose rank the attributes' axes are relative to (0: the
     * first; the cross-entropies' logits come second at the face). */
    int axis_input;
    /* Help (repl/help.c) for an op with a Lua name, next to what it
     * documents: the topic help() lists it under ("math", "nn"), an optional
     * paragraph after the summary, and an example: lines of prompt input,
     * "--> v" showing what a line prints (tests/lua/test_shell.lua runs
     * every example). The signature and the options are generated from
     * 'attrs'. */
    const char *topic;
    const char *details;
    const char *example;
    /* For help: how the gradient is computed, dy being the output's
     * gradient ("dx = dy * 2x"); NULL: written with other ops (core/ops,
     * beside the op or in a *_grad.c file). */
    const char *grad_note;
    /* What a front end calls instead of the op itself (NULL: mf_op_call):
     * it may pick a variant (MatMul or BatchMatMulV2) or lay the data out
     * around the op (NCHW), reading the same attributes. */
    MfStatus (*entry)(int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                      MfTensor **outs, int *noutputs);
} MfOpDesc;

extern const MfOpDesc *const mf_op_table[MF_NOPS];

/* Functions that are not one op but have an op's face: tensor inputs, a
 * schema of attributes, help (mf.clip_by_value, mf.nn.l2_loss,
 * mf.nn.conv2d_transpose...). Each is a descriptor with only the face
 * fields and 'entry', which calls ops, declared next to the C function it
 * calls; the Lua binder binds them as it binds the ops. They are not in
 * mf_op_table: graphs, tapes and listings see the ops they call. Ended by
 * NULL. */
extern const MfOpDesc *const mf_composite_table[];

/* ---- the face an op's descriptor declares (core/attrs.c) ------------------
 * What the Lua binder (repl/lmf_op.c), help and mf.test.ops() read from a
 * descriptor, written once here. Inputs are counted in "slots": the Lua
 * arguments before the positional attributes (one list for a variadic op;
 * an MF_ATTR_ARG attribute takes the slot its name has in 'inputs'). */

/* The Lua name of 'd' ("reduce_sum", "nn.max_pool"), or NULL: an op
 * without attributes (MF_OP_SIMPLE) whose descriptor names no 'lua' is
 * bound under its 'api' name. */
const char *mf_op_lua_name(const MfOpDesc *d);

/* The name of Lua argument 'slot' (0-based) in 'inputs' ("params,
 * indices"; "x" when the descriptor names none), its length in '*len';
 * NULL past the last. */
const char *mf_op_input_name(const MfOpDesc *d, int slot, size_t *len);

/* The attribute given among the inputs at argument 'slot' (MF_ATTR_ARG), or NULL. */
const MfAttrDef *mf_op_arg_attr(const MfOpDesc *d, int slot);

/* The number of input slots: 1 for a variadic op without optional inputs,
 * else the inputs (optional ones too) and the MF_ATTR_ARG attributes. */
int mf_op_input_slots(const MfOpDesc *d);

/* Whether Lua data for tensor input 'k' (at argument 'slot') converts to
 * int64: one_based_inputs, index_inputs, or an input named "indices". */
bool mf_op_input_is_index(const MfOpDesc *d, int k, int slot);

/* Whether tensor input 'k' (at argument 'slot') gives its dtype to Lua
 * data given for the others: like_inputs when declared, else every input
 * that is not an index. */
bool mf_op_input_gives_dtype(const MfOpDesc *d, int k, int slot);

/* The number of positional attributes, and the 'k'-th of them (0-based;
 * NULL past the last). */
int mf_op_npositional(const MfOpDesc *d);
const MfAttrDef *mf_op_positional(const MfOpDesc *d, int k);

/* The signature of 'd' from its schema. MF_SIG_CALL, for error messages:
 * "reduce_sum(x [, axis [, keepdims]] [, {options}])"; MF_SIG_HELP, as help()
 * shows it: "mf.matmul(a, b [, {transpose_a, transpose_b}]) or a:matmul(...)";
 * MF_SIG_KEYWORDS, the inputs by name (MF_OP_KEYWORD_INPUTS): "{labels = ...,
 * logits = ...}". Returns the length ('buf' is always terminated). */
typedef enum MfSigStyle { MF_SIG_CALL, MF_SIG_HELP, MF_SIG_KEYWORDS } MfSigStyle;
int mf_op_signature(const MfOpDesc *d, MfSigStyle style, char *buf, size_t size);

/* What a value of attribute 'def' must be, for messages: "a boolean", the
 * quoted choices ("VALID" or "SAME", quotes included), "a shape (an array
 * of integers)"... Returns 'buf'. */
const char *mf_attr_want(const MfAttrDef *def, char *buf, size_t size);

/* The index of 's' among the choices of ENUM attribute 'def', in any
 * letter case ("same" is "SAME"), or -1. */
int mf_attr_enum_parse(const MfAttrDef *def, const char *s);

/* Checks of the values a call gives (MF_EARG, the message naming 'fname'
 * and the attribute or 'key', the name it was given by).
 * mf_attr_window: a WINDOW's 'n' values (n, {h, w} or 4 in the data
 * format's order: 'nchw') as 4, each >= 1. mf_attr_check_ints: an INTS
 * attribute's values: a SHAPE's sizes >= 0 (one -1 when its default is
 * < 0); ONE_BASED positions >= 1, made 0-based in place (the size of
 * axis i of 'x' named in the message). mf_attrs_check_per_axis: every
 * PER_AXIS list of 'd' has 'rank' entries (a FIRST_HALF list had
 * 'first_half'). */
MfStatus mf_attr_window(const char *fname, const char *key, const int64_t *v, int n, bool nchw,
                        int64_t out[4]);
MfStatus mf_attr_check_ints(const char *fname, const MfAttrDef *def, const MfTensor *x,
                            int64_t *v, int n);
MfStatus mf_attrs_check_per_axis(const MfOpDesc *d, const char *fname, const MfAttrs *a,
                                 int rank, int first_half);

/* An input of 1-based positions (one_based_inputs: gather's indices) as
 * 0-based ones, t - 1 through a Sub op, so symbolic (graph) positions work
 * too; 't' must have an integer dtype (MF_EDTYPE naming 'fname' and the
 * input 'what'). '*out' is owned on success. */
MfStatus mf_positions_zero_based(const char *fname, const char *what, MfTensor *t,
                                 MfTensor **out);

/* Looks an op up by its TensorFlow name; MF_NOPS when unknown. */
MfOpId mf_op_find(const char *name);

/* Runs (eager) or adds (graph) one op. On success 'outs[0..noutputs)' hold
 * owned references and the rest of 'outs[MF_MAX_OUTPUTS]' is NULL; returns
 * the number of outputs through 'noutputs' when it is not NULL. */
MfStatus mf_op_call(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                    MfTensor **outs, int *noutputs);

/* Shorthands for the common one-output cases; '*out' is owned on success. */
MfStatus mf_op1(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                MfTensor **out);
MfStatus mf_unary(MfOpId op, MfTensor *x, MfTensor **out);
MfStatus mf_binary(MfOpId op, MfTensor *a, MfTensor *b, MfTensor **out);

/* A zeroed attribute block (dtype float32). */
MfAttrs mf_attrs_default(void);

/* Graph mode hook. 'building' is asked before every op; when it answers
 * true, or an input is symbolic, 'build' must produce the outputs. */
typedef struct MfBuilder {
    bool (*building)(void *self);
    MfStatus (*build)(void *self, MfOpCall *c, MfTensor **outs);
    void *self;
} MfBuilder;

/* Eager mode hook: called after each eager op with its inputs and outputs.
 * Registered only while at least one tape records, so that eager ops cost
 * nothing extra otherwise. */
typedef struct MfRecorder {
    MfStatus (*record)(void *self, const MfOpCall *c, MfTensor *const *outs);
    void *self;
} MfRecorder;

/* Register (or with NULL, remove) the hooks. Borrowed: they must outlive
 * their registration. */
void mf_op_set_builder(const MfBuilder *b);

/* The graph executor (graph/exec.c) runs its nodes through the dispatcher:
 * between mf_op_exec_enter and mf_op_exec_leave (they nest) the builder
 * stays out of the way, so ops run now even while a graph is the default,
 * and an eager Variable read is not captured. mf_op_exec_running() says
 * whether a run is under way. */
void mf_op_exec_enter(void);
void mf_op_exec_leave(void);
bool mf_op_exec_running(void);
void mf_op_set_recorder(const MfRecorder *r);
const MfRecorder *mf_op_recorder(void);

/* Forward mode's hook (eager/forward.c): called after every op, eager or
 * built into a graph (not while a graph runs), with its inputs and outputs,
 * while at least one forward accumulator is active; it computes the tangents
 * of the outputs. An error fails the op. */
void mf_op_set_forward(const MfRecorder *r);

/* Ctrl-C: set from a signal handler; long kernels and executors poll it
 * and stop with MF_EINTR. */
extern volatile int mf_interrupted;

#endif
