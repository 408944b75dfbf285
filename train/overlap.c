/* overlap.c — DistributedOptimizer's eager allreduce overlapped with the
 * backward pass (Horovod, PyTorch DDP): gradients go into buckets in the
 * order the backward walk finishes them (last layer first), and a bucket's
 * nonblocking allreduce (distributed/request.c) starts as soon as it is full,
 * while the walk goes on to earlier layers; the walk drives MPI between
 * ops, and 'mf_train_overlap_finish' waits before the optimizer applies.
 *
 * Buckets: a gradient of 'bucket_bytes' or more is a bucket of its own and
 * is reduced straight from its buffer (no copy); smaller ones of a dtype
 * are packed into one buffer, started after the backward op that brings it
 * to 'bucket_bytes' (or at the end of the walk). A full bucket starts only
 * when another backward op follows: one that fills after the last op has
 * nothing to overlap and is reduced by the blocking MPI_Allreduce, which is
 * faster here than MPI_Iallreduce + MPI_Wait (814 kB: about 118 against 180
 * us, bench/dist_probe.c), and the same sum. The walk's order is the
 * same on every process, so the buckets are too; each bucket's signature
 * (its variables, dtypes, shapes) is exchanged before it starts. The
 * averages are those of the blocking path (the same MPI sum, then the
 * division), so every process gets the same bits. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/profile/profile.h"
#include "distributed/dist.h"
#include "train.h"

typedef struct Bucket {
    int *idx;           /* pairs in this bucket */
    int n, cap;
    int64_t elems;
    MfDType dtype;
    MfTensor *in, *out; /* the send buffer (a gradient or a packed copy) and the result */
    MfDistRequest *req; /* NULL once waited for */
    bool full;          /* ready to start, not started yet */
} Bucket;

struct MfOverlap {
    bool check;
    int64_t bucket_bytes, fusion_bytes;   /* fusion_bytes: for the blocking path */
    MfGradVar *pairs;   /* their gradients are set when the walk ends */
    MfTensor **grads;   /* borrowed from the walk meanwhile */
    int npairs;
    Bucket *b;          /* started buckets, then the open ones (one per dtype) */
    int nb, cap;
    int open[2];        /* index of the open bucket of float32 / float64, or -1 */
};

static const char *const WHO = "DistributedOptimizer";

MfOverlap *mf_train_overlap_new(bool check, int64_t bucket_bytes, int64_t fusion_bytes)
{
    MfOverlap *ov = mf_alloc_zeroed(sizeof *ov);
    if (!ov) {
        mf_err_nomem(WHO, sizeof *ov);
        return NULL;
    }
    ov->check = check;
    ov->bucket_bytes = bucket_bytes;
    ov->fusion_bytes = fusion_bytes;
    ov->open[0] = ov->open[1] = -1;
    return ov;
}

static void bucket_free(Bucket *b)
{
    mf_dist_wait(b->req);   /* every process started it: it completes */
    mf_tensor_release(b->in);
    mf_tensor_release(b->out);
    mf_dealloc(b->idx, (size_t)b->cap * sizeof *b->idx);
}

void mf_train_overlap_free(MfOverlap *ov)
{
    if (!ov)
        return;
    char saved[1024];   /* the waits must not overwrite the error being reported */
    snprintf(saved, sizeof saved, "%s", mf_err_msg() ? mf_err_msg() : "");
    for (int k = 0; k < ov->nb; k++)
        bucket_free(&ov->b[k]);
    if (saved[0])
        mf_err_set(MF_EARG, "%s", saved);
    mf_dealloc(ov->grads, (size_t)(ov->npairs ? ov->npairs : 1) * sizeof *ov->grads);
    mf_dealloc(ov->b, (size_t)ov->cap * sizeof *ov->b);
    mf_dealloc(ov, sizeof *ov);
}

static int64_t grad_bytes(const MfTensor *g)
{
    return mf_tensor_numel(g) * (int64_t)mf_dtype_size(g->dtype);
}

/* A new empty bucket of 'dt'; its index or -1 (message set). */
static int new_bucket(MfOverlap *ov, MfDType dt)
{
    if (ov->nb == ov->cap) {
        int cap = ov->cap ? 2 * ov->cap : 8;
        Bucket *b = mf_alloc_zeroed((size_t)cap * sizeof *b);
        if (!b) {
            mf_err_nomem(WHO, (size_t)cap * sizeof *b);
            return -1;
        }
        if (ov->nb)
            memcpy(b, ov->b, (size_t)ov->nb * sizeof *b);
        mf_dealloc(ov->b, (size_t)ov->cap * sizeof *ov->b);
        ov->b = b;
        ov->cap = cap;
    }
    ov->b[ov->nb] = (Bucket){.dtype = dt};
    return ov->nb++;
}

static MfStatus add_to(Bucket *b, int i, const MfTensor *g)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 4;
        int *idx = mf_alloc((size_t)cap * sizeof *idx);
        if (!idx)
            return mf_err_nomem(WHO, (size_t)cap * sizeof *idx);
        if (b->n)
            memcpy(idx, b->idx, (size_t)b->n * sizeof *idx);
        mf_dealloc(b->idx, (size_t)b->cap * sizeof *b->idx);
        b->idx = idx;
        b->cap = cap;
    }
    b->idx[b->n++] = i;
    b->elems += mf_tensor_numel(g);
    return MF_OK;
}

/* "gradients (bucket 2): w float32 (784,256); b float32 (256)" */
static void bucket_text(const MfOverlap *ov, int k, char *buf, size_t cap)
{
    const Bucket *b = &ov->b[k];
    size_t at = (size_t)snprintf(buf, cap, "gradients (bucket %d):", k + 1);
    for (int j = 0; j < b->n && at < cap; j++) {
        const MfTensor *g = ov->grads[b->idx[j]];
        char shape[128];
        at += (size_t)snprintf(buf + at, cap - at, "%s %s %s %s", j ? ";" : "",
                               ov->pairs[b->idx[j]].var->name, mf_dtype_name(g->dtype),
                               mf_shape_str(g->rank, g->shape, shape, 128));
    }
}

/* The send buffer: the gradient itself (contiguous) or the bucket's
 * gradients packed one after the other. */
static MfStatus pack(const MfOverlap *ov, Bucket *b)
{
    if (b->n == 1) {
        b->in = mf_tensor_contiguous(ov->grads[b->idx[0]]);
        return b->in ? MF_OK : MF_ENOMEM;
    }
    int64_t shape[1] = {b->elems};
    if (!(b->in = mf_tensor_new(b->dtype, 1, shape)))
        return MF_ENOMEM;
    char *at = mf_tensor_data(b->in);
    for (int j = 0; j < b->n; j++) {
        MfTensor *g = mf_tensor_contiguous(ov->grads[b->idx[j]]);
        if (!g)
            return MF_ENOMEM;
        size_t bytes = (size_t)grad_bytes(g);
        memcpy(at, mf_tensor_data(g), bytes);
        at += bytes;
        mf_tensor_release(g);
    }
    return MF_OK;
}

/* Packs bucket 'k', exchanges its signature and starts its allreduce
 * ('now': reduces it at once, the blocking way). */
static MfStatus start(MfOverlap *ov, int k, bool now)
{
    Bucket *b = &ov->b[k];
    MfProfSpan span;
    mf_prof_begin(&span);
    MfStatus st = pack(ov, b);
    if (st == MF_OK && !(b->out = mf_tensor_new(b->in->dtype, b->in->rank, b->in->shape)))
        st = MF_ENOMEM;
    if (st == MF_OK && ov->check && mf_dist_size() > 1) {
        char text[4096];
        bucket_text(ov, k, text, sizeof text);
        st = mf_dist_check("allreduce", text);
    }
    b->full = false;
    if (st == MF_OK && now)
        st = mf_dist_allreduce_into(b->in, b->out, MF_REDUCE_MEAN, 0);
    else if (st == MF_OK)
        st = mf_dist_iallreduce(b->in, b->out, MF_REDUCE_MEAN, 0, &b->req);
    mf_prof_end_op(&span, "MPIAllreduce", 0, (double)grad_bytes(b->in ? b->in : b->out));
    return st;
}

static int dtype_slot(MfDType dt)
{
    return dt == MF_FLOAT32 ? 0 : dt == MF_FLOAT64 ? 1 : -1;
}

/* The walk's 'ready' hook: a large gradient is a full bucket alone, a
 * small one joins the open bucket of its dtype. */
static MfStatus on_ready(void *ctx, int i, MfTensor *grad)
{
    MfOverlap *ov = ctx;
    int slot = grad ? dtype_slot(grad->dtype) : -1;
    if (slot < 0)
        return MF_OK;   /* no gradient, or not a float: left alone, as the blocking path */
    ov->grads[i] = grad;
    int k = grad_bytes(grad) >= ov->bucket_bytes ? -1 : ov->open[slot];
    bool alone = k < 0 && grad_bytes(grad) >= ov->bucket_bytes;
    if (k < 0 && (k = new_bucket(ov, grad->dtype)) < 0)
        return MF_ENOMEM;
    MfStatus st = add_to(&ov->b[k], i, grad);
    if (st == MF_OK && alone)
        ov->b[k].full = true;
    else if (st == MF_OK)
        ov->open[slot] = k;
    return st;
}

/* Starts the full buckets and the open ones holding 'min_bytes' or more
 * ('now': the blocking way). */
static MfStatus start_ready(MfOverlap *ov, int64_t min_bytes, bool now)
{
    MfStatus st = MF_OK;
    for (int k = 0; k < ov->nb && st == MF_OK; k++)
        if (ov->b[k].full)
            st = start(ov, k, now);
    for (int s = 0; s < 2 && st == MF_OK; s++) {
        int k = ov->open[s];
        if (k < 0 || ov->b[k].elems * (int64_t)mf_dtype_size(ov->b[k].dtype) < min_bytes)
            continue;
        ov->open[s] = -1;
        st = start(ov, k, now);
    }
    return st;
}

/* The walk's 'between' hook (another backward op follows): full buckets
 * start, started ones progress. */
static MfStatus on_between(void *ctx)
{
    MfOverlap *ov = ctx;
    MfStatus st = start_ready(ov, ov->bucket_bytes, false);
    MfProfSpan span;
    mf_prof_begin(&span);
    for (int k = 0; k < ov->nb && st == MF_OK; k++) {
        bool done;
        if (ov->b[k].req)
            st = mf_dist_progress(ov->b[k].req, &done);
    }
    mf_prof_end_op(&span, "MPIAllreduceWait", 0, 0);
    return st;
}

MfStatus mf_train_overlap_hooks(MfOverlap *ov, MfGradVar *pairs, int n, MfTapeHooks *hooks)
{
    size_t bytes = (size_t)(n ? n : 1) * sizeof *ov->grads;
    if (!(ov->grads = mf_alloc_zeroed(bytes)))
        return mf_err_nomem(WHO, bytes);
    ov->pairs = pairs;
    ov->npairs = n;
    *hooks = (MfTapeHooks){on_ready, on_between, ov};
    return MF_OK;
}

/* Bucket 'b''s averages into its pairs (the result itself for one
 * gradient, else a copy of its piece). */
static MfStatus scatter(MfOverlap *ov, Bucket *b)
{
    const char *at = mf_tensor_data(b->out);
    for (int j = 0; j < b->n; j++) {
        MfGradVar *p = &ov->pairs[b->idx[j]];
        MfTensor *g;
        if (b->n == 1) {   /* 'out' has the gradient's shape */
            mf_tensor_retain(b->out);
            g = b->out;
        } else {
            g = mf_tensor_new(p->grad->dtype, p->grad->rank, p->grad->shape);
            if (g)
                memcpy(mf_tensor_data(g), at, (size_t)grad_bytes(g));
        }
        if (!g)
            return MF_ENOMEM;
        at += grad_bytes(p->grad);
        mf_tensor_release(p->grad);
        p->grad = g;
    }
    return MF_OK;
}

MfStatus mf_train_overlap_finish(MfOverlap *ov, MfGradVar *pairs, int n)
{
    if (!ov->grads)   /* no walk ran */
        return mf_train_allreduce_gradients(pairs, n, ov->check, ov->fusion_bytes);
    MfStatus st = start_ready(ov, 0, true);   /* nothing left to overlap them with */
    for (int k = 0; k < ov->nb && st == MF_OK; k++) {
        Bucket *b = &ov->b[k];
        MfProfSpan span;
        mf_prof_begin(&span);
        st = mf_dist_wait(b->req);
        b->req = NULL;
        mf_prof_end_op(&span, "MPIAllreduceWait", 0, 0);
        if (st == MF_OK)
            st = scatter(ov, b);
    }
    if (st != MF_OK)
        mf_err_prefix(WHO);
    return st;
}
