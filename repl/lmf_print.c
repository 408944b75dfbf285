/* lmf_print.c — printing tensors. */
#include <lauxlib.h>
#include <stdio.h>

#include "lmf_print.h"

LmfPrintOptions lmf_print_options = {4, 1000, 3, 75};

void lmf_push_tensor_string(lua_State *L, const MfTensor *t)
{
    luaL_Buffer b;
    char buf[200];
    luaL_buffinit(L, &b);
    int64_t n = mf_tensor_numel(t);
    if (!t->node) {
        for (int64_t i = 0; i < n; i++) {
            snprintf(buf, sizeof buf, "%s%g", i ? " " : "", mf_tensor_get(t, i));
            luaL_addstring(&b, buf);
        }
    }
    luaL_addstring(&b, "\nshape=");
    luaL_addstring(&b, mf_shape_str(t->rank, t->shape, buf, sizeof buf));
    luaL_addstring(&b, ", dtype=");
    luaL_addstring(&b, mf_dtype_name(t->dtype));
    luaL_pushresult(&b);
}

void lmf_open_print(lua_State *L)
{
    (void)L;
}
