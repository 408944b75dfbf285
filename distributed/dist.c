/* dist.c — the MPI world of a moonflow process (see dist.h): start-up only
 * when launched by mpirun, rank and size, barrier, abort and finalize, and
 * the hook through which core's MPIAllreduce op reaches MPI.
 *
 * Why not initialise MPI always: a singleton MPI_Init starts Open MPI's
 * run-time (tens of milliseconds, a daemon), which a one-process script
 * does not need; with mpirun's variables absent, size is 1 and collectives
 * are copies. Errors come back as statuses (MPI_ERRORS_RETURN), so a failed
 * collective is a Lua error like any other. */
#include <stdio.h>
#include <stdlib.h>

#include "dist_impl.h"

static bool mpi_on;
static int world_rank, world_size = 1;

static MfStatus hook_allreduce(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                               uint64_t sig)
{
    (void)self;
    return mf_dist_allreduce_into(in, out, op, sig);
}

static MfStatus hook_start(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                           uint64_t sig, void **req)
{
    (void)self;
    MfDistRequest *r = NULL;
    MfStatus st = mf_dist_iallreduce(in, out, op, sig, &r);
    *req = r;
    return st;
}

static MfStatus hook_test(void *self, void *req, bool *done)
{
    (void)self;
    return mf_dist_progress(req, done);
}

static MfStatus hook_wait(void *self, void *req)
{
    (void)self;
    return mf_dist_wait(req);
}

static void hook_join_failed(void *self, const char *why)
{
    (void)self;
    mf_dist_join_failed(why);
}

static const MfCollective collective = {hook_allreduce, hook_start, hook_test, hook_wait,
                                        hook_join_failed, NULL};

bool mf_dist_launched(void)
{
    const char *s = getenv("OMPI_COMM_WORLD_SIZE");
    return s && *s;
}

bool mf_dist_mpi_on(void)
{
    return mpi_on;
}

MfStatus mf_dist_mpi_status(int rc, const char *who)
{
    if (rc == MPI_SUCCESS)
        return MF_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = snprintf(text, sizeof text, "code %d", rc);
    return mf_err_set(MF_EARG, "%s: MPI error: %.*s", who, len, text);
}

MfStatus mf_dist_init(void)
{
    if (mpi_on || !mf_dist_launched())
        return MF_OK;
    if (mf_mpi_load() != MF_OK)
        return MF_EARG;
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
        return mf_err_set(MF_EARG, "mf.dist: MPI_Init_thread failed (code %d)", rc);
    mpi_on = true;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    mf_collective_set(&collective);
    return MF_OK;
}

int mf_dist_rank(void)
{
    return world_rank;
}

int mf_dist_size(void)
{
    return world_size;
}

MfStatus mf_dist_barrier(bool check)
{
    if (world_size == 1)
        return MF_OK;
    MfStatus st = check ? mf_dist_check("barrier", "barrier") : mf_dist_usable("barrier");
    return st == MF_OK ? mf_dist_mpi_status(MPI_Barrier(MPI_COMM_WORLD), "barrier") : st;
}

MfStatus mf_dist_share_status(int root, MfStatus st)
{
    if (world_size == 1)
        return st;
    MfStatus usable = mf_dist_usable("share_status");
    if (usable != MF_OK)
        return usable;
    struct {
        int status;
        char msg[1024];
    } m = {(int)st, {0}};
    if (world_rank == root && st != MF_OK)
        snprintf(m.msg, sizeof m.msg, "%s", mf_err_msg());
    int rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return mf_dist_mpi_status(rc, "share_status");
    if (world_rank == root || m.status == MF_OK)
        return (MfStatus)m.status;
    return mf_err_set((MfStatus)m.status, "%s (on rank %d)", m.msg, root);
}

void mf_dist_abort(int code)
{
    if (mpi_on && world_size > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
}

MfStatus mf_dist_finalize(void)
{
    if (!mpi_on) {
        mf_dist_signatures_free();
        return MF_OK;
    }
    mf_collective_wait_all();   /* no request may outlive MPI */
    mf_err_clear();
    MfStatus st = mf_dist_join_exit();
    mf_dist_signatures_free();
    mf_collective_set(NULL);
    MPI_Finalize();
    mpi_on = false;
    return st;
}
