/* lmf_data.c — mf.data: read_csv and read_idx (parsed in C, core/io/) and
 * the C helpers of mf.data.Dataset, whose pipeline (from_tensor_slices,
 * shuffle, batch, epochs, iter) is lib/dataset.lua, a file of the Lua library.
 *
 * A Dataset moves 1-based row numbers (or arrays of them, once batched)
 * through its stages and makes tensors only at the end, with one GatherV2
 * per component and element ('take' below), so a batch is one gather. The
 * shuffle draws from the engine's Philox generator with a seed resolved by
 * TensorFlow's rule (mf_rng_op_seed) when shuffle() is called; pass p of a
 * shuffle stage (each epoch, each new ds:iter()) uses stream p, so orders
 * differ between epochs and repeat across runs. */
#include <string.h>

#include "core/create.h"
#include "core/io/io.h"
#include "core/rng.h"
#include "lmf.h"

/* Reads option 'columns' (an array of 1-based indices or header names) of
 * the table at 2 into a userdata array left on the stack; returns it and
 * sets '*n' (0 when absent). The names point into strings the array keeps
 * alive (its user value). */
static MfCsvColumn *csv_columns(lua_State *L, int *n)
{
    *n = 0;
    if (!lua_istable(L, 2) || lua_getfield(L, 2, "columns") == LUA_TNIL) {
        lua_pushnil(L); /* keeps the stack shape the same for the caller */
        return NULL;
    }
    if (!lua_istable(L, -1))
        luaL_error(L, "read_csv: option 'columns' must be an array of column numbers or "
                   "names, got %s", luaL_typename(L, -1));
    int cols = lua_gettop(L);
    lua_Integer len = luaL_len(L, cols);
    if (len < 1 || len > 1 << 20)
        luaL_error(L, "read_csv: option 'columns' must list 1 or more columns");
    lua_newtable(L);   /* the names: 'cols' need not hold them (a proxy's __index) */
    int keep = lua_gettop(L);
    MfCsvColumn *c = lua_newuserdatauv(L, (size_t)len * sizeof *c, 1);
    for (lua_Integer i = 1; i <= len; i++) {
        int ty = lua_geti(L, cols, i);
        if (ty == LUA_TSTRING) {
            c[i - 1] = (MfCsvColumn){0, lmf_keep_string(L, keep)};
            continue;
        } else if (ty == LUA_TNUMBER) {
            /* its range is mf_read_csv's, which knows the file's columns */
            const char *what = lua_pushfstring(L, "columns[%I] (a column number)", i);
            c[i - 1] = (MfCsvColumn){lmf_check_integer(L, -2, "read_csv", what), NULL};
            lua_pop(L, 1);
        } else {
            luaL_error(L, "read_csv: columns[%d] must be a column number or a header name, "
                       "got %s", (int)i, luaL_typename(L, -1));
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, keep);
    lua_setiuservalue(L, -2, 1);   /* the names live as long as the array */
    lua_remove(L, keep);
    lua_remove(L, cols);
    *n = (int)len;
    return c;
}

/* mf.data.read_csv(path [, {header, columns, dtype}]) -> a 2-D tensor */
static int l_read_csv(lua_State *L)
{
    lmf_check_nargs(L, "read_csv", 2);
    static const char *const keys[] = {"header", "columns", "dtype", NULL};
    const char *path = lmf_check_path(L, 1, "read_csv");
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lmf_check_options(L, 2, "read_csv", keys);
    MfCsvOptions opt = {.header = lmf_opt_bool(L, 2, "read_csv", "header", -1)};   /* -1: guess */
    opt.dtype = lmf_opt_field(L, 2, "dtype") ? lmf_opt_dtype(L, -1, MF_FLOAT32) : MF_FLOAT32;
    opt.columns = csv_columns(L, &opt.ncolumns);
    MfTensor *out = NULL;
    lmf_check_status(L, mf_read_csv(path, &opt, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.data.read_idx(path) -> a tensor (uint8, int32, float32 or float64) */
static int l_read_idx(lua_State *L)
{
    lmf_check_nargs(L, "read_idx", 1);
    const char *path = lmf_check_path(L, 1, "read_idx");
    MfTensor *out = NULL;
    lmf_check_status(L, mf_read_idx(path, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* ---- helpers of the Dataset chunk ----------------------------------------- */

/* Writes the 0-based rows of the (nested) array at 'idx' into 'dst' at
 * 'depth', checking every level is as long as 'shape' says; returns the
 * next free slot. Rows must lie in 1..nrows. */
static int64_t fill_rows(lua_State *L, int idx, int depth, int rank, const int64_t *shape,
                         int64_t *dst, int64_t pos, int64_t nrows)
{
    if (depth == rank) {
        lua_Integer r = lua_tointeger(L, idx);
        if (r < 1 || r > nrows)
            luaL_error(L, "Dataset: row %d out of range 1..%d", (int)r, (int)nrows);
        dst[pos] = r - 1;
        return pos + 1;
    }
    if (!lua_istable(L, idx) || (int64_t)luaL_len(L, idx) != shape[depth])
        luaL_error(L, "batch: cannot stack batches of different sizes into one batch "
                   "(batch the inner batches with {drop_remainder = true})");
    for (int64_t i = 1; i <= shape[depth]; i++) {
        lua_geti(L, idx, i);
        pos = fill_rows(L, lua_gettop(L), depth + 1, rank, shape, dst, pos, nrows);
        lua_pop(L, 1);
    }
    return pos;
}

/* take(t, rows): the rows of t (axis 1) as one GatherV2; 'rows' is a row
 * number or a (nested) array of them, which becomes the leading axes. */
static int l_take(lua_State *L)
{
    MfTensor *t = lmf_check_tensor(L, 1);
    int64_t shape[MF_MAX_RANK];
    int rank = 0;
    lua_pushvalue(L, 2);
    while (lua_istable(L, -1) && rank < MF_MAX_RANK) {
        shape[rank++] = (int64_t)luaL_len(L, -1);
        lua_geti(L, -1, 1);
    }
    lua_settop(L, 2);
    if (rank + t->rank - 1 > MF_MAX_RANK)
        return luaL_error(L, "batch: a batch of rank %d would exceed rank %d", rank + t->rank - 1,
                          MF_MAX_RANK);
    MfTensor *ix = mf_tensor_new(MF_INT64, rank, shape);
    if (!ix)
        return lmf_raise(L);
    lmf_push_tensor(L, ix); /* the collector owns it from here */
    fill_rows(L, 2, 0, rank, shape, mf_tensor_data(ix), 0, t->shape[0]);
    MfAttrs a = mf_attrs_default();
    MfTensor *in[2] = {t, ix};
    return lmf_call_op(L, MF_OP_GATHER, 2, in, &a);
}

/* tensor_of(x) -> t, rank, rows (x a tensor, Variable or nested table of
 * numbers), or nothing */
static int l_tensor_of(lua_State *L)
{
    MfTensor *t = lua_istable(L, 1) ? lmf_arg_tensor(L, 1, -1, "Dataset") : lmf_test_tensor(L, 1);
    if (!t)
        return 0;
    mf_tensor_retain(t);
    lmf_push_tensor(L, t);
    lua_pushinteger(L, t->rank);
    lua_pushinteger(L, t->rank > 0 ? t->shape[0] : 0);
    return 3;
}

/* op_seed(seed | nil) -> the shuffle's Philox key (TensorFlow's seed rule) */
static int l_op_seed(lua_State *L)
{
    int has = !lua_isnoneornil(L, 1);
    lua_pushinteger(L, (lua_Integer)mf_rng_op_seed(has, has ? luaL_checkinteger(L, 1) : 0));
    return 1;
}

/* rand_index(key, pass, k, m) -> draw k of pass 'pass', uniform in 1..m */
static int l_rand_index(lua_State *L)
{
    uint32_t w[4];
    uint64_t key = (uint64_t)luaL_checkinteger(L, 1), pass = (uint64_t)luaL_checkinteger(L, 2),
             k = (uint64_t)luaL_checkinteger(L, 3), m = (uint64_t)luaL_checkinteger(L, 4);
    mf_rng_block(key, k, pass, w);
    uint64_t r = (uint64_t)w[0] << 32 | w[1];
    lua_pushinteger(L, (lua_Integer)(r % m) + 1);
    return 1;
}

/* range_int64(a, b, d) -> mf.range(a, b, d) as int64, for Dataset.range */
static int l_range_int64(lua_State *L)
{
    MfTensor *out = NULL;
    lmf_check_status(L, mf_create_range_int(MF_INT64, luaL_checkinteger(L, 1),
                                            luaL_checkinteger(L, 2), luaL_checkinteger(L, 3),
                                            &out));
    lmf_push_tensor(L, out);
    return 1;
}

void lmf_open_data(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_read_csv);
    lua_setfield(L, -2, "read_csv");
    lua_pushcfunction(L, l_read_idx);
    lua_setfield(L, -2, "read_idx");
    lua_setfield(L, -2, "data");
}

void lmf_push_data_helpers(lua_State *L)
{
    static const luaL_Reg helpers[] = {
        {"take", l_take},
        {"tensor_of", l_tensor_of},
        {"op_seed", l_op_seed},
        {"rand_index", l_rand_index},
        {"range_int64", l_range_int64},
        {NULL, NULL},
    };
    luaL_newlib(L, helpers);
}
