/* lmf_conv.c — the reader of a conv algorithm option, {algorithm = "auto" |
 * "im2col" | "winograd" | "direct"}, for mf.config{conv_algorithm = ...}
 * (core/ops/conv.h "Algorithms"), and the window rule of core/ops/window.h
 * as mf.nn.conv_output_size and mf.nn.conv_padding. conv2d, its backprops
 * and conv2d_transpose are bound from their descriptors by lmf_op.c, which
 * reads the option through the schema. */
#include "core/ops/conv.h"
#include "core/ops/window.h"
#include "lmf.h"

int lmf_conv_algorithm_option(lua_State *L, int opt, const char *key, const char *fname)
{
    int type = lua_getfield(L, opt, key);
    const char *name = type == LUA_TNIL ? "auto" : lmf_name_string(L, -1);
    int a = mf_conv_algorithm_parse(name);
    if (a < 0)
        luaL_error(L, "%s: %s must be \"auto\", \"im2col\", \"winograd\" or \"direct\", "
                   "got %s", fname, key,
                   name ? lua_pushfstring(L, "\"%s\"", name)
                        : type == LUA_TSTRING ? lmf_value_text(L, -1) : luaL_typename(L, -1));
    lua_pop(L, 1);
    return a;
}

/* ---- mf.nn.conv_output_size, mf.nn.conv_padding: the window rule --------------------
 * (core/ops/window.h), asked from Lua so lib/layers.lua and a teacher see
 * the sizes and paddings the ops use. Each size argument is an integer (one
 * spatial axis) or an array of integers, one per spatial axis; the filter
 * size, stride and dilation may also be one integer for every axis. */

typedef struct WindowArgs {
    int n;             /* spatial axes */
    bool array;        /* input_size given as an array: results are arrays */
    int64_t in[MF_MAX_RANK], k[MF_MAX_RANK], s[MF_MAX_RANK], d[MF_MAX_RANK];
    MfPadding padding;
} WindowArgs;

/* One integer >= 'min' read from the value on top (popped). */
static int64_t window_entry(lua_State *L, const char *fname, const char *what, int64_t min)
{
    lua_Integer v = lmf_check_integer(L, -1, fname, what);
    if (v < min)
        luaL_error(L, "%s: %s must be at least %d, got %I", fname, what, (int)min, v);
    lua_pop(L, 1);
    return (int64_t)v;
}

/* Argument 'arg': an integer (every axis, or the one axis when 'n' is 0) or
 * an array of 'n' integers (any count from 1 to MF_MAX_RANK when 'n' is 0).
 * Returns the count read. */
static int window_values(lua_State *L, int arg, const char *fname, const char *what, int64_t min,
                         int n, int64_t *out)
{
    if (lua_type(L, arg) == LUA_TNUMBER) {
        lua_pushvalue(L, arg);
        out[0] = window_entry(L, fname, what, min);
        for (int i = 1; i < n; i++)
            out[i] = out[0];
        return n ? n : 1;
    }
    if (!lua_istable(L, arg))
        luaL_error(L, "%s: %s must be an integer or an array of integers (one per spatial "
                   "axis), got %s", fname, what, luaL_typename(L, arg));
    lua_Unsigned len = lua_rawlen(L, arg);
    if (n ? len != (lua_Unsigned)n : len < 1 || len > MF_MAX_RANK)
        luaL_error(L, "%s: %s must have %s entries (one per spatial axis), got %d", fname, what,
                   lua_pushfstring(L, n ? "%d" : "1 to %d", n ? n : MF_MAX_RANK), (int)len);
    for (int i = 0; i < (int)len; i++) {
        lua_rawgeti(L, arg, i + 1);
        out[i] = window_entry(L, fname, what, min);
    }
    return (int)len;
}

/* (input_size, filter_size, stride, padding [, dilation]) */
static WindowArgs window_args(lua_State *L, const char *fname)
{
    lmf_check_nargs(L, fname, 5);
    WindowArgs w = {.array = lua_istable(L, 1)};
    w.n = window_values(L, 1, fname, "input_size", 0, 0, w.in);
    window_values(L, 2, fname, "filter_size", 1, w.n, w.k);
    window_values(L, 3, fname, "stride", 1, w.n, w.s);
    if (lua_isnoneornil(L, 5))
        for (int i = 0; i < w.n; i++)
            w.d[i] = 1;
    else
        window_values(L, 5, fname, "dilation", 1, w.n, w.d);
    /* any letter case, as the ops' padding attribute */
    static const MfAttrDef padding = {.name = "padding", .type = MF_ATTR_ENUM,
                                      .choices = mf_padding_names};
    int i = mf_attr_enum_parse(&padding, lmf_name_string(L, 4));
    if (i < 0)
        luaL_error(L, "%s: padding must be \"VALID\" or \"SAME\", got %s", fname,
                   lua_type(L, 4) == LUA_TSTRING ? lmf_value_text(L, 4) : luaL_typename(L, 4));
    w.padding = (MfPadding)i;
    return w;
}

/* mf.nn.conv_output_size(input_size, filter_size, stride, padding [, dilation])
 *   -> out, extent (integers, or arrays of them): the output size and the
 *   dilated window's span (k - 1) * d + 1 (math.maxinteger when it does not
 *   fit in an integer); VALID with a window larger than the input gives 0. */
static int l_conv_output_size(lua_State *L)
{
    WindowArgs w = window_args(L, "conv_output_size");
    int64_t out[MF_MAX_RANK], pad;
    for (int i = 0; i < w.n; i++)
        mf_window_axis(w.padding, w.in[i], w.k[i], w.s[i], w.d[i], &out[i], &pad, NULL);
    for (int r = 0; r < 2; r++) {
        if (w.array)
            lua_createtable(L, w.n, 0);
        for (int i = 0; i < w.n; i++) {
            lua_pushinteger(L, r == 0 ? out[i] : mf_window_extent(w.k[i], w.d[i]));
            if (w.array)
                lua_rawseti(L, -2, i + 1);
        }
    }
    return 2;
}

/* mf.nn.conv_padding(input_size, filter_size, stride, padding [, dilation])
 *   -> before, after (one axis) or {{before, after}, ...} (an array: the
 *   paddings mf.pad takes for those axes). */
static int l_conv_padding(lua_State *L)
{
    WindowArgs w = window_args(L, "conv_padding");
    int64_t out, before, after;
    if (!w.array) {
        mf_window_axis(w.padding, w.in[0], w.k[0], w.s[0], w.d[0], &out, &before, &after);
        lua_pushinteger(L, before);
        lua_pushinteger(L, after);
        return 2;
    }
    lua_createtable(L, w.n, 0);
    for (int i = 0; i < w.n; i++) {
        mf_window_axis(w.padding, w.in[i], w.k[i], w.s[i], w.d[i], &out, &before, &after);
        lua_createtable(L, 2, 0);
        lua_pushinteger(L, before);
        lua_rawseti(L, -2, 1);
        lua_pushinteger(L, after);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* Adds conv_output_size and conv_padding to the table on top (mf.nn). */
void lmf_open_conv(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"conv_output_size", l_conv_output_size},
        {"conv_padding", l_conv_padding},
        {NULL, NULL},
    };
    luaL_setfuncs(L, fns, 0);
}
