/* interchange.h — graphs that leave moonflow: TensorFlow's GraphDef (for
 * TensorBoard's graph view, graph/graphdef.c) and ONNX models (graph/onnx.c).
 * Both are protobuf messages written with core/io/protobuf.h. */
#ifndef MF_INTERCHANGE_H
#define MF_INTERCHANGE_H

#include "core/io/events.h"
#include "core/io/protobuf.h"
#include "graph.h"

/* Appends a serialized tensorflow.GraphDef of every node of 'g' to 'out':
 * names with their scopes (so TensorBoard draws "gradients/" apart from the
 * forward graph), TensorFlow op names, data inputs "node:k" and control
 * inputs "^node", the dtype ("T" or "dtype") and "_output_shapes" (unknown
 * dims as -1) of each node. Field numbers: graph.proto (GraphDef: node 1,
 * versions 4), node_def.proto (NodeDef: name 1, op 2, input 3, attr 5),
 * attr_value.proto (AttrValue: list 1, type 6, shape 7; ListValue:
 * shape 7), tensor_shape.proto (dim 2; Dim: size 1), versions.proto
 * (VersionDef: producer 1). */
MfStatus mf_graphdef_encode(const MfGraph *g, MfPbuf *out);

/* Writes the GraphDef of 'g' as a graph event of 'w' (TensorBoard's graph
 * view: w:graph(g)). */
MfStatus mf_graphdef_write_event(MfEventWriter *w, const MfGraph *g);

/* Where the values of a graph's variables come from when a model is
 * exported: a session's store (graph variables), or none (only eager
 * variables captured by mf.trace, read at export time). */
typedef struct MfOnnxOptions {
    int64_t opset;          /* 13..17 (checked: a Lua integer as given) */
    const MfVarStore *vars; /* NULL: no graph variables */
    const char *graph_name; /* "moonflow" when NULL */
    /* Names the ONNX graph's inputs and outputs get, NULL-terminated, one
     * per input or output (NULL: the tensors' own names, "arg1:0" ->
     * "arg1", "dense/add:0" -> "dense/add"). */
    const char *const *input_names;
    const char *const *output_names;
} MfOnnxOptions;

/* Writes an ONNX model computing the 'noutputs' symbolic tensors 'outputs'
 * of 'g' from the placeholders 'inputs', to the file 'path' (atomically: a
 * temporary file renamed into place). Variables (eager ones captured by
 * mf.trace, or graph ones with a value in opt->vars) and Const nodes
 * become initializers. Only the nodes the outputs need are exported; a node
 * whose op has no ONNX mapping fails naming the op and the node, and no
 * file is written. Unknown dims (-1) of placeholders become symbolic dims
 * ("N" for the first, "d<i>_<k>" otherwise). */
MfStatus mf_onnx_export(MfGraph *g, int ninputs, MfTensor *const *inputs, int noutputs,
                        MfTensor *const *outputs, const MfOnnxOptions *opt, const char *path);

/* The ONNX encoding of the same model into 'out' (for tests). */
MfStatus mf_onnx_encode(MfGraph *g, int ninputs, MfTensor *const *inputs, int noutputs,
                        MfTensor *const *outputs, const MfOnnxOptions *opt, MfPbuf *out);

/* A trace's placeholders and results (borrowed), for exporting it. */
MfTensor *const *mf_trace_args(const MfTrace *t, int *n);
MfTensor *const *mf_trace_results(const MfTrace *t, int *n);
/* The variable store of the trace's private session (variables made
 * inside the traced function). */
const MfVarStore *mf_trace_vars(const MfTrace *t);

#endif
