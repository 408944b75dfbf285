/* staged_writes.h — a session run's all-or-nothing variable writes
 * (graph/exec.c's executor uses it; nobody outside graph/ does).
 *
 * A session run that writes variables (a train op: one Apply node per
 * variable, Adam's beta-power assigns, the global_step increment) writes
 * all of them or none, as eager apply_gradients does. Each write is staged
 * when its node's turn comes in the in-degree order: everything that can
 * fail is done then (the copy-on-write copy, a contiguous gradient, the
 * op's checks, an assign's new value), and only the write itself (the
 * in-place kernel, the swap in the store), which cannot fail, waits here
 * until every needed node has run. An error before that drops the list
 * ('mf_staged_free'), so a failed or interrupted run leaves every variable
 * as it was.
 * Why staging: undoing in-place updates would need a copy of every buffer
 * they write, and running the updates last is not enough, since nodes after
 * them (Adam's beta powers, the step increment) allocate too.
 * A staged write is invisible until committed, so a node that would see it
 * ('mf_staged_seen_by') makes the executor commit the list first, in run
 * order (the values are those of the plain in-degree order): one that reads
 * a variable with a staged write, writes it again, or consumes a staged
 * in-place node's output. A train op does none of these (each variable is
 * written once and read before), so it stays all-or-nothing. The price:
 * the staged inputs (the gradients) live until the end of the run, as they
 * do in eager apply_gradients. Runs without a session (no store) and writes
 * of captured eager variables (mf.trace) are not staged.
 *
 * Ownership: the list owns each staged value and each staged op's
 * non-variable inputs; the variables' buffers stay the store's. */
#ifndef MF_STAGED_WRITES_H
#define MF_STAGED_WRITES_H

#include "graph.h"

typedef struct MfStagedWrite MfStagedWrite;

/* The staged writes of one run; zero-initialise, then set 'vars', 'nn'
 * (the graph's node count) and 'cap' (at most one write per needed node). */
typedef struct MfStagedWrites {
    MfVarStore *vars;        /* the session's store (NULL: nothing is staged) */
    int nn, cap;
    char *pend;              /* per node: a staged write to it / a staged output */
    MfStagedWrite *list;     /* in run order; made by the first write */
    int n;
} MfStagedWrites;

/* True when in-place op 'n' can be staged: it updates only VARIABLEs of the
 * store ('fed': the run's fed values per output slot, borrowed). */
bool mf_staged_can_stage_op(const MfStagedWrites *w, const MfNode *n, MfTensor *const *fed);

/* Stages in-place op 'n' whose variable inputs 'in[0 .. inplace)' are
 * already the store's buffers (taken, copied when shared): checks that each
 * buffer is given once and every check its forward makes (shapes, dtypes),
 * and holds its other inputs contiguous (the kernel would copy a strided
 * gradient). Its outputs (the variables) come at commit. MF_OK, or an
 * error (MF_ENOMEM, MF_EARG, MF_ESHAPE) with nothing staged. */
MfStatus mf_staged_add_op(MfStagedWrites *w, const MfNode *n, MfTensor *const *in);

/* Stages ASSIGN 'n' of 'value' (retained) into its variable, when the store
 * already has the variable's slot (the swap at commit then cannot fail).
 * Returns MF_OK and sets '*staged'; '*staged' false: the caller writes at
 * once (a first initialisation may grow the store). MF_ENOMEM otherwise. */
MfStatus mf_staged_add_assign(MfStagedWrites *w, const MfNode *n, MfTensor *value,
                              bool *staged);

/* True when node 'n' would see a staged write: it consumes a staged node's
 * output, reads a variable with a staged write, or writes it again. */
bool mf_staged_seen_by(const MfStagedWrites *w, const MfNode *n, MfTensor *const *fed);

/* Writes every staged value in run order; then nothing is pending. A
 * committed op's output k goes to 'vals[slot]' when 'uses[slot] > 0' (the
 * run's value and consumer tables, indexed node * MF_MAX_OUTPUTS + k), and
 * is released otherwise. Cannot fail but for an internal error
 * (MF_EINTERNAL, a kernel failing after its checks passed). */
MfStatus mf_staged_commit(MfStagedWrites *w, MfTensor **vals, const int *uses);

/* Drops what is still staged (a failed run: never written) and frees the list. */
void mf_staged_free(MfStagedWrites *w);

#endif
