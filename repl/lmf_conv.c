/* lmf_conv.c — the reader of a conv algorithm option, {algorithm = "auto" |
 * "im2col" | "winograd" | "direct"}, for mf.config{conv_algorithm = ...}
 * (core/ops/conv.h "Algorithms"). conv2d, its backprops and conv2d_transpose
 * are bound from their descriptors by lmf_op.c, which reads the option
 * through the schema. */

#include "core/ops/conv.h"
#include "lmf.h"

int lmf_conv_algorithm_option(lua_State *L, int opt, const char *key, const char *fname)
{
    int type = lua_getfield(L, opt, key);
    const char *name = type == LUA_TNIL ? "auto" : lmf_name_string(L, -1);
    int a = mf_conv_algorithm_parse(name);
    if (a < 0)
        luaL_error(L, "%s: %s must be \"auto\", \"im2col\", \"winograd\" or \"direct\", "
                   "got %s", fname, key,
                   name ? lua_pushfstring(L, "\"%s\"", name)
                        : type == LUA_TSTRING ? lmf_value_text(L, -1) : luaL_typename(L, -1));
    lua_pop(L, 1);
    return a;
}
