/* lmf_linalg.c — Lua bindings for linear algebra and the view ops:
 *   mf.matmul(a, b [, {transpose_a =, transpose_b =}])   rank 2, or batched rank 3
 *   mf.transpose(t [, perm | {perm =}])                  perm 1-based; default reverses
 *   mf.reshape(t, shape)        shape: array, number or 1-D int tensor; one -1 is inferred
 *   mf.expand_dims(t, axis)     axis 1..rank+1 (or negative)
 *   mf.squeeze(t [, axis | axes | {axis =}])             none: every size-1 axis
 *   mf.trace(t)                 sum of the diagonal of a matrix
 *   mf.tensordot(a, b, axes)    axes: N, or a pair {{axes of a}, {axes of b}}
 * Each is also a tensor method: a:matmul(b), t:reshape{2, 3}, t:squeeze().
 *
 * Axes are 1-based (negative from the end) here and 0-based in the engine.
 * No C temporary outlives a call that can raise: arguments converted from
 * Lua data sit on the stack, and results are pushed as soon as they exist. */
#include <string.h>

#include "core/ops/fill.h"
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
        in[i] = lmf_to_tensor(L, i + 1, like);
}

/* An axis or an array of axes at 'idx' into 'axes' (0-based); returns the count. */
static int check_axes(lua_State *L, int idx, const char *fname, int rank, int64_t *axes)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER) {
        axes[0] = lmf_check_axis(L, idx, fname, rank, 0);
        return 1;
    }
    if (!lua_istable(L, idx))
        luaL_error(L, "%s: expected an axis or an array of axes, got %s", fname,
                   luaL_typename(L, idx));
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n > MF_MAX_RANK)
        luaL_error(L, "%s: %d axes given, but the tensor has rank %d", fname, (int)n, rank);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        axes[i] = lmf_check_axis(L, -1, fname, rank, 0);
        lua_pop(L, 1);
    }
    return (int)n;
}

/* Pushes '*out' (after the call that fills it: 'st' is evaluated first) or raises. */
static int push_result(lua_State *L, MfStatus st, MfTensor *const *out)
{
    if (st != MF_OK)
        return lmf_raise(L);
    lmf_push_tensor(L, *out);
    return 1;
}

/* ---- functions ---------------------------------------------------------------- */

/* A shape given as a 1-D (or scalar) integer tensor, e.g. from mf.shape. */
static int shape_from_tensor(lua_State *L, const MfTensor *s, int64_t *shape)
{
    if (s->node)
        luaL_error(L, "reshape: a shape from a symbolic (graph) tensor is not supported; "
                   "pass a Lua array");
    if (!mf_dtype_is_int(s->dtype) || s->rank > 1)
        luaL_error(L, "reshape: a shape tensor must be a 1-D int32 or int64 tensor, got %s of "
                   "rank %d", mf_dtype_name(s->dtype), s->rank);
    int64_t n = mf_tensor_numel(s);
    if (n > MF_MAX_RANK)
        luaL_error(L, "reshape: shape has rank %d, at most %d is supported", (int)n,
                   MF_MAX_RANK);
    for (int64_t i = 0; i < n; i++)
        shape[i] = mf_tensor_get_int(s, i);
    return (int)n;
}

/* mf.reshape(t, shape) */
static int l_reshape(lua_State *L)
{
    lmf_check_nargs(L, "reshape", 2);
    MfTensor *t = lmf_to_tensor(L, 1, -1);
    int64_t shape[MF_MAX_RANK];
    int rank;
    MfTensor *s = lmf_test_tensor(L, 2), *out = NULL;
    if (s && s->node) {   /* a graph shape (mf.shape of a -1 placeholder): read when it runs */
        MfStatus st = mf_reshape_by(t, s, &out);
        if (st != MF_OK && strncmp(mf_err_msg(), "reshape", 7) != 0)
            mf_err_prefix("reshape");   /* its inner ops name themselves */
        return push_result(L, st, &out);
    }
    if (s)
        rank = shape_from_tensor(L, s, shape);
    else if (lua_isnoneornil(L, 2))
        return luaL_error(L, "reshape: expected a shape as argument 2 (an array such as {2, 3}; "
                          "one -1 is inferred)");
    else
        rank = lmf_check_shape(L, 2, "reshape", shape, 1);
    return push_result(L, mf_reshape(t, rank, shape, &out), &out);
}

/* One side of tensordot's axes pair: a number or an array, 1-based. */
static int dot_side(lua_State *L, int idx, const MfTensor *t, int64_t *axes)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        axes[0] = lmf_check_axis(L, idx, "tensordot", t->rank, 0);
        return 1;
    }
    if (!lua_istable(L, idx))
        luaL_error(L, "tensordot: each side of axes must be an axis or an array of axes, got %s",
                   luaL_typename(L, idx));
    return check_axes(L, idx, "tensordot", t->rank, axes);
}

/* mf.tensordot(a, b, axes) */
static int l_tensordot(lua_State *L)
{
    lmf_check_nargs(L, "tensordot", 3);
    MfTensor *in[2], *out = NULL;
    check_two(L, "tensordot", in);
    if (lua_type(L, 3) == LUA_TNUMBER) {
        int isint = 0;
        lua_Integer n = lua_tointegerx(L, 3, &isint);
        int most = in[0]->rank < in[1]->rank ? in[0]->rank : in[1]->rank;
        if (!isint || n < 0 || n > most)
            return luaL_error(L, "tensordot: axes = %s, but a has rank %d and b has rank %d "
                              "(it must be an integer 0..%d)", lua_tostring(L, 3), in[0]->rank,
                              in[1]->rank, most);
        return push_result(L, mf_tensordot_n(in[0], in[1], (int)n, &out), &out);
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
    return push_result(L, mf_tensordot(in[0], in[1], na, axes_a, axes_b, &out), &out);
}

static const luaL_Reg funcs[] = {
    {"reshape", l_reshape},
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
