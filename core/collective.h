/* collective.h — the hook through which core's collective op (MPIAllreduce,
 * core/ops/collective.c) reaches the processes of a distributed run.
 *
 * core/ knows no MPI: distributed/ (above core/) registers an MfCollective with
 * 'mf_collective_set' when a world of more than one process exists. Without
 * one the op runs as the world of size 1 does: the reduction of one tensor
 * is a copy of it.
 *
 * Attributes of MPIAllreduce: 'n' is the MfReduceOp; 'seed' is the hash of
 * a signature text registered with distributed/ (0: no signature exchange), so a
 * graph node carries its signature to every run. */
#ifndef MF_COLLECTIVE_H
#define MF_COLLECTIVE_H

#include <stdbool.h>
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
/* The nonblocking form (MPIAllreduceStart / MPIAllreduceWait): 'start'
 * begins the same reduction and returns a request in '*req' ('in' and
 * 'out' stay untouched until it ends; a transport may also finish it at
 * once); 'test' moves it on and says whether it is done; 'wait' completes
 * it and frees it, also after an error. NULL 'start': the blocking
 * 'allreduce' serves both ops. */
/* 'join_failed': this process failed a step that the others make
 * collectives in ('why': its message, left pending); they are told at
 * their next checked collective (dist.h's mf_dist_join_failed). */
typedef struct MfCollective {
    MfStatus (*allreduce)(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                          uint64_t sig);
    MfStatus (*start)(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                      uint64_t sig, void **req);
    MfStatus (*test)(void *self, void *req, bool *done);
    MfStatus (*wait)(void *self, void *req);
    void (*join_failed)(void *self, const char *why);
    void *self;
} MfCollective;

/* Registers (NULL removes) the hook; borrowed, it must outlive the
 * registration. */
void mf_collective_set(const MfCollective *c);

/* The hook's join_failed (nothing without a hook): the graph executor's
 * run that failed before the checked collectives it needed (graph/exec.c). */
void mf_collective_join_failed(const char *why);

/* ---- started allreduces (MPIAllreduceStart, core/ops/collective.c) --------
 * A start records its request with the tensors it reads and writes (both
 * retained until it ends); MPIAllreduceWait on the result ends it. The
 * graph executor (graph/exec.c) calls 'mf_collective_progress' between
 * nodes while any is pending, since the transport moves only inside its
 * own calls (Open MPI has no progress thread for shared memory), and
 * 'mf_collective_wait_all' when a run ends, so no request outlives the run
 * that started it, also when the run fails (every process started it: it
 * completes). */

/* While on, MPIAllreduceStart reduces at once with the blocking
 * 'allreduce' (the same sum; here faster than a nonblocking start and
 * wait): the graph executor turns it on for a start with no other node
 * ready to run, which nothing could overlap. */
void mf_collective_set_immediate(bool on);

/* The number of started, not yet waited-for allreduces. */
int mf_collective_pending(void);

/* Moves the pending requests on (the oldest not yet done first); the time
 * shows in the profiler as MPIAllreduceWait, as the eager overlap's. */
MfStatus mf_collective_progress(void);

/* Completes every pending request; the first error is returned (an error
 * message set before the call is kept when every wait succeeds). */
MfStatus mf_collective_wait_all(void);

#endif
