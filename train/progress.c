/* progress.c — the progress line of a training loop (see progress.h). */
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clocale.h"

#define BAR_WIDTH 24

double mf_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

MfStatus mf_progress_init(MfProgress *p, int64_t total, int64_t epochs, double interval,
                          bool tty, double now)
{
    memset(p, 0, sizeof *p);
    if (epochs && !total)
        return mf_err_set(MF_EARG, "progress: 'epochs' needs 'total' (the steps of one epoch)");
    if (!(interval >= 0))
        return mf_err_set(MF_EARG, "progress: 'interval' must be >= 0 seconds, got %f",
                          interval);
    p->total = total;
    p->epochs = epochs;
    p->interval = interval;
    p->tty = tty;
    p->created = now;
    p->last_draw = -1;
    return MF_OK;
}

/* 'v' in 1..hi ('hi' 0: no upper bound), named "fname: 'key'". */
static MfStatus check_count(const char *fname, const char *key, int64_t v, int64_t hi)
{
    if (v < 1 && !hi)
        return mf_err_set(MF_EARG, "%s: '%s' must be at least 1, got %lld", fname, key,
                          (long long)v);
    if (v < 1 || (hi && v > hi))
        return mf_err_set(MF_EARG, "%s: '%s' = %lld is out of range 1..%lld (1-based)", fname,
                          key, (long long)v, (long long)hi);
    return MF_OK;
}

MfStatus mf_progress_check_count(const char *key, int64_t v)
{
    return check_count("progress", key, v, 0);
}

MfStatus mf_progress_check_position(const MfProgress *p, const char *key, int64_t v)
{
    return check_count("update", key, v, strcmp(key, "step") == 0 ? p->total : p->epochs);
}

void mf_progress_next(const MfProgress *p, int64_t *step, int64_t *epoch)
{
    /* a user may have set step= or epoch= to the largest integer: saturate */
    *step = p->step < INT64_MAX ? p->step + 1 : p->step;
    *epoch = p->epoch ? p->epoch : 1;
    if (p->total && *step > p->total) {
        *step = 1;
        *epoch += *epoch < INT64_MAX;
    }
}

/* "loss" first, then by name, so the line reads the same on every update. */
static int metric_cmp(const void *a, const void *b)
{
    const char *x = ((const MfProgressMetric *)a)->name;
    const char *y = ((const MfProgressMetric *)b)->name;
    int lx = strcmp(x, "loss") != 0, ly = strcmp(y, "loss") != 0;
    return lx != ly ? lx - ly : strcmp(x, y);
}

MfStatus mf_progress_set_metric(MfProgress *p, const char *name, double v)
{
    for (int i = 0; i < p->nmetrics; i++) {
        if (strcmp(p->metrics[i].name, name) == 0) {
            p->metrics[i].value = v;
            return MF_OK;
        }
    }
    if (p->nmetrics == MF_PROGRESS_MAX_METRICS)
        return mf_err_set(MF_EARG, "update: at most %d metrics, got another one: '%s'",
                          MF_PROGRESS_MAX_METRICS, name);
    if (strlen(name) >= sizeof p->metrics[0].name)
        return mf_err_set(MF_EARG, "update: metric name '%s' is longer than %d characters",
                          name, (int)sizeof p->metrics[0].name - 1);
    MfProgressMetric *m = &p->metrics[p->nmetrics++];
    strcpy(m->name, name);
    m->value = v;
    qsort(p->metrics, (size_t)p->nmetrics, sizeof *m, metric_cmp);
    return MF_OK;
}

/* "1:05" or "2:03:09". */
static void fmt_duration(char *out, size_t cap, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

/* The bar: '=' for done, '>' at the head, '.' for the rest. */
static void fmt_bar(char *out, double frac)
{
    int full = (int)(frac * BAR_WIDTH);
    out[0] = '[';
    for (int i = 0; i < BAR_WIDTH; i++)
        out[1 + i] = i < full ? '=' : (i == full && frac < 1 ? '>' : '.');
    out[BAR_WIDTH + 1] = ']';
    out[BAR_WIDTH + 2] = 0;
}

/* Steps per second. Timed from the first update on, not from the progress's
 * making: at the prompt the time spent typing the loop is not the loop's.
 * The first update alone has only the time since the progress was made.
 * The clock stops at the finish. */
static double steps_per_second(const MfProgress *p, double t)
{
    if (p->end > 0)
        t = p->end;
    if (p->done > p->first_done && t > p->first)
        return (double)(p->done - p->first_done) / (t - p->first);
    return t > p->created ? (double)p->done / (t - p->created) : 0;
}

/* Rate and ETA (or the total time once finished). */
static int fmt_timing(const MfProgress *p, char *out, size_t cap, double t)
{
    double rate = steps_per_second(p, t);
    double elapsed = rate > 0 ? (double)p->done / rate : 0; /* the first step at the mean */
    char dur[32], r[32];
    /* Whole steps per second once there are many; 3 digits below 100. */
    snprintf(r, sizeof r, rate >= 100 ? "%.0f" : "%.3g", rate);
    if (p->finished) {
        fmt_duration(dur, sizeof dur, elapsed);
        return snprintf(out, cap, " | %s steps/s, %s total", r, dur);
    }
    int64_t all = p->total * (p->epochs ? p->epochs : 1);
    if (!p->total || rate <= 0)
        return snprintf(out, cap, " | %s steps/s", r);
    fmt_duration(dur, sizeof dur, (double)(all - p->done) / rate);
    return snprintf(out, cap, " | %s steps/s ETA %s", r, dur);
}

static void line_c(const MfProgress *p, double t, char *out, size_t cap)
{
    size_t n = 0;
#define ADD(...) n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__)
    if (p->epochs)
        ADD("epoch %lld/%lld  ", (long long)p->epoch, (long long)p->epochs);
    else if (p->show_epoch)
        ADD("epoch %lld  ", (long long)p->epoch);
    if (p->total) {
        char bar[BAR_WIDTH + 3];
        double frac = (double)p->step / (double)p->total;
        int digits = snprintf(NULL, 0, "%lld", (long long)p->total);
        fmt_bar(bar, frac);
        ADD("step %*lld/%lld %s %3d%%", digits, (long long)p->step, (long long)p->total, bar,
            (int)(100 * frac));
    } else {
        ADD("step %lld", (long long)p->step);
    }
    for (int i = 0; i < p->nmetrics; i++)
        ADD("  %s %.4g", p->metrics[i].name, p->metrics[i].value);
    if (n < cap)
        fmt_timing(p, out + n, cap - n, t);
#undef ADD
}

void mf_progress_line(const MfProgress *p, double now, char *buf, size_t cap)
{
    MfCLocale loc = mf_c_locale_begin();
    line_c(p, now, buf, cap);
    mf_c_locale_end(loc);
}

/* Whether this update is shown: always the first, the end of an epoch and
 * the finish; otherwise rate-limited. */
static bool due(const MfProgress *p, double t)
{
    if (p->last_draw < 0 || p->finished || (p->total && p->step == p->total))
        return true;
    return t - p->last_draw >= (p->tty ? 0.1 : p->interval);
}

static void draw(MfProgress *p, double t, FILE *out)
{
    char line[512];
    mf_progress_line(p, t, line, sizeof line);
    if (p->tty) {
        /* A new epoch keeps the last line of the previous one. */
        if (p->last_draw >= 0 && p->epoch != p->drawn_epoch && !p->line_closed)
            fputc('\n', out);
        fprintf(out, "\r%s\033[K", line);
        /* the end of an epoch ends its line, so what the loop prints then
         * (fit's epoch summary with validation) starts a line of its own */
        p->line_closed = p->finished || (p->total && p->step == p->total);
        if (p->line_closed)
            fputc('\n', out);
    } else {
        fprintf(out, "%s\n", line);
    }
    fflush(out);
    p->last_draw = t;
    p->drawn_epoch = p->epoch;
}

MfStatus mf_progress_check_epoch(const MfProgress *p, int64_t epoch)
{
    if (p->epochs && epoch > p->epochs)
        return mf_err_set(MF_EARG, "update: epoch %lld is past epochs = %lld (the loop "
                          "already finished)", (long long)epoch, (long long)p->epochs);
    return MF_OK;
}

MfStatus mf_progress_update(MfProgress *p, int64_t step, int64_t epoch, bool named_epoch,
                            double now, FILE *out)
{
    if (p->ended)
        return mf_err_set(MF_EARG, "update: the progress line was ended by done(); "
                          "mf.progress{...} makes a new one");
    MfStatus st = mf_progress_check_epoch(p, epoch);
    if (st != MF_OK)
        return st;
    p->show_epoch |= named_epoch;
    p->step = step;
    p->epoch = epoch;
    p->done = p->total ? (epoch - 1) * p->total + step : p->done + 1;
    p->finished = p->total && step == p->total && (!p->epochs || epoch == p->epochs);
    if (p->first == 0) {
        p->first = now;
        p->first_done = p->done;
    }
    if (p->finished && p->end == 0)
        p->end = now;
    if (out && due(p, now))
        draw(p, now, out);
    return MF_OK;
}

void mf_progress_done(MfProgress *p, double now, FILE *out)
{
    if (p->ended)
        return;
    p->ended = true;
    if (p->finished && p->last_draw >= 0)
        return;
    p->finished = true;
    if (p->end == 0)
        p->end = now;
    if (p->step && out)
        draw(p, now, out);
}
