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

/* Compiles the cell 'code' (len bytes, named 'chunkname') with the prompt's
 * rules. "name?" and "name??" ask for help on a value (?? adds a Lua
 * function's source). A top-level 'local' becomes a global, so it lasts for
 * the session (IPython's rule; a <close> variable stays local). An
 * expression shows its value: the cell is tried as "return <cell>", then
 * with its last statement (after a ';' or a line start) as "return <it>"
 * (so "a = f(); a" and "x = 2\nx * 3" show a value), then as it is. Pushes
 * the function (its results are the values to show) and returns LUA_OK,
 * or pushes the message and returns the load status. */
int lmf_cell_load(lua_State *L, const char *code, size_t len, const char *chunkname);

/* Keeps the text of a cell that runs under 'chunkname', for tracebacks and
 * help(f) (lmf_cell_source_line): for the session when it has the keyword
 * 'function', else until the next cell is kept. */
void lmf_cell_keep(lua_State *L, const char *chunkname, const char *code, size_t len);

/* Pushes line 'n' of the function source 'source' (a lua_Debug source:
 * "=[3]" for a kept cell, "@lib/model.lua" for lib/, "@file" read from
 * disk), without its end of line. Returns 0 (nothing pushed) when unknown. */
int lmf_cell_source_line(lua_State *L, const char *source, int n);

/* Replaces the traceback on top of the stack by one where each frame line
 * with a known source ("\t[3]:2: in ...") is followed by that line. */
void lmf_cell_annotate(lua_State *L);

/* For a Lua function at 'idx': pushes "a Lua function defined at
 * <where>:<line>", its leading comment and its first line (all its lines
 * when 'with_source'), and returns 1; returns 0 for a C function. */
int lmf_cell_describe(lua_State *L, int idx, int with_source);

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
