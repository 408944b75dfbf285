/* variable.h — Variables: the only mutable state of the engine.
 *
 * A Variable is a refcounted object holding its current value (an immutable
 * tensor it owns one reference to), a name, a 'trainable' flag and a unique
 * id. 'assign' swaps in a new value tensor: tensors previously read from the
 * variable keep their old values (reads are snapshots), which is what makes
 * the tape's records stay correct.
 *
 * When a variable is read for use in an op, 'mf_variable_read' tells the
 * registered read hook (eager/ tapes use it to watch trainable variables), so
 * core/ never includes eager/. */
#ifndef MF_VARIABLE_H
#define MF_VARIABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "tensor.h"

typedef struct MfVariable {
    int64_t refcount;
    int64_t id;
    char *name;          /* owned */
    bool trainable;
    MfTensor *value;     /* owned reference; NULL only for graph variables before init */
} MfVariable;

/* A new variable holding 'initial' (retained, not copied: tensors are immutable). */
MfVariable *mf_variable_new(MfTensor *initial, const char *name, bool trainable);

void mf_variable_retain(MfVariable *v);
void mf_variable_release(MfVariable *v);

/* The current value, borrowed, after telling the read hook. */
MfTensor *mf_variable_read(MfVariable *v);

/* Replaces the value with 'x' (same dtype and shape, else an error naming
 * the variable and both shapes/dtypes). */
MfStatus mf_variable_assign(MfVariable *v, MfTensor *x);

/* What v:assign(x) does: as mf_variable_assign, but the variable gets a
 * new header over x's values, so a gradient tape that recorded 'x' does
 * not see the variable's later reads as 'x' (no gradient flows through an
 * assign, as in TensorFlow). Errors: those of mf_variable_assign, MF_ENOMEM. */
MfStatus mf_variable_assign_value(MfVariable *v, MfTensor *x);

/* value + x, value - x (through the AddV2 / Sub ops, then assign). */
MfStatus mf_variable_assign_add(MfVariable *v, MfTensor *x);
MfStatus mf_variable_assign_sub(MfVariable *v, MfTensor *x);

/* The read hook: called with every variable read by 'mf_variable_read'. */
void mf_variable_set_read_hook(void (*hook)(MfVariable *v));

/* The value hook: when set and it returns a tensor for an eager variable,
 * 'mf_variable_read' returns that instead of the value (graph/ uses it:
 * inside a graph being built, an eager variable reads as a node that reads
 * it when the graph runs, so it is captured by reference). */
void mf_variable_set_value_hook(MfTensor *(*hook)(MfVariable *v));

/* Variables alive now (tests assert 0 at teardown). */
int64_t mf_variable_live_count(void);

#endif
