/* linalg_lapack.c — the matrix ops of mf.linalg, each a loop of LAPACK calls
 * (lapack.h, from the OpenBLAS package) over the leading batch dims,
 * float32 and float64, TensorFlow's names:
 *   MatrixInverse      [..., n, n] -> [..., n, n]        getrf + getri
 *   MatrixSolve        [..., n, n], [..., n, k] -> X     getrf + getrs ('adjoint':
 *                      A^T X = B); batch dims equal, as TensorFlow's
 *   Cholesky           [..., n, n] -> L lower, A = L L^T  potrf
 *   MatrixDeterminant  [..., n, n] -> [...]              getrf, the product of
 *                      U's diagonal and the permutation's sign (a singular
 *                      matrix gives 0, not an error)
 * Our buffers are row-major and LAPACK's column-major, so LAPACK sees each
 * matrix transposed; we use that instead of copying: the inverse of A^T
 * read back row-major is A^-1; det(A^T) = det(A); A X = B is solved as
 * (A^T)^T X = B ("T"), with B and X copied to and from column-major; and
 * potrf's upper factor U of A^T (= A) read row-major is the lower L.
 * Cholesky factors the symmetric part (A + A^T) / 2 (TensorFlow reads the
 * lower triangle only: the same on the symmetric matrices Cholesky is
 * for); so the standard symmetric gradient is the exact derivative.
 * Errors name the function and the matrix: "inv: the matrix at batch index
 * (2) (1-based) is singular ...". Gradients: linalg_lapack_grad.c. */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../parallel.h"
#include "common.h"
#include "lapack.h"
#include "linalg_lapack.h"

#define SHAPE_BUF 160
/* Matrices from this size run LAPACK on OpenBLAS's threads (starting and
 * stopping them costs ~0.1 ms; a 256 x 256 LU is ~10 MFLOP). */
#define LAPACK_THREADED_N 256

/* ---- shape inference ------------------------------------------------------------ */

static MfStatus check_square(const MfOpCall *c, const MfTensor *a, const char *what)
{
    char buf[SHAPE_BUF];
    int r = a->rank;
    if (r >= 2 && (a->shape[r - 1] < 0 || a->shape[r - 2] < 0 ||
                   a->shape[r - 1] == a->shape[r - 2]))
        return MF_OK;
    return mf_err_set(MF_ESHAPE, "%s: expected %s of shape (..., n, n) (square matrices, "
                      "batched over the leading dims), got shape %s", op_api(c), what,
                      mf_shape_str(a->rank, a->shape, buf, sizeof buf));
}

static MfStatus check_float(const MfOpCall *c, const MfTensor *a)
{
    return mf_check_dtype(c, a, MF_FLOATS, "float32 or float64 (use mf.cast)");
}

/* inv, cholesky: the input's shape; det: its batch dims. */
static MfStatus square_infer(MfOpCall *c)
{
    const MfTensor *a = c->inputs[0];
    MfStatus st = check_float(c, a);
    if (st == MF_OK)
        st = check_square(c, a, "a matrix");
    if (st != MF_OK)
        return st;
    mf_spec_like(c, a, a->dtype);
    if (c->op == MF_OP_MATRIX_DETERMINANT)
        c->out[0].rank = a->rank - 2;
    return MF_OK;
}

/* A [..., n, n] and B [..., n, k] with the same batch dims. */
static MfStatus solve_infer(MfOpCall *c)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    MfStatus st = check_float(c, a);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, a, b);
    if (st == MF_OK)
        st = check_square(c, a, "the matrix");
    if (st != MF_OK)
        return st;
    bool ok = b->rank == a->rank;
    for (int d = 0; ok && d < a->rank - 1; d++)
        ok = a->shape[d] < 0 || b->shape[d] < 0 || a->shape[d] == b->shape[d];
    if (!ok) {
        char sa[SHAPE_BUF], sb[SHAPE_BUF];
        return mf_err_set(MF_ESHAPE, "%s: the right-hand side must have shape (..., n, k) "
                          "with the matrix's batch dims and n rows: the matrix is %s, the "
                          "right-hand side %s", op_api(c),
                          mf_shape_str(a->rank, a->shape, sa, sizeof sa),
                          mf_shape_str(b->rank, b->shape, sb, sizeof sb));
    }
    mf_spec_like(c, b, b->dtype);
    return MF_OK;
}

/* ---- LAPACK by dtype ------------------------------------------------------------- */

static void getrf(bool f32, int n, void *a, int *ipiv, int *info)
{
    if (f32)
        sgetrf_(&n, &n, a, &n, ipiv, info);
    else
        dgetrf_(&n, &n, a, &n, ipiv, info);
}

static void getri(bool f32, int n, void *a, const int *ipiv, void *work, int lwork, int *info)
{
    if (f32)
        sgetri_(&n, a, &n, ipiv, work, &lwork, info);
    else
        dgetri_(&n, a, &n, ipiv, work, &lwork, info);
}

static void getrs(bool f32, const char *trans, int n, int k, const void *a, const int *ipiv,
                  void *b, int *info)
{
    if (f32)
        sgetrs_(trans, &n, &k, a, &n, ipiv, b, &n, info, 1);
    else
        dgetrs_(trans, &n, &k, a, &n, ipiv, b, &n, info, 1);
}

static void potrf(bool f32, int n, void *a, int *info)
{
    if (f32)
        spotrf_("U", &n, a, &n, info, 1);
    else
        dpotrf_("U", &n, a, &n, info, 1);
}

static double get(bool f32, const void *p, int64_t i)
{
    return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void put(bool f32, void *p, int64_t i, double v)
{
    if (f32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* ---- the batch loop -------------------------------------------------------------- */

/* One call's batch: 'count' matrices of n x n, the right-hand sides n x k. */
typedef struct Batch {
    const MfOpCall *c;
    bool f32;
    int n, k;
    int64_t count;
    size_t es;
    int *ipiv;
    void *work;    /* n * n (+ n * k) elements of scratch */
    size_t ipiv_bytes, work_bytes;
} Batch;

static void batch_free(Batch *bt)
{
    if (bt->ipiv)
        mf_dealloc(bt->ipiv, bt->ipiv_bytes);
    if (bt->work)
        mf_dealloc(bt->work, bt->work_bytes);
    bt->ipiv = NULL;
    bt->work = NULL;
}

/* "inv: the matrix at batch index (2, 1) (1-based)" or "inv: the matrix"
 * as the start of a message about matrix 'b' of the batch. */
static void which(const Batch *bt, int64_t b, char *buf, size_t size)
{
    const MfTensor *a = bt->c->inputs[0];
    int nb = a->rank - 2;
    int len = snprintf(buf, size, "%s: the matrix", op_api(bt->c));
    if (nb == 0 || len < 0 || (size_t)len >= size)
        return;
    int64_t idx[MF_MAX_RANK];
    for (int d = nb - 1; d >= 0; d--) {
        idx[d] = b % a->shape[d];
        b /= a->shape[d];
    }
    len += snprintf(buf + len, size - (size_t)len, " at batch index (");
    for (int d = 0; d < nb && (size_t)len < size; d++)
        len += snprintf(buf + len, size - (size_t)len, "%s%lld", d ? ", " : "",
                        (long long)idx[d] + 1);
    if ((size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ") (1-based)");
}

static MfStatus lapack_failed(const Batch *bt, int64_t b, int info, const char *what)
{
    char head[256];
    which(bt, b, head, sizeof head);
    if (info < 0)
        return mf_err_set(MF_EARG, "%s: LAPACK's %s refused argument %d", head, what, -info);
    if (bt->c->op == MF_OP_CHOLESKY)
        return mf_err_set(MF_EARG, "%s is not positive definite (its leading minor of order "
                          "%d is not positive; potrf)", head, info);
    return mf_err_set(MF_EARG, "%s is singular (U(%d,%d) = 0 in its LU factorization; "
                      "getrf)", head, info, info);
}

static MfStatus inverse_one(Batch *bt, int64_t b, const void *a, void *out)
{
    size_t bytes = (size_t)bt->n * (size_t)bt->n * bt->es;
    char *o = (char *)out + (size_t)b * bytes;
    memcpy(o, (const char *)a + (size_t)b * bytes, bytes);
    int info = 0;
    getrf(bt->f32, bt->n, o, bt->ipiv, &info);
    if (info != 0)
        return lapack_failed(bt, b, info, "getrf");
    getri(bt->f32, bt->n, o, bt->ipiv, bt->work, bt->n * bt->n, &info);
    return info == 0 ? MF_OK : lapack_failed(bt, b, info, "getri");
}

static MfStatus det_one(Batch *bt, int64_t b, const void *a, void *out)
{
    size_t bytes = (size_t)bt->n * (size_t)bt->n * bt->es;
    memcpy(bt->work, (const char *)a + (size_t)b * bytes, bytes);
    int info = 0;
    getrf(bt->f32, bt->n, bt->work, bt->ipiv, &info);
    if (info < 0)
        return lapack_failed(bt, b, info, "getrf");
    double det = 1;   /* U's diagonal (exactly 0 when singular), the pivots' sign */
    for (int i = 0; i < bt->n; i++)
        det *= get(bt->f32, bt->work, (int64_t)i * bt->n + i) * (bt->ipiv[i] != i + 1 ? -1 : 1);
    put(bt->f32, out, b, det);
    return MF_OK;
}

/* L of (A + A^T) / 2: potrf("U") on the row-major buffer, then the strict
 * upper triangle (row-major) zeroed. */
static MfStatus cholesky_one(Batch *bt, int64_t b, const void *a, void *out)
{
    int64_t n = bt->n, base = b * n * n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            put(bt->f32, out, base + i * n + j,
                0.5 * (get(bt->f32, a, base + i * n + j) + get(bt->f32, a, base + j * n + i)));
    int info = 0;
    potrf(bt->f32, bt->n, (char *)out + (size_t)base * bt->es, &info);
    if (info != 0)
        return lapack_failed(bt, b, info, "potrf");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++)
            put(bt->f32, out, base + i * n + j, 0);
    return MF_OK;
}

/* X of A X = B ('adjoint': A^T X = B); 'work' holds A's factors (n * n),
 * then B column-major (n * k). */
static MfStatus solve_one(Batch *bt, int64_t b, const void *a, const void *rhs, void *out)
{
    int64_t n = bt->n, k = bt->k;
    size_t abytes = (size_t)(n * n) * bt->es;
    char *lu = bt->work, *xb = lu + abytes;
    memcpy(lu, (const char *)a + (size_t)b * abytes, abytes);
    int info = 0;
    getrf(bt->f32, bt->n, lu, bt->ipiv, &info);
    if (info != 0)
        return lapack_failed(bt, b, info, "getrf");
    int64_t base = b * n * k;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++)
            put(bt->f32, xb, j * n + i, get(bt->f32, rhs, base + i * k + j));
    /* LAPACK sees A^T: "T" solves A X = B, "N" solves A^T X = B */
    getrs(bt->f32, bt->c->attrs->transpose_a ? "N" : "T", bt->n, bt->k, lu, bt->ipiv, xb,
          &info);
    if (info != 0)
        return lapack_failed(bt, b, info, "getrs");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++)
            put(bt->f32, out, base + i * k + j, get(bt->f32, xb, j * n + i));
    return MF_OK;
}

/* The batch of call 'c': sizes checked to fit LAPACK's int, scratch made. */
static MfStatus batch_init(const MfOpCall *c, Batch *bt)
{
    const MfTensor *a = c->inputs[0];
    int64_t n = a->shape[a->rank - 1];
    int64_t k = c->op == MF_OP_MATRIX_SOLVE ? c->inputs[1]->shape[a->rank - 1] : 0;
    *bt = (Batch){.c = c, .f32 = a->dtype == MF_FLOAT32, .count = 1,
                  .es = a->dtype == MF_FLOAT32 ? sizeof(float) : sizeof(double)};
    for (int d = 0; d < a->rank - 2; d++)
        bt->count *= a->shape[d];
    if (n > 46340 || k > (int64_t)(INT32_MAX / (n > 0 ? n : 1)))
        return mf_err_set(MF_EARG, "%s: matrices of %lld x %lld (and %lld right-hand sides) "
                          "are too large for LAPACK's int sizes", op_api(c), (long long)n,
                          (long long)n, (long long)k);
    bt->n = (int)n;
    bt->k = (int)k;
    bt->ipiv_bytes = (size_t)(n > 0 ? n : 1) * sizeof(int);
    bt->work_bytes = (size_t)(n * n + n * k + 1) * bt->es;
    MfStatus st = mf_parallel_blas_buffers(op_api(c), 1);   /* LAPACK's own GEMMs */
    if (st != MF_OK)
        return st;
    bt->ipiv = mf_alloc(bt->ipiv_bytes);
    bt->work = mf_alloc(bt->work_bytes);
    if (bt->ipiv && bt->work)
        return MF_OK;
    batch_free(bt);
    return mf_err_nomem(op_api(c), (unsigned long long)(n * n + n * k) * bt->es);
}

static MfStatus lapack_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *a = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *rhs = c->ninputs > 1 && a ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    Batch bt = {0};
    MfStatus st = !a || (c->ninputs > 1 && !rhs) ? mf_err_set(MF_ENOMEM, "%s: out of memory",
                                                             op_api(c))
                                                 : batch_init(c, &bt);
    const void *x = a ? mf_tensor_data(a) : NULL;
    void *y = mf_tensor_data(outs[0]);
    /* OpenBLAS is kept single-threaded (core/parallel.h); a large matrix's
     * LAPACK calls get its threads back for the loop */
    bool blas_threads = st == MF_OK && bt.n >= LAPACK_THREADED_N && mf_parallel_threads() > 1;
    if (blas_threads)
        mf_parallel_blas_threads(true);
    for (int64_t b = 0; st == MF_OK && b < bt.count && bt.n > 0; b++) {
        if (mf_interrupted)
            st = mf_err_set(MF_EINTR, "%s: interrupted", op_api(c));
        else if (c->op == MF_OP_MATRIX_INVERSE)
            st = inverse_one(&bt, b, x, y);
        else if (c->op == MF_OP_MATRIX_DETERMINANT)
            st = det_one(&bt, b, x, y);
        else if (c->op == MF_OP_CHOLESKY)
            st = cholesky_one(&bt, b, x, y);
        else
            st = solve_one(&bt, b, x, mf_tensor_data(rhs), y);
    }
    if (blas_threads)
        mf_parallel_blas_threads(false);
    /* the determinant of a 0 x 0 matrix is 1 */
    for (int64_t b = 0; st == MF_OK && bt.n == 0 && c->op == MF_OP_MATRIX_DETERMINANT &&
                        b < bt.count; b++)
        put(bt.f32, y, b, 1);
    batch_free(&bt);
    mf_tensor_release(a);
    mf_tensor_release(rhs);
    return st;
}

/* About n^3 FLOPs per matrix (LU and the inverse 2 n^3, Cholesky n^3 / 3,
 * the solve 2/3 n^3 + 2 n^2 k). */
static MfCost lapack_cost(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    const MfTensor *a = c->inputs[0];
    double n = (double)a->shape[a->rank - 1], count = 1;
    for (int d = 0; d < a->rank - 2; d++)
        count *= (double)a->shape[d];
    double k = c->op == MF_OP_MATRIX_SOLVE ? (double)c->inputs[1]->shape[a->rank - 1] : 0;
    double per = c->op == MF_OP_MATRIX_INVERSE ? 2 * n * n * n
                 : c->op == MF_OP_CHOLESKY ? n * n * n / 3
                 : 2.0 / 3.0 * n * n * n + 2 * n * n * k;
    cost.flops = n > 0 && count > 0 ? count * per : 0;
    return cost;
}

const MfOpDesc mf_desc_matrix_inverse = {
    .name = "MatrixInverse", .api = "inv", .arity = 1, .infer = square_infer,
    .forward = lapack_forward, .backward = mf_matrix_inverse_grad, .cost = lapack_cost,
    .lua = "linalg.inv", .inputs = "a",
    .summary = "the inverse of each square matrix (LAPACK getrf + getri)",
    .topic = "linalg",
    .details =
        "Batched over the leading dims of a [..., n, n], float32 or float64, by LAPACK's getrf "
        "+ getri from the OpenBLAS package. A singular matrix is an error naming the batch "
        "index. Gradient: -inv(a)^T g inv(a)^T.",
    .example =
        "mf.linalg.inv(mf.tensor{{2, 0}, {0, 4}})   --> {{0.5, 0}, {0, 0.25}}",
};

static const MfAttrDef solve_attrs[] = {
    {"adjoint", MF_ATTR_BOOL, 0, MF_ATTR_AT(transpose_a), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_matrix_solve = {
    .name = "MatrixSolve", .api = "solve", .arity = 2, .infer = solve_infer,
    .forward = lapack_forward, .backward = mf_matrix_solve_grad, .cost = lapack_cost,
    .attrs = solve_attrs, .nattrs = MF_NATTRS(solve_attrs), .lua = "linalg.solve",
    .inputs = "a, b",
    .summary = "X with a X = b ({adjoint = true}: a^T X = b) for each matrix (LAPACK getrf "
               "+ getrs)",
    .topic = "linalg",
    .details =
        "a [..., n, n] and b [..., n, k] with the same batch dims (TensorFlow's MatrixSolve). "
        "A singular matrix is an error naming the batch index. Gradients: db = solve(a, g, "
        "{adjoint = not adjoint}), da = -db X^T (adjoint: -X db^T).",
    .example =
        "mf.linalg.solve(mf.tensor{{2, 0}, {0, 4}}, mf.tensor{{2}, {2}})   --> {{1}, {0.5}}",
};

const MfOpDesc mf_desc_cholesky = {
    .name = "Cholesky", .api = "cholesky", .arity = 1, .infer = square_infer,
    .forward = lapack_forward, .backward = mf_cholesky_grad, .cost = lapack_cost,
    .lua = "linalg.cholesky", .inputs = "a",
    .summary = "the lower Cholesky factor L (a = L L^T) of each symmetric positive definite "
               "matrix (LAPACK potrf)",
    .topic = "linalg",
    .details =
        "It factors the symmetric part (a + a^T) / 2 (TensorFlow reads only the lower "
        "triangle: the same for symmetric input), so the standard symmetric gradient (Murray "
        "2016, TensorFlow's CholeskyGrad) is exact. A matrix that is not positive definite is "
        "an error naming the batch index.",
    .example =
        "mf.linalg.cholesky(mf.tensor{{4, 2}, {2, 5}})   --> {{2, 0}, {1, 2}}",
};

const MfOpDesc mf_desc_matrix_determinant = {
    .name = "MatrixDeterminant", .api = "det", .arity = 1, .infer = square_infer,
    .forward = lapack_forward, .backward = mf_matrix_determinant_grad, .cost = lapack_cost,
    .lua = "linalg.det", .inputs = "a",
    .summary = "the determinant of each square matrix (LAPACK getrf)",
    .topic = "linalg",
    .details =
        "Shape [...] for a [..., n, n]: the product of U's diagonal and the pivots' sign from "
        "the LU factorization. A singular matrix gives 0 (no error); a 0 x 0 matrix 1. "
        "Gradient: g * det * inv(a)^T (so at a singular matrix, inv's error).",
    .example =
        "mf.linalg.det(mf.tensor{{1, 2}, {3, 4}}):item()   --> -2",
};
