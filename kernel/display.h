/* display.h — rich output in a notebook: the MIME bundles of a cell's
 * values and display(), pictures for mf.plot and g:render() (the Lua side
 * is kernel/display.lua, embedded). */
#ifndef MF_KERNEL_DISPLAY_H
#define MF_KERNEL_DISPLAY_H

#include <cJSON.h>
#include <lua.h>

/* Runs display.lua on 'L' (the libraries open): the global display, the
 * notebook versions of mf.plot and g:render. Returns 0, or -1 (logged). */
int kdisplay_open(lua_State *L);

/* The MIME bundle ("data") of the values at stack indices 1..n: text/plain
 * as the prompt prints them, text/html for a tensor. Never NULL; a value
 * whose display fails shows the error as its text. */
cJSON *kdisplay_bundle(lua_State *L, int n);

#endif
