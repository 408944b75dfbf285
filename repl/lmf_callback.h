/* lmf_callback.h — calling user Lua functions from bindings so that an
 * error keeps the user's frames in its traceback (see lmf_callback.c). */
#ifndef LMF_CALLBACK_H
#define LMF_CALLBACK_H

#include <lauxlib.h>
#include <lua.h>

/* lua_pcall(L, nargs, nres, handler) with a handler that records the stack
 * of the error for 'lmf_push_traceback'. Same stack effect and result as
 * lua_pcall; the error object is left unchanged. */
int lmf_pcall(lua_State *L, int nargs, int nres);

/* Pushes "msg\n" (when 'msg' is not NULL) followed by the traceback a user
 * sees from 'level' (as luaL_traceback's): the recorded one when the error
 * 'msg' crossed a binding on this stack, else the current stack; frames of
 * moonflow's own Lua chunks left out. */
void lmf_push_traceback(lua_State *L, const char *msg, int level);

/* Replaces debug.traceback with one that does the same as
 * 'lmf_push_traceback' (a thread argument goes to Lua's own). */
void lmf_open_callback(lua_State *L);

#endif
