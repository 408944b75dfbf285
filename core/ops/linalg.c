/* linalg.c — matrix products and the trace: the ops MatMul, BatchMatMulV2 and
 * Trace, and the composites 'mf_matmul', 'mf_trace', 'mf_tensordot' (see
 * linalg.h).
 *
 * Float GEMMs go to OpenBLAS through mf_gemm (core/gemm.h). An operand whose
 * last two axes form a row-major or a column-major matrix with unit stride (a
 * contiguous tensor, or a transposed view of one) is handed to BLAS as it is,
 * the transpose folded into BLAS's flag; any other layout is copied to a
 * contiguous tensor first. Sizes are checked against BLAS's int before any
 * call. Integer products use a blocked loop in unsigned arithmetic, so they
 * wrap on overflow as TensorFlow's integer ops do, and read any strides.
 * A batched product is a loop of GEMMs; a batch axis of size 1 (or a rank-2
 * operand) is reused for every batch.
 *
 * Attributes: transpose_a, transpose_b (MatMul and BatchMatMulV2). */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../gemm.h"
#include "common.h"
#include "linalg.h"
#include "linalg_grad.h"
#include "view.h"

#define SHAPE_BUF 160

/* ---- shape inference -------------------------------------------------------- */

/* MatMul takes two matrices; BatchMatMulV2 two tensors of rank 2 or more. */
static MfStatus check_rank(const MfOpCall *c, bool batched)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    if (batched ? a->rank >= 2 && b->rank >= 2 : a->rank == 2 && b->rank == 2)
        return MF_OK;
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "matmul: expected %s, got shapes %s and %s (ranks %d and %d)",
                      batched ? "matrices or batches of matrices (rank 2 or more)"
                              : "two matrices (rank 2)",
                      mf_shape_str(a->rank, a->shape, sa, sizeof sa),
                      mf_shape_str(b->rank, b->shape, sb, sizeof sb), a->rank, b->rank);
}

/* The inner sizes of op(a) and op(b) agree (unknown sizes pass). */
static MfStatus check_inner(const MfOpCall *c)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    bool ta = c->attrs->transpose_a, tb = c->attrs->transpose_b;
    int64_t ka = a->shape[a->rank - (ta ? 2 : 1)];
    int64_t kb = b->shape[b->rank - (tb ? 1 : 2)];
    if (ka < 0 || kb < 0 || ka == kb)
        return MF_OK;
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    mf_shape_str(a->rank, a->shape, sa, sizeof sa);
    mf_shape_str(b->rank, b->shape, sb, sizeof sb);
    if (!ta && !tb)
        return mf_err_set(MF_ESHAPE, "matmul: inner dimensions differ: %s x %s", sa, sb);
    return mf_err_set(MF_ESHAPE, "matmul: inner dimensions differ: %s x %s with %s (%lld vs %lld)",
                      sa, sb, ta && tb ? "transpose_a and transpose_b"
                                       : ta ? "transpose_a" : "transpose_b",
                      (long long)ka, (long long)kb);
}

/* The output's batch axes: those of a and b (all axes but the last two)
 * broadcast as NumPy's matmul broadcasts them, trailing axes aligned, a
 * missing axis or a size of 1 stretching; unknown (-1) stays unknown unless
 * the other side fixes it. Writes 'nbr' sizes to 'out'. */
static MfStatus batch_shape(const MfOpCall *c, int nbr, int64_t *out)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    for (int i = 0; i < nbr; i++) {
        int ia = a->rank - 2 - nbr + i, ib = b->rank - 2 - nbr + i;
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da == db || db == 1) {
            out[i] = da;
        } else if (da == 1) {
            out[i] = db;
        } else if (da < 0 || db < 0) {
            out[i] = da < 0 ? db : da;
        } else {
            char sa[SHAPE_BUF], sb[SHAPE_BUF];
            return mf_err_set(MF_ESHAPE, "matmul: batch dimensions differ: %s x %s (batch sizes "
                              "%lld and %lld do not broadcast)",
                              mf_shape_str(a->rank, a->shape, sa, sizeof sa),
                              mf_shape_str(b->rank, b->shape, sb, sizeof sb), (long long)da,
                              (long long)db);
        }
    }
    return MF_OK;
}

/* MatMul (two matrices) and BatchMatMulV2 (any ranks from 2). */
static MfStatus infer_product(MfOpCall *c, bool batched)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    MfStatus st = check_rank(c, batched);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, a, b);
    if (st == MF_OK)
        st = mf_check_dtype(c, a, MF_NUMERIC, "a numeric dtype (float32, float64, int32, int64)");
    if (st == MF_OK)
        st = check_inner(c);
    MfTensorSpec *o = &c->out[0];
    int nbr = (a->rank > b->rank ? a->rank : b->rank) - 2;
    if (st == MF_OK)
        st = batch_shape(c, nbr, o->shape);
    if (st != MF_OK)
        return st;
    o->shape[nbr] = a->shape[a->rank - (c->attrs->transpose_a ? 1 : 2)];
    o->shape[nbr + 1] = b->shape[b->rank - (c->attrs->transpose_b ? 2 : 1)];
    o->rank = nbr + 2;
    o->dtype = a->dtype;
    c->noutputs = 1;
    return MF_OK;
}

static MfStatus matmul_infer(MfOpCall *c)
{
    return infer_product(c, false);
}

static MfStatus batch_matmul_infer(MfOpCall *c)
{
    return infer_product(c, true);
}

/* ---- operands ------------------------------------------------------------------ */

/* op(X) of one input, for every batch of the output: element (i, j) of the
 * batch at output batch index (k_1, ..., k_nbr) is at
 * base + sum k_d*bstrides[d] + i*rs + j*cs (in elements); a batch axis the
 * input lacks or stretches from 1 has stride 0. */
typedef struct Operand {
    const char *base;
    int64_t bstrides[MF_MAX_RANK];
    int64_t rows, cols;
    int64_t rs, cs;
} Operand;

/* The batch axes of the output, shared by both operands. */
typedef struct Batches {
    int rank;
    int64_t shape[MF_MAX_RANK];
    int64_t count;
} Batches;

static Batches batches(const MfTensor *out)
{
    Batches b = {.rank = out->rank - 2, .count = 1};
    for (int d = 0; d < b.rank; d++) {
        b.shape[d] = out->shape[d];
        b.count *= out->shape[d];
    }
    return b;
}

static Operand operand(const MfTensor *t, bool trans, const Batches *bt)
{
    int r = t->rank;
    int ri = r - (trans ? 1 : 2), ci = r - (trans ? 2 : 1);
    Operand o = {
        .base = mf_tensor_data(t),
        .rows = t->shape[ri], .cols = t->shape[ci],
        .rs = t->strides[ri], .cs = t->strides[ci],
    };
    for (int d = 0; d < bt->rank; d++) {
        int it = r - 2 - bt->rank + d;
        o.bstrides[d] = it < 0 || t->shape[it] != bt->shape[d] ? 0 : t->strides[it];
    }
    return o;
}

/* The element offset of batch 'k' (row-major over the batch axes). */
static int64_t batch_offset(const Operand *o, const Batches *bt, int64_t k)
{
    int64_t off = 0;
    for (int d = bt->rank - 1; d >= 0 && k > 0; d--) {
        off += (k % bt->shape[d]) * o->bstrides[d];
        k /= bt->shape[d];
    }
    return off;
}

/* How BLAS reads op(X): as a row-major matrix (NoTrans, ld = rs) or as the
 * transpose of one (Trans, ld = cs). False when neither fits. */
static bool blas_layout(const Operand *o, CBLAS_TRANSPOSE *tr, int64_t *ld)
{
    int64_t rs = o->rs, cs = o->cs;
    if (o->cols == 1)
        cs = 1; /* a stride along a size-1 axis is never used */
    if (o->rows == 1)
        rs = cs == 1 ? o->cols : 1;
    if (cs == 1 && rs >= o->cols && rs <= INT_MAX) {
        *tr = CblasNoTrans;
        *ld = rs;
        return true;
    }
    if (rs == 1 && cs >= o->rows && cs <= INT_MAX) {
        *tr = CblasTrans;
        *ld = cs;
        return true;
    }
    return false;
}

typedef struct BlasArg {
    Operand op;
    CBLAS_TRANSPOSE tr;
    int64_t ld;
} BlasArg;

/* Prepares input 'i' for BLAS; when its layout does not fit, reads a
 * contiguous copy instead, left in '*tmp' (owned by the caller). */
static MfStatus blas_arg(const MfOpCall *c, int i, const Batches *bt, MfTensor **tmp,
                         BlasArg *arg)
{
    MfTensor *t = c->inputs[i];
    bool trans = i == 0 ? c->attrs->transpose_a : c->attrs->transpose_b;
    arg->op = operand(t, trans, bt);
    if (blas_layout(&arg->op, &arg->tr, &arg->ld))
        return MF_OK;
    *tmp = mf_tensor_clone(t);
    if (!*tmp)
        return MF_ENOMEM;
    arg->op = operand(*tmp, trans, bt);
    if (!blas_layout(&arg->op, &arg->tr, &arg->ld))
        return mf_err_set(MF_EINTERNAL, "matmul: no BLAS layout for a contiguous operand");
    return MF_OK;
}

/* True when every batch of 'a' follows the previous one's last row, ld
 * elements per row, and b is one matrix for every batch: then the batches of
 * a are the rows of one (count * M) x K matrix and one GEMM computes them
 * all (x W for a batch of sequences x, without a copy). */
static bool rows_fold(const BlasArg *a, const BlasArg *b, const Batches *bt, int64_t M)
{
    if (bt->count <= 1 || a->tr != CblasNoTrans)
        return false;
    int64_t next = M * a->ld;
    for (int d = bt->rank - 1; d >= 0; d--) {
        if (b->op.bstrides[d] != 0 && bt->shape[d] != 1)
            return false;
        if (bt->shape[d] == 1)
            continue;
        if (a->op.bstrides[d] != next)
            return false;
        next *= bt->shape[d];
    }
    return true;
}

/* ---- kernels --------------------------------------------------------------------- */

static MfStatus run_blas(const MfOpCall *c, MfTensor *out, const BlasArg *a, const BlasArg *b,
                         int64_t offa, int64_t offb, int64_t offc, int64_t M, int64_t N,
                         int64_t K)
{
    int64_t es = (int64_t)mf_dtype_size(out->dtype);
    MfGemm g = {
        .op = mf_op_table[c->op]->name, .dtype = out->dtype,
        .trans_a = a->tr == CblasTrans, .trans_b = b->tr == CblasTrans,
        .M = M, .N = N, .K = K, .alpha = 1.0, .beta = 0.0,
        .A = a->op.base + offa * es, .lda = a->ld,
        .B = b->op.base + offb * es, .ldb = b->ld,
        .C = (char *)mf_tensor_data(out) + offc * es, .ldc = N,
    };
    return mf_gemm(&g);
}

/* One GEMM per batch, or one for all when the batches fold into rows. */
static MfStatus blas_batches(const MfOpCall *c, MfTensor *out, const Batches *bt,
                             const BlasArg *a, const BlasArg *b, int64_t M, int64_t N, int64_t K)
{
    if (rows_fold(a, b, bt, M) && bt->count * M <= INT_MAX)
        return run_blas(c, out, a, b, 0, 0, 0, bt->count * M, N, K);
    MfStatus st = MF_OK;
    for (int64_t k = 0; st == MF_OK && k < bt->count; k++) {
        if (k > 0 && mf_interrupted)
            st = mf_err_set(MF_EINTR, "matmul: interrupted");
        else
            st = run_blas(c, out, a, b, batch_offset(&a->op, bt, k),
                          batch_offset(&b->op, bt, k), k * M * N, M, N, K);
    }
    return st;
}

static MfStatus float_gemm(const MfOpCall *c, MfTensor *out, const Batches *bt, int64_t M,
                           int64_t N, int64_t K)
{
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return mf_err_set(MF_EARG, "matmul: a %lld x %lld by %lld x %lld product is too large "
                          "for BLAS (each size must be below 2^31)", (long long)M, (long long)K,
                          (long long)K, (long long)N);
    MfTensor *tmp[2] = {NULL, NULL};
    BlasArg a, b;
    MfStatus st = blas_arg(c, 0, bt, &tmp[0], &a);
    if (st == MF_OK)
        st = blas_arg(c, 1, bt, &tmp[1], &b);
    if (st == MF_OK)
        st = blas_batches(c, out, bt, &a, &b, M, N, K);
    mf_tensor_release(tmp[0]);
    mf_tensor_release(tmp[1]);
    return st;
}

/* Blocks keep a strip of B's rows and of the output row in cache. */
#define KBLOCK 128
#define NBLOCK 512

/* o (M x N, contiguous) = op(A) x op(B), wrapping: 'T' the element type,
 * 'U' the unsigned type of the same width. */
#define INT_GEMM_BODY(T, U)                                                              \
    for (int64_t i = 0; i < M * N; i++)                                                  \
        o[i] = 0;                                                                        \
    for (int64_t k0 = 0; k0 < K; k0 += KBLOCK) {                                         \
        int64_t k1 = k0 + KBLOCK < K ? k0 + KBLOCK : K;                                  \
        for (int64_t j0 = 0; j0 < N; j0 += NBLOCK) {                                     \
            int64_t j1 = j0 + NBLOCK < N ? j0 + NBLOCK : N;                              \
            for (int64_t i = 0; i < M; i++) {                                            \
                T *orow = o + i * N;                                                     \
                for (int64_t k = k0; k < k1; k++) {                                      \
                    U x = (U)pa[i * a->rs + k * a->cs];                                  \
                    const T *brow = pb + k * b->rs;                                      \
                    if (b->cs == 1)                                                      \
                        for (int64_t j = j0; j < j1; j++)                                \
                            orow[j] = (T)((U)orow[j] + x * (U)brow[j]);                  \
                    else                                                                 \
                        for (int64_t j = j0; j < j1; j++)                                \
                            orow[j] = (T)((U)orow[j] + x * (U)brow[j * b->cs]);          \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }

static void igemm_i32(const Operand *a, const Operand *b, const int32_t *pa, const int32_t *pb,
                      int32_t *o, int64_t M, int64_t N, int64_t K)
{
    INT_GEMM_BODY(int32_t, uint32_t)
}

static void igemm_i64(const Operand *a, const Operand *b, const int64_t *pa, const int64_t *pb,
                      int64_t *o, int64_t M, int64_t N, int64_t K)
{
    INT_GEMM_BODY(int64_t, uint64_t)
}

static MfStatus int_gemm(const MfOpCall *c, MfTensor *out, const Batches *bt, int64_t M,
                         int64_t N, int64_t K)
{
    Operand a = operand(c->inputs[0], c->attrs->transpose_a, bt);
    Operand b = operand(c->inputs[1], c->attrs->transpose_b, bt);
    for (int64_t k = 0; k < bt->count; k++) {
        if (k > 0 && mf_interrupted)
            return mf_err_set(MF_EINTR, "matmul: interrupted");
        int64_t oa = batch_offset(&a, bt, k), ob = batch_offset(&b, bt, k);
        if (out->dtype == MF_INT32)
            igemm_i32(&a, &b, (const int32_t *)a.base + oa, (const int32_t *)b.base + ob,
                      (int32_t *)mf_tensor_data(out) + k * M * N, M, N, K);
        else
            igemm_i64(&a, &b, (const int64_t *)a.base + oa, (const int64_t *)b.base + ob,
                      (int64_t *)mf_tensor_data(out) + k * M * N, M, N, K);
    }
    return MF_OK;
}

/* MatMul and BatchMatMulV2: the output arrives contiguous, batch axes first. */
static MfStatus matmul_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    Batches bt = batches(out);
    int r = out->rank;
    int64_t M = out->shape[r - 2], N = out->shape[r - 1];
    const MfTensor *a = c->inputs[0];
    int64_t K = a->shape[a->rank - (c->attrs->transpose_a ? 2 : 1)];
    if (bt.count == 0 || M == 0 || N == 0)
        return MF_OK;
    if (K == 0) {
        memset(mf_tensor_data(out), 0, (size_t)(bt.count * M * N) * mf_dtype_size(out->dtype));
        return MF_OK;
    }
    if (mf_dtype_is_int(out->dtype))
        return int_gemm(c, out, &bt, M, N, K);
    return float_gemm(c, out, &bt, M, N, K);
}

/* 2*M*N*K FLOPs per GEMM; the bytes read and written. */
static MfCost matmul_cost(const MfOpCall *c)
{
    const MfTensor *a = c->inputs[0];
    int64_t K = a->shape[a->rank - (c->attrs->transpose_a ? 2 : 1)];
    MfCost cost = mf_cost_elementwise(c);
    cost.flops = 2.0 * (double)mf_shape_numel(c->out[0].rank, c->out[0].shape) *
                 (double)(K > 0 ? K : 0);
    return cost;
}

static const MfAttrDef matmul_attrs[] = {
    /* adjoint_a/b are tf.linalg.matmul's names: the conjugate transpose, which
     * for real dtypes is the transpose */
    {"transpose_a", MF_ATTR_BOOL, 0, MF_ATTR_AT(transpose_a), 0, 0, NULL, "adjoint_a"},
    {"transpose_b", MF_ATTR_BOOL, 0, MF_ATTR_AT(transpose_b), 0, 0, NULL, "adjoint_b"},
};

/* A vector operand of matmul: a scalar is refused, and so is a transpose
 * flag on a vector (a vector is a row on the left, a column on the right,
 * whatever the flag would say). */
static MfStatus check_vector(const MfTensor *a, const MfTensor *b, bool ta, bool tb)
{
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    if (a->rank == 0 || b->rank == 0)
        return mf_err_set(MF_ESHAPE, "matmul: expected vectors, matrices or batches of matrices "
                          "(rank 1 or more), got shapes %s and %s (ranks %d and %d); scale by a "
                          "scalar with mf.multiply",
                          mf_shape_str(a->rank, a->shape, sa, sizeof sa),
                          mf_shape_str(b->rank, b->shape, sb, sizeof sb), a->rank, b->rank);
    if ((a->rank == 1 && ta) || (b->rank == 1 && tb))
        return mf_err_set(MF_EARG, "matmul: %s needs a matrix, got a vector of shape %s (a "
                          "vector is a row on the left and a column on the right)",
                          a->rank == 1 && ta ? "transpose_a" : "transpose_b",
                          a->rank == 1 && ta ? mf_shape_str(1, a->shape, sa, sizeof sa)
                                             : mf_shape_str(1, b->shape, sb, sizeof sb));
    return MF_OK;
}

/* numpy.matmul / torch.matmul on any ranks: a vector on the left is a row
 * (a 1 put before its axis), on the right a column (a 1 after), and that
 * axis is squeezed from the product; then MatMul for two matrices, else
 * BatchMatMulV2 (batch axes broadcast). */
static MfStatus matmul_any(MfTensor *a, MfTensor *b, const MfAttrs *attrs, MfTensor **out)
{
    *out = NULL;
    MfAttrs at = attrs ? *attrs : mf_attrs_default();
    MfStatus st = check_vector(a, b, at.transpose_a, at.transpose_b);
    if (st != MF_OK)
        return st;
    MfTensor *in[2] = {a, b}, *made[2] = {NULL, NULL}, *prod = NULL;
    if (a->rank == 1)
        st = mf_expand_dims(a, 0, &made[0]);
    if (st == MF_OK && b->rank == 1)
        st = mf_expand_dims(b, -1, &made[1]);
    for (int i = 0; i < 2; i++)
        in[i] = made[i] ? made[i] : in[i];
    MfOpId op = in[0]->rank == 2 && in[1]->rank == 2 ? MF_OP_MATMUL : MF_OP_BATCH_MATMUL;
    if (st == MF_OK) {
        st = mf_op1(op, 2, in, &at, &prod);
        if (st != MF_OK && (made[0] || made[1]))
            mf_err_suffix("a vector (rank 1) is a row on the left, a column on the right");
    }
    int64_t axes[2];
    int naxes = 0;
    if (a->rank == 1)
        axes[naxes++] = -2;
    if (b->rank == 1)
        axes[naxes++] = -1;
    if (st == MF_OK && naxes > 0)
        st = mf_squeeze(prod, axes, naxes, out);
    else if (st == MF_OK) {
        *out = prod;
        prod = NULL;
    }
    mf_tensor_release(made[0]);
    mf_tensor_release(made[1]);
    mf_tensor_release(prod);
    return st;
}

static MfStatus matmul_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                             int *nout)
{
    (void)n;
    MfStatus st = matmul_any(in[0], in[1], a, &outs[0]);
    *nout = st == MF_OK ? 1 : 0;
    return st;
}

const MfOpDesc mf_desc_matmul = {
    .name = "MatMul", .api = "matmul", .arity = 2, .infer = matmul_infer,
    .forward = matmul_forward, .backward = mf_matmul_grad, .cost = matmul_cost,
    .attrs = matmul_attrs, .nattrs = MF_NATTRS(matmul_attrs), .lua = "matmul",
    .inputs = "a, b", .entry = matmul_entry,
    .summary = "matrix product a @ b of any ranks (numpy.matmul's broadcasting)",
    .topic = "linalg",
    .grad_note = "da = dy b^T, db = a^T dy (transposes follow transpose_a/b), summed over the "
                 "batch axes an operand was broadcast along",
    .details =
        "Matrix product over the last two axes, as numpy.matmul and torch.matmul: [m, k] x "
        "[k, n] gives [m, n]; the axes before the last two are batch axes, broadcast as NumPy "
        "broadcasts (trailing axes aligned, a missing axis or a size of 1 stretching), so "
        "[2, 1, m, k] x [3, k, n] gives [2, 3, m, n] and a matrix is reused for every batch. "
        "A vector (rank 1) on the left is a row, on the right a column, and that axis is "
        "dropped from the result (vector x vector is a scalar). transpose_a / transpose_b "
        "(also adjoint_a / adjoint_b, tf.linalg.matmul's names) transpose the last two axes "
        "of a matrix operand without copying it. Floats use OpenBLAS, one GEMM per batch (one "
        "for all batches when a batch of row-major matrices meets one matrix); integers a "
        "blocked loop that wraps on overflow. Two matrices make a MatMul op, anything else a "
        "BatchMatMulV2. The inner dimensions must agree and both tensors must have the same "
        "dtype.",
    .example =
        "a = mf.tensor{{1, 2}, {3, 4}}\n"
        "mf.matmul(a, a)                           --> {{7, 10}, {15, 22}}\n"
        "mf.matmul(a, a, {transpose_b = true})     --> {{5, 11}, {11, 25}}\n"
        "a:matmul(mf.tensor{{1}, {1}})             --> {{3}, {7}}\n"
        "mf.matmul(a, mf.tensor{1, 1})             --> {3, 7}\n"
        "mf.matmul(mf.ones{2, 1, 3, 2}, mf.ones{4, 2, 5}).shape --> {2, 4, 3, 5}",
};

const MfOpDesc mf_desc_batch_matmul = {
    .name = "BatchMatMulV2", .api = "matmul", .arity = 2, .infer = batch_matmul_infer,
    .forward = matmul_forward, .backward = mf_batch_matmul_grad, .cost = matmul_cost,
    .attrs = matmul_attrs, .nattrs = MF_NATTRS(matmul_attrs),
};

/* ---- Trace -------------------------------------------------------------------------- */

static MfStatus trace_infer(MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    char buf[SHAPE_BUF];
    if (t->rank != 2)
        return mf_err_set(MF_ESHAPE, "trace: expected a matrix (rank 2), got shape %s (rank %d)",
                          mf_shape_str(t->rank, t->shape, buf, sizeof buf), t->rank);
    MfStatus st = mf_check_dtype(c, t, MF_NUMERIC,
                                 "a numeric dtype (float32, float64, int32, int64)");
    if (st != MF_OK)
        return st;
    c->noutputs = 1;
    c->out[0].dtype = t->dtype;
    c->out[0].rank = 0;
    return MF_OK;
}

/* Sums the 'n' diagonal entries 'step' elements apart; floats accumulate in
 * double, integers wrap. */
static MfStatus trace_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *t = c->inputs[0];
    int64_t n = t->shape[0] < t->shape[1] ? t->shape[0] : t->shape[1];
    int64_t step = t->strides[0] + t->strides[1];
    const void *p = mf_tensor_data(t);
    void *o = mf_tensor_data(outs[0]);
    double fs = 0;
    uint64_t is = 0;
    switch (t->dtype) {
    case MF_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            fs += (double)((const float *)p)[i * step];
        *(float *)o = (float)fs;
        break;
    case MF_FLOAT64:
        for (int64_t i = 0; i < n; i++)
            fs += ((const double *)p)[i * step];
        *(double *)o = fs;
        break;
    case MF_INT32:
        for (int64_t i = 0; i < n; i++)
            is += (uint64_t)((const int32_t *)p)[i * step];
        *(int32_t *)o = (int32_t)(uint32_t)is;
        break;
    case MF_INT64:
        for (int64_t i = 0; i < n; i++)
            is += (uint64_t)((const int64_t *)p)[i * step];
        *(int64_t *)o = (int64_t)is;
        break;
    default:
        return mf_err_set(MF_EINTERNAL, "trace: no kernel for %s", mf_dtype_name(t->dtype));
    }
    return MF_OK;
}

static MfCost trace_cost(const MfOpCall *c)
{
    const MfTensor *t = c->inputs[0];
    double n = (double)(t->shape[0] < t->shape[1] ? t->shape[0] : t->shape[1]);
    return (MfCost){n, n * (double)mf_dtype_size(t->dtype)};
}

const MfOpDesc mf_desc_trace = {
    .name = "Trace", .api = "trace", .arity = 1, .infer = trace_infer,
    .forward = trace_forward, .backward = mf_trace_grad, .cost = trace_cost,
    .lua = "trace", .inputs = "x", .summary = "sum of the diagonal of a matrix",
};

/* ---- composites --------------------------------------------------------------------- */

MfStatus mf_matmul(MfTensor *a, MfTensor *b, bool transpose_a, bool transpose_b,
                   MfTensor **out)
{
    MfAttrs attrs = mf_attrs_default();
    attrs.transpose_a = transpose_a;
    attrs.transpose_b = transpose_b;
    return matmul_any(a, b, &attrs, out);
}

MfStatus mf_trace(MfTensor *t, MfTensor **out)
{
    return mf_op1(MF_OP_TRACE, 1, &t, NULL, out);
}

/* Normalises axis 'ax' of operand 'name'; refuses it when out of range or
 * already among 'prev[0..nprev)'. */
static MfStatus dot_axis(const MfTensor *t, const char *name, int64_t ax, const int64_t *prev,
                         int nprev, int64_t *out)
{
    int64_t n = ax < 0 ? ax + t->rank : ax;
    if (n < 0 || n >= t->rank)
        return mf_err_set(MF_EARG, "tensordot: axis %lld out of range for %s of rank %d (axes "
                          "are 1-based: 1..%d, or -%d..-1)", (long long)(ax >= 0 ? ax + 1 : ax),
                          name, t->rank, t->rank, t->rank);
    for (int k = 0; k < nprev; k++)
        if (prev[k] == n)
            return mf_err_set(MF_EARG, "tensordot: axis %lld of %s is listed twice",
                              (long long)n + 1, name);
    *out = n;
    return MF_OK;
}

/* Checks the axis pairs and writes them, normalised, to 'ca' and 'cb'. */
static MfStatus dot_pairs(const MfTensor *a, const MfTensor *b, int naxes, const int64_t *axes_a,
                          const int64_t *axes_b, int64_t *ca, int64_t *cb)
{
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    for (int i = 0; i < naxes; i++) {
        MfStatus st = dot_axis(a, "a", axes_a[i], ca, i, &ca[i]);
        if (st == MF_OK)
            st = dot_axis(b, "b", axes_b[i], cb, i, &cb[i]);
        if (st != MF_OK)
            return st;
        int64_t da = a->shape[ca[i]], db = b->shape[cb[i]];
        if (da >= 0 && db >= 0 && da != db)
            return mf_err_set(MF_ESHAPE, "tensordot: axis %lld of a has size %lld but axis %lld "
                              "of b has size %lld (shapes %s and %s)", (long long)ca[i] + 1,
                              (long long)da, (long long)cb[i] + 1, (long long)db,
                              mf_shape_str(a->rank, a->shape, sa, sizeof sa),
                              mf_shape_str(b->rank, b->shape, sb, sizeof sb));
    }
    return MF_OK;
}

/* Writes the axes of 't' not among 'used[0..nused)' to 'out'; returns how many. */
static int free_axes(const MfTensor *t, const int64_t *used, int nused, int64_t *out)
{
    int n = 0;
    for (int ax = 0; ax < t->rank; ax++) {
        bool found = false;
        for (int k = 0; k < nused; k++)
            found |= used[k] == ax;
        if (!found)
            out[n++] = ax;
    }
    return n;
}

/* Product of the listed dims; -1 when one is unknown. */
static int64_t dims_product(const MfTensor *t, const int64_t *axes, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) {
        if (t->shape[axes[i]] < 0)
            return -1;
        p *= t->shape[axes[i]];
    }
    return p;
}

/* 't' transposed by 'perm' and reshaped to a matrix whose rows are its
 * first 'nrow' axes (after the transpose) and whose columns are the rest. */
static MfStatus to_matrix(MfTensor *t, const int64_t *perm, int nrow, MfTensor **out)
{
    int64_t shape[2] = {dims_product(t, perm, nrow), dims_product(t, perm + nrow, t->rank - nrow)};
    bool identity = true;
    for (int i = 0; i < t->rank; i++)
        identity &= perm[i] == i;
    if (identity)
        return mf_reshape(t, 2, shape, out);
    MfTensor *tt = NULL;
    MfStatus st = mf_transpose(t, perm, t->rank, &tt);
    if (st == MF_OK)
        st = mf_reshape(tt, 2, shape, out);
    mf_tensor_release(tt);
    return st;
}

/* As TensorFlow's tensordot: a -> (free_a, contracted) matrix, b ->
 * (contracted, free_b) matrix, one matmul, reshape to free_a ++ free_b. */
MfStatus mf_tensordot(MfTensor *a, MfTensor *b, int naxes, const int64_t *axes_a,
                      const int64_t *axes_b, MfTensor **out)
{
    *out = NULL;
    if (a->dtype != b->dtype)
        return mf_err_set(MF_EDTYPE, "tensordot: dtypes differ: %s and %s (convert one with "
                          "mf.cast)", mf_dtype_name(a->dtype), mf_dtype_name(b->dtype));
    if (a->dtype == MF_BOOL)
        return mf_err_set(MF_EDTYPE, "tensordot: expected a numeric dtype (float32, float64, "
                          "int32, int64), got bool");
    if (naxes < 0 || naxes > a->rank || naxes > b->rank)
        return mf_err_set(MF_EARG, "tensordot: %d axis pair(s) given, but a has rank %d and b "
                          "has rank %d", naxes, a->rank, b->rank);
    int64_t pa[MF_MAX_RANK], pb[MF_MAX_RANK], shape[2 * MF_MAX_RANK];
    MfStatus st = dot_pairs(a, b, naxes, axes_a, axes_b, pa + (a->rank - naxes), pb);
    if (st != MF_OK)
        return st;
    int nfa = free_axes(a, pa + (a->rank - naxes), naxes, pa);
    int nfb = free_axes(b, pb, naxes, pb + naxes);
    if (nfa + nfb > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "tensordot: the result would have rank %d, at most %d is "
                          "supported", nfa + nfb, MF_MAX_RANK);
    for (int i = 0; i < nfa; i++)
        shape[i] = a->shape[pa[i]];
    for (int i = 0; i < nfb; i++)
        shape[nfa + i] = b->shape[pb[naxes + i]];
    MfTensor *ma = NULL, *mb = NULL, *prod = NULL;
    st = to_matrix(a, pa, nfa, &ma);
    if (st == MF_OK)
        st = to_matrix(b, pb, naxes, &mb);
    if (st == MF_OK)
        st = mf_matmul(ma, mb, false, false, &prod);
    if (st == MF_OK)
        st = mf_reshape(prod, nfa + nfb, shape, out);
    mf_tensor_release(ma);
    mf_tensor_release(mb);
    mf_tensor_release(prod);
    return st;
}

MfStatus mf_tensordot_n(MfTensor *a, MfTensor *b, int64_t n, MfTensor **out)
{
    *out = NULL;
    if (n < 0 || n > a->rank || n > b->rank)
        return mf_err_set(MF_EARG, "tensordot: axes = %lld, but a has rank %d and b has rank "
                          "%d (it must be 0..%d)", (long long)n, a->rank, b->rank,
                          a->rank < b->rank ? a->rank : b->rank);
    int64_t axes_a[MF_MAX_RANK], axes_b[MF_MAX_RANK];
    for (int i = 0; i < n; i++) {
        axes_a[i] = a->rank - n + i;
        axes_b[i] = i;
    }
    return mf_tensordot(a, b, (int)n, axes_a, axes_b, out);
}
