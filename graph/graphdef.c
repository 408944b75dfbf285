/* graphdef.c — a moonflow graph as TensorFlow's GraphDef (see
 * interchange.h), the message TensorBoard's graph view draws. */
#include <stdio.h>

#include "interchange.h"

enum { GRAPH_NODE = 1, GRAPH_VERSIONS = 4 };
enum { VERSION_PRODUCER = 1 };
enum { NODE_NAME = 1, NODE_OP = 2, NODE_INPUT = 3, NODE_ATTR = 5 };
enum { ENTRY_KEY = 1, ENTRY_VALUE = 2 };      /* map<string, AttrValue> entries */
enum { ATTR_LIST = 1, ATTR_TYPE = 6, ATTR_SHAPE = 7 };
enum { LIST_SHAPE = 7 };
enum { SHAPE_DIM = 2, DIM_SIZE = 1 };

/* TensorFlow's DataType enum (types.proto). */
static int tf_dtype(MfDType dt)
{
    switch (dt) {
    case MF_FLOAT32: return 1;   /* DT_FLOAT */
    case MF_FLOAT64: return 2;   /* DT_DOUBLE */
    case MF_INT32: return 3;     /* DT_INT32 */
    case MF_INT64: return 9;     /* DT_INT64 */
    case MF_BOOL: return 10;     /* DT_BOOL */
    case MF_UINT8: return 4;     /* DT_UINT8 */
    case MF_FLOAT16: return 19;  /* DT_HALF */
    case MF_BFLOAT16: return 14; /* DT_BFLOAT16 */
    default: return 0;           /* DT_INVALID */
    }
}

static void shape_proto(MfPbuf *b, int field, const MfTensorSpec *s)
{
    size_t m = mf_pb_begin(b, field);
    for (int i = 0; i < s->rank; i++) {
        size_t d = mf_pb_begin(b, SHAPE_DIM);
        mf_pb_int(b, DIM_SIZE, s->shape[i]);
        mf_pb_end(b, d);
    }
    mf_pb_end(b, m);
}

/* One attr map entry whose value is a DataType. */
static void attr_type(MfPbuf *b, const char *key, MfDType dt)
{
    size_t e = mf_pb_begin(b, NODE_ATTR);
    mf_pb_string(b, ENTRY_KEY, key);
    size_t v = mf_pb_begin(b, ENTRY_VALUE);
    mf_pb_int(b, ATTR_TYPE, tf_dtype(dt));
    mf_pb_end(b, v);
    mf_pb_end(b, e);
}

/* "_output_shapes": the shapes TensorBoard writes on the edges. */
static void attr_output_shapes(MfPbuf *b, const MfNode *n)
{
    size_t e = mf_pb_begin(b, NODE_ATTR);
    mf_pb_string(b, ENTRY_KEY, "_output_shapes");
    size_t v = mf_pb_begin(b, ENTRY_VALUE);
    size_t l = mf_pb_begin(b, ATTR_LIST);
    for (int k = 0; k < n->noutputs; k++)
        shape_proto(b, LIST_SHAPE, &n->out[k]);
    mf_pb_end(b, l);
    mf_pb_end(b, v);
    mf_pb_end(b, e);
}

static void node_def(MfPbuf *b, const MfGraph *g, const MfNode *n)
{
    size_t m = mf_pb_begin(b, GRAPH_NODE);
    mf_pb_string(b, NODE_NAME, n->name);
    mf_pb_string(b, NODE_OP, mf_node_op_name(n));
    char buf[1200];
    for (int i = 0; i < n->ninputs; i++) {
        const MfNode *src = mf_graph_node(g, n->inputs[i].node);
        if (n->inputs[i].output == 0)
            mf_pb_string(b, NODE_INPUT, src->name);
        else {
            snprintf(buf, sizeof buf, "%s:%d", src->name, n->inputs[i].output);
            mf_pb_string(b, NODE_INPUT, buf);
        }
    }
    for (int i = 0; i < n->ncontrol; i++) {
        snprintf(buf, sizeof buf, "^%s", mf_graph_node(g, n->control[i])->name);
        mf_pb_string(b, NODE_INPUT, buf);
    }
    if (n->noutputs > 0) {
        bool source = n->kind == MF_NODE_PLACEHOLDER || n->kind == MF_NODE_CONST ||
                      n->kind == MF_NODE_VARIABLE;
        attr_type(b, source ? "dtype" : "T", n->out[0].dtype);
        attr_output_shapes(b, n);
    }
    mf_pb_end(b, m);
}

MfStatus mf_graphdef_encode(const MfGraph *g, MfPbuf *out)
{
    int n = mf_graph_nnodes(g);
    for (int i = 0; i < n; i++)
        node_def(out, g, mf_graph_node(g, i));
    size_t v = mf_pb_begin(out, GRAPH_VERSIONS);
    mf_pb_int(out, VERSION_PRODUCER, 1);
    mf_pb_end(out, v);
    return mf_pb_finish(out, "graph");
}

MfStatus mf_graphdef_write_event(MfEventWriter *w, const MfGraph *g)
{
    MfPbuf b = mf_pb_new();
    MfStatus st = mf_graphdef_encode(g, &b);
    if (st == MF_OK)
        st = mf_event_graph(w, b.data, b.len);
    mf_pb_free(&b);
    return st;
}
