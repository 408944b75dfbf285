/* lmf_variable.c — the "mf.Variable" userdata: mf.Variable(initial [, opts]),
 * assign / assign_add / assign_sub / read_value, properties, and the tensor
 * methods and operators, which work on a Variable through its current value
 * (lmf_check_tensor accepts Variables). */
#include <string.h>

#include "graph/graph.h"
#include "mode/mode.h"
#include "lmf.h"
#include "lmf_index.h"
#include "lmf_print.h"

/* ---- mf.Variable ------------------------------------------------------------------ */

/* The initial value at 1 (a Lua table converted in the dtype option's
 * dtype when one is given, '*dt', else -1). */
static MfTensor *initial_value(lua_State *L, int *dt)
{
    if (lua_isfunction(L, 1) || (lua_istable(L, 1) && luaL_getmetafield(L, 1, "__call"))) {
        if (!lua_isfunction(L, 1))
            lua_pop(L, 1);
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        lua_replace(L, 1);
    }
    if (lua_isnoneornil(L, 1))
        luaL_argerror(L, 1, "Variable: expected an initial value (tensor, number, table or "
                      "function), got nil");
    *dt = lmf_opt_dtype_field(L, 2, "Variable");
    return lmf_arg_data(L, 1, *dt, "Variable");
}

/* mf.Variable(initial_value [, {name = "Variable", trainable = true, dtype}]) */
static int l_variable(lua_State *L)
{
    lmf_check_nargs(L, "Variable", 2);
    lua_settop(L, 2);
    static const char *const known[] = {"name", "trainable", "dtype", NULL};
    if (!lua_isnil(L, 2) && !lua_istable(L, 2))
        luaL_typeerror(L, 2, "options table {name, trainable, dtype}");
    lmf_check_options(L, 2, "Variable", known);
    if (lua_isnil(L, 2)) {
        lua_newtable(L);
        lua_replace(L, 2);
    }
    int dt;
    MfTensor *t = initial_value(L, &dt);
    if (mf_dtype_is_half(t->dtype))
        luaL_error(L, "Variable: %s is a storage dtype (ops compute it in float32); a Variable "
                   "holds float32, float64 or an integer dtype: cast the value first",
                   mf_dtype_name(t->dtype));
    lua_getfield(L, 2, "name");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "Variable: option 'name' must be a string, got %s", luaL_typename(L, -1));
    const char *name = lua_tostring(L, -1);
    int trainable = lmf_opt_bool(L, 2, "Variable", "trainable", 1);
    MfVariable *v;
    MfNode *n;
    lmf_check_status(L, mf_mode_variable(t, dt, name, trainable, &v, &n));
    if (n)   /* in a graph: a VARIABLE node; the value lives in each Session */
        lmf_push_graph_variable(L, n);
    else
        lmf_push_variable(L, v);
    return 1;
}

/* ---- methods ---------------------------------------------------------------------- */

/* Eager: assigns now and returns the Variable. Graph variable: returns the
 * assign node's output (run it in a Session). Eager variable while a graph
 * is built (mf.trace): an assign node that updates it when the graph runs
 * (mode/variables.c decides). */
static int assign_with(lua_State *L, MfAssignKind kind)
{
    const char *fname = kind == MF_ASSIGN_SET ? "assign"
                        : kind == MF_ASSIGN_ADD ? "assign_add" : "assign_sub";
    lmf_check_nargs(L, fname, 2);
    MfVariable *v = lmf_check_variable(L, 1);
    luaL_checkany(L, 2);
    /* no value yet: mf_mode_assign says so */
    MfDType dt = v->value ? v->value->dtype : MF_FLOAT32;
    MfTensor *x = lmf_arg_data(L, 2, (int)dt, fname), *out = NULL;
    lmf_check_status(L, mf_mode_assign(v, kind, x, &out));
    if (!out) {
        lua_settop(L, 1);
        return 1;
    }
    lmf_push_tensor(L, out);
    return 1;
}

static int v_assign(lua_State *L) { return assign_with(L, MF_ASSIGN_SET); }
static int v_assign_add(lua_State *L) { return assign_with(L, MF_ASSIGN_ADD); }
static int v_assign_sub(lua_State *L) { return assign_with(L, MF_ASSIGN_SUB); }

/* v:read_value(), v:value(): the current value (a tensor; later assigns do
 * not change it); a read node for a graph Variable. */
static int v_read_value(lua_State *L)
{
    lmf_check_nargs(L, "read_value", 1);
    MfVariable *v = lmf_check_variable(L, 1);
    MfTensor *t = NULL;
    lmf_check_status(L, mf_mode_read(v, &t));
    lmf_push_tensor(L, t);
    return 1;
}

/* v:initialized_value(): a graph variable's value, or its initial value
 * while it is not initialised (TF1), for the initial value of another
 * variable: w = mf.Variable(v:initialized_value() * 2). An eager variable
 * is initialised when made: its value. */
static int v_initialized_value(lua_State *L)
{
    lmf_check_nargs(L, "initialized_value", 1);
    MfVariable *v = lmf_check_variable(L, 1);
    MfNode *n = mf_mode_variable_node(v);
    if (!n)
        return v_read_value(L);
    MfTensor *t = NULL;
    lmf_check_status(L, mf_graph_initialized_value(n, &t));
    lmf_push_tensor(L, t);
    return 1;
}

/* The graph of the optional argument 'idx' (an mf.Graph), else the default
 * (graph/graph.c says how to give one). */
static MfGraph *graph_arg(lua_State *L, int idx, const char *fname)
{
    MfGraph *g = lua_isnoneornil(L, idx) ? NULL : lmf_check_graph(L, idx);
    g = mf_graph_given_or_default(g, fname);
    if (!g)
        lmf_raise(L);
    return g;
}

static int push_variables(lua_State *L, bool trainable_only, const char *fname)
{
    MfGraph *g = graph_arg(L, 1, fname);
    int n = mf_graph_variables(g, trainable_only, NULL, 0);
    MfNode **nodes = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *nodes, 0);
    mf_graph_variables(g, trainable_only, nodes, n);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lmf_push_graph_variable(L, nodes[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* mf.global_variables([g]), mf.trainable_variables([g]): arrays of the
 * graph's Variables in creation order. */
static int l_global_variables(lua_State *L) { return push_variables(L, false, "global_variables"); }
static int l_trainable_variables(lua_State *L)
{
    return push_variables(L, true, "trainable_variables");
}

/* mf.global_variables_initializer([g]) -> an operation running every
 * variable's initializer (those made so far). */
static int l_global_variables_initializer(lua_State *L)
{
    MfGraph *g = graph_arg(L, 1, "global_variables_initializer");
    MfNode *op;
    lmf_check_status(L, mf_graph_variables_initializer(g, 0, NULL, "init", &op));
    lmf_push_operation(L, op);
    return 1;
}

/* mf.variables_initializer(var_list [, name]) -> an operation. */
static int l_variables_initializer(lua_State *L)
{
    lmf_check_nargs(L, "variables_initializer", 2);
    lua_settop(L, 3);   /* the scratch array below must not land on an argument */
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = (int)luaL_len(L, 1);
    MfNode **nodes = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *nodes, 0);
    MfGraph *g = NULL;
    for (int i = 0; i < n; i++) {
        lua_geti(L, 1, i + 1);
        MfVariable *v = lmf_test_variable(L, -1);
        nodes[i] = v ? mf_mode_variable_node(v) : NULL;
        if (!nodes[i])
            luaL_error(L, "variables_initializer: item %d must be a graph Variable, got %s",
                       i + 1, v ? "an eager Variable" : luaL_typename(L, -1));
        if (g && nodes[i]->graph != g)
            luaL_error(L, "variables_initializer: item %d is a Variable of another graph", i + 1);
        g = nodes[i]->graph;
        lua_pop(L, 1);
    }
    if (!g)
        g = graph_arg(L, 3, "variables_initializer");
    MfNode *op;
    const char *name = luaL_optstring(L, 2, "init");
    lmf_check_status(L, mf_graph_check_name(g, "variables_initializer", name));
    lmf_check_status(L, mf_graph_variables_initializer(g, n, nodes, name, &op));
    lmf_push_operation(L, op);
    return 1;
}

/* ---- metamethods ------------------------------------------------------------------ */

/* Properties that do not read the value (so a tape does not watch it). */
static int push_property(lua_State *L, MfVariable *v, const char *key)
{
    if (strcmp(key, "name") == 0) {
        lua_pushstring(L, v->name);
    } else if (strcmp(key, "trainable") == 0) {
        lua_pushboolean(L, v->trainable);
    } else if (strcmp(key, "initializer") == 0 && mf_mode_variable_node(v)) {
        MfNode *n = mf_mode_variable_node(v);   /* TF1's v.initializer: its Assign op */
        lmf_push_operation(L, mf_graph_node(n->graph, n->ref));
    } else if (!v->value || !lmf_push_tensor_property(L, v->value, key)) {
        lua_pushnil(L);   /* shape, dtype and ndim as its value's */
    }
    return 1;
}

/* __index: Variable methods (upvalue 1), tensor methods (upvalue 2),
 * properties; v[i], v[{...}], v[mask] go to the tensor __index (upvalue 3). */
static int v_index(lua_State *L)
{
    MfVariable *v = lmf_check_variable(L, 1);
    if (lua_type(L, 2) != LUA_TSTRING) {
        lua_pushvalue(L, lua_upvalueindex(3));
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
        return 1;
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
        return 1;
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    return push_property(L, v, lua_tostring(L, 2));
}

/* v[key] = value writes part of the value (repl/lmf_index.c); a string
 * key is a field, and fields are fixed. */
static int v_newindex(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TSTRING)
        return lmf_index_write(L);
    return luaL_error(L, "Variable: cannot set '%s' (change the value with v:assign(x); name "
                      "and trainable are fixed when the Variable is made)",
                      /* a key's __tostring may raise (a closed tensor) */
                      lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER
                          ? luaL_tolstring(L, 2, NULL) : luaL_typename(L, 2));
}

static int v_gc(lua_State *L)
{
    LmfVariableBox *box = lmf_variable_box(L, 1);
    if (box) {
        mf_variable_release(box->v);
        box->v = NULL;
    }
    return 0;
}

/* ---- closing a Variable a binding holds ------------------------------------------ */

/* Bindings borrow the MfVariable of a Variable argument from its stack slot
 * (a Variable's identity matters, so its slot is not replaced as a tensor's
 * is, lmf.h); Lua code a binding runs (an options __index, a finalizer)
 * may close that Variable. So closing looks for C function frames that hold
 * the box in a stack slot and puts there a new box with its own reference:
 * the call goes on with the Variable open, and it is released when the
 * call is done. The frames searched: the main thread's and, down the chain
 * of coroutine.resume/wrap calls found in them, each resumer's. */
#define HANDOVER_MAX_THREADS 64

typedef struct Handover {
    lua_State *L;            /* the running thread: new boxes are made here */
    const LmfVariableBox *closing;
    MfVariable *v;
    lua_State *seen[HANDOVER_MAX_THREADS];
    int nseen;
} Handover;

static void hand_over_thread(Handover *h, lua_State *th);

/* A thread found in a frame: searched when it is running or resuming
 * another (it has frames and has not yielded). */
static void maybe_thread(Handover *h, lua_State *th, int idx)
{
    lua_State *co = lua_tothread(th, idx);
    lua_Debug ar;
    if (!co || lua_status(co) != LUA_OK || !lua_getstack(co, 0, &ar))
        return;
    for (int i = 0; i < h->nseen; i++)
        if (h->seen[i] == co)
            return;
    hand_over_thread(h, co);
}

static void hand_over_frame(Handover *h, lua_State *th, lua_Debug *ar)
{
    for (int n = 1; lua_checkstack(th, 2) && lua_getlocal(th, ar, n); n++) {
        bool same = lua_touserdata(th, -1) == h->closing;
        if (!same && lua_type(th, -1) == LUA_TTHREAD)
            maybe_thread(h, th, -1);
        lua_pop(th, 1);
        if (!same)
            continue;
        mf_variable_retain(h->v);
        lmf_push_variable(h->L, h->v);
        lua_xmove(h->L, th, 1);
        lua_setlocal(th, ar, n);
    }
    /* coroutine.wrap's function holds its coroutine as an upvalue */
    if (lua_checkstack(th, 2) && lua_getinfo(th, "f", ar)) {
        for (int u = 1; lua_getupvalue(th, -1, u); u++) {
            if (lua_type(th, -1) == LUA_TTHREAD)
                maybe_thread(h, th, -1);
            lua_pop(th, 1);
        }
        lua_pop(th, 1);
    }
}

static void hand_over_thread(Handover *h, lua_State *th)
{
    if (h->nseen == HANDOVER_MAX_THREADS)
        return;
    h->seen[h->nseen++] = th;
    lua_Debug ar;
    for (int level = 0; lua_getstack(th, level, &ar); level++)
        if (lua_getinfo(th, "S", &ar) && ar.what[0] == 'C')
            hand_over_frame(h, th, &ar);
}

/* __close (a <close> variable, or called by hand) */
static int v_close(lua_State *L)
{
    LmfVariableBox *box = lmf_variable_box(L, 1);
    if (!box || !box->v)
        return 0;
    Handover h = {.L = L, .closing = box, .v = box->v, .nseen = 0};
    box->v = NULL;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lua_State *main_thread = lua_tothread(L, -1);
    lua_pop(L, 1);
    lua_pushvalue(L, 1);   /* this frame's own slot 1 is not a borrower */
    lua_pushnil(L);
    lua_replace(L, 1);
    hand_over_thread(&h, main_thread);
    if (L != main_thread && h.nseen < HANDOVER_MAX_THREADS) {
        bool seen = false;
        for (int i = 0; i < h.nseen; i++)
            seen = seen || h.seen[i] == L;
        if (!seen)
            hand_over_thread(&h, L);
    }
    lua_replace(L, 1);
    mf_variable_release(h.v);
    return 0;
}

/* <mf.Variable 'name' shape=(2,) dtype=float32> then the values. */
/* v1 == v2: the same Variable, through two boxes (compute_gradients' pairs
 * hold boxes of their own) or two handles of one graph variable. */
static int v_eq(lua_State *L)
{
    MfVariable *a = lmf_test_variable(L, 1), *b = lmf_test_variable(L, 2);
    bool same = a && b && (a == b || (a->value && b->value && a->value->node &&
                                      a->value->node == b->value->node));
    lua_pushboolean(L, same);
    return 1;
}

static int v_tostring(lua_State *L)
{
    LmfVariableBox *box = lmf_variable_box(L, 1);
    if (!box || !box->v) {
        lua_pushliteral(L, "<mf.Variable (closed)>");
        return 1;
    }
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_variable_format(box->v, &lmf_print_options, b));
    return 1;
}

/* Copies the tensor metatable's operators (they accept Variables). */
static void copy_operators(lua_State *L, int tensor_mt)
{
    static const char *const ops[] = {"__add", "__sub", "__mul", "__div", "__mod", "__pow",
                                      "__unm", "__len", "__lt", "__le", NULL};
    for (int i = 0; ops[i]; i++) {
        lua_getfield(L, tensor_mt, ops[i]);
        lua_setfield(L, -2, ops[i]);
    }
}

void lmf_open_variable(lua_State *L, int methods)
{
    int mf = lua_gettop(L);
    static const luaL_Reg meths[] = {
        {"assign", v_assign}, {"assign_add", v_assign_add}, {"assign_sub", v_assign_sub},
        {"read_value", v_read_value}, {"value", v_read_value},
        {"initialized_value", v_initialized_value}, {NULL, NULL}};
    static const luaL_Reg meta[] = {
        {"__gc", v_gc}, {"__close", v_close}, {"__newindex", v_newindex},
        {"__tostring", v_tostring}, {"__eq", v_eq}, {NULL, NULL}};
    methods = lua_absindex(L, methods);
    luaL_getmetatable(L, LMF_TENSOR_MT);
    int tensor_mt = lua_gettop(L);
    luaL_newmetatable(L, LMF_VARIABLE_MT);
    luaL_setfuncs(L, meta, 0);
    copy_operators(L, tensor_mt);
    lmf_variable_box_class(L);
    luaL_newlib(L, meths);
    lmf_open_index(L, methods, -1, mf);
    lua_pushvalue(L, methods);
    lua_getfield(L, tensor_mt, "__index");
    lua_pushcclosure(L, v_index, 3);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 2); /* metatables */
    lua_pushcfunction(L, l_variable);
    lua_setfield(L, -2, "Variable");
    static const luaL_Reg graph_funcs[] = {
        {"global_variables", l_global_variables},
        {"trainable_variables", l_trainable_variables},
        {"global_variables_initializer", l_global_variables_initializer},
        {"variables_initializer", l_variables_initializer}, {NULL, NULL}};
    luaL_setfuncs(L, graph_funcs, 0);
}
