/* lmf_compare.c — Lua bindings of the compare family that need more than the
 * generic f(x) / f(x, y) of lmf_ops.c: mf.where(cond, x, y) and
 * mf.cast(t, dtype), also as tensor methods (cond:where(x, y), t:cast(dt)).
 * The comparisons and logic ops are MF_OP_SIMPLE and bound by lmf_ops.c.
 * Converted arguments replace their stack slots, so the collector owns them
 * and a raised error leaks nothing. */
#include "lmf.h"

/* mf.where(cond, x, y): elementwise cond ? x : y. A Lua number for x or y
 * takes the other's dtype (float32 when both are numbers); a Lua boolean or
 * table of booleans is accepted for cond. */
static int l_where(lua_State *L)
{
    lmf_check_nargs(L, "where", 3);
    if (lua_gettop(L) < 3 || lua_isnil(L, 2) || lua_isnil(L, 3))
        return luaL_error(L, "where: expected where(cond, x, y) with x and y given (the "
                          "one-argument form, indices of true elements, is not supported)");
    if (lua_isnil(L, 1))
        return luaL_error(L, "bad argument #1 to 'where' (mf.Tensor expected, got nil)");
    MfTensor *tx = lmf_test_tensor(L, 2), *ty = lmf_test_tensor(L, 3);
    int like = tx ? (int)tx->dtype : ty ? (int)ty->dtype : -1;
    MfTensor *in[3];
    in[0] = lmf_to_tensor(L, 1, -1);
    in[1] = lmf_to_tensor(L, 2, like);
    in[2] = lmf_to_tensor(L, 3, like);
    return lmf_call_op(L, MF_OP_SELECT, 3, in, NULL);
}

void lmf_open_compare(lua_State *L, int methods)
{
    static const luaL_Reg funcs[] = {
        {"where", l_where},
        {NULL, NULL},
    };
    methods = lua_absindex(L, methods);
    for (const luaL_Reg *r = funcs; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_pushvalue(L, -1);
        lua_setfield(L, methods, r->name);
        lua_setfield(L, -2, r->name);
    }
}
