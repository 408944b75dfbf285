/* test_plot.c — the plot renderers (core/plot.c) without Lua: the braille
 * text's rows, labels and curve ends; the SVG document's structure, escaped
 * title and gaps at non-finite values; the "nothing to draw" error; and
 * every allocation failed once giving MF_ENOMEM and no leak. */
#include <math.h>

#include "core/alloc.h"
#include "present/plot.h"
#include "testutil.h"

static double history[50];

static void fill_history(void)
{
    for (int i = 0; i < 50; i++)
        history[i] = 1.0 / (i + 1);
}

static int count(const char *s, const char *part)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, part)); p += strlen(part))
        n++;
    return n;
}

static void test_text(void **state)
{
    (void)state;
    fill_history();
    MfPlotSeries s = {history, 50, "train"};
    MfPlotOpts o = {.title = "loss", .width = 30, .height = 6};
    MfStrBuf b = {0};
    assert_int_equal(mf_plot_text(&s, 1, &o, &b), MF_OK);
    assert_int_equal(count(b.data, "\n"), 1 + 6 + 2 + 1);   /* title, rows, axis, steps, legend */
    assert_non_null(strstr(b.data, "loss\n"));
    assert_non_null(strstr(b.data, "   1 \xe2\x94\xa4"));   /* max label: "1 ┤" */
    assert_non_null(strstr(b.data, "0.02 \xe2\x94\xa4"));   /* min label */
    assert_non_null(strstr(b.data, "train"));
    assert_null(strstr(b.data, "\033["));                /* no colour unless asked */
    mf_strbuf_free(&b);
    o.color = 1;
    assert_int_equal(mf_plot_text(&s, 1, &o, &b), MF_OK);
    assert_non_null(strstr(b.data, "\033[34m"));
    mf_strbuf_free(&b);
}

static void test_svg(void **state)
{
    (void)state;
    double y[5] = {3, 2, (double)NAN, 1, 0.5};
    MfPlotSeries s = {y, 5, "a<b"};
    MfPlotOpts o = {.title = "x & y", .width = 640, .height = 400};
    MfStrBuf b = {0};
    assert_int_equal(mf_plot_svg(&s, 1, &o, &b), MF_OK);
    assert_true(strncmp(b.data, "<?xml", 5) == 0);
    assert_non_null(strstr(b.data, "width=\"640\" height=\"400\""));
    assert_non_null(strstr(b.data, ">x &amp; y</text>"));
    assert_non_null(strstr(b.data, "a&lt;b"));
    assert_int_equal(count(b.data, "<polyline"), 2);   /* the NaN splits the curve */
    assert_true(strcmp(b.data + b.len - 7, "</svg>\n") == 0);
    mf_strbuf_free(&b);
}

static void test_errors_and_memory(void **state)
{
    (void)state;
    double bad[2] = {(double)NAN, (double)INFINITY};
    MfPlotSeries s = {bad, 2, NULL};
    MfPlotOpts o = {.width = 30, .height = 6};
    MfStrBuf b = {0};
    assert_int_equal(mf_plot_text(&s, 1, &o, &b), MF_EARG);
    assert_error_contains("plot: nothing to draw: no series has a finite value");
    mf_err_clear();
    mf_strbuf_free(&b);
    fill_history();
    MfPlotSeries h = {history, 50, "h"};
    for (int svg = 0; svg < 2; svg++) {
        MfStatus st = MF_ENOMEM;
        for (int64_t k = 1; st != MF_OK; k++) {
            size_t before = mf_alloc_in_use();
            mf_alloc_fail_at(k);
            st = svg ? mf_plot_svg(&h, 1, &o, &b) : mf_plot_text(&h, 1, &o, &b);
            mf_alloc_fail_at(0);
            if (st != MF_OK) {
                assert_int_equal(st, MF_ENOMEM);
                assert_error_contains("plot");
                mf_err_clear();
            }
            mf_strbuf_free(&b);
            assert_int_equal(mf_alloc_in_use(), before);
        }
    }
}

/* The size each renderer can draw, and the x values' count and spacing. */
static void test_size_and_x(void **state)
{
    (void)state;
    int w, h;
    mf_plot_default_size(0, &w, &h);
    assert_int_equal(mf_plot_check_size(0, w, h), MF_OK);
    mf_plot_default_size(1, &w, &h);
    assert_int_equal(mf_plot_check_size(1, w, h), MF_OK);
    assert_int_equal(mf_plot_check_size(0, 3, 12), MF_EARG);
    assert_string_equal(mf_err_msg(), "plot: 'width' must be between 10 and 400 columns, got 3");
    mf_err_clear();
    assert_int_equal(mf_plot_check_size(1, 640, 10), MF_EARG);
    assert_string_equal(mf_err_msg(),
                        "plot: 'height' must be between 150 and 10000 pixels, got 10");
    mf_err_clear();
    assert_int_equal(mf_plot_check_size(0, 60, 1LL << 40), MF_EARG);   /* no int overflow */
    mf_err_clear();

    double y[4] = {4, 3, 2, 1}, x[4] = {0, 0.5, 1, 1.5}, bent[4] = {0, 0.5, 1.2, 1.5};
    MfPlotSeries s = {y, 4, NULL};
    MfPlotOpts o = {0};
    assert_int_equal(mf_plot_set_x(&o, &s, 1, x, 4), MF_OK);
    assert_true(o.has_x && o.x_first == 0 && o.x_last == 1.5);
    assert_int_equal(mf_plot_set_x(&o, &s, 1, x, 3), MF_EARG);
    assert_string_equal(mf_err_msg(), "plot: 'x' has 3 values but the longest series has 4");
    mf_err_clear();
    assert_int_equal(mf_plot_set_x(&o, &s, 1, bent, 4), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "evenly spaced (as mf.linspace gives); x[3] = 1.2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_text),
        TEST(test_svg),
        TEST(test_errors_and_memory),
        TEST(test_size_and_x),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
