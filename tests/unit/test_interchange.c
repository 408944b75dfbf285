/* test_interchange.c — the graph formats at the C level: the ONNX model of a
 * small graph (its key fields in order, initializers, an unknown batch as
 * the symbolic dim "N", output names), an op without a mapping failing
 * with the op and node named and no bytes kept, and the GraphDef of a graph
 * with its gradients/ scope. (ONNX's own checker and onnxruntime check the
 * models in tests/lua/test_onnx.lua and `make interop`.) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/gradients.h"
#include "graph/interchange.h"
#include "testutil.h"

/* True when the 'n' bytes at 'p' appear in 'b'. */
static bool contains(const MfPbuf *b, const void *p, size_t n)
{
    for (size_t i = 0; i + n <= b->len; i++)
        if (memcmp(b->data + i, p, n) == 0)
            return true;
    return false;
}

static bool has_str(const MfPbuf *b, const char *s)
{
    return contains(b, s, strlen(s));
}

/* y = relu(x @ W + c) with x a placeholder (-1, 3) and W, c constants. */
static MfGraph *mlp_graph(MfTensor **x, MfTensor **y)
{
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){-1, 3}, "x", x), MF_OK);
    MfTensor *w = make_tensor(MF_FLOAT32, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *c = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){0.5, -0.5});
    MfTensor *m, *a;
    assert_int_equal(mf_binary(MF_OP_MATMUL, *x, w, &m), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, m, c, &a), MF_OK);
    assert_int_equal(mf_unary(MF_OP_RELU, a, y), MF_OK);
    mf_graph_pop_default();
    mf_tensor_release(w);
    mf_tensor_release(c);
    mf_tensor_release(m);
    mf_tensor_release(a);
    return g;
}

static void test_onnx_model_bytes(void **state)
{
    (void)state;
    MfTensor *x, *y;
    MfGraph *g = mlp_graph(&x, &y);
    const char *names[] = {"scores", NULL};
    MfOnnxOptions opt = {.opset = 13, .output_names = names};
    MfPbuf b = mf_pb_new();
    assert_int_equal(mf_onnx_encode(g, 1, &x, 1, &y, &opt, &b), MF_OK);
    /* ir_version = 7 first: key 0x08, value 7 */
    assert_true(b.len > 100);
    assert_int_equal(b.data[0], 0x08);
    assert_int_equal(b.data[1], 7);
    /* opset_import {domain "", version 13}: 42 04 0a 00 10 0d */
    assert_true(contains(&b, (const uint8_t[]){0x42, 0x04, 0x0A, 0x00, 0x10, 0x0D}, 6));
    assert_true(has_str(&b, "MatMul") && has_str(&b, "Relu") && has_str(&b, "Add"));
    assert_true(has_str(&b, "scores"));
    /* the symbolic batch: Dimension {dim_param "N"}: 0a 03 12 01 4e */
    assert_true(contains(&b, (const uint8_t[]){0x0A, 0x03, 0x12, 0x01, 'N'}, 5));
    /* W's raw little-endian float32 data: 1.0f = 00 00 80 3f, 2.0f = 00 00 00 40 */
    assert_true(contains(&b, (const uint8_t[]){0, 0, 0x80, 0x3F, 0, 0, 0, 0x40}, 8));
    mf_pb_free(&b);
    opt.opset = 18;
    assert_int_equal(mf_onnx_encode(g, 1, &x, 1, &y, &opt, &b), MF_EARG);
    assert_error_contains("opset must be 13..17, got 18");
    mf_pb_free(&b);
    /* an opset as Lua gives it, not cut to an int: 2^32 + 13 is not 13 */
    opt.opset = (INT64_C(1) << 32) + 13;
    assert_int_equal(mf_onnx_encode(g, 1, &x, 1, &y, &opt, &b), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "opset must be 13..17, got 4294967309"));
    mf_pb_free(&b);
    /* one name per output */
    mf_err_clear();
    const char *two[] = {"scores", "more", NULL};
    opt = (MfOnnxOptions){.opset = 13, .output_names = two};
    assert_int_equal(mf_onnx_encode(g, 1, &x, 1, &y, &opt, &b), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "onnx.export: output_names has 2 names for 1 outputs"));
    mf_pb_free(&b);
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_release(g);
}

static void test_onnx_unmapped_op(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *x, *y, *three = mf_tensor_scalar(MF_FLOAT32, 3);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){4}, "x", &x), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MOD, x, three, &y), MF_OK);
    mf_graph_pop_default();
    MfOnnxOptions opt = {.opset = 13};
    char path[] = "/tmp/mf_interchange_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    remove(path);
    assert_int_equal(mf_onnx_export(g, 1, &x, 1, &y, &opt, path), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "node 'mod' (op FloorMod) cannot be exported"));
    assert_null(fopen(path, "rb"));   /* no file */
    mf_tensor_release(three);
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_release(g);
}

static void test_graphdef_gradients_scope(void **state)
{
    (void)state;
    MfTensor *x, *y, *loss, *dx = NULL;
    MfGraph *g = mlp_graph(&x, &y);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfAttrs a = mf_attrs_default();
    a.all_axes = true;
    assert_int_equal(mf_op1(MF_OP_SUM, 1, &y, &a, &loss), MF_OK);
    assert_int_equal(mf_graph_gradients(g, 1, &loss, 1, &x, NULL, &dx), MF_OK);
    mf_graph_pop_default();
    MfPbuf b = mf_pb_new();
    assert_int_equal(mf_graphdef_encode(g, &b), MF_OK);
    assert_true(has_str(&b, "gradients/"));
    assert_true(has_str(&b, "Placeholder") && has_str(&b, "MatMul") && has_str(&b, "Relu"));
    assert_true(has_str(&b, "_output_shapes"));
    /* the first node: NodeDef {name "x", op "Placeholder", ...} */
    assert_int_equal(b.data[0], 0x0A);
    /* w:graph(g): the same GraphDef as one event of a writer's file */
    char dir[] = "/tmp/mf_graphdef_XXXXXX";
    assert_non_null(mkdtemp(dir));
    MfEventWriter *w = NULL;
    assert_int_equal(mf_event_writer_open(dir, &w), MF_OK);
    assert_int_equal(mf_graphdef_write_event(w, g), MF_OK);
    char path[256];
    snprintf(path, sizeof path, "%s", mf_event_writer_path(w));
    assert_int_equal(mf_event_writer_close(w), MF_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    assert_true(ftell(f) > (long)b.len);   /* the file's first event, then the graph's */
    fclose(f);
    remove(path);
    rmdir(dir);
    mf_pb_free(&b);
    mf_tensor_release(dx);
    mf_tensor_release(loss);
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_onnx_model_bytes),
        TEST(test_onnx_unmapped_op),
        TEST(test_graphdef_gradients_scope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
