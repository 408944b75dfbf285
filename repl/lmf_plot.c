/* lmf_plot.c — mf.plot(values [, opts]): a loss history as a braille plot
 * in the terminal, or as an SVG file. The drawing is in core/plot.c; this
 * file converts and checks the Lua arguments.
 *
 * Ownership: each series' values are copied into a userdata left on the Lua
 * stack and the labels stay on the stack too, so a raised error leaks
 * nothing; the rendered text lives in a Lua-owned buffer (lmf_new_strbuf). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io/write_file.h"
#include "present/plot.h"
#include "lmf.h"
#include "lmf_print.h"

#define MAX_SERIES 16

/* Copies the tensor at 'idx' (1-D, with values) into a new userdata. */
static void read_tensor(lua_State *L, MfTensor *t, int which, MfPlotSeries *s)
{
    if (!t->storage)
        luaL_error(L, "plot: series %d is a graph tensor without values; fetch it with "
                   "sess:run first", which);
    if (t->rank != 1)
        luaL_error(L, "plot: series %d must be a 1-D tensor, got rank %d", which, t->rank);
    s->n = (size_t)t->shape[0];
    double *y = lua_newuserdatauv(L, s->n * sizeof *y + 1, 0);
    for (size_t i = 0; i < s->n; i++)
        y[i] = mf_tensor_get(t, (int64_t)i);
    s->y = y;
}

/* Copies the Lua array at 'idx' (numbers only) into a new userdata. */
static void read_array(lua_State *L, int idx, int which, MfPlotSeries *s)
{
    s->n = (size_t)luaL_len(L, idx);
    double *y = lua_newuserdatauv(L, s->n * sizeof *y + 1, 0);
    for (size_t i = 0; i < s->n; i++) {
        int type = lua_geti(L, idx, (lua_Integer)i + 1);
        if (type != LUA_TNUMBER)
            luaL_error(L, "plot: series %d, element %d: expected a number, got %s", which,
                       (int)i + 1, lua_typename(L, type));
        y[i] = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    s->y = y;
}

/* One series from the value at 'idx' (a tensor or an array of numbers). */
static void read_series(lua_State *L, int idx, int which, MfPlotSeries *s)
{
    idx = lua_absindex(L, idx);
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t)
        read_tensor(L, t, which, s);
    else if (lua_type(L, idx) == LUA_TTABLE)
        read_array(L, idx, which, s);
    else
        luaL_error(L, "plot: series %d: expected an array of numbers or a 1-D tensor, got %s",
                   which, luaL_typename(L, idx));
    if (s->n == 0 && lua_type(L, idx) == LUA_TTABLE) {
        /* {loss = {...}, val = {...}} has length 0 but is not empty: say how
         * several series are passed instead of calling it empty. */
        lua_pushnil(L);
        if (lua_next(L, idx))
            luaL_error(L, "plot: series %d is a table with key '%s' but no array part; pass "
                       "several series as an array, {s1, s2}, and name them with "
                       "{labels = {...}}", which, luaL_tolstring(L, -2, NULL));
    }
    if (s->n == 0)
        luaL_error(L, "plot: series %d is empty", which);
}

/* Whether the value at 'idx' holds several series: an array whose first
 * element is itself an array or a tensor. */
static int is_multi(lua_State *L, int idx)
{
    if (lmf_test_tensor(L, idx) || lua_type(L, idx) != LUA_TTABLE)
        return 0;
    lua_geti(L, idx, 1);
    int multi = lua_type(L, -1) == LUA_TTABLE || lmf_test_tensor(L, -1) != NULL;
    lua_pop(L, 1);
    return multi;
}

static int read_all_series(lua_State *L, MfPlotSeries *series)
{
    if (!is_multi(L, 1)) {
        read_series(L, 1, 1, &series[0]);
        return 1;
    }
    int n = (int)luaL_len(L, 1);
    if (n > MAX_SERIES)
        luaL_error(L, "plot: at most %d series, got %d", MAX_SERIES, n);
    for (int k = 0; k < n; k++) {
        lua_geti(L, 1, k + 1);
        read_series(L, -1, k + 1, &series[k]);
        lua_remove(L, -2); /* keep the copied values, drop the source */
    }
    return n;
}

/* Raises on option names mf.plot does not know (a typo would go unnoticed). */
static void check_option_names(lua_State *L)
{
    static const char *const known[] = {"title", "width", "height", "file", "labels",
                                        "print", "color", "x", NULL};
    lmf_check_options(L, 2, "plot", known);
}

/* Reads opts.labels (pushed, with its strings, kept on the stack) into the series. */
static void read_labels(lua_State *L, MfPlotSeries *series, int n)
{
    if (!lua_istable(L, 2))
        return;
    int type = lua_getfield(L, 2, "labels");
    if (type == LUA_TNIL)
        return;
    if (type != LUA_TTABLE)
        luaL_error(L, "plot: 'labels' must be an array of strings, got %s", lua_typename(L, type));
    int labels = lua_gettop(L);
    lua_newtable(L);   /* the strings, kept on the stack: 'labels' may be a proxy */
    for (int k = 0; k < n; k++) {
        if (lua_geti(L, labels, k + 1) == LUA_TSTRING) {
            series[k].label = lmf_keep_string(L, labels + 1);
            continue;
        }
        if (!lua_isnil(L, -1))
            luaL_error(L, "plot: labels[%d] must be a string, got %s", k + 1,
                       luaL_typename(L, -1));
        lua_pop(L, 1);
    }
}

static int render(lua_State *L, const MfPlotSeries *series, int n, const MfPlotOpts *o,
                  const char *file)
{
    MfStrBuf *b = lmf_new_strbuf(L);   /* freed by its __gc if anything raises */
    lmf_push_strbuf(L, b, file ? mf_plot_svg(series, n, o, b) : mf_plot_text(series, n, o, b));
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (file) {
        /* through a temporary named with the pid: a browser never sees half a
         * document, and two runs plotting to one file do not mix */
        lmf_check_written(L, mf_write_file_atomic("plot", file, text, len));
        lua_pushstring(L, file);
        return 1;
    }
    if (!lmf_opt_bool(L, 2, "plot", "print", 1))
        return 1;
    fputs(text, stdout);
    fflush(stdout);
    return 0;
}

/* Reads opts.x (an array or tensor of x values, pushed and kept); the plot
 * labels its x axis with them (core/plot.c checks their count and spacing). */
static void read_x(lua_State *L, const MfPlotSeries *series, int n, MfPlotOpts *o)
{
    if (!lua_istable(L, 2) || lua_getfield(L, 2, "x") == LUA_TNIL)
        return;
    MfPlotSeries xs;
    read_series(L, -1, 0, &xs);
    lmf_check_status(L, mf_plot_set_x(o, series, n, xs.y, xs.n));
}

/* mf.plot(values [, {title, width, height, file, labels, print, color, x}]) */
static int l_plot(lua_State *L)
{
    lmf_check_nargs(L, "plot", 2);
    luaL_checkany(L, 1);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    if (lua_istable(L, 2))
        check_option_names(L);
    MfPlotSeries series[MAX_SERIES];
    memset(series, 0, sizeof series);
    int n = read_all_series(L, series);
    read_labels(L, series, n);
    const char *file = NULL;
    if (lua_istable(L, 2) && lua_getfield(L, 2, "file") != LUA_TNIL) {
        if (!lua_isstring(L, -1))
            return luaL_error(L, "plot: 'file' must be a path string, got %s",
                              luaL_typename(L, -1));
        file = lmf_check_path(L, -1, "plot"); /* stays on the stack */
    }
    MfPlotOpts o = {NULL, 0, 0, 0, 0, 0, 0};
    read_x(L, series, n, &o);
    if (lua_istable(L, 2) && lua_getfield(L, 2, "title") != LUA_TNIL)
        o.title = luaL_tolstring(L, -1, NULL);
    mf_plot_default_size(file != NULL, &o.width, &o.height);
    lua_Integer width = lmf_opt_integer(L, 2, "plot", "width", o.width);
    lua_Integer height = lmf_opt_integer(L, 2, "plot", "height", o.height);
    lmf_check_status(L, mf_plot_check_size(file != NULL, width, height));
    o.width = (int)width;
    o.height = (int)height;
    if (!file) {
        /* Colours only where they render: a terminal that is not "dumb",
         * unless NO_COLOR asks for none (no-color.org); without colours
         * each series is marked by a digit (present/plot.c). */
        const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");
        int tty = isatty(fileno(stdout)) && term && strcmp(term, "dumb") != 0 &&
                  !(no_color && *no_color);
        o.color = lmf_opt_bool(L, 2, "plot", "color", tty && n > 1);
    }
    return render(L, series, n, &o, file);
}

void lmf_open_plot(lua_State *L)
{
    lua_pushcfunction(L, l_plot);
    lua_setfield(L, -2, "plot");
}
