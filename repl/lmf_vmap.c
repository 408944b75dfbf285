/* lmf_vmap.c — lib.vmap_run(g, size, placeholders, values, batched,
 * fetches) -> results, results_batched: mf.vmap's engine (mode/vmap.c) for
 * lib/vmap.lua, which builds 'g' from one call of f. Private to lib/.
 *
 * Ownership: every tensor is kept alive by its slot on the stack (the
 * checkers replace each with a box they own) until the call returns; the
 * results are pushed as new boxes. */
#include "graph/graph.h"
#include "mode/mode.h"
#include "lmf.h"

#define MAX_VMAP 100000

/* The 'n' tensors of the array at 'idx', each left on the stack. */
static MfTensor **check_tensors(lua_State *L, int idx, lua_Integer n)
{
    MfTensor **t = lua_newuserdatauv(L, (size_t)n * sizeof *t + 1, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        t[i - 1] = lmf_check_tensor(L, lua_gettop(L));
    }
    return t;
}

int lmf_vmap_run(lua_State *L)
{
    MfGraph *g = lmf_check_graph(L, 1);
    lua_Integer size = luaL_checkinteger(L, 2);
    for (int i = 3; i <= 6; i++)
        luaL_checktype(L, i, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 3), nf = luaL_len(L, 6);
    if (n > MAX_VMAP || nf > MAX_VMAP || luaL_len(L, 4) != n || luaL_len(L, 5) != n)
        return luaL_error(L, "vmap: arguments out of step");
    luaL_checkstack(L, (int)(2 * n + nf + 16), "vmap");
    MfTensor **ph = check_tensors(L, 3, n), **vals = check_tensors(L, 4, n);
    MfTensor **fetches = check_tensors(L, 6, nf);
    bool *batched = lua_newuserdatauv(L, (size_t)(n + nf) + 1, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 5, i);
        batched[i - 1] = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    MfTensor **res = lua_newuserdatauv(L, (size_t)nf * sizeof *res + 1, 0);
    MfVmapFeeds feeds = {(int)n, ph, vals, batched, size};
    lmf_check_status(L, mf_vmap_run(g, &feeds, (int)nf, fetches, res, batched + n));
    lua_createtable(L, (int)nf, 0);
    lua_createtable(L, (int)nf, 0);
    for (lua_Integer k = 0; k < nf; k++) {
        lmf_push_tensor(L, res[k]);
        lua_seti(L, -3, k + 1);
        lua_pushboolean(L, batched[n + k]);
        lua_seti(L, -2, k + 1);
    }
    return 2;
}
