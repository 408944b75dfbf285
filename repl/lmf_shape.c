/* lmf_shape.c — Lua bindings (being written). */
#include "lmf.h"

void lmf_open_shape(lua_State *L, int methods)
{
    (void)L;
    (void)methods;
}
