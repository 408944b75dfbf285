/* eager.h — the gradient tape (eager autodiff), the public header of eager/.
 *
 * A tape records the eager ops that depend on the tensors it watches: while
 * at least one tape records, the tape module registers an MfRecorder with the
 * dispatcher ('mf_op_set_recorder'); with no tape recording, none is
 * registered and eager ops cost nothing extra. An op is written on a tape
 * when one of its inputs is watched by it or was produced by an op it
 * recorded. 'mf_tape_gradient' walks the records backwards and calls each op's
 * gradient ('mf_grad_call'); the tape computing is paused meanwhile, but other
 * recording tapes write those gradient ops down: higher-order gradients.
 *
 * Trainable Variables read while a tape with 'watch_accessed_variables'
 * records are watched through the variable read hook (core/variable.h).
 *
 * Ownership: a tape is refcounted; it retains the inputs and outputs of its
 * records and releases them when it is freed, or after the 'gradient' of a
 * non-persistent tape. Every function returning a tensor hands over a
 * reference. */
#ifndef MF_EAGER_H
#define MF_EAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"
#include "core/op.h"
#include "core/variable.h"

typedef struct MfTape MfTape;

/* A new tape, recording at once. Returns an owned reference, or NULL with
 * MF_ENOMEM's message set. */
MfTape *mf_tape_new(bool persistent, bool watch_accessed_variables);

/* Takes a reference (a gradient walk holds one: a custom gradient it runs
 * may drop the caller's). */
void mf_tape_retain(MfTape *t);

/* Drops a reference; the last one stops the tape and frees its records. */
void mf_tape_release(MfTape *t);

/* Stops recording for good (later ops are not written). */
void mf_tape_stop(MfTape *t);

/* True while the tape records. */
bool mf_tape_recording(const MfTape *t);

bool mf_tape_persistent(const MfTape *t);

/* Watches 'x' (float dtypes only; watching an integer tensor is a no-op, as
 * in TensorFlow). MF_ENOMEM on failure. */
MfStatus mf_tape_watch(MfTape *t, MfTensor *x);

/* Watches a variable: its current value now and its values read later. */
MfStatus mf_tape_watch_variable(MfTape *t, MfVariable *v);

/* A source of 'gradient': a tensor, or (when 'variable' is set) a Variable,
 * whose gradient is that of every value read from it on this tape. */
typedef struct MfTapeSource {
    MfTensor *tensor;
    MfVariable *variable;
} MfTapeSource;

/* Watches each of the 'n' sources. MF_ENOMEM on failure. */
MfStatus mf_tape_watch_sources(MfTape *t, int n, const MfTapeSource *src);

/* mf.grad's rule for its results: an integer or bool source (labels,
 * indices) has no gradient, whatever a tape or graph gave for it; its entry
 * of 'grads' is released and set to NULL (nil, as tape:gradient gives). */
void mf_tape_drop_integer_grads(int n, const MfTapeSource *src, MfTensor **grads);

/* d(sum of target * output_gradient)/d(source) for each source, into
 * 'grads[0..nsources)' (owned; NULL where unconnected unless
 * 'unconnected_zero', then zeros shaped like the source).
 * 'output_gradient' NULL means ones (a non-scalar target sums). Errors:
 * MF_EARG for a non-persistent tape asked twice or a badly shaped
 * 'output_gradient'; any error of a gradient function. On error 'grads'
 * holds NULLs. A non-persistent tape stops and releases its records. */
MfStatus mf_tape_gradient(MfTape *t, MfTensor *target, int nsources,
                          const MfTapeSource *sources, MfTensor *output_gradient,
                          bool unconnected_zero, MfTensor **grads);

/* Hooks into the backward walk, for work that can start before it ends
 * (DistributedOptimizer's allreduce, as PyTorch DDP's bucket hooks):
 * 'ready' is called once per source, as soon as the walk has passed the
 * first record reading it, so its gradient is final ('grad' borrowed: the
 * one that will be in 'grads[source]', NULL when none reaches it); sources
 * no record reads come last, in order. 'between' (may be NULL) runs after
 * each record but the last (so work started there has a record to overlap
 * with). An error from either ends the walk with it. */
typedef struct MfTapeHooks {
    MfStatus (*ready)(void *ctx, int source, MfTensor *grad);
    MfStatus (*between)(void *ctx);
    void *ctx;
} MfTapeHooks;

/* mf_tape_gradient (ones as the output gradient, NULL where unconnected)
 * with 'hooks' called during the walk. */
MfStatus mf_tape_gradient_hooked(MfTape *t, MfTensor *target, int nsources,
                                 const MfTapeSource *sources, const MfTapeHooks *hooks,
                                 MfTensor **grads);

/* Notes that the value of 'x' went to Lua as numbers (t:item(), t:totable())
 * on every recording tape that knows 'x', so 'mf_tape_explain' can say that
 * a tensor rebuilt from those numbers starts a new history. */
void mf_tape_note_export(const MfTensor *x);

/* The same for several targets: their gradients add up (TensorFlow's
 * gradient of a list of targets). 'output_gradients' (may be NULL) holds
 * one seed or NULL per target. A target that is also a source gets its own
 * seed as gradient (d y / d y = 1). */
MfStatus mf_tape_gradients(MfTape *t, int ntargets, MfTensor *const *targets, int nsources,
                           const MfTapeSource *sources, MfTensor *const *output_gradients,
                           bool unconnected_zero, MfTensor **grads);

/* TensorFlow's tape.jacobian: d target[i...] / d source[j...] with shape
 * target.shape ++ source.shape (one backward walk per target element);
 * NULL when unconnected unless 'unconnected_zero'. batch_jacobian: target
 * and source share their first (batch) dimension B, rows of the batch are
 * independent, the result is (B, target.shape[2..], source.shape[2..]).
 * Errors as mf_tape_gradient's (named "jacobian: gradient: ..."), a result
 * rank above MF_MAX_RANK, and a symbolic target (a tape inside mf.trace
 * records nothing: mode/'s mf_tape_window_jacobians answers there). */
MfStatus mf_tape_jacobian(MfTape *t, MfTensor *target, const MfTapeSource *source,
                          bool unconnected_zero, MfTensor **out);
MfStatus mf_tape_batch_jacobian(MfTape *t, MfTensor *target, const MfTapeSource *source,
                                bool unconnected_zero, MfTensor **out);
/* jacobian for each of 'n' sources (TensorFlow's tape.jacobian(y, [x1, x2])),
 * into 'outs[0..n)': a non-persistent tape answers once, for all of them. */
MfStatus mf_tape_jacobians(MfTape *t, MfTensor *target, int n, const MfTapeSource *sources,
                           bool unconnected_zero, MfTensor **outs);

/* One row of a Jacobian: the gradient of 'target' weighted by 'seed' (a
 * concrete tensor shaped like it) for 'source'; '*row' owned, NULL where
 * unconnected. */
typedef struct MfJacobianRows {
    MfStatus (*row)(void *self, MfTensor *target, MfTensor *seed, const MfTapeSource *source,
                    MfTensor **row);
    void *self;
} MfJacobianRows;

/* mf_tape_jacobians ('batch': mf_tape_batch_jacobian of sources[0]) with
 * each row from 'by' (NULL: the tape's records), a symbolic target's too:
 * the seeds, checks, shapes and stacking stay here. */
MfStatus mf_tape_jacobians_by(MfTape *t, MfTensor *target, int n, const MfTapeSource *sources,
                              bool unconnected_zero, bool batch, const MfJacobianRows *by,
                              MfTensor **outs);

/* tape:stop_recording(fn): ops while paused (nests) are not recorded by 't'. */
void mf_tape_pause(MfTape *t);
void mf_tape_unpause(MfTape *t);

/* tape:reset(): forgets the records and watches; a stopped non-persistent
 * tape may be asked again after recording anew. */
void mf_tape_reset(MfTape *t);

/* Writes into 'buf' (NUL-terminated, truncated to 'cap') why the gradient of
 * 'target' with respect to 'source' is or is not connected on this tape: the
 * source is not watched, a stop_gradient or a non-differentiable op (named)
 * cut the path, the source was never used for the target, or the tape was
 * stopped before the target was computed. */
void mf_tape_explain(const MfTape *t, const MfTensor *target, const MfTapeSource *source,
                     char *buf, size_t cap);

/* A gradient written by the user (custom_gradient): recorded like an op,
 * its 'backward' receives the output gradients (zeros where unconnected)
 * and writes owned input gradients (NULL: none). Refcounted: each tape
 * that records it holds a reference; 'free' runs when the last goes. */
typedef struct MfTapeFunction MfTapeFunction;
struct MfTapeFunction {
    int64_t refcount;
    const char *name;
    MfStatus (*backward)(MfTapeFunction *f, int noutputs, MfTensor *const *doutputs,
                         int ninputs, MfTensor *const *inputs, MfTensor **dinputs);
    void (*free)(MfTapeFunction *f);
};

void mf_tape_function_release(MfTapeFunction *f);

/* Records 'f' with its inputs and outputs (at most MF_MAX_OUTPUTS) on every
 * recording tape that watches an input. MF_ENOMEM on failure. */
MfStatus mf_tape_record_function(MfTapeFunction *f, int ninputs, MfTensor *const *inputs,
                                 int noutputs, MfTensor *const *outputs);

/* Suspends recording on every tape (nests); 'resume' undoes one suspend.
 * custom_gradient makes the Identity its function is recorded on suspended. */
void mf_tape_suspend(void);
void mf_tape_resume(void);

/* custom_gradient's check, as TensorFlow's: a gradient function gives
 * gradients for f's inputs only, so a trainable Variable that f reads (not
 * passed as an input) while a tape records would silently get none.
 * 'begin' (nests) starts noting such reads and returns a mark; 'end' stops
 * and returns the first variable read since 'mark' that is not among the
 * 'n' variables 'inputs', as an owned reference (NULL when none). */
int mf_tape_custom_begin(void);
MfVariable *mf_tape_custom_end(int mark, int n, MfVariable *const *inputs);
/* The same, giving every such variable (at most 'cap', owned references,
 * in the order read): TensorFlow passes them to the gradient function as
 * 'variables'. Returns how many. */
int mf_tape_custom_end_all(int mark, int n, MfVariable *const *inputs, MfVariable **out,
                           int cap);

/* True when some tape records now (and recording is not suspended). */
bool mf_tape_any_recording(void);

/* One record, for printing: the op's name (TensorFlow's, or the custom
 * function's) and its tensors (borrowed, valid while the tape lives). */
typedef struct MfTapeEntry {
    const char *name;
    int ninputs, noutputs;
    MfTensor *const *inputs;
    MfTensor *const *outputs;
    bool custom;               /* a custom_gradient function's record */
    const char *gradient;      /* a registered gradient replacing the op's, or NULL */
    char attrs[96];            /* non-default attributes as listings show them, or "" */
} MfTapeEntry;

/* Writes how the tape's listing names 'x' into 'buf': "t3" for the output
 * of record 3 ("t3:2" for its second of several), a Variable's name for a
 * read of it, "watched" for a tensor watched with tape:watch, the value of
 * a one-element constant, else "const". */
void mf_tape_label(const MfTape *t, const MfTensor *x, char *buf, size_t cap);

/* The variables watched on this tape (read while it recorded, or watched
 * with mf_tape_watch_variable), in creation order (TensorFlow's order of
 * first use is not kept) when all fit: writes up to 'cap' borrowed
 * pointers (valid until the tape's records are released: after a
 * non-persistent tape's 'gradient', or when it is freed) and returns how
 * many there are. */
int64_t mf_tape_variables(const MfTape *t, MfVariable **out, int64_t cap);

/* Number of records, and record 'k' (0-based, k < count). */
int64_t mf_tape_count(const MfTape *t);
MfTapeEntry mf_tape_entry(const MfTape *t, int64_t k);

/* Appends what print(tape) shows to 'out' (core/strbuf.h; the caller frees
 * it): "<GradientTape persistent, recording, 2 records>", then one line per
 * record, "    1  t1 = Sum[axis=2](w)   (2,3) -> (2,)", inputs named as
 * mf_tape_label names them, "[custom_gradient]" / "[gradient: name]" marks.
 * MF_OK, or MF_ENOMEM with a message (the text is then incomplete). */
MfStatus mf_tape_listing(const MfTape *t, MfStrBuf *out);

/* Live tapes (tests assert 0 at teardown). */
int64_t mf_tape_live_count(void);

/* ---- gradcheck (eager/gradcheck.c) ------------------------------------------------
 * The one gradient check, shared by the op-table walk of the C tests and
 * mf.test.gradcheck: the gradient a tape computes (each op's 'backward')
 * against central finite differences in float64. The objective is
 * L(x) = sum over outputs k of sum(w_k * y_k) (w_k ones without weights);
 * element j of float64 input i passes when
 *   |analytic - numeric| <= atol + rtol * |numeric|,
 *   numeric = (L(x + eps e_j) - L(x - eps e_j)) / (2 eps). */

#define MF_GRADCHECK_MAX_OUTPUTS 16

/* The function under check: from the 'n' inputs, writes its outputs to
 * 'outs' (owned; NULL entries allowed: no contribution) and their count
 * (at most MF_GRADCHECK_MAX_OUTPUTS) to '*nout'. Called once under a tape,
 * then twice per checked element; an error status stops the check. */
typedef MfStatus (*MfGradcheckFn)(void *ctx, int n, MfTensor *const *inputs, int *nout,
                                  MfTensor **outs);

/* A failed element: input 'input' (0-based), flat row-major 'index', its
 * value 'x', the two derivatives. */
typedef struct MfGradcheckMismatch {
    int input;
    int64_t index;
    double x, analytic, numeric;
} MfGradcheckMismatch;

typedef struct MfGradcheckOptions {
    double eps, atol, rtol;
    /* one per output, MF_GRADCHECK_MAX_OUTPUTS entries, NULL entry: that
     * output is left out; NULL array: every output with weights of ones */
    MfTensor *const *weights;
    /* called for each mismatch (may be NULL) */
    void (*report)(void *ctx, const MfGradcheckMismatch *m);
    void *report_ctx;
    int stop_after;        /* stop at this many mismatches; 0: check every element */
} MfGradcheckOptions;

/* mf.test.gradcheck's defaults: eps 1e-6, atol 1e-5, rtol 1e-3, every
 * output, stop at the first mismatch. */
MfGradcheckOptions mf_gradcheck_defaults(void);

/* Checks 'f' at 'inputs': the contiguous float64 ones are watched and
 * perturbed in place (restored after), the others passed as they are and
 * not checked. '*nbad' = the mismatches found (reported through 'report').
 * Errors: f's, the tape's, a non-contiguous float64 input, a symbolic
 * (graph) output ("gradcheck: f returned a symbolic (graph) tensor ..."). */
/* The mismatch as mf.test.gradcheck reports it, into 'buf': "gradcheck:
 * input 1, index {2,1}: analytic 0.5, numeric 0.25, difference 0.25", the
 * input and index 1-based; 'x' is that input. Returns 'buf'. */
const char *mf_gradcheck_message(const MfGradcheckMismatch *m, const MfTensor *x, char *buf,
                                 size_t cap);

/* A float64 contiguous copy of 't' (values read now), as the check wants
 * its inputs (it perturbs them in place). NULL with MF_EARG "gradcheck: an
 * input is a symbolic (graph) tensor ..." or MF_ENOMEM. */
MfTensor *mf_gradcheck_input(const MfTensor *t);

MfStatus mf_gradcheck(MfGradcheckFn f, void *ctx, int n, MfTensor *const *inputs,
                      const MfGradcheckOptions *o, int *nbad);

#endif
