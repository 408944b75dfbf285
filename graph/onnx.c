/* onnx.c — a moonflow graph as an ONNX model (see interchange.h).
 *
 * Field numbers follow onnx.proto: ModelProto (ir_version 1,
 * producer_name 2, producer_version 3, graph 7, opset_import 8),
 * OperatorSetIdProto (domain 1, version 2), GraphProto (node 1, name 2,
 * initializer 5, input 11, output 12), NodeProto (input 1, output 2,
 * name 3, op_type 4, attribute 5), AttributeProto (name 1, f 2, i 3,
 * ints 8, type 20), TensorProto (dims 1, data_type 2, name 8, raw_data 9),
 * ValueInfoProto (name 1, type 2), TypeProto (tensor_type 1), its Tensor
 * (elem_type 1, shape 2), TensorShapeProto (dim 1) and Dimension
 * (dim_value 1, dim_param 2).
 *
 * Each moonflow op maps through one entry of 'mappings' (indexed by op
 * id): a plain ONNX op with the same inputs, or a function that writes a
 * few ONNX nodes (the layout changes of Conv and pooling, a 1-based
 * ArgMax...). An op without an entry is an error naming it and its node.
 *
 * The IR version is the one each opset came with: 7 (ONNX 1.8) for opset
 * 13, 8 (ONNX 1.10) for 14..17; ONNX 1.12's checker and onnxruntime accept
 * both. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/io/protobuf.h"
#include "core/io/write_file.h"
#include "core/ops/window.h"
#include "interchange.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "onnx.c writes raw_data by copying memory: ONNX wants little-endian bytes"
#endif

#define OPSET_MIN 13
#define OPSET_MAX 17   /* ReduceMean & co. take 'axes' as an attribute up to 17 */

enum { MODEL_IR = 1, MODEL_PRODUCER = 2, MODEL_PRODUCER_VERSION = 3, MODEL_GRAPH = 7,
       MODEL_OPSET = 8 };
enum { OPSET_DOMAIN = 1, OPSET_VERSION = 2 };
enum { GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INIT = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12 };
enum { NODE_IN = 1, NODE_OUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5 };
enum { ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20 };
enum { ATYPE_FLOAT = 1, ATYPE_INT = 2, ATYPE_INTS = 7 };
enum { TENSOR_DIMS = 1, TENSOR_DTYPE = 2, TENSOR_NAME = 8, TENSOR_RAW = 9 };
enum { VI_NAME = 1, VI_TYPE = 2, TYPE_TENSOR = 1, TT_ELEM = 1, TT_SHAPE = 2, SHAPE_DIM = 1,
       DIM_VALUE = 1, DIM_PARAM = 2 };
enum { ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_BOOL = 9,
       ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11, ONNX_BFLOAT16 = 16 };

#define NAME_MAX_LEN 1100

typedef struct Ctx {
    MfGraph *g;
    const MfOnnxOptions *opt;
    MfPbuf nodes, inits;     /* NodeProtos and initializer TensorProtos, as graph fields */
    char **value;            /* per node: the ONNX name of its output 0 (owned) */
    bool *needed;
    bool *emitted;           /* per node: its initializer is written */
    int fresh;               /* counter for helper value names */
} Ctx;

/* ---- small writers ---------------------------------------------------------- */

static int onnx_dtype(MfDType dt)
{
    switch (dt) {
    case MF_FLOAT32: return ONNX_FLOAT;
    case MF_FLOAT64: return ONNX_DOUBLE;
    case MF_INT32: return ONNX_INT32;
    case MF_INT64: return ONNX_INT64;
    case MF_BOOL: return ONNX_BOOL;
    case MF_UINT8: return ONNX_UINT8;
    case MF_FLOAT16: return ONNX_FLOAT16;
    case MF_BFLOAT16: return ONNX_BFLOAT16;
    default: return 0;
    }
}

static void attr_int(MfPbuf *b, const char *name, int64_t v)
{
    size_t m = mf_pb_begin(b, NODE_ATTR);
    mf_pb_string(b, ATTR_NAME, name);
    mf_pb_int(b, ATTR_TYPE, ATYPE_INT);
    mf_pb_int(b, ATTR_I, v);
    mf_pb_end(b, m);
}

/* 'repeated int64 ints' is not packed in onnx.proto (proto2): one field each. */
static void attr_ints(MfPbuf *b, const char *name, const int64_t *v, int n)
{
    size_t m = mf_pb_begin(b, NODE_ATTR);
    mf_pb_string(b, ATTR_NAME, name);
    mf_pb_int(b, ATTR_TYPE, ATYPE_INTS);
    for (int i = 0; i < n; i++)
        mf_pb_int(b, ATTR_INTS, v[i]);
    mf_pb_end(b, m);
}

/* Starts a NodeProto of 'op' named 'name' with 'nin' inputs and one output;
 * the caller adds attributes, then node_end. */
static size_t node_begin(Ctx *c, const char *op, const char *name, int nin,
                         const char *const *in, const char *out)
{
    MfPbuf *b = &c->nodes;
    size_t m = mf_pb_begin(b, GRAPH_NODE);
    for (int i = 0; i < nin; i++)
        mf_pb_string(b, NODE_IN, in[i]);
    mf_pb_string(b, NODE_OUT, out);
    mf_pb_string(b, NODE_NAME, name);
    mf_pb_string(b, NODE_OP, op);
    return m;
}

static void node_end(Ctx *c, size_t m)
{
    mf_pb_end(&c->nodes, m);
}

/* A node with no attributes. */
static void node(Ctx *c, const char *op, const char *name, int nin, const char *const *in,
                 const char *out)
{
    node_end(c, node_begin(c, op, name, nin, in, out));
}

/* A fresh value/node name "<base>/<what>_<k>" in 'buf'. */
static const char *fresh(Ctx *c, const char *base, const char *what, char *buf)
{
    snprintf(buf, NAME_MAX_LEN, "%.1000s/%s_%d", base, what, c->fresh++);
    return buf;
}

/* An initializer 'name' of 'dt' and 'shape' holding the raw bytes 'data'. */
static void initializer(Ctx *c, const char *name, MfDType dt, int rank, const int64_t *shape,
                        const void *data, size_t nbytes)
{
    MfPbuf *b = &c->inits;
    size_t m = mf_pb_begin(b, GRAPH_INIT);
    for (int i = 0; i < rank; i++)
        mf_pb_int(b, TENSOR_DIMS, shape[i]);
    mf_pb_int(b, TENSOR_DTYPE, onnx_dtype(dt));
    mf_pb_string(b, TENSOR_NAME, name);
    mf_pb_bytes(b, TENSOR_RAW, data, nbytes);
    mf_pb_end(b, m);
}

/* A 1-D int64 initializer (shapes, axes, pads) named fresh from 'base'. */
static const char *int64_init(Ctx *c, const char *base, const char *what, const int64_t *v,
                              int n, char *buf)
{
    fresh(c, base, what, buf);
    int64_t len = n;
    initializer(c, buf, MF_INT64, 1, &len, v, (size_t)n * sizeof *v);
    return buf;
}

/* A scalar initializer of 'dt' holding 'v'. */
static const char *scalar_init(Ctx *c, const char *base, MfDType dt, double v, char *buf)
{
    fresh(c, base, "const", buf);
    union { float f; double d; int32_t i; int64_t l; uint8_t b; } u;
    size_t n = mf_dtype_size(dt);
    switch (dt) {
    case MF_FLOAT32: u.f = (float)v; break;
    case MF_FLOAT64: u.d = v; break;
    case MF_INT32: u.i = (int32_t)v; break;
    case MF_INT64: u.l = (int64_t)v; break;
    default: u.b = v != 0; break;
    }
    initializer(c, buf, dt, 0, NULL, &u, n);
    return buf;
}

/* An initializer holding the value of concrete tensor 't'. */
static MfStatus tensor_init(Ctx *c, const char *name, MfTensor *t)
{
    MfTensor *ct = mf_tensor_contiguous(t);
    if (!ct)
        return MF_ENOMEM;
    initializer(c, name, ct->dtype, ct->rank, ct->shape, mf_tensor_data(ct),
                (size_t)mf_tensor_numel(ct) * mf_dtype_size(ct->dtype));
    mf_tensor_release(ct);
    return MF_OK;
}

/* ---- values of source nodes --------------------------------------------------- */

/* The concrete value behind a Const, a variable or a read of one (borrowed),
 * or NULL (a placeholder, an op, an uninitialised variable). */
static MfTensor *known_value(const Ctx *c, const MfNode *n)
{
    if (n->kind == MF_NODE_CONST)
        return n->value;
    if (n->kind == MF_NODE_READ && n->var)
        return n->var->value;
    int var = n->kind == MF_NODE_VARIABLE ? n->index : n->kind == MF_NODE_READ ? n->ref : -1;
    if (var < 0 || !c->opt->vars)
        return NULL;
    return mf_varstore_get(c->opt->vars, var);
}

/* The node whose initializer stands for 'n's value: a read of a graph
 * variable shares the variable's; an eager variable read several times
 * shares the first read's. */
static const MfNode *value_owner(const Ctx *c, const MfNode *n)
{
    if (n->kind == MF_NODE_READ && !n->var && n->ref >= 0)
        return mf_graph_node(c->g, n->ref);
    if (n->kind == MF_NODE_READ && n->var)
        for (int i = 0; i < n->index; i++) {
            const MfNode *m = mf_graph_node(c->g, i);
            if (m->kind == MF_NODE_READ && m->var == n->var)
                return m;
        }
    return n;
}

/* Names the value of source node 'n' after its owner. */
static MfStatus name_source(Ctx *c, MfNode *n)
{
    const MfNode *owner = value_owner(c, n);
    mf_free(c->value[n->index]);
    c->value[n->index] = mf_strdup(owner->name);
    return c->value[n->index] ? MF_OK : mf_err_nomem("onnx.export", strlen(owner->name) + 1);
}

/* Writes the initializer of input 'i' of 'n' when it is a source (once per
 * owner): only values some ONNX node reads become initializers (a filter
 * written pre-transposed is not written as it was). */
static MfStatus need_source(Ctx *c, const MfNode *src)
{
    if (src->kind != MF_NODE_CONST && src->kind != MF_NODE_VARIABLE &&
        src->kind != MF_NODE_READ)
        return MF_OK;
    const MfNode *owner = value_owner(c, src);
    if (c->emitted[owner->index])
        return MF_OK;
    MfTensor *v = known_value(c, src);
    if (!v)
        return mf_err_set(MF_EARG, "onnx.export: variable '%s' has no value (run "
                          "mf.global_variables_initializer() in the session you pass as "
                          "{session = sess})", owner->name);
    c->emitted[owner->index] = true;
    return tensor_init(c, owner->name, v);
}

static MfStatus need_input(Ctx *c, const MfNode *n, int i)
{
    return need_source(c, mf_graph_node(c->g, n->inputs[i].node));
}

/* ---- op mappings ------------------------------------------------------------ */

typedef MfStatus (*Emit)(Ctx *c, MfNode *n, const char *const *in, const char *out);

typedef struct Mapping {
    const char *onnx;   /* a plain op with the node's inputs, or */
    Emit emit;          /* a function writing the nodes */
    bool own_inputs;    /* 'emit' asks need_input itself */
    bool outputs;       /* 'emit' writes every output (output k > 0 as "<name>:k") */
} Mapping;

static const MfTensorSpec *in_spec(const Ctx *c, const MfNode *n, int i)
{
    return &mf_graph_node(c->g, n->inputs[i].node)->out[n->inputs[i].output];
}

static MfStatus unsupported(const MfNode *n, const char *why)
{
    return mf_err_set(MF_EARG, "onnx.export: node '%s' (op %s) cannot be exported: %s", n->name,
                      mf_node_op_name(n), why);
}

static MfStatus emit_square(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    const char *xx[2] = {in[0], in[0]};
    node(c, "Mul", n->name, 2, xx, out);
    return MF_OK;
}

/* 'first' of the inputs, then 'second' of its result: the node's value. */
static void chain(Ctx *c, MfNode *n, const char *first, int nin, const char *const *in,
                  const char *second, const char *out)
{
    char t[NAME_MAX_LEN];
    node(c, first, fresh(c, n->name, "step", t), nin, in, t);
    const char *s[1] = {t};
    node(c, second, n->name, 1, s, out);
}

static MfStatus emit_rsqrt(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    chain(c, n, "Sqrt", 1, in, "Reciprocal", out);
    return MF_OK;
}

static MfStatus emit_log1p(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char one[NAME_MAX_LEN];
    const char *a[2] = {in[0], scalar_init(c, n->name, n->out[0].dtype, 1.0, one)};
    chain(c, n, "Add", 2, a, "Log", out);
    return MF_OK;
}

/* Div: ONNX's integer Div truncates while TensorFlow's floors. */
static MfStatus emit_div(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    if (!mf_dtype_is_float(n->out[0].dtype))
        return unsupported(n, "integer division floors in moonflow and truncates in ONNX");
    node(c, "Div", n->name, 2, in, out);
    return MF_OK;
}

/* NotEqual: Not(Equal); IsFinite: Not(IsInf(x) or IsNaN(x)). */
static MfStatus emit_not_equal(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    chain(c, n, "Equal", 2, in, "Not", out);
    return MF_OK;
}

static MfStatus emit_is_finite(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char inf[NAME_MAX_LEN], nan[NAME_MAX_LEN], any[NAME_MAX_LEN];
    node(c, "IsInf", fresh(c, n->name, "isinf", inf), 1, in, inf);
    node(c, "IsNaN", fresh(c, n->name, "isnan", nan), 1, in, nan);
    const char *both[2] = {inf, nan};
    node(c, "Or", fresh(c, n->name, "or", any), 2, both, any);
    const char *s[1] = {any};
    node(c, "Not", n->name, 1, s, out);
    return MF_OK;
}

static MfStatus emit_cast(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    size_t m = node_begin(c, "Cast", n->name, 1, in, out);
    attr_int(&c->nodes, "to", onnx_dtype(n->out[0].dtype));
    node_end(c, m);
    return MF_OK;
}

/* Reductions: ReduceSum takes its axes as an input (opset 13), the others
 * as an attribute (up to opset 17). No axes: every axis. */
static MfStatus emit_reduce(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    static const char *const names[MF_NOPS] = {
        [MF_OP_SUM] = "ReduceSum", [MF_OP_MEAN] = "ReduceMean", [MF_OP_MAX] = "ReduceMax",
        [MF_OP_MIN] = "ReduceMin", [MF_OP_PROD] = "ReduceProd"};
    _Static_assert(MF_COUNTOF(names) == MF_NOPS, "indexed by MfOpId");
    const char *op = names[n->op];
    int rank = in_spec(c, n, 0)->rank;
    int64_t axes[MF_MAX_RANK];
    int naxes = n->attrs.all_axes ? 0 : n->attrs.naxes;
    for (int i = 0; i < naxes; i++)
        axes[i] = n->attrs.axes[i] < 0 ? n->attrs.axes[i] + rank : n->attrs.axes[i];
    if (!n->attrs.all_axes && naxes == 0) {   /* axis = {}: nothing reduced */
        node(c, "Identity", n->name, 1, in, out);
        return MF_OK;
    }
    char ax[NAME_MAX_LEN];
    size_t m;
    if (n->op == MF_OP_SUM) {
        const char *a[2] = {in[0], naxes ? int64_init(c, n->name, "axes", axes, naxes, ax) : ""};
        m = node_begin(c, op, n->name, naxes ? 2 : 1, a, out);
    } else {
        m = node_begin(c, op, n->name, 1, in, out);
        if (naxes)
            attr_ints(&c->nodes, "axes", axes, naxes);
    }
    attr_int(&c->nodes, "keepdims", n->attrs.keepdims);
    node_end(c, m);
    return MF_OK;
}

/* ArgMax / ArgMin: moonflow's positions are 1-based int64. */
static MfStatus emit_arg(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char t[NAME_MAX_LEN], one[NAME_MAX_LEN];
    int rank = in_spec(c, n, 0)->rank;
    int64_t axis = n->attrs.axis < 0 ? n->attrs.axis + rank : n->attrs.axis;
    size_t m = node_begin(c, n->op == MF_OP_ARGMAX ? "ArgMax" : "ArgMin",
                          fresh(c, n->name, "arg", t), 1, in, t);
    attr_int(&c->nodes, "axis", axis);
    attr_int(&c->nodes, "keepdims", 0);
    node_end(c, m);
    const char *a[2] = {t, scalar_init(c, n->name, MF_INT64, 1, one)};
    node(c, "Add", n->name, 2, a, out);
    return MF_OK;
}

/* A Transpose node of 'x' with 'perm' into 'out'. */
static void transpose(Ctx *c, const char *name, const char *x, const int64_t *perm, int rank,
                      const char *out)
{
    const char *in[1] = {x};
    size_t m = node_begin(c, "Transpose", name, 1, in, out);
    attr_ints(&c->nodes, "perm", perm, rank);
    node_end(c, m);
}

/* MatMul with transpose_a/transpose_b as Transposes of the last two axes. */
static MfStatus emit_matmul(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char ta[NAME_MAX_LEN], tb[NAME_MAX_LEN];
    const char *ab[2] = {in[0], in[1]};
    bool flags[2] = {n->attrs.transpose_a, n->attrs.transpose_b};
    char *bufs[2] = {ta, tb};
    for (int k = 0; k < 2; k++) {
        if (!flags[k])
            continue;
        int r = in_spec(c, n, k)->rank;
        int64_t perm[MF_MAX_RANK];
        for (int i = 0; i < r; i++)
            perm[i] = i;
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        fresh(c, n->name, k ? "transpose_b" : "transpose_a", bufs[k]);
        transpose(c, bufs[k], in[k], perm, r, bufs[k]);
        ab[k] = bufs[k];
    }
    node(c, "MatMul", n->name, 2, ab, out);
    return MF_OK;
}

static MfStatus emit_transpose(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int r = in_spec(c, n, 0)->rank;
    int64_t perm[MF_MAX_RANK];
    for (int i = 0; i < r; i++)
        perm[i] = n->attrs.naxes ? n->attrs.axes[i] : r - 1 - i;
    transpose(c, n->name, in[0], perm, r, out);
    return MF_OK;
}

/* Reshape: moonflow's 0 is a size-0 dim, ONNX's copies the input's unless
 * allowzero (opset 14). A -1 stays -1, so an unknown batch stays unknown. */
static MfStatus emit_reshape(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    bool zero = false;
    for (int i = 0; i < n->attrs.nints; i++)
        zero |= n->attrs.ints[i] == 0;
    if (zero && c->opt->opset < 14)
        return unsupported(n, "a 0 in the new shape needs Reshape's allowzero (opset >= 14)");
    char sh[NAME_MAX_LEN];
    const char *a[2] = {in[0], int64_init(c, n->name, "shape", n->attrs.ints, n->attrs.nints,
                                          sh)};
    size_t m = node_begin(c, "Reshape", n->name, 2, a, out);
    if (zero)
        attr_int(&c->nodes, "allowzero", 1);
    node_end(c, m);
    return MF_OK;
}

/* ExpandDims / Squeeze: their axes as an int64 input (opset 13). */
static MfStatus emit_expand_dims(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char ax[NAME_MAX_LEN];
    const char *a[2] = {in[0], int64_init(c, n->name, "axes", &n->attrs.axis, 1, ax)};
    node(c, "Unsqueeze", n->name, 2, a, out);
    return MF_OK;
}

static MfStatus emit_squeeze(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    const MfTensorSpec *x = in_spec(c, n, 0);
    int64_t axes[MF_MAX_RANK];
    int k = 0;
    if (n->attrs.naxes)
        for (int i = 0; i < n->attrs.naxes; i++)
            axes[k++] = n->attrs.axes[i];
    else
        for (int i = 0; i < x->rank; i++)
            if (x->shape[i] == 1)
                axes[k++] = i;
    char ax[NAME_MAX_LEN];
    const char *a[2] = {in[0], int64_init(c, n->name, "axes", axes, k, ax)};
    node(c, k ? "Squeeze" : "Identity", n->name, k ? 2 : 1, a, out);
    return MF_OK;
}

static MfStatus emit_softmax(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int r = in_spec(c, n, 0)->rank;
    int64_t axis = n->attrs.axis < 0 ? n->attrs.axis + r : n->attrs.axis;
    size_t m = node_begin(c, n->op == MF_OP_SOFTMAX ? "Softmax" : "LogSoftmax", n->name, 1, in,
                          out);
    attr_int(&c->nodes, "axis", axis);
    node_end(c, m);
    return MF_OK;
}

/* BiasAdd: the bias runs along the last axis (NHWC), which ONNX's
 * broadcasting gives as it is; along axis 1 (NCHW) it is reshaped to
 * (C, 1, ..., 1) first. */
static MfStatus emit_bias_add(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int r = in_spec(c, n, 0)->rank;
    const char *a[2] = {in[0], in[1]};
    char sh[NAME_MAX_LEN], rb[NAME_MAX_LEN];
    if (n->attrs.data_format == 1 && r > 2) {
        int64_t shape[MF_MAX_RANK] = {-1};
        for (int i = 1; i < r - 1; i++)
            shape[i] = 1;
        const char *b[2] = {in[1], int64_init(c, n->name, "bias_shape", shape, r - 1, sh)};
        node(c, "Reshape", fresh(c, n->name, "bias", rb), 2, b, rb);
        a[1] = rb;
    }
    node(c, "Add", n->name, 2, a, out);
    return MF_OK;
}

static MfStatus emit_concat(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    size_t m = node_begin(c, "Concat", n->name, n->ninputs, in, out);
    attr_int(&c->nodes, "axis", n->attrs.axis);
    node_end(c, m);
    return MF_OK;
}

/* Pack (stack): each input unsqueezed at the new axis, then Concat. */
static MfStatus emit_stack(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char bufs[8][NAME_MAX_LEN];
    char ax[NAME_MAX_LEN];
    const char *parts[8];
    int64_t axis = n->attrs.axis;
    int64_init(c, n->name, "axes", &axis, 1, ax);
    for (int i = 0; i < n->ninputs; i++) {
        const char *a[2] = {in[i], ax};
        node(c, "Unsqueeze", fresh(c, n->name, "unsqueeze", bufs[i]), 2, a, bufs[i]);
        parts[i] = bufs[i];
    }
    size_t m = node_begin(c, "Concat", n->name, n->ninputs, parts, out);
    attr_int(&c->nodes, "axis", axis);
    node_end(c, m);
    return MF_OK;
}

/* GatherV2: the op's indices are already 0-based (the bindings convert). */
static MfStatus emit_gather(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    size_t m = node_begin(c, "Gather", n->name, 2, in, out);
    attr_int(&c->nodes, "axis", n->attrs.axis);
    node_end(c, m);
    return MF_OK;
}

/* Pad: moonflow's (before, after) pairs per axis become ONNX's begins then
 * ends; the constant is the fill value. */
static MfStatus emit_pad(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int r = in_spec(c, n, 0)->rank;
    int64_t pads[2 * MF_MAX_RANK];
    for (int i = 0; i < r; i++) {
        pads[i] = n->attrs.ints[2 * i];
        pads[r + i] = n->attrs.ints[2 * i + 1];
    }
    char p[NAME_MAX_LEN], v[NAME_MAX_LEN];
    const char *a[3] = {in[0], int64_init(c, n->name, "pads", pads, 2 * r, p),
                        scalar_init(c, n->name, n->out[0].dtype, n->attrs.scalar[0], v)};
    node(c, "Pad", n->name, 3, a, out);
    return MF_OK;
}

/* Slice: begin and size (-1: to the end) per axis become starts and ends. */
static MfStatus emit_slice(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int r = in_spec(c, n, 0)->rank;
    int64_t starts[MF_MAX_RANK], ends[MF_MAX_RANK];
    for (int i = 0; i < r; i++) {
        starts[i] = n->attrs.ints[i];
        int64_t size = n->attrs.ints[r + i];
        ends[i] = size < 0 ? INT64_MAX : starts[i] + size;
    }
    char s[NAME_MAX_LEN], e[NAME_MAX_LEN];
    const char *a[3] = {in[0], int64_init(c, n->name, "starts", starts, r, s),
                        int64_init(c, n->name, "ends", ends, r, e)};
    node(c, "Slice", n->name, 3, a, out);
    return MF_OK;
}

static MfStatus emit_tile(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char t[NAME_MAX_LEN];
    const char *a[2] = {in[0], int64_init(c, n->name, "repeats", n->attrs.ints, n->attrs.nints,
                                          t)};
    node(c, "Tile", n->name, 2, a, out);
    return MF_OK;
}

static MfStatus emit_broadcast_to(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    char t[NAME_MAX_LEN];
    const char *a[2] = {in[0], int64_init(c, n->name, "shape", n->attrs.ints, n->attrs.nints,
                                          t)};
    node(c, "Expand", n->name, 2, a, out);
    return MF_OK;
}

/* LSTMCell(z [, c_prev]) -> h, c: the gates i, f, g, o are column blocks
 * of z; c = sigmoid(f) c_prev + sigmoid(i) tanh(g), h = sigmoid(o) tanh(c). */
static MfStatus emit_lstm_cell(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int64_t cols = in_spec(c, n, 0)->shape[1], units = cols / 4, one = 1;
    if (cols < 0)
        return unsupported(n, "the number of units is unknown");
    static const char *const acts[4] = {"Sigmoid", "Sigmoid", "Tanh", "Sigmoid"};
    char gate[4][NAME_MAX_LEN], st[NAME_MAX_LEN], en[NAME_MAX_LEN], ax[NAME_MAX_LEN];
    char sl[NAME_MAX_LEN], ig[NAME_MAX_LEN], fc[NAME_MAX_LEN], cc[NAME_MAX_LEN];
    char tc[NAME_MAX_LEN];
    int64_init(c, n->name, "axis", &one, 1, ax);
    for (int k = 0; k < 4; k++) {
        int64_t b = k * units, e = (k + 1) * units;
        const char *a[4] = {in[0], int64_init(c, n->name, "start", &b, 1, st),
                            int64_init(c, n->name, "end", &e, 1, en), ax};
        node(c, "Slice", fresh(c, n->name, "gate", sl), 4, a, sl);
        const char *s1[1] = {sl};
        node(c, acts[k], fresh(c, n->name, acts[k], gate[k]), 1, s1, gate[k]);
    }
    snprintf(cc, sizeof cc, "%.1000s:1", out);
    const char *a_ig[2] = {gate[0], gate[2]};
    node(c, "Mul", fresh(c, n->name, "input", ig), 2, a_ig, n->ninputs > 1 ? ig : cc);
    if (n->ninputs > 1) {
        const char *a_fc[2] = {gate[1], in[1]};
        node(c, "Mul", fresh(c, n->name, "forget", fc), 2, a_fc, fc);
        const char *a_c[2] = {fc, ig};
        node(c, "Add", cc, 2, a_c, cc);
    }
    const char *a_tc[1] = {cc};
    node(c, "Tanh", fresh(c, n->name, "tanh", tc), 1, a_tc, tc);
    const char *a_h[2] = {gate[3], tc};
    node(c, "Mul", n->name, 2, a_h, out);
    return MF_OK;
}

/* ---- Conv2D and pooling: NHWC around an NCHW op ------------------------------- */

/* TensorFlow's SAME padding of one spatial axis as explicit (begin, end)
 * (core/ops/window.h: the extra padding goes at the end). */
static MfStatus same_pads(const MfNode *n, int64_t in, int64_t k, int64_t s, int64_t d,
                          int64_t *begin, int64_t *end)
{
    if (in < 0)
        return unsupported(n, "SAME padding needs known spatial sizes (ONNX's auto_pad is "
                           "avoided: runtimes reject it with dilations); trace with a concrete "
                           "input size");
    int64_t out;
    mf_window_axis(MF_PADDING_SAME, in, k, s, d, &out, begin, end);
    return MF_OK;
}

/* Fills ONNX's kernel_shape-independent attributes of a 2-D window op:
 * strides, dilations and pads [top, left, bottom, right]. */
static MfStatus window_attrs(const Ctx *c, const MfNode *n, const int64_t *k, int64_t *strides,
                             int64_t *dil, int64_t *pads)
{
    const MfTensorSpec *x = in_spec(c, n, 0);
    for (int i = 0; i < 2; i++) {
        strides[i] = mf_window_one_if_zero(n->attrs.strides[1 + i]);
        dil[i] = mf_window_one_if_zero(n->attrs.dilations[1 + i]);
        pads[i] = pads[2 + i] = 0;
        if (n->attrs.padding == MF_PADDING_SAME) {
            MfStatus st = same_pads(n, x->shape[1 + i], k[i], strides[i], dil[i], &pads[i],
                                    &pads[2 + i]);
            if (st != MF_OK)
                return st;
        }
    }
    return MF_OK;
}

/* The filter in OIHW: an initializer transposed now when its value is
 * known (a Variable or constant), else a Transpose node. */
static MfStatus filter_oihw(Ctx *c, MfNode *n, const char *w, char *buf)
{
    const MfNode *src = mf_graph_node(c->g, n->inputs[1].node);
    MfTensor *v = known_value(c, src);
    fresh(c, n->name, "filter_oihw", buf);
    if (!v) {
        static const int64_t HWIO_TO_OIHW[4] = {3, 2, 0, 1};
        transpose(c, buf, w, HWIO_TO_OIHW, 4, buf);
        return need_input(c, n, 1);
    }
    MfTensor *hwio = mf_tensor_contiguous(v);
    if (!hwio)
        return MF_ENOMEM;
    int64_t H = v->shape[0], W = v->shape[1], I = v->shape[2], O = v->shape[3];
    size_t es = mf_dtype_size(v->dtype);
    char *dst = mf_malloc((size_t)(H * W * I * O) * es + 1);
    if (!dst) {
        mf_tensor_release(hwio);
        return mf_err_nomem("onnx.export", (unsigned long long)(H * W * I * O) * es);
    }
    const char *s = mf_tensor_data(hwio);
    for (int64_t h = 0; h < H; h++)
        for (int64_t x = 0; x < W; x++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t o = 0; o < O; o++)
                    memcpy(dst + (size_t)(((o * I + i) * H + h) * W + x) * es,
                           s + (size_t)(((h * W + x) * I + i) * O + o) * es, es);
    const int64_t shape[4] = {O, I, H, W};
    initializer(c, buf, v->dtype, 4, shape, dst, (size_t)(H * W * I * O) * es);
    mf_free(dst);
    mf_tensor_release(hwio);
    return MF_OK;
}

static MfStatus emit_conv2d(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    const MfTensorSpec *w = in_spec(c, n, 1);
    if (w->shape[0] < 0 || w->shape[1] < 0)
        return unsupported(n, "the filter's spatial size is unknown");
    int64_t k[2] = {w->shape[0], w->shape[1]}, strides[2], dil[2], pads[4];
    MfStatus st = window_attrs(c, n, k, strides, dil, pads);
    char x[NAME_MAX_LEN], f[NAME_MAX_LEN], y[NAME_MAX_LEN];
    if (st == MF_OK)
        st = need_input(c, n, 0);
    if (st == MF_OK)
        st = filter_oihw(c, n, in[1], f);
    if (st != MF_OK)
        return st;
    transpose(c, fresh(c, n->name, "to_nchw", x), in[0], mf_nhwc_to_nchw, 4, x);
    const char *a[2] = {x, f};
    size_t m = node_begin(c, "Conv", fresh(c, n->name, "conv", y), 2, a, y);
    attr_ints(&c->nodes, "kernel_shape", k, 2);
    attr_ints(&c->nodes, "strides", strides, 2);
    attr_ints(&c->nodes, "dilations", dil, 2);
    attr_ints(&c->nodes, "pads", pads, 4);
    node_end(c, m);
    transpose(c, n->name, y, mf_nchw_to_nhwc, 4, out);
    return MF_OK;
}

/* MaxPool / AvgPool (ksize and strides {1, h, w, 1}); TensorFlow's average
 * leaves the padding out of the count, as count_include_pad = 0 does. */
static MfStatus emit_pool(Ctx *c, MfNode *n, const char *const *in, const char *out)
{
    int64_t k[2] = {n->attrs.ksize[1], n->attrs.ksize[2]}, strides[2], dil[2], pads[4];
    MfStatus st = window_attrs(c, n, k, strides, dil, pads);
    if (st != MF_OK)
        return st;
    char x[NAME_MAX_LEN], y[NAME_MAX_LEN];
    transpose(c, fresh(c, n->name, "to_nchw", x), in[0], mf_nhwc_to_nchw, 4, x);
    const char *a[1] = {x};
    bool max = n->op == MF_OP_MAX_POOL;
    size_t m = node_begin(c, max ? "MaxPool" : "AveragePool", fresh(c, n->name, "pool", y), 1,
                          a, y);
    attr_ints(&c->nodes, "kernel_shape", k, 2);
    attr_ints(&c->nodes, "strides", strides, 2);
    attr_ints(&c->nodes, "pads", pads, 4);
    if (!max)
        attr_int(&c->nodes, "count_include_pad", 0);
    node_end(c, m);
    transpose(c, n->name, y, mf_nchw_to_nhwc, 4, out);
    return MF_OK;
}

/* A mapping to one ONNX op of the same inputs, or to an emitter; every
 * field is given, as clang's -Wmissing-field-initializers asks. */
#define NAMED(onnx_op) {onnx_op, NULL, false, false}
#define EMIT(fn) {NULL, fn, false, false}

static const Mapping mappings[MF_NOPS] = {
    [MF_OP_ADD] = NAMED("Add"), [MF_OP_SUB] = NAMED("Sub"), [MF_OP_MUL] = NAMED("Mul"),
    [MF_OP_DIV] = EMIT(emit_div), [MF_OP_POW] = NAMED("Pow"),
    [MF_OP_MAXIMUM] = NAMED("Max"), [MF_OP_MINIMUM] = NAMED("Min"),
    [MF_OP_NEG] = NAMED("Neg"), [MF_OP_ABS] = NAMED("Abs"), [MF_OP_SIGN] = NAMED("Sign"),
    [MF_OP_SQUARE] = EMIT(emit_square), [MF_OP_SQRT] = NAMED("Sqrt"),
    [MF_OP_RSQRT] = EMIT(emit_rsqrt), [MF_OP_EXP] = NAMED("Exp"),
    [MF_OP_LOG] = NAMED("Log"), [MF_OP_LOG1P] = EMIT(emit_log1p),
    [MF_OP_SIN] = NAMED("Sin"), [MF_OP_COS] = NAMED("Cos"), [MF_OP_TANH] = NAMED("Tanh"),
    [MF_OP_SIGMOID] = NAMED("Sigmoid"), [MF_OP_RELU] = NAMED("Relu"),
    [MF_OP_SOFTPLUS] = NAMED("Softplus"), [MF_OP_FLOOR] = NAMED("Floor"),
    [MF_OP_CEIL] = NAMED("Ceil"), [MF_OP_ROUND] = NAMED("Round"),
    [MF_OP_EQUAL] = NAMED("Equal"), [MF_OP_NOT_EQUAL] = EMIT(emit_not_equal),
    [MF_OP_LESS] = NAMED("Less"), [MF_OP_LESS_EQUAL] = NAMED("LessOrEqual"),
    [MF_OP_GREATER] = NAMED("Greater"), [MF_OP_GREATER_EQUAL] = NAMED("GreaterOrEqual"),
    [MF_OP_LOGICAL_AND] = NAMED("And"), [MF_OP_LOGICAL_OR] = NAMED("Or"),
    [MF_OP_LOGICAL_NOT] = NAMED("Not"), [MF_OP_IS_NAN] = NAMED("IsNaN"),
    [MF_OP_IS_INF] = NAMED("IsInf"), [MF_OP_IS_FINITE] = EMIT(emit_is_finite),
    [MF_OP_SELECT] = NAMED("Where"), [MF_OP_CAST] = EMIT(emit_cast),
    [MF_OP_SUM] = EMIT(emit_reduce), [MF_OP_MEAN] = EMIT(emit_reduce),
    [MF_OP_MAX] = EMIT(emit_reduce), [MF_OP_MIN] = EMIT(emit_reduce),
    [MF_OP_PROD] = EMIT(emit_reduce), [MF_OP_ARGMAX] = EMIT(emit_arg),
    [MF_OP_ARGMIN] = EMIT(emit_arg),
    [MF_OP_MATMUL] = EMIT(emit_matmul), [MF_OP_BATCH_MATMUL] = EMIT(emit_matmul),
    [MF_OP_TRANSPOSE] = EMIT(emit_transpose), [MF_OP_RESHAPE] = EMIT(emit_reshape),
    [MF_OP_EXPAND_DIMS] = EMIT(emit_expand_dims), [MF_OP_SQUEEZE] = EMIT(emit_squeeze),
    [MF_OP_CONCAT] = EMIT(emit_concat), [MF_OP_STACK] = EMIT(emit_stack),
    [MF_OP_GATHER] = EMIT(emit_gather), [MF_OP_SLICE] = EMIT(emit_slice),
    [MF_OP_TILE] = EMIT(emit_tile), [MF_OP_PAD] = EMIT(emit_pad),
    [MF_OP_BROADCAST_TO] = EMIT(emit_broadcast_to),
    [MF_OP_IDENTITY] = NAMED("Identity"), [MF_OP_STOP_GRADIENT] = NAMED("Identity"),
    [MF_OP_CONV2D] = {NULL, emit_conv2d, true, false},
    [MF_OP_SOFTMAX] = EMIT(emit_softmax), [MF_OP_LOG_SOFTMAX] = EMIT(emit_softmax),
    [MF_OP_BIAS_ADD] = EMIT(emit_bias_add),
    [MF_OP_MAX_POOL] = EMIT(emit_pool), [MF_OP_AVG_POOL] = EMIT(emit_pool),
    [MF_OP_LSTM_CELL] = {NULL, emit_lstm_cell, false, true},
};
_Static_assert(MF_COUNTOF(mappings) == MF_NOPS, "indexed by MfOpId (no mapping: NULL)");

/* ---- the walk ------------------------------------------------------------------ */

/* The ONNX value name of input 'i' of 'n' in 'buf' (a node's output 0 is
 * its value name, output k > 0 is "<name>:k"). */
static const char *input_name(const Ctx *c, const MfNode *n, int i, char *buf)
{
    const MfNodeInput *e = &n->inputs[i];
    if (e->output == 0)
        return c->value[e->node];
    snprintf(buf, NAME_MAX_LEN, "%.1000s:%d", c->value[e->node], e->output);
    return buf;
}

static MfStatus emit_op(Ctx *c, MfNode *n)
{
    const Mapping *map = &mappings[n->op];
    if (!map->onnx && !map->emit)
        return unsupported(n, "ONNX export has no mapping for this op");
    if (n->noutputs != 1 && !map->outputs)
        return unsupported(n, "its mapping writes one output of several");
    if (!onnx_dtype(n->out[0].dtype))
        return unsupported(n, "its dtype has no ONNX type");
    char bufs[8][NAME_MAX_LEN];
    const char *in[8];
    if (n->ninputs > 8)
        return unsupported(n, "more than 8 inputs");
    for (int i = 0; i < n->ninputs; i++) {
        in[i] = input_name(c, n, i, bufs[i]);
        MfStatus st = map->own_inputs ? MF_OK : need_input(c, n, i);
        if (st != MF_OK)
            return st;
    }
    if (map->emit)
        return map->emit(c, n, in, n->name);
    node(c, map->onnx, n->name, n->ninputs, in, n->name);
    return MF_OK;
}

static MfStatus emit_node(Ctx *c, MfNode *n)
{
    if (!(c->value[n->index] = mf_strdup(n->name)))
        return mf_err_nomem("onnx.export", strlen(n->name) + 1);
    switch (n->kind) {
    case MF_NODE_PLACEHOLDER:
        return MF_OK;  /* a graph input (checked by the caller) */
    case MF_NODE_CONST:
    case MF_NODE_VARIABLE:
    case MF_NODE_READ:
        return name_source(c, n);
    case MF_NODE_OP:
        return emit_op(c, n);
    default:
        return unsupported(n, "only computations export (no assigns or groups)");
    }
}

/* Marks what the outputs need, through data edges (ONNX has no control
 * edges: the ops exported are pure, so order is data order). */
static void mark_needed(Ctx *c, int node)
{
    if (c->needed[node])
        return;
    c->needed[node] = true;
    MfNode *n = mf_graph_node(c->g, node);
    if (n->kind == MF_NODE_READ && !n->var && n->ref >= 0)
        return;   /* a read of a graph variable: its value, not its initializer */
    for (int i = 0; i < n->ninputs; i++)
        mark_needed(c, n->inputs[i].node);
}

/* The ValueInfoProto of 'name' with 'spec'; unknown dims of inputs get the
 * symbolic names 'params' gives ("N" for axis 0), of outputs none. */
static void value_info(MfPbuf *b, int field, const char *name, const MfTensorSpec *spec,
                       int input_index)
{
    size_t vi = mf_pb_begin(b, field);
    mf_pb_string(b, VI_NAME, name);
    size_t ty = mf_pb_begin(b, VI_TYPE);
    size_t tt = mf_pb_begin(b, TYPE_TENSOR);
    mf_pb_int(b, TT_ELEM, onnx_dtype(spec->dtype));
    size_t sh = mf_pb_begin(b, TT_SHAPE);
    for (int i = 0; i < spec->rank; i++) {
        size_t d = mf_pb_begin(b, SHAPE_DIM);
        char param[32];
        if (spec->shape[i] >= 0)
            mf_pb_int(b, DIM_VALUE, spec->shape[i]);
        else if (input_index >= 0) {
            if (i == 0)
                snprintf(param, sizeof param, "N");
            else
                snprintf(param, sizeof param, "d%d_%d", input_index, i);
            mf_pb_string(b, DIM_PARAM, param);
        }
        mf_pb_end(b, d);
    }
    mf_pb_end(b, sh);
    mf_pb_end(b, tt);
    mf_pb_end(b, ty);
    mf_pb_end(b, vi);
}

static MfStatus check_inputs(const Ctx *c, int n, MfTensor *const *inputs)
{
    for (int i = 0; i < n; i++) {
        const MfNode *p = inputs[i]->node;
        if (!p || mf_tensor_graph(inputs[i]) != c->g || p->kind != MF_NODE_PLACEHOLDER)
            return mf_err_set(MF_EARG, "onnx.export: input %d must be a placeholder of the "
                              "graph", i + 1);
    }
    for (int k = 0; k < mf_graph_nnodes(c->g); k++) {
        const MfNode *p = mf_graph_node(c->g, k);
        bool listed = false;
        for (int i = 0; i < n; i++)
            listed |= inputs[i]->node == p;
        if (c->needed[k] && p->kind == MF_NODE_PLACEHOLDER && !listed)
            return mf_err_set(MF_EARG, "onnx.export: the outputs need placeholder '%s', which "
                              "is not among the inputs", p->name);
    }
    return MF_OK;
}

/* Graph inputs; one renamed gets an Identity to its placeholder's name
 * (written before the nodes that read it: ONNX wants them sorted). */
static void write_inputs(Ctx *c, MfPbuf *b, int nin, MfTensor *const *inputs)
{
    for (int i = 0; i < nin; i++) {
        const MfNode *p = inputs[i]->node;
        const char *name = c->opt->input_names ? c->opt->input_names[i] : p->name;
        if (strcmp(name, p->name) != 0) {
            const char *a[1] = {name};
            node(c, "Identity", p->name, 1, a, p->name);
        }
        value_info(b, GRAPH_INPUT, name, &p->out[0], i);
    }
}

/* Graph outputs. One gets an Identity to its own name when it is renamed,
 * a placeholder or an initializer, or listed twice. */
static MfStatus write_outputs(Ctx *c, MfPbuf *b, int nout, MfTensor *const *outputs)
{
    for (int i = 0; i < nout; i++) {
        MfTensor *t = outputs[i];
        const MfNode *p = t->node;
        char vbuf[NAME_MAX_LEN], obuf[NAME_MAX_LEN];
        const char *val = t->node_output == 0 ? c->value[p->index] : vbuf;
        if (t->node_output)
            snprintf(vbuf, sizeof vbuf, "%.1000s:%d", c->value[p->index], t->node_output);
        const char *name = c->opt->output_names ? c->opt->output_names[i] : val;
        bool twice = false;
        for (int k = 0; k < i; k++)
            twice |= outputs[k]->node == p && outputs[k]->node_output == t->node_output;
        MfStatus st = need_source(c, p);
        if (st != MF_OK)
            return st;
        if (p->kind != MF_NODE_OP || twice || strcmp(name, val) != 0) {
            if (strcmp(name, val) == 0)
                snprintf(obuf, sizeof obuf, "output_%d", i + 1);
            else
                snprintf(obuf, sizeof obuf, "%.1000s", name);
            const char *a[1] = {val};
            node(c, "Identity", obuf, 1, a, obuf);
            name = obuf;
        }
        value_info(b, GRAPH_OUTPUT, name, &p->out[t->node_output], -1);
    }
    return MF_OK;
}

static void ctx_free(Ctx *c, int nnodes)
{
    if (c->value)
        for (int i = 0; i < nnodes; i++)
            mf_free(c->value[i]);
    mf_free(c->value);
    mf_free(c->needed);
    mf_free(c->emitted);
    mf_pb_free(&c->nodes);
    mf_pb_free(&c->inits);
}

static MfStatus check_outputs(MfGraph *g, int n, MfTensor *const *outputs)
{
    if (n < 1)
        return mf_err_set(MF_EARG, "onnx.export: no outputs to export");
    for (int i = 0; i < n; i++)
        if (!outputs[i]->node || mf_tensor_graph(outputs[i]) != g)
            return mf_err_set(MF_EARG, "onnx.export: output %d is not a tensor of the graph "
                              "being exported", i + 1);
    return MF_OK;
}

/* The GraphProto of the model into 'b'. */
static MfStatus write_graph(Ctx *c, MfPbuf *b, int nin, MfTensor *const *inputs, int nout,
                            MfTensor *const *outputs)
{
    int nn = mf_graph_nnodes(c->g);
    for (int i = 0; i < nout; i++)
        mark_needed(c, ((const MfNode *)outputs[i]->node)->index);
    MfStatus st = check_inputs(c, nin, inputs);
    MfPbuf io = mf_pb_new();
    if (st == MF_OK)
        write_inputs(c, &io, nin, inputs);
    for (int i = 0; i < nn && st == MF_OK; i++)
        if (c->needed[i])
            st = emit_node(c, mf_graph_node(c->g, i));
    if (st == MF_OK)
        st = write_outputs(c, &io, nout, outputs);
    mf_pb_raw(b, c->nodes.data, c->nodes.len);
    mf_pb_string(b, GRAPH_NAME, c->opt->graph_name ? c->opt->graph_name : "moonflow");
    mf_pb_raw(b, c->inits.data, c->inits.len);
    mf_pb_raw(b, io.data, io.len);
    mf_pb_free(&io);
    return st;
}

/* A names option ("input_names", "output_names") gives one name per tensor
 * ('want' of them, 'what'). */
static MfStatus check_names(const char *key, const char *const *names, int want,
                            const char *what)
{
    int n = 0;
    while (names && names[n])
        n++;
    if (names && n != want)
        return mf_err_set(MF_EARG, "onnx.export: %s has %d names for %d %s", key, n, want, what);
    return MF_OK;
}

MfStatus mf_onnx_encode(MfGraph *g, int ninputs, MfTensor *const *inputs, int noutputs,
                        MfTensor *const *outputs, const MfOnnxOptions *opt, MfPbuf *out)
{
    MfStatus st = check_names("input_names", opt->input_names, ninputs, "inputs");
    if (st == MF_OK)
        st = check_names("output_names", opt->output_names, noutputs, "outputs");
    if (st != MF_OK)
        return st;
    if (opt->opset < OPSET_MIN || opt->opset > OPSET_MAX)
        return mf_err_set(MF_EARG, "onnx.export: opset must be %d..%d, got %lld", OPSET_MIN,
                          OPSET_MAX, (long long)opt->opset);
    st = check_outputs(g, noutputs, outputs);
    if (st != MF_OK)
        return st;
    int nn = mf_graph_nnodes(g);
    Ctx c = {.g = g, .opt = opt, .nodes = mf_pb_new(), .inits = mf_pb_new()};
    c.value = mf_calloc((size_t)nn + 1, sizeof *c.value);
    c.needed = mf_calloc((size_t)nn + 1, sizeof *c.needed);
    c.emitted = mf_calloc((size_t)nn + 1, sizeof *c.emitted);
    if (!c.value || !c.needed || !c.emitted) {
        ctx_free(&c, nn);
        return mf_err_nomem("onnx.export", (unsigned long long)nn * 10);
    }
    mf_pb_int(out, MODEL_IR, opt->opset >= 14 ? 8 : 7);
    mf_pb_string(out, MODEL_PRODUCER, "moonflow");
    mf_pb_string(out, MODEL_PRODUCER_VERSION, "0.1");
    size_t os = mf_pb_begin(out, MODEL_OPSET);
    mf_pb_string(out, OPSET_DOMAIN, "");
    mf_pb_int(out, OPSET_VERSION, opt->opset);
    mf_pb_end(out, os);
    size_t gm = mf_pb_begin(out, MODEL_GRAPH);
    st = write_graph(&c, out, ninputs, inputs, noutputs, outputs);
    mf_pb_end(out, gm);
    if (st == MF_OK)
        st = mf_pb_finish(&c.nodes, "onnx.export");
    if (st == MF_OK)
        st = mf_pb_finish(&c.inits, "onnx.export");
    if (st == MF_OK)
        st = mf_pb_finish(out, "onnx.export");
    ctx_free(&c, nn);
    return st;
}

MfStatus mf_onnx_export(MfGraph *g, int ninputs, MfTensor *const *inputs, int noutputs,
                        MfTensor *const *outputs, const MfOnnxOptions *opt, const char *path)
{
    MfPbuf b = mf_pb_new();
    MfStatus st = mf_onnx_encode(g, ninputs, inputs, noutputs, outputs, opt, &b);
    if (st == MF_OK)
        st = mf_write_file_atomic("onnx.export", path, b.data, b.len);
    mf_pb_free(&b);
    return st;
}
