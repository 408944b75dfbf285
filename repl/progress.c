/* progress.c — mf.progress{total, epochs, ...}: the progress line of a
 * training loop (Keras' Progbar, Torch's xlua.progress):
 *
 *   epoch 2/3  step  40/100 [=========>..............]  40%  loss 0.1234 | 850 steps/s ETA 0:03
 *
 * On a terminal the line is redrawn in place ("\r", at most 10 times a
 * second) and each epoch keeps its last line; when stdout is not a terminal
 * (a log file, a pipe) it prints plain lines, at most one per 'interval'
 * seconds plus the first step and the end of each epoch, so logs stay short.
 *
 * Ownership: the "mf.Progress" userdata holds all state (no pointers to Lua
 * values); metric names are copied in. Errors are raised before any output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lmf.h"
#include "core/clocale.h"

#define PROGRESS_MT "mf.Progress"
#define MAX_METRICS 8
#define BAR_WIDTH 24

typedef struct Metric {
    char name[24];
    double value;
} Metric;

typedef struct Progress {
    lua_Integer total, epochs; /* 0: unknown */
    lua_Integer step, epoch;   /* the last update, 1-based; 0 before the first */
    lua_Integer done;          /* steps counted across epochs */
    double created, last_draw; /* monotonic seconds; last_draw < 0: never drawn */
    double first, end;         /* times of the first update and of the finish (0: not yet) */
    lua_Integer first_done;    /* 'done' after the first update */
    double interval;           /* seconds between plain lines */
    int tty, drawn_epoch, finished;
    int show_epoch;            /* epochs given, or an update named its epoch */
    int nmetrics;
    Metric metrics[MAX_METRICS];
} Progress;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* Steps per second. Timed from the first update on, not from mf.progress{}:
 * at the prompt the time spent typing the loop is not the loop's. The first
 * update alone has only the time since the progress was made. The clock
 * stops at the finish. */
static double steps_per_second(const Progress *p, double t)
{
    if (p->end > 0)
        t = p->end;
    if (p->done > p->first_done && t > p->first)
        return (double)(p->done - p->first_done) / (t - p->first);
    return t > p->created ? (double)p->done / (t - p->created) : 0;
}

/* Rate and ETA (or the total time once finished). */
static int fmt_timing(const Progress *p, char *out, size_t cap, double t)
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
    lua_Integer all = p->total * (p->epochs ? p->epochs : 1);
    if (!p->total || rate <= 0)
        return snprintf(out, cap, " | %s steps/s", r);
    fmt_duration(dur, sizeof dur, (double)(all - p->done) / rate);
    return snprintf(out, cap, " | %s steps/s ETA %s", r, dur);
}

/* Writes the whole line (no line ending) into 'out'. */
static void fmt_line_c(const Progress *p, char *out, size_t cap, double t);

/* The line with '.' decimal points whatever os.setlocale says. */
static void fmt_line(const Progress *p, char *out, size_t cap, double t)
{
    MfCLocale loc = mf_c_locale_begin();
    fmt_line_c(p, out, cap, t);
    mf_c_locale_end(loc);
}

static void fmt_line_c(const Progress *p, char *out, size_t cap, double t)
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

/* Whether this update is shown: always the first, the end of an epoch and
 * the finish; otherwise rate-limited. */
static int due(const Progress *p, double t)
{
    if (p->last_draw < 0 || p->finished || (p->total && p->step == p->total))
        return 1;
    return t - p->last_draw >= (p->tty ? 0.1 : p->interval);
}

static void draw(Progress *p, double t)
{
    char line[512];
    fmt_line(p, line, sizeof line, t);
    if (p->tty) {
        /* A new epoch keeps the last line of the previous one. */
        if (p->last_draw >= 0 && p->epoch != p->drawn_epoch)
            fputc('\n', stdout);
        fprintf(stdout, "\r%s\033[K", line);
        if (p->finished)
            fputc('\n', stdout);
    } else {
        fprintf(stdout, "%s\n", line);
    }
    fflush(stdout);
    p->last_draw = t;
    p->drawn_epoch = (int)p->epoch;
}

static Progress *check_progress(lua_State *L)
{
    return luaL_checkudata(L, 1, PROGRESS_MT);
}

/* Reads an integer field of the table at 'idx' in 1..hi (hi 0: no bound). */
static lua_Integer opt_count(lua_State *L, int idx, const char *key, lua_Integer dflt,
                             lua_Integer hi, const char *what)
{
    int type = lua_getfield(L, idx, key);
    lua_Integer v = dflt;
    if (type != LUA_TNIL) {
        int isint = 0;
        v = lua_tointegerx(L, -1, &isint);
        if (!isint)
            luaL_error(L, "%s: '%s' must be an integer, got %s", what, key,
                       luaL_tolstring(L, -1, NULL));
        if (v < 1 && !hi)
            luaL_error(L, "%s: '%s' must be at least 1, got %I", what, key, (lua_Integer)v);
        if (v < 1 || (hi && v > hi))
            luaL_error(L, "%s: '%s' = %I is out of range 1..%I (1-based)", what, key,
                       (lua_Integer)v, (lua_Integer)hi);
    }
    lua_pop(L, 1);
    return v;
}

/* A metric value: a Lua number or a one-element tensor (a loss as it comes). */
static double metric_value(lua_State *L, int idx, const char *name)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lua_tonumber(L, idx);
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t && t->storage && mf_tensor_numel(t) == 1)
        return mf_tensor_get(t, 0);
    return luaL_error(L, "update: '%s' must be a number or a one-element tensor, got %s",
                      name, t ? "a tensor with several (or no) values" : luaL_typename(L, idx));
}

/* "loss" first, then by name, so the line reads the same on every update. */
static int metric_cmp(const void *a, const void *b)
{
    const char *x = ((const Metric *)a)->name, *y = ((const Metric *)b)->name;
    int lx = strcmp(x, "loss") != 0, ly = strcmp(y, "loss") != 0;
    return lx != ly ? lx - ly : strcmp(x, y);
}

static void set_metric(lua_State *L, Progress *p, const char *name, double v)
{
    for (int i = 0; i < p->nmetrics; i++) {
        if (strcmp(p->metrics[i].name, name) == 0) {
            p->metrics[i].value = v;
            return;
        }
    }
    if (p->nmetrics == MAX_METRICS)
        luaL_error(L, "update: at most %d metrics, got another one: '%s'", MAX_METRICS, name);
    if (strlen(name) >= sizeof p->metrics[0].name)
        luaL_error(L, "update: metric name '%s' is longer than %d characters", name,
                   (int)sizeof p->metrics[0].name - 1);
    Metric *m = &p->metrics[p->nmetrics++];
    strcpy(m->name, name);
    m->value = v;
    qsort(p->metrics, (size_t)p->nmetrics, sizeof *m, metric_cmp);
}

/* Every field of the update table other than step and epoch is a metric. */
static void read_metrics(lua_State *L, Progress *p, int idx)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "update: fields must be named (step=, epoch=, loss=, ...)");
        const char *name = lua_tostring(L, -2);
        if (strcmp(name, "step") != 0 && strcmp(name, "epoch") != 0)
            set_metric(L, p, name, metric_value(L, -1, name));
        lua_pop(L, 1);
    }
}

/* The step and epoch of this update: given, or the next step (rolling over
 * into the next epoch after 'total'). */
static void next_position(lua_State *L, Progress *p, int idx, lua_Integer *step,
                          lua_Integer *epoch)
{
    /* a user may have set step= or epoch= to math.maxinteger: saturate */
    *step = p->step < LUA_MAXINTEGER ? p->step + 1 : p->step;
    *epoch = p->epoch ? p->epoch : 1;
    if (p->total && *step > p->total) {
        *step = 1;
        *epoch += *epoch < LUA_MAXINTEGER;
    }
    if (idx) {
        *step = opt_count(L, idx, "step", *step, p->total, "update");
        *epoch = opt_count(L, idx, "epoch", *epoch, p->epochs, "update");
    }
    if (p->epochs && *epoch > p->epochs)
        luaL_error(L, "update: epoch %I is past epochs = %I (the loop already finished)",
                   (lua_Integer)*epoch, (lua_Integer)p->epochs);
}

/* p:update([{step =, epoch =, loss =, <metric> = ...} | step]) */
static int l_update(lua_State *L)
{
    lmf_check_nargs(L, "update", 2);
    Progress *p = check_progress(L);
    int idx = 0;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, 2);
        lua_setfield(L, -2, "step");
        lua_replace(L, 2);
    }
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        idx = 2;
    }
    lua_Integer step, epoch;
    next_position(L, p, idx, &step, &epoch);
    if (idx) {
        read_metrics(L, p, idx);
        p->show_epoch |= lua_getfield(L, idx, "epoch") != LUA_TNIL;
        lua_pop(L, 1);
    }
    p->step = step;
    p->epoch = epoch;
    p->done = p->total ? (epoch - 1) * p->total + step : p->done + 1;
    p->finished = p->total && step == p->total && (!p->epochs || epoch == p->epochs);
    double t = now();
    if (p->first == 0) {
        p->first = t;
        p->first_done = p->done;
    }
    if (p->finished && p->end == 0)
        p->end = t;
    if (due(p, t))
        draw(p, t);
    return 0;
}

/* p:done(): ends the line (prints the final state with the total time);
 * also the '__close' of p (which Lua calls with the error, if any). */
static int end_line(lua_State *L)
{
    Progress *p = check_progress(L);
    if (p->finished && p->last_draw >= 0)
        return 0;
    p->finished = 1;
    if (p->end == 0)
        p->end = now();
    if (p->step)
        draw(p, now());
    return 0;
}

static int l_done(lua_State *L)
{
    lmf_check_nargs(L, "done", 1);
    return end_line(L);
}

static int l_tostring(lua_State *L)
{
    Progress *p = check_progress(L);
    char line[512];
    fmt_line(p, line, sizeof line, now());
    lua_pushstring(L, line);
    return 1;
}

/* mf.progress{total, epochs, interval, tty} */
static int l_progress(lua_State *L)
{
    lmf_check_nargs(L, "progress", 1);
    static const char *const known[] = {"total", "epochs", "interval", "tty", NULL};
    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TTABLE);
    lmf_check_options(L, 1, "progress", known);
    lua_settop(L, 1);
    Progress *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    if (lua_istable(L, 1)) {
        p->total = opt_count(L, 1, "total", 0, 0, "progress");
        p->epochs = opt_count(L, 1, "epochs", 0, 0, "progress");
    }
    if (p->epochs && !p->total)
        return luaL_error(L, "progress: 'epochs' needs 'total' (the steps of one epoch)");
    p->interval = lmf_opt_number(L, 1, "interval", 1.0);
    if (!(p->interval >= 0))
        return luaL_error(L, "progress: 'interval' must be >= 0 seconds, got %f", p->interval);
    p->tty = lmf_opt_bool(L, 1, "tty", isatty(fileno(stdout)));
    p->created = now();
    p->last_draw = -1;
    luaL_setmetatable(L, PROGRESS_MT);
    return 1;
}

void lmf_open_progress(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"update", l_update}, {"done", l_done}, {NULL, NULL},
    };
    luaL_newmetatable(L, PROGRESS_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, end_line);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, l_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_progress);
    lua_setfield(L, -2, "progress");
}
