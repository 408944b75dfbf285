/* gradients.h — symbolic gradients in graph mode (TensorFlow 1.x's
 * tf.gradients): the backward graph is built from the same op gradient
 * functions as eager tapes (core/grad.h), as nodes under "gradients/". */
#ifndef MF_GRAPH_GRADIENTS_H
#define MF_GRAPH_GRADIENTS_H

#include "graph.h"

/* Adds to 'g' the nodes computing d(sum of ys)/d(xs[i]) for the 'ny'
 * symbolic tensors 'ys' and the 'nx' symbolic tensors 'xs' (all of 'g').
 * 'grad_ys' (NULL, or 'ny' entries, each NULL or a tensor shaped like its
 * y) weights each y; the default is ones_like(y). Only nodes on a path from
 * an x to a y get gradients; several contributions are summed with AddV2.
 * On success 'grads[i]' is an owned symbolic tensor, or NULL when xs[i] is
 * not connected to any y (or is not a float tensor).
 * Unknown (-1) dims: the common ops (elementwise with broadcasting,
 * reductions, reshapes, transposes, matmul, stack, softmax and losses,
 * pools) take shapes at run time (core/grad.h); concat, slice, pad and the
 * convolutions when the dims their gradients read are known (concat's axis;
 * slice and pad: an unknown dim taken whole, not padded after; the filter's
 * shape); the others (gather, tile, trace, squeeze without axes) fail with
 * MF_ESHAPE and a message naming the node and the op.
 * 'g' NULL: the graph of ys[0], else the default graph (g:as_default),
 * else MF_EARG (eager ys: a GradientTape computes those). */
MfStatus mf_graph_gradients(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                            MfTensor *const *xs, MfTensor *const *grad_ys, MfTensor **grads);

/* mf_graph_gradients where only the ops built while the graph had between
 * 'lo' and 'hi' nodes (node indices in [lo, hi)) pass gradients, the
 * others being constants: a GradientTape inside mf.trace, which records
 * only while it is active. Variable reads pass gradients whenever built. */
MfStatus mf_graph_gradients_window(MfGraph *g, int ny, MfTensor *const *ys, int nx,
                                   MfTensor *const *xs, MfTensor *const *grad_ys, int lo,
                                   int hi, MfTensor **grads);

/* d(y * grad_y)/d(source i) (grad_y NULL: ones) for 'n' sources, each a
 * Variable 'vars[i]' (when vars and vars[i] are not NULL) or the tensor
 * 'tensors[i]': a graph Variable's gradient is its output's (its reads
 * included); a captured eager Variable's (mf.trace) the sum over its
 * values in 'g' (its READ nodes, its assigns); a tensor's its own. Only
 * ops built in [lo, hi) pass gradients (see above). 'grads[i]' owned, NULL
 * where unconnected or the source is not in 'g'. */
MfStatus mf_graph_gradients_sources(MfGraph *g, MfTensor *y, MfTensor *grad_y, int lo, int hi,
                                    int n, MfVariable *const *vars, MfTensor *const *tensors,
                                    MfTensor **grads);

/* mf.custom_gradient in graph mode (TensorFlow's tf.custom_gradient): adds
 * to y's graph an Identity of 'y' (under "custom_gradient/") that carries
 * 'fn': the gradient walk, reaching it, calls fn->backward with the
 * symbolic output gradient while it builds, and adds its results to the
 * gradients of the 'ninputs' tensors 'inputs' (symbolic ones of y's graph;
 * concrete ones become their Const nodes); nothing flows into the nodes
 * between the inputs and 'y'. The caller sets fn->ninputs (== ninputs) and
 * fn->inputs (room for them); they are filled here. 'fn' is owned by the
 * node on success, freed on failure. '*out' (owned) is the Identity's
 * output, to be used in place of 'y'. 'first' (-1: unknown) is the number
 * of nodes y's graph had when f started: a trainable variable read since
 * then and not one of the inputs fails (MF_EARG, naming it), as in
 * TensorFlow: the gradient function gives no gradient for it.
 * Lifetime: 'fn' lives as long as the graph. A Lua function capturing
 * tensors of that graph keeps it alive through the Lua registry (a cycle
 * the collector cannot see) until the state closes, as TensorFlow 1's
 * gradient registry keeps its functions; traces drop theirs when they
 * finish (mf_graph_drop_custom_gradients). */
MfStatus mf_graph_custom_gradient(int first, int ninputs, MfTensor *const *inputs, MfTensor *y,
                                  MfNodeGrad *fn, MfTensor **out);

/* Drops the user functions of the custom gradients of 'g' (their 'drop'):
 * for a trace that finished, where no gradient is built any more, and whose
 * functions may keep the graph alive through the tensors they capture.
 * A later gradient through one of those nodes fails naming it. */
void mf_graph_drop_custom_gradients(MfGraph *g);

#endif
