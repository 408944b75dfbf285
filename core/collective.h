/* collective.h — the hook through which core's collective op (MPIAllreduce,
 * core/ops/collective.c) reaches the processes of a distributed run.
 *
 * core/ knows no MPI: dist/ (above core/) registers an MfCollective with
 * 'mf_collective_set' when a world of more than one process exists. Without
 * one the op runs as the world of size 1 does: the reduction of one tensor
 * is a copy of it.
 *
 * Attributes of MPIAllreduce: 'n' is the MfReduceOp; 'seed' is the hash of
 * a signature text registered with dist/ (0: no signature exchange), so a
 * graph node carries its signature to every run. */
#ifndef MF_COLLECTIVE_H
#define MF_COLLECTIVE_H

#include <stdint.h>

#include "err.h"
#include "tensor.h"

typedef enum MfReduceOp {
    MF_REDUCE_SUM = 0,
    MF_REDUCE_MEAN,
    MF_REDUCE_MAX,
    MF_REDUCE_MIN,
    MF_NREDUCE
} MfReduceOp;

/* "sum", "mean", "max", "min" (NULL out of range). */
const char *mf_reduce_name(MfReduceOp op);

/* The reduction of 'n' into 'out' over every process: 'in' (any layout) and
 * 'out' (contiguous, same dtype and shape) may not alias. 'sig' as above.
 * Returns MF_OK or an error with its message set (a signature mismatch, an
 * MPI failure). */
typedef struct MfCollective {
    MfStatus (*allreduce)(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                          uint64_t sig);
    void *self;
} MfCollective;

/* Registers (NULL removes) the hook; borrowed, it must outlive the
 * registration. */
void mf_collective_set(const MfCollective *c);
const MfCollective *mf_collective_get(void);

#endif
