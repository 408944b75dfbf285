/* fusion_run.c — the fused node's kernel (fusion.h): one pass over memory.
 *
 * The group's elementwise shape S is cut into blocks of about BLOCK
 * elements (whole trailing axes, then a range of one axis); each block goes
 * through every member in the members' order while it sits in cache: a
 * member's kernel is its descriptor's own 'forward', called on block
 * headers (an external input read through broadcast strides, a member's
 * value in a scratch block, the last elementwise member writing straight
 * into the result). So each element sees the operations the unfused nodes
 * apply, in the same order, through the same kernels: the result is
 * bit-identical, provided a kernel computes an element the same wherever it
 * sits in its tensor (what splitting a kernel over threads requires too).
 * Large groups share their blocks over the worker pool (core/parallel.h),
 * each part with its own scratch blocks; a block's values do not depend on
 * who runs it. A reduction at the end reduces the whole elementwise result
 * with its own kernel, so its summation order is the unfused one; a
 * reduction of every element takes each block's values into the leaves of
 * that kernel's tree while they are in cache (reduce_walk.h), and one over
 * the leading dims (S as rows of columns, the blocks whole rows) into that
 * kernel's column accumulators, so the elementwise result is never written
 * out.
 *
 * The values must allow blocks: the group's float dtype everywhere, every
 * member's value of shape S (inputs broadcast to it), S not a scalar and
 * not empty. Otherwise, and while a gradient tape records (it must see
 * each op), the members run one by one through the dispatcher, as
 * unfused, and a bad shape fails with the message it would have there.
 *
 * Ownership: 'in' is borrowed; scratch blocks are made and released here
 * by the calling thread (block headers live on the stack: the pool's
 * threads allocate nothing); the result is handed to the caller. */
#include <string.h>

#include "core/alloc.h"
#include "core/ops/reduce.h"
#include "core/ops/reduce_walk.h"
#include "core/parallel.h"
#include "core/profile/profile.h"
#include "core/shape.h"
#include "fusion.h"

/* Elements per block: ~16-32 KiB per member value, so a chain of members
 * keeps its blocks in L2. */
#ifndef MF_FUSION_BLOCK
#define MF_FUSION_BLOCK 4096
#endif
/* Elements from which the blocks are shared over the worker pool. */
#define MIN_PARALLEL 32768

typedef struct Fused {
    const MfGraph *g;
    const MfFusedGroup *fg;
    MfTensor *const *in;
    int ne;                     /* elementwise members (all, or all but a reduction root) */
    MfDType dt;
    int rank;                   /* of S */
    int64_t shape[MF_MAX_RANK]; /* S */
    /* the blocks: whole axes after 'axis', 'len' indices of 'axis' */
    int axis;
    int64_t len, inner;
    int64_t chunks;             /* blocks along the block axis */
    int64_t nblocks;
    int64_t (*bstride)[MF_MAX_RANK];   /* per external input, stride 0 where it broadcasts */
    MfTensor *dst;              /* the elementwise result */
    int parts;                  /* the blocks are shared into 'parts' runs */
    MfTensor **scratch;         /* per part, per member but the last: a block */
    MfStatus *status;           /* per part */
    struct Stream *stream;      /* a reduction of every element, or NULL */
    struct Cols *cols;          /* a reduction over the leading dims, or NULL */
} Fused;

static const MfNode *member(const Fused *f, int m)
{
    return mf_graph_node(f->g, f->fg->members[m]);
}

/* The root reduction takes the blocks as they come: no elementwise result. */
static bool streams(const Fused *f)
{
    return f->stream || f->cols;
}

/* ---- may the values run in blocks? ----------------------------------------- */

/* NumPy broadcasting of 'b' into 'a' (rank, shape); false when they do not. */
static bool broadcast_into(int *ra, int64_t *sa, int rb, const int64_t *sb)
{
    int r = *ra > rb ? *ra : rb;
    int64_t out[MF_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int da = d - (r - *ra), db = d - (r - rb);
        int64_t x = da >= 0 ? sa[da] : 1, y = db >= 0 ? sb[db] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        out[d] = x == 1 ? y : x;
    }
    *ra = r;
    memcpy(sa, out, (size_t)r * sizeof *out);
    return true;
}

/* Every member's value would have shape S (the first member's) and dtype
 * 'dt': fills f->rank and f->shape. */
static bool blocks_fit(Fused *f)
{
    const MfFusedGroup *fg = f->fg;
    for (int k = 0; k < fg->ninputs; k++)
        if (f->in[k]->dtype != f->dt)
            return false;
    for (int m = 0; m < f->ne; m++) {
        int rank = 0;
        int64_t shape[MF_MAX_RANK];
        for (int a = fg->arg_start[m]; a < fg->arg_start[m + 1]; a++) {
            int ref = fg->args[a];
            const MfTensor *x = ref < 0 ? f->in[-ref - 1] : NULL;
            if (!broadcast_into(&rank, shape, x ? x->rank : f->rank, x ? x->shape : f->shape))
                return false;
        }
        if (m > 0 && !mf_shape_equal(rank, shape, f->rank, f->shape))
            return false;
        f->rank = rank;
        memcpy(f->shape, shape, (size_t)rank * sizeof *shape);
    }
    return f->rank > 0 && mf_shape_numel(f->rank, f->shape) > 0;
}

/* ---- one by one, as unfused -------------------------------------------------- */

static MfStatus run_unfused(const Fused *f, MfTensor **out)
{
    const MfFusedGroup *fg = f->fg;
    MfTensor **vals = mf_calloc((size_t)fg->nmembers, sizeof *vals);
    MfTensor *args[8];
    if (!vals)
        return mf_err_nomem("run", (unsigned long long)fg->nmembers * sizeof *vals);
    MfStatus st = MF_OK;
    for (int m = 0; m < fg->nmembers && st == MF_OK; m++) {
        const MfNode *n = member(f, m);
        for (int a = fg->arg_start[m], k = 0; a < fg->arg_start[m + 1]; a++, k++)
            args[k] = fg->args[a] >= 0 ? vals[fg->args[a]] : f->in[-fg->args[a] - 1];
        mf_prof_set_node(n->name);
        MfTensor *outs[MF_MAX_OUTPUTS];
        int nout = 0;
        st = mf_op_call(n->op, n->ninputs, args, &n->attrs, outs, &nout);
        mf_prof_set_node(NULL);
        vals[m] = outs[0];
        if (st != MF_OK)
            mf_err_prefix("run: node '%s' (%s)", n->name, mf_node_op_name(n));
    }
    *out = st == MF_OK ? vals[fg->nmembers - 1] : NULL;
    for (int m = 0; m < fg->nmembers - (st == MF_OK); m++)
        mf_tensor_release(vals[m]);
    mf_free(vals);
    return st;
}

/* ---- in blocks ------------------------------------------------------------------ */

/* Whole trailing axes up to BLOCK elements, then a range of one axis. */
static void choose_blocks(Fused *f)
{
    int a = f->rank - 1;
    int64_t inner = 1;
    while (a > 0 && inner * f->shape[a] <= MF_FUSION_BLOCK) {
        inner *= f->shape[a];
        a--;
    }
    int64_t len = MF_FUSION_BLOCK / inner;
    f->axis = a;
    f->inner = inner;
    f->len = len < 1 ? 1 : len > f->shape[a] ? f->shape[a] : len;
}

/* A block's shape: 'len' indices of the block axis, then the trailing axes. */
static int block_shape(const Fused *f, int64_t len, int64_t *shape)
{
    shape[0] = len;
    for (int d = f->axis + 1; d < f->rank; d++)
        shape[d - f->axis] = f->shape[d];
    return f->rank - f->axis;
}

static void fused_free(Fused *f)
{
    for (int m = 0; f->scratch && m < f->parts * f->ne; m++)
        mf_tensor_release(f->scratch[m]);
    mf_free(f->scratch);
    mf_free(f->bstride);
    mf_free(f->status);
}

/* The parts the blocks are shared into (one per thread of the pool when
 * there is work enough), each with its scratch blocks. */
static MfStatus fused_alloc(Fused *f)
{
    int64_t shape[MF_MAX_RANK], n = mf_shape_numel(f->rank, f->shape);
    int rank = block_shape(f, f->len, shape);
    f->chunks = (f->shape[f->axis] + f->len - 1) / f->len;
    f->nblocks = n / f->shape[f->axis] / f->inner * f->chunks;
    /* columns: one part, so each column's groups of rows combine in order */
    int threads = n >= MIN_PARALLEL && !f->cols ? mf_parallel_threads() : 1;
    f->parts = f->nblocks < threads ? (int)f->nblocks : threads;
    f->scratch = mf_calloc((size_t)f->parts * (size_t)f->ne, sizeof *f->scratch);
    f->bstride = mf_calloc((size_t)f->fg->ninputs + 1, sizeof *f->bstride);
    f->status = mf_calloc((size_t)f->parts, sizeof *f->status);
    if (!f->scratch || !f->bstride || !f->status)
        return mf_err_nomem("run", (unsigned long long)f->parts * f->ne * sizeof(MfTensor *));
    for (int p = 0; p < f->parts; p++)
        for (int m = 0; m < f->ne - !streams(f); m++)
            if (!(f->scratch[p * f->ne + m] = mf_tensor_new(f->dt, rank, shape)))
                return MF_ENOMEM;
    for (int k = 0; k < f->fg->ninputs; k++)
        mf_broadcast_strides(f->in[k], f->rank, f->shape, f->bstride[k]);
    return MF_OK;
}

/* A header over the storage of 'base' with the given geometry, on the
 * stack: blocks run on the pool's threads, where nothing may allocate. The
 * kernels only read it (no member op keeps or retains its operands). */
static MfTensor header(const MfTensor *base, int rank, const int64_t *shape,
                       const int64_t *strides, int64_t offset)
{
    MfTensor t;
    memset(&t, 0, sizeof t);
    t.refcount = 1;
    t.dtype = base->dtype;
    t.rank = rank;
    memcpy(t.shape, shape, (size_t)rank * sizeof *shape);
    memcpy(t.strides, strides, (size_t)rank * sizeof *strides);
    t.offset = offset;
    t.storage = base->storage;
    return t;
}

/* The header of external input 'k' for the block starting at element
 * index 'at' (of S) with 'len' indices of the block axis. */
static MfTensor input_block(const Fused *f, int k, const int64_t *at, int64_t len)
{
    const int64_t *bs = f->bstride[k];
    int64_t shape[MF_MAX_RANK], offset = f->in[k]->offset;
    for (int d = 0; d <= f->axis; d++)
        offset += at[d] * bs[d];
    int rank = block_shape(f, len, shape);
    return header(f->in[k], rank, shape, bs + f->axis, offset);
}

/* Runs a member's kernel on the block: its descriptor's 'infer' (on the
 * block headers) and 'forward', as the dispatcher would. */
static MfStatus member_kernel(const MfNode *n, int nin, MfTensor *const *ins, MfTensor *out)
{
    const MfOpDesc *d = mf_op_table[n->op];
    MfOpCall c;
    c.op = n->op;
    c.ninputs = nin;
    c.inputs = ins;
    c.attrs = &n->attrs;
    c.noutputs = 0;
    MfStatus st = d->infer(&c);
    MfTensor *outs[MF_MAX_OUTPUTS] = {out};
    return st == MF_OK ? d->forward(&c, outs) : st;
}

static void stream_block(const Fused *f, int p, int64_t b, const MfTensor *vals);
static void cols_block(const Fused *f, const MfTensor *vals, int64_t elems);

/* Block 'b' through every elementwise member, with part 'p''s scratch
 * blocks (one per member but the last, which writes into 'f->dst'; when
 * the reduction streams, one per member, the last one's values then go
 * into the reduction). */
static MfStatus run_block(const Fused *f, int64_t b, int p)
{
    MfTensor *const *scratch = f->scratch + p * f->ne;
    const MfFusedGroup *fg = f->fg;
    int64_t at[MF_MAX_RANK] = {0}, outer = b / f->chunks, shape[MF_MAX_RANK], offset = 0;
    at[f->axis] = b % f->chunks * f->len;
    for (int d = f->axis - 1; d >= 0; d--) {
        at[d] = outer % f->shape[d];
        outer /= f->shape[d];
    }
    int64_t len = f->shape[f->axis] - at[f->axis];
    len = len < f->len ? len : f->len;
    int rank = block_shape(f, len, shape);
    for (int d = 0; !streams(f) && d <= f->axis; d++) /* streaming: 'dst' is the reduction's */
        offset += at[d] * f->dst->strides[d];
    MfStatus st = MF_OK;
    for (int m = 0; m < f->ne && st == MF_OK; m++) {
        MfTensor heads[3], *args[2];
        int nv = 0;
        for (int a = fg->arg_start[m]; a < fg->arg_start[m + 1]; a++, nv++) {
            int ref = fg->args[a];
            heads[nv] = ref < 0 ? input_block(f, -ref - 1, at, len)
                                : header(scratch[ref], rank, shape, scratch[ref]->strides, 0);
            args[nv] = &heads[nv];
        }
        heads[nv] = m == f->ne - 1 && !streams(f)
                        ? header(f->dst, rank, shape, f->dst->strides + f->axis, offset)
                        : header(scratch[m], rank, shape, scratch[m]->strides, 0);
        st = member_kernel(member(f, m), nv, args, &heads[nv]);
    }
    if (st == MF_OK && f->stream)
        stream_block(f, p, b, scratch[f->ne - 1]);
    else if (st == MF_OK && f->cols)
        cols_block(f, scratch[f->ne - 1], len * f->inner);
    return st;
}

/* Part 'p' of the blocks, on whichever thread of the pool takes it. */
static void run_parts(void *ctx, int64_t begin, int64_t end)
{
    Fused *f = ctx;
    for (int64_t p = begin; p < end; p++) {
        int64_t b0 = f->nblocks * p / f->parts, b1 = f->nblocks * (p + 1) / f->parts;
        for (int64_t b = b0; b < b1 && f->status[p] == MF_OK; b++)
            f->status[p] = run_block(f, b, (int)p);
    }
}

/* ---- a reduction of every element, streamed ------------------------------------- */

/* The root reduces every element of S (a global norm's sum(g * g)): each
 * block's values go into the leaves of the reduction's tree (reduce_walk.h:
 * leaf k holds the elements [k L, k L + L) of S in order) while they are in
 * cache, and the result is made from the leaves' values, with the bits of
 * the root's kernel over the whole elementwise result. A leaf inside one
 * block is reduced where it lies; one across blocks of a part is gathered
 * in the part's stage; one across two parts (or more) in an edge buffer,
 * reduced when the parts are done. */
typedef struct Stream {
    MfReduceKind kind;
    int64_t n, leaf;
    size_t es;                  /* element size */
    MfReduceAcc *vals;          /* per leaf */
    int64_t *part_at;           /* per part its first element of S, then n */
    char *stage;                /* per part: a leaf */
    char *edges;                /* per boundary between parts: a leaf */
} Stream;

/* The root's kind, its output spec and the dims of S it reduces, or false:
 * the root then runs on the written-out result (an error in its attributes
 * is reported there). */
static bool root_reduction(const Fused *f, MfReduceKind *kind, MfTensorSpec *spec,
                           bool *reduced)
{
    const MfNode *root = member(f, f->fg->nmembers - 1);
    switch (root->op) {
    case MF_OP_SUM: *kind = MF_REDUCE_SUM; break;
    case MF_OP_MEAN: *kind = MF_REDUCE_MEAN; break;
    case MF_OP_MAX: *kind = MF_REDUCE_MAX; break;
    case MF_OP_MIN: *kind = MF_REDUCE_MIN; break;
    case MF_OP_PROD: *kind = MF_REDUCE_PROD; break;
    default: return false;
    }
    MfTensor x; /* S's header: what 'infer' reads */
    memset(&x, 0, sizeof x);
    x.refcount = 1;
    x.dtype = f->dt;
    x.rank = f->rank;
    memcpy(x.shape, f->shape, (size_t)f->rank * sizeof *f->shape);
    mf_shape_strides(f->rank, f->shape, x.strides);
    MfTensor *xp = &x;
    MfOpCall c = {.op = root->op, .ninputs = 1, .inputs = &xp, .attrs = &root->attrs};
    if (mf_op_table[root->op]->infer(&c) != MF_OK || mf_reduce_dims(&c, reduced) != MF_OK) {
        mf_err_clear();
        return false;
    }
    *spec = c.out[0];
    return true;
}

/* Every element of S (dims of 1 aside). */
static bool reduces_everything(const Fused *f, const bool *reduced)
{
    for (int d = 0; d < f->rank; d++)
        if (!reduced[d] && f->shape[d] > 1)
            return false;
    return true;
}

/* The first element of S in block 'b'. */
static int64_t block_start(const Fused *f, int64_t b)
{
    return (b / f->chunks * f->shape[f->axis] + b % f->chunks * f->len) * f->inner;
}

/* The edge buffer of leaf [lo, hi), which crosses a boundary between parts:
 * that of the first boundary inside it. */
static char *edge_of(const Fused *f, int64_t lo, int64_t hi)
{
    const Stream *s = f->stream;
    int j = 1;
    while (j < f->parts - 1 && !(s->part_at[j] > lo && s->part_at[j] < hi))
        j++;
    return s->edges + (size_t)(j - 1) * (size_t)s->leaf * s->es;
}

/* Block 'b''s values (in 'vals', contiguous) into the leaves, in part 'p'. */
static void stream_block(const Fused *f, int p, int64_t b, const MfTensor *vals)
{
    const Stream *s = f->stream;
    int64_t at = block_start(f, b), len = f->shape[f->axis] - b % f->chunks * f->len;
    int64_t m = (len < f->len ? len : f->len) * f->inner; /* the last along the axis: short */
    int64_t p0 = s->part_at[p], p1 = s->part_at[p + 1];
    const char *x = mf_tensor_data(vals);
    char *stage = s->stage + (size_t)p * (size_t)s->leaf * s->es;
    while (m > 0) {
        int64_t k = at / s->leaf, lo = k * s->leaf, hi = lo + s->leaf < s->n ? lo + s->leaf : s->n;
        int64_t take = hi - at < m ? hi - at : m;
        if (lo < p0 || hi > p1) {
            memcpy(edge_of(f, lo, hi) + (size_t)(at - lo) * s->es, x, (size_t)take * s->es);
        } else if (at == lo && take == hi - lo) {
            mf_reduce_leaf(s->kind, f->dt, x, take, &s->vals[k]);
        } else {
            memcpy(stage + (size_t)(at - lo) * s->es, x, (size_t)take * s->es);
            if (at + take == hi)
                mf_reduce_leaf(s->kind, f->dt, stage, hi - lo, &s->vals[k]);
        }
        at += take;
        x += (size_t)take * s->es;
        m -= take;
    }
}

/* The stream's buffers, and each part's first element of S. */
static MfStatus stream_alloc(Fused *f)
{
    Stream *s = f->stream;
    s->leaf = mf_reduce_leaf_len(s->kind, f->dt);
    s->es = mf_dtype_size(f->dt);
    size_t nleaves = (size_t)((s->n + s->leaf - 1) / s->leaf);
    size_t leaves = (size_t)f->parts * (size_t)s->leaf * s->es;
    s->vals = mf_calloc(nleaves, sizeof *s->vals);
    s->part_at = mf_calloc((size_t)f->parts + 1, sizeof *s->part_at);
    s->stage = mf_malloc(leaves);
    s->edges = mf_malloc(leaves);
    if (!s->vals || !s->part_at || !s->stage || !s->edges)
        return mf_err_nomem("run", (unsigned long long)(nleaves * sizeof *s->vals + 2 * leaves));
    for (int p = 0; p < f->parts; p++)
        s->part_at[p] = block_start(f, f->nblocks * p / f->parts);
    s->part_at[f->parts] = s->n;
    return MF_OK;
}

static void stream_free(Stream *s)
{
    mf_free(s->vals);
    mf_free(s->part_at);
    mf_free(s->stage);
    mf_free(s->edges);
}

/* The leaves across parts, then the reduction from all leaves into 'out'. */
static void stream_finish(const Fused *f, MfTensor *out)
{
    const Stream *s = f->stream;
    for (int j = 1; j < f->parts; j++) {
        int64_t at = s->part_at[j], lo = at / s->leaf * s->leaf;
        if (at == lo || (j > 1 && s->part_at[j - 1] > lo))
            continue; /* no leaf across it, or one reduced at the boundary before */
        int64_t hi = lo + s->leaf < s->n ? lo + s->leaf : s->n;
        mf_reduce_leaf(s->kind, f->dt, edge_of(f, lo, hi), hi - lo, &s->vals[lo / s->leaf]);
    }
    mf_reduce_leaves_into(s->kind, s->vals, s->n, out);
}

/* ---- a reduction over the leading dims, streamed ---------------------------------- */

/* The root reduces S's leading dims and keeps the rest (dims of 1 aside: a
 * layer-norm weight's gradient, sum(dy * x_hat) over batch and time), so
 * mf_reduce_into walks S as (rows, n) columns, each column folding groups
 * of MF_REDUCE_ROW_GROUP rows counted from row 0 in order. The blocks,
 * whole rows in row order, go into the same column kernel as they come
 * (reduce_walk.h); a group cut by a block's end is gathered in 'stage'.
 * One part takes every block (a column combines its groups in order). */
typedef struct Cols {
    MfReduceKind kind;
    int64_t n;                  /* columns */
    size_t es, acc_bytes;
    char *acc;                  /* per column */
    char *stage;                /* MF_REDUCE_ROW_GROUP rows */
    int64_t staged;             /* rows in it */
} Cols;

/* The columns when every dim of S the root reduces (of more than 1) comes
 * before every one it keeps and the blocks are whole rows, else 0. */
static int64_t leading_columns(const Fused *f, const bool *reduced)
{
    int first = f->rank; /* the columns' first dim: none reduced from there */
    while (first > 0 && !(reduced[first - 1] && f->shape[first - 1] > 1))
        first--;
    for (int d = 0; d < first; d++)
        if (!reduced[d] && f->shape[d] > 1)
            return 0;
    int64_t n = mf_shape_numel(f->rank - first, f->shape + first);
    return first > 0 && f->axis < first && n > 1 ? n : 0;
}

/* 'rows' rows at 'x' into the accumulators, groups counted from the first. */
static void cols_fold(const Fused *f, const char *x, int64_t rows)
{
    mf_reduce_cols(f->cols->kind, f->dt, f->cols->acc, x, rows, f->cols->n);
}

/* A block's values ('elems' of them, whole rows, contiguous) into the
 * columns: the staged group first, then whole groups, the rest staged. */
static void cols_block(const Fused *f, const MfTensor *vals, int64_t elems)
{
    Cols *c = f->cols;
    const char *x = mf_tensor_data(vals);
    int64_t m = elems / c->n, g = MF_REDUCE_ROW_GROUP;
    size_t row = (size_t)c->n * c->es;
    if (c->staged > 0) {
        int64_t take = g - c->staged < m ? g - c->staged : m;
        memcpy(c->stage + (size_t)c->staged * row, x, (size_t)take * row);
        c->staged += take;
        if (c->staged < g)
            return;
        cols_fold(f, c->stage, g);
        c->staged = 0;
        x += (size_t)take * row;
        m -= take;
    }
    int64_t whole = m / g * g;
    if (whole > 0)
        cols_fold(f, x, whole);
    memcpy(c->stage, x + (size_t)whole * row, (size_t)(m - whole) * row);
    c->staged = m - whole;
}

static MfStatus cols_alloc(Fused *f)
{
    Cols *c = f->cols;
    c->es = mf_dtype_size(f->dt);
    c->acc_bytes = (size_t)c->n * mf_reduce_acc_size(c->kind, f->dt);
    c->acc = mf_malloc(c->acc_bytes);
    c->stage = mf_malloc((size_t)MF_REDUCE_ROW_GROUP * (size_t)c->n * c->es);
    if (!c->acc || !c->stage)
        return mf_err_nomem("run", (unsigned long long)(c->acc_bytes + MF_REDUCE_ROW_GROUP *
                                                        (size_t)c->n * c->es));
    mf_reduce_cols_init(c->kind, f->dt, c->acc, c->n);
    return MF_OK;
}

/* The last group, then the accumulators into 'out'. */
static void cols_finish(const Fused *f, MfTensor *out)
{
    Cols *c = f->cols;
    if (c->staged > 0)
        cols_fold(f, c->stage, c->staged);
    mf_reduce_cols_finish(c->kind, c->acc, c->n, mf_shape_numel(f->rank, f->shape) / c->n, out);
}

static void cols_free(Cols *c)
{
    mf_free(c->acc);
    mf_free(c->stage);
}

/* Every block of S: a block is a range of 'len' indices of the block axis
 * at one index of the axes before it; the parts share them in order. */
static MfStatus run_blocks(Fused *f, MfTensor *dst)
{
    f->dst = dst;
    MfStatus st = fused_alloc(f);
    if (st == MF_OK && f->stream)
        st = stream_alloc(f);
    if (st == MF_OK && f->cols)
        st = cols_alloc(f);
    if (st == MF_OK)
        mf_parallel_for_threads(f->parts, f->parts, 1, run_parts, f);
    for (int p = 0; p < f->parts && st == MF_OK; p++)
        st = f->status[p];
    if (st == MF_OK && f->stream)
        stream_finish(f, dst);
    if (st == MF_OK && f->cols)
        cols_finish(f, dst);
    if (f->stream)
        stream_free(f->stream);
    if (f->cols)
        cols_free(f->cols);
    fused_free(f);
    return st;
}

/* The blocked run: the elementwise result, then the reduction if any; a
 * reduction of every element, or of the leading dims, as the blocks come. */
static MfStatus run_fused(Fused *f, MfTensor **out)
{
    const MfNode *root = member(f, f->fg->nmembers - 1);
    choose_blocks(f);
    Stream stream = {.n = mf_shape_numel(f->rank, f->shape)};
    Cols cols = {0};
    MfTensorSpec spec;
    bool reduced[MF_MAX_RANK];
    if (f->ne < f->fg->nmembers && root_reduction(f, &stream.kind, &spec, reduced)) {
        cols.kind = stream.kind;
        if (reduces_everything(f, reduced))
            f->stream = &stream;
        else if ((cols.n = leading_columns(f, reduced)) > 0)
            f->cols = &cols;
    }
    MfTensor *dst = streams(f) ? mf_tensor_new(spec.dtype, spec.rank, spec.shape)
                               : mf_tensor_new(f->dt, f->rank, f->shape);
    MfStatus st = dst ? run_blocks(f, dst) : MF_ENOMEM;
    if (st == MF_OK && !streams(f) && f->ne < f->fg->nmembers) {
        MfTensor *outs[MF_MAX_OUTPUTS];
        int nout = 0;
        st = mf_op_call(root->op, 1, &dst, &root->attrs, outs, &nout);
        mf_tensor_release(dst);
        dst = outs[0];
    }
    if (st != MF_OK) {
        mf_tensor_release(dst);
        dst = NULL;
        mf_err_prefix("run: node '%s' (%s)", root->name, f->fg->label);
    }
    *out = dst;
    return st;
}

static void profile_fused(const Fused *f, MfProfSpan *span, MfTensor *out)
{
    const MfNode *root = member(f, f->fg->nmembers - 1);
    double n = (double)mf_shape_numel(f->rank, f->shape), bytes = 0;
    for (int k = 0; k < f->fg->ninputs; k++)
        bytes += (double)(mf_tensor_numel(f->in[k]) * (int64_t)mf_dtype_size(f->dt));
    if (out)
        bytes += (double)(mf_tensor_numel(out) * (int64_t)mf_dtype_size(f->dt));
    mf_prof_end_op_call(span, root->name, "Fused", f->fg->label, n * f->ne, bytes);
}

MfStatus mf_fusion_run(const MfGraph *g, const MfFusedGroup *fg, MfTensor *const *in,
                       MfTensor **out)
{
    Fused f;
    memset(&f, 0, sizeof f);
    f.g = g;
    f.fg = fg;
    f.in = in;
    f.ne = fg->reduces ? fg->nmembers - 1 : fg->nmembers;
    f.dt = member(&f, f.ne - 1)->out[0].dtype;
    /* a tape recording (around sess:run) sees every member's op, as unfused */
    if (mf_op_recorder() || !blocks_fit(&f))
        return run_unfused(&f, out);
    MfProfSpan span;
    if (mf_prof_on)
        mf_prof_begin(&span);
    MfStatus st = run_fused(&f, out);
    if (mf_prof_on)
        profile_fused(&f, &span, *out);
    return st;
}
