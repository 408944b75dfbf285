/* test_graph_train.c — graph-mode training from C (train/graph_train.c and
 * the executor's in-place path in graph/exec.c): the train op's nodes and
 * names, updates written in place into the session's buffers (the same
 * buffer step after step), copy-on-write when a value is still held (the
 * initial value's Const, a fetched result), the graph's global step, the
 * graph Saver, and the errors. Every test releases what it made. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

#include "core/variable.h"
#include "graph/graph.h"
#include "mode/mode.h"
#include "train/train.h"

static MfTensor *vec(double a, double b)
{
    return make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){a, b});
}

static void run_op(MfSession *s, MfNode *op)
{
    assert_int_equal(mf_session_run(s, 0, NULL, 1, &op, 0, NULL, NULL, NULL, NULL, NULL), MF_OK);
}

static MfTensor *run1(MfSession *s, MfTensor *fetch)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_session_run(s, 1, &fetch, 0, NULL, 0, NULL, NULL, NULL, &out, NULL),
                     MF_OK);
    return out;
}

/* A graph with w = [1, 2], loss = sum(w * w) and an Adam train op. */
typedef struct Model {
    MfGraph *g;
    MfNode *w, *train, *init;
    MfVariable *hw, *gs;
    MfOptimizer *opt;
    MfTensor *loss;
    MfSession *sess;
} Model;

static void build(Model *m, bool with_step)
{
    memset(m, 0, sizeof *m);
    m->g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(m->g), MF_OK);
    MfTensor *init = vec(1, 2), *sq = NULL;
    assert_int_equal(mf_graph_variable(m->g, init, "w", true, &m->w), MF_OK);
    mf_tensor_release(init);
    m->hw = mf_train_graph_handle(m->w);
    assert_int_equal(mf_binary(MF_OP_MUL, m->hw->value, m->hw->value, &sq), MF_OK);
    MfAttrs a = mf_attrs_default();
    a.all_axes = true;
    assert_int_equal(mf_op1(MF_OP_SUM, 1, &sq, &a, &m->loss), MF_OK);
    mf_tensor_release(sq);
    if (with_step)
        assert_int_equal(mf_train_graph_global_step(m->g, &m->gs), MF_OK);
    MfOptConfig cfg = mf_opt_config_default(MF_OPT_ADAM, 0.1);
    m->opt = mf_optimizer_new(&cfg);
    MfGradVar *pairs;
    int n;
    assert_int_equal(mf_train_compute_gradients_graph(m->loss, 0, NULL, &pairs, &n), MF_OK);
    assert_int_equal(n, 1);
    assert_int_equal(mf_optimizer_apply_graph(m->opt, n, pairs, NULL, m->gs, &m->train), MF_OK);
    mf_grad_vars_free(pairs, n);
    assert_int_equal(mf_graph_variables_initializer(m->g, 0, NULL, NULL, &m->init), MF_OK);
    mf_graph_pop_default();
    m->sess = mf_session_new(m->g);
    run_op(m->sess, m->init);
}

static void destroy(Model *m)
{
    mf_session_free(m->sess);
    mf_tensor_release(m->loss);
    mf_variable_release(m->hw);
    mf_variable_release(m->gs);
    mf_optimizer_release(m->opt);
    mf_graph_release(m->g);
}

static MfTensor *stored(Model *m, MfNode *var)
{
    return mf_varstore_get(mf_session_vars(m->sess), var->index);
}

static void test_train_op_nodes(void **state)
{
    (void)state;
    Model m;
    build(&m, true);
    assert_string_equal(m.train->name, "global_step/AssignAdd");
    MfNode *apply = mf_graph_find(m.g, "Adam/update_w/apply_adam");
    assert_non_null(apply);
    assert_string_equal(mf_node_op_name(apply), "ApplyAdam");
    assert_string_equal(mf_node_op_name(mf_graph_find(m.g, "Adam")), "NoOp");
    const char *vars[] = {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "global_step"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        assert_int_equal(mf_graph_find(m.g, vars[i])->kind, MF_NODE_VARIABLE);
    MfVariable *slot = NULL;
    assert_int_equal(mf_optimizer_get_slot(m.opt, m.hw, "v", &slot), MF_OK);
    assert_string_equal(slot->name, "w/Adam_1");
    assert_int_equal(mf_graph_variables(m.g, true, NULL, 0), 1);
    destroy(&m);
}

/* The first step copies w's buffer (the initializer's Const still holds
 * it); later steps write into the same buffers; re-initialising gives the
 * initial values back, untouched. */
static void test_updates_in_place(void **state)
{
    (void)state;
    Model m;
    build(&m, true);
    MfNode *m_slot = mf_graph_find(m.g, "w/Adam");
    run_op(m.sess, m.train);
    MfTensor *w1 = stored(&m, m.w), *s1 = stored(&m, m_slot);
    run_op(m.sess, m.train);
    run_op(m.sess, m.train);
    assert_ptr_equal(stored(&m, m.w), w1);
    assert_ptr_equal(stored(&m, m_slot), s1);
    MfTensor *step = run1(m.sess, m.gs->value);
    assert_values(step, (double[]){3}, 1, 0);
    mf_tensor_release(step);
    run_op(m.sess, m.init);
    MfTensor *w = run1(m.sess, m.hw->value);
    assert_values(w, (double[]){1, 2}, 2, 0);
    mf_tensor_release(w);
    destroy(&m);
}

/* A value fetched and held keeps its values; the step copies instead. */
static void test_held_value_is_copied(void **state)
{
    (void)state;
    Model m;
    build(&m, false);
    run_op(m.sess, m.train);
    MfTensor *held = run1(m.sess, m.hw->value);
    double seen[2] = {mf_tensor_get(held, 0), mf_tensor_get(held, 1)};
    run_op(m.sess, m.train);
    assert_values(held, seen, 2, 0);
    assert_ptr_not_equal(stored(&m, m.w), held);
    assert_true(mf_tensor_get(stored(&m, m.w), 0) < seen[0]);
    mf_tensor_release(held);
    destroy(&m);
}

static void test_saver_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/mf_graph_train_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Model a, b;
    build(&a, true);
    build(&b, true);
    MfSaver *sa = mf_saver_new(), *sb = mf_saver_new();
    assert_int_equal(mf_saver_add_variable(sa, "w", a.hw), MF_OK);
    assert_int_equal(mf_saver_add_optimizer(sa, a.opt), MF_OK);
    assert_int_equal(mf_saver_add_variable(sb, "w", b.hw), MF_OK);
    assert_int_equal(mf_saver_add_optimizer(sb, b.opt), MF_OK);
    run_op(a.sess, a.train);
    run_op(a.sess, a.train);
    assert_int_equal(mf_saver_save(sa, path, a.gs), MF_EARG);
    assert_error_contains("is a graph variable: its value lives in a Session");
    assert_int_equal(mf_saver_save_session(sa, a.sess, path, a.gs), MF_OK);
    /* no step given: the session's graph's "global_step" (b.gs) is restored */
    assert_int_equal(mf_saver_restore_session(sb, b.sess, path, true, NULL, false), MF_OK);
    run_op(a.sess, a.train);
    run_op(b.sess, b.train);
    MfTensor *wa = run1(a.sess, a.hw->value), *wb = run1(b.sess, b.hw->value);
    assert_values(wb, (double[]){mf_tensor_get(wa, 0), mf_tensor_get(wa, 1)}, 2, 0);
    MfTensor *gb = run1(b.sess, b.gs->value);
    assert_values(gb, (double[]){3}, 1, 0);
    MfTensor *all[] = {wa, wb, gb};
    for (int i = 0; i < 3; i++)
        mf_tensor_release(all[i]);
    mf_saver_free(sa);
    mf_saver_free(sb);
    destroy(&a);
    destroy(&b);
    remove(path);
}

/* TensorFlow's Saver() in a graph: every global variable under its node
 * name; the Session rule of graph and eager savers; the session's step. */
static void test_saver_of_the_graph(void **state)
{
    (void)state;
    Model m;
    build(&m, true);
    MfSaver *s = mf_saver_new();
    assert_int_equal(mf_saver_add_graph_variables(s, m.g), MF_OK);
    assert_int_equal(mf_saver_nvars(s), 6);   /* w, 2 slots, 2 beta powers, global_step */
    assert_int_equal(mf_saver_check_session(s, m.sess, "Saver.save"), MF_OK);
    assert_int_equal(mf_saver_check_session(s, NULL, "Saver.restore"), MF_EARG);
    assert_error_contains("Saver.restore: this Saver holds graph variables, whose values live "
                          "in a Session: call saver:restore(sess, path)");
    MfVariable *gs = NULL;
    assert_int_equal(mf_saver_session_global_step(m.sess, &gs), MF_OK);
    assert_non_null(gs);
    assert_ptr_equal(mf_mode_variable_node(gs), mf_graph_find(m.g, "global_step"));
    mf_variable_release(gs);
    mf_saver_free(s);

    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfVariable *eager = mf_variable_new(one, "e", true);
    mf_tensor_release(one);
    s = mf_saver_new();
    /* Saver{var_list = {}} (optimizers alone): nothing of theirs to save */
    assert_int_equal(mf_saver_check_not_empty(s), MF_EARG);
    assert_error_contains("Saver: no Variables to save (var_list is empty)");
    assert_int_equal(mf_saver_add_variable(s, "e", eager), MF_OK);
    assert_int_equal(mf_saver_check_not_empty(s), MF_OK);
    assert_int_equal(mf_saver_check_session(s, NULL, "Saver.save"), MF_OK);
    assert_int_equal(mf_saver_check_session(s, m.sess, "Saver.save"), MF_EARG);
    assert_error_contains("Saver.save: this Saver holds eager Variables, which keep their own "
                          "values: call saver:save(path) without the Session");
    mf_saver_free(s);
    mf_variable_release(eager);
    destroy(&m);

    MfGraph *empty = mf_graph_new();
    MfSession *es = mf_session_new(empty);
    s = mf_saver_new();
    assert_int_equal(mf_saver_add_graph_variables(s, empty), MF_EARG);
    assert_error_contains("Saver: the graph has no variables to save");
    /* NULL: the graph being built; none (eager): what to give instead */
    assert_int_equal(mf_saver_add_graph_variables(s, NULL), MF_EARG);
    assert_error_contains("Saver: give the Variables to save: mf.train.Saver{w, b}");
    assert_int_equal(mf_graph_push_default(empty), MF_OK);
    assert_int_equal(mf_saver_add_graph_variables(s, NULL), MF_EARG);
    assert_error_contains("Saver: the graph has no variables to save");
    mf_graph_pop_default();
    assert_int_equal(mf_saver_session_global_step(es, &gs), MF_OK);
    assert_null(gs);
    mf_saver_free(s);
    mf_session_free(es);
    mf_graph_release(empty);
}

static void test_errors(void **state)
{
    (void)state;
    Model m;
    build(&m, false);
    MfGradVar *pairs;
    int n;
    MfTensor *c = vec(1, 2);
    assert_int_equal(mf_train_compute_gradients_graph(c, 0, NULL, &pairs, &n), MF_EARG);
    assert_error_contains("compute_gradients: in graph mode the loss is a graph tensor");
    MfVariable *eager = mf_variable_new(c, "e", true);
    MfGradVar bad = {c, eager, NULL};
    MfNode *op;
    assert_int_equal(mf_optimizer_apply_graph(m.opt, 1, &bad, NULL, NULL, &op), MF_EARG);
    assert_error_contains("apply_gradients: No gradients provided for any variable");
    /* as TensorFlow, Adam's beta powers are kept per graph: it also trains eagerly */
    assert_int_equal(mf_optimizer_apply(m.opt, 1, &bad, NULL, NULL), MF_OK);
    /* an Apply node whose variable input is not a variable fails when run */
    MfGraph *g = mf_graph_new();
    MfTensor *ph = NULL, *out = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){2}, "x", &ph), MF_OK);
    MfTensor *lr = mf_tensor_scalar(MF_FLOAT32, 0.1);
    MfTensor *in[3] = {ph, lr, c};
    assert_int_equal(mf_op1(MF_OP_APPLY_GRADIENT_DESCENT, 3, in, NULL, &out), MF_OK);
    MfSession *s = mf_session_new(g);
    MfTensor *fed = vec(0, 0), *res = NULL;
    assert_int_equal(mf_session_run(s, 1, &out, 0, NULL, 1, &ph, &fed, NULL, &res, NULL),
                     MF_EARG);
    assert_error_contains("input 1 ('x') must be a graph variable: it is updated in place");
    MfTensor *all[] = {c, ph, out, lr, fed};
    for (int i = 0; i < 5; i++)
        mf_tensor_release(all[i]);
    mf_session_free(s);
    mf_graph_release(g);
    mf_variable_release(eager);
    destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_train_op_nodes),
        TEST(test_updates_in_place),
        TEST(test_held_value_is_copied),
        TEST(test_saver_round_trip), TEST(test_saver_of_the_graph),
        TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
