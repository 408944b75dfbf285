/* profile_report.h — what the profiler's events add up to: a report with one row
 * per op (eager) or node (graph), the GEMM and step list, the machine's
 * measured GEMM peak, printable tables and the Chrome trace writer
 * (profile_report.c, profile_trace.c; the events are core/profile/). */
#ifndef MF_PRESENT_PROFILE_REPORT_H
#define MF_PRESENT_PROFILE_REPORT_H

#include <stdint.h>

#include "core/err.h"
#include "core/profile/profile.h"

/* One row: every op event of one name. Times in microseconds. 'self_us'
 * is the total minus the op events nested directly inside. */
typedef struct MfProfRow {
    const char *name;     /* op or node name (static or interned) */
    const char *op;       /* the TF op name of the first event of the row */
    const char *label;    /* its op with non-default attributes ("MatMul[transpose_a]") */
    int64_t calls;
    double total_us, self_us;
    double flops, bytes;
} MfProfRow;

typedef struct MfProfReport {
    MfProfEvent *events;  /* a copy of the buffer, ordered by start (parents first) */
    int64_t nevents;
    MfProfRow *rows;      /* sorted by total time, longest first */
    int64_t nrows;
    int64_t ncalls;       /* op events in all */
    double top_us;        /* time of the top-level (depth 0) op events */
    double peak_gflops;   /* mf_prof_peak_gflops() when the report was made */
} MfProfReport;

/* A report of the events collected since the last mf_prof_start (measures
 * the peak the first time). Owned: free with mf_prof_report_free. NULL with
 * MF_ENOMEM pending when out of memory. */
MfProfReport *mf_prof_report_new(void);

void mf_prof_report_free(MfProfReport *r);

/* The single-precision GEMM peak of this machine in GFLOP/s at the current
 * OpenBLAS thread count: the best of a few 1024^3 SGEMMs, measured once per
 * process and thread count (about 0.1 s the first time). 0 when the buffers
 * could not be allocated. */
double mf_prof_peak_gflops(void);

/* GFLOP/s of 'flops' in 'us' microseconds (0 when either is 0), and the
 * percentage of 'peak' it is (0 when the peak is unknown). */
double mf_prof_gflops(double flops, double us);
double mf_prof_peak_pct(double gflops, double peak);

/* A field of a record a face lists (report:rows(), report:gemms()): its key
 * and a number, an integer, a boolean (num != 0) or a string. */
typedef enum MfProfFieldKind {
    MF_PROF_NUMBER, MF_PROF_INTEGER, MF_PROF_BOOL, MF_PROF_STRING
} MfProfFieldKind;
typedef struct MfProfField {
    const char *key;
    MfProfFieldKind kind;
    double num;
    const char *str;      /* borrowed from the report or static */
} MfProfField;
#define MF_PROF_MAX_FIELDS 12

/* The record of row 'row' of 'r' into 'out' (MF_PROF_MAX_FIELDS room):
 * op (the row's name), type (its TF op), label (with attributes), calls,
 * total_ms, self_ms, avg_ms, flops, bytes, gflops, peak_pct. Returns how
 * many fields. */
int mf_prof_row_fields(const MfProfReport *r, const MfProfRow *row, MfProfField *out);

/* The record of GEMM or step event 'e': op (the calling op), ms, bytes, and
 * for a step its name (step); for a GEMM M, N, K, trans_a, trans_b,
 * algorithm (only when not a plain GEMM), flops, gflops, peak_pct. */
int mf_prof_event_fields(const MfProfReport *r, const MfProfEvent *e, MfProfField *out);

/* The report printed as a table: op, calls, total ms, self ms, avg ms,
 * FLOPs, GFLOP/s, % peak, then a total line. Owned (free()); NULL when out
 * of memory. */
char *mf_prof_report_table(const MfProfReport *r);

/* The GEMMs and steps, one line each in time order: calling op, GEMM or
 * step, M, N, K, transposes, ms, GFLOP/s, % peak, bytes. Owned (free()). */
char *mf_prof_gemm_table(const MfProfReport *r);

/* Writes the events as Chrome trace-event JSON ({"traceEvents": [...]},
 * complete "X" events, times in microseconds from the first event) to a
 * temporary file next to 'path', then renames it over 'path'. Fails with
 * MF_EIO ("save_trace: cannot write 'path': reason") and leaves no file. */
MfStatus mf_prof_save_trace(const MfProfReport *r, const char *path);

#endif
