/* lmf_nn.c — the hand-written part of mf.nn: relu, sigmoid, tanh,
 * softplus (the same functions as mf.relu, ...), and the functions that are
 * not one op: sigmoid_cross_entropy_with_logits ({labels =, logits =}),
 * l2_loss and dropout (core/ops/nn.h). The ops (softmax, the softmax
 * cross-entropies, bias_add, pooling, conv2d and its backprops,
 * fused_batch_norm...) are bound from their descriptors by repl/lmf_op.c. */
#include <ctype.h>
#include <string.h>

#include "core/ops/compare.h"
#include "core/ops/nn.h"
#include "core/ops/pool.h"
#include "lmf.h"

/* Pushes '*out', the result of a core call that returned 'st', or raises
 * its message. ('out' is read only here, after the call has run.) */
static int push_result(lua_State *L, MfStatus st, MfTensor **out)
{
    lmf_check_status(L, st);
    lmf_push_tensor(L, *out);
    return 1;
}

/* The argument at 'idx' as a tensor (borrowed); Lua numbers and arrays are
 * converted to dtype 'dt' (the dtype of the tensor beside them), tensors
 * are taken as they are. */
static MfTensor *to_tensor_as(lua_State *L, int idx, MfDType dt)
{
    bool from_lua = !lmf_test_tensor(L, idx);
    MfTensor *t = lmf_to_tensor(L, idx, (int)dt), *c = NULL;
    if (!from_lua || t->dtype == dt)
        return t;
    lmf_check_status(L, mf_cast(t, dt, &c));
    lmf_push_tensor(L, c);
    lua_replace(L, idx);
    return c;
}

/* True when the table at 'idx' is the keyword form {labels =, logits =}. */
static bool keyword_form(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return false;
    int top = lua_gettop(L);
    bool kw = lua_getfield(L, idx, "labels") != LUA_TNIL ||
              lua_getfield(L, idx, "logits") != LUA_TNIL;
    lua_settop(L, top);
    return kw;
}

/* The arguments of sigmoid_cross_entropy_with_logits: {labels = , logits =
 * [, axis]} (the preferred form) or TensorFlow 2's positional (labels,
 * logits [, axis | {axis}]). Leaves logits at slot 2, labels at slot 3
 * (converted to tensors; Lua data in labels takes logits' dtype), the
 * options table or axis at slot 4 (nil when none). (The softmax ones are
 * bound from their descriptors by lmf_op.c.) */
static void xent_args(lua_State *L, const char *fname, MfTensor **logits, MfTensor **labels)
{
    static const char *const known[] = {"labels", "logits", "axis", "dim", NULL};
    lua_settop(L, 3);
    if (keyword_form(L, 1)) {
        if (!lua_isnil(L, 2))
            luaL_error(L, "%s: with {labels = ..., logits = ...} the options go in that table, "
                       "got a 2nd argument (%s)", fname, luaL_typename(L, 2));
        lmf_check_options(L, 1, fname, known);
        lua_getfield(L, 1, "logits");
        lua_getfield(L, 1, "labels");
        lua_pushvalue(L, 1);
    } else {   /* (labels, logits [, axis]): TensorFlow 2's order */
        if (lua_isnil(L, 1) || lua_isnil(L, 2))
            luaL_error(L, "%s: expected {labels = ..., logits = ...} or (labels, logits), got "
                       "%s and %s", fname, luaL_typename(L, 1), luaL_typename(L, 2));
        if (lua_istable(L, 3)) {
            static const char *const opts[] = {"axis", "dim", NULL};
            lmf_check_options(L, 3, fname, opts);
        }
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 3);
    }
    lua_rotate(L, 1, -3);   /* logits, labels, options first */
    lua_settop(L, 3);
    lua_pushnil(L);
    lua_insert(L, 1);       /* slots 2, 3, 4 */
    if (lua_isnil(L, 2) || lua_isnil(L, 3))
        luaL_error(L, "%s: missing '%s' (call it as %s{labels = ..., logits = ...})", fname,
                   lua_isnil(L, 2) ? "logits" : "labels", fname);
    *logits = lmf_to_tensor(L, 2, -1);
    *labels = to_tensor_as(L, 3, (*logits)->dtype);
}

/* mf.nn.sigmoid_cross_entropy_with_logits{labels = , logits = } */
static int l_sigmoid_xent(lua_State *L)
{
    lmf_check_nargs(L, "sigmoid_cross_entropy_with_logits", 3);
    MfTensor *logits, *labels, *out = NULL;
    const char *fname = "sigmoid_cross_entropy_with_logits";
    xent_args(L, fname, &logits, &labels);
    if (!lua_isnil(L, 4) &&
        (!lua_istable(L, 4) || lmf_opt_integer(L, 4, fname, "axis", -99) != -99))
        return luaL_error(L, "sigmoid_cross_entropy_with_logits: takes no axis (it is "
                          "elementwise)");
    MfStatus st = mf_sigmoid_cross_entropy(labels, logits, &out);
    /* an error of an op inside it (relu, log1p...) still names the function */
    if (st != MF_OK && strncmp(mf_err_msg(), "sigmoid_cross_entropy_with_logits", 33) != 0)
        mf_err_prefix("sigmoid_cross_entropy_with_logits");
    return push_result(L, st, &out);
}

/* mf.nn.l2_loss(t) */
static int l_l2_loss(lua_State *L)
{
    lmf_check_nargs(L, "l2_loss", 1);
    MfTensor *out = NULL;
    MfStatus st = mf_l2_loss(lmf_to_tensor(L, 1, -1), &out);
    /* an error of the square or sum inside it still names l2_loss */
    if (st != MF_OK && strncmp(mf_err_msg(), "l2_loss:", 8) != 0)
        mf_err_prefix("l2_loss");
    return push_result(L, st, &out);
}

/* The dropout options at 'oi' (checked): 'seed' into *seed (returns
 * whether given); 'rate' or 'keep_prob' pushed when 'p' is 0 (nothing
 * pushed otherwise), *keep says which. */
static bool dropout_opts(lua_State *L, int oi, int p, bool *keep, lua_Integer *seed)
{
    static const char *const known[] = {"seed", "rate", "keep_prob", NULL};
    lmf_check_options(L, oi, "dropout", known);
    bool has_seed = false;
    if (lua_getfield(L, oi, "seed") != LUA_TNIL) {
        if (!lua_isinteger(L, -1))
            luaL_error(L, "dropout: option 'seed' must be an integer, got %s",
                       luaL_typename(L, -1));
        has_seed = true;
        *seed = lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    int r = lua_getfield(L, oi, "rate"), k = lua_getfield(L, oi, "keep_prob");
    if (p && (r != LUA_TNIL || k != LUA_TNIL))
        luaL_error(L, "dropout: the rate is given twice (as argument 2 and as an option)");
    if (!p && (r == LUA_TNIL) == (k == LUA_TNIL))
        luaL_error(L, "dropout: give exactly one of rate and keep_prob (TensorFlow 1.x's "
                   "1 - rate), e.g. mf.nn.dropout(x, {keep_prob = kp})");
    *keep = k != LUA_TNIL;
    lua_remove(L, *keep ? -2 : -1);
    if (p)
        lua_pop(L, 1);
    return has_seed;
}

/* mf.nn.dropout(x, rate [, {seed}]) or mf.nn.dropout(x, {rate | keep_prob [, seed]});
 * the rate or keep_prob may be a number or a scalar tensor (a placeholder). */
static int l_dropout(lua_State *L)
{
    lmf_check_nargs(L, "dropout", 3);
    MfTensor *x = lmf_to_tensor(L, 1, -1), *out = NULL;
    bool opts_at_2 = lua_type(L, 2) == LUA_TTABLE;
    int oi = opts_at_2 ? 2 : 3;
    if (!lua_isnoneornil(L, oi) && !lua_istable(L, oi))
        return luaL_error(L, "dropout: expected an options table {seed = n}, got %s",
                          luaL_typename(L, oi));
    lua_settop(L, 3);
    bool keep = false, has_seed = false;
    lua_Integer seed = 0;
    if (lua_istable(L, oi))
        has_seed = dropout_opts(L, oi, opts_at_2 ? 0 : 2, &keep, &seed);
    int pi = opts_at_2 ? lua_gettop(L) : 2;
    const char *what = keep ? "keep_prob" : "rate";
    if (lua_type(L, pi) == LUA_TNUMBER)
        return push_result(L, mf_dropout_number(x, lua_tonumber(L, pi), keep, has_seed, seed,
                                                &out), &out);
    if (!lmf_test_tensor(L, pi))
        return luaL_error(L, "dropout: %s must be a number or a scalar tensor (a placeholder), "
                          "got %s", what, luaL_typename(L, pi));
    MfTensor *p = lmf_to_tensor(L, pi, (int)x->dtype);
    return push_result(L, mf_dropout_tensor(x, p, keep, has_seed, seed, &out), &out);
}

void lmf_open_nn(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"sigmoid_cross_entropy_with_logits", l_sigmoid_xent},
        {"l2_loss", l_l2_loss},
        {"dropout", l_dropout},
        {NULL, NULL},
    };
    static const char *const same[] = {"relu", "sigmoid", "tanh", "softplus", NULL};
    if (lua_getfield(L, -1, "nn") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "nn");
    }
    luaL_setfuncs(L, fns, 0);
    for (int i = 0; same[i]; i++) {
        lua_getfield(L, -2, same[i]);
        lua_setfield(L, -2, same[i]);
    }
    lua_pop(L, 1);
}
