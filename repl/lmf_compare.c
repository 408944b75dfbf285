/* lmf_compare.c — Lua bindings (being written). */
#include "lmf.h"

void lmf_open_compare(lua_State *L, int methods)
{
    (void)L;
    (void)methods;
}
