/* test_trace_signature.c — a traced call's signature (graph/trace_signature.c):
 * tensors by dtype and shape, not values; Lua values by value (an integer
 * and the equal float apart); strings by their bytes, NULs included, never
 * mistaken for the separators; arrays and identities; and the retrace
 * warning at the tenth trace only. The mf.trace face's own behaviour is in
 * tests/lua/test_trace.lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "testutil.h"

/* The signature of one string argument, in 'buf'. */
static const char *sig_string(const char *s, size_t n, char *buf, size_t cap)
{
    MfStrBuf b = {0};
    mf_sig_string(&b, s, n);
    mf_sig_arg_end(&b);
    assert_int_equal(mf_strbuf_status(&b, "test"), MF_OK);
    snprintf(buf, cap, "%s", b.data);
    mf_strbuf_free(&b);
    return buf;
}

static void test_tensors_by_dtype_and_shape(void **state)
{
    (void)state;
    const float ones[6] = {1, 1, 1, 1, 1, 1};
    MfTensor *a = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){2, 3});
    MfTensor *b = mf_tensor_from_data(MF_FLOAT32, 2, (int64_t[]){2, 3}, ones);
    MfTensor *c = mf_tensor_zeros(MF_FLOAT64, 2, (int64_t[]){2, 3});
    MfTensor *d = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){3, 2});
    assert_non_null(a && b && c && d);
    MfStrBuf sa = {0}, sb = {0}, sc = {0}, sd = {0};
    mf_sig_tensor(&sa, a);
    mf_sig_tensor(&sb, b);
    mf_sig_tensor(&sc, c);
    mf_sig_tensor(&sd, d);
    assert_string_equal(sa.data, sb.data);   /* values do not matter */
    assert_string_not_equal(sa.data, sc.data);
    assert_string_not_equal(sa.data, sd.data);
    assert_non_null(strstr(sa.data, "float32"));
    mf_strbuf_free(&sa);
    mf_strbuf_free(&sb);
    mf_strbuf_free(&sc);
    mf_strbuf_free(&sd);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    mf_tensor_release(d);
}

static void test_values_by_value(void **state)
{
    (void)state;
    MfStrBuf i1 = {0}, f1 = {0}, f01 = {0}, t = {0}, n = {0};
    mf_sig_integer(&i1, 1);
    mf_sig_number(&f1, 1.0);
    mf_sig_number(&f01, 0.1);
    mf_sig_boolean(&t, true);
    mf_sig_nil(&n);
    assert_string_not_equal(i1.data, f1.data);
    /* every digit: 0.1 and 0.30000000000000004 - 0.2 differ */
    MfStrBuf near = {0};
    mf_sig_number(&near, 0.30000000000000004 - 0.2);
    assert_string_not_equal(f01.data, near.data);
    assert_string_equal(t.data, "true");
    assert_string_equal(n.data, "nil");
    mf_strbuf_free(&i1);
    mf_strbuf_free(&f1);
    mf_strbuf_free(&f01);
    mf_strbuf_free(&t);
    mf_strbuf_free(&n);
    mf_strbuf_free(&near);
}

static void test_strings_are_injective(void **state)
{
    (void)state;
    char x[64], y[64];
    /* bytes after a NUL count: "a\0b" and "a\0c" trace apart */
    assert_string_not_equal(sig_string("a\0b", 3, x, sizeof x),
                            sig_string("a\0c", 3, y, sizeof y));
    /* an escaped NUL is not a backslash and a zero */
    assert_string_not_equal(sig_string("\\0", 2, x, sizeof x), sig_string("\0", 1, y, sizeof y));
    assert_string_not_equal(sig_string("\\", 1, x, sizeof x), sig_string("\0", 1, y, sizeof y));
    /* one argument "a;S1:b" is not two arguments "a" and "b" */
    MfStrBuf one = {0}, two = {0};
    mf_sig_string(&one, "a;S1:b", 6);
    mf_sig_arg_end(&one);
    mf_sig_string(&two, "a", 1);
    mf_sig_arg_end(&two);
    mf_sig_string(&two, "b", 1);
    mf_sig_arg_end(&two);
    assert_string_not_equal(one.data, two.data);
    mf_strbuf_free(&one);
    mf_strbuf_free(&two);
    /* a long string goes through whole */
    char big[1000];
    memset(big, 'q', sizeof big);
    MfStrBuf b = {0};
    mf_sig_string(&b, big, sizeof big);
    assert_int_equal(b.len, strlen("S1000:") + sizeof big);
    mf_strbuf_free(&b);
}

static void test_arrays_and_identity(void **state)
{
    (void)state;
    int o1, o2;
    MfStrBuf a = {0}, b = {0}, c = {0};
    /* {1, 2} against {1} then 2 */
    mf_sig_array_begin(&a);
    mf_sig_integer(&a, 1);
    mf_sig_array_item_end(&a);
    mf_sig_integer(&a, 2);
    mf_sig_array_item_end(&a);
    mf_sig_array_end(&a);
    mf_sig_array_begin(&b);
    mf_sig_integer(&b, 1);
    mf_sig_array_item_end(&b);
    mf_sig_array_end(&b);
    mf_sig_integer(&b, 2);
    assert_string_not_equal(a.data, b.data);
    mf_strbuf_free(&b);
    mf_sig_identity(&b, "function", &o1);
    mf_sig_identity(&c, "function", &o2);
    assert_string_not_equal(b.data, c.data);
    mf_strbuf_free(&a);
    mf_strbuf_free(&b);
    mf_strbuf_free(&c);
}

static void test_retrace_warning(void **state)
{
    (void)state;
    char buf[640];
    for (int count = 1; count <= 30; count++) {
        bool warn = mf_trace_retrace_warning(count, " (called at x.lua:3)", buf, sizeof buf);
        assert_int_equal(warn, count == MF_TRACE_RETRACE_WARNING);
    }
    assert_true(mf_trace_retrace_warning(MF_TRACE_RETRACE_WARNING, "", buf, sizeof buf));
    assert_non_null(strstr(buf, "traced 10 times: one trace per new signature"));
    assert_true(mf_trace_retrace_warning(10, " (called at x.lua:3)", buf, sizeof buf));
    assert_non_null(strstr(buf, "times (called at x.lua:3):"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tensors_by_dtype_and_shape, setup_engine,
                                        teardown_engine),
        cmocka_unit_test_setup_teardown(test_values_by_value, setup_engine, teardown_engine),
        cmocka_unit_test_setup_teardown(test_strings_are_injective, setup_engine,
                                        teardown_engine),
        cmocka_unit_test_setup_teardown(test_arrays_and_identity, setup_engine, teardown_engine),
        cmocka_unit_test_setup_teardown(test_retrace_warning, setup_engine, teardown_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
