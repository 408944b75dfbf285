/* lmf_ops.c — generic Lua bindings for the ops of the table that take no
 * attributes (MF_OP_SIMPLE): mf.NAME(x) and mf.NAME(x, y), also as tensor
 * methods. Registration loops over the op table, so adding such an op to
 * oplist.h is all it takes to reach Lua. Lua numbers and tables are accepted
 * where tensors are; a number takes the dtype of the tensor beside it. */
#include "lmf.h"

static int l_simple_op(lua_State *L)
{
    MfOpId op = (MfOpId)lua_tointeger(L, lua_upvalueindex(1));
    const MfOpDesc *d = mf_op_table[op];
    MfTensor *in[2] = {NULL, NULL};
    int like = -1;
    int all_tensors = 1;
    for (int i = 0; i < d->arity; i++) {
        in[i] = lmf_test_tensor(L, i + 1);
        if (in[i] && like < 0)
            like = (int)in[i]->dtype;
        all_tensors &= in[i] != NULL;
        if (lua_isnoneornil(L, i + 1))
            return luaL_error(L, "bad argument #%d to '%s' (mf.Tensor expected, got %s)", i + 1,
                              d->api, luaL_typename(L, i + 1));
    }
    for (int i = 0; i < d->arity && !all_tensors; i++)
        in[i] = lmf_to_tensor(L, i + 1, like);
    return lmf_call_op(L, op, d->arity, in, NULL);
}

void lmf_open_ops(lua_State *L, int methods)
{
    methods = lua_absindex(L, methods);
    for (int i = 0; i < MF_NOPS; i++) {
        const MfOpDesc *d = mf_op_table[i];
        /* 'l_simple_op' has room for two inputs */
        if (!(d->flags & MF_OP_SIMPLE) || !d->api || d->arity > 2)
            continue;
        lua_pushinteger(L, i);
        lua_pushcclosure(L, l_simple_op, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, methods, d->api);
        lua_setfield(L, -2, d->api);
    }
}
