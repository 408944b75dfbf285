/* lmf_regrad.h — mf.ops, mf.RegisterGradient, mf.gradient_override_map
 * (see lmf_regrad.c). */
#ifndef LMF_REGRAD_H
#define LMF_REGRAD_H

#include <lua.h>

/* Adds the three functions to the table on top (mf). */
void lmf_open_regrad(lua_State *L);

#endif
