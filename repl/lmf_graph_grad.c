/* lmf_graph_grad.c — mf.gradients (symbolic gradients, graph/gradients.h)
 * and the graph methods that write pictures: g:write_dot(path) and
 * g:render(path) (Graphviz 'dot', graph/render.c). They are added to the mf.Graph
 * metatable that lmf_graph.c makes, so lmf_open_graph must run first.
 *
 * Tensors read from Lua stay on the Lua stack (or in the caller's tables)
 * while they are used, so the C arrays here only borrow them. */
#include "graph/gradients.h"
#include "graph/graph.h"
#include "lmf.h"
#include "lmf_explain.h"


/* Reads a tensor or an array of tensors at 'idx' into a new userdata array
 * (left on the stack); returns the count. 'what' names the argument. */
static int read_list(lua_State *L, int idx, const char *what, MfTensor ***out)
{
    MfTensor *one = lmf_test_tensor(L, idx);
    int n = one ? 1 : -1;
    if (!one) {
        if (!lua_istable(L, idx))
            return luaL_error(L, "gradients: %s must be a tensor or an array of tensors, got %s",
                              what, luaL_typename(L, idx));
        n = (int)luaL_len(L, idx);
    }
    MfTensor **ts = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *ts, 1);
    if (one)
        ts[0] = one;
    for (int i = 0; i < n && !one; i++) {
        lua_geti(L, idx, i + 1);
        ts[i] = lmf_test_tensor(L, -1);
        if (!ts[i])
            return luaL_error(L, "gradients: %s[%d] is not a tensor", what, i + 1);
        lmf_keep(L, -2);   /* the slot owning ts[i] lives as long as the array */
    }
    *out = ts;
    return n;
}

/* grad_ys from argument 3: {grad_ys = ...}, or the value itself: one value
 * (a tensor, number or nested table) when ys is one tensor, else an array
 * with one per y. Values are converted to their y's dtype and kept on the
 * stack. NULL when absent. */
static MfTensor **read_grad_ys(lua_State *L, int ny, MfTensor *const *ys)
{
    static const char *const known[] = {"grad_ys", NULL};
    bool ys_single = lmf_test_tensor(L, 1) != NULL;
    if (lua_isnoneornil(L, 3))
        return NULL;
    /* a table with no array part is the options table (else grad_ys itself) */
    if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && lua_rawlen(L, 3) == 0)
        lmf_check_options(L, 3, "gradients", known);
    int src = 3;
    if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && lua_getfield(L, 3, "grad_ys") != LUA_TNIL)
        src = lua_gettop(L);
    else if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && luaL_len(L, 3) == 0)
        return NULL;
    if (ys_single && lua_istable(L, src) && !lmf_test_tensor(L, src) && luaL_len(L, src) == 1
        && lua_geti(L, src, 1) != LUA_TNIL && lmf_test_tensor(L, -1))
        src = lua_gettop(L);   /* {t}: an array of one tensor for the one y */
    MfTensor **gy = lua_newuserdatauv(L, (size_t)(ny ? ny : 1) * sizeof *gy, 0);
    bool single = ys_single || lmf_test_tensor(L, src) || lua_type(L, src) == LUA_TNUMBER;
    if (!single && !lua_istable(L, src))
        luaL_error(L, "gradients: grad_ys must be a tensor or an array, got %s",
                   luaL_typename(L, src));
    if (!single && (int)luaL_len(L, src) != ny)
        luaL_error(L, "gradients: grad_ys has %d entries but ys has %d", (int)luaL_len(L, src),
                   ny);
    if (single && ny != 1)
        luaL_error(L, "gradients: grad_ys must be an array of %d entries (one per y)", ny);
    luaL_checkstack(L, ny + 2, "gradients: too many ys");
    for (int i = 0; i < ny; i++) {
        if (single)
            lua_pushvalue(L, src);
        else
            lua_geti(L, src, i + 1);
        gy[i] = lua_isnil(L, -1) ? NULL
                                 : lmf_arg_tensor(L, lua_gettop(L), ys[i]->dtype, "gradients");
    }
    return gy;
}

/* mf.gradients(ys, xs [, {grad_ys = ...}]) -> array of gradients (nil holes) */
static int l_gradients(lua_State *L)
{
    MfTensor **ys, **xs;
    lua_settop(L, 3);
    int ny = read_list(L, 1, "ys", &ys);
    int nx = read_list(L, 2, "xs", &xs);
    MfTensor **gy = read_grad_ys(L, ny, ys);
    MfTensor **grads = lua_newuserdatauv(L, (size_t)(nx ? nx : 1) * sizeof *grads, 0);
    lua_State *saved = lmf_set_grad_state(L);   /* custom gradients run on L */
    MfStatus st = mf_graph_gradients(NULL, ny, ys, nx, xs, gy, grads);   /* ys' graph */
    lmf_set_grad_state(saved);
    if (st != MF_OK)
        return lmf_raise(L);
    lua_createtable(L, nx, 0);
    for (int i = 0; i < nx; i++)
        if (grads[i]) {
            lmf_push_tensor(L, grads[i]);
            lua_seti(L, -2, i + 1);
        } else {
            lmf_note_nil_gradient(1);
        }
    return 1;
}

/* g:write_dot(path): writes g:to_dot() to 'path' (graph/render.c). */
static int g_write_dot(lua_State *L)
{
    lmf_check_nargs(L, "write_dot", 2);
    lmf_check_graph(L, 1);
    const char *path = lmf_check_path(L, 2, "write_dot");
    lmf_check_written(L, mf_graph_write_dot(lmf_check_graph(L, 1), path));   /* self read last */
    return 0;
}

/* g:render(path): Graphviz 'dot' on g:to_dot(), writing 'path' in the format
 * its extension names (graph/render.c). */
static int g_render(lua_State *L)
{
    lmf_check_nargs(L, "render", 2);
    lmf_check_graph(L, 1);
    const char *path = lmf_check_path(L, 2, "render");
    lmf_check_written(L, mf_graph_render(lmf_check_graph(L, 1), path));   /* self read last */
    return 0;
}

void lmf_open_graph_grad(lua_State *L)
{
    static const luaL_Reg meths[] = {{"write_dot", g_write_dot}, {"render", g_render},
                                     {NULL, NULL}};
    luaL_getmetatable(L, LMF_GRAPH_MT);
    if (lua_getfield(L, -1, "__index") == LUA_TTABLE)
        luaL_setfuncs(L, meths, 0);
    lua_pop(L, 2);
    lua_pushcfunction(L, l_gradients);
    lua_setfield(L, -2, "gradients");
}
