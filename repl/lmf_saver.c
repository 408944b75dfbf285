/* lmf_saver.c — mf.train.Saver over train/saver.c:
 *
 *   saver = mf.train.Saver(var_list_or_map [, {optimizers = {opt, ...}}])
 *   saver = mf.train.Saver{var_list = var_list_or_map, optimizers = {opt, ...}}
 *   saver = mf.train.Saver()   (graph mode: every global variable of the graph;
 *                               eager Variables are not tracked: an error)
 *   saver:save(path) -> path   (graph mode: saver:save(sess, path))
 *   saver:restore(path [, {strict = false}]) -> {unexpected entry names}
 *                              (graph mode: saver:restore(sess, path [, {strict}]))
 *
 * and the test hook mf.test.fail_next_save() (the next saver:save fails after
 * writing its temporary file, as a crash would).
 *
 * Ownership: a "mf.train.Saver" box owns its MfSaver, made before anything
 * is read from Lua so a raised error frees it through __gc. The global step
 * (mf.train.global_step()) is saved when it exists and restored (made first
 * when needed) when the file has it: a file without it is not an error. In
 * graph mode it is the graph's "global_step" variable, and the values come
 * from and go to the session. A saver of graph variables needs the Session,
 * one of eager Variables only refuses it (mf_saver_check_session). */
#include <string.h>

#include "core/io/safetensors.h"
#include "lmf.h"
#include "graph/graph.h"
#include "train/train.h"

#define SAVER_MT "mf.train.Saver"

static bool fail_next_save = false;

/* A Saver box (lmf_box.c) holding a new empty saver, pushed. */
static MfSaver *push_saver(lua_State *L)
{
    void **box = lmf_box_new(L, SAVER_MT, 0);
    if (!(*box = mf_saver_new()))
        lmf_raise(L);
    return *box;
}

/* Adds the Variables of the list or map at 'idx'. */
static void add_vars(lua_State *L, MfSaver *s, int idx)
{
    if (!lua_istable(L, idx))
        luaL_error(L, "Saver: var_list must be an array of Variables or a map {name = "
                   "Variable}, got %s", luaL_typename(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        MfVariable *v = lmf_test_variable(L, -1);
        bool named = lua_type(L, -2) == LUA_TSTRING;
        if (!named && !lua_isinteger(L, -2))
            luaL_error(L, "Saver: var_list keys must be names (strings) or array indices, got "
                       "a %s key", luaL_typename(L, -2));
        if (!v && named)
            luaL_error(L, "Saver: var_list['%s'] must be a Variable, got %s",
                       lua_tostring(L, -2), luaL_typename(L, -1));
        if (!v)
            luaL_error(L, "Saver: var_list[%d] must be a Variable, got %s",
                       (int)lua_tointeger(L, -2), luaL_typename(L, -1));
        if (mf_saver_add_variable(s, named ? lua_tostring(L, -2) : v->name, v) != MF_OK)
            lmf_raise(L);
        lua_pop(L, 1);
    }
    lmf_check_status(L, mf_saver_check_not_empty(s));
}

/* Adds the optimizers of the array at 'idx' (nil: none). */
static void add_opts(lua_State *L, MfSaver *s, int idx)
{
    if (lua_isnil(L, idx))
        return;
    if (!lua_istable(L, idx))
        luaL_error(L, "Saver: optimizers must be an array of optimizers, got %s",
                   luaL_typename(L, idx));
    int n = (int)luaL_len(L, idx);
    for (int i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        MfOptimizer *o = lmf_test_optimizer(L, -1);
        if (!o)
            luaL_error(L, "Saver: optimizers[%d] must be an optimizer (mf.train.*Optimizer), "
                       "got %s", i, luaL_typename(L, -1));
        if (mf_saver_add_optimizer(s, o) != MF_OK)
            lmf_raise(L);
        lua_pop(L, 1);
    }
}

/* mf.train.Saver() while a graph is built: every global variable of it
 * (outside a graph, train/saver.c says what to give instead). */
static int graph_saver(lua_State *L)
{
    lmf_check_status(L, mf_saver_add_graph_variables(push_saver(L), NULL));
    return 1;
}

/* mf.train.Saver(var_list_or_map [, {optimizers}]) or
 * mf.train.Saver{var_list = ..., optimizers = ...}; while a graph is built
 * also mf.train.Saver() (every global variable of the graph). */
static int l_saver(lua_State *L)
{
    static const char *const known[] = {"var_list", "optimizers", NULL};
    lmf_check_nargs(L, "Saver", 2);
    if (lua_isnoneornil(L, 1))
        return graph_saver(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    MfSaver *s = push_saver(L);                             /* 3 */
    lua_getfield(L, 1, "var_list");                         /* 4 */
    bool options_form = !lua_isnil(L, -1) || lua_getfield(L, 1, "optimizers") != LUA_TNIL;
    lua_settop(L, 4);
    if (options_form) {
        if (!lua_isnil(L, 2))
            return luaL_error(L, "Saver: give the options either as the first table or as "
                              "the second argument, not both");
        lua_pushvalue(L, 1);
        lua_replace(L, 2);
    } else {
        lua_pushvalue(L, 1);
        lua_replace(L, 4);
    }
    if (lua_isnil(L, 4))
        return luaL_error(L, "Saver: give the Variables to save: mf.train.Saver{var_list = "
                          "{...}, optimizers = {...}} or a map {name = Variable}");
    if (!lua_isnil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lmf_check_options(L, 2, "Saver", known);
    }
    add_vars(L, s, 4);
    if (lua_isnil(L, 2))
        lua_pushnil(L);
    else
        lua_getfield(L, 2, "optimizers");
    add_opts(L, s, 5);
    lua_settop(L, 3);
    return 1;
}

/* The arguments of 'who' ("Saver.save" or "Saver.restore"): the saver at 1
 * into '*s', the optional session at 2 into '*sess' (mf_saver_check_session
 * says when one is needed), and the path after it (at '*pi'). */
static const char *saver_args(lua_State *L, const char *who, MfSaver **s, MfSession **sess,
                              int *pi)
{
    *s = lmf_box_check(L, 1, SAVER_MT, "Saver is closed");
    *sess = lmf_test_session(L, 2);
    *pi = *sess ? 3 : 2;
    bool restore = strcmp(who, "Saver.restore") == 0;   /* restore(path [, {strict}]) */
    lmf_check_nargs(L, strrchr(who, '.') + 1, *pi + restore);
    if (lua_type(L, *pi) != LUA_TSTRING)
        luaL_error(L, "%s: expected %s, got %s", who,
                   *sess ? "a path string after the session" : "a path string (eager) or a "
                   "session and a path (graph mode)", luaL_typename(L, *pi));
    lmf_check_status(L, mf_saver_check_session(*s, *sess, who));
    return lmf_check_path(L, *pi, who);
}

/* saver:save(path) (eager) or saver:save(sess, path) (graph) -> path */
static int s_save(lua_State *L)
{
    MfSaver *s;
    MfSession *sess;
    int pi;
    const char *path = saver_args(L, "Saver.save", &s, &sess, &pi);
    MfVariable *gs = sess ? NULL : lmf_global_step(L, false);   /* NULL: the graph's */
    int saved_hook = mf_ckpt_fail_after_write;
    if (fail_next_save)
        mf_ckpt_fail_after_write = 1;
    fail_next_save = false;
    MfStatus st = mf_saver_save_session(s, sess, path, gs);
    mf_ckpt_fail_after_write = saved_hook;
    lmf_check_written(L, st);
    lua_pushvalue(L, pi);
    return 1;
}

/* saver:restore(path [, {strict}]) (eager) or saver:restore(sess, path
 * [, {strict}]) (graph) -> {unexpected entry names} */
static int s_restore(lua_State *L)
{
    static const char *const restore_keys[] = {"strict", NULL};
    MfSaver *s;
    MfSession *sess;
    int pi;
    const char *path = saver_args(L, "Saver.restore", &s, &sess, &pi);
    if (!lua_isnoneornil(L, pi + 1))
        luaL_checktype(L, pi + 1, LUA_TTABLE);
    lmf_check_options(L, pi + 1, "Saver.restore", restore_keys);
    bool strict = lmf_opt_bool(L, pi + 1, "restore", "strict", 0);
    MfVariable *gs = sess ? NULL : lmf_global_step(L, true);   /* NULL: the graph's */
    /* the options' __index and the global step's creation ran Lua code,
     * which may have closed the Saver or freed the session (issue #35 M2) */
    path = saver_args(L, "Saver.restore", &s, &sess, &pi);
    if (mf_saver_restore_session(s, sess, path, strict, gs, true) != MF_OK)
        return lmf_raise(L);
    char *const *names;
    int n = mf_saver_extras(s, &names);
    lua_createtable(L, n, 0);
    for (int i = 0, k = 1; i < n; i++) {
        if (names[i]) {
            lua_pushstring(L, names[i]);
            lua_seti(L, -2, k++);
        }
    }
    return 1;
}

/* print(saver): Saver(3 variables, 1 optimizer) */
static int s_tostring(lua_State *L)
{
    MfSaver *s = lmf_box_get(L, 1, SAVER_MT);
    if (!s) {
        lua_pushliteral(L, "Saver(closed)");
        return 1;
    }
    int nv = mf_saver_nvars(s), no = mf_saver_nopts(s);
    lua_pushfstring(L, "Saver(%d variable%s, %d optimizer%s)", nv, nv == 1 ? "" : "s", no,
                    no == 1 ? "" : "s");
    return 1;
}

static int s_gc(lua_State *L)
{
    mf_saver_free(lmf_box_take(L, 1, SAVER_MT));
    return 0;
}

/* mf.test.fail_next_save(): the next saver:save fails after its temporary
 * file is written (test hook; the old file must stay intact). */
static int l_fail_next_save(lua_State *L)
{
    lmf_check_nargs(L, "fail_next_save", 0);
    (void)L;
    fail_next_save = true;
    return 0;
}

void lmf_open_saver(lua_State *L)
{
    static const luaL_Reg methods[] = {{"save", s_save}, {"restore", s_restore}, {NULL, NULL}};
    static const luaL_Reg meta[] = {{"__tostring", s_tostring}, {"__gc", s_gc}, {NULL, NULL}};
    lmf_box_class(L, SAVER_MT, meta, methods);
    lmf_sub_table(L, "train");
    lua_pushcfunction(L, l_saver);
    lua_setfield(L, -2, "Saver");
    lua_pop(L, 1);
    lmf_sub_table(L, "test");
    lua_pushcfunction(L, l_fail_next_save);
    lua_setfield(L, -2, "fail_next_save");
    lua_pop(L, 1);
}
