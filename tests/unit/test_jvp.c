/* test_jvp.c — forward-mode rules (eager/jvp.c): every case of the
 * grad_cases_*.h files runs its op in float64, and the rule's tangents for
 * random input tangents t are compared with central differences along t,
 * (op(x + eps t) - op(x - eps t)) / (2 eps), for every float64 output. The
 * same rule is then built into a graph over placeholders (as inside
 * mf.trace: the transposed rules take symbolic gradients there,
 * mode/forward_graph.c), run with the same values fed, and checked against
 * the same differences. A walk of the op table fails when a differentiable
 * op has no forward rule, naming it and the table to add it to. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/grad.h"
#include "eager/jvp.h"
#include "mode/mode.h"
#include "case_lists.h"

#define EPS 1e-6
#define ATOL 1e-6
#define RTOL 1e-5

static int run_op(const GradCase *gc, GnInputs *in, MfTensor **outs)
{
    int nout = 0;
    MfStatus st = mf_op_call(gc->op, in->n, in->t, &in->attrs, outs, &nout);
    if (st != MF_OK) {
        print_error("%s (%s): forward failed: %s\n", mf_op_table[gc->op]->name, gc->label,
                    mf_err_msg());
        fail();
    }
    for (int k = 0; k < nout; k++) {   /* a view's values would move with its input */
        MfTensor *copy = mf_tensor_clone(outs[k]);
        assert_non_null(copy);
        mf_tensor_release(outs[k]);
        outs[k] = copy;
    }
    return nout;
}

/* x += k * t on every float64 input with a tangent. */
static void shift(GnInputs *in, MfTensor *const *tan, double k)
{
    for (int i = 0; i < in->n; i++) {
        if (!tan[i])
            continue;
        double *x = mf_tensor_data(in->t[i]);
        for (int64_t e = 0; e < mf_tensor_numel(in->t[i]); e++)
            x[e] += k * mf_tensor_get(tan[i], e);
    }
}

/* Mismatches between the rule's tangents and central differences. */
static int compare(const GradCase *gc, GnInputs *in, MfTensor *const *tan, MfTensor **dout)
{
    MfTensor *plus[MF_MAX_OUTPUTS], *minus[MF_MAX_OUTPUTS];
    shift(in, tan, EPS);
    int nout = run_op(gc, in, plus);
    shift(in, tan, -2 * EPS);
    run_op(gc, in, minus);
    shift(in, tan, EPS);
    int bad = 0;
    for (int k = 0; k < nout; k++) {
        if (plus[k]->dtype != MF_FLOAT64)
            continue;
        for (int64_t e = 0; e < mf_tensor_numel(plus[k]); e++) {
            double num = (mf_tensor_get(plus[k], e) - mf_tensor_get(minus[k], e)) / (2 * EPS);
            double got = dout[k] ? mf_tensor_get(dout[k], e) : 0;
            if (fabs(got - num) <= ATOL + RTOL * fabs(num))
                continue;
            if (bad++ < 4)
                print_error("%s (%s): tangent of output %d, element %lld: rule %.12g, "
                            "numeric %.12g\n", mf_op_table[gc->op]->name, gc->label, k + 1,
                            (long long)e, got, num);
        }
    }
    gn_release_n(plus, MF_MAX_OUTPUTS);
    gn_release_n(minus, MF_MAX_OUTPUTS);
    return bad;
}

/* The rule built into a graph over placeholders for the inputs and the
 * tangents, run with 'in' and 'tan' fed: 'dout' gets the values (owned,
 * NULL where the rule gives none). False, with the message printed, when
 * building or running fails. */
static bool graph_jvp(const GradCase *gc, GnInputs *in, MfTensor *const *tan, MfTensor **dout)
{
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    MfTensor *ph[2 * GC_MAX_INPUTS] = {NULL}, *feed[2 * GC_MAX_INPUTS];
    MfTensor *tangents[GC_MAX_INPUTS] = {NULL};
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL}, *sym[MF_MAX_OUTPUTS] = {NULL};
    int nph = 0, nout = 0;
    for (int i = 0; i < in->n; i++) {
        assert_int_equal(mf_graph_placeholder(g, in->t[i]->dtype, in->t[i]->rank,
                                              in->t[i]->shape, NULL, &ph[i]), MF_OK);
        feed[nph++] = in->t[i];
    }
    for (int i = 0; i < in->n; i++)
        if (tan[i]) {   /* the tangents' placeholders after the inputs' */
            assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, tan[i]->rank, tan[i]->shape,
                                                  NULL, &ph[nph]), MF_OK);
            tangents[i] = ph[nph];
            feed[nph++] = tan[i];
        }
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfStatus st = mf_op_call(gc->op, in->n, ph, &in->attrs, outs, &nout);
    MfOpCall call = {.op = gc->op, .ninputs = in->n, .inputs = ph, .attrs = &in->attrs,
                     .noutputs = nout};
    MfJvpCall j = {.call = &call, .outputs = outs, .tangents = tangents};
    if (st == MF_OK)
        st = mf_jvp_call(&j, sym);
    mf_graph_pop_default();
    MfTensor *fetch[MF_MAX_OUTPUTS], *vals[MF_MAX_OUTPUTS] = {NULL};
    int nf = 0, at[MF_MAX_OUTPUTS];
    for (int k = 0; k < MF_MAX_OUTPUTS && st == MF_OK; k++)
        if (sym[k]) {
            at[nf] = k;
            fetch[nf++] = sym[k];
        }
    if (st == MF_OK && nf)
        st = mf_exec_run(g, nf, fetch, 0, NULL, nph, ph, feed, NULL, vals, NULL);
    if (st != MF_OK)
        print_error("%s (%s): the forward rule in a graph failed: %s\n",
                    mf_op_table[gc->op]->name, gc->label, mf_err_msg());
    mf_err_clear();
    for (int k = 0; k < nf && st == MF_OK; k++)
        dout[at[k]] = vals[k];
    gn_release_n(sym, MF_MAX_OUTPUTS);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    gn_release_n(ph, nph);
    mf_graph_release(g);
    return st == MF_OK;
}

static int check_case(const GradCase *gc, uint64_t seed)
{
    GnInputs in;
    MfTensor *outs[MF_MAX_OUTPUTS], *tan[GC_MAX_INPUTS] = {0}, *dout[MF_MAX_OUTPUTS];
    gn_inputs(gc, seed, &in);
    for (int i = 0; i < in.n; i++) {
        if (gc->dtype[i] != MF_FLOAT64)
            continue;
        tan[i] = mf_tensor_new(MF_FLOAT64, in.t[i]->rank, in.t[i]->shape);
        for (int64_t e = 0; e < mf_tensor_numel(tan[i]); e++)
            ((double *)mf_tensor_data(tan[i]))[e] = gn_rnd(-1, 1);
    }
    int nout = run_op(gc, &in, outs);
    MfOpCall call = {.op = gc->op, .ninputs = in.n, .inputs = in.t, .attrs = &in.attrs,
                     .noutputs = nout};
    MfJvpCall j = {.call = &call, .outputs = outs, .tangents = tan};
    int bad = 0;
    if (mf_jvp_call(&j, dout) != MF_OK) {
        print_error("%s (%s): forward rule failed: %s\n", mf_op_table[gc->op]->name, gc->label,
                    mf_err_msg());
        mf_err_clear();
        bad = 1;
    } else {
        bad = compare(gc, &in, tan, dout);
        gn_release_n(dout, MF_MAX_OUTPUTS);
    }
    MfTensor *gout[MF_MAX_OUTPUTS] = {NULL};
    bad += graph_jvp(gc, &in, tan, gout) ? compare(gc, &in, tan, gout) : 1;
    gn_release_n(gout, MF_MAX_OUTPUTS);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    gn_release_n(tan, GC_MAX_INPUTS);
    gn_release_n(in.t, in.n);
    return bad;
}

static void test_rules_match_finite_differences(void **state)
{
    (void)state;
    mf_forward_graph_register();
    int bad = 0, ncases = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t i = 0; i < lists[l].n; i++) {
            const GradCase *gc = &lists[l].cases[i];
            if (!gc->label || !mf_op_differentiable(gc->op))
                continue;
            bad += check_case(gc, 2000 + 100 * l + i);
            ncases++;
        }
    if (bad) {
        print_error("%d forward-mode mismatches over %d cases\n", bad, ncases);
        fail();
    }
}

static void test_every_differentiable_op_has_a_forward_rule(void **state)
{
    (void)state;
    int missing = 0;
    for (int op = 0; op < MF_NOPS; op++) {
        if (!mf_op_differentiable((MfOpId)op) || mf_jvp_rule((MfOpId)op).kind != MF_JVP_NONE)
            continue;
        print_error("differentiable op %s (%s) has no forward-mode rule: add its line to the "
                    "table 'rules' in eager/jvp.c (UNARY, LINEAR(mask), BILINEAR(mask), OWN(f) "
                    "or TRANSPOSE)\n", mf_op_table[op]->name, mf_op_table[op]->api);
        missing++;
    }
    if (missing) {
        print_error("%d differentiable ops lack a forward rule\n", missing);
        fail();
    }
}

static void test_missing_rule_is_a_clear_error(void **state)
{
    (void)state;
    int64_t n = 2;
    MfTensor *x = make_tensor(MF_FLOAT64, 1, &n, (double[]){1, 2});
    MfTensor *outs[MF_MAX_OUTPUTS] = {0}, *dout[MF_MAX_OUTPUTS];
    MfTensor *tan[1] = {x};
    assert_int_equal(mf_op_call(MF_OP_FLOOR, 1, &x, NULL, outs, NULL), MF_OK);
    MfOpCall call = {.op = MF_OP_FLOOR, .ninputs = 1, .inputs = &x, .noutputs = 1};
    MfJvpCall j = {.call = &call, .outputs = outs, .tangents = tan};
    assert_int_equal(mf_jvp_call(&j, dout), MF_EARG);
    assert_error_contains("op Floor (floor) has no forward rule: add one to the "
                          "table in eager/jvp.c");
    gn_release_n(outs, MF_MAX_OUTPUTS);
    mf_tensor_release(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_every_differentiable_op_has_a_forward_rule),
        TEST(test_rules_match_finite_differences),
        TEST(test_missing_rule_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
