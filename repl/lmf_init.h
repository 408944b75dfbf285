/* lmf_init.h — mf.initializers (repl/lmf_init.c), opened by lmf_open_variable. */
#ifndef LMF_INIT_H
#define LMF_INIT_H

#include <lua.h>

/* Registers mf.initializers into the table on top of the stack ('mf'). */
void lmf_open_init(lua_State *L);

#endif
