/* lmf_arg.c — the argument layer of the bindings, as lauxlib is to Lua:
 * reading arguments and options (numbers, integers, axes, shapes, dtype
 * names, paths, option tables, argument counts), raising the engine's
 * errors, and moving the engine's text buffers into Lua. It knows no box:
 * tensors, Variables and graphs are repl/'s next floor (doc/design.md,
 * "The floors of repl/"). It includes nothing from repl/ but its header and
 * interrupt.h (an engine error while Ctrl-C is pending is the interrupt).
 *
 * Ownership: the engine's text buffer sits in a userdata with a __gc, so a
 * Lua memory error while pushing the string leaks nothing. */
#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "core/shape.h"
#include "interrupt.h"
#include "lmf_arg.h"

#define STRBUF_MT "mf.StrBuf"

/* ---- errors ------------------------------------------------------------------ */

void lmf_push_engine_error(lua_State *L)
{
    /* an engine error while Ctrl-C is pending (a kernel stopped for it):
     * this error is the interrupt, so the hook must not raise it again
     * once a pcall has caught this one */
    lmf_interrupt_taken();
    lua_pushstring(L, mf_err_msg());
    mf_err_clear();
}

int lmf_raise(lua_State *L)
{
    /* "script.lua:12: " first, as luaL_error writes it: the line of the
     * caller (for an operator, the line with the operator) */
    luaL_where(L, 1);
    lmf_push_engine_error(L);
    lua_concat(L, 2);
    return lua_error(L);
}

void lmf_check_written(lua_State *L, MfStatus st)
{
    lmf_check_status(L, st);
    lmf_interrupt_after_return();
}

void lmf_check_status(lua_State *L, MfStatus st)
{
    if (st != MF_OK)
        lmf_raise(L);
}

/* ---- arguments --------------------------------------------------------------- */

const char *lmf_check_path(lua_State *L, int idx, const char *fname)
{
    size_t len;
    const char *s = luaL_checklstring(L, idx, &len);
    if (strlen(s) != len)
        luaL_error(L, "%s: the path holds a NUL byte (\\0) at byte %d; a file name cannot",
                   fname, (int)strlen(s) + 1);
    if (len == 0)
        luaL_error(L, "%s: expected a path, got an empty string", fname);
    return s;
}


const char *lmf_name_string(lua_State *L, int idx)
{
    size_t n;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
    return s && strlen(s) == n ? s : NULL;
}

const char *lmf_value_text(lua_State *L, int idx)
{
    size_t n;
    const char *s = luaL_tolstring(L, idx, &n);
    if (strlen(s) == n)
        return s;
    luaL_Buffer b;
    luaL_buffinit(L, &b);   /* "SAME\0x": the NUL shown, not where the text stops */
    for (size_t i = 0; i < n; i++) {
        if (s[i])
            luaL_addchar(&b, s[i]);
        else
            luaL_addstring(&b, "\\0");
    }
    luaL_pushresult(&b);
    lua_remove(L, -2);
    return lua_tostring(L, -1);
}

MfDType lmf_opt_dtype(lua_State *L, int idx, MfDType dflt)
{
    if (lua_isnoneornil(L, idx))
        return dflt;
    MfDType dt;
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_typeerror(L, idx,
                       "dtype name (\"float32\", \"float64\", \"int32\", \"int64\", \"bool\")");
    const char *name = lmf_name_string(L, idx);
    if (!name || !mf_dtype_parse(name, &dt))
        luaL_argerror(L, idx, lua_pushfstring(L, "unknown dtype '%s' (expected float32, "
                                              "float64, int32, int64, bool, uint8, float16 or "
                                              "bfloat16)", lmf_value_text(L, idx)));
    return dt;
}

int lmf_opt_dtype_field(lua_State *L, int idx, const char *fname)
{
    if (!lmf_opt_field(L, idx, "dtype"))
        return -1;
    const char *name = lmf_name_string(L, -1);
    MfDType dt;
    if (!name || !mf_dtype_parse(name, &dt))
        return luaL_error(L, "%s: option 'dtype' must be a dtype name (float32, float64, int32, "
                          "int64, bool, uint8, float16 or bfloat16), got %s", fname,
                          lmf_value_text(L, -1));
    lua_pop(L, 1);
    return (int)dt;
}

/* Shape errors name the function explicitly (fname), not by looking at the
 * Lua stack: a callable object or a field such as st.fn would be named wrongly. */
static int64_t shape_dim(lua_State *L, int idx, const char *fname, int i, int allow_unknown)
{
    const char *what = lua_pushfstring(L, "shape entry %d", i);
    int64_t d = lmf_check_integer(L, -2, fname, what);
    lua_pop(L, 1);
    if (d < 0 && !(allow_unknown && d == -1))
        luaL_error(L, "bad argument #%d to '%s' (shape entry %d must be >= 0, got %I)", idx,
                   fname, i, (lua_Integer)d);
    return d;
}

/* A shape is an array and nothing else: {mean = 5} or {2, dtype = "int32"}
 * (options put inside the shape) would otherwise be read as () or (2,)
 * and the rest ignored without a word. */
static void check_no_keyed_entries(lua_State *L, int idx, const char *fname, int rank)
{
    int t = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > rank) {
            const char *key = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "bad argument #%d to '%s' (shape (array of integers) expected, got a "
                       "table with key '%s')", idx, fname, key);
        }
    }
}

int lmf_check_shape(lua_State *L, int idx, const char *fname, int64_t *shape, int allow_unknown)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_pushvalue(L, idx);
        shape[0] = shape_dim(L, idx, fname, 1, allow_unknown);
        lua_pop(L, 1);
        return 1;
    }
    if (!lua_istable(L, idx)) {
        const char *got = luaL_getmetafield(L, idx, "__name") == LUA_TSTRING
                              ? lua_tostring(L, -1) : luaL_typename(L, idx);
        luaL_error(L, "bad argument #%d to '%s' (shape (array of integers) expected, got %s)",
                   idx, fname, got);
    }
    int rank = (int)lua_rawlen(L, idx);
    if (rank > MF_MAX_RANK)
        luaL_error(L, "bad argument #%d to '%s' (shape has rank %d, at most %d is supported)",
                   idx, fname, rank, MF_MAX_RANK);
    for (int i = 0; i < rank; i++) {
        lua_rawgeti(L, idx, i + 1);
        shape[i] = shape_dim(L, idx, fname, i + 1, allow_unknown);
        lua_pop(L, 1);
    }
    check_no_keyed_entries(L, idx, fname, rank);
    return rank;
}

int64_t lmf_axis(lua_State *L, const char *fname, lua_Integer axis, int rank, int extra)
{
    int64_t ax = 0;
    lmf_check_status(L, mf_axis_one_based(fname, axis, rank, extra, &ax));
    return ax;
}

int64_t lmf_check_axis(lua_State *L, int idx, const char *fname, int rank, int extra)
{
    int isint = 0;
    lua_Integer ax = lua_tointegerx(L, idx, &isint);
    if (!isint)
        luaL_error(L, "%s: an axis must be an integer, got %s", fname,
                   lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx)
                                                   : luaL_typename(L, idx));
    return lmf_axis(L, fname, ax, rank, extra);
}

lua_Integer lmf_check_integer(lua_State *L, int idx, const char *fname, const char *what)
{
    lua_Integer v = 0;
    if (lua_isinteger(L, idx))
        return lua_tointeger(L, idx);
    /* 'lua_numbertointeger' truncates; only whole floats are integers. */
    lua_Number x = lua_tonumber(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER && x == floor(x) && lua_numbertointeger(x, &v))
        return v;
    if (lua_type(L, idx) == LUA_TNUMBER)
        return luaL_error(L, "%s: %s must be an integer, got %s", fname, what,
                          luaL_tolstring(L, idx, NULL));
    return luaL_error(L, "%s: %s must be an integer, got %s", fname, what,
                      luaL_typename(L, idx));
}

int lmf_opt_field(lua_State *L, int idx, const char *key)
{
    if (!lua_istable(L, idx))
        return 0;
    if (lua_getfield(L, idx, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

int lmf_opt_bool(lua_State *L, int idx, const char *fname, const char *key, int dflt)
{
    if (!lmf_opt_field(L, idx, key))
        return dflt;
    if (!lua_isboolean(L, -1))
        luaL_error(L, "%s: option '%s' must be a boolean, got %s", fname, key,
                   luaL_typename(L, -1));
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

lua_Number lmf_opt_number(lua_State *L, int idx, const char *fname, const char *key,
                          lua_Number dflt)
{
    if (!lmf_opt_field(L, idx, key))
        return dflt;
    if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "%s: option '%s' must be a number, got %s", fname, key,
                   luaL_typename(L, -1));
    lua_Number v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

bool lmf_opt_integer_given(lua_State *L, int idx, const char *fname, const char *key,
                           lua_Integer *v)
{
    if (!lmf_opt_field(L, idx, key))
        return false;
    const char *what = lua_pushfstring(L, "option '%s'", key);
    *v = lmf_check_integer(L, -2, fname, what);
    lua_pop(L, 2);
    return true;
}

lua_Integer lmf_opt_integer(lua_State *L, int idx, const char *fname, const char *key,
                            lua_Integer dflt)
{
    lmf_opt_integer_given(L, idx, fname, key, &dflt);
    return dflt;
}

/* Lists 'known' ("a, b, c") on top of the stack. */
static const char *push_key_list(lua_State *L, const char *const *known)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; known[i]; i++) {
        luaL_addstring(&b, i ? ", " : "");
        luaL_addstring(&b, known[i]);
    }
    if (!known[0])
        luaL_addstring(&b, "none");
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

void lmf_check_options(lua_State *L, int idx, const char *fname, const char *const *known)
{
    if (!lua_istable(L, idx))
        return;
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int i = 0;
        while (k && known[i] && strcmp(k, known[i]) != 0)
            i++;
        if (!k || !known[i]) {   /* a non-string key is shown as tostring shows it */
            const char *shown = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "%s: unknown option '%s' (known: %s)", fname, shown,
                       push_key_list(L, known));
        }
    }
}


int lmf_arg_error(lua_State *L, int arg, const char *fname, const char *want)
{
    return luaL_error(L, "bad argument #%d to '%s' (%s expected, got %s)", arg, fname, want,
                      lua_gettop(L) < arg ? "no value" : luaL_typename(L, arg));
}

void lmf_check_nargs(lua_State *L, const char *fname, int max)
{
    /* the message names the first value given, not a nil before it */
    int top = lua_gettop(L), first = max + 1;
    while (first <= top && lua_isnil(L, first))
        first++;
    if (first <= top)
        luaL_error(L, "bad argument #%d to '%s' (no value expected: %s takes at most %d "
                   "argument%s)", first, fname, fname, max, max == 1 ? "" : "s");
}

/* ---- text buffers ------------------------------------------------------------ */

static int strbuf_gc(lua_State *L)
{
    mf_strbuf_free(luaL_checkudata(L, 1, STRBUF_MT));
    return 0;
}

MfStrBuf *lmf_new_strbuf(lua_State *L)
{
    MfStrBuf *b = lua_newuserdatauv(L, sizeof *b, 0);
    *b = (MfStrBuf){0};
    if (luaL_newmetatable(L, STRBUF_MT)) {   /* the first buffer makes the class */
        lua_pushcfunction(L, strbuf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return b;
}

void lmf_push_strbuf(lua_State *L, MfStrBuf *b, MfStatus st)
{
    if (st != MF_OK) {
        mf_strbuf_free(b);
        lmf_raise(L);
    }
    lua_pushlstring(L, b->data ? b->data : "", b->len);
    mf_strbuf_free(b);
    lua_remove(L, -2);
}
