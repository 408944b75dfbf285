/* lmf_tensor_methods.c — what a "mf.Tensor" does in Lua: mf.tensor,
 * properties (shape, dtype, ndim, name), indexing, numel/item/totable,
 * tostring and the operators. The box itself (making, checking, converting
 * Lua data) is lmf_tensor.c, a floor below (doc/design.md, "The floors of
 * repl/"). */
#include <string.h>

#include "eager/eager.h"
#include "graph/graph.h"
#include "lmf.h"
#include "lmf_index.h"
#include "lmf_print.h"
#include "lmf_strict.h"

/* mf.tensor(data [, dtype]) */
static int l_tensor(lua_State *L)
{
    lmf_check_nargs(L, "tensor", 2);
    int dt = lua_isnoneornil(L, 2) ? -1 : (int)lmf_opt_dtype(L, 2, MF_FLOAT32);
    MfTensor *src = lmf_test_tensor(L, 1);
    if (src) {
        if (!src->storage)
            return luaL_error(L, "tensor: a symbolic (graph) tensor has no values yet; run it "
                              "in a Session");
        MfTensor *c = mf_tensor_clone(src);
        if (!c)
            return lmf_raise(L);
        lmf_push_tensor(L, c);
        if (dt >= 0 && dt != (int)src->dtype)
            luaL_error(L, "tensor: use mf.cast to change the dtype of a tensor");
        return 1;
    }
    lmf_push_data(L, 1, dt, "tensor");
    return 1;
}

static void push_shape(lua_State *L, const MfTensor *t)
{
    lua_createtable(L, t->rank, 0);
    for (int i = 0; i < t->rank; i++) {
        lua_pushinteger(L, t->shape[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

static void push_element(lua_State *L, const MfTensor *t, int64_t i)
{
    double v = mf_tensor_get(t, i);
    switch (t->dtype) {
    case MF_BOOL: lua_pushboolean(L, v != 0); break;
    case MF_INT32: lua_pushinteger(L, (lua_Integer)v); break;
    case MF_INT64: lua_pushinteger(L, mf_tensor_get_int(t, i)); break;
    case MF_UINT8: lua_pushinteger(L, (lua_Integer)v); break;
    default: lua_pushnumber(L, v); break;
    }
}

int lmf_push_tensor_property(lua_State *L, const MfTensor *t, const char *key)
{
    if (strcmp(key, "shape") == 0) {
        push_shape(L, t);
    } else if (strcmp(key, "dtype") == 0) {
        lua_pushstring(L, mf_dtype_name(t->dtype));
    } else if (strcmp(key, "ndim") == 0) {
        lua_pushinteger(L, t->rank);
    } else if (strcmp(key, "name") == 0 && t->node) {
        char name[300];
        lua_pushstring(L, mf_graph_tensor_name(t, name, sizeof name));
    } else if (strcmp(key, "name") == 0) {
        lua_pushnil(L);   /* an eager tensor has no name */
    } else {
        return 0;
    }
    return 1;
}

/* t[i]: 1-based along axis 1; a 1-D tensor gives a Lua value, else a view. */
static int index_tensor(lua_State *L, MfTensor *t, lua_Integer i)
{
    int64_t k = 0;
    MfTensor *v = NULL;
    lmf_check_status(L, mf_tensor_index(t, i, &k, &v));
    if (v)
        lmf_push_tensor(L, v);
    else
        push_element(L, t, k);
    return 1;
}

/* The open tensor at 'idx', not anchored: for reads that run no Lua code
 * and allocate nothing before they are done (a method lookup, #t). */
static MfTensor *peek_tensor(lua_State *L, int idx)
{
    LmfBox *box = lmf_tensor_box(L, idx);
    if (box && box->t)
        return box->t;
    return lmf_check_tensor(L, idx);
}

static int t_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING) {   /* a method: the hot path */
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
            return 1;   /* even of a closed tensor: the method's error names it */
        lua_pop(L, 1);
    }
    LmfBox *box = lmf_tensor_box(L, 1);
    if (box && !box->t)
        return luaL_error(L, "index: the tensor is closed (reading %s)",
                          lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "an element");
    MfTensor *t = lmf_check_tensor(L, 1);
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_Integer i = lmf_check_integer(L, 2, "index", "an index");
        if (t->rank == 1 && !t->node)   /* an element: a Lua value */
            return index_tensor(L, t, i);
        return lmf_index_read(L);   /* a view, with a gradient */
    }
    if (lua_type(L, 2) != LUA_TSTRING)
        return lmf_index_read(L);
    const char *key = lua_tostring(L, 2);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    if (!lmf_push_tensor_property(L, t, key))
        return lmf_tensor_no_field(L, lua_upvalueindex(1));
    return 1;
}

static int t_newindex(lua_State *L)
{
    return luaL_error(L, "tensors are immutable (as TensorFlow's): write into a mf.Variable "
                      "(v[{...}] = value, v:scatter_update) or build a new tensor "
                      "(mf.tensor_scatter_update, mf.where) instead of setting '%s'",
                      /* a key's __tostring may raise (a closed tensor) */
                      lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER
                          ? luaL_tolstring(L, 2, NULL) : luaL_typename(L, 2));
}

static int t_len(lua_State *L)
{
    MfTensor *t = peek_tensor(L, 1);
    if (t->rank == 0)
        return luaL_error(L, "#: a scalar has no length (it has rank 0)");
    lua_pushinteger(L, t->shape[0]);
    return 1;
}

static int t_numel(lua_State *L)
{
    lmf_check_nargs(L, "numel", 1);
    lua_pushinteger(L, mf_tensor_numel(peek_tensor(L, 1)));
    return 1;
}

static int t_item(lua_State *L)
{
    lmf_check_nargs(L, "item", 1);
    MfTensor *t = lmf_check_tensor(L, 1);
    lmf_check_status(L, mf_tensor_check_values(t, "item", true));
    push_element(L, t, 0);
    mf_tape_note_export(t);
    return 1;
}

/* Builds nested tables for dims 'd'.. starting at row-major element '*next'. */
static void push_nested(lua_State *L, const MfTensor *t, int d, int64_t *next)
{
    if (d == t->rank) {
        push_element(L, t, (*next)++);
        return;
    }
    luaL_checkstack(L, 4, "totable: nesting too deep");
    lua_createtable(L, (int)t->shape[d], 0);
    for (int64_t i = 1; i <= t->shape[d]; i++) {
        push_nested(L, t, d + 1, next);
        lua_rawseti(L, -2, i);
    }
}

static int t_totable(lua_State *L)
{
    lmf_check_nargs(L, "totable", 1);
    MfTensor *t = lmf_check_tensor(L, 1);
    lmf_check_status(L, mf_tensor_check_values(t, "totable", false));
    mf_tape_note_export(t);
    int64_t next = 0;
    push_nested(L, t, 0, &next);
    return 1;
}

static int t_gc(lua_State *L)
{
    LmfBox *box = lmf_tensor_box(L, 1);
    if (!box)
        return 0;
    mf_tensor_release(box->t);
    box->t = NULL;
    return 0;
}

static int t_tostring(lua_State *L)
{
    lmf_push_tensor_string(L, lmf_check_tensor(L, 1));
    return 1;
}

/* ---- operators ------------------------------------------------------------------ */

/* Runs a binary op where either side may be a Lua number (it takes the
 * tensor's dtype); errors name the op's function ("multiply" for x * y). */
static int arith(lua_State *L, MfOpId op, const char *fname)
{
    lmf_gc_before_op(L);   /* before the operands' anchor boxes (lmf.h) */
    MfTensor *in[2] = {lmf_test_tensor(L, 1), lmf_test_tensor(L, 2)};
    if (!in[0] || !in[1]) {
        int like = in[0] ? (int)in[0]->dtype : in[1] ? (int)in[1]->dtype : -1;
        in[0] = lmf_arg_tensor(L, 1, like, fname);
        in[1] = lmf_arg_tensor(L, 2, like, fname);
    }
    return lmf_call_op(L, op, 2, in, NULL);
}

static int t_add(lua_State *L) { return arith(L, MF_OP_ADD, "add"); }
static int t_sub(lua_State *L) { return arith(L, MF_OP_SUB, "subtract"); }
static int t_mul(lua_State *L) { return arith(L, MF_OP_MUL, "multiply"); }
static int t_div(lua_State *L) { return arith(L, MF_OP_DIV, "divide"); }
static int t_mod(lua_State *L) { return arith(L, MF_OP_MOD, "mod"); }
/* x ^ 2 is Square (as NumPy's power special-cases it): the same value, and
 * its gradient is two ops instead of Pow's general formula. */
static int t_pow(lua_State *L)
{
    lmf_gc_before_op(L);
    MfTensor *x = lmf_test_tensor(L, 1);
    if (x && lua_type(L, 2) == LUA_TNUMBER && lua_tonumber(L, 2) == 2 &&
        mf_dtype_is_float(x->dtype))
        return lmf_call_op(L, MF_OP_SQUARE, 1, &x, NULL);
    return arith(L, MF_OP_POW, "pow");
}

static int t_unm(lua_State *L)
{
    lmf_gc_before_op(L);
    MfTensor *x = lmf_check_tensor(L, 1);
    return lmf_call_op(L, MF_OP_NEG, 1, &x, NULL);
}

static int t_compare(lua_State *L)
{
    return luaL_error(L, "tensors cannot be compared with < or <= (Lua wants one boolean); "
                      "use mf.less, mf.less_equal, ... for elementwise results");
}

void lmf_open_tensor(lua_State *L, int methods)
{
    static const luaL_Reg meta[] = {
        {"__gc", t_gc}, {"__close", t_gc}, {"__newindex", t_newindex}, {"__len", t_len},
        {"__tostring", t_tostring}, {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul},
        {"__div", t_div}, {"__mod", t_mod}, {"__pow", t_pow}, {"__unm", t_unm},
        {"__lt", t_compare}, {"__le", t_compare}, {NULL, NULL}};
    static const luaL_Reg meths[] = {
        {"numel", t_numel}, {"item", t_item}, {"totable", t_totable}, {NULL, NULL}};
    methods = lua_absindex(L, methods);
    luaL_newmetatable(L, LMF_TENSOR_MT);
    luaL_setfuncs(L, meta, 0);
    lmf_tensor_box_class(L);
    lua_pushvalue(L, methods);
    lua_pushcclosure(L, t_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "mf.Tensor");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
    lua_pushvalue(L, methods);
    luaL_setfuncs(L, meths, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_tensor);
    lua_setfield(L, -2, "tensor");
}
