/* lmf_forward.c — mf.ForwardAccumulator(primals, tangents), TensorFlow's
 * tf.autodiff.ForwardAccumulator: from its creation until acc:close() (or
 * the end of a to-be-closed variable's block) every op propagates the
 * tangents (eager/forward.h); acc:jvp(t) gives the tangent of t, also after
 * the close. mf.jvp, mf.vjp, mf.hvp and mf.hessian are written on it in
 * lib/forward.lua.
 *
 * Ownership: the box owns one reference to its accumulator (__gc releases
 * it; __close only stops it); the accumulator holds the tangents. */
#include "eager/forward.h"
#include "mode/mode.h"
#include "lmf.h"
#include "lmf_arg.h"

#define FWD_MT "mf.ForwardAccumulator"

static MfForwardAcc *check_acc(lua_State *L, int idx)
{
    MfForwardAcc **box = luaL_checkudata(L, idx, FWD_MT);
    if (!*box)
        luaL_argerror(L, idx, "ForwardAccumulator is freed");
    return *box;
}

/* The length of the array at 'idx', or -1 when it holds one value (a
 * tensor, a Variable, a number). */
static lua_Integer count_of(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return -1;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return -1;
    }
    return (lua_Integer)lua_rawlen(L, idx);
}

/* Pushes element 'i' (1-based) of the argument at 'idx': the argument itself
 * when it is not an array. */
static void push_item(lua_State *L, int idx, lua_Integer n, lua_Integer i)
{
    if (n < 0)
        lua_pushvalue(L, idx);
    else
        lua_geti(L, idx, i);
}

/* mf.ForwardAccumulator(primals, tangents) */
static int l_new(lua_State *L)
{
    lmf_check_nargs(L, "ForwardAccumulator", 2);
    luaL_checkany(L, 1);
    luaL_checkany(L, 2);
    /* the primals give the structure: one value, or an array the tangents match */
    lua_Integer np = count_of(L, 1);
    lua_Integer nt = np < 0 ? -1 : count_of(L, 2);
    if (np >= 0 && nt != np)
        return luaL_error(L, "ForwardAccumulator: tangents must be an array of %I, one per "
                          "primal, got %s", np,
                          nt < 0 ? luaL_typename(L, 2) : lua_pushfstring(L, "%I", nt));
    lua_Integer n = np < 0 ? 1 : np;
    if (n > 100000)
        return luaL_error(L, "ForwardAccumulator: %I primals, at most 100000", n);
    luaL_checkstack(L, (int)(2 * n + 8), "ForwardAccumulator");
    /* every argument is converted (and may raise) before the accumulator starts */
    int base = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        push_item(L, 1, np, i);
        MfTensor *p = lmf_check_tensor(L, lua_gettop(L));
        push_item(L, 2, np, i);
        lmf_arg_tensor(L, lua_gettop(L), (int)p->dtype, "ForwardAccumulator");
    }
    MfForwardAcc **box = lua_newuserdatauv(L, sizeof *box, 0);
    *box = NULL;
    luaL_setmetatable(L, FWD_MT);
    MfForwardAcc *a = mf_forward_new();
    if (!a)
        return lmf_raise(L);
    *box = a;
    for (lua_Integer i = 1; i <= n; i++) {
        MfTensor *p = lmf_test_tensor(L, base + (int)(2 * i - 1));
        MfTensor *t = lmf_test_tensor(L, base + (int)(2 * i));
        if (mf_forward_watch(a, p, t, (int)i) != MF_OK) {
            mf_forward_close(a);
            return lmf_raise(L);
        }
    }
    return 1;
}

/* Pushes the tangent of the tensor at 'idx' (nil, or zeros when 'zero'). */
static void push_jvp(lua_State *L, MfForwardAcc *a, int idx, bool zero)
{
    MfTensor *x = lmf_check_tensor(L, idx);
    MfTensor *t = mf_forward_tangent(a, x);
    if (t) {
        mf_tensor_retain(t);
        lmf_push_tensor(L, t);
    } else if (zero && x->node == NULL) {
        MfTensor *z = mf_tensor_zeros(x->dtype, x->rank, x->shape);
        if (!z)
            lmf_raise(L);
        lmf_push_tensor(L, z);
    } else {
        lua_pushnil(L);
    }
}

/* acc:jvp(t [, {unconnected = "none" | "zero"}]): one tensor, or an array */
static int a_jvp(lua_State *L)
{
    MfForwardAcc *a = check_acc(L, 1);
    lmf_check_nargs(L, "ForwardAccumulator:jvp", 3);
    luaL_checkany(L, 2);
    bool zero = false;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const known[] = {"unconnected", NULL};
        static const char *const modes[] = {"none", "zero", NULL};
        luaL_checktype(L, 3, LUA_TTABLE);
        lmf_check_options(L, 3, "ForwardAccumulator:jvp", known);
        lua_getfield(L, 3, "unconnected");
        if (!lua_isnil(L, -1))
            zero = luaL_checkoption(L, -1, NULL, modes) == 1;
        lua_pop(L, 1);
    }
    lua_settop(L, 2);
    lua_Integer n = count_of(L, 2);
    if (n < 0) {
        push_jvp(L, a, 2, zero);
        return 1;
    }
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 2, i);
        push_jvp(L, a, lua_gettop(L), zero);
        lua_seti(L, 3, i);
        lua_settop(L, 3);
    }
    return 1;
}

static int a_close(lua_State *L)
{
    MfForwardAcc **box = luaL_checkudata(L, 1, FWD_MT);
    mf_forward_close(*box);
    return 0;
}

static int a_gc(lua_State *L)
{
    MfForwardAcc **box = luaL_checkudata(L, 1, FWD_MT);
    mf_forward_release(*box);
    *box = NULL;
    return 0;
}

static int a_tostring(lua_State *L)
{
    MfForwardAcc **box = luaL_checkudata(L, 1, FWD_MT);
    if (!*box)
        lua_pushliteral(L, "<ForwardAccumulator freed>");
    else
        lua_pushfstring(L, "<ForwardAccumulator %s, %I tangents>",
                        mf_forward_active(*box) ? "active" : "closed",
                        (lua_Integer)mf_forward_ntangents(*box));
    return 1;
}

void lmf_open_forward(lua_State *L)
{
    static const luaL_Reg meta[] = {
        {"__gc", a_gc}, {"__close", a_close}, {"__tostring", a_tostring}, {NULL, NULL}};
    static const luaL_Reg meths[] = {{"jvp", a_jvp}, {"close", a_close}, {NULL, NULL}};
    lmf_box_class(L, FWD_MT, meta, meths);
    mf_forward_graph_register();   /* transposed rules inside mf.trace */
    lua_pushcfunction(L, l_new);
    lua_setfield(L, -2, "ForwardAccumulator");
}
