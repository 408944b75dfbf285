/* test_progress.c — the progress line of a training loop (train/progress.c)
 * with a clock the test sets: the line's parts (epoch, bar, metrics in
 * order, rate, ETA, total), rolling over epochs, rate limiting of plain
 * lines, redrawing in place on a terminal, and the errors. Output goes to a
 * memory stream. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "train/progress.h"

/* Updates p at its next position at time t (no named epoch). */
static void next(MfProgress *p, double t, FILE *out)
{
    int64_t step, epoch;
    mf_progress_next(p, &step, &epoch);
    assert_int_equal(mf_progress_update(p, step, epoch, false, t, out), MF_OK);
}

static void test_line(void **state)
{
    (void)state;
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 100, 3, 1.0, false, 0.0), MF_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(mf_progress_set_metric(&p, "acc", 0.5), MF_OK);
    assert_int_equal(mf_progress_set_metric(&p, "loss", 0.12345), MF_OK);
    assert_int_equal(mf_progress_update(&p, 40, 2, false, 10.0, out), MF_OK);
    assert_int_equal(mf_progress_update(&p, 50, 2, false, 20.0, out), MF_OK);   /* 1 step/s */
    char line[512];
    mf_progress_line(&p, 20.0, line, sizeof line);
    /* 10 steps in 10 s since the first update: 1 step/s, 150 of 300 steps left */
    assert_string_equal(line, "epoch 2/3  step  50/100 [============>...........]  50%  "
                              "loss 0.1235  acc 0.5 | 1 steps/s ETA 2:30");
    fclose(out);
    /* the first update alone: 140 steps in the 10 s since the progress was made */
    assert_string_equal(buf, "epoch 2/3  step  40/100 [=========>..............]  40%  "
                             "loss 0.1235  acc 0.5 | 14 steps/s ETA 0:11\n"
                             "epoch 2/3  step  50/100 [============>...........]  50%  "
                             "loss 0.1235  acc 0.5 | 1 steps/s ETA 2:30\n");
    free(buf);
}

static void test_rollover_rate_limit_and_finish(void **state)
{
    (void)state;
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 4, 2, 1.0, false, 0.0), MF_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    for (int i = 1; i <= 8; i++)   /* 0.1 s apart: only the first and each epoch's end show */
        next(&p, 0.1 * i, out);
    assert_int_equal(p.epoch, 2);
    assert_int_equal(p.step, 4);
    assert_true(p.finished);
    mf_progress_done(&p, 5.0, out);   /* the finish was drawn: nothing more */
    int64_t step, epoch;
    mf_progress_next(&p, &step, &epoch);
    assert_true(step == 1 && epoch == 3);
    assert_int_equal(mf_progress_check_epoch(&p, epoch), MF_EARG);
    assert_error_contains("update: epoch 3 is past epochs = 2 (the loop already finished)");
    mf_err_clear();
    fclose(out);
    int lines = 0;
    for (char *c = buf; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    assert_non_null(strstr(buf, "epoch 1/2  step 4/4 [========================] 100%"));
    assert_non_null(strstr(buf, "steps/s, 0:01 total\n"));
    free(buf);
}

static void test_terminal_and_unknown_total(void **state)
{
    (void)state;
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 0, 0, 0.0, true, 0.0), MF_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    next(&p, 1.0, out);
    next(&p, 1.05, out);   /* within 0.1 s on a terminal: not redrawn */
    next(&p, 2.0, out);
    mf_progress_done(&p, 3.0, out);
    fclose(out);
    /* steps 1..3 from t = 1 to 2: 2 steps/s; done at 3 stops the clock there: 2 steps
     * in 2 s, 1 step/s, and the 3 steps at that rate take 0:03 */
    assert_string_equal(buf, "\rstep 1 | 1 steps/s\033[K"
                             "\rstep 3 | 2 steps/s\033[K"
                             "\rstep 3 | 1 steps/s, 0:03 total\033[K\n");
    free(buf);
}

/* On a terminal the end of an epoch ends its line, so a line printed then
 * (fit's epoch summary with validation_data) is not glued onto the bar; the
 * next epoch starts a line without a blank one between (issue #30). */
static void test_terminal_epoch_end_ends_the_line(void **state)
{
    (void)state;
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 2, 2, 0.0, true, 0.0), MF_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    next(&p, 1.0, out);
    next(&p, 2.0, out);
    fputs("epoch 1/2: loss 0.5, val_loss 0.6\n", out);   /* what fit prints */
    next(&p, 3.0, out);
    next(&p, 4.0, out);
    mf_progress_done(&p, 5.0, out);
    fclose(out);
    const char *summary = strstr(buf, "epoch 1/2: loss");
    assert_non_null(summary);
    assert_true(summary > buf && summary[-1] == '\n');   /* on a line of its own */
    assert_non_null(strstr(summary, "val_loss 0.6\n\repoch 2/2"));   /* no blank line */
    assert_int_equal(buf[strlen(buf) - 1], '\n');
    assert_null(strstr(buf, "\n\n"));
    free(buf);
}

static void test_errors(void **state)
{
    (void)state;
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 0, 2, 1.0, false, 0.0), MF_EARG);
    assert_error_contains("progress: 'epochs' needs 'total'");
    assert_int_equal(mf_progress_init(&p, 5, 0, -1.0, false, 0.0), MF_EARG);
    assert_error_contains("progress: 'interval' must be >= 0 seconds");
    assert_int_equal(mf_progress_init(&p, 5, 0, 1.0, false, 0.0), MF_OK);
    char name[16];
    for (int i = 0; i < MF_PROGRESS_MAX_METRICS; i++) {
        snprintf(name, sizeof name, "m%d", i);
        assert_int_equal(mf_progress_set_metric(&p, name, i), MF_OK);
    }
    assert_int_equal(mf_progress_set_metric(&p, "m3", 9), MF_OK);   /* an update, not a new one */
    assert_true(p.metrics[3].value == 9);
    assert_int_equal(mf_progress_set_metric(&p, "extra", 1), MF_EARG);
    assert_error_contains("update: at most 8 metrics, got another one: 'extra'");
    MfProgress q;
    assert_int_equal(mf_progress_init(&q, 5, 0, 1.0, false, 0.0), MF_OK);
    assert_int_equal(mf_progress_set_metric(&q, "a_name_of_24_characters_", 1), MF_EARG);
    assert_error_contains("is longer than 23 characters");
}

/* The counts of mf.progress and the positions an update names: 1-based,
 * a step within 'total' and an epoch within 'epochs' when they are known. */
static void test_count_and_position_ranges(void **state)
{
    (void)state;
    assert_int_equal(mf_progress_check_count("total", 1), MF_OK);
    assert_int_equal(mf_progress_check_count("total", 0), MF_EARG);
    assert_error_contains("progress: 'total' must be at least 1, got 0");
    assert_int_equal(mf_progress_check_count("epochs", INT64_MIN), MF_EARG);
    assert_error_contains("progress: 'epochs' must be at least 1, got -9223372036854775808");
    MfProgress p;
    assert_int_equal(mf_progress_init(&p, 5, 2, 1.0, false, 0.0), MF_OK);
    assert_int_equal(mf_progress_check_position(&p, "step", 5), MF_OK);
    assert_int_equal(mf_progress_check_position(&p, "epoch", 2), MF_OK);
    assert_int_equal(mf_progress_check_position(&p, "step", 6), MF_EARG);
    assert_error_contains("update: 'step' = 6 is out of range 1..5 (1-based)");
    assert_int_equal(mf_progress_check_position(&p, "epoch", 0), MF_EARG);
    assert_error_contains("update: 'epoch' = 0 is out of range 1..2 (1-based)");
    assert_int_equal(mf_progress_init(&p, 0, 0, 1.0, false, 0.0), MF_OK); /* unknown total */
    assert_int_equal(mf_progress_check_position(&p, "step", INT64_MAX), MF_OK);
    assert_int_equal(mf_progress_check_position(&p, "step", 0), MF_EARG);
    assert_error_contains("update: 'step' must be at least 1, got 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_line),
        TEST(test_rollover_rate_limit_and_finish),
        TEST(test_terminal_and_unknown_total),
        TEST(test_terminal_epoch_end_ends_the_line),
        TEST(test_errors),
        TEST(test_count_and_position_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
