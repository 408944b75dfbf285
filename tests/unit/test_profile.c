/* test_profile.c — the profiler: op and GEMM events from the dispatcher and
 * mf_gemm (names, M/N/K, transposes, depth), nothing recorded when off,
 * balanced spans after failing ops, graph node names, report rows (calls,
 * self time of nested ops, FLOPs), the printed tables, and the Chrome trace
 * (parsed with cJSON: traceEvents, fields, GEMM args, nesting by time) with
 * its write errors. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

#include "core/gemm.h"
#include "core/ops/linalg.h"
#include "core/profile/profile.h"
#include "present/profile_report.h"

static MfTensor *filled(int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, shape);
    assert_non_null(t);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < rows * cols; i++)
        p[i] = (float)(i % 5) - 2.0f;
    return t;
}

/* Runs a (M x K) x (K x N) matmul, transposing b when 'tb'. */
static void run_matmul(int64_t M, int64_t N, int64_t K, bool tb)
{
    MfTensor *a = filled(M, K), *b = tb ? filled(N, K) : filled(K, N), *c = NULL;
    assert_int_equal(mf_matmul(a, b, false, tb, &c), MF_OK);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
}

static const MfProfEvent *find_event(MfProfKind kind, const char *name, int nth)
{
    int64_t n;
    const MfProfEvent *ev = mf_prof_events(&n);
    for (int64_t i = 0; i < n; i++)
        if (ev[i].kind == kind && strcmp(ev[i].name, name) == 0 && nth-- == 0)
            return &ev[i];
    return NULL;
}

static void test_matmul_events(void **state)
{
    (void)state;
    mf_prof_start();
    run_matmul(4, 5, 3, false);
    run_matmul(6, 2, 7, true);
    mf_prof_stop();
    int64_t n;
    mf_prof_events(&n);
    assert_int_equal(n, 4);
    const MfProfEvent *g = find_event(MF_PROF_GEMM, "GEMM", 0);
    const MfProfEvent *op = find_event(MF_PROF_OP, "MatMul", 0);
    assert_non_null(g);
    assert_non_null(op);
    assert_string_equal(g->op, "MatMul");
    assert_int_equal(g->M, 4);
    assert_int_equal(g->N, 5);
    assert_int_equal(g->K, 3);
    assert_false(g->trans_a || g->trans_b);
    assert_int_equal(g->depth, 1);
    assert_true(g->flops == 120.0);
    assert_int_equal(op->depth, 0);
    assert_string_equal(op->op, "MatMul");
    assert_true(op->flops == 120.0);
    assert_true(op->start_us <= g->start_us);
    assert_true(g->start_us + g->dur_us <= op->start_us + op->dur_us);
    const MfProfEvent *g2 = find_event(MF_PROF_GEMM, "GEMM", 1);
    assert_non_null(g2);
    assert_int_equal(g2->M, 6);
    assert_int_equal(g2->N, 2);
    assert_int_equal(g2->K, 7);
    assert_true(g2->trans_b && !g2->trans_a);
}

static void test_off_records_nothing(void **state)
{
    (void)state;
    mf_prof_start();
    mf_prof_stop();
    run_matmul(3, 3, 3, false);
    int64_t n;
    mf_prof_events(&n);
    assert_int_equal(n, 0);
    assert_int_equal(mf_prof_on, 0);
}

/* A failing op and a failing GEMM still close their spans: later ops are top level. */
static void test_errors_keep_spans_balanced(void **state)
{
    (void)state;
    mf_prof_start();
    MfTensor *a = filled(2, 3), *b = filled(2, 3), *c = NULL, *e = NULL;
    assert_int_equal(mf_matmul(a, b, false, false, &c), MF_ESHAPE);
    mf_err_clear();
    MfGemm g = {.op = "Test", .dtype = MF_INT32, .M = 1, .N = 1, .K = 1, .lda = 1, .ldb = 1,
                .ldc = 1};
    assert_int_equal(mf_gemm(&g), MF_EDTYPE);
    assert_error_contains("Test: GEMM needs float32 or float64, got int32");
    assert_int_equal(mf_unary(MF_OP_EXP, a, &e), MF_OK);
    mf_prof_stop();
    const MfProfEvent *ev = find_event(MF_PROF_OP, "Exp", 0);
    assert_non_null(ev);
    assert_int_equal(ev->depth, 0);
    assert_null(find_event(MF_PROF_GEMM, "GEMM", 0));
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(e);
}

static void test_node_names(void **state)
{
    (void)state;
    char name[32];
    strcpy(name, "dense/MatMul");
    mf_prof_start();
    mf_prof_set_node(name);
    run_matmul(2, 2, 2, false);
    strcpy(name, "overwritten"); /* the profiler keeps its own copy */
    run_matmul(2, 2, 2, false);
    mf_prof_stop();
    const MfProfEvent *node = find_event(MF_PROF_OP, "dense/MatMul", 0);
    assert_non_null(node);
    assert_string_equal(node->op, "MatMul");
    assert_non_null(find_event(MF_PROF_OP, "MatMul", 0));
    assert_null(mf_prof_take_node());
}

/* An op event carries the op with its non-default attributes, as listings
 * show it (mf_op_label): an eager event is named by it, so rows are told
 * apart by attributes; a graph node's event keeps the node's name and the
 * label. The report's rows and the table carry it too. */
static void test_attribute_labels(void **state)
{
    (void)state;
    mf_prof_start();
    run_matmul(2, 2, 2, true);
    run_matmul(2, 2, 2, false);
    mf_prof_set_node("grad/MatMul");
    run_matmul(2, 2, 2, true);
    mf_prof_stop();
    const MfProfEvent *t = find_event(MF_PROF_OP, "MatMul[transpose_b]", 0);
    assert_non_null(t);
    assert_string_equal(t->op, "MatMul");
    assert_string_equal(t->label, "MatMul[transpose_b]");
    const MfProfEvent *plain = find_event(MF_PROF_OP, "MatMul", 0);
    assert_non_null(plain);
    assert_string_equal(plain->label, "MatMul");
    const MfProfEvent *node = find_event(MF_PROF_OP, "grad/MatMul", 0);
    assert_non_null(node);
    assert_string_equal(node->label, "MatMul[transpose_b]");
    MfProfReport *r = mf_prof_report_new();
    assert_non_null(r);
    assert_int_equal(r->nrows, 3);
    char *table = mf_prof_report_table(r);
    assert_non_null(strstr(table, "\nMatMul[transpose_b] "));
    assert_non_null(strstr(table, "\ngrad/MatMul (MatMul[transpose_b]) "));
    free(table);
    mf_prof_report_free(r);
}

static const MfProfRow *find_row(const MfProfReport *r, const char *name)
{
    for (int64_t i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].name, name) == 0)
            return &r->rows[i];
    return NULL;
}

/* An outer span around two ops: its self time excludes theirs. */
static void test_report_rows(void **state)
{
    (void)state;
    mf_prof_start();
    MfProfSpan outer;
    mf_prof_begin(&outer);
    run_matmul(8, 8, 8, false);
    MfTensor *a = filled(4, 4), *e = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mf_unary(MF_OP_EXP, a, &e), MF_OK);
        mf_tensor_release(e);
    }
    mf_tensor_release(a);
    mf_prof_end_op(&outer, "train_step", 10.0, 0.0);
    run_matmul(8, 8, 8, false);
    mf_prof_stop();
    MfProfReport *r = mf_prof_report_new();
    assert_non_null(r);
    assert_int_equal(r->nrows, 3);
    assert_int_equal(r->ncalls, 6);
    const MfProfRow *step = find_row(r, "train_step"), *mm = find_row(r, "MatMul");
    const MfProfRow *ex = find_row(r, "Exp");
    assert_non_null(step);
    assert_non_null(mm);
    assert_non_null(ex);
    assert_int_equal(mm->calls, 2);
    assert_int_equal(ex->calls, 3);
    assert_true(mm->flops == 2 * 1024.0);
    assert_true(ex->flops == 3 * 16.0);
    assert_true(ex->self_us == ex->total_us);
    const MfProfEvent *first_mm = find_event(MF_PROF_OP, "MatMul", 0);
    double nested = first_mm->dur_us + ex->total_us;
    assert_true(fabs(step->self_us - (step->total_us - nested)) < 1e-6);
    assert_true(step->self_us < step->total_us);
    for (int64_t i = 1; i < r->nrows; i++)
        assert_true(r->rows[i - 1].total_us >= r->rows[i].total_us);
    assert_true(r->peak_gflops > 0);
    assert_true(fabs(r->top_us - (step->total_us + mm->total_us - first_mm->dur_us)) < 1e-6);
    /* the records a face lists: a row, then a GEMM's (integers, booleans) */
    MfProfField f[MF_PROF_MAX_FIELDS];
    assert_int_equal(mf_prof_row_fields(r, ex, f), 11);
    assert_string_equal(f[0].key, "op");
    assert_string_equal(f[0].str, "Exp");
    assert_string_equal(f[3].key, "calls");
    assert_int_equal(f[3].kind, MF_PROF_INTEGER);
    assert_true(f[3].num == 3);
    assert_string_equal(f[6].key, "avg_ms");
    assert_true(fabs(f[6].num - ex->total_us * 1e-3 / 3) < 1e-12);
    const MfProfEvent *gemm = NULL;
    for (int64_t i = 0; i < r->nevents && !gemm; i++)
        gemm = r->events[i].kind == MF_PROF_GEMM ? &r->events[i] : NULL;
    assert_non_null(gemm);
    assert_int_equal(mf_prof_event_fields(r, gemm, f), 11);   /* a plain GEMM: no algorithm */
    assert_string_equal(f[0].str, "MatMul");
    assert_string_equal(f[3].key, "M");
    assert_true(f[3].kind == MF_PROF_INTEGER && f[3].num == 8);
    assert_string_equal(f[6].key, "trans_a");
    assert_true(f[6].kind == MF_PROF_BOOL && f[6].num == 0);
    assert_string_equal(f[10].key, "peak_pct");
    mf_prof_report_free(r);
}

static void test_tables(void **state)
{
    (void)state;
    mf_prof_start();
    run_matmul(16, 24, 32, false);
    mf_prof_stop();
    MfProfReport *r = mf_prof_report_new();
    assert_non_null(r);
    char *t = mf_prof_report_table(r);
    assert_non_null(t);
    assert_non_null(strstr(t, "GFLOP/s"));
    assert_non_null(strstr(t, "% peak"));
    assert_non_null(strstr(t, "\nMatMul "));
    assert_non_null(strstr(t, "1 op call,"));
    free(t);
    t = mf_prof_gemm_table(r);
    assert_non_null(t);
    assert_non_null(strstr(t, "MatMul       GEMM         16      24      32   N N"));
    assert_non_null(strstr(t, "1 GEMM, 0 steps"));
    free(t);
    mf_prof_report_free(r);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* Checks the parsed trace: every X event complete, the GEMM inside its op. */
static void check_trace(const cJSON *root)
{
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    assert_true(cJSON_IsArray(events));
    const cJSON *op = NULL, *gemm = NULL, *e;
    int nx = 0;
    cJSON_ArrayForEach(e, events) {
        if (strcmp(str(e, "ph"), "X") != 0)
            continue;
        nx++;
        assert_true(num(e, "dur") >= 0 && num(e, "ts") >= 0);
        assert_true(num(e, "pid") == 1 && num(e, "tid") == 1);
        assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "args")));
        if (strcmp(str(e, "cat"), "op") == 0 && strcmp(str(e, "name"), "Nested \"op\"") != 0)
            op = e;
        if (strcmp(str(e, "cat"), "gemm") == 0)
            gemm = e;
    }
    assert_int_equal(nx, 3);
    assert_non_null(op);
    assert_non_null(gemm);
    assert_string_equal(str(op, "name"), "MatMul");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(gemm, "args");
    assert_true(num(args, "M") == 5 && num(args, "N") == 6 && num(args, "K") == 7);
    assert_true(num(args, "flops") == 420 && num(args, "bytes") == 4.0 * (35 + 42 + 30));
    assert_string_equal(str(args, "op"), "MatMul");
    assert_true(num(op, "ts") <= num(gemm, "ts"));
    assert_true(num(gemm, "ts") + num(gemm, "dur") <= num(op, "ts") + num(op, "dur") + 0.002);
}

static void test_trace_json(void **state)
{
    (void)state;
    mf_prof_start();
    MfProfSpan outer;
    mf_prof_begin(&outer);
    run_matmul(5, 6, 7, false);
    mf_prof_end_op(&outer, "Nested \"op\"", 0, 0);
    mf_prof_stop();
    MfProfReport *r = mf_prof_report_new();
    assert_non_null(r);
    char dir[] = "/tmp/mf_prof_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    assert_int_equal(mf_prof_save_trace(r, path), MF_OK);
    char *text = read_all(path);
    assert_true(strncmp(text, "{\"traceEvents\"", 14) == 0);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    check_trace(root);
    cJSON_Delete(root);
    free(text);
    remove(path);
    assert_int_equal(rmdir(dir), 0); /* no temporary file left beside it */
    assert_int_equal(mf_prof_save_trace(r, "/nonexistent/dir/t.json"), MF_EIO);
    assert_error_contains("save_trace: cannot write '/nonexistent/dir/t.json': No such file");
    mf_prof_report_free(r);
}

static void test_peak_cached(void **state)
{
    (void)state;
    double p = mf_prof_peak_gflops();
    assert_true(p > 1);
    assert_true(mf_prof_peak_gflops() == p);
    assert_true(mf_prof_gflops(2e9, 1e6) == 2.0);
    assert_true(mf_prof_gflops(0, 1) == 0 && mf_prof_gflops(1, 0) == 0);
    assert_true(mf_prof_peak_pct(50, 200) == 25.0 && mf_prof_peak_pct(50, 0) == 0);
    /* the GEMM that set the peak is 100%, never a rounding above it */
    assert_true(mf_prof_peak_pct(10.719999999999999, 10.719999999999999) == 100.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_matmul_events),
        TEST(test_off_records_nothing),
        TEST(test_errors_keep_spans_balanced),
        TEST(test_node_names),
        TEST(test_attribute_labels),
        TEST(test_report_rows),
        TEST(test_tables),
        TEST(test_trace_json),
        TEST(test_peak_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
