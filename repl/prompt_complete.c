/* prompt_complete.c — readline completion from the live Lua state.
 *
 * On Tab, the word before the cursor ("mf.random.no", "x:resh", "pri") is
 * split at its last '.' or ':'; the part before is looked up from the
 * globals with raw gets (no user __index code runs while completing) and
 * the names it offers that start with the part after become candidates:
 * functions get a "(" and tables a "." appended. Candidates are collected
 * under lua_pcall, copied into a malloc'ed array, and handed to readline,
 * which frees what it is given. Methods (from a metatable's __index) are
 * offered after ':' even when '.' was typed. An object of lib/ (a layer, a
 * model) offers its API: methods after ':', properties after '.' (never
 * as "name("), private helpers never (help_objects.c's lmf_object_members). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <readline/readline.h>

#include "help_objects.h"
#include "prompt_complete.h"

static lua_State *complete_L;
static char **cands;
static size_t ncands;

static const char *const keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    NULL};

static const char *const tensor_fields[] = {"shape", "dtype", "ndim", "name", NULL};

static int is_name_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Adds "head .. key .. suffix" to the result table at 'res' when 'key'
 * starts with 'prefix'. Names starting with "_" only when asked for. */
static void offer(lua_State *L, int res, const char *head, const char *key, const char *prefix,
                  const char *suffix)
{
    size_t lp = strlen(prefix);
    if (strncmp(key, prefix, lp) != 0 || (key[0] == '_' && prefix[0] != '_'))
        return;
    for (const char *c = key; *c; c++)
        if (!is_name_char(*c))
            return;
    lua_pushfstring(L, "%s%s%s", head, key, suffix);
    lua_rawseti(L, res, (lua_Integer)lua_rawlen(L, res) + 1);
}

/* Offers the string keys of the table at 't' ('methods': functions only). */
static void offer_keys(lua_State *L, int t, int res, const char *head, const char *prefix,
                       int methods)
{
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int vt = lua_type(L, -1);
        if (lua_type(L, -2) == LUA_TSTRING && (!methods || vt == LUA_TFUNCTION)) {
            const char *suffix = vt == LUA_TFUNCTION ? "(" : vt == LUA_TTABLE ? "." : "";
            offer(L, res, head, lua_tostring(L, -2), prefix, suffix);
        }
        lua_pop(L, 1);
    }
}

/* Offers the names in the array at 'arr'. */
static void offer_names(lua_State *L, int arr, int res, const char *head, const char *prefix,
                        const char *suffix)
{
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, arr); i++) {
        lua_rawgeti(L, arr, i);
        offer(L, res, head, lua_tostring(L, -1), prefix, suffix);
        lua_pop(L, 1);
    }
}

/* Whether the value at 'v' is a tensor (its metatable is "mf.Tensor"). */
static int is_tensor(lua_State *L, int v)
{
    if (!lua_getmetatable(L, v))
        return 0;
    int tensor = lua_getfield(L, -1, "__name") == LUA_TSTRING &&
                 strcmp(lua_tostring(L, -1), "mf.Tensor") == 0;
    lua_pop(L, 2);
    return tensor;
}

/* Offers what the metatable's '__index' provides for the value at 'v': a
 * table's keys, or the keys of tables among a C function's upvalues (how
 * the tensor metatable keeps its methods). */
static void offer_index(lua_State *L, int v, int res, const char *head, const char *prefix,
                        int methods)
{
    if (!lua_getmetatable(L, v))
        return;
    int type = lua_getfield(L, -1, "__index");
    int idx = lua_gettop(L);
    if (type == LUA_TTABLE)
        offer_keys(L, idx, res, head, prefix, methods);
    for (int i = 1; type == LUA_TFUNCTION && lua_getupvalue(L, idx, i); i++) {
        if (lua_istable(L, -1))
            offer_keys(L, lua_gettop(L), res, head, prefix, methods);
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
}

/* Pushes the value named by 'path' (len bytes, "a.b.c"), or nil. */
static void resolve(lua_State *L, const char *path, size_t len)
{
    lua_pushglobaltable(L);
    size_t i = 0;
    while (i < len && !lua_isnil(L, -1)) {
        size_t j = i;
        while (j < len && path[j] != '.')
            j++;
        lua_pushlstring(L, path + i, j - i);
        if (lua_istable(L, -2)) {
            lua_rawget(L, -2);
        } else {
            lua_pop(L, 1);
            lua_pushnil(L);
        }
        lua_remove(L, -2);
        i = j + 1;
    }
}

int lmf_complete_collect(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    lua_newtable(L);
    int res = lua_gettop(L);
    size_t sep = len;
    while (sep > 0 && text[sep - 1] != '.' && text[sep - 1] != ':')
        sep--;
    const char *prefix = text + sep;
    if (sep == 0) {
        lua_pushglobaltable(L);
        offer_keys(L, lua_gettop(L), res, "", prefix, 0);
        for (int i = 0; keywords[i]; i++)
            offer(L, res, "", keywords[i], prefix, "");
        lua_settop(L, res);
        return 1;
    }
    int methods = text[sep - 1] == ':';
    const char *head = lua_pushlstring(L, text, sep);
    /* Methods come from the metatable and are called with ':', so "x.resh"
     * completes to "x:reshape(" (x.reshape() would miss its self). */
    lua_pushlstring(L, text, sep - 1);
    lua_pushliteral(L, ":");
    lua_concat(L, 2);
    const char *method_head = lua_tostring(L, -1);
    resolve(L, text, sep - 1);
    int v = lua_gettop(L);
    if (lmf_object_members(L, v)) {   /* an object of lib/: its API, properties apart */
        if (!methods)
            offer_names(L, v + 2, res, head, prefix, "");
        if (methods || lua_rawlen(L, res) == 0)
            offer_names(L, v + 1, res, method_head, prefix, "(");
        lua_settop(L, res);
        return 1;
    }
    if (!methods) {   /* fields first: "x." lists shape, dtype, ndim, name */
        if (lua_istable(L, v))
            offer_keys(L, v, res, head, prefix, 0);
        for (int i = 0; is_tensor(L, v) && tensor_fields[i]; i++)
            offer(L, res, head, tensor_fields[i], prefix, "");
    }
    /* Methods after ':', or after '.' when no field matches (a common
     * prefix of "x.a" and "x:b" would be "x", dropping what was typed). */
    if (methods || lua_rawlen(L, res) == 0)
        offer_index(L, v, res, method_head, prefix, 1);
    lua_settop(L, res);
    return 1;
}

static void free_cands(void)
{
    for (size_t i = 0; i < ncands; i++)
        free(cands[i]);
    free(cands);
    cands = NULL;
    ncands = 0;
}

/* Runs 'collect' protected and copies its strings to 'cands'. */
static void gather(const char *text)
{
    lua_State *L = complete_L;
    free_cands();
    int top = lua_gettop(L);
    lua_pushcfunction(L, lmf_complete_collect);
    lua_pushstring(L, text);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        size_t n = (size_t)lua_rawlen(L, -1);
        cands = malloc((n + 1) * sizeof *cands);
        for (size_t i = 0; cands && i < n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            char *s = strdup(lua_tostring(L, -1));
            lua_pop(L, 1);
            if (s)
                cands[ncands++] = s;
        }
    }
    lua_settop(L, top);
}

static char *generator(const char *text, int state)
{
    static size_t next;
    (void)text;
    if (state == 0)
        next = 0;
    if (next >= ncands)
        return NULL;
    char *s = cands[next];
    cands[next++] = NULL;   /* readline frees it */
    return s;
}

static char **attempt(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1;
    rl_completion_append_character = '\0';
    gather(text);
    char **m = rl_completion_matches(text, generator);
    free_cands();
    return m;
}

/* Lists candidates without their common "a.b." head. */
static void display(char **matches, int num, int max_length)
{
    const char *first = matches[1];
    size_t skip = strlen(first);
    if (skip > 0 && (first[skip - 1] == '.' || first[skip - 1] == '('))
        skip--;   /* a table's "name." or a function's "name(" */
    while (skip > 0 && first[skip - 1] != '.' && first[skip - 1] != ':')
        skip--;
    char **shown = malloc(((size_t)num + 1) * sizeof *shown);
    if (!shown)
        return;
    shown[0] = matches[0];
    for (int i = 1; i <= num; i++)
        shown[i] = matches[i] + (strlen(matches[i]) >= skip ? skip : 0);
    rl_display_match_list(shown, num, max_length - (int)skip);
    rl_forced_update_display();
    free(shown);
}

void lmf_complete_init(lua_State *L)
{
    complete_L = L;
    rl_attempted_completion_function = attempt;
    rl_completion_display_matches_hook = display;
    rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#";
    rl_completer_word_break_characters = rl_basic_word_break_characters;
}
