/* numerics.h — mf.debugging.enable_check_numerics (TensorFlow's name): NaN
 * hunting that names the op.
 *
 * While it is on, the dispatcher checks the float outputs of every eager op
 * it runs (and so of every graph node, which the executor runs through the
 * dispatcher) and fails with MF_EARG at the first output holding a NaN or an
 * Inf, naming the op, each input's dtype, shape and range, the user's Lua
 * line, and what was going on: the gradient of which recorded op a tape was
 * computing, or which graph node ran and where it was made. Off by default:
 * the dispatcher then pays one branch per op. */
#ifndef MF_NUMERICS_H
#define MF_NUMERICS_H

#include <stdbool.h>
#include <stddef.h>

#include "op.h"

/* Read by the dispatcher on every op; set by mf_numerics_enable. */
extern bool mf_numerics_on;

void mf_numerics_enable(bool on);

/* Where the user's code runs now, for the messages ("script.lua:12"; "" when
 * unknown): registered by the front end (repl/), which knows the Lua stack. */
typedef void (*MfWhereFn)(char *buf, size_t cap);
void mf_numerics_set_where(MfWhereFn fn);

/* The place to show for an op made or run now: the front end's line, then
 * "in the gradient of Log" while a backward walk runs a record's gradient.
 * A graph stores it with each node made while the check is on. */
void mf_numerics_where(char *buf, size_t cap);

/* The backward walk (autodiff/walk.c) runs the gradient of a record: 'what'
 * ("Log", "custom_gradient") names it until the matching leave; 'index' is
 * the record's number (0-based; -1: none). Nests; returns the previous state
 * for 'leave'. */
typedef struct MfNumericsScope {
    const char *what;
    long long index;
} MfNumericsScope;
MfNumericsScope mf_numerics_enter_backward(const char *what, long long index);
void mf_numerics_leave_backward(MfNumericsScope prev);

/* The graph executor runs node 'name', made at 'made' (NULL: not known),
 * until called again with NULL. */
void mf_numerics_set_node(const char *name, const char *made);

/* The check the dispatcher makes after op 'c' wrote 'outs': MF_OK, or
 * MF_EARG "check_numerics: Log produced NaN in output 1 ...". */
MfStatus mf_numerics_check(const MfOpCall *c, MfTensor *const *outs);

#endif
