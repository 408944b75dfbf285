/* lmf_tensor.c — the "mf.Tensor" userdata: boxing, argument conversion,
 * properties, indexing and operators. See lmf.h for the ownership rules. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/shape.h"
#include "eager/eager.h"
#include "graph/graph.h"
#include "lmf.h"
#include "lmf_strict.h"
#include "lmf_print.h"
#include "interrupt.h"

/* ---- boxing ------------------------------------------------------------ */

/* A dead tensor's buffer waits for a full collection, which runs when the
 * engine says one is due (core/alloc.c says when and why). */
void lmf_gc_pressure(lua_State *L)
{
    if (!mf_alloc_collect_due())
        return;
    lua_gc(L, LUA_GCCOLLECT);
    mf_alloc_collected();
}

/* The engine allocator's reclaim hook (mf_alloc_set_reclaim): when the
 * system refuses memory, a full collection frees the tensors Lua no longer
 * holds (boxes of dropped tensors wait for a collection that the stale GC
 * debt would not start), and the allocation is retried. Finalizers run
 * inside an engine call then, so one that calls an op raises (a warning:
 * errors in finalizers do not propagate) instead of re-entering it. */
static lua_State *reclaim_L;   /* the main thread: it outlives every coroutine */
static bool reclaiming;

static void reclaim_hook(void)
{
    if (!reclaim_L)
        return;
    reclaiming = true;
    lua_gc(reclaim_L, LUA_GCCOLLECT);
    reclaiming = false;
    mf_alloc_collected();
}

static void check_not_reclaiming(lua_State *L)
{
    if (reclaiming)
        luaL_error(L, "moonflow: a finalizer cannot run tensor ops while memory is being "
                   "reclaimed (an allocation failed and a collection is freeing memory)");
}

void lmf_reclaim(lua_State *L)
{
    (void)L;
    mf_alloc_trim();
    reclaim_hook();
    mf_alloc_trim();
}

/* The metatable is also kept in the registry under this address: a pointer
 * lookup is much cheaper than luaL_checkudata's lookup by name, and tensors
 * are checked on every op. */
static const char metatable_key = 0;

/* A new box holding 't' (possibly NULL: filled in by the caller after the
 * allocation, which may run finalizers), on top of the stack. */
static LmfBox *push_box(lua_State *L, MfTensor *t)
{
    LmfBox *box = lua_newuserdatauv(L, sizeof *box, 0);
    box->t = t;
    box->tag = LMF_TENSOR_TAG;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &metatable_key);
    lua_setmetatable(L, -2);
    return box;
}

void lmf_push_tensor(lua_State *L, MfTensor *t)
{
    /* a box owns its tensor, so it must not hold a graph's weak tensor (a
     * captured variable's read), which dies with the graph */
    if (reclaiming) {
        mf_tensor_release(t);
        check_not_reclaiming(L);
    }
    if (t->node && !(t = mf_graph_strengthen(t)))
        lmf_raise(L);
    push_box(L, t);
    if (t->node)
        lmf_graph_anchor(L, -1, mf_tensor_graph(t));
    lmf_gc_pressure(L);
}

/* The box at 'idx' when it is a tensor userdata (open or closed), else NULL. */
static LmfBox *test_box(lua_State *L, int idx)
{
    /* The metatable seen last time: comparing addresses skips a registry
     * lookup on the hot path; a miss falls back to the registry (several
     * Lua states each have their own metatable). */
    static const void *known_mt;
    LmfBox *box = lua_touserdata(L, idx);
    /* the metatable alone can be forged (debug.setmetatable): the size and
     * the tag say the block really is a box */
    if (!box || lua_rawlen(L, idx) != sizeof *box || box->tag != LMF_TENSOR_TAG ||
        !lua_getmetatable(L, idx))
        return NULL;
    if (known_mt && lua_topointer(L, -1) == known_mt) {
        lua_pop(L, 1);
        return box;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &metatable_key);
    int same = lua_rawequal(L, -1, -2);
    if (same)
        known_mt = lua_topointer(L, -1);
    lua_pop(L, 2);
    return same ? box : NULL;
}

/* Operand lifetime. A binding may run Lua code after it took an argument's
 * tensor: an options table's __index, a finalizer run by an allocation, a
 * callback. That code may assign or close the Variable, or close the box
 * (a <close> variable), which would free the tensor the binding holds. So
 * the helpers give the binding a tensor that its own box owns: a Variable's
 * value (as read now) and an open box's tensor are retained by a new box
 * that replaces the argument's stack slot, kept until the call returns or
 * raises. A converted number or table is owned by its box the same way. */
static MfTensor *anchor(lua_State *L, int idx, LmfBox *box, MfTensor *t)
{
    mf_tensor_retain(t);
    box->t = t;
    if (t->node && !(box->t = mf_graph_strengthen(t)))
        lmf_raise(L);
    lua_replace(L, idx);
    return box->t;
}

/* The tensor of the box 'arg' at 'idx', anchored (see above), or NULL when
 * it is closed. The tensor is read after the new box is made: that
 * allocation may run a finalizer that closes 'arg' (found by make fuzz-api:
 * a tensor read before it was freed under the call). */
static MfTensor *anchor_box(lua_State *L, int idx, LmfBox *arg)
{
    idx = lua_absindex(L, idx);
    LmfBox *box = push_box(L, NULL);
    if (!arg->t) {
        lua_pop(L, 1);
        return NULL;
    }
    return anchor(L, idx, box, arg->t);
}

/* A Variable (checked only after the tensor test fails, so tensors keep the
 * fast path) stands for its current value, anchored. */
MfTensor *lmf_test_tensor(lua_State *L, int idx)
{
    LmfBox *box = test_box(L, idx);
    if (box)
        return anchor_box(L, idx, box);
    MfVariable *v = lmf_test_variable(L, idx);
    if (!v)
        return NULL;
    idx = lua_absindex(L, idx);
    box = push_box(L, NULL);     /* first: the allocation may run finalizers */
    MfTensor *t = mf_variable_read(v);
    if (!t) {
        lua_pop(L, 1);
        return NULL;
    }
    return anchor(L, idx, box, t);
}

const char *lmf_check_path(lua_State *L, int idx, const char *fname)
{
    size_t len;
    const char *s = luaL_checklstring(L, idx, &len);
    if (strlen(s) != len)
        luaL_error(L, "%s: the path holds a NUL byte (\\0) at byte %d; a file name cannot",
                   fname, (int)strlen(s) + 1);
    if (len == 0)
        luaL_error(L, "%s: expected a path, got an empty string", fname);
    return s;
}

bool lmf_is_tensor(lua_State *L, int idx)
{
    LmfBox *box = test_box(L, idx);
    if (box)
        return box->t != NULL;
    MfVariable *v = lmf_test_variable(L, idx);
    return v && v->value;
}

void lmf_keep(lua_State *L, int holder)
{
    holder = lua_absindex(L, holder);
    if (lua_getiuservalue(L, holder, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, holder, 1);
    }
    lua_insert(L, -2);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
}

MfTensor *lmf_check_tensor(lua_State *L, int idx)
{
    LmfBox *box = test_box(L, idx);
    MfTensor *t = box ? anchor_box(L, idx, box) : NULL;
    if (box && !t)
        luaL_argerror(L, idx, "tensor is closed");
    if (box)
        return t;
    idx = lua_absindex(L, idx);
    box = push_box(L, NULL);
    return anchor(L, idx, box, lmf_check_variable_value(L, idx));
}

void lmf_push_engine_error(lua_State *L)
{
    /* an engine error while Ctrl-C is pending (a kernel stopped for it):
     * this error is the interrupt, so the hook must not raise it again
     * once a pcall has caught this one */
    lmf_interrupt_taken();
    lua_pushstring(L, mf_err_msg());
    mf_err_clear();
}

int lmf_raise(lua_State *L)
{
    /* "script.lua:12: " first, as luaL_error writes it: the line of the
     * caller (for an operator, the line with the operator) */
    luaL_where(L, 1);
    lmf_push_engine_error(L);
    lua_concat(L, 2);
    return lua_error(L);
}

void lmf_check_written(lua_State *L, MfStatus st)
{
    lmf_check_status(L, st);
    lmf_interrupt_after_return();
}

void lmf_check_status(lua_State *L, MfStatus st)
{
    if (st != MF_OK)
        lmf_raise(L);
}

int lmf_call_op(lua_State *L, MfOpId op, int ninputs, MfTensor *const *inputs,
                const MfAttrs *attrs)
{
    MfTensor *outs[MF_MAX_OUTPUTS];
    int n = 0;
    check_not_reclaiming(L);
    MfStatus st = mf_op_call(op, ninputs, inputs, attrs, outs, &n);
    if (st == MF_ENOMEM) {   /* collect what Lua no longer holds, then once more */
        mf_err_clear();
        lmf_reclaim(L);
        n = 0;
        st = mf_op_call(op, ninputs, inputs, attrs, outs, &n);
    }
    lmf_check_status(L, st);
    for (int i = 0; i < n; i++)
        lmf_push_tensor(L, outs[i]);
    return n;
}

/* ---- converting Lua data ------------------------------------------------ */

/* Finds the shape of a nested table by following first elements. */
static int data_shape(lua_State *L, int idx, int64_t *shape, int *has_bool, const char *fname)
{
    int rank = 0;
    lua_pushvalue(L, idx);
    while (lua_istable(L, -1)) {
        if (rank == MF_MAX_RANK)
            luaL_error(L, "%s: nested deeper than %d levels", fname, MF_MAX_RANK);
        shape[rank++] = (int64_t)lua_rawlen(L, -1);
        if (lua_rawlen(L, -1) == 0)
            break;
        lua_rawgeti(L, -1, 1);
        lua_remove(L, -2);
    }
    *has_bool = lua_isboolean(L, -1);
    lua_pop(L, 1);
    return rank;
}

typedef struct Filler {
    const char *fname;  /* the function called, for messages */
    MfTensor *t;
    int64_t next;
    int64_t path[MF_MAX_RANK];
} Filler;

static void fill_error(lua_State *L, Filler *f, int depth, const char *what)
{
    char where[200] = "";
    int n = 0;
    for (int i = 0; i < depth && n < (int)sizeof where; i++)
        n += snprintf(where + n, sizeof where - (size_t)n, "[%lld]", (long long)f->path[i]);
    mf_tensor_release(f->t);
    f->t = NULL;
    if (depth == 0)   /* a single value: no position to name */
        luaL_error(L, "%s: %s", f->fname, what);
    luaL_error(L, "%s: %s at data%s", f->fname, what, where);
}

/* Whether the Lua number at 'idx' converts to 'dt' without overflow. */
static bool number_fits(lua_State *L, int idx, MfDType dt)
{
    return lua_isinteger(L, idx) ? mf_dtype_fits_int(dt, lua_tointeger(L, idx))
                                 : mf_dtype_fits(dt, lua_tonumber(L, idx));
}

/* A Lua float with a fraction meeting an integer tensor: truncating it
 * (int32 tensor * 2.5 multiplying by 2) would be a silent wrong answer. */
static bool is_fraction_for_integers(lua_State *L, int idx, MfDType dt)
{
    if (lua_isinteger(L, idx) || dt == MF_BOOL || mf_dtype_is_float(dt))
        return false;
    lua_Number x = lua_tonumber(L, idx);
    return x != floor(x);
}

static void put_value(lua_State *L, Filler *f, int depth)
{
    MfTensor *t = f->t;
    double v = 0;
    if (lua_isboolean(L, -1) && t->dtype == MF_BOOL)
        v = lua_toboolean(L, -1);
    else if (lua_type(L, -1) == LUA_TNUMBER && t->dtype != MF_BOOL && !number_fits(L, -1, t->dtype))
        fill_error(L, f, depth, lua_pushfstring(L, "%s does not fit %s",
                                                lua_tostring(L, -1), mf_dtype_name(t->dtype)));
    else if (lua_type(L, -1) == LUA_TNUMBER && t->dtype != MF_BOOL)
        v = lua_tonumber(L, -1);
    else
        fill_error(L, f, depth, lua_pushfstring(L, "expected a %s (got %s)",
                                                t->dtype == MF_BOOL ? "boolean" : "number",
                                                luaL_typename(L, -1)));
    if (t->dtype == MF_INT64 && lua_isinteger(L, -1))
        mf_tensor_set_int(t, f->next++, lua_tointeger(L, -1));
    else
        mf_tensor_set(t, f->next++, v);
}

/* Copies the nested table on top of the stack into f->t, checking it is
 * rectangular. Raises (after releasing f->t) when it is not. */
static void fill(lua_State *L, Filler *f, int depth)
{
    MfTensor *t = f->t;
    if (depth == t->rank) {
        put_value(L, f, depth);
        return;
    }
    if (!lua_istable(L, -1))
        fill_error(L, f, depth, lua_pushfstring(L, "ragged data (expected a table, got %s)",
                                                luaL_typename(L, -1)));
    if ((int64_t)lua_rawlen(L, -1) != t->shape[depth]) {
        char msg[96];
        snprintf(msg, sizeof msg, "ragged data (expected %lld elements, got %lld)",
                 (long long)t->shape[depth], (long long)lua_rawlen(L, -1));
        fill_error(L, f, depth, msg);
    }
    for (int64_t i = 1; i <= t->shape[depth]; i++) {
        f->path[depth] = i;
        lua_rawgeti(L, -1, i);
        fill(L, f, depth + 1);
        lua_pop(L, 1);
    }
}

/* A new tensor from the number, boolean or nested table at 'idx'. */
static MfTensor *tensor_from_lua(lua_State *L, int idx, int dtype, const char *fname)
{
    int64_t shape[MF_MAX_RANK];
    int has_bool = 0;
    int t = lua_type(L, idx);
    if (t != LUA_TNUMBER && t != LUA_TBOOLEAN && t != LUA_TTABLE) {
        if (idx < 0)   /* a list entry on top of the stack */
            luaL_error(L, "%s: mf.Tensor, number, boolean or table expected, got %s", fname,
                       luaL_typename(L, idx));
        luaL_error(L, "bad argument #%d to '%s' (mf.Tensor, number, boolean or table expected, "
                   "got %s)", idx, fname, luaL_typename(L, idx));
    }
    if (t == LUA_TTABLE && lua_rawlen(L, idx) == 0) {   /* {} is empty data; {k = v} none */
        lua_pushnil(L);
        if (lua_next(L, idx)) {
            lua_pop(L, 1);
            luaL_error(L, "%s: expected data (a number, a boolean or an array), got a table "
                       "with the key '%s' (an options table where data is due?)", fname,
                       lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                      : luaL_typename(L, -1));
        }
    }
    int rank = data_shape(L, idx, shape, &has_bool, fname);
    MfDType dt = dtype >= 0 ? (MfDType)dtype : has_bool ? MF_BOOL : MF_FLOAT32;
    Filler f = {.fname = fname, .t = mf_tensor_new(dt, rank, shape), .next = 0};
    if (!f.t)
        lmf_raise(L);
    lua_pushvalue(L, idx);
    fill(L, &f, 0);
    lua_pop(L, 1);
    return f.t;
}

MfTensor *lmf_arg_tensor(lua_State *L, int idx, int like, const char *fname)
{
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t)
        return t;
    if (test_box(L, idx))   /* a closed tensor box */
        luaL_error(L, "bad argument #%d to '%s' (tensor is closed)", idx, fname);
    if (lmf_is_closed_variable(L, idx))
        luaL_error(L, "bad argument #%d to '%s' (variable is closed)", idx, fname);
    if (lua_isuserdata(L, idx)) {   /* another type */
        const char *type = luaL_getmetafield(L, idx, "__name") == LUA_TSTRING
                               ? lua_tostring(L, -1) : luaL_typename(L, idx);
        luaL_error(L, "bad argument #%d to '%s' (mf.Tensor expected, got %s)", idx, fname, type);
    }
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER) {
        MfDType dt = like >= 0 ? (MfDType)like : MF_FLOAT32;
        if (!number_fits(L, idx, dt))   /* as PyTorch: no silent overflow */
            luaL_error(L, "%s: the number %s does not fit %s (the other operand's dtype)",
                       fname, lua_tostring(L, idx), mf_dtype_name(dt));
        if (is_fraction_for_integers(L, idx, dt))   /* as TensorFlow: 2.5 is no int32 */
            luaL_error(L, "%s: the number %s is not an integer but the other operand is %s "
                       "(convert the tensor with mf.cast)", fname, lua_tostring(L, idx),
                       mf_dtype_name(dt));
        t = mf_tensor_scalar(dt, lua_tonumber(L, idx));
        if (dt == MF_INT64 && t && lua_isinteger(L, idx))
            mf_tensor_set_int(t, 0, lua_tointeger(L, idx));
        if (!t)
            lmf_raise(L);
    } else {
        t = tensor_from_lua(L, idx, -1, fname);
    }
    lmf_push_tensor(L, t);
    lua_replace(L, idx);
    return t;
}

MfTensor *lmf_push_data(lua_State *L, int idx, int dt, const char *fname)
{
    MfTensor *t = tensor_from_lua(L, idx, dt, fname);
    lmf_push_tensor(L, t);
    return t;
}

/* The Lua data at 'idx' replaced by its tensor of dtype 'dt' (mf.tensor's rules). */
static MfTensor *replace_by_data(lua_State *L, int idx, int dt, const char *fname)
{
    idx = lua_absindex(L, idx);
    MfTensor *t = lmf_push_data(L, idx, dt, fname);
    lua_replace(L, idx);
    return t;
}

MfTensor *lmf_arg_index_tensor(lua_State *L, int idx, const char *fname)
{
    if (lmf_test_tensor(L, idx) || lua_isuserdata(L, idx) || lua_type(L, idx) == LUA_TNUMBER)
        return lmf_arg_tensor(L, idx, MF_INT64, fname);
    return replace_by_data(L, idx, MF_INT64, fname);
}

MfTensor *lmf_arg_data(lua_State *L, int idx, int dt, const char *fname)
{
    if (!lua_istable(L, idx))
        return lmf_arg_tensor(L, idx, dt, fname);
    return replace_by_data(L, idx, dt, fname);
}

/* mf.tensor(data [, dtype]) */
static int l_tensor(lua_State *L)
{
    lmf_check_nargs(L, "tensor", 2);
    int dt = lua_isnoneornil(L, 2) ? -1 : (int)lmf_opt_dtype(L, 2, MF_FLOAT32);
    MfTensor *src = lmf_test_tensor(L, 1);
    if (src) {
        if (!src->storage)
            return luaL_error(L, "tensor: a symbolic (graph) tensor has no values yet; run it "
                              "in a Session");
        MfTensor *c = mf_tensor_clone(src);
        if (!c)
            return lmf_raise(L);
        lmf_push_tensor(L, c);
        if (dt >= 0 && dt != (int)src->dtype)
            luaL_error(L, "tensor: use mf.cast to change the dtype of a tensor");
        return 1;
    }
    lmf_push_data(L, 1, dt, "tensor");
    return 1;
}

/* ---- options and shapes --------------------------------------------------- */

const char *lmf_name_string(lua_State *L, int idx)
{
    size_t n;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
    return s && strlen(s) == n ? s : NULL;
}

const char *lmf_value_text(lua_State *L, int idx)
{
    size_t n;
    const char *s = luaL_tolstring(L, idx, &n);
    if (strlen(s) == n)
        return s;
    luaL_Buffer b;
    luaL_buffinit(L, &b);   /* "SAME\0x": the NUL shown, not where the text stops */
    for (size_t i = 0; i < n; i++) {
        if (s[i])
            luaL_addchar(&b, s[i]);
        else
            luaL_addstring(&b, "\\0");
    }
    luaL_pushresult(&b);
    lua_remove(L, -2);
    return lua_tostring(L, -1);
}

MfDType lmf_opt_dtype(lua_State *L, int idx, MfDType dflt)
{
    if (lua_isnoneornil(L, idx))
        return dflt;
    MfDType dt;
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_typeerror(L, idx,
                       "dtype name (\"float32\", \"float64\", \"int32\", \"int64\", \"bool\")");
    const char *name = lmf_name_string(L, idx);
    if (!name || !mf_dtype_parse(name, &dt))
        luaL_argerror(L, idx, lua_pushfstring(L, "unknown dtype '%s' (expected float32, "
                                              "float64, int32, int64, bool or uint8)",
                                              lmf_value_text(L, idx)));
    return dt;
}

int lmf_opt_dtype_field(lua_State *L, int idx, const char *fname)
{
    if (!lmf_opt_field(L, idx, "dtype"))
        return -1;
    const char *name = lmf_name_string(L, -1);
    MfDType dt;
    if (!name || !mf_dtype_parse(name, &dt))
        return luaL_error(L, "%s: option 'dtype' must be a dtype name (float32, float64, int32, "
                          "int64, bool or uint8), got %s", fname, lmf_value_text(L, -1));
    lua_pop(L, 1);
    return (int)dt;
}

/* Shape errors name the function explicitly (fname), not by looking at the
 * Lua stack: a callable object or a field such as st.fn would be named wrongly. */
static int64_t shape_dim(lua_State *L, int idx, const char *fname, int i, int allow_unknown)
{
    const char *what = lua_pushfstring(L, "shape entry %d", i);
    int64_t d = lmf_check_integer(L, -2, fname, what);
    lua_pop(L, 1);
    if (d < 0 && !(allow_unknown && d == -1))
        luaL_error(L, "bad argument #%d to '%s' (shape entry %d must be >= 0, got %I)", idx,
                   fname, i, (lua_Integer)d);
    return d;
}

/* A shape is an array and nothing else: {mean = 5} or {2, dtype = "int32"}
 * (options put inside the shape) would otherwise be read as () or (2,)
 * and the rest ignored without a word. */
static void check_no_keyed_entries(lua_State *L, int idx, const char *fname, int rank)
{
    int t = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > rank) {
            const char *key = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "bad argument #%d to '%s' (shape (array of integers) expected, got a "
                       "table with key '%s')", idx, fname, key);
        }
    }
}

int lmf_check_shape(lua_State *L, int idx, const char *fname, int64_t *shape, int allow_unknown)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_pushvalue(L, idx);
        shape[0] = shape_dim(L, idx, fname, 1, allow_unknown);
        lua_pop(L, 1);
        return 1;
    }
    if (!lua_istable(L, idx)) {
        const char *got = luaL_getmetafield(L, idx, "__name") == LUA_TSTRING
                              ? lua_tostring(L, -1) : luaL_typename(L, idx);
        luaL_error(L, "bad argument #%d to '%s' (shape (array of integers) expected, got %s)",
                   idx, fname, got);
    }
    int rank = (int)lua_rawlen(L, idx);
    if (rank > MF_MAX_RANK)
        luaL_error(L, "bad argument #%d to '%s' (shape has rank %d, at most %d is supported)",
                   idx, fname, rank, MF_MAX_RANK);
    for (int i = 0; i < rank; i++) {
        lua_rawgeti(L, idx, i + 1);
        shape[i] = shape_dim(L, idx, fname, i + 1, allow_unknown);
        lua_pop(L, 1);
    }
    check_no_keyed_entries(L, idx, fname, rank);
    return rank;
}

int64_t lmf_axis(lua_State *L, const char *fname, lua_Integer axis, int rank, int extra)
{
    int64_t ax = 0;
    lmf_check_status(L, mf_axis_one_based(fname, axis, rank, extra, &ax));
    return ax;
}

int64_t lmf_check_axis(lua_State *L, int idx, const char *fname, int rank, int extra)
{
    int isint = 0;
    lua_Integer ax = lua_tointegerx(L, idx, &isint);
    if (!isint)
        luaL_error(L, "%s: an axis must be an integer, got %s", fname,
                   lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx)
                                                   : luaL_typename(L, idx));
    return lmf_axis(L, fname, ax, rank, extra);
}

lua_Integer lmf_check_integer(lua_State *L, int idx, const char *fname, const char *what)
{
    lua_Integer v = 0;
    if (lua_isinteger(L, idx))
        return lua_tointeger(L, idx);
    /* 'lua_numbertointeger' truncates; only whole floats are integers. */
    lua_Number x = lua_tonumber(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER && x == floor(x) && lua_numbertointeger(x, &v))
        return v;
    if (lua_type(L, idx) == LUA_TNUMBER)
        return luaL_error(L, "%s: %s must be an integer, got %s", fname, what,
                          luaL_tolstring(L, idx, NULL));
    return luaL_error(L, "%s: %s must be an integer, got %s", fname, what,
                      luaL_typename(L, idx));
}

int lmf_opt_field(lua_State *L, int idx, const char *key)
{
    if (!lua_istable(L, idx))
        return 0;
    if (lua_getfield(L, idx, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

int lmf_opt_bool(lua_State *L, int idx, const char *fname, const char *key, int dflt)
{
    if (!lmf_opt_field(L, idx, key))
        return dflt;
    if (!lua_isboolean(L, -1))
        luaL_error(L, "%s: option '%s' must be a boolean, got %s", fname, key,
                   luaL_typename(L, -1));
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

lua_Number lmf_opt_number(lua_State *L, int idx, const char *fname, const char *key,
                          lua_Number dflt)
{
    if (!lmf_opt_field(L, idx, key))
        return dflt;
    if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "%s: option '%s' must be a number, got %s", fname, key,
                   luaL_typename(L, -1));
    lua_Number v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

bool lmf_opt_integer_given(lua_State *L, int idx, const char *fname, const char *key,
                           lua_Integer *v)
{
    if (!lmf_opt_field(L, idx, key))
        return false;
    const char *what = lua_pushfstring(L, "option '%s'", key);
    *v = lmf_check_integer(L, -2, fname, what);
    lua_pop(L, 2);
    return true;
}

lua_Integer lmf_opt_integer(lua_State *L, int idx, const char *fname, const char *key,
                            lua_Integer dflt)
{
    lmf_opt_integer_given(L, idx, fname, key, &dflt);
    return dflt;
}

/* Lists 'known' ("a, b, c") on top of the stack. */
static const char *push_key_list(lua_State *L, const char *const *known)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; known[i]; i++) {
        luaL_addstring(&b, i ? ", " : "");
        luaL_addstring(&b, known[i]);
    }
    if (!known[0])
        luaL_addstring(&b, "none");
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

void lmf_check_options(lua_State *L, int idx, const char *fname, const char *const *known)
{
    if (!lua_istable(L, idx))
        return;
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int i = 0;
        while (k && known[i] && strcmp(k, known[i]) != 0)
            i++;
        if (!k || !known[i]) {   /* a non-string key is shown as tostring shows it */
            const char *shown = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "%s: unknown option '%s' (known: %s)", fname, shown,
                       push_key_list(L, known));
        }
    }
}

/* ---- properties, indexing, conversion --------------------------------------- */

static void push_shape(lua_State *L, const MfTensor *t)
{
    lua_createtable(L, t->rank, 0);
    for (int i = 0; i < t->rank; i++) {
        lua_pushinteger(L, t->shape[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

static void push_element(lua_State *L, const MfTensor *t, int64_t i)
{
    double v = mf_tensor_get(t, i);
    switch (t->dtype) {
    case MF_BOOL: lua_pushboolean(L, v != 0); break;
    case MF_INT32: lua_pushinteger(L, (lua_Integer)v); break;
    case MF_INT64: lua_pushinteger(L, mf_tensor_get_int(t, i)); break;
    case MF_UINT8: lua_pushinteger(L, (lua_Integer)v); break;
    default: lua_pushnumber(L, v); break;
    }
}

int lmf_push_tensor_property(lua_State *L, const MfTensor *t, const char *key)
{
    if (strcmp(key, "shape") == 0) {
        push_shape(L, t);
    } else if (strcmp(key, "dtype") == 0) {
        lua_pushstring(L, mf_dtype_name(t->dtype));
    } else if (strcmp(key, "ndim") == 0) {
        lua_pushinteger(L, t->rank);
    } else if (strcmp(key, "name") == 0 && t->node) {
        char name[300];
        lua_pushstring(L, mf_graph_tensor_name(t, name, sizeof name));
    } else if (strcmp(key, "name") == 0) {
        lua_pushnil(L);   /* an eager tensor has no name */
    } else {
        return 0;
    }
    return 1;
}

/* t[i]: 1-based along axis 1; a 1-D tensor gives a Lua value, else a view. */
static int index_tensor(lua_State *L, MfTensor *t, lua_Integer i)
{
    int64_t k = 0;
    MfTensor *v = NULL;
    lmf_check_status(L, mf_tensor_index(t, i, &k, &v));
    if (v)
        lmf_push_tensor(L, v);
    else
        push_element(L, t, k);
    return 1;
}

/* The open tensor at 'idx', not anchored: for reads that run no Lua code
 * and allocate nothing before they are done (a method lookup, #t). */
static MfTensor *peek_tensor(lua_State *L, int idx)
{
    LmfBox *box = test_box(L, idx);
    if (box && box->t)
        return box->t;
    return lmf_check_tensor(L, idx);
}

static int t_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING) {   /* a method: the hot path */
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
            return 1;   /* even of a closed tensor: the method's error names it */
        lua_pop(L, 1);
    }
    LmfBox *box = test_box(L, 1);
    if (box && !box->t)
        return luaL_error(L, "index: the tensor is closed (reading %s)",
                          lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "an element");
    MfTensor *t = lmf_check_tensor(L, 1);
    if (lua_type(L, 2) == LUA_TNUMBER)
        return index_tensor(L, t, lmf_check_integer(L, 2, "index", "an index"));
    const char *key = lua_tostring(L, 2);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    if (!key || lua_type(L, 2) != LUA_TSTRING || !lmf_push_tensor_property(L, t, key))
        return lmf_tensor_no_field(L, lua_upvalueindex(1));
    return 1;
}

static int t_newindex(lua_State *L)
{
    return luaL_error(L, "tensors are immutable: build a new one (or use a mf.Variable and "
                      "assign) instead of setting '%s'",
                      /* a key's __tostring may raise (a closed tensor) */
                      lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER
                          ? luaL_tolstring(L, 2, NULL) : luaL_typename(L, 2));
}

static int t_len(lua_State *L)
{
    MfTensor *t = peek_tensor(L, 1);
    if (t->rank == 0)
        return luaL_error(L, "#: a scalar has no length (it has rank 0)");
    lua_pushinteger(L, t->shape[0]);
    return 1;
}

static int t_numel(lua_State *L)
{
    lmf_check_nargs(L, "numel", 1);
    lua_pushinteger(L, mf_tensor_numel(peek_tensor(L, 1)));
    return 1;
}

static int t_item(lua_State *L)
{
    lmf_check_nargs(L, "item", 1);
    MfTensor *t = lmf_check_tensor(L, 1);
    lmf_check_status(L, mf_tensor_check_values(t, "item", true));
    push_element(L, t, 0);
    mf_tape_note_export(t);
    return 1;
}

/* Builds nested tables for dims 'd'.. starting at row-major element '*next'. */
static void push_nested(lua_State *L, const MfTensor *t, int d, int64_t *next)
{
    if (d == t->rank) {
        push_element(L, t, (*next)++);
        return;
    }
    luaL_checkstack(L, 4, "totable: nesting too deep");
    lua_createtable(L, (int)t->shape[d], 0);
    for (int64_t i = 1; i <= t->shape[d]; i++) {
        push_nested(L, t, d + 1, next);
        lua_rawseti(L, -2, i);
    }
}

static int t_totable(lua_State *L)
{
    lmf_check_nargs(L, "totable", 1);
    MfTensor *t = lmf_check_tensor(L, 1);
    lmf_check_status(L, mf_tensor_check_values(t, "totable", false));
    mf_tape_note_export(t);
    int64_t next = 0;
    push_nested(L, t, 0, &next);
    return 1;
}

static int t_gc(lua_State *L)
{
    LmfBox *box = test_box(L, 1);
    if (!box)
        return 0;
    mf_tensor_release(box->t);
    box->t = NULL;
    return 0;
}

static int t_tostring(lua_State *L)
{
    lmf_push_tensor_string(L, lmf_check_tensor(L, 1));
    return 1;
}

/* ---- operators ------------------------------------------------------------------ */

/* Runs a binary op where either side may be a Lua number (it takes the
 * tensor's dtype); errors name the op's function ("multiply" for x * y). */
static int arith(lua_State *L, MfOpId op, const char *fname)
{
    MfTensor *in[2] = {lmf_test_tensor(L, 1), lmf_test_tensor(L, 2)};
    if (!in[0] || !in[1]) {
        int like = in[0] ? (int)in[0]->dtype : in[1] ? (int)in[1]->dtype : -1;
        in[0] = lmf_arg_tensor(L, 1, like, fname);
        in[1] = lmf_arg_tensor(L, 2, like, fname);
    }
    return lmf_call_op(L, op, 2, in, NULL);
}

static int t_add(lua_State *L) { return arith(L, MF_OP_ADD, "add"); }
static int t_sub(lua_State *L) { return arith(L, MF_OP_SUB, "subtract"); }
static int t_mul(lua_State *L) { return arith(L, MF_OP_MUL, "multiply"); }
static int t_div(lua_State *L) { return arith(L, MF_OP_DIV, "divide"); }
static int t_mod(lua_State *L) { return arith(L, MF_OP_MOD, "mod"); }
/* x ^ 2 is Square (as NumPy's power special-cases it): the same value, and
 * its gradient is two ops instead of Pow's general formula. */
static int t_pow(lua_State *L)
{
    MfTensor *x = lmf_test_tensor(L, 1);
    if (x && lua_type(L, 2) == LUA_TNUMBER && lua_tonumber(L, 2) == 2 &&
        mf_dtype_is_float(x->dtype))
        return lmf_call_op(L, MF_OP_SQUARE, 1, &x, NULL);
    return arith(L, MF_OP_POW, "pow");
}

static int t_unm(lua_State *L)
{
    MfTensor *x = lmf_check_tensor(L, 1);
    return lmf_call_op(L, MF_OP_NEG, 1, &x, NULL);
}

static int t_compare(lua_State *L)
{
    return luaL_error(L, "tensors cannot be compared with < or <= (Lua wants one boolean); "
                      "use mf.less, mf.less_equal, ... for elementwise results");
}

void lmf_open_tensor(lua_State *L, int methods)
{
    static const luaL_Reg meta[] = {
        {"__gc", t_gc}, {"__close", t_gc}, {"__newindex", t_newindex}, {"__len", t_len},
        {"__tostring", t_tostring}, {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul},
        {"__div", t_div}, {"__mod", t_mod}, {"__pow", t_pow}, {"__unm", t_unm},
        {"__lt", t_compare}, {"__le", t_compare}, {NULL, NULL}};
    static const luaL_Reg meths[] = {
        {"numel", t_numel}, {"item", t_item}, {"totable", t_totable}, {NULL, NULL}};
    methods = lua_absindex(L, methods);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    reclaim_L = lua_tothread(L, -1);
    lua_pop(L, 1);
    mf_alloc_set_reclaim(reclaim_hook);
    luaL_newmetatable(L, LMF_TENSOR_MT);
    luaL_setfuncs(L, meta, 0);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &metatable_key);
    lua_pushvalue(L, methods);
    lua_pushcclosure(L, t_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "mf.Tensor");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
    lua_pushvalue(L, methods);
    luaL_setfuncs(L, meths, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_tensor);
    lua_setfield(L, -2, "tensor");
}
