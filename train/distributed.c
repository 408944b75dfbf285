/* distributed.c — DistributedOptimizer's part of a step: the gradients of
 * compute_gradients averaged over every process (distributed/), between compute
 * and apply, so clipping and apply_gradients see averaged gradients.
 *
 * Tensor fusion, as Horovod does it: the gradients of one dtype are
 * flattened and concatenated into one buffer (several when they exceed
 * 'fusion_bytes'), reduced by one MPIAllreduce (mean), then sliced back
 * into gradients of the variables' shapes. Everything is done with ops, so
 * the same code runs eagerly and adds nodes to a graph (Reshape, ConcatV2,
 * MPIAllreduce, Slice, Reshape), where print(g) and the profiler show the
 * allreduce. Each buffer's signature ("w float32 (2,3); b float32 (3)") is
 * exchanged before it is reduced when 'check' is on (dist.h).
 *
 * Graph mode with overlap (mf_train_allreduce_gradients_overlapped): the
 * buckets of train/overlap.c, in the order the backward pass produces the
 * gradients (their nodes' creation order), each reduced by an
 * MPIAllreduceStart / MPIAllreduceWait pair of nodes, which the executor
 * runs as early and as late as it can (graph/exec.c): the allreduce of the
 * last layers travels while the first layers' gradients are computed. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "distributed/dist.h"
#include "graph/graph.h"
#include "train.h"

/* One fusion buffer: the pairs idx[0..n). */
typedef struct Bucket {
    const int *idx;
    int n;
} Bucket;

static MfStatus flatten(MfTensor *g, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.nints = 1;
    a.ints[0] = mf_tensor_numel(g);
    return mf_op1(MF_OP_RESHAPE, 1, &g, &a, out);
}

static MfStatus unflatten(MfTensor *flat, int64_t at, const MfTensor *like, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.nints = 2;
    a.ints[0] = at;
    a.ints[1] = mf_tensor_numel(like);
    MfTensor *piece = NULL;
    MfStatus st = mf_op1(MF_OP_SLICE, 1, &flat, &a, &piece);
    a = mf_attrs_default();
    a.nints = like->rank;
    memcpy(a.ints, like->shape, (size_t)like->rank * sizeof *like->shape);
    if (st == MF_OK)
        st = mf_op1(MF_OP_RESHAPE, 1, &piece, &a, out);
    mf_tensor_release(piece);
    return st;
}

/* The signature text of a bucket into 'buf' (truncated at 'cap'; the
 * variables' names and shapes, and the bucket's place in the step). */
static void bucket_text(const MfGradVar *pairs, const Bucket *b, int k, int nb, char *buf,
                        size_t cap)
{
    size_t at = (size_t)snprintf(buf, cap, "gradients (buffer %d of %d):", k + 1, nb);
    for (int i = 0; i < b->n && at < cap; i++) {
        const MfGradVar *p = &pairs[b->idx[i]];
        char shape[128];
        at += (size_t)snprintf(buf + at, cap - at, "%s %s %s %s", i ? ";" : "", p->var->name,
                               mf_dtype_name(p->grad->dtype),
                               mf_shape_str(p->grad->rank, p->grad->shape, shape, 128));
    }
}

/* Flattens and concatenates the bucket's gradients into '*buf' (owned). */
static MfStatus pack(const MfGradVar *pairs, const Bucket *b, MfTensor **buf)
{
    MfTensor **flat = mf_alloc_zeroed((size_t)b->n * sizeof *flat);
    if (!flat)
        return mf_err_nomem("DistributedOptimizer", (size_t)b->n * sizeof *flat);
    MfStatus st = MF_OK;
    for (int i = 0; i < b->n && st == MF_OK; i++)
        st = flatten(pairs[b->idx[i]].grad, &flat[i]);
    MfAttrs a = mf_attrs_default();
    if (st == MF_OK && b->n == 1) {
        mf_tensor_retain(flat[0]);
        *buf = flat[0];
    } else if (st == MF_OK) {
        st = mf_op1(MF_OP_CONCAT, b->n, flat, &a, buf);
    }
    for (int i = 0; i < b->n; i++)
        mf_tensor_release(flat[i]);
    mf_dealloc(flat, (size_t)b->n * sizeof *flat);
    return st;
}

/* Reduces one bucket and puts the averaged gradients into 'pairs': one
 * MPIAllreduce, or with 'started' a start and a wait (a gradient alone in
 * its bucket is reduced in its shape: the start then follows the node that
 * computes it, nothing in between). */
static MfStatus reduce_bucket(MfGradVar *pairs, const Bucket *b, int k, int nb, bool check,
                              bool started)
{
    MfTensor *buf = NULL, *sum = NULL;
    bool whole = started && b->n == 1;
    if (whole)
        mf_tensor_retain(buf = pairs[b->idx[0]].grad);
    MfStatus st = whole ? MF_OK : pack(pairs, b, &buf);
    MfAttrs a = mf_attrs_default();
    a.reduce_op = MF_REDUCE_MEAN;
    if (st == MF_OK && check && mf_dist_size() > 1) {
        char text[4096];
        bucket_text(pairs, b, k, nb, text, sizeof text);
        a.signature = mf_dist_signature(text);
    }
    if (st == MF_OK && !started)
        st = mf_op1(MF_OP_ALLREDUCE, 1, &buf, &a, &sum);
    if (st == MF_OK && started) {
        MfTensor *going = NULL;
        st = mf_op1(MF_OP_ALLREDUCE_START, 1, &buf, &a, &going);
        if (st == MF_OK)
            st = mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &going, &a, &sum);
        mf_tensor_release(going);
    }
    int64_t at = 0;
    for (int i = 0; i < b->n && st == MF_OK; i++) {
        MfGradVar *p = &pairs[b->idx[i]];
        MfTensor *g = NULL;
        if (whole)
            mf_tensor_retain(g = sum);
        else
            st = unflatten(sum, at, p->grad, &g);
        at += mf_tensor_numel(p->grad);
        if (st == MF_OK) {
            mf_tensor_release(p->grad);
            p->grad = g;
        }
    }
    mf_tensor_release(buf);
    mf_tensor_release(sum);
    return st;
}

/* Indices of the pairs with a gradient of dtype 'dt', in order. */
static int select_dtype(const MfGradVar *pairs, int n, MfDType dt, int *idx)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (pairs[i].grad && pairs[i].grad->dtype == dt)
            idx[m++] = i;
    return m;
}

/* Cuts 'idx[0..m)' into buckets of at most 'limit' bytes (a larger
 * gradient has one of its own); returns the count. */
static int cut(const MfGradVar *pairs, const int *idx, int m, int64_t limit, Bucket *out)
{
    int nb = 0;
    int64_t bytes = 0;
    for (int i = 0; i < m; i++) {
        const MfTensor *g = pairs[idx[i]].grad;
        int64_t b = mf_tensor_numel(g) * (int64_t)mf_dtype_size(g->dtype);
        if (nb == 0 || (limit > 0 && bytes + b > limit && bytes > 0)) {
            out[nb++] = (Bucket){idx + i, 0};
            bytes = 0;
        }
        out[nb - 1].n++;
        bytes += b;
    }
    return nb;
}

MfStatus mf_train_allreduce_gradients(MfGradVar *pairs, int n, bool check,
                                      int64_t fusion_bytes)
{
    if (n == 0)
        return MF_OK;
    int *idx = mf_alloc((size_t)n * sizeof *idx);
    Bucket *buckets = mf_alloc((size_t)n * sizeof *buckets);
    if (!idx || !buckets) {
        mf_dealloc(idx, (size_t)n * sizeof *idx);
        mf_dealloc(buckets, (size_t)n * sizeof *buckets);
        return mf_err_nomem("DistributedOptimizer", (size_t)n * (sizeof *idx + sizeof *buckets));
    }
    const MfDType dts[] = {MF_FLOAT32, MF_FLOAT64};
    int nb = 0, used = 0;
    for (int d = 0; d < 2; d++) {
        int m = select_dtype(pairs, n, dts[d], idx + used);
        nb += cut(pairs, idx + used, m, fusion_bytes, buckets + nb);
        used += m;
    }
    MfStatus st = MF_OK;
    for (int k = 0; k < nb && st == MF_OK; k++)
        st = reduce_bucket(pairs, &buckets[k], k, nb, check, false);
    mf_dealloc(idx, (size_t)n * sizeof *idx);
    mf_dealloc(buckets, (size_t)n * sizeof *buckets);
    if (st != MF_OK)
        mf_err_prefix("DistributedOptimizer");
    return st;
}

/* ---- graph mode, overlapped ----------------------------------------------------- */

static int64_t grad_bytes(const MfTensor *g)
{
    return mf_tensor_numel(g) * (int64_t)mf_dtype_size(g->dtype);
}

static int node_index(const MfTensor *t)
{
    return ((const MfNode *)t->node)->index;
}

/* The float gradients' pair indices into 'idx', in their nodes' creation
 * order (insertion sort: a few per model); returns the count. */
static int backward_order(const MfGradVar *pairs, int n, int *idx)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const MfTensor *g = pairs[i].grad;
        if (!g || !g->node || (g->dtype != MF_FLOAT32 && g->dtype != MF_FLOAT64))
            continue;
        int j = m++;
        for (; j > 0 && node_index(pairs[idx[j - 1]].grad) > node_index(g); j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    return m;
}

/* Appends the 'n' pairs of 'open' as a bucket (their indices copied to
 * 'order' at '*used'). */
static void emit(const int *open, int n, int *order, int *used, Bucket *out, int *nb)
{
    if (n == 0)
        return;
    memcpy(order + *used, open, (size_t)n * sizeof *open);
    out[(*nb)++] = (Bucket){order + *used, n};
    *used += n;
}

/* train/overlap.c's buckets: in the order of 'idx[0..m)', a gradient of
 * 'limit' bytes or more alone, smaller ones packed per dtype, a pack
 * closed when it reaches 'limit' (the rest at the end). 'open' has room
 * for 2 m entries. Returns the count. */
static int cut_started(const MfGradVar *pairs, const int *idx, int m, int64_t limit, int *order,
                       int *open, Bucket *out)
{
    int nb = 0, used = 0, nopen[2] = {0, 0};
    int64_t bytes[2] = {0, 0};
    for (int i = 0; i < m; i++) {
        const MfTensor *g = pairs[idx[i]].grad;
        int d = g->dtype == MF_FLOAT32 ? 0 : 1;
        if (grad_bytes(g) >= limit) {
            emit(&idx[i], 1, order, &used, out, &nb);
            continue;
        }
        open[d * m + nopen[d]++] = idx[i];
        bytes[d] += grad_bytes(g);
        if (bytes[d] >= limit) {
            emit(open + d * m, nopen[d], order, &used, out, &nb);
            nopen[d] = 0;
            bytes[d] = 0;
        }
    }
    for (int d = 0; d < 2; d++)
        emit(open + d * m, nopen[d], order, &used, out, &nb);
    return nb;
}

MfStatus mf_train_allreduce_gradients_overlapped(MfGradVar *pairs, int n, bool check,
                                                 int64_t bucket_bytes)
{
    if (n == 0)
        return MF_OK;
    size_t bytes = (size_t)n * (4 * sizeof(int) + sizeof(Bucket));
    int *idx = mf_alloc(bytes);
    if (!idx)
        return mf_err_nomem("DistributedOptimizer", bytes);
    int *order = idx + n, *open = idx + 2 * n;
    Bucket *buckets = (Bucket *)(void *)(idx + 4 * n);
    int m = backward_order(pairs, n, idx);
    int nb = cut_started(pairs, idx, m, bucket_bytes, order, open, buckets);
    MfStatus st = MF_OK;
    for (int k = 0; k < nb && st == MF_OK; k++)
        st = reduce_bucket(pairs, &buckets[k], k, nb, check, true);
    mf_dealloc(idx, bytes);
    if (st != MF_OK)
        mf_err_prefix("DistributedOptimizer");
    return st;
}

/* The graph Variables' values in 'sess', as broadcast_variables does for
 * eager ones: one exchange for the list, then one broadcast each. */
MfStatus mf_train_broadcast_session(MfSession *sess, int n, MfVariable *const *vars, int root,
                                    bool check)
{
    MfStatus st = MF_OK;
    MfTensor **vals = mf_alloc_zeroed((size_t)(n ? n : 1) * sizeof *vals);
    if (!vals)
        return mf_err_nomem("broadcast_variables", (size_t)n * sizeof *vals);
    for (int i = 0; i < n && st == MF_OK; i++) {
        const MfNode *node = vars[i]->value ? vars[i]->value->node : NULL;
        st = node ? mf_session_variable_value(sess, node, &vals[i])
                  : mf_err_set(MF_EARG, "broadcast_variables: variable %d ('%s') is not a "
                               "Variable of the session's graph", i + 1, vars[i]->name);
    }
    char text[4096];
    size_t at = (size_t)snprintf(text, sizeof text, "broadcast_variables(root=%d)", root);
    for (int i = 0; i < n && st == MF_OK && at < sizeof text; i++) {
        char shape[128];
        at += (size_t)snprintf(text + at, sizeof text - at, "%s %s %s %s", i ? ";" : "",
                               vars[i]->name, mf_dtype_name(vals[i]->dtype),
                               mf_shape_str(vals[i]->rank, vals[i]->shape, shape, 128));
    }
    if (st == MF_OK && check)
        st = mf_dist_check("broadcast_variables", text);
    for (int i = 0; i < n && st == MF_OK; i++) {
        MfTensor *x = NULL;
        st = mf_dist_broadcast(vals[i], root, false, &x);
        if (st == MF_OK)
            st = mf_session_set_variable(sess, vars[i]->value->node, x);
        mf_tensor_release(x);
    }
    for (int i = 0; i < n; i++)
        mf_tensor_release(vals[i]);
    mf_dealloc(vals, (size_t)(n ? n : 1) * sizeof *vals);
    return st;
}
