/* cell.h — the prompt's rules for a whole chunk of several lines at once (a
 * notebook cell, moonflow --kernel): what the Jupyter kernel calls to run,
 * check, complete and explain a cell with the same meaning as typed input.
 *
 * Every function works on the program's Lua state and keeps no reference
 * to a Lua value after it returns. */
#ifndef LMF_CELL_H
#define LMF_CELL_H

#include <stddef.h>

#include <lua.h>

/* Compiles the cell 'code' (len bytes, named 'chunkname'). As at the prompt
 * an expression shows its value: the cell is tried as "return <cell>", then
 * with its last line as "return <last line>" (so "x = 2\nx * 3" gives 6),
 * then as it is. Pushes the function (its results are the values to show)
 * and returns LUA_OK, or pushes the message and returns the load status. */
int lmf_cell_load(lua_State *L, const char *code, size_t len, const char *chunkname);

/* The prompt's multi-line rule for a cell: "complete" (it compiles),
 * "incomplete" (it ends inside a block or an expression, where the prompt
 * would ask for another line) or "invalid" (a syntax error). */
const char *lmf_cell_status(lua_State *L, const char *code, size_t len);

/* The prompt's completion of 'word' (a name as typed before the cursor:
 * "mf.ra", "x:resh"): pushes an array of the full words offered. */
void lmf_cell_complete(lua_State *L, const char *word);

/* help(name) as the prompt prints it: pushes the text. Returns 1 when help
 * has an entry for 'name', 0 when it only suggests other names. */
int lmf_cell_help(lua_State *L, const char *name);

#endif
