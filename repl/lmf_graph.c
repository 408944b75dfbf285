/* lmf_graph.c — graph mode from Lua: mf.Graph (as_default, nodes,
 * get_tensor, to_dot, printing), mf.placeholder, mf.name_scope,
 * mf.control_dependencies, mf.group (an "mf.Operation"), and mf.Session
 * (run with fetches, feeds and an optional schedule; close).
 *
 * Ownership (boxes of lmf_box.c): a graph box owns one reference to its
 * MfGraph; an operation box holds its node and owns one reference to the
 * node's graph; a session box owns its MfSession; a run request box (one
 * per sess:run) owns the request and so every tensor the run was given.
 * Functions that take a Lua callback (as_default, name_scope,
 * control_dependencies) call it protected, undo what they pushed, then
 * rethrow, so an error inside never leaves a graph or scope in force. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "lmf_callback.h"
#include "lmf_print.h"
#include "lmf.h"

#define SCHEDULE_MT "mf.Schedule"
#define REQUEST_MT "mf.RunRequest"

static MfNode *test_operation(lua_State *L, int idx)
{
    void **box = luaL_testudata(L, idx, LMF_OPERATION_MT);
    return box ? *box : NULL;
}

/* The default graph, or raises naming 'fname' (graph/graph.c says how to
 * make one). */
static MfGraph *need_default(lua_State *L, const char *fname)
{
    MfGraph *g = mf_graph_default_for(fname);
    if (!g)
        lmf_raise(L);
    return g;
}

/* ---- mf.Graph ----------------------------------------------------------------- */

static int l_graph_new(lua_State *L)
{
    lmf_check_nargs(L, "Graph", 0);
    MfGraph *g = mf_graph_new();
    if (!g)
        return lmf_raise(L);
    lmf_push_graph(L, g);
    mf_graph_release(g);
    return 1;
}

static int g_gc(lua_State *L)
{
    mf_graph_release(lmf_box_take(L, 1, LMF_GRAPH_MT));
    return 0;
}

/* g:as_default(fn): runs fn with g as the default graph; returns fn's results. */
static int g_as_default(lua_State *L)
{
    lmf_check_nargs(L, "as_default", 2);
    MfGraph *g = lmf_check_graph(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    lmf_check_status(L, mf_graph_push_default(g));
    lua_pushvalue(L, 2);   /* fn, called protected */
    int st = lmf_pcall(L, 0, LUA_MULTRET);
    mf_graph_pop_default();
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - 2;
}

static void push_input_names(lua_State *L, const MfNode *n)
{
    MfGraph *g = n->graph;
    lua_createtable(L, n->ninputs, 0);
    for (int k = 0; k < n->ninputs; k++) {
        char name[MF_INPUT_NAME_CAP];
        lua_pushstring(L, mf_node_input_name(n, k, name, sizeof name));
        lua_seti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "inputs");
    lua_createtable(L, n->ncontrol, 0);
    for (int k = 0; k < n->ncontrol; k++) {
        lua_pushstring(L, mf_graph_node(g, n->control[k])->name);
        lua_seti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "control_inputs");
}

/* g:nodes() -> array of {name, op, attrs, inputs, control_inputs, outputs}
 * in creation order; attrs: the non-default attributes as listings show
 * them ("axis=2, keepdims", "" when none); outputs are the node's symbolic
 * tensors. */
static int g_nodes(lua_State *L)
{
    lmf_check_nargs(L, "nodes", 1);
    MfGraph *g = lmf_check_graph(L, 1);
    /* a reference of the call's own: the pushes below run the collector,
     * and a finalizer may free self's box (issue #35 M2) */
    lmf_push_graph(L, g);
    int nn = mf_graph_nnodes(g);
    lua_createtable(L, nn, 0);
    for (int i = 0; i < nn; i++) {
        MfNode *n = mf_graph_node(g, i);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, n->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, mf_node_op_name(n));
        lua_setfield(L, -2, "op");
        char attrs[200];
        lua_pushstring(L, mf_node_attrs_text(n, attrs, sizeof attrs));
        lua_setfield(L, -2, "attrs");
        push_input_names(L, n);
        lua_createtable(L, n->noutputs, 0);
        for (int k = 0; k < n->noutputs; k++) {
            MfTensor *t = mf_graph_output(n, k);
            if (!t)
                return lmf_raise(L);
            lmf_push_tensor(L, t);
            lua_seti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "outputs");
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

/* g:get_tensor("add:0") */
static int g_get_tensor(lua_State *L)
{
    lmf_check_nargs(L, "get_tensor", 2);
    lmf_check_graph(L, 1);
    const char *name = luaL_checkstring(L, 2);   /* a number converts: Lua runs */
    MfTensor *t = mf_graph_get_tensor(lmf_check_graph(L, 1), name, "get_tensor");
    if (!t)
        return lmf_raise(L);
    lmf_push_tensor(L, t);
    return 1;
}

/* print(g): the graph's listing (graph/listing.c). */
static int g_tostring(lua_State *L)
{
    MfGraph *g = lmf_box_get(L, 1, LMF_GRAPH_MT);
    if (!g) {
        lua_pushliteral(L, "<closed mf.Graph>");
        return 1;
    }
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_graph_listing(g, b));
    return 1;
}

/* g:to_dot() -> Graphviz text (graph/dot.c). */
static int g_to_dot(lua_State *L)
{
    lmf_check_nargs(L, "to_dot", 1);
    lmf_check_graph(L, 1);
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_graph_dot(lmf_check_graph(L, 1), b));   /* after the allocation */
    return 1;
}

/* ---- building: placeholder, name_scope, control_dependencies, group ---- */

/* mf.placeholder(dtype [, shape [, name]]): without a shape (nil) it takes
 * a value of any shape, as TensorFlow 1.x's tf.placeholder(tf.float32). */
static int l_placeholder(lua_State *L)
{
    lmf_check_nargs(L, "placeholder", 3);
    MfGraph *g = need_default(L, "placeholder");
    MfDType dt = lmf_opt_dtype(L, 1, MF_FLOAT32);
    int64_t shape[MF_MAX_RANK];
    int rank = lua_isnoneornil(L, 2) ? -1 : lmf_check_shape(L, 2, "placeholder", shape, 1);
    const char *name = luaL_optstring(L, 3, NULL);
    MfTensor *t;
    if (mf_graph_placeholder(g, dt, rank, shape, name, &t) != MF_OK)
        return lmf_raise(L);
    lmf_push_tensor(L, t);
    return 1;
}

/* mf.name_scope(name, fn): nodes built in fn are named "name/...". */
static int l_name_scope(lua_State *L)
{
    lmf_check_nargs(L, "name_scope", 2);
    MfGraph *g = need_default(L, "name_scope");
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    int mark;
    lmf_check_status(L, mf_graph_push_scope(g, name, &mark));
    lua_pushvalue(L, 2);   /* fn, called protected */
    int st = lmf_pcall(L, 0, LUA_MULTRET);
    mf_graph_pop_scope(g, mark);
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - 2;
}

/* The node of a tensor or operation at 'idx' (item 'i' of 'fname''s list). */
static MfNode *check_node(lua_State *L, int idx, const char *fname, int i)
{
    MfNode *n = test_operation(L, idx);
    if (n)
        return n;
    MfTensor *t = lmf_test_tensor(L, idx);
    if (!t || !t->node)
        luaL_error(L, "%s: item %d must be a graph tensor or operation, got %s", fname, i,
                   t ? "a tensor with values" : luaL_typename(L, idx));
    return t->node;
}

/* The nodes of the array at 'idx' (a single tensor/op also works) in a
 * userdata pushed on the stack; returns the count. */
static int read_nodes(lua_State *L, int idx, const char *fname, MfNode ***out)
{
    bool single = !lua_istable(L, idx);
    int n = single ? 1 : (int)luaL_len(L, idx);
    *out = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof **out, 0);
    for (int i = 1; i <= n; i++) {
        if (single)
            lua_pushvalue(L, idx);
        else
            lua_geti(L, idx, i);
        (*out)[i - 1] = check_node(L, -1, fname, i);
        lua_pop(L, 1);
    }
    return n;
}

/* mf.control_dependencies(list, fn): ops built in fn run after 'list'. */
static int l_control_dependencies(lua_State *L)
{
    lmf_check_nargs(L, "control_dependencies", 2);
    MfGraph *g = need_default(L, "control_dependencies");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    MfNode **deps;
    int n = read_nodes(L, 1, "control_dependencies", &deps);
    int mark;
    lmf_check_status(L, mf_graph_push_control(g, n, deps, &mark));
    lua_pushvalue(L, 2);   /* fn, called protected */
    int st = lmf_pcall(L, 0, LUA_MULTRET);
    mf_graph_pop_control(g, mark);
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - 3;
}

/* mf.group(list [, name]) -> an operation that runs everything in 'list'. */
static int l_group(lua_State *L)
{
    MfGraph *g = need_default(L, "group");
    const char *name = luaL_optstring(L, 2, NULL);
    MfNode **deps, *node;
    int n = read_nodes(L, 1, "group", &deps);
    lmf_check_status(L, mf_graph_group(g, n, deps, name, &node));
    lmf_push_operation(L, node);
    return 1;
}

static int op_gc(lua_State *L)
{
    MfNode *n = lmf_box_take(L, 1, LMF_OPERATION_MT);
    if (n)
        mf_graph_release(n->graph);
    return 0;
}

static int op_index(lua_State *L)
{
    MfNode *n = lmf_box_check(L, 1, LMF_OPERATION_MT, "Operation is freed");
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "name") == 0)
        lua_pushstring(L, n->name);
    else if (strcmp(key, "type") == 0)
        lua_pushstring(L, mf_node_op_name(n));
    else
        lua_pushnil(L);
    return 1;
}

static int op_tostring(lua_State *L)
{
    MfNode *n = lmf_box_get(L, 1, LMF_OPERATION_MT);
    if (!n) {
        lua_pushliteral(L, "<freed mf.Operation>");
        return 1;
    }
    lua_pushfstring(L, "<mf.Operation '%s' %s>", n->name, mf_node_op_name(n));
    return 1;
}

/* ---- mf.Session --------------------------------------------------------------- */

static MfSession *check_session(lua_State *L, int idx)
{
    return lmf_box_check(L, idx, LMF_SESSION_MT, "Session is freed");
}

/* mf.Session([g]): a session on 'g' (default: the graph being built). */
static int l_session_new(lua_State *L)
{
    lmf_check_nargs(L, "Session", 1);
    MfGraph *g = lua_isnoneornil(L, 1) ? need_default(L, "Session") : lmf_check_graph(L, 1);
    void **box = lmf_box_new(L, LMF_SESSION_MT, 0);
    if (!(*box = mf_session_new(g)))
        return lmf_raise(L);
    return 1;
}

static int s_gc(lua_State *L)
{
    mf_session_free(lmf_box_take(L, 1, LMF_SESSION_MT));
    return 0;
}

static int s_close(lua_State *L)
{
    lmf_check_nargs(L, "close", 1);
    mf_session_close(check_session(L, 1));
    return 0;
}

static int s_tostring(lua_State *L)
{
    MfSession *s = lmf_box_get(L, 1, LMF_SESSION_MT);
    int nn = s ? mf_graph_nnodes(mf_session_graph(s)) : 0;
    lua_pushfstring(L, "<mf.Session on a graph of %d nodes%s>", nn,
                    s && mf_session_closed(s) ? ", closed" : "");
    return 1;
}

/* A sess:run request (graph/run_request.c) in a box whose __gc frees it,
 * with the references it holds, however the call ends. */
static MfRunRequest *push_request(lua_State *L, MfSession *s)
{
    void **box = lmf_box_new(L, REQUEST_MT, 0);
    if (!(*box = mf_run_request_new(s)))
        lmf_raise(L);
    return *box;
}

static int request_gc(lua_State *L)
{
    mf_run_request_free(lmf_box_take(L, 1, REQUEST_MT));
    return 0;
}

/* Adds fetch item 'i' (at 'idx') to 'r'. */
static void add_fetch(lua_State *L, MfRunRequest *r, int idx, int i)
{
    MfNode *op = test_operation(L, idx);
    bool named = !op && lua_type(L, idx) == LUA_TSTRING;
    MfTensor *t = op || named ? NULL : lmf_test_tensor(L, idx);
    check_session(L, 1);   /* 'r' uses it: see s_run */
    if (op)
        lmf_check_status(L, mf_run_request_fetch_op(r, op));
    else if (named)
        lmf_check_status(L, mf_run_request_fetch_name(r, lua_tostring(L, idx)));
    else if (t)
        lmf_check_status(L, mf_run_request_fetch(r, t));
    else
        luaL_error(L, "run: fetch %d must be a graph tensor, an operation or a tensor name "
                   "(\"add:0\"), got %s", i, luaL_typename(L, idx));
}

/* Fetch structures as TensorFlow 1.x's: sess:run({loss = l, {a, b}}) runs
 * the leaves of the structure at 2 (lmf_nest.c) and rebuilds it with their
 * values; anything else at 2 is one fetch. Adds them to 'r'. */
static void add_fetches(lua_State *L, MfRunRequest *r, bool single)
{
    lua_newtable(L);
    lua_Integer n = 0;
    if (single)
        lua_pushvalue(L, 2);
    else
        lmf_nest_flatten(L, 2, lua_gettop(L), &n, "run");
    for (lua_Integer i = 1; single ? i == 1 : i <= n; i++) {
        if (!single)
            lua_geti(L, -1, i);
        add_fetch(L, r, lua_gettop(L), (int)i);
        lua_pop(L, 1);
    }
    if (!single)
        lua_pop(L, 1);
}

/* Adds the feeds table at 3 ({[x] = value, ["y:0"] = value}) to 'r'; plain
 * data converts to the key's dtype (mf_session_feed_value). */
static void add_feeds(lua_State *L, MfRunRequest *r)
{
    if (lua_isnoneornil(L, 3))
        return;
    luaL_checktype(L, 3, LUA_TTABLE);
    for (lua_pushnil(L); lua_next(L, 3); lua_pop(L, 1)) {
        lua_pushvalue(L, -2);   /* a copy of the key: lua_next needs the key itself unchanged */
        bool named = lua_type(L, -1) == LUA_TSTRING;
        MfTensor *k = named ? NULL : lmf_test_tensor(L, -1);
        check_session(L, 1);   /* 'r' uses it: see s_run */
        if (!named && !k)
            luaL_error(L, "run: feed keys must be graph tensors (placeholders) or tensor "
                       "names, got %s", luaL_typename(L, -1));
        const MfTensor *key;
        lmf_check_status(L, mf_run_request_feed_key(r, k, named ? lua_tostring(L, -1) : NULL,
                                                    &key));
        lua_pop(L, 1);
        bool data = !lua_isuserdata(L, -1);
        MfTensor *v = lmf_arg_tensor(L, lua_gettop(L), (int)key->dtype, "run");
        check_session(L, 1);   /* a finalizer the conversion ran may have freed it */
        lmf_check_status(L, mf_run_request_feed_value(r, v, data));
    }
}

/* Pushes the results: one value for a single fetch, else the fetch
 * structure at 2 rebuilt (nil where an operation was fetched). */
static void push_results(lua_State *L, const MfRunRequest *r, bool single)
{
    int n = mf_run_request_nfetch(r);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        MfTensor *t = mf_run_request_result(r, i);
        if (t)
            lmf_push_tensor(L, t);
        else
            lua_pushnil(L);
        lua_seti(L, -2, i + 1);
    }
    lua_Integer pos = 0;
    if (single)
        lua_geti(L, -1, 1);
    else
        lmf_nest_rebuild(L, 2, lua_gettop(L), &pos, false);
    lua_remove(L, -2);
}

/* Pushes schedule rows as an array of records {step, name, op, indegree,
 * ready}, or of {name, op} for the fed nodes ('steps' false). */
static void push_rows(lua_State *L, const MfSchedRow *rows, int n, bool steps)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const MfSchedRow *row = &rows[i];
        lua_createtable(L, 0, 5);
        lua_pushstring(L, row->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, row->op);
        lua_setfield(L, -2, "op");
        if (steps) {
            lua_pushinteger(L, i + 1);
            lua_setfield(L, -2, "step");
            lua_pushinteger(L, row->indegree);
            lua_setfield(L, -2, "indegree");
            lua_createtable(L, row->nready, 0);
            for (int k = 0; k < row->nready; k++) {
                lua_pushstring(L, row->ready[k]);
                lua_seti(L, -2, k + 1);
            }
            lua_setfield(L, -2, "ready");
        }
        lua_seti(L, -2, i + 1);
    }
}

/* Pushes the schedule of the run of 'r': its steps, with schedule.fed the
 * fed nodes (values given to the run, not work the executor does). */
static void push_schedule(lua_State *L, const MfRunRequest *r)
{
    const MfSchedRow *steps, *fed;
    int nfed, nsteps = mf_run_request_schedule(r, &steps, &fed, &nfed);
    push_rows(L, steps, nsteps, true);
    push_rows(L, fed, nfed, false);
    lua_setfield(L, -2, "fed");
    luaL_setmetatable(L, SCHEDULE_MT);
}

/* sess:run(fetches [, feeds [, {schedule = true}]]) -> value(s) [, schedule] */
static int s_run(lua_State *L)
{
    lmf_check_nargs(L, "run", 4);
    static const char *const known[] = {"schedule", NULL};
    MfSession *s = check_session(L, 1);
    if (!lua_isnoneornil(L, 4))
        luaL_checktype(L, 4, LUA_TTABLE);
    lmf_check_options(L, 4, "run", known);
    bool want_sched = lmf_opt_bool(L, 4, "run", "schedule", 0);
    lua_settop(L, 4);
    MfRunRequest *r = push_request(L, s);   /* 5 */
    bool single = !lua_istable(L, 2);
    add_fetches(L, r, single);
    add_feeds(L, r);
    lmf_gc_before_op(L);   /* the fed and fetched values are the request's */
    /* the request holds the session, borrowed: converting fetches and feeds
     * runs Lua code (finalizers, metamethods) that may free it, so it is
     * read again before each use (issue #35 M2) */
    check_session(L, 1);
    lmf_check_status(L, mf_run_request_run(r, want_sched));
    push_results(L, r, single);
    if (!want_sched)   /* one op fetched: no value (the prompt prints nothing) */
        return single && lua_isnil(L, -1) ? 0 : 1;
    push_schedule(L, r);
    return 2;
}

/* Reads field 'key' of the record on top as a string kept alive in the
 * table at 'keep' (a field may come from a metamethod); NULL when it is not
 * a string or number (printed "?"). */
static const char *field_text(lua_State *L, const char *key, int keep)
{
    lua_getfield(L, -1, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER
                        ? lua_tostring(L, -1) : NULL;
    lua_seti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    return s;
}

/* Reads the record on top into 'r' (the ready queue too, when 'steps');
 * strings and arrays are kept in the table at 'keep'. */
static void read_row(lua_State *L, MfSchedRow *r, bool steps, int keep)
{
    r->name = field_text(L, "name", keep);
    r->op = field_text(L, "op", keep);
    r->nready = 0;
    r->ready = NULL;
    if (!steps)
        return;
    lua_getfield(L, -1, "indegree");
    r->indegree = (int)lua_tointeger(L, -1);   /* 0 when not a number */
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "ready") == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, -1);
        n = n < 0 ? 0 : n > MF_SCHED_READY_MAX ? MF_SCHED_READY_MAX : n;
        const char **ready = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *ready, 0);
        lua_seti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
        for (lua_Integer k = 1; k <= n; k++) {
            lua_geti(L, -1, k);
            ready[k - 1] = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER
                               ? lua_tostring(L, -1) : NULL;
            lua_seti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
        }
        r->nready = (int)n;
        r->ready = ready;
    }
    lua_pop(L, 1);
}

/* Reads the records of the array at 'idx' ('steps': a schedule's steps,
 * else its fed nodes) into rows (a userdata kept in 'keep'); returns the
 * count. Entries that are not tables are skipped. */
static int read_rows(lua_State *L, int idx, bool steps, int keep, MfSchedRow **rows)
{
    lua_Integer n = luaL_len(L, idx);
    if (n < 0 || n > INT_MAX / 2)
        luaL_error(L, "Schedule: %I records", n);
    *rows = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof **rows, 0);
    lua_seti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    int m = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_geti(L, idx, i) == LUA_TTABLE)
            read_row(L, &(*rows)[m++], steps, keep);
        lua_pop(L, 1);
    }
    return m;
}

/* The schedule prints as a table (graph/schedule_text.c): step, node, op,
 * in-degree, ready queue; fed placeholders first, marked. */
static int sched_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer n = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 1, i) != LUA_TTABLE)   /* not a schedule from sess:run */
            return luaL_error(L, "Schedule: step %d is a %s, not a step record", (int)i,
                              luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    lua_newtable(L);   /* 2: keeps the strings and rows read */
    MfSchedRow *steps, *fed = NULL;
    int nsteps = read_rows(L, 1, true, 2, &steps), nfed = 0;
    if (lua_getfield(L, 1, "fed") == LUA_TTABLE)
        nfed = read_rows(L, 3, false, 2, &fed);
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_schedule_text(steps, nsteps, fed, nfed, b));
    return 1;
}

void lmf_open_graph(lua_State *L)
{
    static const luaL_Reg graph_meths[] = {
        {"as_default", g_as_default}, {"nodes", g_nodes}, {"get_tensor", g_get_tensor},
        {"to_dot", g_to_dot}, {NULL, NULL}};
    static const luaL_Reg graph_meta[] = {{"__gc", g_gc}, {"__tostring", g_tostring}, {NULL, NULL}};
    static const luaL_Reg op_meta[] = {
        {"__gc", op_gc}, {"__index", op_index}, {"__tostring", op_tostring}, {NULL, NULL}};
    static const luaL_Reg session_meths[] = {{"run", s_run}, {"close", s_close}, {NULL, NULL}};
    static const luaL_Reg session_meta[] = {
        {"__gc", s_gc}, {"__tostring", s_tostring}, {NULL, NULL}};
    static const luaL_Reg schedule_meta[] = {{"__tostring", sched_tostring}, {NULL, NULL}};
    static const luaL_Reg request_meta[] = {{"__gc", request_gc}, {NULL, NULL}};
    static const luaL_Reg funcs[] = {
        {"Graph", l_graph_new}, {"placeholder", l_placeholder}, {"name_scope", l_name_scope},
        {"control_dependencies", l_control_dependencies}, {"group", l_group},
        {"Session", l_session_new}, {NULL, NULL}};
    lmf_box_class(L, LMF_GRAPH_MT, graph_meta, graph_meths);
    lmf_box_class(L, LMF_OPERATION_MT, op_meta, NULL);
    lmf_box_class(L, LMF_SESSION_MT, session_meta, session_meths);
    lmf_box_class(L, SCHEDULE_MT, schedule_meta, NULL);
    lmf_box_class(L, REQUEST_MT, request_meta, NULL);
    luaL_setfuncs(L, funcs, 0);
}
