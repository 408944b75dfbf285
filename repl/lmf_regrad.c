/* lmf_regrad.c — registered gradients from Lua, as the seed notes teach
 * them: mf.ops() lists the op table, mf.RegisterGradient(name, fn) makes a
 * Lua function a gradient, mf.gradient_override_map(map, fn) makes the ops
 * created while fn runs use it, in eager mode (tapes) and in graphs
 * (mf.gradients) alike. The engine side (core/grad_registry.c) keeps the
 * registry and the override scopes; tapes and graph nodes capture the
 * override when an op is created and 'mf_grad_call' consults it. This file
 * only calls the Lua function.
 *
 * Ownership: a registered gradient is permanent (TensorFlow's registry is
 * too): its Lua function stays in the registry table, its C part is never
 * freed. */
#include <stdio.h>
#include <stdlib.h>

#include "core/grad_registry.h"
#include "core/grad.h"
#include "lmf.h"
#include "lmf_callback.h"
#include "lmf_regrad.h"

#define OPLIST_MT "mf.OpList"

typedef struct LuaGradFn {
    MfGradFn base;
    int ref;            /* the Lua function, in the registry */
    lua_State *main;    /* the state it was registered on */
} LuaGradFn;

typedef struct GradArgs {
    LuaGradFn *fn;
    const MfGradCall *g;
    MfTensor **din;
} GradArgs;

/* Pushes 'n' tensors (retained) as an array. */
static void push_tensor_array(lua_State *L, int n, MfTensor *const *ts)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        mf_tensor_retain(ts[i]);
        lmf_push_tensor(L, ts[i]);
        lua_seti(L, -2, i + 1);
    }
}

/* An axis as the face shows it: 1-based, or negative when not resolved. */
static lua_Integer face_axis(int64_t ax)
{
    return ax >= 0 ? (lua_Integer)ax + 1 : (lua_Integer)ax;
}

static void push_int_list(lua_State *L, const int64_t *v, int n, bool axes)
{
    if (n < 0 || n > 2 * MF_MAX_RANK)
        n = 0;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, axes ? face_axis(v[i]) : (lua_Integer)v[i]);
        lua_seti(L, -2, i + 1);
    }
}

/* Pushes the value of attribute 'def' in 'a' as a Lua value (axes 1-based,
 * enums as their strings); nil for an AXES attribute meaning every axis. */
static void push_attr_value(lua_State *L, const MfAttrDef *def, const MfAttrs *a)
{
    const void *f = MF_ATTR_CFIELD(a, def, char);
    switch (def->type) {
    case MF_ATTR_BOOL: lua_pushboolean(L, *(const bool *)f); return;
    case MF_ATTR_INT: lua_pushinteger(L, (lua_Integer) * (const int64_t *)f); return;
    case MF_ATTR_FLOAT: lua_pushnumber(L, *(const double *)f); return;
    case MF_ATTR_DTYPE: lua_pushstring(L, mf_dtype_name(*(const MfDType *)f)); return;
    case MF_ATTR_ENUM: lua_pushstring(L, mf_attr_choice(def, *(const int *)f)); return;
    case MF_ATTR_AXIS: lua_pushinteger(L, face_axis(*(const int64_t *)f)); return;
    case MF_ATTR_AXES:
        if ((def->flags & MF_ATTR_ALL_AXES) && a->all_axes) {
            lua_pushnil(L);
            return;
        }
        /* fall through */
    case MF_ATTR_INTS:
    case MF_ATTR_PAIRS: {
        int64_t v[2 * MF_MAX_RANK];
        push_int_list(L, v, mf_attr_face_ints(def, a, v), false);
        return;
    }
    case MF_ATTR_WINDOW: push_int_list(L, f, 4, false); return;
    }
    lua_pushnil(L);
}

/* op.attrs of a registered gradient's 'op': {name = value} for every
 * attribute the op's schema declares. */
static void push_attr_values(lua_State *L, MfOpId op, const MfAttrs *a)
{
    const MfOpDesc *d = mf_op_table[op];
    lua_createtable(L, 0, d->nattrs);
    for (int i = 0; a && i < d->nattrs; i++) {
        push_attr_value(L, &d->attrs[i], a);
        lua_setfield(L, -2, d->attrs[i].name);
    }
}

/* mf.ops()[i].attrs: an array of {name, type, positional, required,
 * default, choices} from the op's schema. */
static void push_attr_schema(lua_State *L, const MfOpDesc *d)
{
    lua_createtable(L, d->nattrs, 0);
    for (int i = 0; i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        lua_createtable(L, 0, 6);
        lua_pushstring(L, def->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, mf_attr_type_name(def->type));
        lua_setfield(L, -2, "type");
        lua_pushboolean(L, (def->flags & MF_ATTR_POSITIONAL) != 0);
        lua_setfield(L, -2, "positional");
        lua_pushboolean(L, (def->flags & MF_ATTR_REQUIRED) != 0);
        lua_setfield(L, -2, "required");
        if (!(def->flags & MF_ATTR_REQUIRED)) {
            switch (def->type) {
            case MF_ATTR_BOOL: lua_pushboolean(L, def->dflt != 0); break;
            case MF_ATTR_INT:
            case MF_ATTR_AXIS: lua_pushinteger(L, (lua_Integer)def->dflt); break;
            case MF_ATTR_FLOAT: lua_pushnumber(L, def->dflt); break;
            case MF_ATTR_DTYPE: lua_pushstring(L, mf_dtype_name((MfDType)def->dflt)); break;
            case MF_ATTR_ENUM: lua_pushstring(L, def->choices[(int)def->dflt]); break;
            default: lua_pushnil(L); break;
            }
            lua_setfield(L, -2, "default");
        }
        if (def->type == MF_ATTR_ENUM) {
            lua_newtable(L);
            for (int k = 0; def->choices[k]; k++) {
                lua_pushstring(L, def->choices[k]);
                lua_seti(L, -2, k + 1);
            }
            lua_setfield(L, -2, "choices");
        }
        if (def->alias) {
            lua_pushstring(L, def->alias);
            lua_setfield(L, -2, "alias");
        }
        lua_seti(L, -2, i + 1);
    }
}

/* Pushes the 'op' argument: {type, name, inputs, outputs, attrs}. */
static void push_op(lua_State *L, const GradArgs *a)
{
    const MfOpCall *c = a->g->call;
    const MfOpDesc *d = mf_op_table[c->op];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, d->name);
    lua_setfield(L, -2, "type");
    lua_pushstring(L, d->api);
    lua_setfield(L, -2, "name");
    push_tensor_array(L, c->ninputs, c->inputs);
    lua_setfield(L, -2, "inputs");
    push_tensor_array(L, c->noutputs, a->g->outputs);
    lua_setfield(L, -2, "outputs");
    push_attr_values(L, c->op, c->attrs);
    lua_setfield(L, -2, "attrs");
}

/* Stores the gradient at 'idx' for input 'i' (retained); its shape is
 * checked by the engine ('mf_grad_check_result', in 'mf_grad_call'). */
static void take_gradient(lua_State *L, const GradArgs *a, int idx, int i)
{
    const MfTensor *x = a->g->call->inputs[i];
    if (lua_type(L, idx) != LUA_TNUMBER && !lmf_test_tensor(L, idx))
        luaL_error(L, "gradient '%s': result %d must be a tensor or nil, got %s",
                   a->fn->base.name, i + 1, luaL_typename(L, idx));
    MfTensor *dx = lmf_arg_tensor(L, idx, (int)x->dtype, "RegisterGradient");
    mf_tensor_retain(dx);
    a->din[i] = dx;
}

/* Runs under lmf_pcall: fn(op, dy...) -> dx... */
static int call_gradient(lua_State *L)
{
    const GradArgs *a = lua_touserdata(L, 1);
    const MfGradCall *g = a->g;
    int nin = g->call->ninputs, nout = g->call->noutputs;
    luaL_checkstack(L, nin + nout + 4, "RegisterGradient");
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->fn->ref);
    push_op(L, a);
    for (int j = 0; j < nout; j++) {
        if (g->doutputs[j]) {
            mf_tensor_retain(g->doutputs[j]);
            lmf_push_tensor(L, g->doutputs[j]);
        } else {
            lua_pushnil(L);
        }
    }
    int base = lua_gettop(L) - nout - 1;
    lua_call(L, 1 + nout, nin);
    for (int i = 0; i < nin; i++)
        if (!lua_isnil(L, base + i) && mf_grad_needs(g, i))
            take_gradient(L, a, base + i, i);
    return 0;
}

/* The MfGradFn 'backward': calls the Lua function on the state computing
 * the gradient (a tape:gradient or mf.gradients call), else on 'main'. */
static MfStatus lua_backward(MfGradFn *f, const MfGradCall *g, MfTensor **din)
{
    LuaGradFn *lf = (LuaGradFn *)f;
    lua_State *L = lmf_set_grad_state(NULL);   /* read it: set it back at once */
    lmf_set_grad_state(L);
    if (!L)
        L = lf->main;
    GradArgs a = {lf, g, din};
    lua_pushcfunction(L, call_gradient);
    lua_pushlightuserdata(L, &a);
    if (lmf_pcall(L, 1, 0) == LUA_OK)
        return MF_OK;
    const char *msg = lua_tostring(L, -1);
    MfStatus st = mf_err_set(MF_EARG, "gradient '%s' (registered for %s): %s", f->name,
                             mf_op_table[g->call->op]->name,
                             msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return st;
}

/* mf.RegisterGradient(name, fn): fn(op, dy...) -> dx... */
static int l_register_gradient(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    LuaGradFn *f = malloc(sizeof *f);
    if (!f)
        return luaL_error(L, "RegisterGradient: out of memory");
    lua_pushvalue(L, 2);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    f->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    f->base.backward = lua_backward;
    if (mf_grad_register(name, &f->base) != MF_OK) {
        luaL_unref(L, LUA_REGISTRYINDEX, f->ref);
        free(f);
        return lmf_raise(L);
    }
    return 0;
}

/* Opens one override scope per entry of the map at 1; returns the first
 * mark (ending it ends them all). */
static int open_scopes(lua_State *L)
{
    int first = -1;
    for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING) {
            mf_grad_override_end(first);
            luaL_error(L, "gradient_override_map: the map takes op types to gradient names, "
                       "e.g. {Square = \"MyGrad\"}, got a %s key and a %s value",
                       luaL_typename(L, -2), luaL_typename(L, -1));
        }
        int mark = mf_grad_override_begin_named(lua_tostring(L, -2), lua_tostring(L, -1));
        if (mark < 0) {
            mf_grad_override_end(first);
            lmf_raise(L);
        }
        first = first < 0 ? mark : first;
    }
    return first;
}

/* mf.gradient_override_map(map, fn) -> fn's results */
static int l_gradient_override_map(lua_State *L)
{
    lmf_check_nargs(L, "gradient_override_map", 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    int first = open_scopes(L);
    int st = lmf_pcall(L, 0, LUA_MULTRET);
    mf_grad_override_end(first);
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - 1;
}

/* mf.ops() -> array of {name, api, inputs, attrs, differentiable} */
static int l_ops(lua_State *L)
{
    lmf_check_nargs(L, "ops", 0);
    lua_createtable(L, MF_NOPS, 0);
    for (int i = 0; i < MF_NOPS; i++) {
        const MfOpDesc *d = mf_op_table[i];
        lua_createtable(L, 0, 6);
        lua_pushstring(L, d->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, d->api);
        lua_setfield(L, -2, "api");
        lua_pushinteger(L, d->arity);
        lua_setfield(L, -2, "inputs");
        push_attr_schema(L, d);
        lua_setfield(L, -2, "attrs");
        lua_pushboolean(L, mf_op_differentiable((MfOpId)i));
        lua_setfield(L, -2, "differentiable");
        lua_pushboolean(L, (d->flags & MF_OP_VARIADIC) != 0);
        lua_setfield(L, -2, "variadic");
        lua_seti(L, -2, i + 1);
    }
    luaL_setmetatable(L, OPLIST_MT);
    return 1;
}

/* print(mf.ops()): one row per op. */
static int oplist_tostring(lua_State *L)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (!lua_istable(L, 1))
        return luaL_error(L, "OpList: __tostring expects the list mf.ops() made, got %s",
                          luaL_typename(L, 1));
    luaL_addstring(&b, "op type                     api                         inputs  gradient");
    lua_Integer n = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 1, i);
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_getfield(L, -1, "name");
        lua_getfield(L, -2, "api");
        lua_getfield(L, -3, "inputs");
        lua_getfield(L, -4, "differentiable");
        lua_getfield(L, -5, "variadic");
        char row[160];
        snprintf(row, sizeof row, "\n%-27s %-27s %6d%s  %s", luaL_optstring(L, -5, "?"),
                 luaL_optstring(L, -4, "?"), (int)lua_tointeger(L, -3),
                 lua_toboolean(L, -1) ? "+" : " ", lua_toboolean(L, -2) ? "yes" : "no");
        lua_pop(L, 6);
        luaL_addstring(&b, row);
    }
    lua_pushfstring(L, "\n%I ops (+: or more inputs); registered gradients: %d "
                    "(mf.RegisterGradient)", n, mf_grad_count());
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    return 1;
}

void lmf_open_regrad(lua_State *L)
{
    luaL_newmetatable(L, OPLIST_MT);
    lua_pushcfunction(L, oplist_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    static const luaL_Reg funcs[] = {{"ops", l_ops}, {"RegisterGradient", l_register_gradient},
                                     {"gradient_override_map", l_gradient_override_map},
                                     {NULL, NULL}};
    luaL_setfuncs(L, funcs, 0);
}
