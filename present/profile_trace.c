/* profile_trace.c — the profiler's Chrome trace-event JSON writer (see profile_report.h).
 *
 * Every event becomes one complete event ("ph": "X") on one thread, so a
 * viewer (Perfetto, chrome://tracing) nests them by their time ranges: the
 * op, with its im2col, GEMMs and col2im inside. Events are written parents
 * first (ordered by start, then depth). Times are microseconds from the
 * first event. The file is written through core/io/write_file.h's safe
 * path (a unique temporary file renamed over 'path'), so a reader never
 * sees half a trace. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile_report.h"
#include "core/clocale.h"
#include "core/io/write_file.h"

/* The length of the well-formed UTF-8 sequence at 'p' (1 to 4), or 0 when
 * it is not one (a stray continuation byte, an overlong or cut sequence). */
static int utf8_len(const unsigned char *p)
{
    int n = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : p[0] >= 0xE0 && p[0] < 0xF0 ? 3
          : p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) /* also stops at the NUL */
            return 0;
    if ((n == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (n == 4 && p[0] == 0xF0 && p[1] < 0x90) ||
        (n == 4 && p[0] == 0xF4 && p[1] >= 0x90) || (n == 3 && p[0] == 0xED && p[1] >= 0xA0))
        return 0; /* overlong, beyond U+10FFFF, or a surrogate */
    return n;
}

/* Writes 's' as a JSON string. JSON text must be UTF-8, and node names come
 * from Lua strings that may hold any bytes (a name_scope of Latin-1 text):
 * a byte that does not start a valid sequence becomes U+FFFD, or the whole
 * file would be refused by the viewer and by Python's json module. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (n == 0)
            fputs("\\ufffd", f);
        else if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

/* Microseconds as integer nanoseconds. Start and end are rounded, and the
 * duration is their difference, so a child (GEMM in its op) that ends when
 * its parent ends cannot come out 0.001 us past it: the trace viewer nests
 * complete events by their ranges and flags improperly nested ones. */
static long long to_ns(double us)
{
    return us > 0 ? llround(us * 1000) : 0;
}

static const char *category(MfProfKind k)
{
    return k == MF_PROF_OP ? "op" : k == MF_PROF_GEMM ? "gemm" : "step";
}

static void put_args(FILE *f, const MfProfEvent *e)
{
    fputs("\"args\": {\"op\": ", f);
    put_string(f, e->op ? e->op : e->name);
    /* with its non-default attributes, as listings show it */
    if (e->kind == MF_PROF_OP && e->label && e->op && strcmp(e->label, e->op) != 0) {
        fputs(", \"label\": ", f);
        put_string(f, e->label);
    }
    if (e->kind == MF_PROF_GEMM)
        fprintf(f, ", \"M\": %lld, \"N\": %lld, \"K\": %lld, \"trans_a\": %s, \"trans_b\": %s",
                (long long)e->M, (long long)e->N, (long long)e->K,
                e->trans_a ? "true" : "false", e->trans_b ? "true" : "false");
    if (e->kind != MF_PROF_STEP)
        fprintf(f, ", \"flops\": %.17g, \"gflops\": %.3f", e->flops,
                mf_prof_gflops(e->flops, e->dur_us));
    fprintf(f, ", \"bytes\": %.17g, \"depth\": %d}", e->bytes, e->depth);
}

static void put_event(FILE *f, const MfProfEvent *e, double origin)
{
    fputs("{\"name\": ", f);
    if (e->kind == MF_PROF_GEMM) {
        char name[96];
        snprintf(name, sizeof name, "GEMM %lldx%lldx%lld", (long long)e->M, (long long)e->N,
                 (long long)e->K);
        put_string(f, name);
    } else {
        put_string(f, e->name);
    }
    long long ts = to_ns(e->start_us - origin), end = to_ns(e->start_us - origin + e->dur_us);
    long long dur = end > ts ? end - ts : 0;
    fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %lld.%03lld, \"dur\": %lld.%03lld, "
            "\"pid\": 1, \"tid\": 1, ", category(e->kind), ts / 1000, ts % 1000, dur / 1000,
            dur % 1000);
    put_args(f, e);
    fputc('}', f);
}

static void put_trace(FILE *f, const MfProfReport *r)
{
    double origin = r->nevents > 0 ? r->events[0].start_us : 0;
    fputs("{\"traceEvents\": [\n"
          "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
          "\"args\": {\"name\": \"moonflow\"}}", f);
    for (int64_t i = 0; i < r->nevents; i++) {
        fputs(",\n", f);
        put_event(f, &r->events[i], origin);
    }
    fprintf(f, "\n],\n\"displayTimeUnit\": \"ms\",\n"
            "\"otherData\": {\"peak_gflops\": %.3f}}\n", r->peak_gflops);
}

MfStatus mf_prof_save_trace(const MfProfReport *r, const char *path)
{
    MfSafeWrite w;
    MfStatus st = mf_safe_write_begin(&w, "save_trace", path);
    if (st != MF_OK)
        return st;
    MfCLocale loc = mf_c_locale_begin();   /* JSON numbers take '.' in every locale */
    put_trace(w.f, r);
    mf_c_locale_end(loc);
    return mf_safe_write_commit(&w);   /* a failed write is the FILE's error flag */
}
