/* lmf_index.c — Torch7's table index with TensorFlow's and NumPy's meaning.
 *
 * Reads (x a tensor or a Variable's value):
 *   x[i]                 axis 1 at position i (1-based, negative from the
 *                        end); a 1-D eager tensor gives a Lua value
 *   x[{e1, e2, ...}]     one entry per axis, the axes left over whole:
 *                          i               the position (the axis is dropped)
 *                          {}              the whole axis
 *                          {i}             positions i..i (the axis is kept)
 *                          {a, b [, s]}    a..b inclusive, every s-th (s >= 1)
 *                          mf.newaxis      a new axis of size 1
 *                          mf.ellipsis, "..."  as many whole axes as needed
 *   x[mask]              a bool tensor over the leading axes: the elements
 *                        (or rows) where it is true, in row-major order
 *   x[idx]               an int32/int64 tensor of 1-based positions along
 *                        axis 1 (a gather; the result has idx's shape first)
 * The table form is one StridedSlice op (core/ops/strided_slice.c, a view)
 * and an ExpandDims per new axis; a mask and positions are a GatherNd over
 * index tuples; so each has a gradient, on tapes and in graphs.
 *
 * Writes go to Variables only (tensors are immutable, as TensorFlow's):
 *   v[key] = value       the key as above; the value broadcasts to what the
 *                        key selects; v takes TensorStridedSliceUpdate of
 *                        its value (or TensorScatterUpdate for a mask or
 *                        positions) through v:assign, so eager Variables
 *                        change now and traced functions write when run
 *   v:scatter_update(indices, updates), scatter_add, scatter_sub
 *                        TensorFlow's scatter ops along axis 1
 *
 * The key table is read with raw access only: its metamethods never run.
 * Every Lua error is raised before the ops run, or after their outputs are
 * released. */
#include "lmf_index.h"

#include <string.h>

#include "core/grad.h"
#include "graph/graph.h"
#include "mode/mode.h"

#define NEWAXIS_KEY "mf.newaxis"
#define ELLIPSIS_KEY "mf.ellipsis"
#define SHAPE_BUF 160

/* What a table key selects: StridedSlice's attributes and where new axes go
 * in the result. */
typedef struct Window {
    MfAttrs a;
    int nnew;
    int64_t newpos[MF_MAX_RANK];
} Window;

static bool is_sentinel(lua_State *L, int idx, const char *key)
{
    idx = lua_absindex(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, key);
    bool same = lua_rawequal(L, -1, idx);
    lua_pop(L, 1);
    return same;
}

static bool is_ellipsis(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TSTRING)
        return strcmp(lua_tostring(L, idx), "...") == 0;
    return is_sentinel(L, idx, ELLIPSIS_KEY);
}

static lua_Integer int_entry(lua_State *L, int idx, int entry, const char *what)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "index: %s in entry %d must be an integer, got %s", what, entry,
                   lua_type(L, idx) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, idx));
    return v;
}

/* Position 'p' (1-based, negative from the end) on axis 'd' of size 'n'
 * (-1: unknown in a graph being built), 0-based. */
static int64_t position(lua_State *L, lua_Integer p, int d, int64_t n, const char *what)
{
    if (n < 0 && p < 0)
        luaL_error(L, "index: axis %d has an unknown size in this graph, so %s %I (from the "
                   "end) cannot be placed; count from the start", d + 1, what, (lua_Integer)p);
    int64_t k = p >= 1 ? p - 1 : n + p;
    if (p == 0 || k < 0 || (n >= 0 && k >= n))
        luaL_error(L, "index: %s %I out of range for axis %d of size %I (indices are "
                   "1-based: 1..%I, or -%I..-1)", what, (lua_Integer)p, d + 1, (lua_Integer)n,
                   (lua_Integer)n, (lua_Integer)n);
    return k;
}

static void whole_axis(MfAttrs *a, int r, int d, int64_t n)
{
    a->ints[d] = 0;
    a->ints[r + d] = n < 0 ? -1 : n;
    a->steps[d] = 1;
}

/* Reads entry 'k' of the range table at 'idx' (1-based, raw). */
static lua_Integer range_part(lua_State *L, int idx, int k, int entry, const char *what)
{
    lua_rawgeti(L, idx, k);
    lua_Integer v = int_entry(L, -1, entry, what);
    lua_pop(L, 1);
    return v;
}

/* The range table at 'idx' (entry 'entry' of the key) on axis 'd'. */
static void range_axis(lua_State *L, int idx, int entry, int d, int64_t n, MfAttrs *a, int r)
{
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len == 0) {
        whole_axis(a, r, d, n);
        return;
    }
    if (len > 3)
        luaL_error(L, "index: entry %d is a range of %I numbers; expected {} (all), {i}, "
                   "{start, stop} or {start, stop, step}", entry, (lua_Integer)len);
    lua_Integer start = range_part(L, idx, 1, entry, "the start");
    lua_Integer stop = len >= 2 ? range_part(L, idx, 2, entry, "the stop") : start;
    lua_Integer step = len == 3 ? range_part(L, idx, 3, entry, "the step") : 1;
    if (step < 1)
        luaL_error(L, "index: step %I in entry %d (axis %d) must be >= 1 (a negative step is "
                   "not supported; mf.reverse reverses an axis)", (lua_Integer)step, entry, d + 1);
    int64_t b = position(L, start, d, n, "start");
    a->ints[d] = b;
    a->steps[d] = step;
    if (n < 0 && stop == -1 && step == 1) {
        a->ints[r + d] = -1;   /* to the end, resolved when the graph runs */
        return;
    }
    int64_t e = stop >= 1 ? stop - 1 : n + stop;
    if (stop != 0 && e == b - 1) {
        a->ints[r + d] = 0;    /* {i, i - 1}: empty, as Torch7's narrow by 0 */
        return;
    }
    e = position(L, stop, d, n, "stop");
    if (e < b)
        luaL_error(L, "index: the range in entry %d runs backwards on axis %d: stop %I comes "
                   "before start %I (steps are >= 1)", entry, d + 1, (lua_Integer)stop,
                   (lua_Integer)start);
    a->ints[r + d] = (e - b) / step + 1;
}

/* Counts the entries of the key table at 'key' that take an axis, and
 * finds the ellipsis (0: none). */
static int count_axes(lua_State *L, int key, lua_Integer len, int *ellipsis)
{
    int taken = 0;
    *ellipsis = 0;
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, key, i);
        if (is_ellipsis(L, -1)) {
            if (*ellipsis)
                luaL_error(L, "index: entries %d and %d are both an ellipsis (one at most)",
                           *ellipsis, (int)i);
            *ellipsis = (int)i;
        } else if (!is_sentinel(L, -1, NEWAXIS_KEY)) {
            taken++;
        }
        lua_pop(L, 1);
    }
    return taken;
}

/* One entry (on top of the stack) of the key: axis '*d' of 't', output
 * axis '*o'; the ellipsis stands for 'spread' whole axes. */
static void window_entry(lua_State *L, int entry, const MfTensor *t, int spread, Window *w,
                         int *d, int *o)
{
    int r = t->rank, top = lua_gettop(L);
    if (is_ellipsis(L, top)) {
        for (int k = 0; k < spread; k++, (*o)++, (*d)++)
            whole_axis(&w->a, r, *d, t->shape[*d]);
    } else if (is_sentinel(L, top, NEWAXIS_KEY)) {
        w->newpos[w->nnew++] = (*o)++;
    } else if (lua_type(L, top) == LUA_TNUMBER) {
        lua_Integer p = int_entry(L, top, entry, "the position");
        w->a.ints[*d] = position(L, p, *d, t->shape[*d], "index");
        w->a.ints[r + *d] = 1;
        w->a.steps[*d] = 1;
        w->a.axes[w->a.naxes++] = (*d)++;
    } else if (lua_type(L, top) == LUA_TTABLE && !lua_getmetatable(L, top)) {
        range_axis(L, top, entry, *d, t->shape[*d], &w->a, r);
        (*d)++, (*o)++;
    } else {
        luaL_error(L, "index: entry %d is %s; expected a position (an integer), a range "
                   "{start, stop [, step]}, {} (all), mf.newaxis or mf.ellipsis", entry,
                   lua_isuserdata(L, top) ? "a tensor (a tensor index goes alone: x[mask], "
                   "x[idx])" : luaL_typename(L, top));
    }
}

/* The window the key table at 'key' selects in 't'. */
static void parse_table(lua_State *L, int key, const MfTensor *t, Window *w)
{
    char buf[SHAPE_BUF];
    int r = t->rank, ellipsis, d = 0, o = 0;
    lua_Integer len = (lua_Integer)lua_rawlen(L, key);
    int taken = count_axes(L, key, len, &ellipsis);
    if (taken > r)
        luaL_error(L, "index: %d positions or ranges for a tensor of rank %d (shape %s)", taken,
                   r, mf_shape_str(r, t->shape, buf, sizeof buf));
    if (len - taken - (ellipsis > 0) + r > MF_MAX_RANK)
        luaL_error(L, "index: the result would have more than %d axes", MF_MAX_RANK);
    memset(w, 0, sizeof *w);
    w->a = mf_attrs_default();
    w->a.nints = 2 * r;
    luaL_checkstack(L, 4, "index");
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, key, i);
        window_entry(L, (int)i, t, r - taken, w, &d, &o);
        lua_pop(L, 1);
    }
    for (; d < r; d++)
        whole_axis(&w->a, r, d, t->shape[d]);
}

/* StridedSlice, then an ExpandDims for each new axis; '*out' owned. */
static MfStatus apply_window(MfTensor *t, const Window *w, MfTensor **out)
{
    MfTensor *cur = NULL;
    MfStatus st = mf_op1(MF_OP_STRIDED_SLICE, 1, &t, &w->a, &cur);
    for (int k = 0; k < w->nnew && st == MF_OK; k++) {
        MfAttrs e = mf_attrs_default();
        e.axis = w->newpos[k];
        MfTensor *next = NULL;
        st = mf_op1(MF_OP_EXPAND_DIMS, 1, &cur, &e, &next);
        mf_tensor_release(cur);
        cur = next;
    }
    *out = st == MF_OK ? cur : NULL;
    return st;
}

/* ---- masks and positions ----------------------------------------------------- */

/* The 1-based index tuples (count, k) of the true entries of the bool
 * 'mask' over the leading axes of 't', in row-major order. */
static MfTensor *mask_tuples(lua_State *L, const MfTensor *mask, const MfTensor *t)
{
    char ms[SHAPE_BUF], ts[SHAPE_BUF];
    if (mask->node)
        luaL_error(L, "index: x[mask] needs the mask's values and a graph's mask has none "
                   "until it runs (mf.where(mask, x, y) chooses elementwise in a graph)");
    bool lead = mask->rank >= 1 && mask->rank <= t->rank;
    for (int d = 0; lead && d < mask->rank; d++)
        lead = mask->shape[d] == t->shape[d];
    if (!lead)
        luaL_error(L, "index: a mask of shape %s for a tensor of shape %s (the mask's shape "
                   "must be the tensor's or a leading part of it)",
                   mf_shape_str(mask->rank, mask->shape, ms, sizeof ms),
                   mf_shape_str(t->rank, t->shape, ts, sizeof ts));
    int64_t n = mf_tensor_numel(mask), count = 0, k = mask->rank;
    for (int64_t i = 0; i < n; i++)
        count += mf_tensor_get_int(mask, i) != 0;
    MfTensor *tuples = mf_tensor_new(MF_INT64, 2, (int64_t[]){count, k});
    if (!tuples)
        luaL_error(L, "index: out of memory");
    int64_t *p = mf_tensor_data(tuples);
    for (int64_t i = 0; i < n; i++) {
        if (!mf_tensor_get_int(mask, i))
            continue;
        for (int64_t d = k - 1, rest = i; d >= 0; rest /= mask->shape[d], d--)
            p[d] = rest % mask->shape[d] + 1;
        p += k;
    }
    lmf_push_tensor(L, tuples);   /* anchored until the binding returns */
    return tuples;
}

/* The index tuples a tensor key at 'idx' stands for: a mask's true entries,
 * or positions along axis 1 as tuples of one (idx's shape + (1)). Pushes
 * the tuples (anchored) and returns them. */
static MfTensor *key_tuples(lua_State *L, int idx, const MfTensor *t)
{
    MfTensor *key = lmf_check_tensor(L, idx);
    if (key->dtype == MF_BOOL)
        return mask_tuples(L, key, t);
    if (!mf_dtype_is_int(key->dtype))
        luaL_error(L, "index: a %s tensor as an index; expected a bool mask or int32/int64 "
                   "positions (1-based)", mf_dtype_name(key->dtype));
    if (t->rank == 0)
        luaL_error(L, "index: a scalar cannot be indexed (use t:item())");
    MfAttrs e = mf_attrs_default();
    e.axis = key->rank;
    MfTensor *tuples = NULL;
    lmf_check_status(L, mf_op1(MF_OP_EXPAND_DIMS, 1, &key, &e, &tuples));
    lmf_push_tensor(L, tuples);
    return tuples;
}

/* GatherNd(t, tuples), its errors named "index". */
static MfStatus gather_tuples(MfTensor *t, MfTensor *tuples, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    MfTensor *in[2] = {t, tuples};
    MfStatus st = mf_op1(MF_OP_GATHER_ND, 2, in, &a, out);
    if (st != MF_OK)
        mf_err_prefix("index");
    return st;
}

/* ---- reads -------------------------------------------------------------------- */

int lmf_index_read(lua_State *L)
{
    lua_settop(L, 2);
    MfTensor *t = lmf_check_tensor(L, 1), *out = NULL;
    if (lua_isuserdata(L, 2)) {   /* a tensor (a closed one raises) */
        MfTensor *tuples = key_tuples(L, 2, t);
        lmf_check_status(L, gather_tuples(t, tuples, &out));
        lmf_push_tensor(L, out);
        return 1;
    }
    if (t->rank == 0)
        return luaL_error(L, "index: a scalar cannot be indexed (use t:item())");
    Window w;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 2);
        lua_rawseti(L, -2, 1);
        lua_replace(L, 2);
    } else if (lua_type(L, 2) != LUA_TTABLE || lua_getmetatable(L, 2)) {
        return luaL_error(L, "index: a tensor is indexed by an integer, a table of positions "
                          "and ranges (x[{2, {1, 3}}]), a bool mask or an int tensor of "
                          "positions; got %s (help \"indexing\")", luaL_typename(L, 2));
    }
    parse_table(L, 2, t, &w);
    lmf_check_status(L, apply_window(t, &w, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* ---- writes ------------------------------------------------------------------- */

/* 'value' broadcast to the shape of 'like' (both known: checked here, so
 * the message names index). */
static void check_broadcast(lua_State *L, const MfTensor *value, const MfTensor *like,
                            const char *fname)
{
    bool ok = value->rank <= like->rank;
    for (int k = 1; ok && k <= value->rank; k++) {
        int64_t v = value->shape[value->rank - k], l = like->shape[like->rank - k];
        ok = v == l || v == 1 || v < 0 || l < 0;
    }
    char vs[SHAPE_BUF], ls[SHAPE_BUF];
    if (!ok)
        luaL_error(L, "%s: a value of shape %s cannot be written where the index selects "
                   "shape %s (it must broadcast to it)", fname,
                   mf_shape_str(value->rank, value->shape, vs, sizeof vs),
                   mf_shape_str(like->rank, like->shape, ls, sizeof ls));
}

/* The Variable at 1 (kept at the top of the stack) and its value, read now
 * (the slot then holds the value). Graph Variables need an op to run. */
static MfVariable *variable_and_value(lua_State *L, const char *fname, MfTensor **value)
{
    MfVariable *v = lmf_check_variable(L, 1);
    lua_pushvalue(L, 1);
    lua_insert(L, 1);   /* the Variable stays at 1, its value goes to 2 */
    *value = lmf_check_tensor(L, 2);
    if (!strcmp(fname, "index") && mf_mode_variable_node(v))
        luaL_error(L, "index: v[...] = value on a graph Variable would build an assign op that "
                   "nothing runs; use v:assign(mf.tensor_scatter_update(v, ...)) or "
                   "v:scatter_update(indices, updates) and run what they return");
    return v;
}

static MfStatus assign_new(MfVariable *v, MfTensor *next, MfTensor **out)
{
    MfStatus st = mf_mode_assign(v, MF_ASSIGN_SET, next, out);
    mf_tensor_release(next);
    return st;
}

/* x with 'value' written at the tuples (op: update, add or sub). */
static MfStatus scatter_tuples(MfOpId op, MfTensor *x, MfTensor *tuples, MfTensor *value,
                               MfTensor **next)
{
    MfTensor *like = NULL, *upd = NULL;
    MfStatus st = gather_tuples(x, tuples, &like);
    if (st == MF_OK)
        st = mf_grad_broadcast_like(value, like, &upd);
    MfTensor *in[3] = {x, tuples, upd};
    if (st == MF_OK)
        st = mf_op1(op, 3, in, NULL, next);
    mf_tensor_release(like);
    mf_tensor_release(upd);
    return st;
}

/* x with 'value' written into the window. */
static MfStatus update_window(MfTensor *x, const Window *w, MfTensor *value, MfTensor **next)
{
    MfTensor *like = NULL, *upd = NULL;
    MfStatus st = mf_op1(MF_OP_STRIDED_SLICE, 1, &x, &w->a, &like);
    if (st == MF_OK)
        st = mf_grad_broadcast_like(value, like, &upd);
    MfTensor *in[2] = {x, upd};
    if (st == MF_OK)
        st = mf_op1(MF_OP_STRIDED_SLICE_UPDATE, 2, in, &w->a, next);
    mf_tensor_release(like);
    mf_tensor_release(upd);
    return st;
}

/* The value at 'idx' as a tensor of x's dtype. */
static MfTensor *value_arg(lua_State *L, int idx, const MfTensor *x, const char *fname)
{
    MfTensor *value = lmf_arg_data(L, idx, (int)x->dtype, fname);
    if (value->dtype != x->dtype)
        luaL_error(L, "%s: the value has dtype %s but the Variable holds %s (convert with "
                   "mf.cast)", fname, mf_dtype_name(value->dtype), mf_dtype_name(x->dtype));
    return value;
}

/* What the tuples select in 'x' (tuples.shape[:-1] + x.shape[m:]) takes
 * 'value' broadcast. */
static void check_tuples_value(lua_State *L, const MfTensor *x, const MfTensor *tuples,
                               const MfTensor *value, const char *fname)
{
    MfTensor like = {0};
    int m = (int)tuples->shape[tuples->rank - 1];
    for (int d = 0; d < tuples->rank - 1; d++)
        like.shape[like.rank++] = tuples->shape[d];
    for (int d = m; d < x->rank && like.rank < MF_MAX_RANK; d++)
        like.shape[like.rank++] = x->shape[d];
    check_broadcast(L, value, &like, fname);
}

/* The window shape of 'w' over 'x' when known (for the broadcast check). */
static void check_window_value(lua_State *L, const MfTensor *x, const Window *w,
                               const MfTensor *value)
{
    MfTensor like = {0};
    int r = x->rank;
    like.rank = 0;
    for (int d = 0; d < r; d++) {
        bool shrunk = false;
        for (int k = 0; k < w->a.naxes; k++)
            shrunk = shrunk || w->a.axes[k] == d;
        if (!shrunk)
            like.shape[like.rank++] = w->a.ints[r + d];
    }
    check_broadcast(L, value, &like, "index");
}

int lmf_index_write(lua_State *L)
{
    lua_settop(L, 3);
    MfTensor *x, *next = NULL, *out = NULL;
    MfVariable *v = variable_and_value(L, "index", &x);   /* key at 3, value at 4 */
    MfTensor *value = value_arg(L, 4, x, "index");
    MfStatus st;
    if (lua_isuserdata(L, 3)) {   /* a tensor (a closed one raises) */
        MfTensor *tuples = key_tuples(L, 3, x);
        check_tuples_value(L, x, tuples, value, "index");
        st = scatter_tuples(MF_OP_TENSOR_SCATTER_UPDATE, x, tuples, value, &next);
    } else {
        if (lua_type(L, 3) == LUA_TNUMBER) {
            lua_createtable(L, 1, 0);
            lua_pushvalue(L, 3);
            lua_rawseti(L, -2, 1);
            lua_replace(L, 3);
        } else if (lua_type(L, 3) != LUA_TTABLE || lua_getmetatable(L, 3)) {
            return luaL_error(L, "index: cannot set '%s' on a Variable (v[key] = value takes "
                              "an integer, a table of positions and ranges, a bool mask or an "
                              "int tensor; change the whole value with v:assign(x))",
                              lua_type(L, 3) == LUA_TSTRING ? lua_tostring(L, 3)
                                                            : luaL_typename(L, 3));
        }
        if (x->rank == 0)
            return luaL_error(L, "index: a scalar Variable cannot be indexed (use v:assign)");
        Window w;
        parse_table(L, 3, x, &w);
        if (w.nnew)
            return luaL_error(L, "index: mf.newaxis in a write selects nothing new; leave it "
                              "out");
        check_window_value(L, x, &w, value);
        st = update_window(x, &w, value, &next);
    }
    if (st == MF_OK)
        st = assign_new(v, next, &out);
    mf_tensor_release(out);
    lmf_check_status(L, st);
    return 0;
}

/* v:scatter_update(indices, updates) and friends: TensorFlow's scatter ops
 * along axis 1, indices of any shape (1-based), updates of shape
 * indices.shape + v.shape[2..] or a scalar. */
static int scatter_with(lua_State *L, MfOpId op, const char *fname)
{
    lmf_check_nargs(L, fname, 3);
    lua_settop(L, 3);
    MfTensor *x, *out = NULL, *next = NULL;
    MfVariable *v = variable_and_value(L, fname, &x);   /* indices at 3, updates at 4 */
    MfTensor *ix = lmf_arg_index_tensor(L, 3, fname);
    if (!mf_dtype_is_int(ix->dtype))
        return luaL_error(L, "%s: indices must be int32 or int64, got %s", fname,
                          mf_dtype_name(ix->dtype));
    MfTensor *updates = value_arg(L, 4, x, fname);
    MfTensor *tuples = key_tuples(L, 3, x);
    check_tuples_value(L, x, tuples, updates, fname);
    MfStatus st = scatter_tuples(op, x, tuples, updates, &next);
    if (st != MF_OK && strncmp(mf_err_msg(), "index", 5) == 0)
        mf_err_prefix("%s", fname);
    if (st == MF_OK)
        st = assign_new(v, next, &out);
    lmf_check_status(L, st);
    if (!out) {
        lua_settop(L, 1);
        return 1;   /* eager: the Variable */
    }
    lmf_push_tensor(L, out);   /* a graph Variable: the assign op's output */
    return 1;
}

static int v_scatter_update(lua_State *L)
{
    return scatter_with(L, MF_OP_TENSOR_SCATTER_UPDATE, "scatter_update");
}
static int v_scatter_add(lua_State *L)
{
    return scatter_with(L, MF_OP_TENSOR_SCATTER_ADD, "scatter_add");
}
static int v_scatter_sub(lua_State *L)
{
    return scatter_with(L, MF_OP_TENSOR_SCATTER_SUB, "scatter_sub");
}

/* ---- narrow and select ------------------------------------------------------ */

/* Axis 'dim' (1-based, negative from the end) of 't', 0-based. */
static int axis_arg(lua_State *L, const MfTensor *t, const char *fname)
{
    lua_Integer dim = lmf_check_integer(L, 2, fname, "dim");
    int r = t->rank;
    if (dim == 0 || dim > r || dim < -r)
        luaL_error(L, "%s: dim %I out of range for rank %d (axes are 1-based: 1..%d, or "
                   "-%d..-1)", fname, (lua_Integer)dim, r, r, r);
    return (int)(dim > 0 ? dim - 1 : r + dim);
}

static void whole_window(const MfTensor *t, Window *w)
{
    memset(w, 0, sizeof *w);
    w->a = mf_attrs_default();
    w->a.nints = 2 * t->rank;
    for (int d = 0; d < t->rank; d++)
        whole_axis(&w->a, t->rank, d, t->shape[d]);
}

/* t:narrow(dim, start, length): 'length' positions from 'start' along dim
 * (Torch7's), a view. */
static int t_narrow(lua_State *L)
{
    lmf_check_nargs(L, "narrow", 4);
    MfTensor *t = lmf_check_tensor(L, 1), *out = NULL;
    int d = axis_arg(L, t, "narrow");
    lua_Integer start = lmf_check_integer(L, 3, "narrow", "start");
    lua_Integer len = lmf_check_integer(L, 4, "narrow", "length");
    int64_t n = t->shape[d];
    Window w;
    whole_window(t, &w);
    int64_t b = start >= 1 ? start - 1 : n + start;
    if (start == 0 || b < 0 || (n >= 0 && b > n) || (n >= 0 && b == n && len > 0))
        return luaL_error(L, "narrow: start %I out of range for axis %d of size %I "
                          "(positions are 1-based: 1..%I, or -%I..-1)", (lua_Integer)start,
                          d + 1, (lua_Integer)n, (lua_Integer)n, (lua_Integer)n);
    if (len < 0 || (n >= 0 && len > n - b))
        return luaL_error(L, "narrow: length %I from start %I runs past the end of axis %d "
                          "of size %I (at most %I)", (lua_Integer)len, (lua_Integer)start,
                          d + 1, (lua_Integer)n, (lua_Integer)(n >= 0 ? n - b : 0));
    w.a.ints[d] = b;
    w.a.ints[t->rank + d] = len;
    lmf_check_status(L, apply_window(t, &w, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* t:select(dim, i): position i along dim, the axis dropped (Torch7's; a
 * rank-0 tensor from a 1-D one), a view. */
static int t_select(lua_State *L)
{
    lmf_check_nargs(L, "select", 3);
    MfTensor *t = lmf_check_tensor(L, 1), *out = NULL;
    int d = axis_arg(L, t, "select");
    lua_Integer i = lmf_check_integer(L, 3, "select", "index");
    Window w;
    whole_window(t, &w);
    int64_t n = t->shape[d], k = i >= 1 ? i - 1 : n + i;
    if (i == 0 || k < 0 || (n >= 0 && k >= n) || (n < 0 && i < 0))
        return luaL_error(L, "select: index %I out of range for axis %d of size %I "
                          "(positions are 1-based: 1..%I, or -%I..-1)", (lua_Integer)i,
                          d + 1, (lua_Integer)n, (lua_Integer)n, (lua_Integer)n);
    w.a.ints[d] = k;
    w.a.ints[t->rank + d] = 1;
    w.a.axes[w.a.naxes++] = d;
    lmf_check_status(L, apply_window(t, &w, &out));
    lmf_push_tensor(L, out);
    return 1;
}

/* mf.newaxis and mf.ellipsis: tables that print as their names. */
static int sentinel_tostring(lua_State *L)
{
    lua_pushstring(L, is_sentinel(L, 1, NEWAXIS_KEY) ? "mf.newaxis" : "mf.ellipsis");
    return 1;
}

static void push_sentinel(lua_State *L, const char *key, const char *field, int mf)
{
    lua_newtable(L);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, sentinel_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, key);
    lua_setfield(L, -2, "__name");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
    lua_setfield(L, mf, field);
}

void lmf_open_index(lua_State *L, int methods, int vmethods, int mf)
{
    static const luaL_Reg meths[] = {{"narrow", t_narrow}, {"select", t_select}, {NULL, NULL}};
    static const luaL_Reg vmeths[] = {{"scatter_update", v_scatter_update},
                                      {"scatter_add", v_scatter_add},
                                      {"scatter_sub", v_scatter_sub}, {NULL, NULL}};
    methods = lua_absindex(L, methods);
    vmethods = lua_absindex(L, vmethods);
    mf = lua_absindex(L, mf);
    push_sentinel(L, NEWAXIS_KEY, "newaxis", mf);
    push_sentinel(L, ELLIPSIS_KEY, "ellipsis", mf);
    lua_pushvalue(L, methods);
    luaL_setfuncs(L, meths, 0);
    lua_pop(L, 1);
    lua_pushvalue(L, vmethods);
    luaL_setfuncs(L, vmeths, 0);
    lua_pop(L, 1);
}
