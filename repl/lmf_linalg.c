/* lmf_linalg.c — the Lua binding of mf.tensordot(a, b, axes) (axes: N, or
 * a pair {{axes of a}, {axes of b}}), also a tensor method. It is not one
 * op; matmul, transpose, reshape, expand_dims, squeeze and trace are bound
 * from their descriptors by lmf_op.c.
 *
 * Axes are 1-based (negative from the end) here and 0-based in the engine.
 * No C temporary outlives a call that can raise: arguments converted from
 * Lua data sit on the stack, and results are pushed as soon as they exist. */
#include <string.h>

#include "core/ops/linalg.h"
#include "core/ops/view.h"
#include "lmf.h"

/* ---- arguments ------------------------------------------------------------ */

/* Arguments 1 and 2 as tensors; a Lua number takes the other one's dtype. */
static void check_two(lua_State *L, const char *fname, MfTensor **in)
{
    int like = -1;
    for (int i = 0; i < 2; i++) {
        if (lua_isnoneornil(L, i + 1))
            luaL_error(L, "bad argument #%d to '%s' (mf.Tensor expected, got %s)", i + 1, fname,
                       luaL_typename(L, i + 1));
        in[i] = lmf_test_tensor(L, i + 1);
        if (in[i] && like < 0)
            like = (int)in[i]->dtype;
    }
    for (int i = 0; i < 2; i++)
        in[i] = lmf_arg_tensor(L, i + 1, like, fname);
}

/* ---- tensordot ------------------------------------------------------------------ */

/* One side of tensordot's axes pair at 'idx': an axis or an array of axes
 * (1-based) of 't', into 'axes' 0-based; returns the count. */
static int dot_side(lua_State *L, int idx, const MfTensor *t, int64_t *axes)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER) {
        axes[0] = lmf_check_axis(L, idx, "tensordot", t->rank, 0);
        return 1;
    }
    if (!lua_istable(L, idx))
        luaL_error(L, "tensordot: each side of axes must be an axis or an array of axes, got %s",
                   luaL_typename(L, idx));
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n > MF_MAX_RANK)
        luaL_error(L, "tensordot: %d axes given, but the tensor has rank %d", (int)n, t->rank);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        axes[i] = lmf_check_axis(L, -1, "tensordot", t->rank, 0);
        lua_pop(L, 1);
    }
    return (int)n;
}

/* mf.tensordot(a, b, axes) */
static int l_tensordot(lua_State *L)
{
    lmf_check_nargs(L, "tensordot", 3);
    MfTensor *in[2], *out = NULL;
    check_two(L, "tensordot", in);
    if (lua_type(L, 3) == LUA_TNUMBER) {
        lua_Integer n = lmf_check_integer(L, 3, "tensordot", "axes (a number N)");
        return lmf_push_result(L, mf_tensordot_n(in[0], in[1], n, &out), &out);
    }
    if (!lua_istable(L, 3) || lua_rawlen(L, 3) != 2)
        return luaL_error(L, "tensordot: axes must be a number N (the last N axes of a with the "
                          "first N of b) or a pair {{axes of a}, {axes of b}}, got %s",
                          lua_istable(L, 3) ? "a table that is not a pair" : luaL_typename(L, 3));
    int64_t axes_a[MF_MAX_RANK], axes_b[MF_MAX_RANK];
    lua_rawgeti(L, 3, 1);
    lua_rawgeti(L, 3, 2);
    int na = dot_side(L, -2, in[0], axes_a), nb = dot_side(L, -1, in[1], axes_b);
    if (na != nb)
        return luaL_error(L, "tensordot: axes pair lists %d axes of a but %d of b", na, nb);
    return lmf_push_result(L, mf_tensordot(in[0], in[1], na, axes_a, axes_b, &out), &out);
}

static const luaL_Reg funcs[] = {
    {"tensordot", l_tensordot},
    {NULL, NULL},
};

void lmf_open_linalg(lua_State *L, int methods)
{
    methods = lua_absindex(L, methods);
    for (const luaL_Reg *r = funcs; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_pushvalue(L, -1);
        lua_setfield(L, methods, r->name);
        lua_setfield(L, -2, r->name);
    }
}
