/* test_batching.c — batching rules (eager/batching.c) for mf.vmap: every
 * case of the grad_cases_*.h files whose op has a rule runs on a batch of
 * three examples (float64) in two ways, every float input batched, and
 * only the first input batched (the others shared by every example); the
 * rule's outputs must equal a loop of the op over the examples, stacked
 * (within rounding: a batched GEMM may sum in another order). A rule may
 * refuse a way with a clear "vmap: ..." error (a batched filter, say): the
 * refusals and the ops with no rule at all are listed, not failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "eager/batching.h"
#include "case_lists.h"

#define NB 3
#define RTOL 1e-12

/* 'n' tensors stacked along a new first axis (owned). */
static MfTensor *stack(MfTensor **t, int n)
{
    MfAttrs a = mf_attrs_default();
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(MF_OP_STACK, n, t, &a, &out), MF_OK);
    return out;
}

static bool close_enough(const MfTensor *got, const MfTensor *want)
{
    if (got->rank != want->rank || got->dtype != want->dtype)
        return false;
    for (int d = 0; d < got->rank; d++)
        if (got->shape[d] != want->shape[d])
            return false;
    for (int64_t e = 0; e < mf_tensor_numel(got); e++) {
        double g = mf_tensor_get(got, e), w = mf_tensor_get(want, e);
        if (!(fabs(g - w) <= RTOL * (1 + fabs(w))) && !(g != g && w != w))
            return false;
    }
    return true;
}

/* One way of batching a case: input i batched when bit i of 'which' is
 * set. Returns 1 on a mismatch or an unclear failure, 0 otherwise;
 * '*refused' set when the rule refused clearly. */
static int check_way(const GradCase *gc, GnInputs *ex, unsigned which, bool *refused)
{
    int n = ex[0].n, nout = 0, bad = 0;
    MfTensor *in[GC_MAX_INPUTS], *per[NB][MF_MAX_OUTPUTS], *outs[MF_MAX_OUTPUTS];
    bool batched[GC_MAX_INPUTS], ob[MF_MAX_OUTPUTS];
    for (int i = 0; i < n; i++) {
        MfTensor *col[NB];
        batched[i] = (which >> i) & 1;
        for (int e = 0; e < NB; e++)
            col[e] = batched[i] ? ex[e].t[i] : ex[0].t[i];
        in[i] = batched[i] ? stack(col, NB) : ex[0].t[i];
        if (!batched[i])
            mf_tensor_retain(in[i]);
    }
    for (int e = 0; e < NB; e++) {
        MfTensor *args[GC_MAX_INPUTS];
        for (int i = 0; i < n; i++)
            args[i] = batched[i] ? ex[e].t[i] : ex[0].t[i];
        assert_int_equal(mf_op_call(gc->op, n, args, &ex[0].attrs, per[e], &nout), MF_OK);
    }
    MfOpCall call = {.op = gc->op, .ninputs = n, .inputs = in, .attrs = &ex[0].attrs};
    MfBatchCall b = {&call, batched, NB};
    MfStatus st = mf_batch_call(&b, outs, ob);
    *refused = st != MF_OK && strncmp(mf_err_msg(), "vmap: ", 6) == 0;
    if (st != MF_OK && !*refused) {
        print_error("%s (%s), inputs 0x%x batched: the rule failed: %s\n",
                    mf_op_table[gc->op]->name, gc->label, which, mf_err_msg());
        bad = 1;
    }
    mf_err_clear();
    for (int k = 0; k < nout && st == MF_OK && !bad; k++) {
        MfTensor *col[NB];
        for (int e = 0; e < NB; e++)
            col[e] = per[e][k];
        MfTensor *want = ob[k] ? stack(col, NB) : per[0][k];
        if (!ob[k])
            mf_tensor_retain(want);
        bool same = close_enough(outs[k], want);
        for (int e = 1; e < NB && !ob[k]; e++)   /* shared: every example's own */
            same = same && close_enough(outs[k], per[e][k]);
        if (!same) {
            print_error("%s (%s), inputs 0x%x batched: output %d differs from the loop over "
                        "examples\n", mf_op_table[gc->op]->name, gc->label, which, k + 1);
            bad = 1;
        }
        mf_tensor_release(want);
    }
    for (int e = 0; e < NB; e++)
        gn_release_n(per[e], MF_MAX_OUTPUTS);
    if (st == MF_OK)
        gn_release_n(outs, MF_MAX_OUTPUTS);
    gn_release_n(in, n);
    return bad;
}

static void test_rules_match_a_loop_over_examples(void **state)
{
    (void)state;
    int bad = 0, ncases = 0, nrefused = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t c = 0; c < lists[l].n; c++) {
            const GradCase *gc = &lists[l].cases[c];
            if (!gc->label || mf_batch_rule(gc->op).kind == MF_BATCH_NONE)
                continue;
            GnInputs ex[NB];
            for (int e = 0; e < NB; e++)
                gn_inputs(gc, 3000 + 100 * l + c + 7919 * (uint64_t)e, &ex[e]);
            unsigned floats = 0;
            for (int i = 0; i < ex[0].n; i++)
                floats |= (gc->dtype[i] == MF_FLOAT64 ? 1u : 0u) << i;
            bool refused[2];
            bad += check_way(gc, ex, floats ? floats : 1u, &refused[0]);
            bad += check_way(gc, ex, 1u, &refused[1]);
            for (int w = 0; w < 2; w++)
                if (refused[w]) {
                    printf("  refused: %s (%s) with %s batched\n", mf_op_table[gc->op]->name,
                           gc->label, w ? "input 1" : "every float input");
                    nrefused++;
                }
            for (int e = 0; e < NB; e++)
                gn_release_n(ex[e].t, ex[e].n);
            ncases++;
        }
    printf("  %d cases batched two ways, %d refusals\n", ncases, nrefused);
    if (bad) {
        print_error("%d batching rules differ from the loop\n", bad);
        fail();
    }
}

/* The walk: which ops have no batching rule (vmap names them when it
 * meets one); every op flagged elementwise has the elementwise rule. */
static void test_ops_without_a_batching_rule_are_listed(void **state)
{
    (void)state;
    char line[4096] = "";
    int missing = 0;
    for (int op = 0; op < MF_NOPS; op++) {
        MfBatchRule r = mf_batch_rule((MfOpId)op);
        if (mf_op_table[op]->flags & MF_OP_ELEMENTWISE)
            assert_int_not_equal(r.kind, MF_BATCH_NONE);
        if (r.kind != MF_BATCH_NONE)
            continue;
        missing++;
        if (strlen(line) + strlen(mf_op_table[op]->name) + 3 < sizeof line)
            strcat(strcat(line, " "), mf_op_table[op]->name);
    }
    printf("  %d of %d ops have no batching rule (eager/batching.c):%s\n", missing, MF_NOPS,
           line);
    assert_true(missing < MF_NOPS);
}

static void test_an_op_without_a_rule_is_a_clear_error(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 2};
    MfTensor *x = make_tensor(MF_FLOAT64, 2, shape, (double[]){1, 2, 3, 4});
    MfTensor *outs[MF_MAX_OUTPUTS];
    bool batched[1] = {true}, ob[MF_MAX_OUTPUTS];
    MfAttrs a = mf_attrs_default();
    a.nints = 1;
    a.ints[0] = 1;
    a.naxes = 1;
    a.axes[0] = 0;
    MfOpCall call = {.op = MF_OP_ROLL, .ninputs = 1, .inputs = &x, .attrs = &a};
    MfBatchCall b = {&call, batched, 2};
    assert_int_equal(mf_batch_call(&b, outs, ob), MF_EARG);
    assert_error_contains("vmap: Roll (roll) has no batching rule (add its line to the table "
                          "in eager/batching.c)");
    mf_err_clear();
    mf_tensor_release(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_ops_without_a_batching_rule_are_listed),
        TEST(test_rules_match_a_loop_over_examples),
        TEST(test_an_op_without_a_rule_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
