/* lmf_trace.c — mf.trace(f): TensorFlow's tf.function ("function" is a Lua
 * keyword). The result is a callable "mf.Function": on the first call for
 * an input signature it calls 'f' once with placeholders while a fresh
 * graph is the default (tracing), then, on that and every later call, runs
 * the graph (graph/trace.c) with the arguments fed.
 *
 * The signature of a call: per argument, a tensor's dtype and shape; a
 * Variable, function or other object by identity; numbers, strings and
 * booleans by value (Lua code branching on them traces again); arrays
 * recursively (their tensors become placeholders too).
 * Results: any mix of tensors, Variables, nested arrays of them and plain
 * Lua values; the values come back in the same structure.
 *
 * mf.trace(t) with a tensor is still the matrix trace (the linalg
 * function, kept as upvalue): a function or callable argument traces.
 *
 * Lua layout: the Function userdata's user value is a table {f = fn,
 * cache = {[signature] = entry}, count = traces}; an entry is a table
 * {trace = <mf.Trace box>, template = {...}, n = number of returns}. */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "mode/mode.h"
#include "train/train.h"
#include "lmf_callback.h"
#include "lmf_print.h"
#include "lmf.h"

#define FUNCTION_MT "mf.Function"
#define TRACE_MT "mf.Trace"
#define MARK_MT "mf.TraceResult"
#define GUARD_MT "mf.TraceGuard"
#define MAX_DEPTH 16

typedef struct TraceBox {
    MfTrace *t;
} TraceBox;

static int trace_gc(lua_State *L)
{
    TraceBox *box = luaL_checkudata(L, 1, TRACE_MT);
    mf_trace_free(box->t);
    box->t = NULL;
    return 0;
}

/* ---- signatures ------------------------------------------------------------------- */

/* Appends the signature of the value at 'idx' to 'b' (the parts and their
 * encoding: graph/trace_signature.c). */
static void add_signature(lua_State *L, MfStrBuf *b, int idx, int depth)
{
    idx = lua_absindex(L, idx);
    MfVariable *v = lmf_test_variable(L, idx);
    MfTensor *t = v ? NULL : lmf_test_tensor(L, idx);
    if (t) {
        mf_sig_tensor(b, t);
    } else if (lua_type(L, idx) == LUA_TNUMBER) {
        if (lua_isinteger(L, idx))
            mf_sig_integer(b, (long long)lua_tointeger(L, idx));
        else
            mf_sig_number(b, lua_tonumber(L, idx));
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        size_t n;
        const char *str = lua_tolstring(L, idx, &n);
        mf_sig_string(b, str, n);
    } else if (lua_type(L, idx) == LUA_TBOOLEAN) {
        mf_sig_boolean(b, lua_toboolean(L, idx));
    } else if (lua_isnil(L, idx)) {
        mf_sig_nil(b);
    } else if (lmf_nest_is_structure(L, idx) && depth < MAX_DEPTH) {
        lua_Integer n = luaL_len(L, idx);
        mf_sig_array_begin(b);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, idx, i);
            add_signature(L, b, -1, depth + 1);
            lua_pop(L, 1);
            mf_sig_array_item_end(b);
        }
        mf_sig_array_end(b);
    } else {           /* Variables, functions, other objects: by identity */
        mf_sig_identity(b, luaL_typename(L, idx), lua_topointer(L, idx));
    }
}

/* Pushes the signature of arguments 2..top. */
static void push_signature(lua_State *L, int top)
{
    MfStrBuf *b = lmf_new_strbuf(L);   /* freed by its box if an error ends the walk */
    for (int i = 2; i <= top; i++) {
        add_signature(L, b, i, 0);
        mf_sig_arg_end(b);
    }
    lmf_push_strbuf(L, b, mf_strbuf_status(b, "trace"));
}

/* ---- arguments: placeholders while tracing, fed values when running ---- */

/* Tracing: pushes the value at 'idx' with every tensor in it replaced by a
 * placeholder of 'tr' (named "arg<i>" / "arg<i>_<k>"). */
static void push_traced_arg(lua_State *L, MfTrace *tr, int idx, const char *name, int depth)
{
    idx = lua_absindex(L, idx);
    MfTensor *t = lmf_test_variable(L, idx) ? NULL : lmf_test_tensor(L, idx), *ph;
    if (t) {
        lmf_check_status(L, mf_trace_add_arg(tr, t, name, &ph));
        lmf_push_tensor(L, ph);
    } else if (lmf_nest_is_structure(L, idx) && depth < MAX_DEPTH) {
        lua_Integer n = luaL_len(L, idx);
        lua_createtable(L, (int)n, 0);
        for (lua_Integer i = 1; i <= n; i++) {
            char sub[200];
            snprintf(sub, sizeof sub, "%.180s_%d", name, (int)i);
            lua_geti(L, idx, i);
            push_traced_arg(L, tr, -1, sub, depth + 1);
            lua_seti(L, -3, i);
            lua_pop(L, 1);
        }
    } else {
        lua_pushvalue(L, idx);
    }
}

/* Running: appends the tensors in the value at 'idx' (in the order
 * push_traced_arg made placeholders) to the array at 'list'. */
static void collect_args(lua_State *L, int idx, int list, int depth)
{
    idx = lua_absindex(L, idx);
    if (!lmf_test_variable(L, idx) && lmf_test_tensor(L, idx)) {
        lua_pushvalue(L, idx);
        lua_seti(L, list, (lua_Integer)luaL_len(L, list) + 1);
    } else if (lmf_nest_is_structure(L, idx) && depth < MAX_DEPTH) {
        lua_Integer n = luaL_len(L, idx);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, idx, i);
            collect_args(L, -1, list, depth + 1);
            lua_pop(L, 1);
        }
    }
}

/* ---- results: a template with markers where tensors were -------------------- */

/* Results are a structure (lmf_nest.c) of any values; the cache keeps a
 * copy of it, the template, where a marker (a MARK_MT userdata holding k)
 * stands for each tensor, the trace's k-th result. */

/* Pushes the template at 'idx' filled with the values in array 'vals'. */
static void push_filled(lua_State *L, int idx, int vals)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    int leaves = lua_gettop(L);
    lua_Integer n = 0, k = 0;
    lmf_nest_flatten(L, idx, leaves, &n, "trace");
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, leaves, i);
        lua_Integer *mark = luaL_testudata(L, -1, MARK_MT);
        if (mark) {
            lua_rawgeti(L, vals, *mark);
            lua_seti(L, leaves, i);
        }
        lua_pop(L, 1);
    }
    lmf_nest_rebuild(L, idx, leaves, &k, false);
    lua_remove(L, leaves);
}

/* ---- tracing ----------------------------------------------------------------------- */

/* A to-be-closed guard that pops the default graph pushed for tracing, on
 * success (lua_closeslot) as on any error, so none stays in force. */
static int guard_close(lua_State *L)
{
    bool *armed = luaL_checkudata(L, 1, GUARD_MT); /* not any userdata: a tensor box */
    if (*armed) {
        *armed = false;
        mf_graph_pop_default();
    }
    return 0;
}

static int push_guard(lua_State *L, MfGraph *g)
{
    bool *armed = lua_newuserdatauv(L, sizeof *armed, 0);
    *armed = false;
    luaL_setmetatable(L, GUARD_MT);
    int idx = lua_gettop(L);
    lua_toclose(L, idx);
    lmf_check_status(L, mf_graph_push_default(g));
    *armed = true;
    return idx;
}

/* Reads the 'nret' results above 'base' into a template (pushed) and ends
 * the trace with the tensors in them. Runs while the graph is still the
 * default, so returned Variables read as their captures. Errors name 'who'. */
static int end_trace(lua_State *L, MfTrace *tr, int base, int nret, const char *who)
{
    lua_createtable(L, nret, 0);   /* the results as one structure */
    for (int i = 0; i < nret; i++) {
        lua_pushvalue(L, base + i);
        lua_rawseti(L, -2, i + 1);
    }
    int results = lua_gettop(L);
    lua_newtable(L);
    int leaves = lua_gettop(L);
    lua_Integer n = 0, k = 0;
    lmf_nest_flatten(L, results, leaves, &n, who);
    MfTensor **res = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *res, 0);
    lua_createtable(L, (int)n, 0);   /* the slots that own res[] */
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, leaves, i);
        if (!(res[k] = lmf_test_tensor(L, -1))) {
            lua_pop(L, 1);
            continue;
        }
        lua_rawseti(L, -2, ++k);
        lua_Integer *mark = lua_newuserdatauv(L, sizeof *mark, 0);
        *mark = k;
        luaL_setmetatable(L, MARK_MT);
        lua_seti(L, leaves, i);
    }
    lmf_check_status(L, mf_trace_finish(tr, (int)k, res));
    lua_Integer j = 0;
    lmf_nest_rebuild(L, results, leaves, &j, false);
    return lua_gettop(L);
}

/* Raises the error at the top of the stack prefixed with "<who>: ", so an
 * error of the wrapped function (a C function called from here has no
 * name: "bad argument #2 to '?'") or of the traced graph's run says which
 * call raised it. Non-string errors, Ctrl-C and errors already so prefixed
 * pass unchanged. */
static int raise_as(lua_State *L, const char *who)
{
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    size_t n = strlen(who);
    if (msg && !strstr(msg, "interrupted!") && !(strncmp(msg, who, n) == 0 && msg[n] == ':')) {
        lua_pushfstring(L, "%s: %s", who, msg);
        lua_remove(L, -2);
    }
    return lua_error(L);
}

/* trace_call's body, run protected: 1 = the TraceBox, 2..top-2 = the
 * arguments, top-1 = f, top = who (a light userdata string). Returns the
 * template and the result count. */
static int trace_body(lua_State *L)
{
    const char *who = lua_touserdata(L, -1);
    lua_pop(L, 1);
    int top = lua_gettop(L) - 1;
    MfTrace *tr = ((TraceBox *)lua_touserdata(L, 1))->t;
    int base = lua_gettop(L);   /* f */
    for (int i = 2; i <= top; i++) {
        char name[32];
        snprintf(name, sizeof name, "arg%d", i - 1);
        push_traced_arg(L, tr, i, name, 0);
    }
    if (lmf_pcall(L, top - 1, LUA_MULTRET) != LUA_OK)
        raise_as(L, who);
    int nret = lua_gettop(L) - base + 1;
    lua_pushvalue(L, end_trace(L, tr, base, nret, who));
    lua_pushinteger(L, nret);
    return 2;
}

/* Calls 'f' (at 'fn') on args 2..top with a new trace's graph as the
 * default; on success pushes the cache entry {trace, template, n}. Errors
 * name 'who'. The body runs protected and the graph is popped before any
 * error goes on: a to-be-closed guard alone is not closed when the error
 * ends a coroutine (until coroutine.close), and every eager op after would
 * be symbolic. */
static void trace_call(lua_State *L, int fn, int top, const char *who)
{
    TraceBox *box = lua_newuserdatauv(L, sizeof *box, 0);
    box->t = NULL;
    luaL_setmetatable(L, TRACE_MT);
    int boxi = lua_gettop(L);
    if (!(box->t = mf_trace_new()))
        lmf_raise(L);
    lua_getiuservalue(L, 1, 1);
    bool unfused = lua_getfield(L, -1, "fusion") == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    lua_pop(L, 2);
    if (unfused && mf_graph_set_fusion(mf_trace_graph(box->t), false) != MF_OK)
        lmf_raise(L);
    int guard = push_guard(L, mf_trace_graph(box->t));
    lua_pushcfunction(L, trace_body);
    lua_pushvalue(L, boxi);
    for (int i = 2; i <= top; i++)
        lua_pushvalue(L, i);
    lua_pushvalue(L, fn);
    lua_pushlightuserdata(L, (void *)who);
    int st = lua_pcall(L, top + 2, 2, 0);
    lua_closeslot(L, guard);
    if (st != LUA_OK)
        lua_error(L);
    int tmpl = lua_gettop(L) - 1;
    int nret = (int)lua_tointeger(L, -1);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, boxi);
    lua_setfield(L, -2, "trace");
    lua_pushvalue(L, tmpl);
    lua_setfield(L, -2, "template");
    lua_pushinteger(L, nret);
    lua_setfield(L, -2, "n");
}

/* Prints the warning of graph/trace_signature.c (a function traced again
 * and again) with the place of the call, when trace 'count' deserves it. */
static void warn_retracing(lua_State *L, int count)
{
    int base = lua_gettop(L);
    lua_Debug ar;
    const char *where = lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
                                ar.currentline > 0
                            ? lua_pushfstring(L, " (called at %s:%d)", ar.short_src,
                                              ar.currentline)
                            : "";
    char msg[640];
    if (mf_trace_retrace_warning(count, where, msg, sizeof msg))
        fprintf(stderr, "moonflow: warning: %s\n", msg);
    lua_settop(L, base);
}

/* Pushes the cache entry for args 2..top of the Function at 1, tracing on
 * a miss (errors name 'who'). */
static void entry_for(lua_State *L, int top, const char *who)
{
    lua_getiuservalue(L, 1, 1);
    int state = lua_gettop(L);
    lua_getfield(L, state, "cache");
    int cache = lua_gettop(L);
    push_signature(L, top);
    int key = lua_gettop(L);
    lua_pushvalue(L, key);
    if (lua_rawget(L, cache) != LUA_TNIL) {
        lua_replace(L, state);
        lua_settop(L, state);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, state, "f");
    trace_call(L, lua_gettop(L), top, who);
    lua_pushvalue(L, key);
    lua_pushvalue(L, -2);
    lua_rawset(L, cache);
    lua_getfield(L, state, "count");
    lua_Integer c = lua_tointeger(L, -1) + 1;
    lua_pop(L, 1);
    lua_pushinteger(L, c);
    lua_setfield(L, state, "count");
    warn_retracing(L, (int)c);
    lua_replace(L, state);
    lua_settop(L, state);
}

/* ---- the Function object ----------------------------------------------------------- */

static void check_function(lua_State *L)
{
    luaL_checkudata(L, 1, FUNCTION_MT);
}

/* Calls 'f' itself on args 2..top (when mf_train_trace_runs_inline: inside
 * another graph, or under a recording GradientTape). */
static int call_plain(lua_State *L, int top)
{
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, "f");
    lua_replace(L, 1);
    lua_pop(L, 1);
    if (lmf_pcall(L, top - 1, LUA_MULTRET) != LUA_OK)
        return raise_as(L, "traced function");
    return lua_gettop(L);
}

/* Pushes the call's results: the entry's template filled with the 'nres'
 * values (owned, handed to Lua). Returns how many. */
static int push_results(lua_State *L, int entry, int nres, MfTensor **res)
{
    lua_createtable(L, nres, 0);
    int vals = lua_gettop(L);
    for (int i = 0; i < nres; i++) {
        lmf_push_tensor(L, res[i]);
        lua_rawseti(L, vals, i + 1);
    }
    lua_getfield(L, entry, "template");
    push_filled(L, -1, vals);
    int filled = lua_gettop(L);
    lua_getfield(L, entry, "n");
    int nret = (int)lua_tointeger(L, -1);
    luaL_checkstack(L, nret + 4, "trace: too many results");
    for (int i = 1; i <= nret; i++)
        lua_rawgeti(L, filled, i);
    return nret;
}

/* fn(...): trace on a new signature, then run the graph. */
static int fn_call(lua_State *L)
{
    check_function(L);
    int top = lua_gettop(L);
    if (mf_train_trace_runs_inline())
        return call_plain(L, top);
    MfTrace *tr = lmf_function_trace(L, top, "traced function");
    int entry = lua_gettop(L);
    lua_newtable(L);
    int list = lua_gettop(L);
    for (int i = 2; i <= top; i++)
        collect_args(L, i, list, 0);
    int nargs = (int)luaL_len(L, list);
    MfTensor **args = lua_newuserdatauv(L, ((size_t)nargs + 1) * sizeof *args, 0);
    for (int i = 0; i < nargs; i++) {
        lua_rawgeti(L, list, i + 1);
        args[i] = lmf_check_tensor(L, -1);
        lua_rawseti(L, list, i + 1);   /* the slot that owns args[i] */
    }
    int nres = mf_trace_nresults(tr);
    MfTensor **res = lua_newuserdatauv(L, ((size_t)nres + 1) * sizeof *res, 0);
    if (mf_trace_call(tr, nargs, args, res) != MF_OK) {
        lmf_push_engine_error(L);
        return raise_as(L, "traced function");
    }
    return push_results(L, entry, nres, res);
}

MfTrace *lmf_function_trace(lua_State *L, int top, const char *who)
{
    check_function(L);
    entry_for(L, top, who);
    lua_getfield(L, -1, "trace");
    MfTrace *tr = ((TraceBox *)luaL_checkudata(L, -1, TRACE_MT))->t;
    lua_pop(L, 1);
    return tr;
}

bool lmf_is_function(lua_State *L, int idx)
{
    return luaL_testudata(L, idx, FUNCTION_MT) != NULL;
}

/* fn:graph(...) -> the mf.Graph traced for these arguments (traced now if
 * this signature is new; the function is not run). */
static int fn_graph(lua_State *L)
{
    lmf_push_graph(L, mf_trace_graph(lmf_function_trace(L, lua_gettop(L), "graph")));
    return 1;
}

/* fn:trace_count() -> how many signatures have been traced. */
static int fn_trace_count(lua_State *L)
{
    lmf_check_nargs(L, "trace_count", 1);
    check_function(L);
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, "count");
    return 1;
}

static int fn_tostring(lua_State *L)
{
    check_function(L);
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, "count");
    lua_pushfstring(L, "<mf.Function (traced for %d signature%s)>", (int)lua_tointeger(L, -1),
                    lua_tointeger(L, -1) == 1 ? "" : "s");
    return 1;
}

/* mf.trace(f [, {fusion = true}]) -> a traced Function (fusion = false:
 * its graphs run every node on its own, graph/fusion.h); mf.trace(t) ->
 * the matrix trace. */
static int l_trace(lua_State *L)
{
    bool callable = lua_isfunction(L, 1) || (lua_type(L, 1) == LUA_TTABLE &&
                                             luaL_getmetafield(L, 1, "__call") != LUA_TNIL &&
                                             (lua_pop(L, 1), true));
    if (!callable) {
        /* the op binding names 'trace' in its errors itself */
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
        return lua_gettop(L);
    }
    if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
        return luaL_error(L, "trace: mf.trace(f [, {fusion}]) takes an options table after "
                          "the function, got %s", luaL_typename(L, 2));
    /* any argument after the options (a third, or a fifth after nils) is
     * refused: tf.function's other options have no meaning here */
    lmf_check_nargs(L, "trace", 2);
    static const char *const known[] = {"fusion", NULL};
    lmf_check_options(L, 2, "trace", known);
    int fusion = lmf_opt_bool(L, 2, "trace", "fusion", 1);
    lua_newuserdatauv(L, 0, 1);
    luaL_setmetatable(L, FUNCTION_MT);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "f");
    lua_newtable(L);
    lua_setfield(L, -2, "cache");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "count");
    lua_pushboolean(L, fusion);
    lua_setfield(L, -2, "fusion");
    lua_setiuservalue(L, -2, 1);
    return 1;
}

/* mf.init_scope(fn, ...) -> fn(...): TensorFlow's tf.init_scope. Inside
 * mf.trace, 'fn' runs eagerly (a layer's first call makes its Variables and
 * their initial values once, outside the traced graph); elsewhere (eager,
 * g:as_default) it simply calls 'fn'. */
static int l_init_scope(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int top = lua_gettop(L);
    if (mf_graph_is_function(mf_graph_default())) {
        int guard = push_guard(L, NULL); /* closed on return and on errors */
        for (int i = 1; i <= top; i++)
            lua_pushvalue(L, i);
        lua_call(L, top - 1, LUA_MULTRET);
        lua_closeslot(L, guard);
        return lua_gettop(L) - guard;
    }
    lua_call(L, top - 1, LUA_MULTRET);
    return lua_gettop(L);
}

void lmf_open_trace(lua_State *L)
{
    static const luaL_Reg meths[] = {{"graph", fn_graph}, {"trace_count", fn_trace_count},
                                     {NULL, NULL}};
    luaL_newmetatable(L, FUNCTION_MT);
    luaL_newlib(L, meths);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, fn_call);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, fn_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    luaL_newmetatable(L, TRACE_MT);
    lua_pushcfunction(L, trace_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, MARK_MT);
    lua_pop(L, 1);
    luaL_newmetatable(L, GUARD_MT);
    lua_pushcfunction(L, guard_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
    lua_getfield(L, -1, "trace");     /* the matrix trace (repl/lmf_op.c) */
    lua_pushcclosure(L, l_trace, 1);
    lua_setfield(L, -2, "trace");
    lua_pushcfunction(L, l_init_scope);
    lua_setfield(L, -2, "init_scope");
}
