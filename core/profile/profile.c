/* profile.c — the event buffer behind the profiler hooks (see profile.h).
 *
 * Events are appended when a span ends; a span's depth is the number of
 * spans open when it began, so an op's im2col and GEMMs (which end first)
 * carry depth 1 and the op itself depth 0. */
#include "profile.h"

#include <stdlib.h>
#include <time.h>

int mf_prof_on;

static MfProfEvent *events;
static int64_t nevents, capevents;
static int open_spans;

double mf_prof_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

void mf_prof_begin(MfProfSpan *s)
{
    s->on = mf_prof_on;
    if (!s->on)
        return;
    open_spans++;
    s->t0 = mf_prof_now_us();
}

/* A new event for span 's', or NULL (profiling off, or out of memory: the
 * profiler then drops events rather than failing the op it measures). */
static MfProfEvent *append(MfProfSpan *s, MfProfKind kind, const char *name)
{
    if (!s->on)
        return NULL;
    double end = mf_prof_now_us();
    open_spans--;
    if (!mf_prof_on)
        return NULL;
    if (nevents == capevents) {
        int64_t cap = capevents ? 2 * capevents : 1024;
        MfProfEvent *e = realloc(events, (size_t)cap * sizeof *e);
        if (!e)
            return NULL;
        events = e;
        capevents = cap;
    }
    MfProfEvent *e = &events[nevents++];
    *e = (MfProfEvent){.kind = kind, .name = name, .start_us = s->t0,
                       .dur_us = end - s->t0, .depth = open_spans};
    return e;
}

void mf_prof_end_op(MfProfSpan *s, const char *name, double flops, double bytes)
{
    MfProfEvent *e = append(s, MF_PROF_OP, name);
    if (e) {
        e->flops = flops;
        e->bytes = bytes;
    }
}

void mf_prof_end_gemm(MfProfSpan *s, const MfGemm *g)
{
    MfProfEvent *e = append(s, MF_PROF_GEMM, "GEMM");
    if (!e)
        return;
    e->op = g->op;
    e->M = g->M;
    e->N = g->N;
    e->K = g->K;
    e->trans_a = g->trans_a;
    e->trans_b = g->trans_b;
    e->flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
    e->bytes = (double)((g->M * g->K + g->K * g->N + g->M * g->N) *
                        (int64_t)mf_dtype_size(g->dtype));
}

void mf_prof_end_step(MfProfSpan *s, const char *op, const char *step, double bytes)
{
    MfProfEvent *e = append(s, MF_PROF_STEP, step);
    if (e) {
        e->op = op;
        e->bytes = bytes;
    }
}

void mf_prof_start(void)
{
    nevents = 0;
    open_spans = 0;
    mf_prof_on = 1;
}

void mf_prof_stop(void)
{
    mf_prof_on = 0;
}

const MfProfEvent *mf_prof_events(int64_t *n)
{
    *n = nevents;
    return events;
}
