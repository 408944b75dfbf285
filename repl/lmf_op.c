/* lmf_op.c — the one schema-driven binder: every op of the table with a Lua
 * name ('lua' in its descriptor, core/op.h), and every composite of
 * mf_composite_table (clip_by_value, nn.l2_loss...), becomes mf.X (or
 * mf.nn.X), and a tensor method t:X(...) unless MF_OP_NO_METHOD or under
 * nn. A call is
 *
 *     X(inputs..., positional attributes... [, {options}])
 *
 * Inputs are tensors, Variables, or Lua numbers/tables (which take the
 * dtype of the first tensor input); a variadic op takes one list. The
 * attributes marked positional follow in declaration order; every
 * attribute may also be given by name in a final options table. Axes are
 * 1-based (negative from the end). Extra arguments, unknown option keys and
 * values of the wrong type are errors naming X; nothing is guessed from the
 * Lua stack. The functions whose face is not an op's (split, tensordot,
 * global_norm...) are bound by hand elsewhere in repl/, some reading an
 * op's schema through lmf_op_attrs. Every value stays in a stack slot for the whole call, so a
 * raised error leaks nothing. */
#include <string.h>

#include "core/ops/compare.h"
#include "lmf.h"

/* One call being parsed. */
typedef struct Call {
    lua_State *L;
    MfOpId op;
    const MfOpDesc *d;
    const char *fname;   /* "max_pool" for "nn.max_pool" */
    int nin;             /* input slots: arity, or 1 list for a variadic op */
    int npos;            /* positional attribute values given */
    int opts;            /* stack index of the options table, 0: none */
    int rank;            /* rank of the first input (axes are relative to it) */
    const MfTensor *first; /* the first tensor input (per-axis lists are checked on it) */
    int given;           /* the number of arguments given */
    int by_tensor;       /* stack index of a symbolic tensor given for a BY_TENSOR list, 0:
                          * none */
    int first_half;      /* the entries of a FIRST_HALF list */
    const char *sig;     /* a hand-written binding's signature (lmf_op_attrs), NULL: the op's */
    bool keyword;        /* the inputs came by name in one table (MF_OP_KEYWORD_INPUTS) */
} Call;

/* Where an attribute's value came from, for messages. */
typedef struct Src {
    int arg;             /* argument number, 0: the options table */
    const char *key;     /* the key used in the options table */
} Src;

const char *lmf_op_fname(const MfOpDesc *d)
{
    const char *dot = strrchr(mf_op_lua_name(d), '.');
    return dot ? dot + 1 : mf_op_lua_name(d);
}

/* Raises about the value of an attribute from 'src': "bad argument #3 to
 * 'X' (keepdims must be a boolean, got number)" or "X: option 'keepdims'
 * must be a boolean, got number". */
static int attr_error(const Call *c, const Src *src, const char *want, int idx)
{
    lua_State *L = c->L;
    /* a number where an integer is due, a string where a name is: the value */
    int ty = lua_type(L, idx);
    bool by_value = (ty == LUA_TNUMBER && strstr(want, "integer")) ||
                    (ty == LUA_TSTRING && (strchr(want, '"') || strstr(want, "name")));
    const char *got = by_value ? lmf_value_text(L, idx) : luaL_typename(L, idx);
    if (src->arg)
        return luaL_error(L, "bad argument #%d to '%s' (%s must be %s, got %s)", src->arg,
                          c->fname, src->key, want, got);
    return luaL_error(L, "%s: option '%s' must be %s, got %s", c->fname, src->key, want, got);
}

/* ---- reading one value -------------------------------------------------- */

static lua_Integer read_int(const Call *c, const Src *src, int idx, const char *want)
{
    int ok = 0;
    lua_Integer v = lua_type(c->L, idx) == LUA_TNUMBER ? lua_tointegerx(c->L, idx, &ok) : 0;
    if (!ok)
        attr_error(c, src, want, idx);
    return v;
}

/* Refuses an array that also holds named fields ({1, keepdims = true}). */
static void refuse_mixed(const Call *c, int idx, const char *name)
{
    lua_State *L = c->L;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1)) {
            const char *k = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "%s: the array given as %s cannot hold options (got '%s'): give "
                       "{%s = {...}, %s = ...}", c->fname, name, k, name, k);
        }
    }
}

/* An integer or an array of at most 'max' integers at 'idx' into 'out'. */
static int read_int_list(const Call *c, const Src *src, int idx, const char *what,
                         int64_t *out, int max)
{
    lua_State *L = c->L;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = read_int(c, src, idx, "an integer");
        return 1;
    }
    if (!lua_istable(L, idx))
        return attr_error(c, src, what, idx);
    refuse_mixed(c, idx, src->key);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n > max)
        luaL_error(L, "%s: %s has %d entries, at most %d are supported", c->fname, src->key,
                   (int)n, max);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        const char *entry = lua_pushfstring(L, "%s entry %d", src->key, i + 1);
        out[i] = lmf_check_integer(L, -2, c->fname, entry);
        lua_pop(L, 2);
    }
    return (int)n;
}

/* Axes (1-based at the face) to 0-based; refuses repeats. */
static int read_axes(const Call *c, const Src *src, int idx, int64_t *out)
{
    int64_t raw[MF_MAX_RANK];
    int n = read_int_list(c, src, idx, "an integer or an array of integers", raw,
                          MF_MAX_RANK);
    for (int i = 0; i < n; i++) {
        out[i] = lmf_axis(c->L, c->fname, (lua_Integer)raw[i], c->rank, 0);
        for (int k = 0; k < i; k++)
            if (out[k] == out[i])
                luaL_error(c->L, "%s: axis %d is listed twice (axes are 1-based)", c->fname,
                           (int)out[i] + 1);
    }
    return n;
}

/* A list of integers, a number, or a concrete 1-D integer tensor (a shape
 * from mf.shape), checked (mf_attr_check_ints: ONE_BASED ones made 0-based). */
static int read_ints(Call *c, const Src *src, const MfAttrDef *def, int idx, int64_t *out)
{
    lua_State *L = c->L;
    int max = (def->flags & MF_ATTR_SHAPE) ? MF_MAX_RANK : 2 * MF_MAX_RANK;
    MfTensor *t = lmf_test_tensor(L, idx);
    int n;
    if (t && (t->node || !t->storage) && (def->flags & MF_ATTR_BY_TENSOR)) {
        c->by_tensor = idx;   /* read when the graph runs: 'entry' takes it as an input */
        return 0;
    }
    if (t) {
        if (t->node || !t->storage)
            luaL_error(L, "%s: %s from a symbolic (graph) tensor is not supported; pass a Lua "
                       "array", c->fname, def->name);
        if (!mf_dtype_is_int(t->dtype) || t->rank > 1 || mf_tensor_numel(t) > max)
            luaL_error(L, "%s: %s as a tensor must be 1-D int32 or int64 with at most %d "
                       "entries, got %s of rank %d", c->fname, def->name, max,
                       mf_dtype_name(t->dtype), t->rank);
        n = (int)mf_tensor_numel(t);
        for (int i = 0; i < n; i++)
            out[i] = mf_tensor_get_int(t, i);
    } else {
        n = read_int_list(c, src, idx, "an integer or an array of integers", out, max);
    }
    lmf_check_status(L, mf_attr_check_ints(c->fname, def, c->first, out, n));
    return n;
}

/* An INTS attribute into its field; a SECOND_HALF one after the entries of
 * the FIRST_HALF one (read before it: declaration order). */
static void read_ints_attr(Call *c, const Src *src, const MfAttrDef *def, int idx, MfAttrs *a)
{
    int64_t *field = MF_ATTR_FIELD(a, def, int64_t);
    int at = (def->flags & MF_ATTR_SECOND_HALF) ? MF_ATTR_COUNT(a, def) : 0;
    int64_t v[2 * MF_MAX_RANK];
    int n = read_ints(c, src, def, idx, v);
    if (at + n > 2 * MF_MAX_RANK)
        luaL_error(c->L, "%s: %s has %d entries, at most %d are supported", c->fname, def->name,
                   n, 2 * MF_MAX_RANK - at);
    memcpy(field + at, v, (size_t)n * sizeof *v);
    MF_ATTR_COUNT(a, def) = at + n;
    if (def->flags & MF_ATTR_FIRST_HALF)
        c->first_half = n;
}

/* {{before, after}, ...} at 'idx' into 'out', flat; returns the number of
 * values (twice the pairs). */
static int read_pairs(const Call *c, const Src *src, int idx, int64_t *out)
{
    lua_State *L = c->L;
    if (!lua_istable(L, idx))
        return attr_error(c, src, "an array of {before, after} pairs", idx);
    refuse_mixed(c, idx, src->key);
    int n = (int)lua_rawlen(L, idx);
    if (n > MF_MAX_RANK)
        luaL_error(L, "%s: %s has %d pairs, at most %d are supported", c->fname, src->key, n,
                   MF_MAX_RANK);
    for (int i = 0; i < n; i++, lua_pop(L, 1)) {
        lua_rawgeti(L, idx, i + 1);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 2)
            luaL_error(L, "%s: %s entry %d must be a {before, after} pair, got %s", c->fname,
                       src->key, i + 1, lua_istable(L, -1)
                           ? lua_pushfstring(L, "%d entries", (int)lua_rawlen(L, -1))
                           : luaL_typename(L, -1));
        for (int k = 0; k < 2; k++, lua_pop(L, 1)) {
            lua_rawgeti(L, -1, k + 1);
            int ok = 0;
            out[2 * i + k] = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
            if (!ok)
                luaL_error(L, "%s: %s entry %d must be a pair of integers, got %s", c->fname,
                           src->key, i + 1, lua_type(L, -1) == LUA_TNUMBER
                                                ? lua_tostring(L, -1) : luaL_typename(L, -1));
        }
    }
    return 2 * n;
}

/* n, {n}, {h, w} or four entries (in the data format's order) into 'out'. */
static void read_window(const Call *c, const Src *src, int idx, const MfAttrs *a, int64_t *out)
{
    int64_t v[4];
    int n = read_int_list(c, src, idx, "a number or an array of 1, 2 or 4 integers", v, 4);
    lmf_check_status(c->L, mf_attr_window(c->fname, src->key, v, n, a->data_format == 1, out));
}

/* A string of the choices of ENUM attribute 'def', in any letter case. */
static int read_enum(const Call *c, const Src *src, const MfAttrDef *def, int idx)
{
    int i = mf_attr_enum_parse(def, lmf_name_string(c->L, idx));
    char want[256];
    return i >= 0 ? i : attr_error(c, src, mf_attr_want(def, want, sizeof want), idx);
}

/* Converts the value at 'idx' for attribute 'def' into 'a'. */
static void read_attr(Call *c, const Src *src, const MfAttrDef *def, int idx, MfAttrs *a)
{
    lua_State *L = c->L;
    MfDType dt = MF_FLOAT32;   /* set below; attr_error raises otherwise */
    char want[256];
    switch (def->type) {
    case MF_ATTR_BOOL:
        if (!lua_isboolean(L, idx))
            attr_error(c, src, "a boolean", idx);
        *MF_ATTR_FIELD(a, def, bool) = lua_toboolean(L, idx);
        break;
    case MF_ATTR_INT:
        *MF_ATTR_FIELD(a, def, int64_t) = read_int(c, src, idx, "an integer");
        break;
    case MF_ATTR_FLOAT:
        if (lua_type(L, idx) != LUA_TNUMBER)
            attr_error(c, src, "a number", idx);
        *MF_ATTR_FIELD(a, def, double) = lua_tonumber(L, idx);
        break;
    case MF_ATTR_DTYPE:
        if (!lmf_name_string(L, idx) || !mf_dtype_parse(lua_tostring(L, idx), &dt))
            attr_error(c, src, mf_attr_want(def, want, sizeof want), idx);
        *MF_ATTR_FIELD(a, def, MfDType) = dt;
        break;
    case MF_ATTR_ENUM:
        *MF_ATTR_FIELD(a, def, int) = read_enum(c, src, def, idx);
        break;
    case MF_ATTR_AXIS: {
        lua_Integer ax = read_int(c, src, idx, "an integer");
        *MF_ATTR_FIELD(a, def, int64_t) = lmf_axis(L, c->fname, ax, c->rank,
                                        (def->flags & MF_ATTR_PAST_END) ? 1 : 0);
        break;
    }
    case MF_ATTR_AXES:
        MF_ATTR_COUNT(a, def) = read_axes(c, src, idx, MF_ATTR_FIELD(a, def, int64_t));
        if (def->flags & MF_ATTR_ALL_AXES)
            a->all_axes = false;
        break;
    case MF_ATTR_INTS:
        read_ints_attr(c, src, def, idx, a);
        break;
    case MF_ATTR_WINDOW:
        read_window(c, src, idx, a, MF_ATTR_FIELD(a, def, int64_t));
        break;
    case MF_ATTR_PAIRS:
        MF_ATTR_COUNT(a, def) = read_pairs(c, src, idx, MF_ATTR_FIELD(a, def, int64_t));
        break;
    }
}

/* A PER_AXIS list left out: 'dflt' for every axis of the first input. */
static void default_per_axis(Call *c, const MfAttrDef *def, MfAttrs *a)
{
    int at = (def->flags & MF_ATTR_SECOND_HALF) ? MF_ATTR_COUNT(a, def) : 0;
    for (int i = 0; i < c->rank; i++)
        MF_ATTR_FIELD(a, def, int64_t)[at + i] = (int64_t)def->dflt;
    MF_ATTR_COUNT(a, def) = at + c->rank;
    if (def->flags & MF_ATTR_FIRST_HALF)
        c->first_half = c->rank;
}

/* An AXIS attribute left at its default: the face's default converted for
 * the input's rank (a scalar keeps 0: the op names the problem). */
static void default_axis(const Call *c, const MfAttrDef *def, MfAttrs *a)
{
    int extra = (def->flags & MF_ATTR_PAST_END) ? 1 : 0;
    if (c->rank + extra == 0)
        return;
    *MF_ATTR_FIELD(a, def, int64_t) =
        lmf_axis(c->L, c->fname, (lua_Integer)def->dflt, c->rank, extra);
}

/* ---- the call ------------------------------------------------------------ */

/* Pushes and returns the signature of 'd' in 'style' (core/op.h). */
static const char *push_signature(lua_State *L, const MfOpDesc *d, MfSigStyle style)
{
    char sig[512];
    mf_op_signature(d, style, sig, sizeof sig);
    return lua_pushstring(L, sig);
}

/* The signature of the function called, for messages. */
static const char *call_signature(const Call *c)
{
    if (!c->sig)
        return push_signature(c->L, c->d, MF_SIG_CALL);
    lua_pushstring(c->L, c->sig);
    return c->sig;
}

/* Whether the argument at 'idx' is the options table: a plain table with
 * no array part. An empty one is a value where a list is due ({} as a
 * shape: a scalar), except for reductions, where {} has always meant "no
 * options" (every axis), and when it has a metatable. */
static bool is_options(lua_State *L, int idx, const MfAttrDef *due)
{
    if (!lua_istable(L, idx) || lua_rawlen(L, idx) > 0)
        return false;
    bool list = due && (due->type == MF_ATTR_INTS || due->type == MF_ATTR_AXES ||
                        due->type == MF_ATTR_PAIRS) && !(due->flags & MF_ATTR_ALL_AXES);
    if (list && lua_getmetatable(L, idx)) { /* a table with an __index: options */
        lua_pop(L, 1);
        return true;
    }
    if (list) {
        lua_pushnil(L);
        if (!lua_next(L, idx))
            return false;
        lua_pop(L, 2);
    }
    return true;
}

/* An options table where an optional input may stand (f(q, k, v, {mask =
 * m}) for f(q, k, v [, mask] [, {options}])) moves after the inputs. */
static int options_in_input_slot(Call *c, int top)
{
    lua_State *L = c->L;
    if (top > c->nin || top <= c->nin - c->d->optional_inputs || top <= 0 ||
        !is_options(L, top, NULL))
        return top;
    lua_settop(L, c->nin);
    lua_pushvalue(L, top);
    lua_pushnil(L);
    lua_replace(L, top);
    return c->nin + 1;
}

/* Splits the arguments: inputs, positional values, options. */
static void split_args(Call *c)
{
    lua_State *L = c->L;
    int top = c->given = lua_gettop(L);
    while (top > c->nin && lua_isnil(L, top))
        top--;
    if (!c->keyword)
        top = options_in_input_slot(c, top);
    lua_settop(L, top > c->nin ? top : c->nin);
    int last = top;
    int np = mf_op_npositional(c->d);
    if (top > c->nin && is_options(L, top, mf_op_positional(c->d, top - c->nin - 1))) {
        c->opts = top;
        last = top - 1;
    }
    c->npos = last > c->nin ? last - c->nin : 0;
    if (c->npos > np) {
        int bad = c->nin + np + 1;
        luaL_error(L, "bad argument #%d to '%s' (no value expected: %s takes %d argument%s%s; "
                   "called as %s)", bad, c->fname, c->fname, c->nin + np,
                   c->nin + np == 1 ? "" : "s", c->d->nattrs ? " and an options table" : "",
                   call_signature(c));
    }
}

/* Refuses option keys outside the schema. */
static void check_keys(const Call *c)
{
    const char *known[2 * 16 + 4 + 1];
    int n = 0;
    for (int i = 0; i < c->nin && i < 4; i++) {   /* the inputs' names */
        if (!c->keyword && i < c->nin - c->d->optional_inputs)
            continue;   /* an optional input may come as an option */
        size_t len;
        const char *name = mf_op_input_name(c->d, i, &len);
        known[n++] = lua_pushlstring(c->L, name, len);   /* the stack keeps it */
    }
    for (int i = 0; i < c->d->nattrs && n < 2 * 16; i++) {
        known[n++] = c->d->attrs[i].name;
        if (c->d->attrs[i].alias)
            known[n++] = c->d->attrs[i].alias;
    }
    known[n] = NULL;
    if (n == 0) {
        lua_pushnil(c->L);
        if (!lua_next(c->L, c->opts))   /* {} (an __index may serve it): no options */
            return;
        luaL_error(c->L, "%s: unknown option '%s' (%s takes no options)", c->fname,
                   luaL_tolstring(c->L, -2, NULL), c->fname);
    }
    lmf_check_options(c->L, c->opts, c->fname, known);
}

/* Pushes the field of the table at 'idx' named as input 'i' ("labels"). */
static int push_input_field_of(const Call *c, int idx, int i)
{
    size_t len;
    const char *name = mf_op_input_name(c->d, i, &len);
    lua_pushlstring(c->L, name, len);
    return lua_gettable(c->L, idx);
}

static int push_input_field(const Call *c, int i)
{
    return push_input_field_of(c, 1, i);
}

/* TensorFlow's keyword form f{labels = ..., logits = ...} of an op with
 * MF_OP_KEYWORD_INPUTS: a lone table naming one of the inputs (read as Lua
 * reads fields) becomes the inputs, each in its slot, followed by itself
 * as the options table. */
static void keyword_inputs(Call *c)
{
    lua_State *L = c->L;
    if (!(c->d->flags & MF_OP_KEYWORD_INPUTS) || !lua_istable(L, 1) || lua_rawlen(L, 1) > 0)
        return;
    int top = lua_gettop(L);
    bool named = false;
    for (int i = 0; i < c->nin; i++)
        named |= push_input_field(c, i) != LUA_TNIL;
    lua_settop(L, top);
    if (!named)
        return;
    while (top > 1 && lua_isnil(L, top))
        top--;
    if (top > 1)
        luaL_error(L, "%s: with %s the options go in that table, got a 2nd argument (%s)",
                   c->fname, push_signature(L, c->d, MF_SIG_KEYWORDS), luaL_typename(L, 2));
    lua_settop(L, 1);
    for (int i = 0; i < c->nin; i++)
        push_input_field(c, i);
    lua_pushvalue(L, 1);   /* the options, after the inputs */
    lua_remove(L, 1);
    c->keyword = true;
}

/* Pushes the option 'key' when it is set. Read as Lua reads a field (an
 * __index supplying defaults works); the inputs are anchored in their stack
 * slots by then, so Lua code run here cannot free them (lmf.h). */
static bool push_option(const Call *c, const char *key)
{
    if (!c->opts || !key)
        return false;
    if (lua_getfield(c->L, c->opts, key) != LUA_TNIL)
        return true;
    lua_pop(c->L, 1);
    return false;
}

/* The argument number of attribute 'def', the 'k'-th positional one (for
 * the message of a missing one). */
static int arg_number(const Call *c, const MfAttrDef *def, int k)
{
    for (int slot = 0; (def->flags & MF_ATTR_ARG) && slot < c->nin; slot++)
        if (mf_op_arg_attr(c->d, slot) == def)
            return slot + 1;
    return c->nin + 1 + (k >= 0 ? k : 0);
}

/* Reads every attribute (data_format before the windows that depend on it). */
static void read_attrs(Call *c, MfAttrs *a)
{
    lua_State *L = c->L;
    char want[256];
    luaL_checkstack(L, 2 * c->d->nattrs + 8, "too many attributes");
    for (int pass = 0; pass < 2; pass++) {
        int k = -1;
        for (int i = 0; i < c->d->nattrs; i++) {
            const MfAttrDef *def = &c->d->attrs[i];
            k += (def->flags & MF_ATTR_POSITIONAL) != 0;
            if ((def->type == MF_ATTR_WINDOW) != (pass == 1))
                continue;
            Src src = {0, def->name};
            int idx = 0;
            if ((def->flags & MF_ATTR_POSITIONAL) && k < c->npos &&
                !lua_isnil(L, c->nin + 1 + k)) {
                idx = c->nin + 1 + k;
                src.arg = idx;
            }
            for (int slot = 0; (def->flags & MF_ATTR_ARG) && slot < c->nin; slot++)
                if (mf_op_arg_attr(c->d, slot) == def && !lua_isnil(L, slot + 1))
                    idx = src.arg = slot + 1;
            bool named = push_option(c, def->name);
            bool aliased = push_option(c, def->alias);
            if (named && aliased)
                luaL_error(L, "%s: give %s or its alias %s (TensorFlow 1.x), not both", c->fname,
                           def->name, def->alias);
            if ((named || aliased) && idx)
                luaL_error(L, "%s: %s given twice (as argument %d and as an option)", c->fname,
                           def->name, idx);
            if (named || aliased) {
                idx = lua_gettop(L);
                src.key = aliased ? def->alias : def->name;
            }
            if (idx)
                read_attr(c, &src, def, idx, a);
            else if (def->flags & MF_ATTR_REQUIRED)
                luaL_error(L, "bad argument #%d to '%s' (%s expected: %s; called as %s)",
                           arg_number(c, def, k), c->fname, def->name,
                           mf_attr_want(def, want, sizeof want), call_signature(c));
            else if (def->type == MF_ATTR_AXIS)
                default_axis(c, def, a);
            else if (def->flags & MF_ATTR_PER_AXIS)
                default_per_axis(c, def, a);
        }
    }
    lmf_check_status(L, mf_attrs_check_per_axis(c->d, c->fname, a, c->rank, c->first_half));
}

/* The list at 'idx' (a variadic op's input) as a C array kept alive by a
 * userdata and a table of converted entries pushed on the stack. */
static int read_list(const Call *c, int idx, MfTensor ***items)
{
    lua_State *L = c->L;
    if (!lua_istable(L, idx))
        luaL_error(L, "bad argument #%d to '%s' (an array of tensors expected, got %s)", idx,
                   c->fname, luaL_typename(L, idx));
    int n = (int)lua_rawlen(L, idx);
    if (n == 0)
        luaL_error(L, "%s: expected a non-empty array of tensors", c->fname);
    MfTensor **v = lua_newuserdatauv(L, (size_t)n * sizeof *v, 0);
    lua_createtable(L, n, 0);
    int like = -1;
    for (int i = 1; i <= n && like < 0; i++, lua_pop(L, 1))
        if (lua_rawgeti(L, idx, i) && lmf_test_tensor(L, -1))
            like = (int)lmf_test_tensor(L, -1)->dtype;
    for (int i = 1; i <= n; i++) {
        int ty = lua_rawgeti(L, idx, i);
        int convertible = ty == LUA_TNUMBER || ty == LUA_TTABLE || ty == LUA_TBOOLEAN;
        if (!lmf_test_tensor(L, -1) && !convertible)
            luaL_error(L, "%s: list entry %d is %s, expected an open mf.Tensor", c->fname, i,
                       ty == LUA_TUSERDATA ? "a closed tensor or userdata" : luaL_typename(L, -1));
        v[i - 1] = lmf_arg_tensor(L, -1, like, c->fname);
        lua_rawseti(L, -2, i);
    }
    *items = v;
    return n;
}

/* Pushes and returns the name of Lua argument 'slot' (0-based). */
static const char *push_input_name(const Call *c, int slot)
{
    size_t len;
    const char *s = mf_op_input_name(c->d, slot, &len);
    return lua_pushlstring(c->L, s ? s : "x", s ? len : 1);
}

/* The input at argument 'idx' holds 1-based positions: replaced with the
 * 0-based ones (mf_positions_zero_based); returns the new tensor (its stack
 * slot owns it). */
static MfTensor *zero_based(const Call *c, int idx, MfTensor *t)
{
    const char *what = push_input_name(c, idx - 1);   /* the stack keeps it */
    MfTensor *out = NULL;
    lmf_push_result(c->L, mf_positions_zero_based(c->fname, what, t, &out), &out);
    lua_replace(c->L, idx);
    return out;
}

/* Lua data at argument 'idx', converted to 't': a table of numbers comes
 * as float32, so in an op's declared dtype group (like_inputs) it takes the
 * float dtype 'like' of the tensor beside it (the cross-entropies' labels
 * as float64 logits). */
static MfTensor *take_float_dtype(const Call *c, int idx, MfTensor *t, int like)
{
    if (!c->d->like_inputs || like < 0 || !mf_dtype_is_float((MfDType)like) ||
        !mf_dtype_is_float(t->dtype) || t->dtype == (MfDType)like)
        return t;
    MfTensor *out = NULL;
    lmf_check_status(c->L, mf_cast(t, (MfDType)like, &out));
    lmf_push_tensor(c->L, out);
    lua_replace(c->L, idx);
    return out;
}

/* The tensor inputs among arguments 1..nin converted in place (Lua data
 * takes the dtype of the first tensor that gives its dtype; indices
 * convert to int64; 1-based positions become 0-based); returns how many
 * were given (optional ones may be left out, from the last). */
static int read_inputs(Call *c, MfTensor **in)
{
    lua_State *L = c->L;
    int like = -1, slot[16], n = 0;
    bool converted = false;
    int given = c->nin;
    for (int i = c->nin - c->d->optional_inputs; i < c->nin && c->opts && !c->keyword; i++) {
        bool positional = !lua_isnil(L, i + 1);
        if (push_input_field_of(c, c->opts, i) == LUA_TNIL)
            lua_pop(L, 1);
        else if (positional)
            luaL_error(L, "%s: %s given twice (as argument %d and as an option)", c->fname,
                       push_input_name(c, i), i + 1);
        else
            lua_replace(L, i + 1);   /* the input given as an option ({mask = m}) */
    }
    while (given > c->nin - c->d->optional_inputs && lua_isnil(L, given))
        given--;
    for (int i = 1; i <= given; i++) {
        if (mf_op_arg_attr(c->d, i - 1))
            continue;
        if (lua_isnoneornil(L, i) && c->keyword)
            luaL_error(L, "%s: missing '%s' (call it as %s%s)", c->fname,
                       push_input_name(c, i - 1), c->fname,
                       push_signature(L, c->d, MF_SIG_KEYWORDS));
        if (lua_isnoneornil(L, i) && (c->d->flags & MF_OP_KEYWORD_INPUTS))
            luaL_error(L, "%s: expected %s or (%s), got %s as argument #%d", c->fname,
                       push_signature(L, c->d, MF_SIG_KEYWORDS), c->d->inputs,
                       i > c->given ? "no value" : "nil", i);
        if (lua_isnoneornil(L, i))
            luaL_error(L, "bad argument #%d to '%s' (mf.Tensor expected, got %s)", i, c->fname,
                       i > c->given ? "no value" : "nil");
        slot[n] = i;
        in[n] = lmf_test_tensor(L, i);   /* its stack slot owns it (lmf.h) */
        if (in[n] && like < 0 && mf_op_input_gives_dtype(c->d, n, i - 1))
            like = (int)in[n]->dtype;
        converted |= !in[n++];
    }
    for (int k = 0; k < n && converted; k++) {
        if (in[k])
            continue;
        bool gives = mf_op_input_gives_dtype(c->d, k, slot[k] - 1);
        if (mf_op_input_is_index(c->d, k, slot[k] - 1))
            in[k] = lmf_arg_index_tensor(L, slot[k], c->fname);
        else
            in[k] = take_float_dtype(c, slot[k],
                                     lmf_arg_tensor(L, slot[k], gives ? like : -1, c->fname),
                                     gives ? like : -1);
    }
    for (int k = 0; k < n; k++)
        if (c->d->one_based_inputs & (1u << k))
            in[k] = zero_based(c, slot[k], in[k]);
    return n;
}

const MfOpDesc *lmf_op_desc(int k)
{
    static int ncomposites = -1;
    if (ncomposites < 0)
        for (ncomposites = 0; mf_composite_table[ncomposites];)
            ncomposites++;
    return k < 0 ? NULL : k < MF_NOPS ? mf_op_table[k]
           : k < MF_NOPS + ncomposites ? mf_composite_table[k - MF_NOPS] : NULL;
}

static int l_op(lua_State *L)
{
    Call c = {.L = L, .op = (MfOpId)lua_tointeger(L, lua_upvalueindex(1))};
    c.d = lmf_op_desc((int)c.op);   /* a composite's entry is called, not its 'op' */
    c.fname = lmf_op_fname(c.d);
    bool variadic = (c.d->flags & MF_OP_VARIADIC) && !c.d->optional_inputs;
    c.nin = mf_op_input_slots(c.d);
    keyword_inputs(&c);
    split_args(&c);
    if (c.opts)
        check_keys(&c);
    MfTensor *fixed[16], **in = fixed; /* room for every fixed arity */
    int n = c.nin;
    lmf_gc_before_op(L);   /* before the inputs' anchor boxes (lmf.h) */
    if (variadic)
        n = read_list(&c, 1, &in);
    else
        n = read_inputs(&c, in);
    c.first = in[c.d->axis_input < n ? c.d->axis_input : 0];
    c.rank = c.first->rank;
    MfAttrs a = mf_attrs_default();
    mf_attrs_apply_defaults(c.d, &a);
    read_attrs(&c, &a);
    if (c.by_tensor)   /* its stack slot (an argument or a pushed option) owns it */
        in[n++] = lmf_test_tensor(L, c.by_tensor);
    MfTensor *outs[MF_MAX_OUTPUTS];
    int nout = 0;
    MfStatus st = c.d->entry ? c.d->entry(n, in, &a, outs, &nout)
                             : mf_op_call(c.op, n, in, &a, outs, &nout);
    lmf_check_status(L, st);
    for (int i = 0; i < nout; i++)
        lmf_push_tensor(L, outs[i]);
    return nout;
}

void lmf_op_attrs(lua_State *L, MfOpId op, const char *fname, const char *sig, int first,
                  const MfTensor *x, MfAttrs *a)
{
    Call c = {.L = L, .op = op, .d = mf_op_table[op], .fname = fname, .nin = first - 1,
              .rank = x->rank, .first = x, .sig = sig};
    split_args(&c);
    if (c.opts)
        check_keys(&c);
    *a = mf_attrs_default();
    mf_attrs_apply_defaults(c.d, a);
    read_attrs(&c, a);
}

/* The table for 'path' ("nn.max_pool": mf.nn, made when missing) pushed;
 * returns the last name. 'mf' is at 'mfi'. */
static const char *push_namespace(lua_State *L, int mfi, const char *path)
{
    const char *dot = strchr(path, '.');
    lua_pushvalue(L, mfi);
    if (!dot)
        return path;
    lua_pushlstring(L, path, (size_t)(dot - path));
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushlstring(L, path, (size_t)(dot - path));
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    lua_remove(L, -2);
    return dot + 1;
}

/* mf.test.ops() -> an array of {name = "MatMul", lua = "matmul", fname = "matmul",
 * nargs = 2, method = true, signature = "...", summary = "...",
 * topic = "linalg", example = true}
 * for every op with a Lua name and every composite ('nargs': inputs plus
 * positional attributes). The op-table walk tests read it. */
static int l_test_ops(lua_State *L)
{
    lmf_check_nargs(L, "ops", 0);
    lua_newtable(L);
    int n = 0;
    for (int i = 0; lmf_op_desc(i); i++) {
        const MfOpDesc *d = lmf_op_desc(i);
        if (!mf_op_lua_name(d))
            continue;
        lua_createtable(L, 0, 8);
        lua_pushstring(L, d->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, mf_op_lua_name(d));
        lua_setfield(L, -2, "lua");
        lua_pushstring(L, lmf_op_fname(d));
        lua_setfield(L, -2, "fname");
        lua_pushinteger(L, mf_op_input_slots(d) + mf_op_npositional(d));
        lua_setfield(L, -2, "nargs");
        lua_pushboolean(L, !(d->flags & MF_OP_NO_METHOD) && !strchr(mf_op_lua_name(d), '.'));
        lua_setfield(L, -2, "method");
        push_signature(L, d, MF_SIG_CALL);
        lua_setfield(L, -2, "signature");
        lua_pushstring(L, d->summary ? d->summary : "");
        lua_setfield(L, -2, "summary");
        lua_pushstring(L, d->topic);
        lua_setfield(L, -2, "topic");
        lua_pushboolean(L, d->example != NULL);
        lua_setfield(L, -2, "example");
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

void lmf_open_ops(lua_State *L, int methods)
{
    methods = lua_absindex(L, methods);
    int mfi = lua_gettop(L);
    for (int i = 0; lmf_op_desc(i); i++) {
        const MfOpDesc *d = lmf_op_desc(i);
        if (!mf_op_lua_name(d))
            continue;
        const char *name = push_namespace(L, mfi, mf_op_lua_name(d));
        lua_pushinteger(L, i);
        lua_pushcclosure(L, l_op, 1);
        if (!(d->flags & MF_OP_NO_METHOD) && name == mf_op_lua_name(d)) {
            lua_pushvalue(L, -1);
            lua_setfield(L, methods, name);
        }
        lua_setfield(L, -2, name);
        lua_pop(L, 1);
    }
    if (lua_getfield(L, mfi, "test") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, mfi, "test");
    }
    lua_pushcfunction(L, l_test_ops);
    lua_setfield(L, -2, "ops");
    lua_pop(L, 1);
}

int lmf_op_help_signature(lua_State *L, int k)
{
    push_signature(L, lmf_op_desc(k), MF_SIG_HELP);
    return 1;
}
