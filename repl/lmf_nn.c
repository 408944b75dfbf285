/* lmf_nn.c — the hand-written part of mf.nn: relu, sigmoid, tanh,
 * softplus (the same functions as mf.relu, ...), the three cross-entropies
 * ({labels =, logits =}), l2_loss and dropout (core/ops/nn.h). The ops
 * softmax, log_softmax, bias_add, max_pool, avg_pool, conv2d and
 * fused_batch_norm are bound from their descriptors by repl/lmf_op.c, the
 * conv backprops by repl/lmf_conv.c. Sparse labels are class numbers 1..C. */
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

/* The arguments of a cross-entropy: {labels = , logits = [, axis]} (the
 * preferred form) or TensorFlow 2's positional (labels, logits [, axis |
 * {axis}]). Leaves logits at slot 2, labels at slot 3 (converted to
 * tensors), the options table or axis at slot 4 (nil when none). Numbers
 * in labels take 'label_dtype' (-1: logits' dtype). */
static void xent_args(lua_State *L, const char *fname, int label_dtype, MfTensor **logits,
                      MfTensor **labels)
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
    *labels = to_tensor_as(L, 3, label_dtype < 0 ? (*logits)->dtype : (MfDType)label_dtype);
    /* (logits, labels), PyTorch's order, is caught where the dtypes tell */
    if (label_dtype == MF_INT64 && mf_dtype_is_float((*labels)->dtype) &&
        (!mf_dtype_is_float((*logits)->dtype) || (*logits)->rank < (*labels)->rank))
        luaL_error(L, "%s: labels are %s and logits %s: the order is (labels, logits), as "
                   "TensorFlow's; prefer %s{labels = ..., logits = ...}", fname,
                   mf_dtype_name((*labels)->dtype), mf_dtype_name((*logits)->dtype), fname);
}

/* The class axis at slot 4 (a number, or a table's 'axis' or TF1's 'dim'),
 * 0-based for logits of rank 'rank'; -1 (the last) when absent. */
static int64_t xent_axis_arg(lua_State *L, const char *fname, int rank)
{
    lua_Integer axis = -1;
    if (lua_type(L, 4) == LUA_TNUMBER) {
        axis = luaL_checkinteger(L, 4);
    } else if (lua_istable(L, 4)) {
        axis = lmf_opt_integer(L, 4, fname, "axis", lmf_opt_integer(L, 4, fname, "dim", -1));
    } else if (!lua_isnil(L, 4)) {
        luaL_error(L, "%s: axis must be an integer, got %s", fname, luaL_typename(L, 4));
    }
    return lmf_axis(L, fname, axis, rank, 0);
}

/* mf.nn.softmax_cross_entropy_with_logits{labels = , logits = [, axis]} */
static int l_softmax_xent(lua_State *L)
{
    const char *fname = "softmax_cross_entropy_with_logits";
    lmf_check_nargs(L, fname, 3);
    MfTensor *logits, *labels, *out = NULL;
    xent_args(L, fname, -1, &logits, &labels);
    int64_t axis = xent_axis_arg(L, fname, logits->rank);
    return push_result(L, mf_softmax_cross_entropy_axis(labels, logits, axis, &out), &out);
}

/* mf.nn.sparse_softmax_cross_entropy_with_logits{labels = , logits = [, axis]} */
static int l_sparse_softmax_xent(lua_State *L)
{
    const char *fname = "sparse_softmax_cross_entropy_with_logits";
    lmf_check_nargs(L, fname, 3);
    MfTensor *logits, *labels, *out = NULL;
    xent_args(L, fname, MF_INT64, &logits, &labels);
    int64_t axis = xent_axis_arg(L, fname, logits->rank);
    return push_result(L, mf_sparse_softmax_cross_entropy_axis(labels, logits, axis, &out),
                       &out);
}

/* mf.nn.sigmoid_cross_entropy_with_logits{labels = , logits = } */
static int l_sigmoid_xent(lua_State *L)
{
    lmf_check_nargs(L, "sigmoid_cross_entropy_with_logits", 3);
    MfTensor *logits, *labels, *out = NULL;
    const char *fname = "sigmoid_cross_entropy_with_logits";
    xent_args(L, fname, -1, &logits, &labels);
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
        {"softmax_cross_entropy_with_logits", l_softmax_xent},
        {"sparse_softmax_cross_entropy_with_logits", l_sparse_softmax_xent},
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
