/* prompt_complete.h — tab completion for the prompt. */
#ifndef LMF_PROMPT_COMPLETE_H
#define LMF_PROMPT_COMPLETE_H

#include <lua.h>

/* Installs readline's completion for the state 'L' (borrowed: it must stay
 * open while the prompt runs): Lua keywords and globals, fields after
 * 'a.b.' (mf., mf.random., ...), methods after 'x:' (from the value's
 * metatable '__index', a table or a function whose upvalues hold the
 * methods) and tensor properties after 'x.'. */
void lmf_complete_init(lua_State *L);

/* lua_CFunction: collect(text) -> the array of candidates for 'text', the
 * word before the cursor (what Tab offers, without readline). */
int lmf_complete_collect(lua_State *L);

#endif
