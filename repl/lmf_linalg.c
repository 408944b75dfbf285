/* lmf_linalg.c — Lua bindings (being written). */
#include "lmf.h"

void lmf_open_linalg(lua_State *L, int methods)
{
    (void)L;
    (void)methods;
}
