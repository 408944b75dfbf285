/* batching.h — batching rules: each op applied to a batch of examples at
 * once, for mf.vmap (mode/vmap.c), as 'backward' is for reverse mode and
 * jvp.h's rules for forward mode.
 *
 * An op call whose inputs are batched (the examples stacked along a new
 * first axis of size B, the 'physical' tensor) or not (shared by every
 * example) is rewritten into one call of ops on the physical tensors, never
 * a loop over examples. Rules come in families, chosen per op in
 * eager/batching.c's table:
 *   ELEMENTWISE every op with MF_OP_ELEMENTWISE (and a few listed): the
 *               batched inputs get ones after the batch axis up to the
 *               largest rank, so broadcasting pairs each example with
 *               itself and an unbatched input with every example;
 *   AXES        the inputs of 'mask' are batched (an unbatched one
 *               broadcast to B first), the others must not be; the op's
 *               AXIS and AXES attributes (its schema says which) move one
 *               axis up, "every axis" becomes every axis after the batch
 *               one: reductions, softmaxes, concat, sort...;
 *   ROWS        the op treats its first axis as independent rows: the
 *               inputs of 'mask' have the batch axis merged into it and
 *               the outputs split again (the cross-entropies, pools,
 *               convolutions over a batched input, layer_norm);
 *   OWN         a rule of its own (matmul, reshape, transpose, slice, the
 *               *_like ops of gradients...).
 * An op with no entry (and no MF_OP_ELEMENTWISE) has none: mf_batch_call
 * fails naming it and this table, and the walk of tests/unit/test_batching.c
 * lists such ops and checks every rule against a loop over examples. */
#ifndef MF_EAGER_BATCHING_H
#define MF_EAGER_BATCHING_H

#include <stdbool.h>

#include "core/op.h"

typedef enum MfBatchKind {
    MF_BATCH_NONE,
    MF_BATCH_ELEMENTWISE,
    MF_BATCH_AXES,
    MF_BATCH_ROWS,
    MF_BATCH_OWN,
} MfBatchKind;

/* One op call over a batch: 'call->inputs' are physical (batched[i]: the
 * batch of 'size' examples along axis 0), 'call->attrs' those of one
 * example's call. */
typedef struct MfBatchCall {
    const MfOpCall *call;
    const bool *batched;
    int64_t size;
} MfBatchCall;

typedef struct MfBatchRule {
    MfBatchKind kind;
    unsigned mask;   /* AXES, ROWS: the inputs (bit i: input i; ~0u: all) */
    MfStatus (*own)(const MfBatchCall *b, MfTensor **outs, bool *out_batched);
} MfBatchRule;

/* The rule of 'op' (kind MF_BATCH_NONE when it has none). */
MfBatchRule mf_batch_rule(MfOpId op);

/* The family's name, for messages and the walk: "elementwise", "axes", ... */
const char *mf_batch_kind_name(MfBatchKind kind);

/* The outputs of the batched call into 'outs[0..MF_MAX_OUTPUTS)' (owned)
 * and whether each is batched. MF_EARG "vmap: ..." naming the op when it
 * has no rule or its rule does not cover these inputs. */
MfStatus mf_batch_call(const MfBatchCall *b, MfTensor **outs, bool *out_batched);

#endif
