/* profile.c — the event buffer behind the profiler hooks (see profile.h).
 *
 * Events are appended when a span ends; a span's depth is the number of
 * spans open when it began, so an op's im2col and GEMMs (which end first)
 * carry depth 1 and the op itself depth 0. Names that are not static (node
 * names) are interned: copied once into a table that lives as long as the
 * process, so events and reports can keep plain pointers, and two events
 * with the same name share one pointer. */
#include "profile.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int mf_prof_on;

static MfProfEvent *events;
static int64_t nevents, capevents;
static int open_spans;
static const char *pending_node;

/* The intern table: open addressing over owned copies. */
static char **interned;
static size_t ninterned, capinterned;

double mf_prof_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool intern_grow(void)
{
    size_t cap = capinterned ? 2 * capinterned : 64;
    char **t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < capinterned; i++) {
        if (!interned[i])
            continue;
        size_t j = hash_str(interned[i]) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = interned[i];
    }
    free(interned);
    interned = t;
    capinterned = cap;
    return true;
}

/* The one stored copy of 's' (NULL when out of memory). */
static const char *intern(const char *s)
{
    if (2 * (ninterned + 1) > capinterned && !intern_grow())
        return NULL;
    size_t j = hash_str(s) & (capinterned - 1);
    for (; interned[j]; j = (j + 1) & (capinterned - 1))
        if (strcmp(interned[j], s) == 0)
            return interned[j];
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    interned[j] = copy;
    ninterned++;
    return copy;
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
    if (open_spans > 0)
        open_spans--;
    if (!mf_prof_on || !name)
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
    if (!s->on) /* interning is for recorded events only */
        return;
    const char *n = intern(name);
    MfProfEvent *e = append(s, MF_PROF_OP, n);
    if (e) {
        e->op = n;
        e->label = n;
        e->flops = flops;
        e->bytes = bytes;
    }
}

/* The algorithm the running op's kernel chose, for the next op event. */
static const char *algorithm_note;

void mf_prof_note_algorithm(const char *algorithm)
{
    if (mf_prof_on)
        algorithm_note = algorithm;
}

/* The FLOPs of the GEMMs that event 'e' (just appended) ran: the events
 * before it with a greater depth are its children. */
static double child_gemm_flops(const MfProfEvent *e)
{
    double flops = 0;
    for (const MfProfEvent *c = e - 1; c >= events && c->depth > e->depth; c--)
        if (c->kind == MF_PROF_GEMM)
            flops += c->flops;
    return flops;
}

void mf_prof_end_op_call(MfProfSpan *s, const char *node, const char *op, const char *label,
                         double flops, double bytes)
{
    const char *note = algorithm_note;
    algorithm_note = NULL;
    if (!s->on)
        return;
    char noted[256];
    if (note) {
        snprintf(noted, sizeof noted, "%s (%s)", label ? label : op, note);
        label = noted;
    }
    const char *l = label && strcmp(label, op) != 0 ? intern(label) : NULL;
    if (!l)   /* no attributes shown, or out of memory: the op's name */
        l = op;
    MfProfEvent *e = append(s, MF_PROF_OP, node ? intern(node) : l);
    if (e) {
        e->op = op;
        e->label = l;
        e->flops = flops;
        e->bytes = bytes;
        /* An algorithm that does less arithmetic than the op's formula
         * (Winograd: 36 products per 16 outputs where the direct sum takes
         * 144) counts what it ran, so its rate is a real one, at most the
         * peak, not 4x it. */
        double ran = note ? child_gemm_flops(e) : 0;
        if (ran > 0 && ran < flops)
            e->flops = ran;
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
    e->algorithm = g->algorithm;
    e->flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
    e->bytes = (double)((g->M * g->K + g->K * g->N + g->M * g->N) *
                        (int64_t)mf_dtype_size(g->dtype));
}

void mf_prof_add_gemm(const MfGemm *g, double start_us, double dur_us)
{
    MfProfSpan s;
    mf_prof_begin(&s);
    s.t0 = start_us;
    int64_t before = nevents;
    mf_prof_end_gemm(&s, g);
    if (nevents > before)
        events[nevents - 1].dur_us = dur_us;
}

void mf_prof_add_step(const char *op, const char *step, double bytes, double start_us,
                      double dur_us)
{
    MfProfSpan s;
    mf_prof_begin(&s);
    s.t0 = start_us;
    int64_t before = nevents;
    mf_prof_end_step(&s, op, step, bytes);
    if (nevents > before)
        events[nevents - 1].dur_us = dur_us;
}

void mf_prof_end_step(MfProfSpan *s, const char *op, const char *step, double bytes)
{
    MfProfEvent *e = append(s, MF_PROF_STEP, step);
    if (e) {
        e->op = op;
        e->bytes = bytes;
    }
}

void mf_prof_set_node(const char *name)
{
    pending_node = name;
}

const char *mf_prof_take_node(void)
{
    const char *n = pending_node;
    pending_node = NULL;
    return n;
}

void mf_prof_start(void)
{
    nevents = 0;
    open_spans = 0;
    pending_node = NULL;
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
