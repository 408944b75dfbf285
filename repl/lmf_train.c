/* lmf_train.c — the mf.train table (eager mode): the five optimizers
 * (GradientDescentOptimizer, MomentumOptimizer, AdagradOptimizer,
 * RMSPropOptimizer, AdamOptimizer) as "mf.train.Optimizer" userdata with
 * compute_gradients / apply_gradients / minimize / get_slot_names /
 * get_slot and mf.train.global_step() (the schedules are lib/schedules.lua's).
 *
 * Ownership: an optimizer box owns one reference to its MfOptimizer; its
 * user value holds a callable learning rate (called at every apply). Pairs
 * handed to apply_gradients are read twice: first checked with Lua errors
 * allowed, then copied into a C array with their own references, so nothing
 * leaks when Lua raises. The global step Variable lives in the registry. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "distributed/dist.h"
#include "lmf_callback.h"
#include "lmf.h"
#include "lmf_print.h"
#include "mode/mode.h"
#include "train/train.h"

#define OPT_MT "mf.train.Optimizer"

/* 'distributed': a DistributedOptimizer (mf.dist) around the same
 * MfOptimizer: compute_gradients averages over the processes as 'dist'
 * says (train/dist_optimizer.c); 'averaged' from then until the next
 * apply_gradients, which averages the gradients itself otherwise (they
 * came from elsewhere: a tape, model:fit). */
typedef struct OptBox {
    MfOptimizer *o;
    bool lr_callable;
    bool distributed, averaged;
    MfDistOptions dist;
} OptBox;

static const char global_step_key = 0;

static MfOptimizer *check_opt(lua_State *L, int idx)
{
    OptBox *box = luaL_checkudata(L, idx, OPT_MT);
    if (!box->o)
        luaL_argerror(L, idx, "optimizer is closed");
    return box->o;
}

/* The type a user would call the value at 'idx': "mf.Tensor", "number", ...
 * A closed tensor or Variable says so ("a closed mf.Variable"): it is
 * refused for being closed, and "expected a Variable, got mf.Variable"
 * would not tell the user why. */
static const char *type_name(lua_State *L, int idx)
{
    if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);   /* kept alive by the metatable */
        lua_pop(L, 1);
        if (strcmp(s, LMF_VARIABLE_MT) == 0 && !lmf_test_variable(L, idx))
            return "a closed " LMF_VARIABLE_MT;
        if (strcmp(s, LMF_TENSOR_MT) == 0 && !lmf_is_tensor(L, idx))
            return "a closed " LMF_TENSOR_MT;
        return s;
    }
    if (lmf_test_variable(L, idx))
        return "mf.Variable";
    return luaL_typename(L, idx);
}

static bool is_callable(lua_State *L, int idx)
{
    if (lua_isfunction(L, idx))
        return true;
    if (luaL_getmetafield(L, idx, "__call") != LUA_TNIL) {
        lua_pop(L, 1);
        return true;
    }
    return false;
}

/* ---- constructors ------------------------------------------------------------------- */

/* The learning rate at 1 into 'c': a number, a scalar tensor, a Variable or a
 * callable (returns true for a callable). None: the class's default
 * (train/opt_classes.c; only Adam has one, as in TensorFlow 1.x). */
static bool read_lr(lua_State *L, const char *who, MfOptConfig *c)
{
    if (lua_isnoneornil(L, 1)) {
        c->lr = mf_opt_class(c->kind)->default_lr;
        if (isnan(c->lr))
            lmf_check_status(L, mf_opt_missing(c->kind, "learning_rate"));
        return false;
    }
    if (lua_type(L, 1) == LUA_TNUMBER) {
        c->lr = lua_tonumber(L, 1);
        return false;
    }
    if ((c->lr_var = lmf_test_variable(L, 1)))
        return false;
    if (lua_isuserdata(L, 1) && (c->lr_tensor = lmf_test_tensor(L, 1)))
        return false;
    if (is_callable(L, 1)) {
        c->lr = 1;
        return true;
    }
    return luaL_error(L, "%s: learning_rate must be a number, a scalar tensor or Variable, or "
                      "a function returning one; got %s", who, type_name(L, 1));
}

/* ---- hyperparameters: number, tensor, Variable or function ------------------------- */

/* The number a hyperparameter source at 'idx' stands for now: a number, a
 * concrete scalar tensor or Variable (its current value), or a function
 * (called, returning one of those). A graph tensor (a placeholder, a
 * schedule's output inside mf.trace, a graph Variable) has no number: it
 * goes to '*sym' (retained: the caller releases it) and 0 is returned. */
static double hyper_value(lua_State *L, int idx, const char *who, const char *key,
                          MfTensor **sym)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lua_tonumber(L, idx);
    if (is_callable(L, idx)) {
        lua_pushvalue(L, idx);
        if (lua_pcall(L, 0, 1, 0) != LUA_OK)
            luaL_error(L, "%s: %s function: %s", who, key, luaL_tolstring(L, -1, NULL));
        double v = hyper_value(L, -1, who, key, sym);
        lua_pop(L, 1);
        return v;
    }
    /* a Variable is read, not replaced by a tensor box: the caller keeps it
     * to read again at the next apply */
    MfVariable *v = lmf_test_variable(L, idx);
    MfTensor *t = v ? v->value : lmf_is_tensor(L, idx) ? lmf_test_tensor(L, idx) : NULL;
    if (!t)
        luaL_error(L, "%s: %s must be a number, a scalar tensor or Variable, or a function "
                   "returning one; got %s", who, key, type_name(L, idx));
    if (!t->storage) {   /* symbolic: an input of the Apply nodes (train.h) */
        if (t->rank != 0 || t->dtype == MF_BOOL)
            luaL_error(L, "%s: %s must be a scalar number, got a %s tensor of rank %d", who, key,
                       mf_dtype_name(t->dtype), t->rank);
        mf_tensor_retain(t);
        *sym = t;
        return 0;
    }
    double value = 0;
    lmf_check_status(L, mf_opt_hyper_from_tensor(who, key, t, &value));
    return value;
}

/* Hyperparameter 'h' given at 'idx' into 'c'; a value that is not a plain
 * number is also kept in the table at 'hi' to be read again at every apply
 * (refresh_hypers); a graph tensor leaves the default in 'c' (its value
 * exists only when the graph runs). */
static void take_hyper(lua_State *L, int idx, const MfOptHyper *h, int hi, MfOptConfig *c)
{
    const char *who = mf_opt_kind_class(c->kind);
    MfTensor *sym = NULL;
    double v = hyper_value(L, idx, who, h->name, &sym);
    if (!sym)
        mf_opt_hyper_set(c, h, v);
    mf_tensor_release(sym);
    if (lua_type(L, idx) != LUA_TNUMBER) {
        lua_pushvalue(L, idx);
        lua_setfield(L, hi, h->name);
    }
}

/* The option 'h' at 'oi' given by name (h->choices): 0 or 1, 'dflt' when
 * absent. */
static int choice_option(lua_State *L, int oi, const char *who, const MfOptHyper *h, int dflt)
{
    if (!lmf_opt_field(L, oi, h->name))
        return dflt;
    const char *name = lmf_name_string(L, -1);
    for (int i = 0; name && h->choices[i]; i++)
        if (strcmp(name, h->choices[i]) == 0) {
            lua_pop(L, 1);
            return i;
        }
    return luaL_error(L, "%s: option '%s' must be \"%s\" or \"%s\", got %s", who, h->name,
                      h->choices[0], h->choices[1], lmf_value_text(L, -1));
}

/* Option 'h' of the table at 'oi' into 'c' (its default stays when absent),
 * read as the class table says: a bool, a number read once, or a number,
 * tensor, Variable or function read at every apply. */
static void read_hyper_option(lua_State *L, int oi, const MfOptHyper *h, int hi, MfOptConfig *c)
{
    double dflt = mf_opt_hyper_get(c, h);
    const char *who = mf_opt_kind_class(c->kind);
    if (h->choices) {
        mf_opt_hyper_set(c, h, choice_option(L, oi, who, h, dflt != 0));
        return;
    }
    if (h->is_bool || !h->per_apply) {
        double v = h->is_bool ? lmf_opt_bool(L, oi, who, h->name, dflt != 0)
                              : lmf_opt_number(L, oi, who, h->name, dflt);
        mf_opt_hyper_set(c, h, v);
        return;
    }
    if (lua_istable(L, oi) && lua_getfield(L, oi, h->name) != LUA_TNIL)
        take_hyper(L, lua_gettop(L), h, hi, c);
    lua_settop(L, hi);
}

/* Before an apply: the hyperparameters kept by take_hyper, read again. */
static void refresh_hypers(lua_State *L, int oi, MfOptimizer *o, const char *who)
{
    if (lua_getiuservalue(L, oi, 2) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        const char *key = lua_tostring(L, -2);
        MfTensor *sym = NULL;
        double v = hyper_value(L, -1, who, key, &sym);
        MfStatus st = sym ? MF_OK : mf_optimizer_set_hyper(o, key, v);
        if (st == MF_OK)
            st = mf_optimizer_set_hyper_tensor(o, key, sym);
        mf_tensor_release(sym);
        if (st != MF_OK)
            lmf_raise(L);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Makes the optimizer from 'c' and pushes it; the options table is at 'oi'. */
static int push_opt(lua_State *L, MfOptConfig *c, bool callable, int oi)
{
    c->name = NULL;
    if (lua_istable(L, oi) && lua_getfield(L, oi, "name") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: name must be a non-empty string, got %s",
                       mf_opt_kind_class(c->kind), type_name(L, -1));
        c->name = lua_tostring(L, -1);   /* mf_optimizer_new checks it */
    }
    OptBox *box = lua_newuserdatauv(L, sizeof *box, 2);
    *box = (OptBox){NULL, callable, false, false, mf_dist_options_default()};
    luaL_setmetatable(L, OPT_MT);
    if (callable) {
        lua_pushvalue(L, 1);
        lua_setiuservalue(L, -2, 1);
    }
    lua_pushvalue(L, oi + 1);   /* the hyperparameters read at every apply */
    lua_setiuservalue(L, -2, 2);
    box->o = mf_optimizer_new(c);
    if (!box->o)
        return lmf_raise(L);
    return 1;
}

/* TensorFlow's keyword form, Class{learning_rate = 0.1, momentum = 0.9, ...}:
 * the table at 1 becomes the positional arguments (learning_rate, then the
 * class's positional hyperparameters: Momentum's momentum) and an options
 * table after them with the rest. */
static void keyword_form(lua_State *L, const MfOptClass *k)
{
    if (lua_type(L, 1) != LUA_TTABLE || !lua_isnoneornil(L, 2))
        return;
    lua_settop(L, 1);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, 2);
    }
    lua_getfield(L, 2, "learning_rate");
    lua_pushnil(L);
    lua_setfield(L, 2, "learning_rate");
    lua_replace(L, 1);                       /* learning_rate at 1, options at 2 */
    int oi = 2;
    for (int i = 0; i < k->nhypers; i++) {
        if (!k->hypers[i].positional)
            continue;
        lua_getfield(L, oi, k->hypers[i].name);
        lua_pushnil(L);
        lua_setfield(L, oi, k->hypers[i].name);
        lua_insert(L, oi++);                 /* the value at oi, the options after it */
    }
}

/* A positional hyperparameter (at 'idx') is required (mf_opt_missing). */
static void check_required(lua_State *L, int idx, MfOptKind kind, const MfOptHyper *h)
{
    if (!lua_isnoneornil(L, idx))
        return;
    const char *got = type_name(L, idx);
    mf_opt_missing(kind, h->name);
    lmf_push_engine_error(L);
    luaL_error(L, "%s, got %s", lua_tostring(L, -1), got);
}

/* mf.train.<Class>(learning_rate [, positional hyperparameters] [, {options}])
 * and the keyword form <Class>{learning_rate = ..., ...}: one binding for
 * every class of train/'s table (its kind is the upvalue). The options
 * table, at 'oi', is checked for unknown keys; a table at 'oi' + 1 collects
 * the hyperparameters read at every apply. */
static int l_optimizer(lua_State *L)
{
    MfOptKind kind = (MfOptKind)lua_tointeger(L, lua_upvalueindex(1));
    const MfOptClass *k = mf_opt_class(kind);
    const char *keys[MF_OPT_MAX_OPTIONS + 1];
    int oi = 2 + mf_opt_option_names(kind, keys);
    lmf_check_nargs(L, k->class_name, oi);
    keyword_form(L, k);
    /* checked before the stack is cut, so a missing one says "no value" */
    for (int i = 0, idx = 2; i < k->nhypers; i++)
        if (k->hypers[i].positional)
            check_required(L, idx++, kind, &k->hypers[i]);
    if (!lua_isnoneornil(L, oi))
        luaL_checktype(L, oi, LUA_TTABLE);
    lmf_check_options(L, oi, k->class_name, keys);
    lua_settop(L, oi);
    lua_newtable(L);
    MfOptConfig c = mf_opt_config_default(kind, 0);
    for (int i = 0, idx = 2; i < k->nhypers; i++) {
        if (k->hypers[i].positional)
            take_hyper(L, idx++, &k->hypers[i], oi + 1, &c);
        else
            read_hyper_option(L, oi, &k->hypers[i], oi + 1, &c);
    }
    bool callable = read_lr(L, k->class_name, &c);
    return push_opt(L, &c, callable, oi);
}

/* ---- compute_gradients ------------------------------------------------------------- */

typedef struct LossCtx {
    lua_State *L;
    int fn;
    const char *who;   /* the function called: minimize or compute_gradients */
    bool lua_failed;   /* the error object is on top of the stack */
} LossCtx;

/* Calls the loss function (protected); its tensor is retained into '*loss'. */
static MfStatus call_loss(void *ctx, MfTensor **loss)
{
    LossCtx *c = ctx;
    lua_State *L = c->L;
    lua_pushvalue(L, c->fn);
    if (lmf_pcall(L, 0, 1) != LUA_OK) {   /* the message names it (DistributedOptimizer) */
        c->lua_failed = true;
        const char *msg = lua_tostring(L, -1);
        return mf_err_set(MF_EARG, "%s: the loss function raised an error: %s", c->who,
                          msg ? msg : luaL_typename(L, -1));
    }
    MfTensor *t = lmf_test_tensor(L, -1);
    if (!t) {
        MfStatus st = mf_err_set(MF_EARG, "%s: the loss function must return a tensor, got %s",
                                 c->who, type_name(L, -1));
        lua_pop(L, 1);
        return st;
    }
    mf_tensor_retain(t);
    lua_pop(L, 1);
    *loss = t;
    return MF_OK;
}

/* The var_list option of the table at 'oi' into a userdata array (pushed;
 * nil and '*out' NULL when absent); returns the count. */
static int read_var_list(lua_State *L, int oi, const char *who, MfVariable ***out)
{
    *out = NULL;
    if (!lua_isnoneornil(L, oi))
        luaL_checktype(L, oi, LUA_TTABLE);
    if (!lmf_opt_field(L, oi, "var_list")) {
        lua_pushnil(L);
        return 0;
    }
    if (!lua_istable(L, -1))
        luaL_error(L, "%s: var_list must be an array of Variables, got %s", who,
                   type_name(L, -1));
    int n = (int)luaL_len(L, -1);
    MfVariable **vs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *vs, 0);
    for (int i = 1; i <= n; i++) {
        lua_geti(L, -2, i);
        vs[i - 1] = lmf_test_variable(L, -1);
        if (!vs[i - 1])
            luaL_error(L, "%s: var_list[%d] must be a Variable, got %s", who, i,
                       type_name(L, -1));
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    *out = vs;
    return n;
}

/* Pushes the Variable box for 'v' (a reference the caller owns, stolen):
 * for a graph Variable handle, the very box mf.Variable made for its node
 * (so `pair[2] == w` holds), else a box for 'v'. */
static void push_var(lua_State *L, MfVariable *v)
{
    MfNode *node = mf_mode_variable_node(v);
    lmf_push_variable(L, v);
    if (node) {   /* v's box keeps the node's graph alive meanwhile */
        lmf_push_graph_variable(L, node);
        lua_remove(L, -2);
    }
}

/* Pushes the pairs as an array of {grad, var, n = 2} (n set on the array too). */
static void push_pairs(lua_State *L, MfGradVar *pairs, int n)
{
    lua_createtable(L, n, 1);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 2, 1);
        if (pairs[i].grad) {
            lmf_push_tensor(L, pairs[i].grad);
            pairs[i].grad = NULL;
            lua_seti(L, -2, 1);
        }
        push_var(L, pairs[i].var);
        pairs[i].var = NULL;
        lua_seti(L, -2, 2);
        lua_pushinteger(L, 2);
        lua_setfield(L, -2, "n");
        lua_seti(L, -2, i + 1);
    }
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "n");
}

/* The options of the DistributedOptimizer at 1, NULL for a plain one. */
static const MfDistOptions *dist_options(lua_State *L)
{
    OptBox *box = luaL_checkudata(L, 1, OPT_MT);
    return box->distributed ? &box->dist : NULL;
}

/* Runs the loss at 2 (eager: a function; graph mode: a graph tensor) with
 * the options at 3; pushes the pairs and the loss. */
static void compute(lua_State *L, const char *who)
{
    MfTensor *sym = lmf_test_tensor(L, 2);
    bool graph = sym && sym->node;
    if (!graph && !is_callable(L, 2))
        luaL_error(L, "%s: in eager mode the loss must be a function of no arguments, got %s "
                   "(in graph mode: a graph tensor)", who, type_name(L, 2));
    MfVariable **vs;
    int nv = read_var_list(L, 3, who, &vs);
    LossCtx ctx = {L, 2, who, false};
    MfGradVar *pairs = NULL;
    int n = 0;
    MfTensor *loss = NULL;
    MfStatus st = graph ? mf_train_compute_gradients_graph_dist(sym, nv, vs, dist_options(L),
                                                                &pairs, &n)
                        : mf_train_compute_gradients_dist(call_loss, &ctx, nv, vs,
                                                          dist_options(L), &loss, &pairs, &n);
    if (ctx.lua_failed) {
        mf_err_clear();
        lua_error(L);
    }
    lmf_check_status(L, st);
    ((OptBox *)lua_touserdata(L, 1))->averaged = true;
    lua_pop(L, 1);
    push_pairs(L, pairs, n);
    mf_grad_vars_free(pairs, n);
    if (graph)
        lua_pushvalue(L, 2);
    else
        lmf_push_tensor(L, loss);
}

/* TensorFlow 1.x's positional forms into the options table at 3:
 * compute_gradients(loss, var_list) and minimize(loss, global_step
 * [, var_list]). An array whose first entry is a Variable is a var_list. */
static void positional_opts(lua_State *L, bool minimize)
{
    lua_settop(L, 4);
    bool gs = minimize && lmf_test_variable(L, 3);
    bool list = false;
    if (lua_istable(L, gs ? 4 : 3)) {
        lua_geti(L, gs ? 4 : 3, 1);
        list = lmf_test_variable(L, -1) != NULL;
        lua_pop(L, 1);
    }
    if (!gs && !list) {
        if (!lua_isnil(L, 4))
            luaL_error(L, "%s: expected (loss [, options]), got a 3rd argument (%s)",
                       minimize ? "minimize" : "compute_gradients", type_name(L, 4));
        lua_settop(L, 3);
        return;
    }
    lua_createtable(L, 0, 2);
    if (gs) {
        lua_pushvalue(L, 3);
        lua_setfield(L, -2, "global_step");
    }
    if (list) {
        lua_pushvalue(L, gs ? 4 : 3);
        lua_setfield(L, -2, "var_list");
    }
    lua_replace(L, 3);
    lua_settop(L, 3);
}

/* opt:compute_gradients(loss_fn [, {var_list} | var_list]) -> pairs, loss */
static int o_compute_gradients(lua_State *L)
{
    static const char *const known[] = {"var_list", NULL};
    check_opt(L, 1);
    positional_opts(L, false);
    lmf_check_options(L, 3, "compute_gradients", known);
    compute(L, "compute_gradients");
    return 2;
}

/* ---- apply_gradients --------------------------------------------------------------- */

/* Checks the pairs at 'idx' (Lua errors allowed); returns their count. */
static int check_pairs(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        luaL_error(L, "apply_gradients: expected an array of {grad, var} pairs, got %s",
                   type_name(L, idx));
    int n = (int)luaL_len(L, idx);
    for (int i = 1; i <= n; i++) {
        if (lua_geti(L, idx, i) != LUA_TTABLE)
            luaL_error(L, "apply_gradients: pair %d must be a table {grad, var}, got %s", i,
                       type_name(L, -1));
        lua_geti(L, -1, 1);
        if (!lua_isnil(L, -1) && !lmf_test_tensor(L, -1))
            luaL_error(L, "apply_gradients: pair %d: the gradient must be a tensor or nil, "
                       "got %s", i, type_name(L, -1));
        lua_geti(L, -2, 2);
        if (!lmf_test_variable(L, -1))
            luaL_error(L, "apply_gradients: pair %d: the second element must be a Variable, "
                       "got %s", i, type_name(L, -1));
        int t = lua_geti(L, -3, 3);
        if (t != LUA_TNIL && t != LUA_TNUMBER && !lmf_test_tensor(L, -1))
            luaL_error(L, "apply_gradients: pair %d: the third element (a weight decay) must "
                       "be a number or a scalar tensor, got %s", i, type_name(L, -1));
        lua_pop(L, 4);
    }
    return n;
}

/* The checked pairs at 'idx' with their own references (no Lua errors but
 * out of memory: a number given as a pair's decay becomes a tensor). */
static MfGradVar *copy_pairs(lua_State *L, int idx, int n)
{
    MfGradVar *p = mf_grad_vars_new(n);
    for (int i = 0; p && i < n; i++) {
        lua_geti(L, idx, i + 1);
        lua_geti(L, -1, 1);
        p[i].grad = lua_isnil(L, -1) ? NULL : lmf_test_tensor(L, -1);
        mf_tensor_retain(p[i].grad);
        lua_geti(L, -2, 2);
        p[i].var = lmf_test_variable(L, -1);
        mf_variable_retain(p[i].var);
        bool number = lua_geti(L, -3, 3) == LUA_TNUMBER;
        if (number)
            p[i].decay = mf_tensor_scalar(MF_FLOAT64, lua_tonumber(L, -1));
        else if (!lua_isnil(L, -1) && (p[i].decay = lmf_test_tensor(L, -1)))
            mf_tensor_retain(p[i].decay);
        lua_pop(L, 4);
        if (number && !p[i].decay) {
            mf_grad_vars_free(p, n);
            return NULL;
        }
    }
    return p;
}

/* The learning rate for this step: the callable's result (pushed, converted
 * to a tensor), or NULL (nothing pushed) when the rate is not callable. An
 * error of the callable (a schedule whose step Variable was closed since)
 * is raised after "who: learning_rate function: ", so it names the call. */
static MfTensor *step_lr(lua_State *L, int oi, const char *who)
{
    OptBox *box = luaL_checkudata(L, oi, OPT_MT);
    if (!box->lr_callable)
        return NULL;
    lua_getiuservalue(L, oi, 1);
    if (lmf_pcall(L, 0, 1) != LUA_OK) {
        if (lua_type(L, -1) == LUA_TSTRING)
            luaL_error(L, "%s: learning_rate function: %s", who, lua_tostring(L, -1));
        lua_error(L);
    }
    if (lua_type(L, -1) != LUA_TNUMBER && !lmf_test_tensor(L, -1))
        luaL_error(L, "%s: the learning_rate function must return a number or a scalar "
                   "tensor, got %s", who, type_name(L, -1));
    return lmf_arg_tensor(L, lua_gettop(L), MF_FLOAT64, who);
}

/* The global_step option of the table at 'oi' (NULL when absent). */
static MfVariable *read_global_step(lua_State *L, int oi, const char *who)
{
    if (lua_isnoneornil(L, oi))
        return NULL;
    luaL_checktype(L, oi, LUA_TTABLE);
    lua_getfield(L, oi, "global_step");
    MfVariable *gs = lua_isnil(L, -1) ? NULL : lmf_test_variable(L, -1);
    if (!gs && !lua_isnil(L, -1))
        luaL_error(L, "%s: global_step must be a Variable (see mf.train.global_step()), got %s",
                   who, type_name(L, -1));
    lua_pop(L, 1);
    return gs;
}

/* The nonfinite option of the table at 'oi': what a gradient holding NaN
 * or Inf does (train.h): "error" (the default), "skip" or "apply". */
static MfApplyNonfinite read_nonfinite(lua_State *L, int oi, const char *who)
{
    MfApplyNonfinite k = MF_APPLY_NONFINITE_ERROR;
    if (lmf_opt_field(L, oi, "nonfinite")) {
        const char *name = lmf_name_string(L, -1);
        lmf_check_status(L, mf_apply_nonfinite_named(who, name, lmf_value_text(L, -1), &k));
        lua_pop(L, 2);
    }
    return k;
}

/* Applies the pairs at 'pi' with the options at 'oi'; in graph mode pushes
 * the train op and returns 1, else returns 0. */
static int apply(lua_State *L, int pi, int oi, const char *who)
{
    MfOptimizer *o = check_opt(L, 1);
    OptBox *box = lua_touserdata(L, 1);
    bool average = box->distributed && !box->averaged;   /* see OptBox */
    MfDistOptions dist = box->dist;
    box->averaged = false;
    refresh_hypers(L, 1, o, who);
    int n = check_pairs(L, pi);
    MfVariable *gs = read_global_step(L, oi, who);
    MfApplyNonfinite nonfinite = read_nonfinite(L, oi, who);
    MfTensor *lr = step_lr(L, 1, who);
    MfGradVar *pairs = copy_pairs(L, pi, n);
    /* the options' __index, the learning-rate function or a finalizer may
     * have closed the optimizer since check_opt (issue #35 M2) */
    if (!((OptBox *)lua_touserdata(L, 1))->o) {
        mf_grad_vars_free(pairs, n);
        check_opt(L, 1);   /* raises "optimizer is closed" */
    }
    o = check_opt(L, 1);
    if (pairs)
        mf_optimizer_next_nonfinite(o, nonfinite);   /* taken by the apply below */
    MfNode *op = NULL;   /* mode/train.c decides: eager, graph or traced */
    MfStatus st = pairs ? MF_OK : MF_ENOMEM;
    if (st == MF_OK && average)
        st = mf_train_average_for_apply(pairs, n, &dist);
    if (st == MF_OK)
        st = mf_train_apply_gradients(o, n, pairs, lr, gs, &op);
    mf_grad_vars_free(pairs, n);
    if (st != MF_OK)
        lmf_raise(L);
    if (!op)
        return 0;
    lmf_push_operation(L, op);
    return 1;
}

/* opt:apply_gradients(pairs [, {global_step, nonfinite = "error"}]) ->
 * nothing (eager; the update is done) or the train op (graph mode) */
static int o_apply_gradients(lua_State *L)
{
    static const char *const known[] = {"global_step", "nonfinite", NULL};
    lua_settop(L, 3);
    lmf_check_options(L, 3, "apply_gradients", known);
    return apply(L, 2, 3, "apply_gradients");
}

/* opt:minimize(loss [, {var_list, global_step}]) -> the loss (eager: loss is
 * a function) or the train op (graph: loss is a graph tensor) */
static int o_minimize(lua_State *L)
{
    static const char *const known[] = {"var_list", "global_step", "nonfinite", NULL};
    check_opt(L, 1);
    positional_opts(L, true);
    lmf_check_options(L, 3, "minimize", known);
    compute(L, "minimize");          /* pairs at 4, loss at 5 */
    if (apply(L, 4, 3, "minimize"))
        return 1;        /* the train op */
    lua_settop(L, 5);    /* the loss */
    return 1;
}

/* ---- slots, printing --------------------------------------------------------------- */

/* opt:get_slot_names() -> {"m", "v"} */
static int o_get_slot_names(lua_State *L)
{
    lmf_check_nargs(L, "get_slot_names", 1);
    const char *names[2];
    int n = mf_optimizer_slot_names(check_opt(L, 1), names);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, names[i]);
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

/* opt:get_slot(var, name) -> Variable, or nil before the first apply. */
static int o_get_slot(lua_State *L)
{
    lmf_check_nargs(L, "get_slot", 3);
    MfOptimizer *o = check_opt(L, 1);
    MfVariable *var = lmf_check_variable(L, 2);
    const char *name = luaL_checkstring(L, 3);
    MfVariable *slot;
    if (mf_optimizer_get_slot(o, var, name, &slot) != MF_OK)
        return lmf_raise(L);
    if (!slot) {
        lua_pushnil(L);
        return 1;
    }
    mf_variable_retain(slot);
    push_var(L, slot);
    return 1;
}

/* opt:variables() -> the optimizer's own Variables (TensorFlow 1.x's
 * Optimizer.variables(), train/'s mf_optimizer_variables): inside
 * g:as_default those of that graph, else the eager ones. */
static int o_variables(lua_State *L)
{
    lmf_check_nargs(L, "variables", 1);
    MfOptimizer *o = check_opt(L, 1);
    int n = mf_optimizer_variables(o, NULL, 0);
    MfVariable **vs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *vs, 0);
    mf_optimizer_variables(o, vs, n);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        mf_variable_retain(vs[i]);   /* the optimizer at 1 holds them meanwhile */
        push_var(L, vs[i]);
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

/* opt:get_name() -> "Adam" */
static int o_get_name(lua_State *L)
{
    lmf_check_nargs(L, "get_name", 1);
    lua_pushstring(L, mf_optimizer_config(check_opt(L, 1))->name);
    return 1;
}

/* print(opt): AdamOptimizer(learning_rate=0.001, beta1=0.9, ...) name="Adam", slots m, v
 * for 2 variables */
static int o_tostring(lua_State *L)
{
    OptBox *box = luaL_checkudata(L, 1, OPT_MT);
    if (!box->o) {
        lua_pushliteral(L, "<Optimizer (closed)>");
        return 1;
    }
    MfStrBuf *b = lmf_new_strbuf(L);
    MfStatus st = mf_optimizer_describe_dist(box->o, box->lr_callable,
                                             box->distributed ? &box->dist : NULL, b);
    lmf_push_strbuf(L, b, st == MF_OK ? mf_strbuf_status(b, "tostring") : st);
    return 1;
}

static int o_gc(lua_State *L)
{
    OptBox *box = luaL_checkudata(L, 1, OPT_MT);
    mf_optimizer_release(box->o);
    box->o = NULL;
    return 0;
}

/* ---- global step and decay --------------------------------------------------------- */

/* mf.train.global_step() -> eager: the process's int64 "global_step"
 * Variable (non-trainable, 0 at first), made on the first call; while a
 * graph is built: that graph's "global_step" variable, made on first use
 * (mode/train.c decides). The eager one's box is kept in the registry, so
 * every call gives the same object; a closed step (<close> or its __close)
 * is forgotten and a fresh one, at 0, takes its place, as TensorFlow's
 * get_or_create_global_step makes a new step once the old one is gone. */
static int l_global_step(lua_State *L)
{
    lmf_check_nargs(L, "global_step", 0);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &global_step_key);
    MfVariable *kept = lmf_test_variable(L, -1);   /* NULL when absent or closed */
    if (!kept)
        mf_train_global_step_forget();
    MfVariable *v;
    lmf_check_status(L, mf_train_global_step(&v));
    if (v == kept) {
        mf_variable_release(v);
        return 1;
    }
    lua_pop(L, 1);
    bool eager = v == mf_train_eager_global_step();
    push_var(L, v);
    if (eager) {
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &global_step_key);
    }
    return 1;
}

MfVariable *lmf_global_step(lua_State *L, bool create)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &global_step_key);
    MfVariable *v = lmf_test_variable(L, -1);   /* NULL when absent or closed */
    lua_pop(L, 1);
    if (v || !create)
        return v;
    lua_pushcfunction(L, l_global_step);
    lua_call(L, 0, 1);
    v = lmf_test_variable(L, -1);
    lua_pop(L, 1);
    return v;
}

MfOptimizer *lmf_test_optimizer(lua_State *L, int idx)
{
    OptBox *box = luaL_testudata(L, idx, OPT_MT);
    return box ? box->o : NULL;
}

/* mf.dist.DistributedOptimizer(opt [, {check = true, fusion_bytes = 64 MiB,
 * overlap = true, bucket_bytes = 4 KiB}]) -> an optimizer with opt's
 * interface, slots and name (the same engine optimizer, shared), whose
 * compute_gradients (so minimize too) averages the gradients over the
 * processes. */
int lmf_distributed_optimizer(lua_State *L)
{
    static const char *const known[] = {"check", "fusion_bytes", "overlap", "bucket_bytes",
                                        NULL};
    const char *who = "DistributedOptimizer";
    OptBox *inner = luaL_testudata(L, 1, OPT_MT);
    if (!inner)
        return luaL_error(L, "%s: expected an optimizer (e.g. mf.train.AdamOptimizer(0.01)), "
                          "got %s", who, type_name(L, 1));
    if (!inner->o)
        return luaL_error(L, "%s: the optimizer is closed", who);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lmf_check_options(L, 2, who, known);
    MfDistOptions d = mf_dist_options_default();
    d.check = lmf_opt_bool(L, 2, who, "check", d.check);
    d.fusion_bytes = lmf_opt_integer(L, 2, who, "fusion_bytes", d.fusion_bytes);
    d.overlap = lmf_opt_bool(L, 2, who, "overlap", d.overlap);
    d.bucket_bytes = lmf_opt_integer(L, 2, who, "bucket_bytes", d.bucket_bytes);
    lmf_check_status(L, mf_dist_options_check(&d));
    OptBox *box = lua_newuserdatauv(L, sizeof *box, 2);
    *box = (OptBox){NULL, inner->lr_callable, true, false, d};
    luaL_setmetatable(L, OPT_MT);
    for (int k = 1; k <= 2; k++) {   /* the learning rate and the hyperparameters */
        lua_getiuservalue(L, 1, k);
        lua_setiuservalue(L, -2, k);
    }
    mf_optimizer_retain(inner->o);
    box->o = inner->o;
    return 1;
}

void lmf_open_train(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"compute_gradients", o_compute_gradients}, {"apply_gradients", o_apply_gradients},
        {"minimize", o_minimize}, {"get_slot_names", o_get_slot_names},
        {"get_slot", o_get_slot}, {"get_name", o_get_name}, {"variables", o_variables},
        {NULL, NULL}};
    static const luaL_Reg meta[] = {{"__tostring", o_tostring}, {"__gc", o_gc}, {NULL, NULL}};
    static const luaL_Reg fns[] = {
        {"global_step", l_global_step},
        {NULL, NULL}};
    lmf_box_class(L, OPT_MT, meta, methods);
    lmf_sub_table(L, "train");
    luaL_setfuncs(L, fns, 0);
    for (int kind = 0; kind < MF_OPT_NKINDS; kind++) {
        lua_pushinteger(L, kind);
        lua_pushcclosure(L, l_optimizer, 1);
        lua_setfield(L, -2, mf_opt_kind_class((MfOptKind)kind));
    }
    lua_pop(L, 1);
}
