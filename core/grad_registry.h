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

/* Number of registered gradients, and the i-th (0-based) for listings. */
int mf_grad_count(void);
MfGradFn *mf_grad_at(int i);

/* Opens an override scope: until 'mf_grad_override_end(mark)', ops 'op'
 * created get gradient 'f'. Returns the mark, or -1 (MF_ENOMEM set).
 * Scopes nest; the innermost mapping of an op wins. */
int mf_grad_override_begin(MfOpId op, MfGradFn *f);
void mf_grad_override_end(int mark);

/* The gradient an op 'op' created now gets (borrowed), or NULL: its own. */
MfGradFn *mf_grad_override(MfOpId op);

#endif
