/* dist_impl.h — what the files of distributed/ share: the MPI state and the
 * conversion of MPI error codes. Private to distributed/. */
#ifndef MF_DIST_IMPL_H
#define MF_DIST_IMPL_H

#include <mpi.h>

#include "dist.h"
#include "mpi_lazy.h"

/* True once MPI_Init_thread succeeded (and until MPI_Finalize). */
bool mf_dist_mpi_on(void);

/* MF_OK for MPI_SUCCESS, else MF_EARG with "who: MPI error: <string>". */
MfStatus mf_dist_mpi_status(int rc, const char *who);

/* The hash of a signature text (FNV-1a, 64 bits; never 0). */
uint64_t mf_dist_hash(const char *text);

/* The exchange for a known hash: the text is looked up in the registry
 * (NULL: only the hash is compared); 'count' is the call's element count
 * at run time (-1 when it may differ between processes). */
MfStatus mf_dist_check_hash(const char *who, uint64_t hash, const char *text, int64_t count);

/* MF_EARG naming 'who' once MPI has ended or a process has ended its
 * script (after which no collective can complete): every collective,
 * checked or not, starts with it. */
MfStatus mf_dist_usable(const char *who);

/* The exit join of mf_dist_finalize: this process's end, as a header
 * (signature.c); an error when the others were making a collective. */
MfStatus mf_dist_join_exit(void);

/* MPI counts are ints: tensors travel in pieces of at most PIECE elements. */
#define PIECE ((int64_t)1 << 30)

/* The MPI datatype of a dtype (bool travels as bytes) and the MPI op of a
 * reduction on it (bool: sum and max are a logical or, min a logical and). */
MPI_Datatype mf_dist_mpi_type(MfDType dt);
MPI_Op mf_dist_mpi_op(MfReduceOp op, MfDType dt);

/* Divides a float tensor by 'size' in place (the mean after the sum). */
void mf_dist_divide(MfTensor *t, int size);

/* Frees the registered signatures. */
void mf_dist_signatures_free(void);

#endif
