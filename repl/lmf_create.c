/* lmf_create.c — Lua bindings (being written). */
#include "lmf.h"

void lmf_open_create(lua_State *L, int methods)
{
    (void)L;
    (void)methods;
}
