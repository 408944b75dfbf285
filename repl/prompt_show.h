/* prompt_show.h — how the prompt prints the values of an expression. */
#ifndef LMF_PROMPT_SHOW_H
#define LMF_PROMPT_SHOW_H

#include <lua.h>

/* A lua_CFunction: prints its arguments on one line, separated by tabs.
 * Strings print as they are and tensors as print(t) shows them; plain
 * tables print their contents ({2, 3}, {precision = 4, ...}), shortened
 * when long or deep. */
int lmf_show_values(lua_State *L);

/* A lua_CFunction: returns the line lmf_show_values prints, without its
 * newline (a notebook's text/plain of a cell's values). */
int lmf_show_string(lua_State *L);

/* The global 'print' of moonflow: Lua's print (tostring of each argument,
 * tabs between, a newline), except that among several values a tensor or
 * Variable prints on one line ("mf.Tensor([1. 2.], shape=(2,), ...)") and a
 * plain table shows its contents as the prompt does, not "table: 0x...". */
int lmf_show_print(lua_State *L);

#endif
