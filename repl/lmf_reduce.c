/* lmf_reduce.c — Lua bindings of the clipping functions over lists of
 * tensors (core/clip.h): mf.global_norm(list), mf.clip_by_global_norm(list,
 * clip_norm [, {use_norm =, nonfinite = "nan"|"error"}]). (clip_by_value,
 * clip_by_norm and clip_by_average_norm are composites bound from their
 * descriptors by lmf_op.c, as are the reductions.)
 *
 * Lists may have holes (nil entries): their length is the field 'n' when
 * present, else the largest integer key. Every temporary is either on the
 * Lua stack or in a Lua table, so a raised error leaks nothing. */
#include <string.h>

#include "core/clip.h"
#include "lmf.h"

/* ---- clipping -------------------------------------------------------------------- */

/* Argument 'idx' as a tensor: a number takes dtype 'like'. */
static MfTensor *bound_arg(lua_State *L, int idx, const char *fname, const char *what,
                           int like)
{
    if (lua_isnoneornil(L, idx))
        luaL_error(L, "bad argument #%d to '%s' (%s (number or mf.Tensor) expected, got %s)",
                   idx, fname, what, lua_gettop(L) < idx ? "no value" : "nil");
    return lmf_arg_tensor(L, idx, like, fname);
}

/* The length of the list at 'idx': its field 'n', else its largest
 * positive integer key (so arrays with holes work). */
static int list_length(lua_State *L, int idx, const char *fname)
{
    lua_getfield(L, idx, "n");
    if (lua_isinteger(L, -1)) {
        lua_Integer n = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (n < 0 || n > 1000000)
            luaL_error(L, "%s: list field n = %d is not a valid length", fname, (int)n);
        return (int)n;
    }
    lua_pop(L, 1);
    lua_Integer max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) > max)
            max = lua_tointeger(L, -1);
    }
    if (max > 1000000)
        luaL_error(L, "%s: list index %d is too large", fname, (int)max);
    return (int)max;
}

/* Reads the list at 'idx' into a userdata array of borrowed tensors (NULL
 * for nil entries) left on the stack; converted entries are kept alive in a
 * table also left on the stack (below the array). Returns the array. */
static MfTensor **read_list(lua_State *L, int idx, const char *fname, int *n)
{
    if (!lua_istable(L, idx))
        lmf_arg_error(L, idx, fname, "a list of tensors");
    *n = list_length(L, idx, fname);
    lua_createtable(L, *n, 0);
    int anchor = lua_gettop(L);
    MfTensor **ts = lua_newuserdatauv(L, sizeof *ts * (size_t)(*n > 0 ? *n : 1), 0);
    for (int i = 0; i < *n; i++) {
        lua_rawgeti(L, idx, i + 1);
        ts[i] = NULL;
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        if (!lmf_test_tensor(L, -1) && !lua_istable(L, -1) && !lua_isuserdata(L, -1))
            luaL_error(L, "%s: list entry %d must be a mf.Tensor or nil, got %s", fname, i + 1,
                       luaL_typename(L, -1));
        ts[i] = lmf_arg_tensor(L, -1, -1, fname);
        lua_rawseti(L, anchor, i + 1);
    }
    return ts;
}

static int l_global_norm(lua_State *L)
{
    lmf_check_nargs(L, "global_norm", 1);
    int n;
    MfTensor **ts = read_list(L, 1, "global_norm", &n);
    MfTensor *out = NULL;
    return lmf_push_result(L, mf_global_norm(n, ts, &out), &out);
}

/* The dtype numbers take: the first tensor's, else float32. */
static int list_dtype(MfTensor *const *ts, int n)
{
    for (int i = 0; i < n; i++)
        if (ts[i])
            return (int)ts[i]->dtype;
    return (int)MF_FLOAT32;
}

static int l_clip_by_global_norm(lua_State *L)
{
    lmf_check_nargs(L, "clip_by_global_norm", 3);
    int n;
    lua_settop(L, 3);   /* the options stay at 3, below what read_list pushes */
    MfTensor **ts = read_list(L, 1, "clip_by_global_norm", &n);
    int like = list_dtype(ts, n);
    MfTensor *clip = bound_arg(L, 2, "clip_by_global_norm", "clip_norm", like);
    MfTensor *use_norm = NULL;
    MfNonfinite nonfinite = MF_NONFINITE_NAN;
    if (lua_istable(L, 3)) {
        static const char *const known[] = {"use_norm", "nonfinite", NULL};
        lmf_check_options(L, 3, "clip_by_global_norm", known);
        lua_getfield(L, 3, "nonfinite");
        const char *mode = lua_isnil(L, -1) ? "nan" : lmf_name_string(L, -1);
        if (mode && strcmp(mode, "error") == 0)
            nonfinite = MF_NONFINITE_ERROR;
        else if (!mode || strcmp(mode, "nan") != 0)
            return luaL_error(L, "clip_by_global_norm: nonfinite must be \"nan\" or \"error\", "
                              "got %s", lmf_value_text(L, -1));
        lua_getfield(L, 3, "use_norm");
        use_norm = lua_isnil(L, -1) ? NULL : lmf_arg_tensor(L, -1, like, "clip_by_global_norm");
    } else if (!lua_isnoneornil(L, 3)) {
        return lmf_arg_error(L, 3, "clip_by_global_norm", "options table {use_norm =} (and "
                             "nonfinite =)");
    }
    MfTensor **outs = lua_newuserdatauv(L, sizeof *outs * (size_t)(n > 0 ? n : 1), 0);
    MfTensor *norm = NULL;
    if (mf_clip_by_global_norm_ex(n, ts, clip, use_norm, nonfinite, outs, &norm) != MF_OK)
        return lmf_raise(L);
    lua_createtable(L, n, 1);
    for (int i = 0; i < n; i++) {
        if (!outs[i])
            continue;
        lmf_push_tensor(L, outs[i]);
        outs[i] = NULL;
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "n");
    lmf_push_tensor(L, norm);
    return 2;
}

/* ---- registration ------------------------------------------------------------------ */

void lmf_open_reduce(lua_State *L, int methods)
{
    static const luaL_Reg funcs[] = {
        {"global_norm", l_global_norm}, {"clip_by_global_norm", l_clip_by_global_norm},
        {NULL, NULL}};
    (void)methods;
    luaL_setfuncs(L, funcs, 0);
}
