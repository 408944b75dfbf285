/* test_dist_optimizer.c — train/dist_optimizer.c: DistributedOptimizer's
 * options (defaults, checks and their messages), its print(opt) text, and
 * which way its compute_gradients averages: in graph mode the start and
 * wait nodes with overlap, the fused MPIAllreduce without, nothing for a
 * plain optimizer; eagerly in one process (no mpirun) the gradients stay
 * the plain ones, and a failing loss leaves nothing behind. Also distributed/'s
 * root range and allreduce attributes. */
#include <stdio.h>

#include "testutil.h"

#include "core/ops/reduce.h"
#include "core/variable.h"
#include "distributed/dist.h"
#include "graph/graph.h"
#include "train/train.h"

static void test_options(void **state)
{
    (void)state;
    MfDistOptions d = mf_dist_options_default();
    assert_true(d.check && d.overlap);
    assert_int_equal(d.fusion_bytes, 64 << 20);
    assert_int_equal(d.bucket_bytes, 4096);
    assert_int_equal(mf_dist_options_check(&d), MF_OK);
    d.fusion_bytes = 0;
    assert_int_equal(mf_dist_options_check(&d), MF_EARG);
    assert_error_contains("DistributedOptimizer: fusion_bytes must be >= 1, got 0");
    d = mf_dist_options_default();
    d.bucket_bytes = -5;
    assert_int_equal(mf_dist_options_check(&d), MF_EARG);
    assert_error_contains("DistributedOptimizer: bucket_bytes must be >= 1, got -5");
    /* print(opt): the plain optimizer's text, wrapped with the process count */
    MfOptConfig c = mf_opt_config_default(MF_OPT_SGD, 0.5);
    MfOptimizer *o = mf_optimizer_new(&c);
    MfStrBuf plain = {0}, wrapped = {0};
    d = mf_dist_options_default();
    assert_int_equal(mf_optimizer_describe_dist(o, false, NULL, &plain), MF_OK);
    assert_int_equal(mf_optimizer_describe_dist(o, false, &d, &wrapped), MF_OK);
    char want[512];
    snprintf(want, sizeof want, "DistributedOptimizer(%s, averaged over 1 process)", plain.data);
    assert_string_equal(wrapped.data, want);
    mf_strbuf_free(&plain);
    mf_strbuf_free(&wrapped);
    mf_optimizer_release(o);
}

/* How many nodes of 'g' run op 'name'. */
static int count_ops(const MfGraph *g, const char *name)
{
    int k = 0;
    for (int i = 0; i < mf_graph_nnodes(g); i++)
        k += strcmp(mf_node_op_name(mf_graph_node(g, i)), name) == 0;
    return k;
}

/* Graph compute_gradients of loss = sum(w * w) with 'dist'; the graph. */
static MfGraph *graph_gradients(const MfDistOptions *dist)
{
    MfGraph *g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *init = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    MfNode *w = NULL;
    assert_int_equal(mf_graph_variable(g, init, "w", true, &w), MF_OK);
    mf_tensor_release(init);
    MfVariable *hw = mf_train_graph_handle(w);
    MfTensor *sq = NULL, *loss = NULL;
    assert_int_equal(mf_binary(MF_OP_MUL, hw->value, hw->value, &sq), MF_OK);
    assert_int_equal(mf_reduce(MF_OP_SUM, sq, NULL, 0, false, &loss), MF_OK);
    MfGradVar *pairs = NULL;
    int n = 0;
    assert_int_equal(mf_train_compute_gradients_graph_dist(loss, 0, NULL, dist, &pairs, &n),
                     MF_OK);
    assert_int_equal(n, 1);
    assert_non_null(pairs[0].grad->node);
    mf_grad_vars_free(pairs, n);
    mf_tensor_release(sq);
    mf_tensor_release(loss);
    mf_variable_release(hw);
    mf_graph_pop_default();
    return g;
}

static void test_graph_paths(void **state)
{
    (void)state;
    MfDistOptions d = mf_dist_options_default();
    MfGraph *g = graph_gradients(&d);
    assert_int_equal(count_ops(g, "MPIAllreduceStart"), 1);
    assert_int_equal(count_ops(g, "MPIAllreduceWait"), 1);
    assert_int_equal(count_ops(g, "MPIAllreduce"), 0);
    mf_graph_release(g);
    d.overlap = false;
    g = graph_gradients(&d);
    assert_int_equal(count_ops(g, "MPIAllreduceStart"), 0);
    assert_int_equal(count_ops(g, "MPIAllreduce"), 1);
    mf_graph_release(g);
    g = graph_gradients(NULL);
    assert_int_equal(count_ops(g, "MPIAllreduceStart") + count_ops(g, "MPIAllreduce"), 0);
    mf_graph_release(g);
}

static MfStatus square_loss(void *ctx, MfTensor **loss)
{
    MfTensor *x = mf_variable_read(ctx), *sq = NULL;
    MfStatus st = mf_binary(MF_OP_MUL, x, x, &sq);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, sq, NULL, 0, false, loss);
    mf_tensor_release(sq);
    return st;
}

static MfStatus failing_loss(void *ctx, MfTensor **loss)
{
    (void)ctx;
    (void)loss;
    return mf_err_set(MF_EARG, "my loss failed");
}

static void test_eager_one_process(void **state)
{
    (void)state;
    MfTensor *init = make_tensor(MF_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    MfVariable *w = mf_variable_new(init, "w", true);
    mf_tensor_release(init);
    assert_non_null(w);
    MfDistOptions d = mf_dist_options_default();
    for (int overlap = 0; overlap < 2; overlap++) {
        d.overlap = overlap;
        MfGradVar *pairs = NULL;
        MfTensor *loss = NULL;
        int n = 0;
        assert_int_equal(mf_train_compute_gradients_dist(square_loss, w, 0, NULL, &d, &loss,
                                                         &pairs, &n), MF_OK);
        assert_int_equal(n, 1);
        assert_values(pairs[0].grad, (double[]){2, 4}, 2, 0);   /* the mean of one */
        assert_values(loss, (double[]){5}, 1, 0);
        mf_grad_vars_free(pairs, n);
        mf_tensor_release(loss);
        assert_int_equal(mf_train_compute_gradients_dist(failing_loss, w, 0, NULL, &d, &loss,
                                                         &pairs, &n), MF_EARG);
        assert_error_contains("my loss failed");
        assert_null(pairs);
        assert_null(loss);
        assert_int_equal(n, 0);
    }
    mf_variable_release(w);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* distributed/'s broadcast and allgather take eager tensors only. */
static void test_collectives_need_values(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *out = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_dist_broadcast(x, 0, true, &out), MF_EARG);
    assert_null(out);
    assert_error_contains("broadcast: expected an eager tensor, got a graph tensor (run it "
                          "with a Session first)");
    assert_int_equal(mf_dist_allgather(x, true, &out), MF_EARG);
    assert_error_contains("allgather: expected an eager tensor, got a graph tensor");
    mf_tensor_release(x);
    mf_graph_release(g);
    MfTensor *v = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    assert_int_equal(mf_dist_broadcast(v, 1, true, &out), MF_EARG);
    assert_error_contains("broadcast: root must be a rank in 0..0, got 1");
    /* a Lua integer is 64 bits: checked before it is narrowed to an int */
    assert_int_equal(mf_dist_check_root("broadcast_variables", INT64_C(1) << 32), MF_EARG);
    assert_error_contains("broadcast_variables: root must be a rank in 0..0, got 4294967296");
    assert_int_equal(mf_dist_check_root("broadcast", -1), MF_EARG);
    assert_error_contains("broadcast: root must be a rank in 0..0, got -1");
    assert_int_equal(mf_dist_check_root("broadcast", 0), MF_OK);
    /* allreduce's op by name (none: the mean), its signature only with 'check' */
    MfAttrs a;
    assert_int_equal(mf_dist_allreduce_attrs(NULL, v, true, &a), MF_OK);
    assert_int_equal(a.reduce_op, MF_REDUCE_MEAN);
    assert_int_equal(mf_dist_allreduce_attrs("max", v, false, &a), MF_OK);
    assert_int_equal(a.reduce_op, MF_REDUCE_MAX);
    assert_true(a.signature == 0);
    assert_int_equal(mf_dist_allreduce_attrs("avg", v, true, &a), MF_EARG);
    assert_error_contains("allreduce: op must be \"mean\", \"sum\", \"max\" or \"min\", got avg");
    assert_int_equal(mf_dist_broadcast(v, 0, true, &out), MF_OK);
    assert_values(out, (double[]){1, 2}, 2, 0);
    mf_tensor_release(out);
    assert_int_equal(mf_dist_allgather(v, true, &out), MF_OK);
    assert_values(out, (double[]){1, 2}, 2, 0);
    mf_tensor_release(out);
    mf_tensor_release(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_options),
        TEST(test_graph_paths),
        TEST(test_eager_one_process),
        TEST(test_collectives_need_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
