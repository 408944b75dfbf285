/* lmf_module.c — builds the 'mf' table: each binding file registers its
 * functions, and the tensor methods table is shared with the metatable. */
#include "lmf.h"
#include "lmf_print.h"

int luaopen_moonflow(lua_State *L)
{
    lua_newtable(L);           /* mf */
    lua_newtable(L);           /* tensor methods */
    int methods = lua_gettop(L);
    lua_pushvalue(L, -2);      /* mf on top for the openers */
    lmf_open_tensor(L, methods);
    lmf_open_ops(L, methods);
    lmf_open_print(L);
    lmf_open_compare(L, methods);
    lmf_open_reduce(L, methods);
    lmf_open_linalg(L, methods);
    lmf_open_shape(L, methods);
    lmf_open_create(L, methods);
    lmf_open_repl(L);
    lua_pop(L, 2);             /* mf copy and methods */
    return 1;
}
