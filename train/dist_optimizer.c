/* dist_optimizer.c — DistributedOptimizer's rules (see train.h): its
 * options (Horovod's defaults: the signature check on, 64 MiB fusion
 * buffers, the allreduce overlapped with the backward pass in 4 KiB
 * buckets) and which way compute_gradients averages the gradients: eager
 * with one process, nothing (the mean of one gradient is itself); eager
 * with overlap, buckets reduced during the backward walk (overlap.c);
 * eager without, the fused blocking allreduce (distributed.c); graph mode,
 * start and wait nodes (overlap) or the fused MPIAllreduce nodes. An eager
 * step that fails on this process alone tells the others (dist.h's
 * mf_dist_join_failed), so no process goes on a step ahead of the rest. */
#include "distributed/dist.h"
#include "train.h"

MfDistOptions mf_dist_options_default(void)
{
    return (MfDistOptions){.check = true, .overlap = true, .fusion_bytes = 64 << 20,
                           .bucket_bytes = 4096};
}

MfStatus mf_dist_options_check(const MfDistOptions *d)
{
    if (d->fusion_bytes < 1)
        return mf_err_set(MF_EARG, "DistributedOptimizer: fusion_bytes must be >= 1, got %lld",
                          (long long)d->fusion_bytes);
    if (d->bucket_bytes < 1)
        return mf_err_set(MF_EARG, "DistributedOptimizer: bucket_bytes must be >= 1, got %lld",
                          (long long)d->bucket_bytes);
    return MF_OK;
}

MfStatus mf_optimizer_describe_dist(const MfOptimizer *o, bool lr_callable,
                                    const MfDistOptions *dist, MfStrBuf *out)
{
    if (dist)
        mf_strbuf_add(out, "DistributedOptimizer(");
    MfStatus st = mf_optimizer_describe(o, lr_callable, out);
    if (dist)
        mf_strbuf_addf(out, ", averaged over %d process%s)", mf_dist_size(),
                       mf_dist_size() == 1 ? "" : "es");
    return st;
}

MfStatus mf_train_compute_gradients_dist(MfLossFn fn, void *ctx, int nvars,
                                         MfVariable *const *var_list, const MfDistOptions *dist,
                                         MfTensor **loss, MfGradVar **pairs, int *npairs)
{
    bool reduce = dist && mf_dist_size() > 1;
    unsigned failures = mf_dist_failures();
    MfOverlap *ov = NULL;
    *pairs = NULL;
    *npairs = 0;
    *loss = NULL;
    if (reduce && dist->overlap &&
        !(ov = mf_train_overlap_new(dist->check, dist->bucket_bytes, dist->fusion_bytes)))
        return MF_ENOMEM;
    MfStatus st = mf_train_compute_gradients_overlapped(fn, ctx, nvars, var_list, ov, loss,
                                                        pairs, npairs);
    if (st == MF_OK && reduce)
        st = ov ? mf_train_overlap_finish(ov, *pairs, *npairs)
                : mf_train_allreduce_gradients(*pairs, *npairs, dist->check, dist->fusion_bytes);
    mf_train_overlap_free(ov);
    /* a failure of this process alone (the loss function raised, not a
     * collective that failed everywhere): the others must fail this step too */
    if (st != MF_OK && reduce && dist->check && mf_dist_failures() == failures)
        mf_dist_join_failed(mf_err_msg());
    if (st != MF_OK) {
        mf_grad_vars_free(*pairs, *npairs);
        mf_tensor_release(*loss);
        *pairs = NULL;
        *npairs = 0;
        *loss = NULL;
    }
    return st;
}

MfStatus mf_train_compute_gradients_graph_dist(MfTensor *loss, int nvars,
                                               MfVariable *const *var_list,
                                               const MfDistOptions *dist, MfGradVar **pairs,
                                               int *npairs)
{
    MfStatus st = mf_train_compute_gradients_graph(loss, nvars, var_list, pairs, npairs);
    if (st == MF_OK && dist && dist->overlap)
        st = mf_train_allreduce_gradients_overlapped(*pairs, *npairs, dist->check,
                                                     dist->bucket_bytes);
    else if (st == MF_OK && dist)
        st = mf_train_allreduce_gradients(*pairs, *npairs, dist->check, dist->fusion_bytes);
    if (st != MF_OK) {
        mf_grad_vars_free(*pairs, *npairs);
        *pairs = NULL;
        *npairs = 0;
    }
    return st;
}

MfStatus mf_train_average_for_apply(MfGradVar *pairs, int n, const MfDistOptions *dist)
{
    if (mf_dist_size() == 1)
        return MF_OK;
    return mf_train_allreduce_gradients(pairs, n, dist->check, dist->fusion_bytes);
}
