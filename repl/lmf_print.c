/* lmf_print.c — tostring(t) / print(t) and mf.set_printoptions /
 * mf.get_printoptions. The text comes from core/format.c; this file holds the
 * options and moves the text into Lua.
 *
 * Ownership: the engine's text buffer sits in a userdata with a __gc, so a
 * Lua memory error while pushing the string leaks nothing. */
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/graph.h"
#include "lmf.h"
#include "lmf_print.h"

#define STRBUF_MT "mf.StrBuf"

LmfPrintOptions lmf_print_options = MF_PRINT_DEFAULTS;

static int strbuf_gc(lua_State *L)
{
    mf_strbuf_free(luaL_checkudata(L, 1, STRBUF_MT));
    return 0;
}

/* A graph tensor: "<mf.Tensor 'add:0' shape=(?,3) dtype=float32 op=AddV2>"
 * (TensorFlow's form, with the producing op). */
static void push_symbolic_string(lua_State *L, const MfTensor *t)
{
    char name[300], shape[MF_MAX_RANK * 24 + 8];
    mf_graph_tensor_name(t, name, sizeof name);
    lua_pushfstring(L, "<mf.Tensor '%s' shape=%s dtype=%s op=%s>", name,
                    mf_shape_str(t->rank, t->shape, shape, sizeof shape),
                    mf_dtype_name(t->dtype), mf_node_op_name(t->node));
}

MfStrBuf *lmf_new_strbuf(lua_State *L)
{
    MfStrBuf *b = lua_newuserdatauv(L, sizeof *b, 0);
    *b = (MfStrBuf){0};
    luaL_setmetatable(L, STRBUF_MT);
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

void lmf_push_tensor_string(lua_State *L, const MfTensor *t)
{
    if (t->node) {
        push_symbolic_string(L, t);
        return;
    }
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_format_tensor(t, &lmf_print_options, b));
}

/* ---- options ------------------------------------------------------------------------ */

typedef struct OptField {
    const char *name;
    lua_Integer lo, hi;
} OptField;

static const OptField fields[] = {
    {"precision", 0, MF_PRINT_MAX_PRECISION},
    {"threshold", 0, LUA_MAXINTEGER},
    {"edgeitems", 1, MF_PRINT_MAX_ITEMS},
    {"linewidth", 1, MF_PRINT_MAX_ITEMS},
};

/* The value on top of the stack for field 'f', or a raised error naming it.
 * 'threshold' also takes math.huge (never summarise). */
static lua_Integer opt_value(lua_State *L, const OptField *f)
{
    int isint = 0;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    if (lua_type(L, -1) == LUA_TNUMBER && !isint && f->hi == LUA_MAXINTEGER &&
        lua_tonumber(L, -1) == (lua_Number)HUGE_VAL)
        return LUA_MAXINTEGER;
    if (lua_type(L, -1) == LUA_TNUMBER && isint && v >= f->lo && v <= f->hi)
        return v;
    const char *got = lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL)
                                                      : luaL_typename(L, -1);
    if (f->hi == LUA_MAXINTEGER)
        luaL_error(L, "set_printoptions: %s must be an integer >= %d (or math.huge), got %s",
                   f->name, (int)f->lo, got);
    luaL_error(L, "set_printoptions: %s must be an integer from %d to %d, got %s", f->name,
               (int)f->lo, (int)f->hi, got);
    return 0;
}

static void set_field(MfPrintOptions *o, int i, lua_Integer v)
{
    switch (i) {
    case 0: o->precision = (int)v; break;
    case 1: o->threshold = (int64_t)v; break;
    case 2: o->edgeitems = (int)v; break;
    default: o->linewidth = (int)v; break;
    }
}

/* mf.set_printoptions{precision=, threshold=, edgeitems=, linewidth=}: checks
 * every field first, then applies them together; returns nothing. */
static int l_set_printoptions(lua_State *L)
{
    lmf_check_nargs(L, "set_printoptions", 1);
    static const char *const known[] = {"precision", "threshold", "edgeitems", "linewidth",
                                        NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    lmf_check_options(L, 1, "set_printoptions", known);
    MfPrintOptions o = lmf_print_options;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *key = lua_tostring(L, -2);
        int i = 0;
        while (strcmp(fields[i].name, key) != 0)   /* a known key: checked above */
            i++;
        set_field(&o, i, opt_value(L, &fields[i]));
        lua_pop(L, 1);
    }
    lmf_print_options = o;
    return 0;
}

/* mf.get_printoptions() -> a fresh table {precision, threshold, edgeitems, linewidth}. */
static int l_get_printoptions(lua_State *L)
{
    lmf_check_nargs(L, "get_printoptions", 0);
    const MfPrintOptions *o = &lmf_print_options;
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, o->precision);
    lua_setfield(L, -2, "precision");
    if (o->threshold == (int64_t)LUA_MAXINTEGER)
        lua_pushnumber(L, (lua_Number)HUGE_VAL);
    else
        lua_pushinteger(L, (lua_Integer)o->threshold);
    lua_setfield(L, -2, "threshold");
    lua_pushinteger(L, o->edgeitems);
    lua_setfield(L, -2, "edgeitems");
    lua_pushinteger(L, o->linewidth);
    lua_setfield(L, -2, "linewidth");
    return 1;
}

void lmf_open_print(lua_State *L)
{
    if (luaL_newmetatable(L, STRBUF_MT)) {
        lua_pushcfunction(L, strbuf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {
        {"set_printoptions", l_set_printoptions},
        {"get_printoptions", l_get_printoptions},
        {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
