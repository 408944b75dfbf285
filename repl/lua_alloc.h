/* lua_alloc.h — a lua_Alloc with free lists for small blocks (see lua_alloc.c). */
#ifndef LMF_LUA_ALLOC_H
#define LMF_LUA_ALLOC_H

#include <stddef.h>

/* A lua_Alloc: pass to lua_newstate(lmf_lua_alloc, NULL). */
void *lmf_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

#endif
