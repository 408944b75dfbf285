/* profile.h — the profiler's event buffer.
 *
 * Off (the default), every hook is one branch on 'mf_prof_on'. On, each
 * span appends an event (category, name, start, duration, FLOPs, bytes,
 * GEMM sizes) to a growing buffer; nesting depth is kept so the trace writer
 * can nest im2col / GEMM / col2im inside their op. Reports and the trace
 * writer read the buffer (profile/report.c, profile/trace.c). */
#ifndef MF_PROFILE_H
#define MF_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "../gemm.h"

typedef enum MfProfKind {
    MF_PROF_OP,      /* one op call (eager) or node run (graph) */
    MF_PROF_GEMM,    /* one BLAS GEMM */
    MF_PROF_STEP     /* a named step inside an op: "im2col", "col2im" */
} MfProfKind;

typedef struct MfProfEvent {
    MfProfKind kind;
    const char *name;     /* op name ("Conv2D"), node name, or step name; static or interned */
    const char *op;       /* for GEMMs and steps: the calling op */
    double start_us, dur_us;
    double flops, bytes;
    int64_t M, N, K;
    bool trans_a, trans_b;
    int depth;            /* 0 for top-level op events */
} MfProfEvent;

typedef struct MfProfSpan {
    double t0;
    bool on;
} MfProfSpan;

extern int mf_prof_on;

/* Starts a span (records the time when profiling is on). */
void mf_prof_begin(MfProfSpan *s);

/* Ends spans: an op (name, FLOPs, bytes), a GEMM, a step (with bytes moved). */
void mf_prof_end_op(MfProfSpan *s, const char *name, double flops, double bytes);
void mf_prof_end_gemm(MfProfSpan *s, const MfGemm *g);
void mf_prof_end_step(MfProfSpan *s, const char *op, const char *step, double bytes);

/* Microseconds on a monotonic clock. */
double mf_prof_now_us(void);

/* Starts collecting (clears the buffer) / stops. */
void mf_prof_start(void);
void mf_prof_stop(void);

/* The events collected (borrowed; valid until the next start). */
const MfProfEvent *mf_prof_events(int64_t *n);

#endif
