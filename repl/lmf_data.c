/* lmf_data.c — mf.data: read_csv and read_idx (parsed in C, core/io/) and
 * mf.data.Dataset, whose pipeline (from_tensor_slices, shuffle, batch,
 * epochs, iter) is the Lua chunk embedded below.
 *
 * A Dataset moves 1-based row numbers (or arrays of them, once batched)
 * through its stages and makes tensors only at the end, with one GatherV2
 * per component and element ('take' below), so a batch is one gather. The
 * shuffle draws from the engine's Philox generator with a seed resolved by
 * TensorFlow's rule (mf_rng_op_seed) when shuffle() is called; pass p of a
 * shuffle stage (each epoch, each new ds:iter()) uses stream p, so orders
 * differ between epochs and repeat across runs. */
#include <string.h>

#include "core/io/io.h"
#include "core/rng.h"
#include "lmf.h"

/* Errors for option tables: unknown keys name the function. */
static void check_keys(lua_State *L, int idx, const char *fname, const char *const *keys,
                       const char *expected)
{
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int known = 0;
        for (int i = 0; k && keys[i] && !known; i++)
            known = strcmp(k, keys[i]) == 0;
        if (!known)
            luaL_error(L, "%s: unknown option '%s' (expected %s)", fname,
                       luaL_tolstring(L, -1, NULL), expected);
    }
}

/* Reads option 'columns' (an array of 1-based indices or header names) of
 * the table at 2 into a userdata array left on the stack; returns it and
 * sets '*n' (0 when absent). The names point into strings the option table
 * keeps alive. */
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
    MfCsvColumn *c = lua_newuserdatauv(L, (size_t)len * sizeof *c, 0);
    for (lua_Integer i = 1; i <= len; i++) {
        int ty = lua_geti(L, cols, i), isint = 0;
        lua_Integer k = lua_tointegerx(L, -1, &isint);
        if (ty == LUA_TSTRING) {
            c[i - 1] = (MfCsvColumn){0, lua_tostring(L, -1)}; /* anchored by 'cols' */
        } else if (ty == LUA_TNUMBER && isint) {
            if (k < 1)
                luaL_error(L, "read_csv: column %d out of range (columns are 1-based)", (int)k);
            c[i - 1] = (MfCsvColumn){k - 1, NULL};
        } else {
            luaL_error(L, "read_csv: columns[%d] must be a column number or a header name, "
                       "got %s", (int)i, luaL_typename(L, -1));
        }
        lua_pop(L, 1);
    }
    lua_remove(L, cols);
    *n = (int)len;
    return c;
}

/* mf.data.read_csv(path [, {header, columns, dtype}]) -> a 2-D tensor */
static int l_read_csv(lua_State *L)
{
    static const char *const keys[] = {"header", "columns", "dtype", NULL};
    const char *path = luaL_checkstring(L, 1);
    check_keys(L, 2, "read_csv", keys, "header, columns, dtype");
    MfCsvOptions opt = {.header = -1, .dtype = MF_FLOAT32};
    if (lua_istable(L, 2)) {
        if (lua_getfield(L, 2, "header") != LUA_TNIL) {
            if (!lua_isboolean(L, -1))
                luaL_error(L, "read_csv: option 'header' must be a boolean, got %s",
                           luaL_typename(L, -1));
            opt.header = lua_toboolean(L, -1);
        }
        lua_getfield(L, 2, "dtype");
        opt.dtype = lmf_opt_dtype(L, -1, MF_FLOAT32);
        lua_pop(L, 2);
    }
    opt.columns = csv_columns(L, &opt.ncolumns);
    MfTensor *out = NULL;
    lmf_check_status(L, mf_read_csv(path, &opt, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.data.read_idx(path) -> a tensor (int32, float32 or float64) */
static int l_read_idx(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
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
    MfTensor *t = lua_istable(L, 1) ? lmf_to_tensor(L, 1, -1) : lmf_test_tensor(L, 1);
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

/* The Dataset pipeline, run once by lmf_open_data with (data, take,
 * tensor_of, op_seed, rand_index); in pieces under C's 4095-byte limit
 * for one string literal. */
static const char *const dataset_lua[] = {
    "-- mf.data.Dataset: a pipeline of row indices; tensors are made only at the end.\n"
    "local data, take, tensor_of, op_seed, rand_index = ...\n"
    "local Dataset = {}\n"
    "Dataset.__index = Dataset\n"
    "Dataset.__name = \"mf.data.Dataset\"\n"
    "data.Dataset = Dataset\n"
    "\n"
    "local function fail(fname, fmt, ...)\n"
    "  error(fname .. \": \" .. string.format(fmt, ...), 3)\n"
    "end\n"
    "\n"
    "local function check_opts(fname, opts, keys)\n"
    "  if opts == nil then return {} end\n"
    "  if type(opts) ~= \"table\" then\n"
    "    fail(fname, \"options must be a table, got %s\", type(opts))\n"
    "  end\n"
    "  for k in pairs(opts) do\n"
    "    if not keys[k] then fail(fname, \"unknown option '%s'\", tostring(k)) end\n"
    "  end\n"
    "  return opts\n"
    "end\n"
    "\n"
    "-- 3.0 counts as 3; 1.5, 1e308 (no integer form), nan and non-numbers do not.\n"
    "local function check_count(fname, what, v)\n"
    "  local iv = math.type(v) and math.tointeger(v)\n"
    "  if not iv or iv < 1 then\n"
    "    fail(fname, \"%s must be a positive integer, got %s\", what,\n"
    "         type(v) == \"number\" and tostring(v) or type(v))\n"
    "  end\n"
    "  return iv\n"
    "end\n"
    "\n"
    "-- Methods called with a dot (ds.batch(4)) get no Dataset: say so, naming the method.\n"
    "local function check_self(fname, self)\n"
    "  if getmetatable(self) ~= Dataset then\n"
    "    fail(fname, \"expected a Dataset (call it as ds:%s(...)), got %s\", fname, type(self))\n"
    "  end\n"
    "end\n"
    "\n"
    "-- Dataset.from_tensor_slices(t | {t1, t2, ...}): elements are the slices along axis 1.\n"
    "function Dataset.from_tensor_slices(tensors)\n"
    "  local fname = \"Dataset.from_tensor_slices\"\n"
    "  if tensors == nil then\n"
    "    fail(fname, \"expected a tensor or an array of tensors, got nil\")\n"
    "  end\n"
    "  local list = tensors\n"
    "  if type(tensors) ~= \"table\" or type(tensors[1]) ~= \"userdata\" then\n"
    "    list = {tensors}\n"
    "  end\n"
    "  local comps, n = {}, nil\n"
    "  for i, x in ipairs(list) do\n"
    "    local ok, t, rank, len = pcall(tensor_of, x)\n"
    "    if not ok then\n"
    "      fail(fname, \"component %d: %s\", i, tostring(t):gsub(\"^tensor: \", \"\"))\n"
    "    elseif not t then\n"
    "      fail(fname, \"component %d: expected a tensor or a nested table of numbers, got %s\",\n"
    "           i, type(x))\n"
    "    elseif rank == 0 then\n"
    "      fail(fname, \"component %d is a scalar: slicing needs rank 1 or more\", i)\n"
    "    elseif n and len ~= n then\n"
    "      fail(fname, \"component %d has %d rows along axis 1 but component 1 has %d \"\n"
    "           .. \"(all must agree)\", i, len, n)\n"
    "    end\n"
    "    comps[i], n = t, len\n"
    "  end\n"
    "  return setmetatable({comps = comps, n = n, stages = {}}, Dataset)\n"
    "end\n"
    "\n"
    "local function derive(ds, stage)\n"
    "  local stages = {}\n"
    "  for i, s in ipairs(ds.stages) do stages[i] = s end\n"
    "  stages[#stages + 1] = stage\n"
    "  return setmetatable({comps = ds.comps, n = ds.n, stages = stages}, Dataset)\n"
    "end\n"
    "\n"
    "-- ds:shuffle(buffer_size [, {seed}]): TensorFlow's buffered shuffle,\n"
    "-- reshuffled on every pass.\n"
    "function Dataset:shuffle(buffer_size, opts)\n"
    "  check_self(\"shuffle\", self)\n"
    "  local fname = \"shuffle\"\n"
    "  buffer_size = check_count(fname, \"buffer_size\", buffer_size)\n"
    "  opts = check_opts(fname, opts, {seed = true})\n"
    "  if opts.seed ~= nil and math.type(opts.seed) ~= \"integer\" then\n"
    "    fail(fname, \"option 'seed' must be an integer, got %s\", tostring(opts.seed))\n"
    "  end\n"
    "  return derive(self, {kind = \"shuffle\", size = buffer_size, seed = op_seed(opts.seed),\n"
    "                       passes = 0})\n"
    "end\n"
    "\n"
    "-- ds:batch(n [, {drop_remainder = false}])\n"
    "function Dataset:batch(n, opts)\n"
    "  check_self(\"batch\", self)\n"
    "  local fname = \"batch\"\n"
    "  n = check_count(fname, \"the batch size\", n)\n"
    "  opts = check_opts(fname, opts, {drop_remainder = true})\n"
    "  local drop = opts.drop_remainder\n"
    "  if drop ~= nil and type(drop) ~= \"boolean\" then\n"
    "    fail(fname, \"option 'drop_remainder' must be a boolean, got %s\", type(drop))\n"
    "  end\n"
    "  return derive(self, {kind = \"batch\", size = n, drop = drop == true})\n"
    "end\n",
    "\n"
    "-- ds:epochs([n]): TensorFlow's repeat; no count repeats forever.\n"
    "function Dataset:epochs(n)\n"
    "  check_self(\"epochs\", self)\n"
    "  if n ~= nil then n = check_count(\"epochs\", \"the number of epochs\", n) end\n"
    "  return derive(self, {kind = \"epochs\", count = n})\n"
    "end\n"
    "\n"
    "-- Stage makers: each takes the upstream factory and returns a factory of iterators.\n"
    "local make = {}\n"
    "\n"
    "function make.shuffle(up, st)\n"
    "  return function()\n"
    "    local pass, k, it, buf = st.passes, 0, up(), {}\n"
    "    st.passes = st.passes + 1\n"
    "    while #buf < st.size do\n"
    "      local v = it()\n"
    "      if v == nil then break end\n"
    "      buf[#buf + 1] = v\n"
    "    end\n"
    "    return function()\n"
    "      local m = #buf\n"
    "      if m == 0 then return nil end\n"
    "      k = k + 1\n"
    "      local j = rand_index(st.seed, pass, k, m)\n"
    "      local v, nxt = buf[j], it()\n"
    "      if nxt ~= nil then\n"
    "        buf[j] = nxt\n"
    "      else\n"
    "        buf[j] = buf[m]\n"
    "        buf[m] = nil\n"
    "      end\n"
    "      return v\n"
    "    end\n"
    "  end\n"
    "end\n"
    "\n"
    "function make.batch(up, st)\n"
    "  return function()\n"
    "    local it = up()\n"
    "    return function()\n"
    "      local b = {}\n"
    "      for i = 1, st.size do\n"
    "        local v = it()\n"
    "        if v == nil then break end\n"
    "        b[i] = v\n"
    "      end\n"
    "      if #b == 0 or (#b < st.size and st.drop) then return nil end\n"
    "      return b\n"
    "    end\n"
    "  end\n"
    "end\n"
    "\n"
    "function make.epochs(up, st)\n"
    "  return function()\n"
    "    local e, it, produced = 0, nil, true\n"
    "    return function()\n"
    "      while true do\n"
    "        if it == nil then\n"
    "          if (st.count and e >= st.count) or not produced then return nil end\n"
    "          e, it, produced = e + 1, up(), false\n"
    "        end\n"
    "        local v = it()\n"
    "        if v ~= nil then\n"
    "          produced = true\n"
    "          return v\n"
    "        end\n"
    "        it = nil\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "\n"
    "-- ds:iter(): for x, y in ds:iter() do ... end (one value per component).\n"
    "function Dataset:iter()\n"
    "  check_self(\"iter\", self)\n"
    "  local n = self.n\n"
    "  local factory = function()\n"
    "    local i = 0\n"
    "    return function()\n"
    "      i = i + 1\n"
    "      if i <= n then return i end\n"
    "    end\n"
    "  end\n"
    "  for _, st in ipairs(self.stages) do factory = make[st.kind](factory, st) end\n"
    "  local it, comps = factory(), self.comps\n"
    "  return function()\n"
    "    local v = it()\n"
    "    if v == nil then return nil end\n"
    "    local out = {}\n"
    "    for i, c in ipairs(comps) do out[i] = take(c, v) end\n"
    "    return table.unpack(out, 1, #comps)\n"
    "  end\n"
    "end\n"
    "\n"
    "function Dataset:__tostring()\n"
    "  check_self(\"__tostring\", self)\n"
    "  local parts = {}\n"
    "  for i, st in ipairs(self.stages) do\n"
    "    if st.kind == \"epochs\" then\n"
    "      parts[i] = \"epochs(\" .. (st.count or \"forever\") .. \")\"\n"
    "    elseif st.kind == \"batch\" then\n"
    "      local drop = st.drop and \", drop_remainder\" or \"\"\n"
    "      parts[i] = \"batch(\" .. st.size .. drop .. \")\"\n"
    "    else\n"
    "      parts[i] = \"shuffle(\" .. st.size .. \")\"\n"
    "    end\n"
    "  end\n"
    "  local s = string.format(\"mf.data.Dataset: %d rows, %d component%s\", self.n, #self.comps,\n"
    "                          #self.comps == 1 and \"\" or \"s\")\n"
    "  if #parts > 0 then s = s .. \", \" .. table.concat(parts, \" -> \") end\n"
    "  return s\n"
    "end\n",
    NULL,
};

void lmf_open_data(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_read_csv);
    lua_setfield(L, -2, "read_csv");
    lua_pushcfunction(L, l_read_idx);
    lua_setfield(L, -2, "read_idx");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; dataset_lua[i]; i++)
        luaL_addstring(&b, dataset_lua[i]);
    luaL_pushresult(&b);
    size_t len;
    const char *code = lua_tolstring(L, -1, &len);
    if (luaL_loadbuffer(L, code, len, "=mf.data") != LUA_OK)
        lua_error(L);
    lua_remove(L, -2);
    lua_pushvalue(L, -2);
    lua_pushcfunction(L, l_take);
    lua_pushcfunction(L, l_tensor_of);
    lua_pushcfunction(L, l_op_seed);
    lua_pushcfunction(L, l_rand_index);
    lua_call(L, 5, 0);
    lua_setfield(L, -2, "data");
}
