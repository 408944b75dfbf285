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

#include "core/ops/conv.h"
#include "lmf.h"

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
    int64_t sizes[4];
    MfTensor *x, *w, *out = NULL;
    MfAttrs a;
    two_tensors(L, 1, 2, &x, &w);
    sizes_arg(L, 3, "conv2d_transpose", "output_shape", sizes);
    /* conv2d's attributes (strides, padding, then options) through the binder */
    lmf_op_attrs(L, MF_OP_CONV2D, "conv2d_transpose", "conv2d_transpose(input, filter, "
                 "output_shape, strides, padding [, {options}])", 4, x, &a);
    MfAttrs at = a;
    at.data_format = 0;
    MfStatus st = mf_conv2d_backprop_input(sizes, w, x, &at, a.data_format == 1, &out);
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
