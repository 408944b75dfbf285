/* dist.h — the public header of distributed/: the processes of a data-parallel
 * run over MPI (Open MPI), as Horovod and Torch7's torch-distlearn use it.
 *
 * A program started by 'mpirun' (Open MPI sets OMPI_COMM_WORLD_SIZE) calls
 * 'mf_dist_init' once; any other start is a world of one process: rank 0,
 * size 1, and MPI is never initialised (no start-up cost, no daemon).
 *
 * Every collective here (and the MPIAllreduce op, through the hook of
 * core/collective.h) starts with a header exchange when 'check' is true or
 * a signature hash is given: each process contributes its count of checked
 * collectives, the hash of a text describing its call ("allreduce(sum)
 * float32 (3,4)") and the call's element count at run time; when they
 * differ, the texts are gathered and every process returns the same error,
 * naming rank 0's side and the first rank that differs. A mismatch in
 * shape, dtype or order of collectives thus fails on every process instead
 * of hanging or mixing bytes. The option must be the same on every process.
 * A process that ends its script joins with an "exit" header (the others'
 * collective fails, and every later one), and a step that fails on one
 * process alone joins with a "failed" one (mf_dist_join_failed).
 *
 * Only the main thread calls MPI (MPI_THREAD_FUNNELED). Errors: MF_EARG /
 * MF_ESHAPE / MF_EDTYPE with a message naming the collective, MF_ENOMEM;
 * an MPI error code comes back as MF_EARG with MPI's error string.
 * Returned tensors are owned by the caller. */
#ifndef MF_DIST_H
#define MF_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/collective.h"
#include "core/op.h"
#include "core/variable.h"

/* True when this process was started by mpirun (OMPI_COMM_WORLD_SIZE). */
bool mf_dist_launched(void);

/* Initialises MPI when launched by mpirun (idempotent; nothing otherwise)
 * and registers the collective hook of core/. */
MfStatus mf_dist_init(void);

/* This process's rank (0-based) and the number of processes (1 when not
 * launched by mpirun). */
int mf_dist_rank(void);
int mf_dist_size(void);

/* Waits for every process. */
MfStatus mf_dist_barrier(bool check);

/* The collective hook's allreduce (core/collective.h), callable directly:
 * 'out' contiguous, of 'in's dtype and shape. */
MfStatus mf_dist_allreduce_into(const MfTensor *in, MfTensor *out, MfReduceOp op, uint64_t sig);

/* The same reduction, nonblocking (MPI_Iallreduce): after the signature
 * exchange (blocking, when 'sig' is not 0) it starts and returns a request
 * in '*req'. 'in' (read) and 'out' (written) must stay untouched until the
 * request ends; 'out' is retained meanwhile. 'mf_dist_progress' moves it on
 * (Open MPI progresses only inside MPI calls) and says when it is done;
 * 'mf_dist_wait' completes it (the mean divided) and frees it, also after
 * an error (NULL: nothing). Every process must start the same requests in
 * the same order. A world of one process, a non-contiguous 'in' or more
 * than 2^30 elements reduce at once (the request is done). */
typedef struct MfDistRequest MfDistRequest;
MfStatus mf_dist_iallreduce(const MfTensor *in, MfTensor *out, MfReduceOp op, uint64_t sig,
                            MfDistRequest **req);
MfStatus mf_dist_progress(MfDistRequest *r, bool *done);
MfStatus mf_dist_wait(MfDistRequest *r);

/* The attributes of mf.dist.allreduce's MPIAllreduce op: the reduction
 * named 'op' ("sum", "mean", "max" or "min"; NULL: "mean") and, with
 * 'check', the signature of this call on 't' (mf_dist_signature). MF_EARG
 * naming "allreduce" for another name ('op' is shown as given). */
MfStatus mf_dist_allreduce_attrs(const char *op, const MfTensor *t, bool check, MfAttrs *a);

/* MF_EARG "WHO: root must be a rank in 0..size-1, got ROOT" unless 'root'
 * is a rank of this run (any 64-bit value, as a Lua integer may be). */
MfStatus mf_dist_check_root(const char *who, int64_t root);

/* Root's tensor on every process: '*out' has 't's shape and dtype, which
 * must be the same on every process (checked with 'check'). MF_EARG for a
 * graph tensor (no value yet) or a root outside 0..size-1. */
MfStatus mf_dist_broadcast(MfTensor *t, int root, bool check, MfTensor **out);

/* The tensors of every process concatenated along the first axis, in rank
 * order (scalars are stacked: shape (size)). The first dimension may differ
 * between processes; the rest and the dtype may not. MF_EARG for a graph
 * tensor. */
MfStatus mf_dist_allgather(MfTensor *t, bool check, MfTensor **out);

/* Assigns root's values to the eager Variables 'vars[0..n)' of every
 * process (one broadcast per Variable, after one signature exchange for
 * the list). */
MfStatus mf_dist_broadcast_variables(int n, MfVariable *const *vars, int root, bool check);

/* Registers 'text' as a signature (kept until mf_dist_finalize) and returns
 * its hash for an MPIAllreduce's 'seed' attribute; 0 (no exchange) in a
 * world of one process. */
uint64_t mf_dist_signature(const char *text);

/* The header exchange itself, for 'who' ("barrier", ...). */
MfStatus mf_dist_check(const char *who, const char *text);

/* The number of header exchanges that failed so far, and of failures told
 * with mf_dist_join_failed. Such an error is known to every process; any
 * other error of a step is this process's alone, which it must tell the
 * others (mf_dist_join_failed), once. */
unsigned mf_dist_failures(void);

/* A step that failed on this process only ('why': its message, kept as
 * the pending error): joins the others' next checked collective with a
 * "failed" header, so they raise "rank R failed its step (why) while rank
 * Q made collective #N, ..." in the same step instead of mixing this
 * process's next step with their current one. Only for steps whose
 * collectives are checked (a header exchange pairs with a header
 * exchange). Nothing in a world of one process. */
void mf_dist_join_failed(const char *why);

/* Root's status 'st' (and its error message) on every process: returns
 * root's status, with root's message set on the others when it failed. */
MfStatus mf_dist_share_status(int root, MfStatus st);

/* Ends every process of the run (MPI_Abort with 'code'), when MPI is
 * initialised and there is more than one; returns otherwise. For the
 * program's top level only (repl/main.c): an error on one process. */
void mf_dist_abort(int code);

/* The end of this process's part of the run: completes the started
 * allreduces, joins the others with an "exit" header (their collectives
 * fail instead of waiting for it), then MPI_Finalize when initialised;
 * frees the signatures. Idempotent. An error (message set) when another
 * process was making a collective meanwhile: the run was inconsistent. */
MfStatus mf_dist_finalize(void);

#endif
