/* trace.c — the profiler's Chrome trace-event JSON writer (see report.h).
 *
 * Every event becomes one complete event ("ph": "X") on one thread, so a
 * viewer (Perfetto, chrome://tracing) nests them by their time ranges: the
 * op, with its im2col, GEMMs and col2im inside. Events are written parents
 * first (ordered by start, then depth). Times are microseconds from the
 * first event. The file is written to "<path>.tmp.<pid>" and renamed over
 * 'path', so a reader never sees half a trace. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* Writes 's' as a JSON string. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static const char *category(MfProfKind k)
{
    return k == MF_PROF_OP ? "op" : k == MF_PROF_GEMM ? "gemm" : "step";
}

static void put_args(FILE *f, const MfProfEvent *e)
{
    fputs("\"args\": {\"op\": ", f);
    put_string(f, e->op ? e->op : e->name);
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
    fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
            "\"pid\": 1, \"tid\": 1, ", category(e->kind), e->start_us - origin, e->dur_us);
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
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return mf_err_set(MF_EIO, "save_trace: cannot write '%s': path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return mf_err_set(MF_EIO, "save_trace: cannot write '%s': %s", path, strerror(errno));
    put_trace(f, r);
    int failed = ferror(f);
    int err = errno;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (!failed && rename(tmp, path) != 0) {
        failed = 1;
        err = errno;
    }
    if (failed) {
        remove(tmp);
        return mf_err_set(MF_EIO, "save_trace: cannot write '%s': %s", path,
                          err ? strerror(err) : "write error");
    }
    return MF_OK;
}
