/* lmf_shape.c — Lua bindings of split and unstack, which return a Lua
 * array of tensors (the shape ops proper, concat to one_hot, are bound
 * from their descriptors by lmf_op.c).
 *
 * The bindings turn Lua's 1-based axes into the engine's 0-based ones.
 * Both are also tensor methods. Temporaries live in stack slots, so a
 * raised error leaks nothing. */
#include "core/ops/shape_ops.h"
#include "lmf.h"

/* ---- argument helpers ------------------------------------------------------ */

/* The axis at argument 'idx' (1-based; default 1; or {axis =}) for a tensor
 * 't', 0-based: ConcatV2's one attribute, read by the binder. */
static int64_t arg_axis(lua_State *L, int idx, const char *fname, const char *sig,
                        const MfTensor *t)
{
    MfAttrs a;
    lmf_op_attrs(L, MF_OP_CONCAT, fname, sig, idx, t, &a);
    return a.axis;
}

/* Pushes 'outs[0..n)' as a Lua array, handing over their references. */
static int push_array(lua_State *L, MfTensor **outs, int64_t n)
{
    lua_createtable(L, (int)n, 0);
    for (int64_t i = 0; i < n; i++) {
        lmf_push_tensor(L, outs[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* ---- concat, stack, split, unstack ------------------------------------------ */

/* mf.split(t, n_or_sizes, axis) -> array of tensors */
static int l_split(lua_State *L)
{
    MfTensor *t = lmf_arg_tensor(L, 1, -1, "split");
    int64_t axis = arg_axis(L, 3, "split", "split(x, n_or_sizes [, axis])", t), n, *sizes = NULL;
    if (lua_istable(L, 2)) {
        n = (int64_t)lua_rawlen(L, 2);
        sizes = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *sizes, 0);
        for (int64_t i = 0; i < n; i++, lua_pop(L, 2)) {
            lua_rawgeti(L, 2, i + 1);
            const char *what = lua_pushfstring(L, "sizes entry %I", (lua_Integer)i + 1);
            sizes[i] = lmf_check_integer(L, -2, "split", what);
        }
    } else {
        if (lua_type(L, 2) != LUA_TNUMBER)
            lmf_arg_error(L, 2, "split", "number of parts or array of sizes");
        n = lmf_check_integer(L, 2, "split", "the number of parts");
    }
    size_t room = n > 0 && n <= INT32_MAX ? (size_t)n : 1; /* else mf_split refuses n */
    MfTensor **outs = lua_newuserdatauv(L, room * sizeof *outs, 0);
    lmf_check_status(L, mf_split(t, axis, n, sizes, outs));
    return push_array(L, outs, n);
}

/* mf.unstack(t, axis) -> array of tensors of rank t.ndim - 1 */
static int l_unstack(lua_State *L)
{
    MfTensor *t = lmf_arg_tensor(L, 1, -1, "unstack");
    if (t->rank == 0)
        return luaL_error(L, "unstack: a scalar (rank 0) cannot be unstacked");
    int64_t axis = arg_axis(L, 2, "unstack", "unstack(x [, axis])", t);
    int64_t n = t->shape[axis];
    MfTensor **outs = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *outs, 0);
    lmf_check_status(L, mf_unstack(t, axis, outs));
    return push_array(L, outs, n);
}

void lmf_open_shape(lua_State *L, int methods)
{
    static const luaL_Reg both[] = {{"split", l_split}, {"unstack", l_unstack}, {NULL, NULL}};
    methods = lua_absindex(L, methods);
    luaL_setfuncs(L, both, 0);
    lua_pushvalue(L, methods);
    luaL_setfuncs(L, both, 0);
    lua_pop(L, 1);
}
