/* gemm.c — checked, profiled GEMM through OpenBLAS (see gemm.h). */
#include "gemm.h"

#include <cblas.h>
#include <limits.h>

#include "profile/profile.h"

static bool fits(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

MfStatus mf_gemm(const MfGemm *g)
{
    if (!fits(g->M) || !fits(g->N) || !fits(g->K) || !fits(g->lda) || !fits(g->ldb) ||
        !fits(g->ldc))
        return mf_err_set(MF_EARG, "%s: GEMM of M=%lld N=%lld K=%lld is too large for BLAS",
                          g->op, (long long)g->M, (long long)g->N, (long long)g->K);
    if (g->dtype != MF_FLOAT32 && g->dtype != MF_FLOAT64)
        return mf_err_set(MF_EDTYPE, "%s: GEMM needs float32 or float64, got %s", g->op,
                          mf_dtype_name(g->dtype));
    if (g->M == 0 || g->N == 0)
        return MF_OK;
    enum CBLAS_TRANSPOSE ta = g->trans_a ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = g->trans_b ? CblasTrans : CblasNoTrans;
    MfProfSpan span;
    mf_prof_begin(&span);
    if (g->dtype == MF_FLOAT32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)g->M, (int)g->N, (int)g->K, (float)g->alpha,
                    g->A, (int)g->lda, g->B, (int)g->ldb, (float)g->beta, g->C, (int)g->ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)g->M, (int)g->N, (int)g->K, g->alpha, g->A,
                    (int)g->lda, g->B, (int)g->ldb, g->beta, g->C, (int)g->ldc);
    mf_prof_end_gemm(&span, g);
    return MF_OK;
}
