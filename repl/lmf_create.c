/* lmf_create.c — Lua bindings for creating tensors and for random ops:
 * mf.constant, mf.zeros, mf.ones, mf.fill, mf.zeros_like, mf.ones_like,
 * mf.eye, mf.range, mf.linspace, and the table mf.random (seed, normal,
 * uniform, truncated_normal, shuffle, categorical).
 *
 * Creation calls the helpers of core/create.h (concrete tensors); random
 * functions resolve their seed here ('mf_rng_op_seed', the TensorFlow rule
 * documented in core/rng.h) and call the random ops of the op table, so a
 * graph under construction gets nodes with fixed seeds. Every error names
 * the Lua function. Options tables are checked for unknown keys, so a typo
 * such as {std = 2} is an error rather than silently ignored. */
#include <math.h>
#include <string.h>

#include "core/create.h"
#include "core/ops/fill.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "graph/graph.h"
#include "mode/mode.h"
#include "lmf.h"

/* ---- argument helpers ------------------------------------------------------- */

/* The options of functions whose only option is the dtype. */
static const char *const dtype_only[] = {"dtype", NULL};

/* A dtype given as a string at 'idx' or as the field 'dtype' of an options
 * table there; 'dflt' when absent. Sets '*given' when one was given. */
static MfDType dtype_arg(lua_State *L, int idx, const char *fname, MfDType dflt, int *given)
{
    int dt = lua_istable(L, idx) ? lmf_opt_dtype_field(L, idx, fname) : -1;
    if (lua_type(L, idx) == LUA_TSTRING)
        dt = (int)lmf_opt_dtype(L, idx, dflt);
    else if (!lua_isnoneornil(L, idx) && !lua_istable(L, idx))
        luaL_typeerror(L, idx, "dtype name or options table");
    if (given)
        *given = dt >= 0;
    return dt >= 0 ? (MfDType)dt : dflt;
}

/* shape_arg's answer for a symbolic shape tensor (mf.shape(x) of a graph
 * tensor): the caller builds the op with the tensor (left at 'idx') as its
 * shape input. */
#define RUN_TIME_SHAPE MF_CREATE_RUN_TIME_SHAPE

/* A shape given as a Lua array, a number, or a 1-D integer tensor (such as
 * mf.shape(x) returns). Returns the rank, or RUN_TIME_SHAPE. */
static int shape_arg(lua_State *L, int idx, const char *fname, int64_t *shape)
{
    MfTensor *t = lmf_test_tensor(L, idx);
    if (!t)
        return lmf_check_shape(L, idx, fname, shape, 0);
    int rank = 0;
    lmf_check_status(L, mf_create_shape_of(fname, t, shape, &rank));
    return rank;
}

/* ---- fill, zeros, ones ------------------------------------------------------- */

/* Pushes a tensor of 'shape' filled with the value at 'vidx' (number,
 * boolean or one-element tensor); 'dt' < 0: the value decides
 * (mf_create_fill_scalar). */
static void push_filled(lua_State *L, const char *fname, int rank, const int64_t *shape,
                        int vidx, int dt)
{
    MfScalar v = {.dtype = -1};
    MfTensor *t = lmf_test_tensor(L, vidx), *out = NULL;
    int vt = lua_type(L, vidx);
    if (t) {
        lmf_check_status(L, mf_create_scalar_of(fname, t, &v));
    } else if (vt == LUA_TNUMBER || vt == LUA_TBOOLEAN) {
        v.is_bool = vt == LUA_TBOOLEAN;
        v.is_int = v.is_bool || lua_isinteger(L, vidx);
        v.i = v.is_bool ? lua_toboolean(L, vidx) : lua_tointeger(L, vidx);
        v.x = lua_tonumber(L, vidx);
    } else {
        luaL_typeerror(L, vidx, "number, boolean or one-element mf.Tensor");
    }
    lmf_check_status(L, mf_create_fill_scalar(fname, dt, &v, rank, shape, &out));
    lmf_push_tensor(L, out);
}

/* The scalar on top of the stack replaced by Fill(shape at 'sidx', it). */
static void fill_by_top(lua_State *L, int sidx)
{
    MfTensor *out = NULL;
    lmf_check_status(L, mf_fill_by(lmf_check_tensor(L, sidx), lmf_check_tensor(L, -1), &out));
    lmf_push_tensor(L, out);
    lua_replace(L, -2);
}

/* zeros and ones: a number value filled into any dtype (bool: false/true). */
static int fill_const(lua_State *L, const char *fname, int rank, const int64_t *shape,
                      MfDType dt, int value)
{
    MfTensor *out = NULL;
    lmf_check_status(L, mf_create_fill_int(fname, dt, rank, shape, value, &out));
    lmf_push_tensor(L, out);
    return 1;
}

static int shaped_const(lua_State *L, const char *fname, int value)
{
    if (lua_type(L, 1) == LUA_TNUMBER && lua_type(L, 2) == LUA_TNUMBER)   /* Torch7's habit */
        return luaL_error(L, "%s: the shape is one table: mf.%s{%s, %s}, not mf.%s(%s, %s)",
                          fname, fname, lua_tostring(L, 1), lua_tostring(L, 2), fname,
                          lua_tostring(L, 1), lua_tostring(L, 2));
    int64_t shape[MF_MAX_RANK];
    int rank = shape_arg(L, 1, fname, shape);
    lmf_check_options(L, 2, fname, dtype_only);
    MfDType dt = dtype_arg(L, 2, fname, MF_FLOAT32, NULL);
    if (rank != RUN_TIME_SHAPE)
        return fill_const(L, fname, rank, shape, dt, value);
    fill_const(L, fname, 0, shape, dt, value);
    fill_by_top(L, 1);
    return 1;
}

static int like_const(lua_State *L, const char *fname, int value)
{
    MfTensor *t = lmf_arg_tensor(L, 1, -1, fname), *out = NULL;
    lmf_check_options(L, 2, fname, dtype_only);
    MfDType dt = dtype_arg(L, 2, fname, t->dtype, NULL);
    lmf_check_status(L, mf_create_like(fname, t, dt, value, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.zeros(shape [, dtype]), mf.ones, mf.zeros_like(t [, dtype]) and
 * mf.ones_like: upvalues the name, the value (0 or 1), and whether the
 * shape is another tensor's. */
static int l_const_fill(lua_State *L)
{
    const char *fname = lua_tostring(L, lua_upvalueindex(1));
    int value = (int)lua_tointeger(L, lua_upvalueindex(2));
    lmf_check_nargs(L, fname, 2);
    if (lua_toboolean(L, lua_upvalueindex(3)))
        return like_const(L, fname, value);
    return shaped_const(L, fname, value);
}

/* mf.fill(shape, value [, dtype]) */
static int l_fill(lua_State *L)
{
    lmf_check_nargs(L, "fill", 3);
    int64_t shape[MF_MAX_RANK];
    int rank = shape_arg(L, 1, "fill", shape);
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "fill: expected a value as argument 2, got %s",
                          luaL_typename(L, 2));
    int given = 0;
    lmf_check_options(L, 3, "fill", dtype_only);
    MfDType dt = dtype_arg(L, 3, "fill", MF_FLOAT32, &given);
    push_filled(L, "fill", rank == RUN_TIME_SHAPE ? 0 : rank, shape, 2, given ? (int)dt : -1);
    if (rank == RUN_TIME_SHAPE)
        fill_by_top(L, 1);
    return 1;
}

/* ---- constant ----------------------------------------------------------------- */

/* The value on top, or, while a graph is being built, the Const node made
 * of it (mode/variables.c decides) replacing it. */
static int graph_constant(lua_State *L, const char *name)
{
    lua_pushvalue(L, -1);   /* the value on top stays as given */
    MfTensor *v = lmf_check_tensor(L, -1), *out = NULL;
    lmf_check_status(L, mf_mode_constant(v, name, &out));
    if (out == v) {          /* eager: keep the value as given */
        mf_tensor_release(out);
        lua_pop(L, 1);
        return 1;
    }
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.constant(data [, {dtype, shape, name}]) (also mf.constant(data, dtype)) */
static int l_constant(lua_State *L)
{
    lmf_check_nargs(L, "constant", 2);
    static const char *const keys[] = {"dtype", "shape", "name", NULL};
    lmf_check_options(L, 2, "constant", keys);
    lua_settop(L, 2);
    lua_pushvalue(L, 1);   /* 3: the data as given (lmf_test_tensor replaces 1) */
    int given = 0;
    int dt = (int)dtype_arg(L, 2, "constant", MF_FLOAT32, &given);
    dt = given ? dt : -1;
    const char *name = NULL; /* eager tensors carry no name; a graph's Const does */
    if (lmf_opt_field(L, 2, "name")) {
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "constant: option 'name' must be a string, got %s",
                              luaL_typename(L, -1));
        name = lua_tostring(L, -1); /* left on the stack: a proxy's __index made it */
    }
    int64_t shape[MF_MAX_RANK];
    int rank = -1;
    if (lmf_opt_field(L, 2, "shape"))
        rank = shape_arg(L, lua_gettop(L), "constant", shape);
    if (rank == RUN_TIME_SHAPE)
        return luaL_error(L, "constant: the shape must be known when the constant is made; for "
                          "a shape known when the graph runs use mf.fill(shape, value)");
    MfTensor *t = lmf_test_tensor(L, 1);
    int vt = lua_type(L, 1);
    if (!t && vt != LUA_TNUMBER && vt != LUA_TBOOLEAN && vt != LUA_TTABLE)
        return luaL_typeerror(L, 1, "number, boolean, table or mf.Tensor");
    int scalar = vt == LUA_TNUMBER || vt == LUA_TBOOLEAN || (t && t->rank == 0 && !t->node);
    if (rank >= 0 && scalar) {
        push_filled(L, "constant", rank, shape, 1, dt);
    } else {   /* converted data is pushed; a tensor passes through as itself */
        MfTensor *data = t ? t : lmf_push_data(L, 1, dt, "constant"), *out = NULL;
        lmf_check_status(L, mf_create_constant(data, dt, rank, shape, &out));
        if (out != data) {
            lmf_push_tensor(L, out);
        } else {
            mf_tensor_release(out);
            if (t)
                lua_pushvalue(L, 3);
        }
    }
    return graph_constant(L, name);
}

/* ---- eye, range, linspace -------------------------------------------------------- */

/* mf.eye(n [, {num_columns, dtype}]) (also mf.eye(n, m)) */
static int l_eye(lua_State *L)
{
    static const char *const keys[] = {"num_columns", "dtype", NULL};
    lmf_check_nargs(L, "eye", lua_type(L, 2) == LUA_TNUMBER ? 3 : 2);
    lua_Integer rows = lmf_check_integer(L, 1, "eye", "n"), cols = rows;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        cols = lmf_check_integer(L, 2, "eye", "num_columns");
        lua_remove(L, 2);
    }
    lmf_check_options(L, 2, "eye", keys);
    if (lmf_opt_field(L, 2, "num_columns")) {
        cols = lmf_check_integer(L, -1, "eye", "num_columns");
        lua_pop(L, 1);
    }
    MfTensor *out = NULL;
    lmf_check_status(L, mf_create_eye(dtype_arg(L, 2, "eye", MF_FLOAT32, NULL), rows, cols,
                                      &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* Reads the 1 to 3 numbers that lead the arguments (then options) into
 * 'v' and 'iv'; returns how many and sets '*all_int'. */
static int range_args(lua_State *L, lua_Number v[3], lua_Integer iv[3], int *all_int)
{
    int n = 0;
    *all_int = 1;
    while (n < 3 && lua_type(L, n + 1) == LUA_TNUMBER) {
        v[n] = lua_tonumber(L, n + 1);
        *all_int &= lua_isinteger(L, n + 1);
        iv[n] = lua_isinteger(L, n + 1) ? lua_tointeger(L, n + 1) : (lua_Integer)0;
        n++;
    }
    if (n == 0)
        return luaL_error(L, "range: expected a number as argument 1 (limit, or start and "
                          "limit), got %s", luaL_typename(L, 1));
    return n;
}

/* mf.range(start, limit [, delta [, {dtype}]]) or mf.range(limit) */
static int l_range(lua_State *L)
{
    lua_Number v[3] = {0};
    lua_Integer iv[3] = {0};
    int all_int;
    int n = range_args(L, v, iv, &all_int), oi = n + 1;
    lmf_check_nargs(L, "range", oi);   /* nothing after the options */
    lmf_check_options(L, oi, "range", dtype_only);
    int given = 0;
    MfDType dt = dtype_arg(L, oi, "range", MF_FLOAT32, &given);
    int64_t iv64[3] = {iv[0], iv[1], iv[2]};
    MfTensor *out = NULL;
    MfStatus st = mf_create_range_of(n, v, iv64, all_int, given ? (int)dt : -1, &out);
    lmf_check_status(L, st);
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.linspace(a, b, n [, {dtype}]) */
static int l_linspace(lua_State *L)
{
    lua_Number a = luaL_checknumber(L, 1), b = luaL_checknumber(L, 2);
    lua_Integer n = lmf_check_integer(L, 3, "linspace", "n");
    lmf_check_options(L, 4, "linspace", dtype_only);
    MfDType dt = dtype_arg(L, 4, "linspace", MF_FLOAT32, NULL);
    MfTensor *out = NULL;
    lmf_check_status(L, mf_create_linspace(dt, a, b, n, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* ---- mf.random ----------------------------------------------------------------------- */

/* mf.random.seed(n): sets the global seed and restarts the op sequence. */
static int l_seed(lua_State *L)
{
    lmf_check_nargs(L, "seed", 1);
    mf_rng_set_global_seed((uint64_t)lmf_check_integer(L, 1, "random.seed", "the seed"));
    return 0;
}

/* The op seed for a call with options at 'idx' (see core/rng.h). */
static uint64_t seed_opt(lua_State *L, int idx, const char *fname)
{
    if (!lmf_opt_field(L, idx, "seed"))
        return mf_rng_op_seed(false, 0);
    lua_Integer s = lmf_check_integer(L, -1, fname, "option 'seed'");
    lua_pop(L, 1);
    return mf_rng_op_seed(true, s);
}

/* mf.random.normal / truncated_normal (shape [, {mean = 0, stddev = 1,
 * dtype, seed}]) and uniform (shape [, {minval = 0, maxval = 1, dtype,
 * seed}]; integer dtypes need maxval): the op and its two parameters. */
typedef struct RandomFn {
    const char *name, *fname;   /* "normal", "random.normal" */
    MfStatus (*fn)(int, const int64_t *, MfDType, double, double, uint64_t, MfTensor **);
    MfOpId op;
    const char *a, *b;          /* the parameters' option names and defaults */
    double a0, b0;
} RandomFn;

static const RandomFn random_fns[] = {
    {"normal", "random.normal", mf_random_normal, MF_OP_RANDOM_NORMAL, "mean", "stddev", 0, 1},
    {"truncated_normal", "random.truncated_normal", mf_random_truncated_normal,
     MF_OP_TRUNCATED_NORMAL, "mean", "stddev", 0, 1},
    /* maxval NaN: none given (core/ops/random.h) */
    {"uniform", "random.uniform", mf_random_uniform, MF_OP_RANDOM_UNIFORM, "minval", "maxval", 0,
     (double)NAN},
};

/* upvalue 1: the index in random_fns */
static int l_random(lua_State *L)
{
    const RandomFn *r = &random_fns[lua_tointeger(L, lua_upvalueindex(1))];
    const char *fname = r->fname;
    lmf_check_nargs(L, r->name, 2);
    const char *const keys[] = {r->a, r->b, "dtype", "seed", NULL};
    int64_t shape[MF_MAX_RANK];
    int rank = shape_arg(L, 1, fname, shape);
    lmf_check_options(L, 2, fname, keys);
    double a = lmf_opt_number(L, 2, fname, r->a, r->a0);
    double b = lmf_opt_number(L, 2, fname, r->b, r->b0);
    MfDType dt = dtype_arg(L, 2, fname, MF_FLOAT32, NULL);
    MfTensor *out = NULL;
    uint64_t seed = seed_opt(L, 2, fname);
    lmf_check_status(L, rank == RUN_TIME_SHAPE
                     ? mf_random_shaped_by(r->op, lmf_check_tensor(L, 1), dt, a, b, seed, &out)
                     : r->fn(rank, shape, dt, a, b, seed, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.random.shuffle(t [, {seed}]): slices along axis 1 in a random order. */
static int l_shuffle(lua_State *L)
{
    lmf_check_nargs(L, "shuffle", 2);
    static const char *const keys[] = {"seed", NULL};
    MfTensor *t = lmf_arg_tensor(L, 1, -1, "shuffle");
    lmf_check_options(L, 2, "random.shuffle", keys);
    if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
        return luaL_typeerror(L, 2, "options table");
    MfTensor *out = NULL;
    lmf_check_status(L, mf_random_shuffle(t, seed_opt(L, 2, "random.shuffle"), &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.random.categorical(logits, num_samples [, {seed, dtype}]): 1-based
 * classes drawn from the softmax of each row. */
static int l_categorical(lua_State *L)
{
    static const char *const keys[] = {"seed", "dtype", NULL};
    const char *fname = "random.categorical";
    lmf_check_nargs(L, fname, 3);
    MfTensor *logits = lmf_arg_tensor(L, 1, -1, fname);
    lua_Integer n = lmf_check_integer(L, 2, fname, "num_samples");
    lmf_check_options(L, 3, fname, keys);
    if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))
        return luaL_typeerror(L, 3, "options table");
    MfDType dt = dtype_arg(L, 3, fname, MF_INT64, NULL);
    MfTensor *out = NULL;
    lmf_check_status(L, mf_random_categorical(logits, n, dt, seed_opt(L, 3, fname), &out));
    lmf_push_tensor(L, out);
    return 1;
}

void lmf_open_create(lua_State *L, int methods)
{
    static const luaL_Reg funcs[] = {
        {"fill", l_fill}, {"eye", l_eye}, {"range", l_range}, {"linspace", l_linspace},
        {NULL, NULL}};
    static const char *const const_fills[] = {"zeros", "ones", "zeros_like", "ones_like"};
    static const luaL_Reg random[] = {{"seed", l_seed}, {"shuffle", l_shuffle},
                                      {"categorical", l_categorical}, {NULL, NULL}};
    (void)methods;
    luaL_setfuncs(L, funcs, 0);
    lua_pushcfunction(L, l_constant);
    lua_setfield(L, -2, "constant");
    for (int i = 0; i < 4; i++) {
        lua_pushstring(L, const_fills[i]);
        lua_pushinteger(L, i % 2);
        lua_pushboolean(L, i >= 2);
        lua_pushcclosure(L, l_const_fill, 3);
        lua_setfield(L, -2, const_fills[i]);
    }
    luaL_newlib(L, random);
    for (int i = 0; i < 3; i++) {
        lua_pushinteger(L, i);
        lua_pushcclosure(L, l_random, 1);
        lua_setfield(L, -2, random_fns[i].name);
    }
    lua_setfield(L, -2, "random");
}
