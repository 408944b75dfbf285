/* lmf_dist.c — the mf.dist table: the processes of a data-parallel run
 * over MPI (distributed/dist.h). rank, size, is_chief, barrier, allreduce (the
 * MPIAllreduce op: eager, or a node while a graph is built), broadcast,
 * allgather, broadcast_variables and DistributedOptimizer (lmf_train.c).
 *
 * Without mpirun the world is one process: rank 0, size 1, and every
 * collective returns its input's values. Every collective takes
 * {check = false} to skip the signature exchange (dist.h); the option
 * must then be the same on every process. */
#include <stdio.h>
#include <string.h>

#include "distributed/dist.h"
#include "lmf.h"
#include "train/train.h"

/* The options table at 'idx' checked against 'known'; its 'check' value. */
static bool read_check(lua_State *L, int idx, const char *who, const char *const *known)
{
    if (!lua_isnoneornil(L, idx))
        luaL_checktype(L, idx, LUA_TTABLE);
    lmf_check_options(L, idx, who, known);
    return lmf_opt_bool(L, idx, who, "check", 1);
}

static int read_root(lua_State *L, int idx, const char *who)
{
    lua_Integer root = lmf_opt_integer(L, idx, who, "root", 0);
    lmf_check_status(L, mf_dist_check_root(who, root));
    return (int)root;
}

/* mf.dist.rank() -> 0-based rank; mf.dist.size(); mf.dist.is_chief() -> rank == 0 */
static int l_rank(lua_State *L)
{
    lmf_check_nargs(L, "rank", 0);
    lua_pushinteger(L, mf_dist_rank());
    return 1;
}

static int l_size(lua_State *L)
{
    lmf_check_nargs(L, "size", 0);
    lua_pushinteger(L, mf_dist_size());
    return 1;
}

static int l_is_chief(lua_State *L)
{
    lmf_check_nargs(L, "is_chief", 0);
    lua_pushboolean(L, mf_dist_rank() == 0);
    return 1;
}

/* mf.dist.barrier([{check}]) */
static int l_barrier(lua_State *L)
{
    lmf_check_nargs(L, "barrier", 1);
    static const char *const known[] = {"check", NULL};
    bool check = read_check(L, 1, "barrier", known);
    lmf_check_status(L, mf_dist_barrier(check));
    return 0;
}

/* mf.dist.allreduce(t [, {op = "mean"|"sum"|"max"|"min", check}]) -> tensor */
static int l_allreduce(lua_State *L)
{
    lmf_check_nargs(L, "allreduce", 2);
    static const char *const known[] = {"op", "check", NULL};
    MfTensor *t = lmf_check_tensor(L, 1);
    bool check = read_check(L, 2, "allreduce", known);
    const char *op = NULL;   /* a value that is no name is shown by its type */
    if (lmf_opt_field(L, 2, "op"))
        op = lua_tostring(L, -1) ? lua_tostring(L, -1) : luaL_typename(L, -1);
    MfAttrs a;
    lmf_check_status(L, mf_dist_allreduce_attrs(op, t, check, &a));
    lua_settop(L, 1);   /* keeps 't' alive for the call */
    return lmf_call_op(L, MF_OP_ALLREDUCE, 1, &t, &a);
}

/* mf.dist.broadcast(t [, {root = 0, check}]) -> root's tensor */
static int l_broadcast(lua_State *L)
{
    lmf_check_nargs(L, "broadcast", 2);
    static const char *const known[] = {"root", "check", NULL};
    MfTensor *t = lmf_check_tensor(L, 1);
    bool check = read_check(L, 2, "broadcast", known);
    int root = read_root(L, 2, "broadcast");
    MfTensor *out = NULL;
    lua_settop(L, 1);
    lmf_check_status(L, mf_dist_broadcast(t, root, check, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.dist.allgather(t [, {check}]) -> every process's t along axis 1 */
static int l_allgather(lua_State *L)
{
    lmf_check_nargs(L, "allgather", 2);
    static const char *const known[] = {"check", NULL};
    MfTensor *t = lmf_check_tensor(L, 1);
    bool check = read_check(L, 2, "allgather", known);
    MfTensor *out = NULL;
    lua_settop(L, 1);
    lmf_check_status(L, mf_dist_allgather(t, check, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* The Variables of the array at 1 into a userdata array (pushed); their
 * boxes stay referenced by that array for the whole call. */
static MfVariable **read_vars(lua_State *L, const char *who, int *n)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    *n = (int)luaL_len(L, 1);
    for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1))
        if (!lua_isinteger(L, -2))
            luaL_error(L, "%s: expected an array of Variables, got a table with the key '%s'",
                       who, luaL_tolstring(L, -2, NULL));
    MfVariable **vs = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *vs, 0);
    for (int i = 1; i <= *n; i++) {
        lua_geti(L, 1, i);
        vs[i - 1] = lmf_test_variable(L, -1);
        if (!vs[i - 1])
            luaL_error(L, "%s: element %d must be a Variable, got %s", who, i,
                       luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    return vs;
}

/* mf.dist.broadcast_variables(vars [, {root = 0, session, check}]): root's
 * values everywhere (eager Variables, or a graph's in 'session'). */
static int l_broadcast_variables(lua_State *L)
{
    lmf_check_nargs(L, "broadcast_variables", 2);
    static const char *const known[] = {"root", "session", "check", NULL};
    const char *who = "broadcast_variables";
    bool check = read_check(L, 2, who, known);
    int root = read_root(L, 2, who);
    MfSession *sess = NULL;
    if (lua_istable(L, 2) && lua_getfield(L, 2, "session") != LUA_TNIL) {
        if (!(sess = lmf_test_session(L, -1)))
            return luaL_error(L, "%s: session must be a Session, got %s", who,
                              luaL_typename(L, -1));
    }
    int n = 0;
    MfVariable **vs = read_vars(L, who, &n);
    MfStatus st = sess ? mf_train_broadcast_session(sess, n, vs, root, check)
                       : mf_dist_broadcast_variables(n, vs, root, check);
    lmf_check_status(L, st);
    return 0;
}

void lmf_open_dist(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"rank", l_rank}, {"size", l_size}, {"is_chief", l_is_chief}, {"barrier", l_barrier},
        {"allreduce", l_allreduce}, {"broadcast", l_broadcast}, {"allgather", l_allgather},
        {"broadcast_variables", l_broadcast_variables},
        {"DistributedOptimizer", lmf_distributed_optimizer}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "dist");
}
