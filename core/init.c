/* init.c — fans, variance scaling and orthogonal initialisers, and the
 * table of named initialisers with their options (see init.h).
 *
 * The orthogonal initialiser factors a normal matrix with LAPACK's
 * Householder QR (dgeqrf + dorgqr, provided by OpenBLAS; declared here
 * because LAPACKE headers may be missing), in float64. */
#include "init.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "alloc.h"
#include "create.h"
#include "ops/compare.h"
#include "ops/random.h"
#include "ops/view.h"
#include "parallel.h"
#include "shape.h"

/* LAPACK (Fortran calling convention, 32-bit integers). */
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);

/* The stddev of a standard normal truncated to [-2, 2]. */
#define TRUNC_STDDEV 0.87962566103423978

void mf_init_fans(int rank, const int64_t *shape, double *fan_in, double *fan_out)
{
    if (rank < 1) {
        *fan_in = *fan_out = 1;
    } else if (rank == 1) {
        *fan_in = *fan_out = (double)shape[0];
    } else if (rank == 2) {
        *fan_in = (double)shape[0];
        *fan_out = (double)shape[1];
    } else {
        double field = 1;
        for (int i = 0; i < rank - 2; i++)
            field *= (double)shape[i];
        *fan_in = (double)shape[rank - 2] * field;
        *fan_out = (double)shape[rank - 1] * field;
    }
}

/* The size check and the float-dtype check every random initialiser makes. */
static MfStatus check_request(const char *who, int rank, const int64_t *shape, MfDType dt)
{
    if (dt != MF_FLOAT32 && dt != MF_FLOAT64)
        return mf_err_set(MF_EDTYPE, "%s: expected a float dtype (float32 or float64), got %s",
                          who, mf_dtype_name(dt));
    return mf_create_check_size(who, dt, rank, shape);
}

MfStatus mf_init_variance_scaling(const char *who, int rank, const int64_t *shape, MfDType dt,
                                  double scale, MfFanMode mode, MfInitDist dist, uint64_t seed,
                                  MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_request(who, rank, shape, dt);
    if (st != MF_OK)
        return st;
    double fan_in, fan_out;
    mf_init_fans(rank, shape, &fan_in, &fan_out);
    double fan = mode == MF_FAN_IN ? fan_in : mode == MF_FAN_OUT ? fan_out
                                                                 : (fan_in + fan_out) / 2;
    double variance = scale / (fan > 1 ? fan : 1);
    switch (dist) {
    case MF_INIT_TRUNCATED_NORMAL:
        return mf_random_truncated_normal(rank, shape, dt, 0, sqrt(variance) / TRUNC_STDDEV,
                                          seed, out);
    case MF_INIT_UNTRUNCATED_NORMAL:
        return mf_random_normal(rank, shape, dt, 0, sqrt(variance), seed, out);
    default: {
        double limit = sqrt(3 * variance);
        return mf_random_uniform(rank, shape, dt, -limit, limit, seed, out);
    }
    }
}

MfStatus mf_init_glorot_uniform(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                                MfTensor **out)
{
    return mf_init_variance_scaling("glorot_uniform", rank, shape, dt, 1.0, MF_FAN_AVG,
                                    MF_INIT_UNIFORM, seed, out);
}

MfStatus mf_init_glorot_normal(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                               MfTensor **out)
{
    return mf_init_variance_scaling("glorot_normal", rank, shape, dt, 1.0, MF_FAN_AVG,
                                    MF_INIT_TRUNCATED_NORMAL, seed, out);
}

MfStatus mf_init_he_normal(int rank, const int64_t *shape, MfDType dt, uint64_t seed,
                           MfTensor **out)
{
    return mf_init_variance_scaling("he_normal", rank, shape, dt, 2.0, MF_FAN_IN,
                                    MF_INIT_TRUNCATED_NORMAL, seed, out);
}

/* Overwrites column-major 'a' (m x n, m >= n) with the Q of its QR
 * decomposition, each column j multiplied by the sign of R[j][j]. */
static MfStatus qr_q(double *a, int m, int n)
{
    int info = 0, query = -1;
    double wq1 = 0, wq2 = 0;
    dgeqrf_(&m, &n, a, &m, NULL, &wq1, &query, &info);
    dorgqr_(&m, &n, &n, a, &m, NULL, &wq2, &query, &info);
    int lwork = (int)(wq1 > wq2 ? wq1 : wq2);
    lwork = lwork > n ? lwork : n;
    size_t nbytes = ((size_t)lwork + 2 * (size_t)n) * sizeof(double);
    double *work = mf_alloc(nbytes);
    if (!work)
        return mf_err_nomem("orthogonal", (unsigned long long)nbytes);
    double *tau = work + lwork, *sign = tau + n;
    dgeqrf_(&m, &n, a, &m, tau, work, &lwork, &info);
    for (int j = 0; j < n && info == 0; j++)
        sign[j] = a[j + (size_t)j * (size_t)m] < 0 ? -1.0 : 1.0;
    if (info == 0)
        dorgqr_(&m, &n, &n, a, &m, tau, work, &lwork, &info);
    for (int j = 0; j < n && info == 0; j++)
        for (int i = 0; i < m; i++)
            a[i + (size_t)j * (size_t)m] *= sign[j];
    mf_dealloc(work, nbytes);
    if (info != 0)
        return mf_err_set(MF_EINTERNAL, "orthogonal: LAPACK QR failed (info %d)", info);
    return MF_OK;
}

/* Checks the request of 'mf_init_orthogonal' and returns rows, cols. */
static MfStatus orthogonal_dims(int rank, const int64_t *shape, MfDType dt, int64_t *rows,
                                int64_t *cols)
{
    char buf[160];
    MfStatus st = check_request("orthogonal", rank, shape, dt);
    if (st != MF_OK)
        return st;
    if (rank < 2)
        return mf_err_set(MF_ESHAPE, "orthogonal: the shape must have at least 2 dimensions, "
                          "got %s", mf_shape_str(rank, shape, buf, sizeof buf));
    *rows = mf_shape_numel(rank - 1, shape);
    *cols = shape[rank - 1];
    if (*rows > INT_MAX || *cols > INT_MAX)
        return mf_err_set(MF_EARG, "orthogonal: shape %s is too large for LAPACK (each of "
                          "prod(shape[:-1]) and shape[-1] must be below 2^31)",
                          mf_shape_str(rank, shape, buf, sizeof buf));
    return MF_OK;
}

/* Q (m x n, column-major, m >= n) of a normal matrix drawn with 'seed'. */
static MfStatus normal_q(int64_t m, int64_t n, uint64_t seed, double **q)
{
    int64_t flat[2] = {m, n};
    MfTensor *g = NULL;
    *q = NULL;
    MfStatus st = mf_random_normal(2, flat, MF_FLOAT64, 0, 1, seed, &g);
    if (st != MF_OK)
        return st;
    if (!g->storage) {
        mf_tensor_release(g);
        return mf_err_set(MF_EARG, "orthogonal: needs concrete values (it cannot run while a "
                          "graph is being built)");
    }
    size_t nbytes = (size_t)(m * n) * sizeof(double);
    double *a = mf_alloc(nbytes);
    if (!a) {
        mf_tensor_release(g);
        return mf_err_nomem("orthogonal", (unsigned long long)nbytes);
    }
    const double *src = mf_tensor_data(g);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            a[i + j * m] = src[i * n + j];
    mf_tensor_release(g);
    st = mf_parallel_blas_buffers("orthogonal", 1);
    if (st == MF_OK)
        st = qr_q(a, (int)m, (int)n);
    if (st != MF_OK) {
        mf_dealloc(a, nbytes);
        return st;
    }
    *q = a;
    return MF_OK;
}

MfStatus mf_init_orthogonal(int rank, const int64_t *shape, MfDType dt, double gain,
                            uint64_t seed, MfTensor **out)
{
    int64_t rows = 0, cols = 0;
    *out = NULL;
    MfStatus st = orthogonal_dims(rank, shape, dt, &rows, &cols);
    if (st != MF_OK || rows == 0 || cols == 0)
        return st != MF_OK ? st : mf_create_fill("orthogonal", dt, rank, shape, 0, out);
    int64_t m = rows > cols ? rows : cols, n = rows > cols ? cols : rows;
    double *q = NULL;
    st = normal_q(m, n, seed, &q);
    if (st != MF_OK)
        return st;
    MfTensor *w = mf_tensor_new(MF_FLOAT64, rank, shape);
    if (w) {
        /* rows >= cols: W[i][j] = Q[i][j] = q[i + j m]; otherwise W = Q^T,
         * whose row-major layout is q's column-major one. */
        double *d = mf_tensor_data(w);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                d[i * cols + j] = gain * (rows >= cols ? q[i + j * m] : q[i * cols + j]);
    }
    mf_dealloc(q, (size_t)(m * n) * sizeof(double));
    if (!w)
        return MF_ENOMEM;
    if (dt == MF_FLOAT64) {
        *out = w;
        return MF_OK;
    }
    st = mf_cast(w, dt, out);
    mf_tensor_release(w);
    return st;
}

/* ---- the named initialisers ---------------------------------------------- */

const MfInitDef mf_init_defs[] = {
    {"zeros", MF_INIT_KIND_ZEROS, {NULL}, {0}, 0, MF_FAN_IN, MF_INIT_UNIFORM},
    {"ones", MF_INIT_KIND_ONES, {NULL}, {0}, 0, MF_FAN_IN, MF_INIT_UNIFORM},
    {"constant", MF_INIT_KIND_CONSTANT, {NULL}, {0}, 0, MF_FAN_IN, MF_INIT_UNIFORM},
    {"random_normal", MF_INIT_KIND_NORMAL, {"mean", "stddev", "seed", NULL}, {0, 0.05}, 0,
     MF_FAN_IN, MF_INIT_UNIFORM},
    {"truncated_normal", MF_INIT_KIND_TRUNCATED_NORMAL, {"mean", "stddev", "seed", NULL},
     {0, 0.05}, 0, MF_FAN_IN, MF_INIT_UNIFORM},
    {"random_uniform", MF_INIT_KIND_RANDOM_UNIFORM, {"minval", "maxval", "seed", NULL},
     {-0.05, 0.05}, 0, MF_FAN_IN, MF_INIT_UNIFORM},
    {"glorot_uniform", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 1, MF_FAN_AVG,
     MF_INIT_UNIFORM},
    {"glorot_normal", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 1, MF_FAN_AVG,
     MF_INIT_TRUNCATED_NORMAL},
    {"he_normal", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 2, MF_FAN_IN,
     MF_INIT_TRUNCATED_NORMAL},
    {"he_uniform", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 2, MF_FAN_IN,
     MF_INIT_UNIFORM},
    {"lecun_normal", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 1, MF_FAN_IN,
     MF_INIT_TRUNCATED_NORMAL},
    {"lecun_uniform", MF_INIT_KIND_VARIANCE_SCALING, {"seed", NULL}, {0}, 1, MF_FAN_IN,
     MF_INIT_UNIFORM},
    {"orthogonal", MF_INIT_KIND_ORTHOGONAL, {"gain", "seed", NULL}, {1}, 0, MF_FAN_IN,
     MF_INIT_UNIFORM},
};

const int mf_init_ndefs = (int)(sizeof mf_init_defs / sizeof mf_init_defs[0]);

const MfInitDef *mf_init_find(const char *name)
{
    for (int i = 0; name && i < mf_init_ndefs; i++)
        if (strcmp(mf_init_defs[i].name, name) == 0)
            return &mf_init_defs[i];
    return NULL;
}

/* random_normal, truncated_normal, random_uniform: opt = {mean, stddev} or
 * {minval, maxval}. */
static MfStatus run_random(const MfInitDef *d, const double *opt, uint64_t seed, int rank,
                           const int64_t *shape, MfDType dt, MfTensor **out)
{
    MfStatus st = mf_create_check_size(d->name, dt, rank, shape);
    if (st != MF_OK)
        return st;
    bool uniform = d->kind == MF_INIT_KIND_RANDOM_UNIFORM;
    if (!uniform && !mf_dtype_is_float(dt))
        return mf_err_set(MF_EDTYPE, "%s: expected a float dtype (float32 or float64), got %s",
                          d->name, mf_dtype_name(dt));
    if (uniform && dt == MF_BOOL)
        return mf_err_set(MF_EDTYPE, "%s: expected a float or integer dtype, got bool", d->name);
    if (uniform)
        return mf_random_uniform(rank, shape, dt, opt[0], opt[1], seed, out);
    if (!(opt[1] >= 0))
        return mf_err_set(MF_EARG, "%s: stddev must be >= 0, got %g", d->name, opt[1]);
    if (d->kind == MF_INIT_KIND_NORMAL)
        return mf_random_normal(rank, shape, dt, opt[0], opt[1], seed, out);
    return mf_random_truncated_normal(rank, shape, dt, opt[0], opt[1], seed, out);
}

MfStatus mf_init_run(const MfInitDef *d, const double *opt, uint64_t seed, int rank,
                     const int64_t *shape, MfDType dt, MfTensor **out)
{
    *out = NULL;
    switch (d->kind) {
    case MF_INIT_KIND_ZEROS:
    case MF_INIT_KIND_ONES:
        return mf_create_fill(d->name, dt, rank, shape, d->kind == MF_INIT_KIND_ONES, out);
    case MF_INIT_KIND_VARIANCE_SCALING:
        return mf_init_variance_scaling(d->name, rank, shape, dt, d->scale, d->mode, d->dist,
                                        seed, out);
    case MF_INIT_KIND_ORTHOGONAL: return mf_init_orthogonal(rank, shape, dt, opt[0], seed, out);
    case MF_INIT_KIND_CONSTANT:
        return mf_err_set(MF_EARG, "constant: its value is the caller's (mf_init_constant)");
    default: return run_random(d, opt, seed, rank, shape, dt, out);
    }
}

MfStatus mf_init_constant(MfTensor *value, int rank, const int64_t *shape, MfDType dt,
                          MfTensor **out)
{
    char want[160], got[160];
    *out = NULL;
    MfStatus st = mf_create_check_size("constant", dt, rank, shape);
    if (st != MF_OK)   /* before counting: the count could overflow */
        return st;
    int64_t n = mf_shape_numel(rank, shape);
    if (mf_tensor_numel(value) == 1 && !value->node)
        return mf_create_fill("constant", dt, rank, shape, mf_tensor_get(value, 0), out);
    if (mf_tensor_numel(value) != n)
        return mf_err_set(MF_ESHAPE, "constant: the value has shape %s (%lld elements), which "
                          "does not fill shape %s (%lld elements)",
                          mf_shape_str(value->rank, value->shape, got, sizeof got),
                          (long long)mf_tensor_numel(value),
                          mf_shape_str(rank, shape, want, sizeof want), (long long)n);
    MfTensor *c = NULL;
    st = mf_reshape(value, rank, shape, &c);
    if (st != MF_OK || c->dtype == dt) {
        if (st != MF_OK)   /* the user called the initializer, not reshape */
            mf_err_prefix("constant");
        *out = c;
        return st;
    }
    st = mf_cast(c, dt, out);
    if (st != MF_OK)
        mf_err_prefix("constant");
    mf_tensor_release(c);
    return st;
}
