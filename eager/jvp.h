/* jvp.h — forward-mode rules: the Jacobian-vector product of each
 * differentiable op, for forward mode (eager/forward.c) as 'backward' is
 * for reverse mode.
 *
 * A rule computes the tangents of an op's outputs from the tangents of its
 * inputs by calling ops through 'mf_op_call', so one rule serves eager mode
 * and graph mode (mf.trace), and the ops it runs are themselves recorded by
 * tapes and by outer accumulators: rules compose and nest (forward over
 * reverse, forward over forward). Rules come in families, chosen per op in
 * eager/jvp.c's table:
 *   UNARY      the Jacobian is diagonal (elementwise one-input ops): the
 *              tangent is the op's own backward applied to the tangent;
 *   LINEAR     the op is linear in the inputs of 'mask' (the others, indices
 *              and shapes, are passed as they are): the op applied to the
 *              tangents (zeros where an input has none);
 *   BILINEAR   linear in each of the two inputs of 'mask': op(ta, b) + op(a, tb);
 *   OWN        a rule of its own ('own');
 *   TRANSPOSE  the op's backward transposed: backward(u) is linear in u, so
 *              the tangent is d<backward(u), t>/du, one reverse pass over
 *              the backward's ops (the ops whose Jacobian has no cheaper
 *              form here: pooling, normalisations, linear algebra...); on
 *              a graph being built, the symbolic gradient over the nodes
 *              the rule built (the graph hooks below).
 * An op with a 'backward' and no entry has no forward rule: the op-table
 * walk of tests/unit/test_jvp.c fails naming it and this file's table. */
#ifndef MF_EAGER_JVP_H
#define MF_EAGER_JVP_H

#include "core/op.h"

typedef enum MfJvpKind {
    MF_JVP_NONE,
    MF_JVP_UNARY,
    MF_JVP_LINEAR,
    MF_JVP_BILINEAR,
    MF_JVP_OWN,
    MF_JVP_TRANSPOSE,
} MfJvpKind;

/* One forward call and its input tangents (NULL: zero, or not a float). */
typedef struct MfJvpCall {
    const MfOpCall *call;
    MfTensor *const *outputs;
    MfTensor *const *tangents;
} MfJvpCall;

typedef struct MfJvpRule {
    MfJvpKind kind;
    unsigned mask;   /* LINEAR, BILINEAR: the inputs (bit i: input i; ~0u: all) */
    MfStatus (*own)(const MfJvpCall *j, MfTensor **dout);
} MfJvpRule;

/* The rule of 'op' (kind MF_JVP_NONE when it has none). */
MfJvpRule mf_jvp_rule(MfOpId op);

/* The family's name, for messages and mf.ops(): "unary", "linear", ... */
const char *mf_jvp_kind_name(MfJvpKind kind);

/* Graph mode's TRANSPOSE (registered by mode/forward_graph.c, which sees
 * graphs): 'mark' the node count of the graph an op on 'like' goes into,
 * before the rule builds anything (-1: none); 'gradients' the symbolic
 * gradients of 's' for the 'n' tensors 'u' over the nodes built since. */
typedef struct MfJvpGraphHooks {
    int64_t (*mark)(const MfTensor *like);
    MfStatus (*gradients)(int64_t mark, MfTensor *s, int n, MfTensor *const *u,
                          MfTensor **grads);
} MfJvpGraphHooks;
void mf_jvp_set_graph_hooks(const MfJvpGraphHooks *h);

/* The tangents of the outputs into 'dout[0..MF_MAX_OUTPUTS)' (owned; NULL:
 * zero or not a float output). MF_EARG naming the op when it has no rule. */
MfStatus mf_jvp_call(const MfJvpCall *j, MfTensor **dout);

#endif
