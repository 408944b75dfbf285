/* lmf_shape.c — Lua bindings of the shape ops: concat, stack, split,
 * unstack, slice, gather, reverse, tile, pad, broadcast_to, one_hot, shape
 * (identity, stop_gradient, size and rank take no attributes and are bound
 * generically by lmf_ops.c).
 *
 * The bindings turn Lua's 1-based axes, begins and indices into the ops'
 * 0-based attributes. Index tensors are shifted with a Sub op, so symbolic
 * (graph) indices work too. Functions whose first argument is a tensor are
 * also tensor methods, except 'shape', which would hide the property t.shape.
 * Every function gets mf.tensor as upvalue 1 (to convert index tables to
 * int64). Temporaries live in stack slots, so a raised error leaks nothing. */
#include <string.h>

#include "core/ops/fill.h"
#include "core/ops/shape_ops.h"
#include "lmf.h"

/* ---- argument helpers ------------------------------------------------------ */

/* The integer at 'idx'; raises naming entry 'i' of 'what' otherwise. */
static int64_t check_int(lua_State *L, int idx, const char *fname, const char *what, int i)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "%s: %s entry %d must be an integer, got %s", fname, what, i,
                   lua_type(L, idx) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, idx));
    return v;
}

/* Reads an integer or an array of at most 'max' integers at 'idx' into
 * 'out'; returns the count. */
static int read_ints(lua_State *L, int idx, const char *fname, const char *what, int64_t *out,
                     int max)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = check_int(L, idx, fname, what, 1);
        return 1;
    }
    if (!lua_istable(L, idx))
        return lmf_arg_error(L, idx, fname, "integer or array of integers");
    int n = (int)lua_rawlen(L, idx);
    if (n > max)
        return luaL_error(L, "%s: %s has %d entries, at most %d are supported", fname, what, n,
                          max);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        if (!lua_isinteger(L, -2))
            return luaL_error(L, "%s: %s must be an array of integers, got a table with the "
                              "key '%s'", fname, what, luaL_tolstring(L, -2, NULL));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        out[i] = check_int(L, -1, fname, what, i + 1);
        lua_pop(L, 1);
    }
    return n;
}

/* The axis argument at 'idx': a number, or the field 'axis' of an options
 * table (no other key, naming 'fname'); 'dflt' when absent. Still 1-based. */
static lua_Integer arg_axis(lua_State *L, int idx, const char *fname, lua_Integer dflt)
{
    static const char *const known[] = {"axis", NULL};
    lmf_check_options(L, idx, fname, known);
    if (lua_istable(L, idx))
        return lmf_opt_integer(L, idx, "axis", dflt);
    if (lua_isnoneornil(L, idx))
        return dflt;
    if (!lua_isinteger(L, idx))
        lmf_arg_error(L, idx, fname, "an integer axis or an options table {axis =}");
    return lua_tointeger(L, idx);
}

/* Replaces the indices at 'idx' (an int tensor, an integer or a nested table
 * of 1-based indices) with an int tensor of 0-based ones; returns it
 * (borrowed: its stack slot owns it). */
static MfTensor *zero_based(lua_State *L, int idx, const char *fname)
{
    MfTensor *t = lmf_test_tensor(L, idx), *one, *out = NULL;
    if (!t) {
        int ty = lua_type(L, idx);
        if (ty == LUA_TUSERDATA)
            lmf_check_tensor(L, idx); /* a closed tensor: raises */
        if (ty == LUA_TNUMBER)
            check_int(L, idx, fname, "indices", 1);
        else if (ty != LUA_TTABLE)
            lmf_arg_error(L, idx, fname, "mf.Tensor, integer or array of integers");
        lua_pushvalue(L, lua_upvalueindex(1)); /* mf.tensor(data, "int64") */
        lua_pushvalue(L, idx);
        lua_pushliteral(L, "int64");
        lua_call(L, 2, 1);
        lua_replace(L, idx);
        t = lmf_check_tensor(L, idx);
    }
    if (!mf_dtype_is_int(t->dtype))
        luaL_error(L, "%s: indices must be int32 or int64, got %s (convert with mf.cast)", fname,
                   mf_dtype_name(t->dtype));
    if (!(one = mf_tensor_scalar(t->dtype, 1)))
        lmf_raise(L);
    MfStatus st = mf_binary(MF_OP_SUB, t, one, &out);
    mf_tensor_release(one);
    if (st != MF_OK)   /* name the function called, not the subtract inside it */
        mf_err_prefix("%s", fname);
    lmf_check_status(L, st);
    lmf_push_tensor(L, out);
    lua_replace(L, idx);
    return out;
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
    lmf_check_nargs(L, "split", 3);
    MfTensor *t = lmf_to_tensor(L, 1, -1);
    int64_t axis = lmf_axis(L, "split", arg_axis(L, 3, "split", 1), t->rank, 0), n, *sizes = NULL;
    if (lua_istable(L, 2)) {
        n = (int64_t)lua_rawlen(L, 2);
        sizes = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *sizes, 0);
        for (int64_t i = 0; i < n; i++, lua_pop(L, 1)) {
            lua_rawgeti(L, 2, i + 1);
            sizes[i] = check_int(L, -1, "split", "sizes", (int)i + 1);
        }
    } else {
        if (lua_type(L, 2) != LUA_TNUMBER)
            lmf_arg_error(L, 2, "split", "number of parts or array of sizes");
        n = check_int(L, 2, "split", "number of parts", 1);
    }
    size_t room = n > 0 && n <= INT32_MAX ? (size_t)n : 1; /* else mf_split refuses n */
    MfTensor **outs = lua_newuserdatauv(L, room * sizeof *outs, 0);
    lmf_check_status(L, mf_split(t, axis, n, sizes, outs));
    return push_array(L, outs, n);
}

/* mf.unstack(t, axis) -> array of tensors of rank t.ndim - 1 */
static int l_unstack(lua_State *L)
{
    lmf_check_nargs(L, "unstack", 2);
    MfTensor *t = lmf_to_tensor(L, 1, -1);
    if (t->rank == 0)
        return luaL_error(L, "unstack: a scalar (rank 0) cannot be unstacked");
    int64_t axis = lmf_axis(L, "unstack", arg_axis(L, 2, "unstack", 1), t->rank, 0);
    int64_t n = t->shape[axis];
    MfTensor **outs = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *outs, 0);
    lmf_check_status(L, mf_unstack(t, axis, outs));
    return push_array(L, outs, n);
}

/* ---- slice, gather, reverse, tile, pad, broadcast_to ------------------------ */

/* mf.slice(t, begin, size): begin 1-based, size -1 = to the end (size
 * omitted: everything from begin). A view of t. */
static int l_slice(lua_State *L)
{
    lmf_check_nargs(L, "slice", 3);
    MfTensor *t = lmf_to_tensor(L, 1, -1);
    int64_t begin[MF_MAX_RANK], size[MF_MAX_RANK];
    int nb = read_ints(L, 2, "slice", "begin", begin, MF_MAX_RANK), ns = t->rank;
    if (!lua_isnoneornil(L, 3))
        ns = read_ints(L, 3, "slice", "size", size, MF_MAX_RANK);
    else
        for (int d = 0; d < t->rank; d++)
            size[d] = -1;
    if (nb != t->rank || ns != t->rank)
        return luaL_error(L, "slice: begin and size need %d entries each (one per axis), got %d "
                          "and %d", t->rank, nb, ns);
    MfAttrs a = mf_attrs_default();
    a.nints = 2 * t->rank;
    for (int d = 0; d < t->rank; d++) {
        if (begin[d] < 1)   /* here, where begin - 1 cannot overflow (math.mininteger) */
            return luaL_error(L, "slice: begin %I out of range for axis %d of size %I "
                              "(begin is 1-based: 1..%I)", (lua_Integer)begin[d], d + 1,
                              (lua_Integer)t->shape[d], (lua_Integer)t->shape[d]);
        a.ints[d] = begin[d] - 1;
        a.ints[t->rank + d] = size[d];
    }
    return lmf_call_op(L, MF_OP_SLICE, 1, &t, &a);
}

/* mf.gather(t, indices, axis): 1-based indices (int tensor or table) */
static int l_gather(lua_State *L)
{
    lmf_check_nargs(L, "gather", 3);
    MfTensor *in[2] = {lmf_to_tensor(L, 1, -1), NULL};
    MfAttrs a = mf_attrs_default();
    if (in[0]->rank > 0) /* else the op says a scalar cannot be gathered from */
        a.axis = lmf_axis(L, "gather", arg_axis(L, 3, "gather", 1), in[0]->rank, 0);
    in[1] = zero_based(L, 2, "gather");
    return lmf_call_op(L, MF_OP_GATHER, 2, in, &a);
}

/* Reads {{before, after}, ...} at 'idx' into 'ints' as pairs; returns the
 * number of values. */
static int read_paddings(lua_State *L, int idx, int64_t *ints)
{
    if (!lua_istable(L, idx))
        lmf_arg_error(L, idx, "pad", "paddings {{before, after}, ...}");
    int n = (int)lua_rawlen(L, idx);
    if (n > MF_MAX_RANK)
        luaL_error(L, "pad: paddings has %d pairs, at most %d are supported", n, MF_MAX_RANK);
    for (int i = 0; i < n; i++, lua_pop(L, 1)) {
        lua_rawgeti(L, idx, i + 1);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 2)
            luaL_error(L, "pad: paddings entry %d must be a {before, after} pair, got %s", i + 1,
                       luaL_typename(L, -1));
        int top = lua_gettop(L);
        for (int k = 0; k < 2; k++, lua_pop(L, 1)) {
            lua_rawgeti(L, top, k + 1);
            ints[2 * i + k] = check_int(L, -1, "pad", "paddings", i + 1);
        }
    }
    return 2 * n;
}

/* mf.pad(t, paddings [, constant_values | {constant_values, mode = "CONSTANT"}]) */
static int l_pad(lua_State *L)
{
    lmf_check_nargs(L, "pad", 3);
    MfTensor *t = lmf_to_tensor(L, 1, -1);
    MfAttrs a = mf_attrs_default();
    a.nints = read_paddings(L, 2, a.ints);
    if (lua_type(L, 3) == LUA_TNUMBER) {
        a.scalar[0] = lua_tonumber(L, 3);
    } else if (lua_istable(L, 3)) {
        static const char *const known[] = {"constant_values", "mode", NULL};
        lmf_check_options(L, 3, "pad", known);
        a.scalar[0] = lmf_opt_number(L, 3, "constant_values", 0);
        lua_getfield(L, 3, "mode");
        const char *mode = lua_tostring(L, -1);
        if (mode && strcmp(mode, "CONSTANT") != 0 && strcmp(mode, "constant") != 0)
            return luaL_error(L, "pad: only mode \"CONSTANT\" is supported, got \"%s\"", mode);
    } else if (!lua_isnoneornil(L, 3)) {
        return lmf_arg_error(L, 3, "pad", "constant value (number) or options table");
    }
    return lmf_call_op(L, MF_OP_PAD, 1, &t, &a);
}

/* mf.broadcast_to(t, shape) */
static int l_broadcast_to(lua_State *L)
{
    lmf_check_nargs(L, "broadcast_to", 2);
    MfTensor *t = lmf_to_tensor(L, 1, -1), *s = lmf_test_tensor(L, 2), *out = NULL;
    if (s && s->node) {   /* a graph shape (mf.shape of a -1 placeholder): read when it runs */
        if (mf_broadcast_to_by(t, s, &out) != MF_OK) {   /* its inner ops name themselves */
            if (strncmp(mf_err_msg(), "broadcast_to", 12) != 0)
                mf_err_prefix("broadcast_to");
            return lmf_raise(L);
        }
        lmf_push_tensor(L, out);
        return 1;
    }
    MfAttrs a = mf_attrs_default();
    a.nints = lmf_check_shape(L, 2, "broadcast_to", a.ints, 0);
    return lmf_call_op(L, MF_OP_BROADCAST_TO, 1, &t, &a);
}

/* ---- one_hot, shape -------------------------------------------------------- */

/* The field 'dtype' of the options table at 'idx' (float32 when absent). */
static MfDType opt_dtype_field(lua_State *L, int idx, const char *fname)
{
    MfDType dt = MF_FLOAT32;
    if (!lua_istable(L, idx))
        return dt;
    lua_getfield(L, idx, "dtype");
    if (!lua_isnil(L, -1) && (lua_type(L, -1) != LUA_TSTRING ||
                              !mf_dtype_parse(lua_tostring(L, -1), &dt)))
        luaL_error(L, "%s: unknown dtype '%s' (expected float32, float64, int32, int64, bool or uint8)",
                   fname, luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    return dt;
}

/* mf.one_hot(indices, depth [, {on_value = 1, off_value = 0, dtype = "float32"}]):
 * classes 1..depth, the class axis last. */
static int l_one_hot(lua_State *L)
{
    lmf_check_nargs(L, "one_hot", 3);
    static const char *const known[] = {"on_value", "off_value", "dtype", NULL};
    MfAttrs a = mf_attrs_default();
    a.n = check_int(L, 2, "one_hot", "depth", 1);
    if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))
        lmf_arg_error(L, 3, "one_hot", "options table");
    lmf_check_options(L, 3, "one_hot", known);
    a.scalar[0] = lmf_opt_number(L, 3, "on_value", 1);
    a.scalar[1] = lmf_opt_number(L, 3, "off_value", 0);
    a.dtype = opt_dtype_field(L, 3, "one_hot");
    MfTensor *ix = zero_based(L, 1, "one_hot");
    return lmf_call_op(L, MF_OP_ONE_HOT, 1, &ix, &a);
}

void lmf_open_shape(lua_State *L, int methods)
{
    static const luaL_Reg both[] = {
        {"split", l_split}, {"unstack", l_unstack}, {"slice", l_slice}, {"gather", l_gather},
        {"pad", l_pad}, {"one_hot", l_one_hot}, {"broadcast_to", l_broadcast_to},
        {NULL, NULL}};
    methods = lua_absindex(L, methods);
    lua_getfield(L, -1, "tensor"); /* upvalue 1 of each function */
    luaL_setfuncs(L, both, 1);
    lua_pushvalue(L, methods);
    lua_getfield(L, -2, "tensor");
    luaL_setfuncs(L, both, 1);
    lua_pop(L, 1);
}
