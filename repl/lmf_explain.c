/* lmf_explain.c — gradient questions answered at the prompt.
 *
 * mf.explain_gradients(y, x) says in one sentence why mf.gradients(y, {x})
 * is nil, or that it is connected (graph/explain.c does the walk), as
 * tape:explain(y, x) does for tapes. The bindings that return gradients
 * count the nils they return; the prompt compares the count around a chunk
 * and, when the chunk printed a nil after a nil gradient came back, adds
 * one line saying where to ask why. */
#include <stdio.h>

#include "graph/graph.h"
#include "lmf.h"
#include "lmf_explain.h"

static unsigned long nil_count;
static int nil_graph;        /* the last nil came from mf.gradients */
static int hint_armed;

void lmf_note_nil_gradient(int graph)
{
    nil_count++;
    nil_graph = graph;
}

unsigned long lmf_nil_gradient_count(void)
{
    return nil_count;
}

/* Whether the value at 'idx' may show a nil gradient: nil, or a plain
 * table (the array of gradients mf.gradients and tape:gradient return,
 * whose holes do not print). */
static int shows_nil(lua_State *L, int idx)
{
    if (lua_isnil(L, idx))
        return 1;
    if (!lua_istable(L, idx))
        return 0;
    if (lua_getmetatable(L, idx)) {   /* a schedule, a report: not gradients */
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

void lmf_prompt_remember(lua_State *L, unsigned long nils)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, 1);
    lua_setglobal(L, "_");
    hint_armed = 0;
    for (int i = 1; i <= n && nils != nil_count && !hint_armed; i++)
        hint_armed = shows_nil(L, i);
}

void lmf_prompt_hint(lua_State *L)
{
    (void)L;
    if (!hint_armed)
        return;
    hint_armed = 0;
    fputs(nil_graph ? "-- nil: mf.explain_gradients(y, x) says why\n"
                    : "-- nil: tape:explain(y, x) says why\n", stdout);
    fflush(stdout);
}

/* mf.explain_gradients(y, x) -> one sentence */
static int l_explain_gradients(lua_State *L)
{
    MfTensor *y = lmf_check_tensor(L, 1);
    MfTensor *x = lmf_check_tensor(L, 2);
    char buf[512];
    if (mf_graph_explain(y, x, buf, sizeof buf) != MF_OK)
        return lmf_raise(L);
    lua_pushstring(L, buf);
    return 1;
}

void lmf_open_explain(lua_State *L)
{
    lua_pushcfunction(L, l_explain_gradients);
    lua_setfield(L, -2, "explain_gradients");
}
