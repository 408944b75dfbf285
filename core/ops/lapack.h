/* lapack.h — the LAPACK routines mf.linalg calls, from the OpenBLAS package
 * (libopenblas exports LAPACK's Fortran symbols; Debian ships no LAPACKE
 * header with it). Fortran conventions: every argument by pointer, matrices
 * column-major, 'int' sizes (OpenBLAS's default 32-bit blasint), and one
 * hidden length argument per character argument (gfortran's ABI; callers
 * pass 1). 'info' < 0: argument -info was illegal; > 0: see each routine. */
#ifndef MF_OPS_LAPACK_H
#define MF_OPS_LAPACK_H

#include <stddef.h>

/* LU factorization with partial pivoting, A = P L U; info > 0: U(info, info)
 * is exactly zero (the factorization is complete, A is singular). */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);

/* The inverse from getrf's factors ('lwork' >= n). */
void sgetri_(const int *n, float *a, const int *lda, const int *ipiv, float *work,
             const int *lwork, int *info);
void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work,
             const int *lwork, int *info);

/* Solves op(A) X = B from getrf's factors; trans "N" or "T". */
void sgetrs_(const char *trans, const int *n, const int *nrhs, const float *a, const int *lda,
             const int *ipiv, float *b, const int *ldb, int *info, size_t trans_len);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);

/* Cholesky factorization of the 'uplo' ("U" or "L") triangle; info > 0:
 * the leading minor of order info is not positive. */
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info,
             size_t uplo_len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);

#endif
