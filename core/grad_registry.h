/* grad_registry.h — gradients registered by name and the override map
 * (TensorFlow's RegisterGradient and gradient_override_map).
 *
 * A registered gradient replaces an op's own 'backward' for the ops created
 * while an override map names it: eager tapes and graph nodes capture the
 * override when the op is recorded or added, and 'mf_grad_call' consults
 * the captured one. Registered gradients are permanent (never freed, as
 * TensorFlow's registry), so records and nodes borrow them. */
#ifndef MF_GRAD_REGISTRY_H
#define MF_GRAD_REGISTRY_H

#include "op.h"

/* Registers 'f' under 'name' (copied). MF_EARG when the name is taken or
 * empty; MF_ENOMEM. 'f' must stay valid for the process. */
MfStatus mf_grad_register(const char *name, MfGradFn *f);

/* The gradient registered under 'name' (borrowed), or NULL. */
MfGradFn *mf_grad_find(const char *name);

/* Number of registered gradients. */
int mf_grad_count(void);

/* Opens an override scope: until 'mf_grad_override_end(mark)', ops 'op'
 * created get gradient 'f'. Returns the mark, or -1 (MF_ENOMEM set).
 * Scopes nest; the innermost mapping of an op wins. */
int mf_grad_override_begin(MfOpId op, MfGradFn *f);
void mf_grad_override_end(int mark);

/* The gradient an op 'op' created now gets (borrowed), or NULL: its own. */
MfGradFn *mf_grad_override(MfOpId op);

/* gradient_override_map's entry 'type' -> 'name': opens the scope of
 * 'mf_grad_override_begin' for the op type named 'type' (TensorFlow's name,
 * "Square") and the gradient registered as 'name'. Returns the mark, or -1
 * with MF_EARG naming gradient_override_map when there is no such op type
 * or no such gradient, MF_ENOMEM. */
int mf_grad_override_begin_named(const char *type, const char *name);

/* Checks what registered gradient 'f' returned for input 'i' of the op of
 * 'g': 'dx' must have the input's shape wherever both shapes are known
 * (unknown dims, -1, match anything). MF_EARG "gradient 'F' (registered for
 * Square): result 1 has shape (3,), but input 1 has shape (2,)". */
MfStatus mf_grad_check_result(const MfGradFn *f, const MfGradCall *g, int i, const MfTensor *dx);

#endif
