/* lmf_tape.c — eager autodiff from Lua: the "mf.GradientTape" userdata
 * (watch, stop, gradient, explain, printing), mf.custom_gradient and
 * mf.test.gradcheck (mf.grad is lib/grad.lua, over the tape).
 *
 * Ownership: a tape box owns one reference to its MfTape; __gc/__close
 * release it (which stops the tape). A custom gradient's Lua function
 * is kept in the registry by the MfTapeFunction the tapes hold, or, in graph
 * mode, the graph node marking f's result (released with the graph, or when
 * its trace finishes); it is called on the lua_State that is computing or
 * building the gradient ('grad_L', see lmf_set_grad_state). */
#include <stdlib.h>

#include "eager/eager.h"
#include "graph/graph.h"
#include "lmf_callback.h"
#include "lmf_explain.h"
#include "lmf_print.h"
#include "lmf.h"
#include "mode/mode.h"
#include "train/train.h"

#define TAPE_MT "mf.GradientTape"

/* A tape box: the tape and its window on a graph being built (mf.trace:
 * mode/tape_window.c). */
typedef struct TapeBox {
    MfTape *t;
    MfTapeWindow win;
} TapeBox;

/* The state running the current 'gradient' (custom gradients call Lua there). */
static lua_State *grad_L;

/* The open tape box at 'idx'. */
static TapeBox *check_box(lua_State *L, int idx)
{
    TapeBox *box = luaL_checkudata(L, idx, TAPE_MT);
    if (!box->t)
        luaL_argerror(L, idx, "GradientTape is closed");
    return box;
}

static MfTape *check_tape(lua_State *L, int idx)
{
    return check_box(L, idx)->t;
}

/* A gradient source: a Variable (checked first: a tensor check would read
 * it) or a tensor. */
static MfTapeSource check_source(lua_State *L, int idx)
{
    MfTapeSource s = {NULL, NULL};
    s.variable = lmf_test_variable(L, idx);
    if (s.variable) {
        if (!s.variable->value)
            luaL_argerror(L, idx, "variable has no value yet");
        return s;
    }
    s.tensor = lmf_check_tensor(L, idx);
    return s;
}

lua_State *lmf_set_grad_state(lua_State *L)
{
    lua_State *saved = grad_L;
    grad_L = L;
    return saved;
}

/* ---- mf.GradientTape ------------------------------------------------------ */

/* mf.GradientTape{persistent = false, watch_accessed_variables = true} */
static int l_tape_new(lua_State *L)
{
    lmf_check_nargs(L, "GradientTape", 1);
    static const char *const known[] = {"persistent", "watch_accessed_variables", NULL};
    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TTABLE);
    lmf_check_options(L, 1, "GradientTape", known);
    bool persistent = lmf_opt_bool(L, 1, "GradientTape", "persistent", 0);
    bool watch = lmf_opt_bool(L, 1, "GradientTape", "watch_accessed_variables", 1);
    TapeBox *box = lua_newuserdatauv(L, sizeof *box, 0);
    if (!(box->t = mf_tape_new(persistent, watch)))
        return lmf_raise(L);
    luaL_setmetatable(L, TAPE_MT);
    mf_tape_window_open(&box->win);
    return 1;
}

static int t_gc(lua_State *L)
{
    TapeBox *box = luaL_checkudata(L, 1, TAPE_MT);
    mf_tape_release(box->t);
    box->t = NULL;
    return 0;
}

/* Watches the source at 'idx' on the tape at 1, read after the source:
 * converting it may run a finalizer that closes the tape (issue #35 M2). */
static void watch_one(lua_State *L, int idx)
{
    MfTapeSource s = check_source(L, idx);
    MfTape *t = check_tape(L, 1);
    MfStatus st = s.variable ? mf_tape_watch_variable(t, s.variable) : mf_tape_watch(t, s.tensor);
    lmf_check_status(L, st);
}

/* tape:watch(t or Variable or array of them) */
static int t_watch(lua_State *L)
{
    lmf_check_nargs(L, "watch", 2);
    check_tape(L, 1);
    if (!lua_istable(L, 2)) {
        watch_one(L, 2);
        return 0;
    }
    lua_Integer n = luaL_len(L, 2);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 2, i);
        watch_one(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    return 0;
}

/* tape:stop(): stops the tape, closing its window on the graph being built. */
static int t_stop(lua_State *L)
{
    lmf_check_nargs(L, "stop", 1);
    TapeBox *box = check_box(L, 1);
    mf_tape_window_stop(&box->win, box->t);
    return 0;
}

/* The sources at 'idx' (one, or a structure: an array, a string-keyed
 * table, nested) into a userdata array pushed on the stack, after the
 * array of their leaves (also pushed); returns the count. */
static int read_sources(lua_State *L, int idx, MfTapeSource **out)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    int leaves = lua_gettop(L);
    lua_Integer n = 0;
    lmf_nest_flatten(L, idx, leaves, &n, "gradient");
    luaL_argcheck(L, n >= 1 && n <= 100000, idx, "expected at least one source");
    *out = lua_newuserdatauv(L, (size_t)n * sizeof **out, 1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, leaves, i);
        if (lua_isnil(L, -1))
            luaL_error(L, "gradient: source %d is nil", (int)i);
        (*out)[i - 1] = check_source(L, -1);
        lmf_keep(L, -2);   /* the source (or the slot owning its tensor) stays */
    }
    return (int)n;
}

/* The options of tape:gradient at 'idx': 'unconnected', and
 * 'output_gradients' (a tensor, or TensorFlow's list of one), which is
 * pushed (nil when absent) so the stack keeps it alive. */
static MfTensor *read_grad_opts(lua_State *L, int idx, bool *zero, const char *fname)
{
    static const char *const modes[] = {"none", "zero", NULL};
    *zero = false;
    if (lua_isnoneornil(L, idx)) {
        lua_pushnil(L);
        return NULL;
    }
    static const char *const known[] = {"output_gradients", "unconnected", NULL};
    luaL_checktype(L, idx, LUA_TTABLE);
    lmf_check_options(L, idx, fname, known);
    lua_getfield(L, idx, "unconnected");
    if (!lua_isnil(L, -1) && lua_type(L, -1) == LUA_TSTRING && !lmf_name_string(L, -1))
        luaL_error(L, "%s: option 'unconnected' must be \"none\" or \"zero\", got %s", fname,
                   lmf_value_text(L, -1));   /* luaL_checkoption would stop at the NUL */
    if (!lua_isnil(L, -1))
        *zero = luaL_checkoption(L, -1, NULL, modes) == 1;
    lua_pop(L, 1);
    lua_getfield(L, idx, "output_gradients");
    if (lua_istable(L, -1)) {
        lua_geti(L, -1, 1);
        lua_replace(L, -2);
    }
    return lua_isnil(L, -1) ? NULL : lmf_arg_tensor(L, -1, -1, fname);
}

/* Pushes the gradients in the structure of the sources at 'sidx' (one
 * gradient, or an array / keyed table / nesting of them). */
static void push_grads(lua_State *L, int n, MfTensor **grads, int sidx)
{
    for (int i = 0; i < n; i++)
        if (!grads[i])
            lmf_note_nil_gradient(0);
    sidx = lua_absindex(L, sidx);
    if (!lmf_nest_is_structure(L, sidx)) {
        if (grads[0])
            lmf_push_tensor(L, grads[0]);
        else
            lua_pushnil(L);
        grads[0] = NULL;
        return;
    }
    lua_createtable(L, n, 0);
    int leaves = lua_gettop(L);
    for (int i = 0; i < n; i++) {
        if (grads[i]) {
            lmf_push_tensor(L, grads[i]);
            grads[i] = NULL;
            lua_seti(L, leaves, i + 1);
        }
    }
    lua_Integer k = 0;
    lmf_nest_rebuild(L, sidx, leaves, &k, true);
    lua_remove(L, leaves);
}

/* The targets at 'idx' (one tensor or Variable, or a structure of them,
 * as TensorFlow's list or dict of targets) into a userdata array pushed
 * after the array of leaves; returns the count. */
static int read_targets(lua_State *L, int idx, MfTensor ***out)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    int leaves = lua_gettop(L);
    lua_Integer n = 0;
    lmf_nest_flatten(L, idx, leaves, &n, "gradient");
    luaL_argcheck(L, n >= 1 && n <= 100000, idx, "expected a target tensor or a table of them");
    *out = lua_newuserdatauv(L, (size_t)n * sizeof **out, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, leaves, i);
        if (!((*out)[i - 1] = lmf_test_tensor(L, -1)))
            luaL_error(L, "gradient: target %d must be a tensor or a Variable, got %s", (int)i,
                       luaL_typename(L, -1));
        lua_rawseti(L, leaves, i);   /* the slot that owns the target stays */
    }
    return (int)n;
}

/* tape:gradient(targets, sources [, {output_gradients, unconnected}]) */
static int t_gradient(lua_State *L)
{
    lmf_check_nargs(L, "gradient", 4);
    check_tape(L, 1);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    bool zero;
    lua_settop(L, 4);
    MfTensor *og = read_grad_opts(L, 4, &zero, "gradient");
    MfTensor **ts;
    int nt = read_targets(L, 2, &ts);
    MfTapeSource *src;
    int n = read_sources(L, 3, &src);
    MfTensor **grads = lua_newuserdatauv(L, (size_t)n * sizeof *grads, 0);
    for (int i = 0; i < n; i++)
        grads[i] = NULL;
    TapeBox *box = check_box(L, 1);   /* still open after the reads' metamethods */
    MfTape *t = box->t;
    lua_State *saved = lmf_set_grad_state(L);   /* custom gradients run on L */
    mf_tape_retain(t);   /* for the walk: a custom gradient may free the box's reference */
    MfStatus st = mf_tape_window_gradients(&box->win, t, nt, ts, n, src, og, zero, grads);
    mf_tape_release(t);
    lmf_set_grad_state(saved);
    if (st != MF_OK)
        lmf_raise(L);
    push_grads(L, n, grads, 3);
    return 1;
}

/* tape:jacobian(target, {x1, x2, ...} [, {unconnected}]): one jacobian per
 * source, in the sources' structure (TensorFlow's list of sources). */
static int jacobians(lua_State *L)
{
    MfTensor *y = lmf_check_tensor(L, 2);
    MfTapeSource *src;
    int n = read_sources(L, 3, &src);
    bool zero;
    if (read_grad_opts(L, 4, &zero, "jacobian"))
        return luaL_error(L, "jacobian: output_gradients is not an option of a jacobian");
    MfTensor **outs = lua_newuserdatauv(L, (size_t)n * sizeof *outs, 0);
    TapeBox *box = check_box(L, 1);   /* still open after the options' metamethods */
    MfTape *t = box->t;
    lua_State *saved = lmf_set_grad_state(L);
    mf_tape_retain(t);
    MfStatus st = mf_tape_window_jacobians(&box->win, t, y, n, src, zero, false, outs);
    mf_tape_release(t);
    lmf_set_grad_state(saved);
    if (st != MF_OK)
        return lmf_raise(L);
    push_grads(L, n, outs, 3);
    return 1;
}

/* tape:jacobian(target, source [, {unconnected}]) and tape:batch_jacobian */
static int jacobian(lua_State *L, const char *fname, bool batch)
{
    lmf_check_nargs(L, fname, 4);
    check_tape(L, 1);
    if (!batch && lmf_nest_is_structure(L, 3)) {
        lua_settop(L, 4);
        return jacobians(L);
    }
    MfTensor *y = lmf_check_tensor(L, 2), *out = NULL;
    MfTapeSource src = check_source(L, 3);
    bool zero;
    lua_settop(L, 4);
    if (read_grad_opts(L, 4, &zero, fname))
        return luaL_error(L, "%s: output_gradients is not an option of a jacobian", fname);
    TapeBox *box = check_box(L, 1);   /* still open after the options' metamethods */
    MfTape *t = box->t;
    lua_State *saved = lmf_set_grad_state(L);
    mf_tape_retain(t);   /* for the walk, as in t_gradient */
    MfStatus st = mf_tape_window_jacobians(&box->win, t, y, 1, &src, zero, batch, &out);
    mf_tape_release(t);
    lmf_set_grad_state(saved);
    if (st != MF_OK)
        return lmf_raise(L);
    if (out)
        lmf_push_tensor(L, out);
    else
        lua_pushnil(L);
    return 1;
}

static int t_jacobian(lua_State *L)
{
    return jacobian(L, "jacobian", false);
}

static int t_batch_jacobian(lua_State *L)
{
    return jacobian(L, "batch_jacobian", true);
}

/* tape:stop_recording(fn, ...) -> fn's results: what fn computes is not
 * recorded by this tape (TensorFlow's `with tape.stop_recording():`). */
static int t_stop_recording(lua_State *L)
{
    MfTape *t = check_tape(L, 1);
    if (!lua_isfunction(L, 2) && luaL_getmetafield(L, 2, "__call") == LUA_TNIL)
        return lmf_arg_error(L, 2, "stop_recording", "a function");
    lua_settop(L, lua_gettop(L) - (lua_isfunction(L, 2) ? 0 : 1));
    int base = 1;
    mf_tape_pause(t);
    int rc = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
    TapeBox *box = luaL_checkudata(L, 1, TAPE_MT);
    if (box->t)   /* closed by fn meanwhile: nothing left to resume */
        mf_tape_unpause(box->t);
    if (rc != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - base;
}

/* tape:reset(): forgets what the tape recorded and watched (TensorFlow's
 * tape.reset()); a recording tape goes on recording. */
static int t_reset(lua_State *L)
{
    lmf_check_nargs(L, "reset", 1);
    TapeBox *box = check_box(L, 1);
    mf_tape_window_reset(&box->win, box->t);
    return 0;
}

/* tape:watched_variables() -> array of the Variables the tape watched, in
 * creation order (TensorFlow's order of first use is not kept). */
static int t_watched_variables(lua_State *L)
{
    lmf_check_nargs(L, "watched_variables", 1);
    int64_t n = mf_tape_variables(check_tape(L, 1), NULL, 0);
    MfVariable **vs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *vs, 0);
    mf_tape_variables(check_tape(L, 1), vs, n);   /* the allocation may run a finalizer */
    lua_createtable(L, (int)n, 0);
    for (int64_t i = 0; i < n; i++) {
        mf_variable_retain(vs[i]);
        lmf_push_variable(L, vs[i]);
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

/* tape:explain(target, source) -> string */
static int t_explain(lua_State *L)
{
    lmf_check_nargs(L, "explain", 3);
    check_tape(L, 1);
    MfTensor *target = lmf_check_tensor(L, 2);
    MfTapeSource s = check_source(L, 3);
    char buf[512];
    mf_tape_explain(check_tape(L, 1), target, &s, buf, sizeof buf);   /* after the conversions */
    lua_pushstring(L, buf);
    return 1;
}

/* print(tape): the tape's listing (eager/listing.c). */
static int t_tostring(lua_State *L)
{
    TapeBox *box = luaL_checkudata(L, 1, TAPE_MT);
    if (!box->t) {
        lua_pushliteral(L, "<GradientTape (closed)>");
        return 1;
    }
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_tape_listing(box->t, b));
    return 1;
}

/* custom_gradient and gradcheck take at most this many arguments / inputs */
#define MAX_ARGS 64

/* ---- mf.custom_gradient ---------------------------------------------------- */

/* A custom gradient: the Lua function 'grad_fn' kept in the registry. */
typedef struct LuaFn {
    MfTapeFunction base;
    lua_State *main;   /* for luaL_unref when the last tape lets go */
    int ref;           /* the function (eager), or LUA_NOREF: */
    const MfGraph *graph;   /* kept by this graph's Lua objects (lmf_graph_fns.c) */
    lua_Integer key;        /* ... under this key */
    int vars_ref;      /* the array of Variables f read (TensorFlow's 'variables'), or LUA_NOREF */
    int nvars;         /* their count: the last 'nvars' inputs are their values */
} LuaFn;

typedef struct GradFnCall {
    LuaFn *fn;
    int nout, nin;
    MfTensor *const *dout;
    MfTensor *const *in;
    MfTensor **din;
} GradFnCall;

/* Pushes "f reads the trainable variable 'w', which is not one of its
 * inputs" for the first Variable of the array at 'vidx'. */
static const char *reads_text(lua_State *L, int vidx)
{
    lua_geti(L, vidx, 1);
    MfVariable *v = lmf_test_variable(L, -1);
    lua_pop(L, 1);
    return lua_pushfstring(L, "f reads the trainable variable '%s', which is not one of its "
                           "inputs", v ? v->name : "?");
}

/* The gradient function's last result when f read Variables: a table of
 * their gradients, whose entries replace it on the stack. */
static void var_grads(lua_State *L, const GradFnCall *a)
{
    int nv = a->fn->nvars;
    if (!lua_istable(L, -1)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->fn->vars_ref);
        luaL_error(L, "%s: the gradient function gets such Variables as its last argument "
                   "('variables', as TensorFlow's) and returns, after the input gradients, a "
                   "table of %d gradient(s) for them; got %s", reads_text(L, lua_gettop(L)),
                   nv, luaL_typename(L, -2));
    }
    int t = lua_gettop(L);
    for (int j = 1; j <= nv; j++)
        lua_geti(L, t, j);
    lua_remove(L, t);
}

/* Runs under lua_pcall: grad_fn(dy... [, variables]) -> one gradient (or nil) per
 * input [, a table of gradients for the variables]. */
static int call_grad_fn(lua_State *L)
{
    GradFnCall *a = lua_touserdata(L, 1);
    int nv = a->fn->nvars, nx = a->nin - nv;
    if (!a->fn->graph)
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->fn->ref);
    else if (!lmf_graph_push_fn(L, a->fn->graph, a->fn->key))
        return luaL_error(L, "the gradient function is gone: no Lua object holds its graph "
                          "any more (internal error)");
    for (int j = 0; j < a->nout; j++) {
        mf_tensor_retain(a->dout[j]);
        lmf_push_tensor(L, a->dout[j]);
    }
    if (nv)
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->fn->vars_ref);
    lua_call(L, a->nout + (nv ? 1 : 0), nx + (nv ? 1 : 0));
    if (nv)
        var_grads(L, a);
    int base = lua_gettop(L) - a->nin + 1;
    for (int i = 0; i < a->nin; i++) {
        int idx = base + i;
        if (lua_isnil(L, idx))
            continue;
        if (lua_type(L, idx) != LUA_TNUMBER && !lmf_test_tensor(L, idx))
            return luaL_error(L, "the gradient function returned a %s for input %d; expected "
                              "a tensor or nil", luaL_typename(L, idx), i + 1);
        MfTensor *g = lmf_arg_tensor(L, idx, (int)a->in[i]->dtype, "custom_gradient");
        mf_tensor_retain(g);
        a->din[i] = g;
    }
    return 0;
}

/* The gradient function runs on the state computing the gradient; engine
 * code that computes gradients without one set (an optimizer's minimize)
 * runs it on the main thread, the one a script runs on. */
static MfStatus luafn_backward(MfTapeFunction *f, int noutputs, MfTensor *const *doutputs,
                               int ninputs, MfTensor *const *inputs, MfTensor **dinputs)
{
    lua_State *L = grad_L ? grad_L : ((LuaFn *)f)->main;
    GradFnCall a = {(LuaFn *)f, noutputs, ninputs, doutputs, inputs, dinputs};
    lua_pushcfunction(L, call_grad_fn);
    lua_pushlightuserdata(L, &a);
    if (lmf_pcall(L, 1, 0) == LUA_OK)
        return MF_OK;
    for (int i = 0; i < ninputs; i++) {
        mf_tensor_release(dinputs[i]);
        dinputs[i] = NULL;
    }
    const char *msg = lua_tostring(L, -1);
    MfStatus st = mf_err_set(MF_EARG, "custom_gradient: the gradient function failed: %s",
                             msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return st;
}

static void luafn_free(MfTapeFunction *f)
{
    LuaFn *lf = (LuaFn *)f;
    if (lf->graph)
        lmf_graph_drop_fn(lf->main, lf->graph, lf->key);
    luaL_unref(lf->main, LUA_REGISTRYINDEX, lf->ref);
    luaL_unref(lf->main, LUA_REGISTRYINDEX, lf->vars_ref);
    free(lf);
}

/* A LuaFn (one reference) for the gradient function on top of the stack
 * (popped) and the Variables in the array at 'vidx'. In graph mode ('g')
 * the graph's Lua objects keep the function, not the registry: the
 * function may hold a tensor of the graph (see lmf_graph_fns.c). */
static LuaFn *new_luafn(lua_State *L, const MfGraph *g, int vidx)
{
    LuaFn *lf = malloc(sizeof *lf);
    if (!lf)
        luaL_error(L, "custom_gradient: out of memory");
    *lf = (LuaFn){.base = {1, "custom_gradient", luafn_backward, luafn_free}, .graph = g,
                  .ref = LUA_NOREF, .vars_ref = LUA_NOREF, .nvars = (int)lua_rawlen(L, vidx)};
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lf->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (g)
        lf->key = lmf_graph_keep_fn(L, g);
    else
        lf->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (lf->nvars) {
        lua_pushvalue(L, vidx);
        lf->vars_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    return lf;
}

/* Pushes the array of the trainable variables f read while a tape watched
 * them that are not among its arguments (eager.h: mf_tape_custom_begin):
 * TensorFlow's 'variables' of the gradient function; also into 'read'. */
static int push_reads(lua_State *L, int mark, int nargs, MfVariable **read)
{
    MfVariable *vs[MAX_ARGS];
    int nv = 0;
    for (int i = 1; i <= nargs; i++)
        if ((vs[nv] = lmf_test_variable(L, i)) != NULL)
            nv++;
    int n = mf_tape_custom_end_all(mark, nv, vs, read, MAX_ARGS - nargs);
    lua_createtable(L, n, 0);
    for (int j = 0; j < n; j++) {
        lmf_push_variable(L, read[j]);
        lua_seti(L, -2, j + 1);
    }
    return n;
}

static int custom_call(lua_State *L)
{
    int nargs = lua_gettop(L), nin = 0;
    MfTensor *in[MAX_ARGS];
    MfVariable *read[MAX_ARGS];
    if (nargs > MAX_ARGS)
        return luaL_error(L, "custom_gradient: at most %d arguments", MAX_ARGS);
    for (int i = 1; i <= nargs; i++)
        if (lua_type(L, i) == LUA_TNUMBER || lmf_test_tensor(L, i))
            in[nin++] = lmf_arg_tensor(L, i, -1, "custom_gradient");
    lua_pushvalue(L, lua_upvalueindex(1));
    for (int i = 1; i <= nargs; i++)
        lua_pushvalue(L, i);
    MfCustomScope scope = mf_custom_gradient_begin();
    if (lmf_pcall(L, nargs, 2) != LUA_OK) {
        mf_variable_release(mf_tape_custom_end(scope.reads, 0, NULL));
        return lua_error(L);
    }
    int nread = push_reads(L, scope.reads, nargs, read);
    lua_insert(L, -3);   /* under y and the gradient function */
    int vidx = lua_gettop(L) - 2;
    MfTensor *y = lmf_test_tensor(L, -2), *out = NULL;
    if (!y || !lua_isfunction(L, -1))
        return luaL_error(L, "custom_gradient: f must return y (a tensor) and a gradient "
                          "function, got %s and %s", luaL_typename(L, -2), luaL_typename(L, -1));
    LuaFn *lf = new_luafn(L, y->node ? mf_tensor_graph(y) : NULL, vidx);
    lmf_check_status(L, mf_custom_gradient_attach(&scope, &lf->base, nin, in, nread, read, y,
                                                  &out));
    if (out)
        lmf_push_tensor(L, out);
    return 1;
}

/* mf.custom_gradient(f): f(...) returns y, function(dy) return dx... end */
static int l_custom_gradient(lua_State *L)
{
    lmf_check_nargs(L, "custom_gradient", 1);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_pushcclosure(L, custom_call, 1);
    return 1;
}

/* ---- mf.test.gradcheck ----------------------------------------------------- */

/* A float64 contiguous copy of the input at 'idx' (Lua data converted),
 * pushed. */
static MfTensor *push_f64_copy(lua_State *L, int idx)
{
    MfTensor *x = mf_gradcheck_input(lmf_arg_tensor(L, idx, MF_FLOAT64, "gradcheck"));
    if (!x)
        lmf_raise(L);
    lmf_push_tensor(L, x);
    return x;
}

/* What the check calls: f (slot 1) on the input boxes in slots
 * first..first+n-1, which hold the very tensors eager/gradcheck.c perturbs;
 * run protected, its error object left on top ('lua_failed'). The first
 * mismatch is kept in 'bad'. */
typedef struct CheckCtx {
    lua_State *L;
    int first;
    bool lua_failed, found;
    MfGradcheckMismatch bad;
} CheckCtx;

static MfStatus call_checked(void *ctx, int n, MfTensor *const *inputs, int *nout,
                             MfTensor **outs)
{
    CheckCtx *c = ctx;
    lua_State *L = c->L;
    (void)inputs;
    lua_pushvalue(L, 1);
    for (int i = 0; i < n; i++)
        lua_pushvalue(L, c->first + i);
    if (lmf_pcall(L, n, 1) != LUA_OK) {
        c->lua_failed = true;
        return mf_err_set(MF_EARG, "gradcheck: f raised an error");
    }
    MfTensor *y = lmf_test_tensor(L, -1);
    if (!y) {
        MfStatus st = mf_err_set(MF_EARG, "gradcheck: f must return a tensor, got %s",
                                 luaL_typename(L, -1));
        lua_pop(L, 1);
        return st;
    }
    mf_tensor_retain(y);
    lua_pop(L, 1);
    outs[0] = y;
    *nout = 1;
    return MF_OK;
}

static void keep_mismatch(void *ctx, const MfGradcheckMismatch *m)
{
    CheckCtx *c = ctx;
    c->found = true;
    c->bad = *m;
}

/* mf.test.gradcheck(f, inputs [, {eps, atol, rtol}]) -> true | false, message
 * (eager/gradcheck.c checks; the inputs are float64 copies) */
static int l_gradcheck(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"eps", "atol", "rtol", NULL};
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TTABLE);
    lmf_check_options(L, 3, "gradcheck", known);
    MfGradcheckOptions o = mf_gradcheck_defaults();
    o.eps = lmf_opt_number(L, 3, "gradcheck", "eps", o.eps);
    o.atol = lmf_opt_number(L, 3, "gradcheck", "atol", o.atol);
    o.rtol = lmf_opt_number(L, 3, "gradcheck", "rtol", o.rtol);
    int n = (int)luaL_len(L, 2);
    luaL_argcheck(L, n >= 1 && n <= MAX_ARGS, 2, "expected an array of 1 to 64 inputs");
    lua_settop(L, 3);
    luaL_checkstack(L, 2 * n + 8, "gradcheck: too many inputs");
    MfTensor *xs[MAX_ARGS];
    for (int i = 0; i < n; i++) {
        lua_geti(L, 2, i + 1);
        xs[i] = push_f64_copy(L, -1);
        lua_remove(L, -2);
    }
    CheckCtx c = {L, 4, false, false, {0}};
    o.report = keep_mismatch;
    o.report_ctx = &c;
    int nbad = 0;
    lua_State *saved = lmf_set_grad_state(L);   /* custom gradients run on L */
    MfStatus st = mf_gradcheck(call_checked, &c, n, xs, &o, &nbad);
    lmf_set_grad_state(saved);
    if (c.lua_failed) {
        mf_err_clear();
        return lua_error(L);
    }
    lmf_check_status(L, st);
    if (!c.found) {
        lua_pushboolean(L, 1);
        return 1;
    }
    char msg[MF_MAX_RANK * 21 + 160];
    lua_pushboolean(L, 0);
    lua_pushstring(L, mf_gradcheck_message(&c.bad, xs[c.bad.input], msg, sizeof msg));
    return 2;
}

/* ---- registration ------------------------------------------------------- */

void lmf_open_tape(lua_State *L, int methods)
{
    static const luaL_Reg meta[] = {
        {"__gc", t_gc}, {"__close", t_gc}, {"__tostring", t_tostring}, {NULL, NULL}};
    static const luaL_Reg meths[] = {
        {"watch", t_watch}, {"stop", t_stop}, {"gradient", t_gradient},
        {"explain", t_explain}, {"jacobian", t_jacobian}, {"batch_jacobian", t_batch_jacobian},
        {"stop_recording", t_stop_recording}, {"reset", t_reset},
        {"watched_variables", t_watched_variables}, {NULL, NULL}};
    static const luaL_Reg funcs[] = {
        {"GradientTape", l_tape_new}, {"custom_gradient", l_custom_gradient}, {NULL, NULL}};
    (void)methods;
    luaL_newmetatable(L, TAPE_MT);
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, meths);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_setfuncs(L, funcs, 0);
    if (lua_getfield(L, -1, "test") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "test");
    }
    lua_pushcfunction(L, l_gradcheck);
    lua_setfield(L, -2, "gradcheck");
    lua_pop(L, 1);
}
