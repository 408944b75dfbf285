/* prompt_show.c — the prompt's printer for expression values.
 *
 * Values that know how to print themselves (__tostring, e.g. tensors) use
 * it; plain tables show their contents, so 't.shape' prints {2, 3} rather
 * than "table: 0x...". The text is built as pieces in a Lua table (so the
 * collector owns everything if an error is raised) and joined at the end. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "prompt_show.h"

#define SHOW_MAX_ITEMS 64
#define SHOW_MAX_DEPTH 3

typedef struct Pieces {
    int table;   /* stack index of the parts table */
    int n;
} Pieces;

/* Moves the string on top into the parts. */
static void add_top(lua_State *L, Pieces *p)
{
    lua_rawseti(L, p->table, ++p->n);
}

static void add_lit(lua_State *L, Pieces *p, const char *s)
{
    lua_pushstring(L, s);
    add_top(L, p);
}

static int is_identifier(const char *s)
{
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* The metatable field '__name' of the value at 'idx', or NULL. */
static const char *type_name(lua_State *L, int idx, int *has_tostring)
{
    const char *name = NULL;
    *has_tostring = 0;
    if (!lua_getmetatable(L, idx))
        return NULL;
    *has_tostring = lua_getfield(L, -1, "__tostring") != LUA_TNIL;
    if (lua_getfield(L, -2, "__name") == LUA_TSTRING)
        name = lua_tostring(L, -1);   /* kept alive by the metatable */
    lua_pop(L, 3);
    return name;
}

/* A tensor inside a table: one line, "mf.Tensor(shape=(2,3), dtype=float32)". */
static void add_tensor_short(lua_State *L, int v, Pieces *p)
{
    lua_getfield(L, v, "shape");
    int shape = lua_gettop(L);
    lua_Integer rank = lua_istable(L, shape) ? (lua_Integer)lua_rawlen(L, shape) : 0;
    luaL_checkstack(L, (int)(2 * rank + 8), "tensor rank too large to print");
    int k = 1;
    lua_pushliteral(L, "mf.Tensor(shape=(");
    for (lua_Integer i = 1; i <= rank; i++, k++) {
        if (i > 1) {
            lua_pushliteral(L, ",");
            k++;
        }
        lua_rawgeti(L, shape, i);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
    }
    lua_pushliteral(L, "), dtype=");
    lua_getfield(L, v, "dtype");
    luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);
    lua_pushliteral(L, ")");
    lua_concat(L, k + 3);
    lua_remove(L, shape);
    add_top(L, p);
}

/* A tensor inside a table, shown with what a user wants to see there: a
 * graph tensor its one-line form ("<mf.Tensor 'add:0' ...>"), a small
 * concrete one its values on one line, "mf.Tensor([1 2], shape=(2,),
 * dtype=float32)" (sess:run({loss, w}) at the prompt), a large one only
 * its shape and dtype. */
#define SHOW_SMALL_NUMEL 8
static void add_tensor_brief(lua_State *L, int v, Pieces *p)
{
    lua_getfield(L, v, "name");
    bool symbolic = lua_type(L, -1) == LUA_TSTRING && lua_rawlen(L, -1) > 0;
    lua_pop(L, 1);
    if (symbolic) {
        luaL_tolstring(L, v, NULL);
        add_top(L, p);
        return;
    }
    lua_getfield(L, v, "numel");
    lua_pushvalue(L, v);
    lua_Integer n = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isinteger(L, -1)
                        ? lua_tointeger(L, -1) : SHOW_SMALL_NUMEL + 1;
    lua_pop(L, 1);
    if (n > SHOW_SMALL_NUMEL) {
        add_tensor_short(L, v, p);
        return;
    }
    size_t len;
    const char *s = luaL_tolstring(L, v, &len);
    const char *last = strrchr(s, '\n');   /* "shape=(2,), dtype=float32" */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "mf.Tensor(");
    bool space = false;
    char prev = '[';     /* no space after an opening bracket */
    for (const char *c = s; last && c < last; c++) {
        if (*c == '\n' || *c == ' ') {
            space = true;
            continue;
        }
        if (space && prev != '[' && *c != ']')
            luaL_addchar(&b, ' ');
        space = false;
        luaL_addchar(&b, *c);
        prev = *c;
    }
    if (last) {
        luaL_addstring(&b, ", ");
        luaL_addstring(&b, last + 1);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    lua_remove(L, -2);
    add_top(L, p);
}

static void add_value(lua_State *L, int v, int depth, Pieces *p);

/* The key of an entry: "name = " or "[key] = ". */
static void add_key(lua_State *L, int k, int depth, Pieces *p)
{
    if (lua_type(L, k) == LUA_TSTRING && is_identifier(lua_tostring(L, k))) {
        lua_pushfstring(L, "%s = ", lua_tostring(L, k));
        add_top(L, p);
        return;
    }
    add_lit(L, p, "[");
    add_value(L, k, depth + 1, p);
    add_lit(L, p, "] = ");
}

/* Pushes nothing; reads the raw field "n" of the table at 'v' as an
 * integer into '*n' and returns its type (LUA_TNUMBER only for an integer). */
static int raw_n(lua_State *L, int v, lua_Integer *n)
{
    lua_pushliteral(L, "n");
    int type = lua_rawget(L, v);
    if (type == LUA_TNUMBER && lua_isinteger(L, -1))
        *n = lua_tointeger(L, -1);
    else if (type == LUA_TNUMBER)
        type = LUA_TNIL;
    lua_pop(L, 1);
    return type;
}

/* The length of a packed array ({a, b, n = 2}, as table.pack and
 * compute_gradients' pairs make, whose holes are nils): its field 'n' when
 * every other key is an integer in 1..n; -1 for any other table. */
static lua_Integer packed_length(lua_State *L, int v)
{
    lua_Integer n = -1;
    if (raw_n(L, v, &n) != LUA_TNUMBER || n < 0)
        return -1;
    for (lua_pushnil(L); lua_next(L, v); lua_pop(L, 1)) {
        bool item = lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n;
        bool the_n = lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "n") == 0;
        if (!item && !the_n) {
            lua_pop(L, 2);
            return -1;
        }
    }
    return n;
}

static void add_table(lua_State *L, int v, int depth, Pieces *p)
{
    if (depth >= SHOW_MAX_DEPTH) {
        add_lit(L, p, "{...}");
        return;
    }
    lua_Integer packed = packed_length(L, v);   /* shown as an array, without "n =" */
    lua_Integer len = packed >= 0 ? packed : (lua_Integer)lua_rawlen(L, v);
    int count = 0;
    add_lit(L, p, "{");
    for (lua_Integer i = 1; i <= len; i++) {
        if (count > 0)
            add_lit(L, p, ", ");
        if (count++ == SHOW_MAX_ITEMS) {
            add_lit(L, p, "...}");
            return;
        }
        lua_rawgeti(L, v, i);
        add_value(L, lua_gettop(L), depth + 1, p);
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    while (lua_next(L, v)) {
        if ((lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= len) ||
            packed >= 0) {
            lua_pop(L, 1);
            continue;
        }
        if (count > 0)
            add_lit(L, p, ", ");
        if (count++ == SHOW_MAX_ITEMS) {
            lua_pop(L, 2);
            add_lit(L, p, "...}");
            return;
        }
        add_key(L, lua_gettop(L) - 1, depth, p);
        add_value(L, lua_gettop(L), depth + 1, p);
        lua_pop(L, 1);
    }
    add_lit(L, p, "}");
}

/* A Variable inside a table (or among several values): one line,
 * "mf.Variable('w', [1. 2.], shape=(2,), dtype=float32)". */
static void add_variable_brief(lua_State *L, int v, Pieces *p)
{
    lua_getfield(L, v, "name");
    lua_pushfstring(L, "mf.Variable('%s', ", luaL_optstring(L, -1, "?"));
    lua_remove(L, -2);
    add_top(L, p);
    lua_getfield(L, v, "read_value");
    lua_pushvalue(L, v);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
        int pieces = p->n;
        add_tensor_brief(L, lua_gettop(L), p);
        /* drop the inner "mf.Tensor(" and ")": the Variable wraps the values */
        lua_rawgeti(L, p->table, pieces + 1);
        const char *s = lua_tostring(L, -1);
        if (s && strncmp(s, "mf.Tensor(", 10) == 0) {
            lua_pushlstring(L, s + 10, strlen(s) - 10);
            lua_rawseti(L, p->table, pieces + 1);
        } else {
            add_lit(L, p, ")");
        }
        lua_pop(L, 1);
    } else {
        add_lit(L, p, "?)");
    }
    lua_pop(L, 1);
}

static void add_value(lua_State *L, int v, int depth, Pieces *p)
{
    luaL_checkstack(L, 8, "value too deeply nested to print");
    int has_tostring;
    const char *name = type_name(L, v, &has_tostring);
    if (depth > 0 && name && strcmp(name, "mf.Tensor") == 0) {
        add_tensor_brief(L, v, p);
    } else if (depth > 0 && name && strcmp(name, "mf.Variable") == 0) {
        add_variable_brief(L, v, p);
    } else if (lua_type(L, v) == LUA_TTABLE && !has_tostring && !name) {
        add_table(L, v, depth, p);
    } else if (depth > 0 && lua_type(L, v) == LUA_TSTRING) {
        lua_pushfstring(L, "\"%s\"", lua_tostring(L, v));
        add_top(L, p);
    } else {
        luaL_tolstring(L, v, NULL);
        add_top(L, p);
    }
}

/* When the value at 'v' is the mf table or one of its tables (mf.nn),
 * pushes its path ("mf", "mf.nn") and returns 1. */
static int module_path(lua_State *L, int v)
{
    if (lua_type(L, v) != LUA_TTABLE)
        return 0;
    int top = lua_gettop(L);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "mf") != LUA_TTABLE) {
        lua_settop(L, top);
        return 0;
    }
    int mf = top + 2;
    if (lua_rawequal(L, v, mf)) {
        lua_settop(L, top);
        lua_pushliteral(L, "mf");
        return 1;
    }
    lua_pushnil(L);
    while (lua_next(L, mf)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, v, -1)) {
            lua_pushfstring(L, "mf.%s", lua_tostring(L, -2));
            lua_replace(L, top + 1);
            lua_settop(L, top + 1);
            return 1;
        }
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    return 0;
}

/* mf or one of its tables at the prompt: its names in order, functions
 * with "()", on wrapped lines, instead of a wall of "function: 0x..." (the
 * names, not the addresses, are what a user looks for). */
static void add_module(lua_State *L, int v, Pieces *p)
{
    lua_newtable(L);
    int names = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, v)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_tostring(L, -2)[0] != '_') {
            lua_pushfstring(L, "%s%s", lua_tostring(L, -2),
                            lua_type(L, -1) == LUA_TFUNCTION ? "()"
                            : lua_type(L, -1) == LUA_TTABLE  ? "." : "");
            lua_rawseti(L, names, (lua_Integer)lua_rawlen(L, names) + 1);
        }
        lua_pop(L, 1);
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, names);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    lua_pushfstring(L, "%s: %d names (help(%s) explains them)\n", lua_tostring(L, -2),
                    (int)lua_rawlen(L, names), lua_tostring(L, -2));
    add_top(L, p);
    size_t col = 0;
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, names); i++) {
        lua_rawgeti(L, names, i);
        size_t len = lua_rawlen(L, -1);
        if (col > 0 && col + 2 + len > 78) {
            add_lit(L, p, "\n");
            col = 0;
        }
        if (col > 0) {
            add_lit(L, p, "  ");
            col += 2;
        }
        add_top(L, p);
        col += len;
    }
    lua_pop(L, 1);
}

/* Whether the value at 'v' prints on several lines by itself (a tensor
 * with values, a Variable): among several values it prints briefly. */
static bool is_tensorish(lua_State *L, int v)
{
    int has_tostring;
    const char *name = type_name(L, v, &has_tostring);
    return name && (strcmp(name, "mf.Tensor") == 0 || strcmp(name, "mf.Variable") == 0);
}

/* Adds the values 1..n to 'p' separated by tabs; several tensors or
 * Variables print on one line each ('brief'), a single one in full. */
static void add_values(lua_State *L, int n, Pieces *p, bool modules)
{
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            add_lit(L, p, "\t");
        if (modules && module_path(L, i)) {
            add_module(L, i, p);
            lua_pop(L, 1);
            continue;
        }
        if (n > 1 && is_tensorish(L, i)) {
            int has_tostring;
            if (strcmp(type_name(L, i, &has_tostring), "mf.Tensor") == 0)
                add_tensor_brief(L, i, p);
            else
                add_variable_brief(L, i, p);
            continue;
        }
        add_value(L, i, 0, p);
    }
}

int lmf_show_print(lua_State *L)
{
    int n = lua_gettop(L);
    lua_newtable(L);
    Pieces p = {lua_gettop(L), 0};
    add_values(L, n, &p, false);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= p.n; i++) {
        lua_rawgeti(L, p.table, i);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    fwrite(s, 1, len, stdout);
    fflush(stdout);
    return 0;
}

int lmf_show_string(lua_State *L)
{
    int n = lua_gettop(L);
    lua_newtable(L);
    Pieces p = {lua_gettop(L), 0};
    add_values(L, n, &p, true);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= p.n; i++) {
        lua_rawgeti(L, p.table, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

int lmf_show_values(lua_State *L)
{
    lmf_show_string(L);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    fwrite(s, 1, len, stdout);
    fputs("\n", stdout);
    fflush(stdout);
    return 0;
}
