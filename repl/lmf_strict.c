/* lmf_strict.c — a missing field is an answer, not a silent nil.
 *
 * Reading a field that does not exist on a moonflow object (a tensor, a
 * Variable, a graph, a session, an optimizer, a tape, a Saver, a traced
 * function, a profile report) or in the 'mf' table raises an error that
 * names the field and, when one is close, the field that was meant:
 * "tensor: no field 'shap' (did you mean 'shape'?)" (Python's
 * AttributeError, with its "did you mean"). Code that probes for an
 * optional field uses rawget or pcall.
 *
 * The objects' '__index' (a table of methods or a C function) is wrapped
 * once, when the module opens, by a closure whose upvalues are the kind of
 * object, the original '__index' and the tables of names it serves (help
 * and completion read those tables among the upvalues, as before).
 *
 * Tensor '==' (Lua requires a boolean): true when both are tensors with
 * values of the same dtype and shape and equal elements (torch.equal; NaN
 * differs from itself); symbolic (graph) tensors are equal only to
 * themselves. Elementwise comparison is mf.equal(a, b). */
#include <ctype.h>
#include <string.h>

#include "core/tensor.h"
#include "lmf.h"
#include "lmf_strict.h"

#define NAME_MAX_LEN 64

/* Optimal-string-alignment distance (edits and swaps of neighbours),
 * ignoring case; names longer than NAME_MAX_LEN are far from everything. */
int lmf_name_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n >= NAME_MAX_LEN || m >= NAME_MAX_LEN)
        return NAME_MAX_LEN;
    int d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

typedef struct Best {
    const char *key;
    int dist, score;
    char name[NAME_MAX_LEN];
} Best;

static void consider(Best *b, const char *name)
{
    if (name[0] == '_')   /* metamethods and private fields are not offered */
        return;
    /* ties go to a name with the same first letter, then to a longer one
     * (a typo drops a letter more often than it adds one) */
    int d = lmf_name_distance(b->key, name);
    int score = 4 * d + 2 * (tolower((unsigned char)name[0]) !=
                             tolower((unsigned char)b->key[0])) +
                (strlen(name) < strlen(b->key));
    if (score < b->score && strlen(name) < sizeof b->name) {
        b->dist = d;
        b->score = score;
        strcpy(b->name, name);
    }
}

/* Considers the string keys of the table at 'idx'. */
static void consider_table(lua_State *L, int idx, Best *b)
{
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        if (lua_type(L, -2) == LUA_TSTRING)
            consider(b, lua_tostring(L, -2));
}

/* Considers the tables among the upvalues of the function at 'idx' from 'first' on. */
static void consider_upvalues(lua_State *L, int idx, int first, Best *b)
{
    for (int i = first; lua_getupvalue(L, idx, i); i++) {
        if (lua_istable(L, -1))
            consider_table(L, lua_gettop(L), b);
        lua_pop(L, 1);
    }
}

/* How far a name may be from the key to be offered: a third of its length. */
static int tolerance(const char *key)
{
    size_t n = strlen(key);
    return n <= 3 ? 1 : n <= 8 ? 2 : 3;
}

int lmf_no_field(lua_State *L, const char *kind, const char *key, int names,
                 const char *const *props)
{
    Best b = {key, NAME_MAX_LEN, 4 * NAME_MAX_LEN, ""};
    if (names && lua_istable(L, names))
        consider_table(L, names, &b);
    else if (names && lua_isfunction(L, names))
        consider_upvalues(L, names, 1, &b);
    for (int i = 0; props && props[i]; i++)
        consider(&b, props[i]);
    if (b.dist <= tolerance(key))
        return luaL_error(L, "%s: no field '%s' (did you mean '%s'?)", kind, key, b.name);
    if (strcmp(kind, "mf") == 0)
        return luaL_error(L, "mf: no field '%s' (help() lists the topics)", key);
    return luaL_error(L, "%s: no field '%s' (help(x) lists what a %s has)", kind, key, kind);
}

/* Fields of a tensor that are not methods, and common names from NumPy and
 * PyTorch that mean something else here. */
static const char *const tensor_props[] = {"shape", "dtype", "ndim", "name", NULL};
static const struct {
    const char *key, *hint;
} tensor_hints[] = {
    {"T", "transpose with t:transpose() or mf.transpose(t)"},
    {"numpy", "t:totable() gives the values as Lua tables, t:item() one number"},
    {"data", "t:totable() gives the values as Lua tables, t:item() one number"},
    {"len", "#t is the length of axis 1"},
};

int lmf_tensor_no_field(lua_State *L, int methods)
{
    const char *key = lua_tostring(L, 2);
    for (size_t i = 0; i < sizeof tensor_hints / sizeof *tensor_hints; i++)
        if (strcmp(key, tensor_hints[i].key) == 0)
            return luaL_error(L, "tensor: no field '%s' (%s)", key, tensor_hints[i].hint);
    return lmf_no_field(L, "tensor", key, methods, tensor_props);
}

/* The names of the Lua object that raised: the tables of upvalue 2 (the
 * original '__index', a table or a C function with tables as upvalues) and
 * upvalue 3 (its properties). Pushes a table of them. */
static void push_names(lua_State *L)
{
    lua_newtable(L);
    int out = lua_gettop(L);
    int orig = lua_upvalueindex(2);
    for (int k = 0; k < 2; k++) {
        int src = k == 0 ? orig : lua_upvalueindex(3);
        if (lua_istable(L, src)) {
            for (lua_pushnil(L); lua_next(L, src); lua_pop(L, 1))
                if (lua_type(L, k == 0 ? -2 : -1) == LUA_TSTRING) {
                    lua_pushvalue(L, k == 0 ? -2 : -1);
                    lua_pushboolean(L, 1);
                    lua_rawset(L, out);
                }
        }
    }
    for (int i = 1; lua_isfunction(L, orig) && lua_getupvalue(L, orig, i); i++) {
        if (lua_istable(L, -1))
            for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))
                if (lua_type(L, -2) == LUA_TSTRING) {
                    lua_pushvalue(L, -2);
                    lua_pushboolean(L, 1);
                    lua_rawset(L, out);
                }
        lua_pop(L, 1);
    }
}

/* The wrapped '__index': upvalue 1 the kind, 2 the original '__index', 3
 * an array of property names, 4.. the method tables of the original. */
static int strict_index(lua_State *L)
{
    lua_settop(L, 2);
    /* a Variable is indexed like a tensor: v[{2, {}}], v[mask] */
    bool indexed = strcmp(lua_tostring(L, lua_upvalueindex(1)), "Variable") == 0;
    if (lua_type(L, 2) != LUA_TSTRING && lua_type(L, 2) != LUA_TNUMBER && !indexed)
        return luaL_error(L, "%s: fields are named by strings (x.name), got a %s index",
                          lua_tostring(L, lua_upvalueindex(1)), luaL_typename(L, 2));
    if (lua_istable(L, lua_upvalueindex(2))) {
        lua_pushvalue(L, 2);
        lua_rawget(L, lua_upvalueindex(2));
    } else {
        lua_pushvalue(L, lua_upvalueindex(2));
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
    }
    if (!lua_isnil(L, -1) || lua_type(L, 2) != LUA_TSTRING)
        return 1;
    push_names(L);
    return lmf_no_field(L, lua_tostring(L, lua_upvalueindex(1)), lua_tostring(L, 2),
                        lua_gettop(L), NULL);
}

/* The objects made strict: metatable, kind, properties served by a C
 * '__index' beyond its method tables. */
static const struct {
    const char *mt, *kind;
    const char *props[8];
} strict_types[] = {
    {"mf.Variable", "Variable", {"name", "trainable", "shape", "dtype", "ndim", NULL}},
    {"mf.Graph", "Graph", {NULL}},
    {"mf.Session", "Session", {NULL}},
    {"mf.Operation", "Operation", {"name", "type", NULL}},
    {"mf.GradientTape", "GradientTape", {NULL}},
    {"mf.train.Optimizer", "Optimizer", {NULL}},
    {"mf.train.Saver", "Saver", {NULL}},
    {"mf.Function", "traced function", {NULL}},
    {"mf.ProfileReport", "profile report", {NULL}},
};

static void wrap_index(lua_State *L, int k)
{
    if (luaL_getmetatable(L, strict_types[k].mt) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_pushstring(L, strict_types[k].kind);
    if (lua_getfield(L, -2, "__index") == LUA_TNIL) {
        lua_pop(L, 3);
        return;
    }
    lua_newtable(L);
    for (int i = 0; strict_types[k].props[i]; i++) {
        lua_pushstring(L, strict_types[k].props[i]);
        lua_rawseti(L, -2, i + 1);
    }
    int n = 3, orig = lua_gettop(L) - 1;   /* help and completion look for method tables */
    for (int i = 1; lua_isfunction(L, orig) && lua_getupvalue(L, orig, i); i++)
        if (lua_istable(L, -1))
            n++;
        else
            lua_pop(L, 1);
    lua_pushcclosure(L, strict_index, n);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

/* mf's own '__index' (it has no other): mf.matmull. */
static int mf_index(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    return lmf_no_field(L, "mf", lua_tostring(L, 2), 1, NULL);
}

/* Tensor '==' (see the file comment). */
static int tensor_eq(lua_State *L)
{
    MfTensor *a = lmf_test_tensor(L, 1), *b = lmf_test_tensor(L, 2);
    bool eq = a && b && a->storage && b->storage && a->dtype == b->dtype &&
              a->rank == b->rank;
    for (int i = 0; eq && i < a->rank; i++)
        eq = a->shape[i] == b->shape[i];
    for (int64_t i = 0, n = eq ? mf_tensor_numel(a) : 0; eq && i < n; i++)
        eq = mf_tensor_get(a, i) == mf_tensor_get(b, i);
    lua_pushboolean(L, eq);
    return 1;
}

void lmf_open_strict(lua_State *L)
{
    for (size_t k = 0; k < sizeof strict_types / sizeof *strict_types; k++)
        wrap_index(L, (int)k);
    luaL_getmetatable(L, LMF_TENSOR_MT);
    lua_pushcfunction(L, tensor_eq);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);
    lua_newtable(L);   /* mf's metatable; mf is below it */
    lua_pushcfunction(L, mf_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
}
