/* request.c — the nonblocking allreduce (see dist.h): MPI_Iallreduce
 * started while the backward pass goes on, progressed by MPI_Test between
 * backward ops, completed by MPI_Wait before the optimizer applies.
 *
 * Open MPI has no progress thread for shared memory: a started collective
 * moves only inside MPI calls of this process, hence 'mf_dist_progress'
 * between ops. The signature exchange stays blocking and comes first, so a
 * mismatch fails on every process before any bytes move. */
#include <string.h>

#include "core/alloc.h"
#include "dist_impl.h"

struct MfDistRequest {
    MPI_Request req;
    MfTensor *out;   /* retained until the request ends */
    MfReduceOp op;
    bool active;     /* an MPI request to complete */
};

static MfStatus finish(MfDistRequest *r)
{
    r->active = false;
    if (r->op == MF_REDUCE_MEAN && mf_dist_size() > 1)
        mf_dist_divide(r->out, mf_dist_size());
    return MF_OK;
}

MfStatus mf_dist_iallreduce(const MfTensor *in, MfTensor *out, MfReduceOp op, uint64_t sig,
                            MfDistRequest **req)
{
    *req = NULL;
    MfDistRequest *r = mf_alloc_zeroed(sizeof *r);
    if (!r)
        return mf_err_nomem("allreduce", sizeof *r);
    mf_tensor_retain(out);
    r->out = out;
    r->op = op;
    int64_t n = mf_tensor_numel(out);
    MfStatus st;
    if (mf_dist_size() == 1 || n > PIECE || !mf_tensor_is_contiguous(in)) {
        st = mf_dist_allreduce_into(in, out, op, sig);   /* done when it returns */
    } else {
        st = sig ? mf_dist_check_hash("allreduce", sig, NULL, n) : mf_dist_usable("allreduce");
        int rc = st == MF_OK ? MPI_Iallreduce(mf_tensor_data(in), mf_tensor_data(out), (int)n,
                                              mf_dist_mpi_type(out->dtype),
                                              mf_dist_mpi_op(op, out->dtype), MPI_COMM_WORLD,
                                              &r->req)
                             : MPI_SUCCESS;
        if (st == MF_OK)
            st = mf_dist_mpi_status(rc, "allreduce");
        r->active = st == MF_OK;
    }
    if (st != MF_OK) {
        mf_tensor_release(r->out);
        mf_dealloc(r, sizeof *r);
        return st;
    }
    *req = r;
    return MF_OK;
}

MfStatus mf_dist_progress(MfDistRequest *r, bool *done)
{
    *done = !r->active;
    if (!r->active)
        return MF_OK;
    int flag = 0;
    MfStatus st = mf_dist_mpi_status(MPI_Test(&r->req, &flag, MPI_STATUS_IGNORE), "allreduce");
    if (st == MF_OK && flag) {
        *done = true;
        st = finish(r);
    }
    return st;
}

MfStatus mf_dist_wait(MfDistRequest *r)
{
    if (!r)
        return MF_OK;
    MfStatus st = MF_OK;
    if (r->active) {
        st = mf_dist_mpi_status(MPI_Wait(&r->req, MPI_STATUS_IGNORE), "allreduce");
        if (st == MF_OK)
            st = finish(r);
    }
    mf_tensor_release(r->out);
    mf_dealloc(r, sizeof *r);
    return st;
}
