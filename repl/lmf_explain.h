/* lmf_explain.h — gradient questions answered: mf.explain_gradients (graph
 * mode), the count of nil gradients handed to Lua, and what the prompt does
 * with a chunk's values ('_' and the one-line nil-gradient hint). */
#ifndef LMF_EXPLAIN_H
#define LMF_EXPLAIN_H

#include <lua.h>

/* Called by tape:gradient (graph == 0) and mf.gradients (graph == 1) when
 * a result they return is nil. */
void lmf_note_nil_gradient(int graph);

/* How many nil gradients were returned so far. */
unsigned long lmf_nil_gradient_count(void);

/* With the chunk's values on the stack (at least one): sets the global '_'
 * to the first, and arms the hint when a value is nil and a nil gradient
 * was returned since 'nils' was read. */
void lmf_prompt_remember(lua_State *L, unsigned long nils);

/* Prints the armed hint ("-- nil: tape:explain(y, x) says why"), once. */
void lmf_prompt_hint(lua_State *L);

/* Adds mf.explain_gradients to the table on top (mf). */
void lmf_open_explain(lua_State *L);

#endif
