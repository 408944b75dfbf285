/* lmf_tensor.c — the "mf.Tensor" box: making and checking tensor userdata,
 * keeping operands alive for the call, converting Lua numbers and tables
 * into tensors, and calling an op into new boxes. What a tensor does in Lua
 * (indexing, methods, operators) is lmf_tensor_methods.c, a floor above.
 * See lmf.h for the ownership rules. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/shape.h"
#include "graph/graph.h"
#include "lmf.h"


/* ---- boxing ------------------------------------------------------------ */

/* A dead tensor's buffer waits for a collection, due when the engine says
 * (core/alloc.c says when and why). A young collection first: in the
 * shell's generational mode it finalizes the boxes of a loop's temporaries
 * in about a microsecond, where a full one traverses the whole Lua heap
 * (140 us with the library loaded: 8 us per 131k-element add, amortized).
 * Only when that leaves the engine over its mark (boxes that grew old, or
 * an incremental collector) does a full collection run. */
void lmf_gc_pressure(lua_State *L)
{
    if (!mf_alloc_collect_due())
        return;
    lua_gc(L, LUA_GCSTEP, 0);
    if (!mf_alloc_collect_due())
        return;
    lua_gc(L, LUA_GCCOLLECT);
    mf_alloc_collected();
}

/* Large results boxed since the last collection step before an op. A
 * result dropped by the loop that made it ('y = f(x)' again) is garbage
 * when the next op runs, but only a collection finds it: without one
 * before that op's allocation, its block is not free and the op takes
 * another; and the collection lmf_gc_pressure runs after pushing the new
 * result ages that result (a full one makes it old), so the next young
 * collection cannot free it either. A 4M-float loop rotated through three
 * or four 16 MB blocks (input and outputs 64-80 MB, past a 32 MB L3; one
 * output block and the input fit); a 131k-float loop (512 KiB) through
 * four, past a core's 1 MiB L2, so that most of an op's time went to
 * fetching output lines from L3 (perf: the store of floor's loop). So
 * before an op, once a result of 256 KiB or more was boxed, a young
 * collection (about 0.5 us, against 8 us or more for an op on 64k floats)
 * frees the dropped ones, and the op's output takes a block just freed,
 * still in cache. Results of 16 KiB and more count too, a collection once
 * 256 KiB of them were boxed: a loop of 16k-float results (a reduction of
 * 4M floats to 64 KiB, an add) cycled through 2 MiB of blocks or the live
 * set's size (core/alloc.c's collection), fresh pages until the first
 * collection (a page fault per 4 KiB: a sum over the last axis of 4M floats
 * took 0.5-1.5 ms a call in bench/elementwise.lua instead of 0.3), now
 * through about 256 KiB; adds of 4k-16k floats took 0.65-0.8x the time.
 * Smaller results never get here. */
#define LARGE_RESULT_BYTES ((size_t)256 << 10)
#define COUNTED_RESULT_BYTES ((size_t)16 << 10)
static size_t large_boxed;

static void note_large_result(const MfTensor *t)
{
    if (t->storage && t->storage->nbytes >= COUNTED_RESULT_BYTES)
        large_boxed += t->storage->nbytes;
}

void lmf_gc_before_op(lua_State *L)
{
    if (large_boxed < LARGE_RESULT_BYTES)
        return;
    large_boxed = 0;
    lua_gc(L, LUA_GCSTEP, 0);
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
    note_large_result(t);
    lmf_gc_pressure(L);
}

LmfBox *lmf_tensor_box(lua_State *L, int idx)
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
    LmfBox *box = lmf_tensor_box(L, idx);
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

bool lmf_is_tensor(lua_State *L, int idx)
{
    LmfBox *box = lmf_tensor_box(L, idx);
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
    LmfBox *box = lmf_tensor_box(L, idx);
    MfTensor *t = box ? anchor_box(L, idx, box) : NULL;
    if (box && !t)
        luaL_argerror(L, idx, "tensor is closed");
    if (box)
        return t;
    idx = lua_absindex(L, idx);
    box = push_box(L, NULL);
    return anchor(L, idx, box, lmf_check_variable_value(L, idx));
}


int lmf_call_op(lua_State *L, MfOpId op, int ninputs, MfTensor *const *inputs,
                const MfAttrs *attrs)
{
    MfTensor *outs[MF_MAX_OUTPUTS];
    int n = 0;
    check_not_reclaiming(L);
    lmf_gc_before_op(L);
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
    bool positions;   /* index data: a fraction is an error, not truncated */
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
    else if (lua_type(L, -1) == LUA_TNUMBER && f->positions &&
             is_fraction_for_integers(L, -1, t->dtype))
        fill_error(L, f, depth, lua_pushfstring(L, "positions must be integers, got %s",
                                                lua_tostring(L, -1)));
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

/* A new tensor from the number, boolean or nested table at 'idx'. Integer
 * data drops a fraction (as NumPy) unless it holds 'positions'. */
static MfTensor *tensor_from_lua(lua_State *L, int idx, int dtype, bool positions,
                                 const char *fname)
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
    Filler f = {.fname = fname, .t = mf_tensor_new(dt, rank, shape), .next = 0,
                .positions = positions};
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
    if (lmf_tensor_box(L, idx))   /* a closed tensor box */
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
        t = tensor_from_lua(L, idx, -1, false, fname);
    }
    lmf_push_tensor(L, t);
    lua_replace(L, idx);
    return t;
}

MfTensor *lmf_push_data(lua_State *L, int idx, int dt, const char *fname)
{
    MfTensor *t = tensor_from_lua(L, idx, dt, false, fname);
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

/* Positions given as Lua data: {1.5} is an error naming the entry, never
 * position 1 (a silent wrong answer). */
MfTensor *lmf_arg_index_tensor(lua_State *L, int idx, const char *fname)
{
    if (lmf_test_tensor(L, idx) || lua_isuserdata(L, idx) || lua_type(L, idx) == LUA_TNUMBER)
        return lmf_arg_tensor(L, idx, MF_INT64, fname);
    idx = lua_absindex(L, idx);
    MfTensor *t = tensor_from_lua(L, idx, MF_INT64, true, fname);
    lmf_push_tensor(L, t);
    lua_replace(L, idx);
    return t;
}

MfTensor *lmf_arg_data(lua_State *L, int idx, int dt, const char *fname)
{
    if (!lua_istable(L, idx))
        return lmf_arg_tensor(L, idx, dt, fname);
    return replace_by_data(L, idx, dt, fname);
}


int lmf_push_result(lua_State *L, MfStatus st, MfTensor *const *out)
{
    lmf_check_status(L, st);
    lmf_push_tensor(L, *out);
    return 1;
}

void lmf_tensor_box_class(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    reclaim_L = lua_tothread(L, -1);
    lua_pop(L, 1);
    mf_alloc_set_reclaim(reclaim_hook);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &metatable_key);
}
