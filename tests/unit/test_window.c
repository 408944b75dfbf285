/* test_window.c — the window rule of core/ops/window.h against TensorFlow's
 * formula, written out here from TensorFlow's documentation
 * (https://www.tensorflow.org/api_docs/python/tf/nn#notes_on_padding_2):
 *   SAME:  out = ceil(in / stride)
 *   VALID: out = ceil((in - (k - 1) * d) / stride)
 *   pad_total = max((out - 1) * stride + (k - 1) * d + 1 - in, 0) (SAME; VALID pads none)
 *   pad_before = pad_total / 2, pad_after = pad_total - pad_before
 * for every padding, stride, dilation, window and input size up to 9 (and
 * an input of 0); the op's VALID case of a window larger than the input,
 * where the formula goes to 0 or below, is out 0 (the ops refuse it).
 * Also the overflow-free form at int64's edge, the NCHW reordering and the
 * shared checks' messages. */
#include "testutil.h"

#include "core/ops/window.h"

/* ceil(a / b) for b > 0 and any sign of a, as the documentation means it */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static void tf_rule(MfPadding p, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *out,
                    int64_t *before, int64_t *after)
{
    int64_t total = 0;
    if (p == MF_PADDING_SAME) {
        *out = ceil_div(in, s);
        total = (*out - 1) * s + (k - 1) * d + 1 - in;
        total = total > 0 ? total : 0;
    } else {
        *out = ceil_div(in - (k - 1) * d, s);
        *out = *out > 0 ? *out : 0;
    }
    *before = total / 2;
    *after = total - *before;
}

static void test_rule_matches_tf(void **state)
{
    (void)state;
    int cases = 0;
    for (int p = 0; p < MF_NPADDINGS; p++)
        for (int64_t in = 0; in <= 9; in++)
            for (int64_t k = 1; k <= 9; k++)
                for (int64_t s = 1; s <= 9; s++)
                    for (int64_t d = 1; d <= 9; d++) {
                        int64_t out, before, after, wo, wb, wa;
                        tf_rule((MfPadding)p, in, k, s, d, &wo, &wb, &wa);
                        mf_window_axis((MfPadding)p, in, k, s, d, &out, &before, &after);
                        if (out != wo || before != wb || after != wa)
                            fail_msg("%s in %lld k %lld s %lld d %lld: got out %lld pads "
                                     "%lld, %lld; TensorFlow's: %lld, %lld, %lld",
                                     mf_padding_names[p], (long long)in, (long long)k,
                                     (long long)s, (long long)d, (long long)out,
                                     (long long)before, (long long)after, (long long)wo,
                                     (long long)wb, (long long)wa);
                        cases++;
                    }
    assert_int_equal(cases, 2 * 10 * 9 * 9 * 9);
}

/* pad_after may be NULL; unknown sizes stay unknown */
static void test_unknown_and_optional(void **state)
{
    (void)state;
    int64_t out, before;
    mf_window_axis(MF_PADDING_SAME, 7, 3, 2, 1, &out, &before, NULL);
    assert_int_equal(out, 4);
    assert_int_equal(before, 1);
    mf_window_axis(MF_PADDING_SAME, -1, 3, 2, 1, &out, &before, NULL);
    assert_int_equal(out, -1);
    assert_int_equal(before, 0);
    mf_window_axis(MF_PADDING_VALID, 7, -1, 1, 1, &out, &before, NULL);
    assert_int_equal(out, -1);
}

/* sizes up to INT64_MAX: no step overflows (the formula's (out - 1) * s + ek
 * would); a span over int64 is INT64_MAX and fits no input */
static void test_int64_edge(void **state)
{
    (void)state;
    int64_t out, before, after;
    mf_window_axis(MF_PADDING_SAME, INT64_MAX, INT64_MAX, INT64_MAX, 1, &out, &before, &after);
    assert_int_equal(out, 1);
    assert_int_equal(before + after, 0);
    mf_window_axis(MF_PADDING_SAME, 5, 3, INT64_MAX, 1, &out, &before, &after);
    assert_int_equal(out, 1);
    assert_int_equal(before, 0);
    assert_int_equal(after, 0);
    assert_true(mf_window_extent(3, INT64_MAX) == INT64_MAX);
    mf_window_axis(MF_PADDING_VALID, INT64_MAX, 3, 1, INT64_MAX, &out, &before, &after);
    assert_int_equal(out, 0);
    assert_int_equal(mf_window_extent(3, 4), 9);
    assert_int_equal(mf_window_extent(0, 4), 1);
}

static void test_nhwc_attrs(void **state)
{
    (void)state;
    MfAttrs a = mf_attrs_default();
    a.data_format = MF_NCHW;
    const int64_t nchw[4] = {1, 1, 2, 3};
    for (int i = 0; i < 4; i++)
        a.strides[i] = a.dilations[i] = a.ksize[i] = nchw[i];
    MfAttrs n = mf_window_nhwc_attrs(&a, MF_NCHW);
    const int64_t want[4] = {1, 2, 3, 1};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(n.strides[i], want[i]);
        assert_int_equal(n.dilations[i], want[i]);
        assert_int_equal(n.ksize[i], want[i]);
    }
    assert_int_equal(n.data_format, MF_NHWC);
    n = mf_window_nhwc_attrs(&a, MF_NHWC);
    assert_int_equal(n.strides[2], 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(mf_nhwc_to_nchw[mf_nchw_to_nhwc[i]], i);
}

static void test_checks(void **state)
{
    (void)state;
    assert_int_equal(mf_window_check_padding("f", 2), MF_EARG);
    assert_error_contains("f: padding must be VALID (0) or SAME (1), got 2");
    assert_int_equal(mf_window_check_padding("f", MF_PADDING_SAME), MF_OK);
    assert_int_equal(mf_window_check_steps("f", (int64_t[4]){1, 2, 0, 1}, "strides", MF_NHWC),
                     MF_OK);
    assert_int_equal(mf_window_check_steps("f", (int64_t[4]){1, -2, 1, 1}, "strides", MF_NHWC),
                     MF_EARG);
    assert_error_contains("f: strides must be positive, got {1, -2, 1, 1}");
    assert_int_equal(mf_window_check_steps("f", (int64_t[4]){1, 2, 1, 1}, "dilations", MF_NCHW),
                     MF_EARG);
    assert_error_contains("f: dilations on the batch and channel axes must be 1, got "
                          "{1, 2, 1, 1} (NCHW)");
    assert_int_equal(mf_window_check_fit("f", MF_PADDING_VALID, (int64_t[2]){5, 5},
                                         (int64_t[2]){3, 3}, (int64_t[2]){3, 1}), MF_ESHAPE);
    assert_error_contains("f: the filter (3 x 3, 7 x 3 with dilations) is larger than the input");
    assert_int_equal(mf_window_check_fit("f", MF_PADDING_SAME, (int64_t[2]){5, 5},
                                         (int64_t[2]){3, 3}, (int64_t[2]){3, 1}), MF_OK);
    assert_int_equal(mf_window_check_fit("f", MF_PADDING_VALID, (int64_t[2]){-1, 5},
                                         (int64_t[2]){9, 3}, (int64_t[2]){1, 1}), MF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_rule_matches_tf),
        TEST(test_unknown_and_optional),
        TEST(test_int64_edge),
        TEST(test_nhwc_attrs),
        TEST(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
