/* lmf_conv.c — the Lua binding of mf.nn.conv2d_transpose(input, filter,
 * output_shape, strides, padding [, {...}]), which is not one op (conv2d and
 * its backprops are bound from their descriptors by lmf_op.c), and the
 * reader of a conv algorithm option (mf.config's too).
 * Layouts as TensorFlow: input NHWC (data_format = "NCHW" also accepted:
 * the engine transposes around the NHWC op, so gradients flow), filter
 * HWIO. 'strides' and 'dilations' are a number s (meaning 1, s, s, 1), a
 * pair {sh, sw}, or 4 entries in the data format's order; 'padding' is
 * "SAME" or "VALID". The output shape is a Lua array of 4 integers (or a 1-D
 * integer tensor) in the data format's order. The ops
 * (core/ops/conv.h) run im2col / col2im and GEMMs with a patch buffer of at
 * most 64 MiB, or the direct and Winograd kernels: the option
 * {algorithm = "auto" | "im2col" | "winograd" | "direct"} picks one for the
 * call and its gradients (mf.config{conv_algorithm = ...} for all calls; see
 * core/ops/conv.h "Algorithms"). repl/lmf_nn.c fills the rest of mf.nn; whichever opener runs
 * first creates the table. */
#include <string.h>

#include "core/ops/conv.h"
#include "lmf.h"

/* Options: 'nchw' from data_format, dilations in NHWC-or-NCHW order. */
typedef struct ConvArgs {
    MfAttrs attrs;
    bool nchw;
} ConvArgs;

int lmf_conv_algorithm_option(lua_State *L, int opt, const char *key, const char *fname)
{
    int type = lua_getfield(L, opt, key);
    const char *name = type == LUA_TNIL ? "auto" : type == LUA_TSTRING ? lua_tostring(L, -1)
                                                                       : NULL;
    int a = mf_conv_algorithm_parse(name);
    if (a < 0)
        luaL_error(L, "%s: %s must be \"auto\", \"im2col\", \"winograd\" or \"direct\", "
                   "got %s", fname, key, name ? lua_pushfstring(L, "\"%s\"", name)
                                              : luaL_typename(L, -1));
    lua_pop(L, 1);
    return a;
}

/* Reads strides or dilations at 'idx' into 'out' (the data format's order). */
static void window_arg(lua_State *L, int idx, const char *fname, const char *what, bool nchw,
                       int64_t *out)
{
    int h = nchw ? 2 : 1;
    for (int i = 0; i < 4; i++)
        out[i] = 1;
    bool number = lua_type(L, idx) == LUA_TNUMBER;
    if (number)
        out[h] = out[h + 1] = lua_isinteger(L, idx)
                                  ? lua_tointeger(L, idx)
                                  : (lmf_arg_error(L, idx, fname, "integer strides"), 0);
    int n = number ? 0 : lua_istable(L, idx) ? (int)lua_rawlen(L, idx) : -1;
    if (!number && n != 2 && n != 4)
        luaL_error(L, "%s: %s must be a number or an array of 2 or 4 integers, got %s", fname,
                   what, n < 0 ? luaL_typename(L, idx) : lua_pushfstring(L, "%d entries", n));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint)
            luaL_error(L, "%s: %s entry %d must be an integer, got %s", fname, what, i + 1,
                       luaL_typename(L, -1));
        out[n == 2 ? h + i : i] = v;
        lua_pop(L, 1);
    }
    for (int i = 0; i < 4; i++)
        if (out[i] < 1)
            luaL_error(L, "%s: %s must be positive, got %d at position %d", fname, what,
                       (int)out[i], i + 1);
}

/* strides at 'idx', padding at 'idx' + 1, options at 'idx' + 2. */
static ConvArgs conv_args(lua_State *L, int idx, const char *fname)
{
    static const char *const pads[] = {"VALID", "SAME", NULL};
    ConvArgs a = {.attrs = mf_attrs_default(), .nchw = false};
    int opt = idx + 2;
    if (!lua_isnoneornil(L, opt)) {
        if (!lua_istable(L, opt))
            luaL_error(L, "%s: expected an options table {data_format, dilations} as argument "
                       "%d, got %s", fname, opt, luaL_typename(L, opt));
        static const char *const known[] = {"data_format", "dilations", "algorithm", NULL};
        lmf_check_options(L, opt, fname, known);
        lua_getfield(L, opt, "data_format");
        const char *df = lua_isnil(L, -1) ? "NHWC" : lua_tostring(L, -1);
        if (!df || (strcmp(df, "NHWC") != 0 && strcmp(df, "NCHW") != 0))
            luaL_error(L, "%s: data_format must be \"NHWC\" or \"NCHW\", got %s", fname,
                       luaL_tolstring(L, -1, NULL));
        a.nchw = strcmp(df, "NCHW") == 0;
        lua_pop(L, 1);
    }
    window_arg(L, idx, fname, "strides", a.nchw, a.attrs.strides);
    const char *pad = lua_tostring(L, idx + 1);
    int p = -1;
    for (int i = 0; pad && pads[i]; i++)
        p = strcmp(pad, pads[i]) == 0 ? i : p;
    if (p < 0)
        luaL_error(L, "%s: padding must be \"SAME\" or \"VALID\", got %s", fname,
                   pad ? lua_pushfstring(L, "\"%s\"", pad) : luaL_typename(L, idx + 1));
    a.attrs.padding = p;
    if (!lua_isnoneornil(L, opt))
        a.attrs.conv_algorithm = lmf_conv_algorithm_option(L, opt, "algorithm", fname);
    for (int i = 0; i < 4; i++)
        a.attrs.dilations[i] = 1;
    if (!lua_isnoneornil(L, opt)) {
        lua_getfield(L, opt, "dilations");
        if (!lua_isnil(L, -1))
            window_arg(L, lua_gettop(L), fname, "dilations", a.nchw, a.attrs.dilations);
        lua_pop(L, 1);
    }
    return a;
}

/* Four sizes at 'idx': a Lua array or a 1-D integer tensor. A batch entry
 * (the first) of -1 means "as the other input's" (conv2d_transpose in a
 * graph with an unknown batch). */
static void sizes_arg(lua_State *L, int idx, const char *fname, const char *what, int64_t *s)
{
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t && t->rank == 1 && t->shape[0] == 4 && mf_dtype_is_int(t->dtype) && t->storage) {
        for (int i = 0; i < 4; i++)
            s[i] = mf_tensor_get_int(t, i);
        return;
    }
    if (!t && lua_istable(L, idx) && lua_rawlen(L, idx) == 4) {
        for (int i = 0; i < 4; i++) {
            lua_rawgeti(L, idx, i + 1);
            int isint = 0;
            s[i] = lua_tointegerx(L, -1, &isint);
            lua_pop(L, 1);
            if (!isint || (s[i] < 0 && !(i == 0 && s[i] == -1)))
                luaL_error(L, "%s: %s entry %d must be a non-negative integer%s", fname, what,
                           i + 1, i == 0 ? " (or -1: the input's batch)" : "");
        }
        return;
    }
    luaL_error(L, "%s: %s must be an array of 4 integers (or a 1-D integer tensor of 4), "
               "got %s", fname, what, t ? "a tensor of another shape or dtype"
                                         : luaL_typename(L, idx));
}

/* Arguments 'i' and 'j' as tensors; a Lua table takes the other's dtype. */
static void two_tensors(lua_State *L, int i, int j, MfTensor **a, MfTensor **b)
{
    MfTensor *ta = lmf_test_tensor(L, i), *tb = lmf_test_tensor(L, j);
    int like = ta ? (int)ta->dtype : tb ? (int)tb->dtype : -1;
    *a = lmf_to_tensor(L, i, like);
    *b = lmf_to_tensor(L, j, like);
}

static int push_result(lua_State *L, MfStatus st, MfTensor *out)
{
    lmf_check_status(L, st);
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.nn.conv2d_transpose(input, filter, output_shape, strides, padding [, opts]):
 * TensorFlow's, which is conv2d's backprop-input with the input as
 * out_backprop; the filter is [kh, kw, out_channels, in_channels] (the
 * HWIO filter of the conv2d it transposes). Its gradients are therefore
 * conv2d (input) and conv2d_backprop_filter (filter). */
static int l_conv2d_transpose(lua_State *L)
{
    lmf_check_nargs(L, "conv2d_transpose", 6);
    int64_t sizes[4];
    MfTensor *x, *w, *out = NULL;
    two_tensors(L, 1, 2, &x, &w);
    sizes_arg(L, 3, "conv2d_transpose", "output_shape", sizes);
    ConvArgs a = conv_args(L, 4, "conv2d_transpose");
    MfStatus st = mf_conv2d_backprop_input(sizes, w, x, &a.attrs, a.nchw, &out);
    if (st != MF_OK)
        mf_err_prefix("conv2d_transpose (the input is conv2d_backprop_input's "
                      "out_backprop)");
    return push_result(L, st, out);
}

void lmf_open_conv(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"conv2d_transpose", l_conv2d_transpose},
        {NULL, NULL},
    };
    if (lua_getfield(L, -1, "nn") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "nn");
    }
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
}
