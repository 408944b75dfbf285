/* lmf_fused.c — the fused ops of the layers, in mf.nn:
 *   fused_batch_norm(x, scale, offset [, {epsilon}]) -> y, batch_mean,
 *     batch_variance (core/ops/batchnorm.c; channels on the last axis);
 *   lstm_cell(z [, c_prev]) -> h, c (core/ops/lstm_cell.c).
 * The thinnest bindings, until the schema-driven binder (repl/lmf_op.c)
 * binds them from their descriptors. */
#include "lmf.h"

static int l_fused_batch_norm(lua_State *L)
{
    static const char *const keys[] = {"epsilon", NULL};
    const char *fname = "fused_batch_norm";
    lmf_check_nargs(L, fname, 4);
    if (!lua_isnoneornil(L, 4) && !lua_istable(L, 4))
        lmf_arg_error(L, 4, fname, "options table {epsilon =}");
    lmf_check_options(L, 4, fname, keys);
    MfAttrs a = mf_attrs_default();
    a.scalar[0] = lua_istable(L, 4) ? lmf_opt_number(L, 4, "epsilon", 1e-3) : 1e-3;
    MfTensor *in[3];
    for (int i = 0; i < 3; i++)
        in[i] = lmf_check_tensor(L, i + 1);
    return lmf_call_op(L, MF_OP_FUSED_BATCH_NORM, 3, in, &a);
}

static int l_lstm_cell(lua_State *L)
{
    int n = lua_gettop(L);
    if (n < 1 || n > 2)
        return luaL_error(L, "lstm_cell: expected (z [, c_prev]), got %d arguments", n);
    MfTensor *in[2];
    for (int i = 0; i < n; i++)
        in[i] = lmf_check_tensor(L, i + 1);
    MfAttrs a = mf_attrs_default();
    return lmf_call_op(L, MF_OP_LSTM_CELL, n, in, &a);
}

void lmf_open_fused(lua_State *L)
{
    lua_getfield(L, -1, "nn");
    lua_pushcfunction(L, l_fused_batch_norm);
    lua_setfield(L, -2, "fused_batch_norm");
    lua_pushcfunction(L, l_lstm_cell);
    lua_setfield(L, -2, "lstm_cell");
    lua_pop(L, 1);
}
