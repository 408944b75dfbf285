/* lmf_nn.c — the hand-written part of mf.nn: relu, sigmoid, tanh,
 * softplus (the same functions as mf.relu, ...), and dropout (core/ops/nn.h),
 * whose rate is a number or a tensor, positional or an option. The ops
 * (softmax, the cross-entropies, bias_add, pooling, conv2d and its
 * backprops, fused_batch_norm...) and the composites (l2_loss,
 * sigmoid_cross_entropy_with_logits, conv2d_transpose) are bound from their
 * descriptors by repl/lmf_op.c. */
#include <ctype.h>
#include <string.h>

#include "core/ops/compare.h"
#include "core/ops/nn.h"
#include "core/ops/pool.h"
#include "lmf.h"

/* The dropout options at 'oi' (checked): 'seed' into *seed (returns
 * whether given); 'rate' or 'keep_prob' pushed when 'p' is 0 (nothing
 * pushed otherwise), *keep says which. */
static bool dropout_opts(lua_State *L, int oi, int p, bool *keep, lua_Integer *seed)
{
    static const char *const known[] = {"seed", "rate", "keep_prob", NULL};
    lmf_check_options(L, oi, "dropout", known);
    bool has_seed = lmf_opt_integer_given(L, oi, "dropout", "seed", seed);
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
    MfTensor *x = lmf_arg_tensor(L, 1, -1, "dropout"), *out = NULL;
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
        return lmf_push_result(L, mf_dropout_number(x, lua_tonumber(L, pi), keep, has_seed,
                                                    seed, &out), &out);
    if (!lmf_test_tensor(L, pi))
        return luaL_error(L, "dropout: %s must be a number or a scalar tensor (a placeholder), "
                          "got %s", what, luaL_typename(L, pi));
    MfTensor *p = lmf_arg_tensor(L, pi, (int)x->dtype, "dropout");
    return lmf_push_result(L, mf_dropout_tensor(x, p, keep, has_seed, seed, &out), &out);
}

void lmf_open_nn(lua_State *L)
{
    static const luaL_Reg fns[] = {
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
    lmf_open_conv(L);
    for (int i = 0; same[i]; i++) {
        lua_getfield(L, -2, same[i]);
        lua_setfield(L, -2, same[i]);
    }
    lua_pop(L, 1);
}
