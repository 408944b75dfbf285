/* lmf_onnx.c — mf.onnx.export and fn:export_onnx (graph/onnx.c).
 *
 *   mf.onnx.export(fn, "model.onnx", {inputs = {x}, outputs = {"logits"}, opset = 13})
 *       a traced mf.Function, for the signature of the example arguments
 *       'inputs' (traced now when new); 'outputs' optionally names its results
 *   mf.onnx.export(g, "model.onnx", {inputs = {x_ph}, outputs = {y}, session = sess})
 *       a graph's fetches 'outputs' (tensors or "name:0") computed from the
 *       placeholders 'inputs'; graph Variables take their values in 'session'
 *   fn:export_onnx("model.onnx", example_args...)
 *
 * Variables become initializers holding their values at export time. An op
 * that ONNX export does not map is an error naming the op and the node. */
#include <string.h>

#include "graph/interchange.h"
#include "lmf.h"

#define DEFAULT_OPSET 13

static const char *const known_options[] = {"inputs", "outputs", "opset", "session",
                                            "input_names", "output_names", NULL};

/* A NULL-terminated array of the strings in the array field 'key' of the
 * options at 'opts' (NULL when absent); the table stays on the stack, so
 * the strings live as long as the call. */
static const char **opt_names(lua_State *L, int opts, const char *key)
{
    if (lua_getfield(L, opts, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    if (!lua_istable(L, -1))
        luaL_error(L, "onnx.export: option '%s' must be an array of strings, got %s", key,
                   luaL_typename(L, -1));
    int t = lua_gettop(L);
    lua_Integer n = luaL_len(L, t);
    const char **names = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *names, 1);
    lua_createtable(L, (int)n, 0);   /* holds the strings while 'names' lives */
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_geti(L, t, i) != LUA_TSTRING)
            luaL_error(L, "onnx.export: %s[%d] must be a string, got %s", key, (int)i,
                       luaL_typename(L, -1));
        names[i - 1] = lua_tostring(L, -1);
        lua_rawseti(L, -2, i);
    }
    lua_setiuservalue(L, -2, 1);
    names[n] = NULL;
    return names;
}

/* Exports trace 'tr' (its entry kept on the stack by the caller). */
static void export_trace(lua_State *L, MfTrace *tr, const char *path, MfOnnxOptions *o)
{
    int nin, nout;
    MfTensor *const *in = mf_trace_args(tr, &nin);
    MfTensor *const *out = mf_trace_results(tr, &nout);
    o->vars = mf_trace_vars(tr);
    lmf_check_written(L, mf_onnx_export(mf_trace_graph(tr), nin, in, nout, out, o, path));
}

/* mf.onnx.export(fn, path, opts): the example arguments go after fn, as a
 * call of fn would have them, for the trace lookup. */
static int export_function(lua_State *L, const char *path, int opts, MfOnnxOptions *o)
{
    if (!lua_istable(L, opts) || lua_getfield(L, opts, "inputs") != LUA_TTABLE)
        return luaL_error(L, "onnx.export: a traced function needs its example arguments: "
                          "{inputs = {x, ...}} (they pick the traced signature)");
    int args = lua_gettop(L);
    lua_Integer n = luaL_len(L, args);
    luaL_checkstack(L, (int)n + 8, "onnx.export: too many inputs");
    lua_pushvalue(L, 1);                 /* fn, args... above everything */
    for (lua_Integer i = 1; i <= n; i++)
        lua_geti(L, args, i);
    /* move fn and its arguments down to slot 1 (the Function's slot) */
    lua_rotate(L, 1, (int)n + 1);
    MfTrace *tr = lmf_function_trace(L, (int)n + 1, "onnx.export");
    export_trace(L, tr, path, o);
    return 0;
}

/* Fills 'ts' with the tensors of the array field 'key' (strings are looked
 * up as "node:k" in 'g'); returns how many. */
static int graph_tensors(lua_State *L, int opts, const char *key, MfGraph *g, MfTensor ***ts)
{
    if (lua_getfield(L, opts, key) != LUA_TTABLE)
        luaL_error(L, "onnx.export: a graph needs {%s = {...}} (an array of tensors), got %s",
                   key, luaL_typename(L, -1));
    int t = lua_gettop(L);
    int n = (int)luaL_len(L, t);
    *ts = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof **ts, 1);
    lua_createtable(L, n, 0);   /* holds the tensors while '*ts' lives */
    int hold = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        lua_geti(L, t, i);
        if (lua_type(L, -1) == LUA_TSTRING) {
            MfTensor *x = mf_graph_get_tensor(g, lua_tostring(L, -1), "onnx.export");
            if (!x)
                lmf_raise(L);
            lmf_push_tensor(L, x);
            lua_replace(L, -2);
        }
        MfTensor *x = lmf_test_tensor(L, -1);
        if (!x || lmf_test_variable(L, -1))
            luaL_error(L, "onnx.export: %s[%d] must be a tensor of the graph, got %s", key, i,
                       luaL_typename(L, -1));
        (*ts)[i - 1] = x;
        lua_rawseti(L, hold, i);
    }
    lua_setiuservalue(L, -2, 1);
    return n;
}

static int export_graph(lua_State *L, const char *path, int opts, MfOnnxOptions *o)
{
    MfGraph *g = lmf_check_graph(L, 1);
    if (!lua_istable(L, opts))
        return luaL_error(L, "onnx.export: a graph needs {inputs = {placeholders...}, outputs "
                          "= {tensors...}}");
    MfTensor **in, **out;
    int nin = graph_tensors(L, opts, "inputs", g, &in);
    int nout = graph_tensors(L, opts, "outputs", g, &out);
    lua_getfield(L, opts, "session");
    if (!lua_isnil(L, -1)) {
        MfSession *s = lmf_test_session(L, -1);
        if (!s)
            return luaL_error(L, "onnx.export: session must be an mf.Session, got %s",
                              luaL_typename(L, -1));
        if (mf_session_graph(s) != g)
            return luaL_error(L, "onnx.export: the session runs another graph");
        o->vars = mf_session_vars(s);
    }
    lmf_check_written(L, mf_onnx_export(g, nin, in, nout, out, o, path));
    return 0;
}

/* mf.onnx.export(f_or_graph, path [, opts]) */
static int l_export(lua_State *L)
{
    const char *path = lmf_check_path(L, 2, "onnx.export");
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TTABLE);
    if (lua_gettop(L) > 3)
        return luaL_error(L, "onnx.export: expected (f_or_graph, path [, options]), got %d "
                          "arguments", lua_gettop(L));
    lua_settop(L, 3);
    lmf_check_options(L, 3, "onnx.export", known_options);
    /* the opset's range (13..17) is checked by the exporter */
    MfOnnxOptions o = {.opset = lmf_opt_integer(L, 3, "onnx.export", "opset",
                                                DEFAULT_OPSET)};
    if (lua_istable(L, 3)) {
        o.input_names = opt_names(L, 3, "input_names");
        o.output_names = opt_names(L, 3, "output_names");
        /* a function's outputs are names; popped before opt_names pushes the
         * userdata that holds them, which must stay on the stack for the call */
        bool named_outputs = lua_getfield(L, 3, "outputs") != LUA_TNIL;
        lua_pop(L, 1);
        if (lmf_is_function(L, 1) && named_outputs)
            o.output_names = opt_names(L, 3, "outputs");
    }
    if (lmf_is_function(L, 1))
        return export_function(L, path, 3, &o);
    if (lua_isfunction(L, 1))
        return luaL_error(L, "onnx.export: a plain Lua function cannot be exported: wrap it in "
                          "mf.trace(f) first");
    return export_graph(L, path, 3, &o);
}

/* fn:export_onnx(path, example_args...) */
static int fn_export_onnx(lua_State *L)
{
    if (!lmf_is_function(L, 1))
        return luaL_error(L, "export_onnx: call it as fn:export_onnx(path, example_args...)");
    const char *path = lmf_check_path(L, 2, "export_onnx");
    lua_pushvalue(L, 2);
    lua_remove(L, 2);   /* fn, args..., path */
    int top = lua_gettop(L) - 1;
    MfOnnxOptions o = {.opset = DEFAULT_OPSET};
    MfTrace *tr = lmf_function_trace(L, top, "export_onnx");
    export_trace(L, tr, path, &o);
    return 0;
}

void lmf_open_onnx(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_export);
    lua_setfield(L, -2, "export");
    lua_setfield(L, -2, "onnx");
    luaL_getmetatable(L, "mf.Function");   /* made by lmf_open_trace */
    lua_getfield(L, -1, "__index");
    lua_pushcfunction(L, fn_export_onnx);
    lua_setfield(L, -2, "export_onnx");
    lua_pop(L, 2);
}
