/* profile.h — the profiler's event buffer.
 *
 * Off (the default), every hook is one branch on 'mf_prof_on'. On, each
 * span appends an event (category, name, start, duration, FLOPs, bytes,
 * GEMM sizes) to a growing buffer; nesting depth is kept so the trace writer
 * can nest im2col / GEMM / col2im inside their op. Reports and the trace
 * writer read the buffer (present/profile_report.c, present/profile_trace.c).
 *
 * Who records what:
 *   - the dispatcher (core/op.c) wraps each eager op (infer, allocate,
 *     forward) in an op span named by the op's TensorFlow name;
 *   - mf_gemm (core/gemm.c) wraps every BLAS GEMM;
 *   - kernels wrap their steps ("im2col", "col2im") with mf_prof_end_step.
 *
 * Graph nodes (the hook for the executor): before running a node's kernel
 * the executor calls 'mf_prof_set_node(node_name)'; the next op span that
 * begins takes that name as its row name (the op's TensorFlow name is kept
 * in the event's 'op'), and the name is cleared. An executor that does not
 * go through the dispatcher wraps the node itself:
 *     MfProfSpan s; mf_prof_begin(&s); ...run...; mf_prof_end_op(&s, name, f, b);
 * Names given to the profiler are copied (interned) when recorded, so they
 * may be freed afterwards. */
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
    const char *op;       /* op events: the TF op name; GEMMs and steps: the calling op */
    const char *label;    /* op events: the op with its non-default attributes, as
                           * listings show it ("MatMul[transpose_a]"); interned */
    double start_us, dur_us;
    double flops, bytes;
    int64_t M, N, K;
    bool trans_a, trans_b;
    const char *algorithm; /* GEMMs: MfGemm.algorithm ("winograd"), or NULL */
    int depth;            /* 0 for top-level op events */
} MfProfEvent;

typedef struct MfProfSpan {
    double t0;
    bool on;
} MfProfSpan;

extern int mf_prof_on;

/* Starts a span (records the time when profiling is on). */
void mf_prof_begin(MfProfSpan *s);

/* Ends spans: an op (row name, FLOPs, bytes), a GEMM, a step (with bytes
 * moved). A begun span must always be ended, also on error paths. */
void mf_prof_end_op(MfProfSpan *s, const char *name, double flops, double bytes);
void mf_prof_end_gemm(MfProfSpan *s, const MfGemm *g);
void mf_prof_end_step(MfProfSpan *s, const char *op, const char *step, double bytes);
/* Records a GEMM that ran on a worker thread from 'start_us' for 'dur_us'
 * (timed there with mf_prof_now_us; events are only appended on the
 * calling thread, after the workers are done). */
void mf_prof_add_gemm(const MfGemm *g, double start_us, double dur_us);

/* Called by a kernel that chooses among algorithms (Conv2D's auto): the op
 * event of the running op shows it after its label ("Conv2D[SAME]
 * (winograd)"), so a profile says which algorithm ran. Static string. */
void mf_prof_note_algorithm(const char *algorithm);
/* The same for a step (a kernel's stage: "winograd input") timed on a worker. */
void mf_prof_add_step(const char *op, const char *step, double bytes, double start_us,
                      double dur_us);

/* The op hook of the dispatcher: ends an op span named by the pending node
 * name (see above) or else by 'label', recording 'op' (the TF op name) as
 * the event's op and 'label' (the op with its non-default attributes,
 * mf_op_label: "Conv2D[strides=2, SAME]"; NULL: 'op') as its label. So
 * eager rows are told apart by their attributes, as listings show them,
 * and a graph node's row carries its label. */
void mf_prof_end_op_call(MfProfSpan *s, const char *node, const char *op, const char *label,
                         double flops, double bytes);

/* The graph executor's hook: the name of the node about to run (borrowed
 * until the next call; NULL clears). Costs one store when profiling is off. */
void mf_prof_set_node(const char *name);

/* Takes the pending node name (NULL when none) and clears it. */
const char *mf_prof_take_node(void);

/* Microseconds on a monotonic clock. */
double mf_prof_now_us(void);

/* Starts collecting (clears the buffer) / stops. */
void mf_prof_start(void);
void mf_prof_stop(void);

/* The events collected, in the order they ended (borrowed; valid until the
 * next start). */
const MfProfEvent *mf_prof_events(int64_t *n);

#endif
