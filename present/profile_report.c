/* profile_report.c — the profiler's report (see profile_report.h): rows aggregated by op or
 * node name, the measured GEMM peak, and the two printed tables.
 *
 * Self time: events arrive in the order they ended, so an op's nested op
 * events (depth + 1) all arrive before it and after the previous event of
 * its own depth. One running sum per depth gives each op its children's
 * time. The peak is measured with cblas_sgemm directly, not mf_gemm: it is
 * the profiler's own calibration and must not appear among the events. */
#include "profile_report.h"

#include <cblas.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/clocale.h"
#include "core/parallel.h"

#define MAX_DEPTH 64
#define PEAK_N 1024
#define PEAK_RUNS 8
#define MAX_THREADS 256

/* ---- aggregation ------------------------------------------------------------ */

/* Rows by name: open addressing over row indices (-1: empty). */
typedef struct RowMap {
    int64_t *slot;
    int64_t cap;
} RowMap;

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool map_grow(RowMap *m, const MfProfRow *rows, int64_t nrows)
{
    int64_t cap = m->cap ? 2 * m->cap : 64;
    int64_t *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot)
        return false;
    for (int64_t i = 0; i < cap; i++)
        slot[i] = -1;
    for (int64_t r = 0; r < nrows; r++) {
        int64_t j = (int64_t)(hash_name(rows[r].name) & (uint64_t)(cap - 1));
        while (slot[j] >= 0)
            j = (j + 1) & (cap - 1);
        slot[j] = r;
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return true;
}

/* The row for event 'e' (appended when new), or NULL when out of memory. */
static MfProfRow *row_for(MfProfReport *r, RowMap *m, const MfProfEvent *e)
{
    if (2 * (r->nrows + 1) > m->cap && !map_grow(m, r->rows, r->nrows))
        return NULL;
    int64_t j = (int64_t)(hash_name(e->name) & (uint64_t)(m->cap - 1));
    for (; m->slot[j] >= 0; j = (j + 1) & (m->cap - 1))
        if (strcmp(r->rows[m->slot[j]].name, e->name) == 0)
            return &r->rows[m->slot[j]];
    m->slot[j] = r->nrows;
    MfProfRow *row = &r->rows[r->nrows++];
    *row = (MfProfRow){.name = e->name, .op = e->op, .label = e->label ? e->label : e->op};
    return row;
}

/* Fills the rows from the events in the order they ended. */
static MfStatus aggregate(MfProfReport *r, const MfProfEvent *ev, int64_t n)
{
    double child[MAX_DEPTH + 1] = {0};
    RowMap map = {NULL, 0};
    for (int64_t i = 0; i < n; i++) {
        const MfProfEvent *e = &ev[i];
        int d = e->depth < MAX_DEPTH ? e->depth : MAX_DEPTH - 1;
        double nested = child[d + 1];
        child[d + 1] = 0;
        if (e->kind != MF_PROF_OP)
            continue;
        child[d] += e->dur_us;
        MfProfRow *row = row_for(r, &map, e);
        if (!row) {
            free(map.slot);
            return mf_err_nomem("profiler report", (unsigned long long)(map.cap * 16));
        }
        row->calls++;
        row->total_us += e->dur_us;
        row->self_us += e->dur_us > nested ? e->dur_us - nested : 0;
        row->flops += e->flops;
        row->bytes += e->bytes;
        r->ncalls++;
        if (e->depth == 0)
            r->top_us += e->dur_us;
    }
    free(map.slot);
    return MF_OK;
}

static int by_total(const void *pa, const void *pb)
{
    const MfProfRow *a = pa, *b = pb;
    if (a->total_us != b->total_us)
        return a->total_us > b->total_us ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_start(const void *pa, const void *pb)
{
    const MfProfEvent *a = pa, *b = pb;
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us ? -1 : 1;
    return a->depth - b->depth;
}

static void raise_peak(MfProfReport *r);

MfProfReport *mf_prof_report_new(void)
{
    int64_t n;
    const MfProfEvent *ev = mf_prof_events(&n);
    MfProfReport *r = calloc(1, sizeof *r);
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(MfProfEvent);
    if (r) {
        r->events = malloc(bytes);
        r->rows = malloc((size_t)(n > 0 ? n : 1) * sizeof(MfProfRow));
    }
    if (!r || !r->events || !r->rows) {
        mf_prof_report_free(r);
        mf_err_nomem("profiler report", (unsigned long long)bytes);
        return NULL;
    }
    if (aggregate(r, ev, n) != MF_OK) {
        mf_prof_report_free(r);
        return NULL;
    }
    if (n > 0)
        memcpy(r->events, ev, (size_t)n * sizeof *ev);
    r->nevents = n;
    qsort(r->events, (size_t)n, sizeof *r->events, by_start);
    qsort(r->rows, (size_t)r->nrows, sizeof *r->rows, by_total);
    r->peak_gflops = mf_prof_peak_gflops();
    raise_peak(r);
    return r;
}

void mf_prof_report_free(MfProfReport *r)
{
    if (!r)
        return;
    free(r->events);
    free(r->rows);
    free(r);
}

/* ---- peak ------------------------------------------------------------------- */

/* GFLOP/s of the best of a few n^3 SGEMMs (after one warm-up); 0 on OOM. */
static double measure_peak(void)
{
    size_t nn = (size_t)PEAK_N * PEAK_N;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    double best = 0;
    bool buffers = mf_parallel_blas_buffers("peak", 1) == MF_OK;
    if (!buffers)
        mf_err_clear();
    if (a && b && c && buffers) {
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)(i % 7) * 0.25f;
            b[i] = (float)(i % 5) * 0.5f;
        }
        mf_parallel_blas_threads(true); /* OpenBLAS's own threads, stopped again below */
        for (int run = 0; run <= PEAK_RUNS; run++) {
            double t0 = mf_prof_now_us();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PEAK_N, PEAK_N, PEAK_N,
                        1.0f, a, PEAK_N, b, PEAK_N, 0.0f, c, PEAK_N);
            double g = mf_prof_gflops(2.0 * PEAK_N * PEAK_N * PEAK_N, mf_prof_now_us() - t0);
            if (run > 0 && g > best)
                best = g;
        }
        mf_parallel_blas_threads(false);
    }
    free(a);
    free(b);
    free(c);
    return best;
}

static double peak_cache[MAX_THREADS + 1];

static int peak_threads(void)
{
    int threads = mf_parallel_threads();
    return threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
}

double mf_prof_peak_gflops(void)
{
    int threads = peak_threads();
    if (peak_cache[threads] <= 0)
        peak_cache[threads] = measure_peak();
    return peak_cache[threads];
}

/* A plain GEMM of the report that ran faster than the measured peak (the
 * peak run was slowed by another process, or a small GEMM fit the cache)
 * shows the peak was low: the best rate seen becomes the peak for this
 * thread count, so "% of peak" never exceeds 100% by measurement noise.
 * Every GEMM event counts its own 2*M*N*K FLOPs (Winograd's small GEMMs
 * too: they ran at 3x the peak measured on a busy machine, issue #30). */
static void raise_peak(MfProfReport *r)
{
    double best = 0;
    for (int64_t i = 0; i < r->nevents; i++) {
        const MfProfEvent *e = &r->events[i];
        double g = e->kind == MF_PROF_GEMM ? mf_prof_gflops(e->flops, e->dur_us) : 0;
        best = g > best ? g : best;
    }
    if (r->peak_gflops > 0 && best > r->peak_gflops) {
        r->peak_gflops = best;
        peak_cache[peak_threads()] = best;
    }
}

double mf_prof_gflops(double flops, double us)
{
    return flops > 0 && us > 0 ? flops / us * 1e-3 : 0;
}

/* A rate at most the peak is at most 100%: 100 * g / g rounds above 100
 * for about one value in seventeen (the GEMM that raised the peak). */
double mf_prof_peak_pct(double gflops, double peak)
{
    if (peak <= 0)
        return 0;
    double pct = 100.0 * gflops / peak;
    return gflops <= peak && pct > 100.0 ? 100.0 : pct;
}

/* ---- records ---------------------------------------------------------------- */

static MfProfField number(const char *key, double v)
{
    return (MfProfField){key, MF_PROF_NUMBER, v, NULL};
}

static MfProfField text(const char *key, const char *v)
{
    return (MfProfField){key, MF_PROF_STRING, 0, v};
}

int mf_prof_row_fields(const MfProfReport *r, const MfProfRow *row, MfProfField *out)
{
    double g = mf_prof_gflops(row->flops, row->total_us);
    const MfProfField f[] = {
        text("op", row->name),
        text("type", row->op ? row->op : row->name),
        text("label", row->label ? row->label : row->name),
        {"calls", MF_PROF_INTEGER, (double)row->calls, NULL},
        number("total_ms", row->total_us * 1e-3),
        number("self_ms", row->self_us * 1e-3),
        number("avg_ms", row->total_us * 1e-3 / (double)row->calls),
        number("flops", row->flops),
        number("bytes", row->bytes),
        number("gflops", g),
        number("peak_pct", mf_prof_peak_pct(g, r->peak_gflops)),
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof *f);
}

int mf_prof_event_fields(const MfProfReport *r, const MfProfEvent *e, MfProfField *out)
{
    int n = 0;
    out[n++] = text("op", e->op ? e->op : "?");
    out[n++] = number("ms", e->dur_us * 1e-3);
    out[n++] = number("bytes", e->bytes);
    if (e->kind == MF_PROF_STEP) {
        out[n++] = text("step", e->name);
        return n;
    }
    out[n++] = (MfProfField){"M", MF_PROF_INTEGER, (double)e->M, NULL};
    out[n++] = (MfProfField){"N", MF_PROF_INTEGER, (double)e->N, NULL};
    out[n++] = (MfProfField){"K", MF_PROF_INTEGER, (double)e->K, NULL};
    out[n++] = (MfProfField){"trans_a", MF_PROF_BOOL, e->trans_a, NULL};
    out[n++] = (MfProfField){"trans_b", MF_PROF_BOOL, e->trans_b, NULL};
    if (e->algorithm)
        out[n++] = text("algorithm", e->algorithm);
    double g = mf_prof_gflops(e->flops, e->dur_us);
    out[n++] = number("flops", e->flops);
    out[n++] = number("gflops", g);
    out[n++] = number("peak_pct", mf_prof_peak_pct(g, r->peak_gflops));
    return n;
}

/* ---- tables ----------------------------------------------------------------- */

/* A growing text; 'ok' turns false at the first failed allocation. */
typedef struct Text {
    char *s;
    size_t len, cap;
    bool ok;
} Text;

static void addf(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void addf(Text *t, const char *fmt, ...)
{
    if (!t->ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || t->len + (size_t)n + 1 > t->cap) {
        size_t cap = 2 * (t->len + (size_t)(n > 0 ? n : 0) + 64);
        char *s = n < 0 ? NULL : realloc(t->s, cap);
        if (!s) {
            t->ok = false;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static char *text_done(Text *t)
{
    if (!t->ok) {
        free(t->s);
        return NULL;
    }
    return t->s;
}

/* A count with an SI suffix ("1.23G") into 'buf'; "-" for 0. */
static const char *si(char *buf, size_t size, double v)
{
    static const char suffix[] = " kMGTP";
    int k = 0;
    if (v <= 0)
        return "-";
    while (v >= 1000 && k < 5) {
        v /= 1000;
        k++;
    }
    if (k == 0)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.2f%c", v, suffix[k]);
    return buf;
}

/* A row's name in the table: an eager op's label ("Sum[axis=2]"), or a
 * graph node's name with its label, "gradients/matmul_grad/matmul
 * (MatMul[transpose_a])". Returns 'buf'. */
static const char *row_title(const MfProfRow *row, char *buf, size_t size)
{
    if (!row->label || strcmp(row->label, row->name) == 0)
        snprintf(buf, size, "%s", row->name);
    else
        snprintf(buf, size, "%s (%s)", row->name, row->label);
    return buf;
}

/* The width of the name column: the longest name, at least 'min'. */
static int name_width(const MfProfReport *r, int min, bool rows)
{
    size_t w = (size_t)min;
    char title[512];
    for (int64_t i = 0; rows && i < r->nrows; i++) {
        size_t len = strlen(row_title(&r->rows[i], title, sizeof title));
        w = len > w ? len : w;
    }
    for (int64_t i = 0; !rows && i < r->nevents; i++)
        if (r->events[i].kind != MF_PROF_OP && r->events[i].op)
            w = strlen(r->events[i].op) > w ? strlen(r->events[i].op) : w;
    return w > 60 ? 60 : (int)w;
}

static void add_perf(Text *t, const MfProfReport *r, double flops, double us)
{
    char fb[32];
    double g = mf_prof_gflops(flops, us);
    if (g <= 0) {
        addf(t, " %9s %9s %7s", si(fb, sizeof fb, flops), "-", "-");
        return;
    }
    addf(t, " %9s %9.2f", si(fb, sizeof fb, flops), g);
    if (r->peak_gflops > 0)
        addf(t, " %6.1f%%", mf_prof_peak_pct(g, r->peak_gflops));
    else
        addf(t, " %7s", "-");
}

/* The collectives' share (mf.dist): calls, bytes reduced, time and its
 * part of the top-level time, on a line of its own. An overlapped
 * allreduce is a start (eager: "MPIAllreduce"; graph: an
 * "MPIAllreduceStart" node; the call and its bytes) and the time spent
 * progressing and waiting for it ("MPIAllreduceWait": rows and nodes):
 * all of it is time the step spent in the allreduce. */
static void add_collectives(Text *t, const MfProfReport *r)
{
    int64_t calls = 0;
    double bytes = 0, us = 0;
    char bb[32], pb[32];
    for (int64_t i = 0; i < r->nrows; i++) {
        if (r->rows[i].op && (strcmp(r->rows[i].op, "MPIAllreduce") == 0 ||
                              strcmp(r->rows[i].op, "MPIAllreduceStart") == 0)) {
            calls += r->rows[i].calls;
            bytes += r->rows[i].bytes;
            us += r->rows[i].total_us;
        } else if (r->rows[i].op && strcmp(r->rows[i].op, "MPIAllreduceWait") == 0) {
            us += r->rows[i].total_us;
        }
    }
    if (calls == 0)
        return;
    addf(t, "\nallreduce: %lld call%s, %sB reduced (%sB per call), %.3f ms = %.1f%% of the "
         "top-level time", (long long)calls, calls == 1 ? "" : "s", si(bb, sizeof bb, bytes),
         si(pb, sizeof pb, bytes / (double)calls), us * 1e-3,
         r->top_us > 0 ? 100 * us / r->top_us : 0.0);
}

static char *report_table(const MfProfReport *r)
{
    Text t = {NULL, 0, 0, true};
    int w = name_width(r, 18, true);
    addf(&t, "%-*s %7s %10s %10s %10s %9s %9s %7s\n", w, "op", "calls", "total ms", "self ms",
         "avg ms", "FLOPs", "GFLOP/s", "% peak");
    for (int64_t i = 0; i < r->nrows; i++) {
        const MfProfRow *row = &r->rows[i];
        char title[512];
        addf(&t, "%-*s %7lld %10.3f %10.3f %10.4f", w, row_title(row, title, sizeof title),
             (long long)row->calls, row->total_us * 1e-3, row->self_us * 1e-3,
             row->total_us * 1e-3 / (double)row->calls);
        add_perf(&t, r, row->flops, row->total_us);
        addf(&t, "\n");
    }
    if (r->nrows == 0)
        addf(&t, "(no ops ran)\n");
    addf(&t, "%lld op call%s, %.3f ms at top level; GEMM peak %.1f GFLOP/s (%d thread%s: "
         "best of %d %dx%dx%d SGEMMs or of the GEMMs profiled)", (long long)r->ncalls,
         r->ncalls == 1 ? "" : "s", r->top_us * 1e-3, r->peak_gflops,
         mf_parallel_threads(), mf_parallel_threads() == 1 ? "" : "s", PEAK_RUNS,
         PEAK_N, PEAK_N, PEAK_N);
    add_collectives(&t, r);
    return text_done(&t);
}

static void add_gemm_line(Text *t, const MfProfReport *r, const MfProfEvent *e, int w)
{
    char bb[32];
    const char *op = e->op ? e->op : "?";
    if (e->kind == MF_PROF_STEP) {
        addf(t, "%-*s %-7s%30s %10.4f%18s %9sB\n", w, op, e->name, "", e->dur_us * 1e-3, "",
             si(bb, sizeof bb, e->bytes));
        return;
    }
    addf(t, "%-*s %-7s %7lld %7lld %7lld   %c %c %10.4f", w, op,
         e->algorithm ? e->algorithm : "GEMM", (long long)e->M,
         (long long)e->N, (long long)e->K, e->trans_a ? 'T' : 'N', e->trans_b ? 'T' : 'N',
         e->dur_us * 1e-3);
    double g = mf_prof_gflops(e->flops, e->dur_us);
    addf(t, " %9.2f", g);
    if (r->peak_gflops > 0)
        addf(t, " %6.1f%%", mf_prof_peak_pct(g, r->peak_gflops));
    else
        addf(t, " %7s", "-");
    addf(t, " %9sB\n", si(bb, sizeof bb, e->bytes));
}

static char *gemm_table(const MfProfReport *r)
{
    Text t = {NULL, 0, 0, true};
    int w = name_width(r, 12, false);
    addf(&t, "%-*s %-7s %7s %7s %7s %5s %10s %9s %7s %10s\n", w, "op", "what", "M", "N", "K",
         "trans", "ms", "GFLOP/s", "% peak", "bytes");
    int64_t ngemms = 0, nsteps = 0, ndirect = 0;
    for (int64_t i = 0; i < r->nevents; i++) {
        if (r->events[i].kind == MF_PROF_OP)
            continue;
        add_gemm_line(&t, r, &r->events[i], w);
        *(r->events[i].kind == MF_PROF_GEMM ? &ngemms : &nsteps) += 1;
        ndirect += r->events[i].kind == MF_PROF_STEP && strcmp(r->events[i].name, "direct") == 0;
    }
    addf(&t, "%lld GEMM%s, %lld step%s", (long long)ngemms, ngemms == 1 ? "" : "s",
         (long long)nsteps, nsteps == 1 ? "" : "s");
    if (ndirect > 0)   /* why a convolution shows no GEMM */
        addf(&t, "\n%lld convolution%s ran the direct kernel, which computes without GEMMs "
             "(conv_algorithm \"auto\" picks it for few input channels, e.g. RGB's 3; "
             "mf.config{conv_algorithm = \"im2col\"} makes it GEMMs)", (long long)ndirect,
             ndirect == 1 ? "" : "s");
    return text_done(&t);
}

/* The tables' numbers take '.' whatever the C locale is (clocale.h). */
char *mf_prof_report_table(const MfProfReport *r)
{
    MfCLocale loc = mf_c_locale_begin();
    char *s = report_table(r);
    mf_c_locale_end(loc);
    return s;
}

char *mf_prof_gemm_table(const MfProfReport *r)
{
    MfCLocale loc = mf_c_locale_begin();
    char *s = gemm_table(r);
    mf_c_locale_end(loc);
    return s;
}
