/* collectives.c — allreduce, broadcast, allgather and broadcast_variables
 * on tensors (see dist.h). Each one: the signature exchange, then the MPI
 * call on a contiguous buffer, in pieces of at most 2^30 elements because
 * MPI counts are ints. A world of one process copies. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "dist_impl.h"


/* bool travels as bytes: sum and max are a logical or, min a logical and. */
MPI_Datatype mf_dist_mpi_type(MfDType dt)
{
    switch (dt) {
    case MF_FLOAT32: return MPI_FLOAT;
    case MF_FLOAT64: return MPI_DOUBLE;
    case MF_INT32: return MPI_INT32_T;
    case MF_INT64: return MPI_INT64_T;
    default: return MPI_UINT8_T;
    }
}

MPI_Op mf_dist_mpi_op(MfReduceOp op, MfDType dt)
{
    if (dt == MF_BOOL)
        return op == MF_REDUCE_MIN ? MPI_MIN : MPI_MAX;
    return op == MF_REDUCE_MAX ? MPI_MAX : op == MF_REDUCE_MIN ? MPI_MIN : MPI_SUM;
}

/* "float32 (3,4)" into 'buf'. */
static const char *describe(const MfTensor *t, char *buf, int cap)
{
    char shape[128];
    snprintf(buf, (size_t)cap, "%s %s", mf_dtype_name(t->dtype),
             mf_shape_str(t->rank, t->shape, shape, sizeof shape));
    return buf;
}

/* A power of two divides exactly as a multiplication by its inverse, which
 * vectorises better; other sizes divide. */
void mf_dist_divide(MfTensor *t, int size)
{
    int64_t n = mf_tensor_numel(t);
    bool pow2 = (size & (size - 1)) == 0;
    if (t->dtype == MF_FLOAT32) {
        float *p = mf_tensor_data(t), inv = 1.0f / (float)size;
        if (pow2)
            for (int64_t i = 0; i < n; i++)
                p[i] *= inv;
        else
            for (int64_t i = 0; i < n; i++)
                p[i] /= (float)size;
    } else {
        double *p = mf_tensor_data(t), inv = 1.0 / size;
        if (pow2)
            for (int64_t i = 0; i < n; i++)
                p[i] *= inv;
        else
            for (int64_t i = 0; i < n; i++)
                p[i] /= size;
    }
}

/* A contiguous 'in' is MPI's send buffer (no copy into 'out' first). */
MfStatus mf_dist_allreduce_into(const MfTensor *in, MfTensor *out, MfReduceOp op, uint64_t sig)
{
    bool direct = mf_dist_size() > 1 && mf_tensor_is_contiguous(in);
    if (!direct)
        mf_tensor_copy_into(out, in);
    if (mf_dist_size() == 1)
        return MF_OK;
    MfStatus st = sig ? mf_dist_check_hash("allreduce", sig, NULL, mf_tensor_numel(in))
                      : mf_dist_usable("allreduce");
    char *p = mf_tensor_data(out);
    const char *src = direct ? mf_tensor_data(in) : NULL;
    int64_t n = mf_tensor_numel(out);
    size_t es = mf_dtype_size(out->dtype);
    for (int64_t at = 0; at < n && st == MF_OK; at += PIECE) {
        int count = (int)(n - at < PIECE ? n - at : PIECE);
        size_t off = (size_t)at * es;
        int rc = MPI_Allreduce(direct ? src + off : MPI_IN_PLACE, p + off, count,
                               mf_dist_mpi_type(out->dtype), mf_dist_mpi_op(op, out->dtype),
                               MPI_COMM_WORLD);
        st = mf_dist_mpi_status(rc, "allreduce");
    }
    if (st == MF_OK && op == MF_REDUCE_MEAN)
        mf_dist_divide(out, mf_dist_size());
    return st;
}

static MfStatus bcast_bytes(void *data, int64_t n, MfDType dt, int root, const char *who)
{
    size_t es = mf_dtype_size(dt);
    MfStatus st = MF_OK;
    for (int64_t at = 0; at < n && st == MF_OK; at += PIECE) {
        int count = (int)(n - at < PIECE ? n - at : PIECE);
        int rc = MPI_Bcast((char *)data + (size_t)at * es, count, mf_dist_mpi_type(dt), root,
                           MPI_COMM_WORLD);
        st = mf_dist_mpi_status(rc, who);
    }
    return st;
}

MfStatus mf_dist_allreduce_attrs(const char *op, const MfTensor *t, bool check, MfAttrs *a)
{
    *a = mf_attrs_default();
    int k = op ? 0 : MF_REDUCE_MEAN;
    while (op && k < MF_NREDUCE && strcmp(mf_reduce_name((MfReduceOp)k), op) != 0)
        k++;
    if (k == MF_NREDUCE)
        return mf_err_set(MF_EARG, "allreduce: op must be \"mean\", \"sum\", \"max\" or \"min\", "
                          "got %s", op);
    a->reduce_op = k;
    if (check) {
        char text[256], desc[200];
        snprintf(text, sizeof text, "allreduce(%s) %s", mf_reduce_name((MfReduceOp)k),
                 describe(t, desc, sizeof desc));
        a->signature = mf_dist_signature(text);
    }
    return MF_OK;
}

MfStatus mf_dist_check_root(const char *who, int64_t root)
{
    if (root < 0 || root >= mf_dist_size())
        return mf_err_set(MF_EARG, "%s: root must be a rank in 0..%d, got %" PRId64, who,
                          mf_dist_size() - 1, root);
    return MF_OK;
}

/* broadcast and allgather move values now: a graph tensor has none yet. */
static MfStatus check_eager(const char *who, const MfTensor *t)
{
    if (t->node)
        return mf_err_set(MF_EARG, "%s: expected an eager tensor, got a graph tensor (run it "
                          "with a Session first)", who);
    return MF_OK;
}

MfStatus mf_dist_broadcast(MfTensor *t, int root, bool check, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_eager("broadcast", t);
    if (st == MF_OK)
        st = mf_dist_check_root("broadcast", root);
    char text[256], desc[200];
    snprintf(text, sizeof text, "broadcast(root=%d) %s", root, describe(t, desc, sizeof desc));
    if (st == MF_OK)
        st = check ? mf_dist_check("broadcast", text) : mf_dist_usable("broadcast");
    MfTensor *copy = st == MF_OK ? mf_tensor_clone(t) : NULL;
    if (st == MF_OK && !copy)
        st = MF_ENOMEM;
    if (st == MF_OK && mf_dist_size() > 1)
        st = bcast_bytes(mf_tensor_data(copy), mf_tensor_numel(copy), copy->dtype, root,
                         "broadcast");
    if (st != MF_OK)
        mf_tensor_release(copy);
    else
        *out = copy;
    return st;
}

/* Each process's first dimension ('rows'), gathered into 'all' (size). */
static MfStatus gather_rows(int64_t rows, int64_t *all)
{
    int rc = MPI_Allgather(&rows, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD);
    return mf_dist_mpi_status(rc, "allgather");
}

/* Element counts and displacements for MPI_Allgatherv; false when one does
 * not fit in an int. */
static bool gatherv_counts(const int64_t *rows, int64_t inner, int *counts, int *displs)
{
    int64_t at = 0;
    for (int i = 0; i < mf_dist_size(); i++) {
        int64_t c = rows[i] * inner;
        if (c > INT_MAX || at > INT_MAX)
            return false;
        counts[i] = (int)c;
        displs[i] = (int)at;
        at += c;
    }
    return true;
}

static MfStatus gather_into(MfTensor *src, const int64_t *rows, int64_t inner, MfTensor *out)
{
    int size = mf_dist_size();
    int *counts = mf_alloc(2 * (size_t)size * sizeof *counts);
    if (!counts)
        return mf_err_nomem("allgather", 2ull * (unsigned)size * sizeof *counts);
    MfStatus st = MF_OK;
    if (!gatherv_counts(rows, inner, counts, counts + size))
        st = mf_err_set(MF_ESHAPE, "allgather: more than %d elements in all (MPI counts are "
                        "ints)", INT_MAX);
    if (st == MF_OK) {
        int rc = MPI_Allgatherv(mf_tensor_data(src), counts[mf_dist_rank()],
                                mf_dist_mpi_type(src->dtype), mf_tensor_data(out), counts,
                                counts + size, mf_dist_mpi_type(src->dtype), MPI_COMM_WORLD);
        st = mf_dist_mpi_status(rc, "allgather");
    }
    mf_dealloc(counts, 2 * (size_t)size * sizeof *counts);
    return st;
}

/* The signature of an allgather: the shape without its first dimension. */
static void allgather_text(const MfTensor *t, char *text, int cap)
{
    char shape[128];
    int rank = t->rank ? t->rank - 1 : 0;
    snprintf(text, (size_t)cap, "allgather %s (?%s%s", mf_dtype_name(t->dtype),
             rank ? "," : "", mf_shape_str(rank, t->shape + (t->rank ? 1 : 0), shape,
                                           sizeof shape) + 1);
}

MfStatus mf_dist_allgather(MfTensor *t, bool check, MfTensor **out)
{
    *out = NULL;
    if (check_eager("allgather", t) != MF_OK)
        return MF_EARG;
    int size = mf_dist_size();
    char text[256];
    allgather_text(t, text, sizeof text);
    MfStatus st = check ? mf_dist_check("allgather", text) : mf_dist_usable("allgather");
    int64_t rows0 = t->rank ? t->shape[0] : 1, inner = mf_tensor_numel(t) / (rows0 ? rows0 : 1);
    if (rows0 == 0)
        inner = mf_shape_numel(t->rank - 1, t->shape + 1);
    int64_t *rows = mf_alloc((size_t)size * sizeof *rows);
    if (st == MF_OK && !rows)
        st = mf_err_nomem("allgather", (unsigned long long)size * sizeof *rows);
    if (st == MF_OK)
        st = size > 1 ? gather_rows(rows0, rows) : (rows[0] = rows0, MF_OK);
    int64_t shape[MF_MAX_RANK] = {0};
    for (int i = 0; i < size && st == MF_OK; i++)
        shape[0] += rows[i];
    for (int i = 1; i < t->rank; i++)
        shape[i] = t->shape[i];
    MfTensor *src = st == MF_OK ? mf_tensor_contiguous(t) : NULL;
    MfTensor *res = src ? mf_tensor_new(t->dtype, t->rank ? t->rank : 1, shape) : NULL;
    if (st == MF_OK && !res)
        st = MF_ENOMEM;
    if (st == MF_OK && size > 1)
        st = gather_into(src, rows, inner, res);
    else if (st == MF_OK)
        memcpy(mf_tensor_data(res), mf_tensor_data(src),
               (size_t)mf_tensor_numel(src) * mf_dtype_size(src->dtype));
    mf_tensor_release(src);
    mf_dealloc(rows, (size_t)size * sizeof *rows);
    if (st == MF_OK)
        *out = res;
    else
        mf_tensor_release(res);
    return st;
}

/* "broadcast_variables(root=0) w float32 (2,3); b float32 (3)" into a new
 * string (mf_alloc'd, 'cap' bytes). */
static char *variables_text(int n, MfVariable *const *vars, int root, size_t *cap)
{
    *cap = 64 + (size_t)n * 200;
    for (int i = 0; i < n; i++)
        *cap += strlen(vars[i]->name);
    char *text = mf_alloc(*cap);
    if (!text)
        return NULL;
    size_t at = (size_t)snprintf(text, *cap, "broadcast_variables(root=%d)", root);
    for (int i = 0; i < n; i++) {
        char desc[200];
        at += (size_t)snprintf(text + at, *cap - at, "%s %s %s", i ? ";" : "", vars[i]->name,
                               describe(vars[i]->value, desc, sizeof desc));
    }
    return text;
}

static MfStatus check_variables(int n, MfVariable *const *vars)
{
    for (int i = 0; i < n; i++)
        if (!vars[i]->value || vars[i]->value->node || !vars[i]->value->storage)
            return mf_err_set(MF_EARG, "broadcast_variables: variable %d ('%s') is not an eager "
                              "Variable with a value (graph Variables: pass {session = sess})",
                              i + 1, vars[i]->name);
    return MF_OK;
}

MfStatus mf_dist_broadcast_variables(int n, MfVariable *const *vars, int root, bool check)
{
    MfStatus st = mf_dist_check_root("broadcast_variables", root);
    if (st == MF_OK)
        st = check_variables(n, vars);
    if (st != MF_OK || mf_dist_size() == 1)
        return st;
    size_t cap = 0;
    char *text = check ? variables_text(n, vars, root, &cap) : NULL;
    if (check)
        st = text ? mf_dist_check("broadcast_variables", text) : MF_ENOMEM;
    else
        st = mf_dist_usable("broadcast_variables");
    mf_dealloc(text, cap);
    for (int i = 0; i < n && st == MF_OK; i++) {
        MfTensor *x = mf_tensor_clone(vars[i]->value);
        st = x ? bcast_bytes(mf_tensor_data(x), mf_tensor_numel(x), x->dtype, root,
                             "broadcast_variables") : MF_ENOMEM;
        if (st == MF_OK)
            st = mf_variable_assign(vars[i], x);
        mf_tensor_release(x);
    }
    return st;
}
