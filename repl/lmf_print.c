/* lmf_print.c — tostring(t) / print(t) and mf.set_printoptions /
 * mf.get_printoptions. The text comes from core/format.c; this file holds the
 * options and moves the text into Lua (lmf_arg.c's text buffers). */
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>

#include "graph/graph.h"
#include "lmf.h"
#include "lmf_print.h"

LmfPrintOptions lmf_print_options = MF_PRINT_DEFAULTS;

void lmf_push_tensor_string(lua_State *L, const MfTensor *t)
{
    MfStrBuf *b = lmf_new_strbuf(L);
    lmf_push_strbuf(L, b, mf_graph_format_tensor(t, &lmf_print_options, b));
}

/* ---- options ------------------------------------------------------------------------ */

/* mf.set_printoptions{precision=, threshold=, edgeitems=, linewidth=}: checks
 * every field first, then applies them together; returns nothing. */
static int l_set_printoptions(lua_State *L)
{
    lmf_check_nargs(L, "set_printoptions", 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    lmf_check_options(L, 1, "set_printoptions", mf_print_option_names);
    MfPrintOptions o = lmf_print_options;
    lua_pushnil(L);
    while (lua_next(L, 1)) {   /* the keys are known ones: checked above */
        int isint = 0, num = lua_type(L, -1) == LUA_TNUMBER;
        lua_Integer i = lua_tointegerx(L, -1, &isint);
        double x = num ? lua_tonumber(L, -1) : (double)NAN;
        const char *got = num ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1);
        lmf_check_status(L, mf_print_option_set(&o, lua_tostring(L, -2 - num), num && isint, i,
                                                x, got));
        lua_pop(L, 1 + num);
    }
    lmf_print_options = o;
    return 0;
}

/* mf.get_printoptions() -> a fresh table {precision, threshold, edgeitems, linewidth}. */
static int l_get_printoptions(lua_State *L)
{
    lmf_check_nargs(L, "get_printoptions", 0);
    lua_createtable(L, 0, 4);
    for (int k = 0; mf_print_option_names[k]; k++) {
        int64_t v = mf_print_option_get(&lmf_print_options, k);
        if (v == INT64_MAX)   /* threshold: never summarise */
            lua_pushnumber(L, (lua_Number)HUGE_VAL);
        else
            lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, -2, mf_print_option_names[k]);
    }
    return 1;
}

void lmf_open_print(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"set_printoptions", l_set_printoptions},
        {"get_printoptions", l_get_printoptions},
        {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
