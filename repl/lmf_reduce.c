/* lmf_reduce.c — Lua bindings (being written). */
#include "lmf.h"

void lmf_open_reduce(lua_State *L, int methods)
{
    (void)L;
    (void)methods;
}
