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
 * step). Each record is flushed as it is written. */
#include <string.h>

#include "core/io/events.h"
#include "graph/interchange.h"
#include "lmf.h"

#define WRITER_MT "mf.SummaryWriter"

typedef struct WriterBox {
    MfEventWriter *w;
} WriterBox;

static WriterBox *check_box(lua_State *L)
{
    return luaL_checkudata(L, 1, WRITER_MT);
}

static MfEventWriter *check_writer(lua_State *L, const char *fname)
{
    WriterBox *box = check_box(L);
    if (!box->w)
        luaL_error(L, "%s: the summary writer is closed", fname);
    return box->w;
}

/* The step at 'idx': an integer, or a one-element integer tensor. */
static int64_t check_step(lua_State *L, int idx, const char *fname)
{
    if (lua_isinteger(L, idx))
        return (int64_t)lua_tointeger(L, idx);
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t && !t->node && mf_dtype_is_int(t->dtype) && mf_tensor_numel(t) == 1)
        return mf_tensor_get_int(t, 0);
    return luaL_error(L, "%s: step must be an integer or a one-element integer tensor (e.g. "
                      "mf.train.global_step()), got %s", fname,
                      t ? (t->node ? "a symbolic tensor" : mf_dtype_name(t->dtype))
                        : luaL_typename(L, idx));
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

static void check_nargs(lua_State *L, int max, const char *fname)
{
    if (lua_gettop(L) > max)
        luaL_error(L, "%s: expected at most %d arguments, got %d", fname, max - 1,
                   lua_gettop(L) - 1);
}

/* mf.summary.create_file_writer(logdir) -> writer */
static int l_create_file_writer(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "create_file_writer: logdir must be a directory name (a string), "
                          "got %s", luaL_typename(L, 1));
    const char *dir = lua_tostring(L, 1);
    if (lua_gettop(L) > 1)
        return luaL_error(L, "create_file_writer: takes only the log directory, got %d "
                          "arguments", lua_gettop(L));
    WriterBox *box = lua_newuserdatauv(L, sizeof *box, 1);
    box->w = NULL;
    luaL_setmetatable(L, WRITER_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);   /* the logdir string lives with the box */
    MfEventWriter *w;
    if (mf_event_writer_open(dir, &w) != MF_OK)
        return lmf_raise(L);
    box->w = w;
    return 1;
}

/* w:scalar(tag, value, step) */
static int w_scalar(lua_State *L)
{
    MfEventWriter *w = check_writer(L, "scalar");
    check_nargs(L, 4, "scalar");
    const char *tag = check_tag(L, 2, "scalar");
    double v;
    MfTensor *t = lua_type(L, 3) == LUA_TNUMBER ? NULL : lmf_test_tensor(L, 3);
    if (lua_type(L, 3) == LUA_TNUMBER)
        v = lua_tonumber(L, 3);
    else if (t && !t->node && mf_tensor_numel(t) == 1 && t->dtype != MF_BOOL)
        v = mf_tensor_get(t, 0);
    else
        return luaL_error(L, "scalar: value must be a number or a one-element numeric tensor, "
                          "got %s", t ? (t->node ? "a symbolic tensor (sess:run it first)"
                                                 : "a tensor of another size or dtype")
                                      : luaL_typename(L, 3));
    int64_t step = check_step(L, 4, "scalar");
    lmf_check_status(L, mf_event_scalar(w, tag, v, step));
    return 0;
}

/* w:histogram(tag, values, step) */
static int w_histogram(lua_State *L)
{
    MfEventWriter *w = check_writer(L, "histogram");
    check_nargs(L, 4, "histogram");
    const char *tag = check_tag(L, 2, "histogram");
    MfTensor *t = lmf_to_tensor(L, 3, -1);
    int64_t step = check_step(L, 4, "histogram");
    lmf_check_status(L, mf_event_histogram(w, tag, t, step));
    return 0;
}

/* w:graph(g) or w:graph(fn, example_args...) */
static int w_graph(lua_State *L)
{
    MfEventWriter *w = check_writer(L, "graph");
    MfGraph *g;
    if (lmf_is_function(L, 2)) {
        lua_remove(L, 1);   /* the Function at 1, its arguments after */
        g = mf_trace_graph(lmf_function_trace(L, lua_gettop(L), "graph"));
    } else {
        check_nargs(L, 2, "graph");
        g = lmf_check_graph(L, 2);
    }
    MfPbuf b = mf_pb_new();
    MfStatus st = mf_graphdef_encode(g, &b);
    if (st == MF_OK)
        st = mf_event_graph(w, b.data, b.len);
    mf_pb_free(&b);
    lmf_check_status(L, st);
    return 0;
}

static int w_flush(lua_State *L)
{
    check_nargs(L, 1, "flush");
    lmf_check_status(L, mf_event_flush(check_writer(L, "flush")));
    return 0;
}

/* w:close(): closing twice is harmless (TensorFlow's writers allow it). */
static int w_close(lua_State *L)
{
    WriterBox *box = check_box(L);
    MfEventWriter *w = box->w;
    box->w = NULL;
    lmf_check_status(L, mf_event_writer_close(w));
    return 0;
}

static int w_gc(lua_State *L)
{
    WriterBox *box = check_box(L);
    MfEventWriter *w = box->w;
    box->w = NULL;
    mf_event_writer_close(w);
    mf_err_clear();   /* nobody to tell in a finalizer */
    return 0;
}

/* ---- mf.summary.TensorBoard: model:fit's callback ----------------------------- */

/* The open writer in upvalue 'k' (NULL: none, e.g. no validation run). */
static MfEventWriter *upvalue_writer(lua_State *L, int k)
{
    WriterBox *box = luaL_testudata(L, lua_upvalueindex(k), WRITER_MT);
    if (box && !box->w)
        luaL_error(L, "TensorBoard: the callback's writer is closed (train ended)");
    return box ? box->w : NULL;
}

/* on_epoch_end(epoch, logs, model): every number in 'logs' as a scalar
 * "epoch_<key>" (val_<key> to the validation run as "epoch_<key>", as
 * Keras's TensorBoard callback), in key order, and a histogram of every
 * variable of model.variables to the train run. */
static int tb_epoch_end(lua_State *L)
{
    MfEventWriter *train = upvalue_writer(L, 1), *val = upvalue_writer(L, 2);
    int64_t epoch = (int64_t)luaL_checkinteger(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    enum { MAX_KEYS = 64 };
    const char *keys[MAX_KEYS];
    int n = 0;
    for (lua_pushnil(L); lua_next(L, 2) && n < MAX_KEYS; lua_pop(L, 1))
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TNUMBER) {
            const char *k = lua_tostring(L, -2);   /* the table keeps the key alive */
            int i = n++;
            for (; i > 0 && strcmp(keys[i - 1], k) > 0; i--)
                keys[i] = keys[i - 1];
            keys[i] = k;
        }
    for (int i = 0; i < n; i++) {
        bool is_val = strncmp(keys[i], "val_", 4) == 0;
        MfEventWriter *w = is_val ? val : train;
        if (!w)
            continue;
        lua_pushstring(L, keys[i]);
        lua_rawget(L, 2);   /* raw: no metamethod may drop the keys while we hold them */
        lua_pushfstring(L, "epoch_%s", keys[i] + (is_val ? 4 : 0));
        lmf_check_status(L, mf_event_scalar(w, lua_tostring(L, -1), lua_tonumber(L, -2),
                                            epoch));
        lua_pop(L, 2);
    }
    if (lua_type(L, 3) == LUA_TTABLE && lua_getfield(L, 3, "variables") == LUA_TTABLE) {
        int vars = lua_gettop(L);
        for (lua_Integer i = 1; lua_geti(L, vars, i) != LUA_TNIL; i++, lua_pop(L, 1)) {
            MfVariable *v = lmf_test_variable(L, -1);
            MfTensor *t = lmf_test_tensor(L, -1);
            if (!t || t->node || t->dtype == MF_BOOL)
                continue;
            const char *tag = v && v->name && *v->name
                                  ? v->name : lua_pushfstring(L, "variable_%d", (int)i);
            lmf_check_status(L, mf_event_histogram(train, tag, t, epoch));
            if (!(v && v->name && *v->name))
                lua_pop(L, 1);
        }
    }
    return 0;
}

/* on_train_end(): closes the runs' files. */
static int tb_train_end(lua_State *L)
{
    for (int k = 1; k <= 2; k++) {
        WriterBox *box = luaL_testudata(L, lua_upvalueindex(k), WRITER_MT);
        if (box && box->w) {
            MfEventWriter *w = box->w;
            box->w = NULL;
            lmf_check_status(L, mf_event_writer_close(w));
        }
    }
    return 0;
}

/* Pushes a writer for logdir/<run>. */
static void push_run_writer(lua_State *L, const char *logdir, const char *run)
{
    lua_pushcfunction(L, l_create_file_writer);
    lua_pushfstring(L, "%s/%s", logdir, run);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {   /* the error names TensorBoard, called */
        lua_pushfstring(L, "TensorBoard: %s", lua_isstring(L, -1) ? lua_tostring(L, -1)
                                                                 : luaL_typename(L, -1));
        lua_error(L);
    }
}

/* mf.summary.TensorBoard(logdir [, {validation = false}]) -> a callback
 * {on_epoch_end, on_train_end} for model:fit, writing logdir/train (and
 * logdir/validation) as Keras's TensorBoard callback does;
 * model:fit{logdir = d} adds one itself. */
static int l_tensorboard(lua_State *L)
{
    lmf_check_nargs(L, "TensorBoard", 2);
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "TensorBoard: logdir must be a directory name (a string), got %s",
                          luaL_typename(L, 1));
    const char *dir = lua_tostring(L, 1);
    static const char *const known[] = {"validation", NULL};
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lmf_check_options(L, 2, "TensorBoard", known);
    bool validation = lmf_opt_bool(L, 2, "validation", 0);
    lua_settop(L, 1);
    push_run_writer(L, dir, "train");
    if (validation)
        push_run_writer(L, dir, "validation");
    else
        lua_pushboolean(L, 0);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_pushcclosure(L, tb_epoch_end, 2);
    lua_setfield(L, -2, "on_epoch_end");
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_pushcclosure(L, tb_train_end, 2);
    lua_setfield(L, -2, "on_train_end");
    return 1;
}

static int w_index(lua_State *L)
{
    WriterBox *box = check_box(L);
    const char *key = lua_tostring(L, 2);
    if (key && strcmp(key, "path") == 0) {
        if (box->w)
            lua_pushstring(L, mf_event_writer_path(box->w));
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
    WriterBox *box = check_box(L);
    if (box->w)
        lua_pushfstring(L, "<mf.summary writer to %s>", mf_event_writer_path(box->w));
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
    lua_pushcfunction(L, l_tensorboard);
    lua_setfield(L, -2, "TensorBoard");
    lua_setfield(L, -2, "summary");
}
