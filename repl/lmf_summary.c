/* lmf_summary.c — mf.summary: TensorBoard event files (core/io/events.c).
 *
 *   local w = mf.summary.create_file_writer("runs/exp1")
 *   w:scalar("loss", loss, step)          -- a number or a one-element tensor
 *   w:histogram("dense/kernel", v, step)  -- every element of a tensor
 *   w:graph(g)                            -- an mf.Graph (or a traced mf.Function
 *                                         -- with example arguments)
 *   w:flush(); w:close()                  -- also closed by the collector
 *
 * A step is a Lua integer or an integer tensor / Variable (the global
 * step). Each record is flushed as it is written. model:fit's callback
 * mf.summary.TensorBoard is written on these writers in lib/tensorboard.lua. */
#include <string.h>

#include "core/io/events.h"
#include "graph/interchange.h"
#include "lmf.h"

#define WRITER_MT "mf.SummaryWriter"

/* The writer in the box (lmf_box.c) at 1. A method reads it again after
 * converting its arguments, right before writing: the conversion may run
 * Lua code (a finalizer run by an allocation, a metamethod) that closes the
 * writer (issue #35 M2). */
static MfEventWriter *check_writer(lua_State *L, const char *fname)
{
    MfEventWriter *w = lmf_box_get(L, 1, WRITER_MT);
    if (!w)
        luaL_error(L, "%s: the summary writer is closed", fname);
    return w;
}

/* The tensor at 'idx' for mf_event_value_of / mf_event_step_of: NULL when
 * the value is not a tensor (they name its type), "tensor is closed" for a
 * closed one instead of "got userdata". */
static MfTensor *value_tensor(lua_State *L, int idx)
{
    return lmf_is_tensor(L, idx) || !luaL_testudata(L, idx, LMF_TENSOR_MT)
               ? lmf_test_tensor(L, idx) : lmf_check_tensor(L, idx);
}

/* The step at 'idx': an integer, or a tensor (mf_event_step_of). */
static int64_t check_step(lua_State *L, int idx, const char *fname)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lmf_check_integer(L, idx, fname, "step");
    const char *what = luaL_typename(L, idx);
    int64_t step;
    lmf_check_status(L, mf_event_step_of(fname, value_tensor(L, idx), what, &step));
    return step;
}

static const char *check_tag(lua_State *L, int idx, const char *fname)
{
    size_t n;
    const char *tag = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
    if (!tag || n == 0 || strlen(tag) != n)
        luaL_error(L, "%s: tag must be a non-empty string, got %s", fname,
                   tag ? "an empty or binary string" : luaL_typename(L, idx));
    return tag;
}

/* mf.summary.create_file_writer(logdir) -> writer */
static int l_create_file_writer(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "create_file_writer: logdir must be a directory name (a string), "
                          "got %s", luaL_typename(L, 1));
    const char *dir = lmf_check_path(L, 1, "create_file_writer");
    if (lua_gettop(L) > 1)
        return luaL_error(L, "create_file_writer: takes only the log directory, got %d "
                          "arguments", lua_gettop(L));
    void **box = lmf_box_new(L, WRITER_MT, 1);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);   /* the logdir string lives with the box */
    MfEventWriter *w;
    if (mf_event_writer_open(dir, &w) != MF_OK)
        return lmf_raise(L);
    *box = w;
    return 1;
}

/* w:scalar(tag, value, step) */
static int w_scalar(lua_State *L)
{
    check_writer(L, "scalar");
    lmf_check_nargs(L, "scalar", 4);
    const char *tag = check_tag(L, 2, "scalar");
    double v = lua_tonumber(L, 3);
    if (lua_type(L, 3) != LUA_TNUMBER) {   /* a tensor (mf_event_value_of) */
        const char *what = luaL_typename(L, 3);
        lmf_check_status(L, mf_event_value_of(value_tensor(L, 3), what, &v));
    }
    int64_t step = check_step(L, 4, "scalar");
    lmf_check_status(L, mf_event_scalar(check_writer(L, "scalar"), tag, v, step));
    return 0;
}

/* w:histogram(tag, values, step) */
static int w_histogram(lua_State *L)
{
    check_writer(L, "histogram");
    lmf_check_nargs(L, "histogram", 4);
    const char *tag = check_tag(L, 2, "histogram");
    MfTensor *t = lmf_arg_tensor(L, 3, -1, "histogram");
    int64_t step = check_step(L, 4, "histogram");
    lmf_check_status(L, mf_event_histogram(check_writer(L, "histogram"), tag, t, step));
    return 0;
}

/* w:graph(g) or w:graph(fn, example_args...) */
static int w_graph(lua_State *L)
{
    check_writer(L, "graph");
    MfGraph *g;
    if (lmf_is_function(L, 2)) {
        lua_rotate(L, 1, -1);   /* the Function at 1, its arguments, the writer on top */
        int top = lua_gettop(L) - 1;
        g = mf_trace_graph(lmf_function_trace(L, top, "graph"));   /* runs Lua code */
        lua_pushvalue(L, top + 1);
        lua_replace(L, 1);   /* the writer at 1 again (the trace is kept at top + 2) */
    } else {
        lmf_check_nargs(L, "graph", 2);
        g = lmf_check_graph(L, 2);
    }
    lmf_check_status(L, mf_graphdef_write_event(check_writer(L, "graph"), g));
    return 0;
}

/* w:flush(): fsyncs the file; a no-op on a closed writer, as TensorFlow's
 * (whose flush returns when the writer is closed). */
static int w_flush(lua_State *L)
{
    lmf_check_nargs(L, "flush", 1);
    MfEventWriter *w = lmf_box_get(L, 1, WRITER_MT);
    if (w)
        lmf_check_status(L, mf_event_flush(w));
    return 0;
}

/* w:close(): closing twice is harmless (TensorFlow's writers allow it). */
static int w_close(lua_State *L)
{
    lmf_check_status(L, mf_event_writer_close(lmf_box_take(L, 1, WRITER_MT)));
    return 0;
}

static int w_gc(lua_State *L)
{
    mf_event_writer_close(lmf_box_take(L, 1, WRITER_MT));
    mf_err_clear();   /* nobody to tell in a finalizer */
    return 0;
}

static int w_index(lua_State *L)
{
    MfEventWriter *w = lmf_box_get(L, 1, WRITER_MT);
    const char *key = lua_tostring(L, 2);
    if (key && strcmp(key, "path") == 0) {
        if (w)
            lua_pushstring(L, mf_event_writer_path(w));
        else
            lua_pushnil(L);
        return 1;
    }
    if (key && strcmp(key, "logdir") == 0) {
        lua_getiuservalue(L, 1, 1);
        return 1;
    }
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

static int w_tostring(lua_State *L)
{
    MfEventWriter *w = lmf_box_get(L, 1, WRITER_MT);
    if (w)
        lua_pushfstring(L, "<mf.summary writer to %s>", mf_event_writer_path(w));
    else
        lua_pushstring(L, "<mf.summary writer (closed)>");
    return 1;
}

void lmf_open_summary(lua_State *L)
{
    static const luaL_Reg meths[] = {{"scalar", w_scalar}, {"histogram", w_histogram},
                                     {"graph", w_graph},   {"flush", w_flush},
                                     {"close", w_close},   {NULL, NULL}};
    luaL_newmetatable(L, WRITER_MT);
    luaL_newlib(L, meths);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, w_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, w_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, w_gc);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, w_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_create_file_writer);
    lua_setfield(L, -2, "create_file_writer");
    lua_setfield(L, -2, "summary");
}
