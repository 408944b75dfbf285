/* tape_window.c — a GradientTape inside a graph being built (mf.trace,
 * g:as_default), as in tf.function: the builder takes the ops, so the tape
 * records none; its gradient of a symbolic target is the symbolic gradient
 * over the nodes built while it recorded, [lo, hi) of the graph, its
 * window (all of them when the tape was made before the graph was built;
 * none when it stopped before). See mode.h.
 *
 * The window lives next to the tape (a Lua binding keeps both in its box)
 * and only compares the graph pointer: it does not keep the graph alive.
 * Gradients returned through 'grads' are owned by the caller. */
#include <limits.h>
#include <stdlib.h>

#include "core/grad.h"
#include "graph/gradients.h"
#include "mode.h"

void mf_tape_window_open(MfTapeWindow *w)
{
    *w = (MfTapeWindow){NULL, 0, -1, false};
    MfGraph *g = mf_mode_graph();
    if (g) {
        w->g = g;
        w->lo = mf_graph_nnodes(g);
    }
}

void mf_tape_window_stop(MfTapeWindow *w, MfTape *t)
{
    MfGraph *g = mf_mode_graph();
    if (mf_tape_recording(t) && g) {
        w->g = g;
        w->hi = mf_graph_nnodes(g);
    }
    mf_tape_stop(t);
}

void mf_tape_window_reset(MfTapeWindow *w, MfTape *t)
{
    mf_tape_reset(t);
    w->asked = false;
    MfGraph *g = mf_graph_default();
    if (g && w->g == (const void *)g && mf_tape_recording(t))
        w->lo = mf_graph_nnodes(g);
}

/* True when the tape watched 'v' (read it while recording, or watch(v)). */
static bool tape_watched(MfTape *t, const MfVariable *v, bool *found)
{
    MfVariable *vs[64];
    int64_t n = mf_tape_variables(t, vs, 64);
    MfVariable **all = n > 64 ? malloc((size_t)n * sizeof *all) : vs;
    if (!all)
        return false;
    if (n > 64)
        mf_tape_variables(t, all, n);
    *found = false;
    for (int64_t i = 0; i < n && !*found; i++)
        *found = all[i] == v;
    if (all != vs)
        free(all);
    return true;
}

/* Zeros shaped like the source (run-time shape). */
static MfStatus zeros_for(const MfTapeSource *s, MfTensor **out)
{
    MfTensor *like = s->variable ? mf_variable_read(s->variable) : s->tensor, *z = NULL;
    MfStatus st = mf_grad_const(like, 0.0, &z);
    if (st == MF_OK)
        st = mf_grad_broadcast_like(z, like, out);
    mf_tensor_release(z);
    return st;
}

/* Zeros for the unconnected sources, built into the target's graph 'g'. */
static MfStatus fill_zeros(MfGraph *g, int n, const MfTapeSource *src, MfTensor **grads)
{
    bool pushed = false;
    MfStatus st = MF_OK;
    if (mf_graph_default() != g && (st = mf_graph_push_default(g)) == MF_OK)
        pushed = true;
    for (int i = 0; i < n && st == MF_OK; i++)
        if (!grads[i])
            st = zeros_for(&src[i], &grads[i]);
    if (pushed)
        mf_graph_pop_default();
    return st;
}

/* The sources' gradients over [lo, hi) of the target's graph (watched
 * variables and tensors), zeros where unconnected when asked. */
static MfStatus walk(MfTape *t, int lo, int hi, MfTensor *target, int n,
                     const MfTapeSource *src, MfTensor *og, bool zero, MfTensor **grads)
{
    MfGraph *g = mf_tensor_graph(target);
    MfVariable **vars = malloc(((size_t)n + 1) * sizeof *vars);
    MfTensor **ts = malloc(((size_t)n + 1) * sizeof *ts);
    MfStatus st = vars && ts ? MF_OK : mf_err_nomem("gradient", 2 * ((size_t)n + 1) * sizeof *ts);
    for (int i = 0; i < n && st == MF_OK; i++) {
        /* a variable the tape did not watch stays unconnected, as in eager mode */
        bool watched = false;
        if (src[i].variable && !tape_watched(t, src[i].variable, &watched))
            st = mf_err_nomem("gradient", sizeof *vars);
        vars[i] = watched ? src[i].variable : NULL;
        ts[i] = src[i].variable ? NULL : src[i].tensor;
    }
    if (st == MF_OK)
        st = mf_graph_gradients_sources(g, target, og, lo, hi, n, vars, ts, grads);
    if (st == MF_OK && zero)
        st = fill_zeros(g, n, src, grads);
    free(vars);
    free(ts);
    return st;
}

/* The nodes of the target's graph whose ops pass gradients: the tape's
 * window when the target is of the window's graph, else the whole graph. */
static void window_bounds(const MfTapeWindow *w, MfTape *t, const MfTensor *target, int *lo,
                          int *hi)
{
    bool mine = w->g == (const void *)mf_tensor_graph(target);
    *lo = mine ? w->lo : 0;
    *hi = mine && w->hi >= 0 ? w->hi : mf_tape_recording(t) ? INT_MAX : *lo;
}

static MfStatus check_asked(const MfTapeWindow *w)
{
    return w->asked ? mf_err_set(MF_EARG, "gradient: a non-persistent GradientTape can only be "
                                 "used once; create it with {persistent = true}")
                    : MF_OK;
}

/* A question answered: a non-persistent tape answers no more. */
static void answered(MfTapeWindow *w, MfTape *t)
{
    if (!mf_tape_persistent(t)) {
        w->asked = true;
        mf_tape_stop(t);
    }
}

/* One symbolic target: the walk over the tape's window. */
static MfStatus window_gradient(MfTapeWindow *w, MfTape *t, MfTensor *target, int n,
                                const MfTapeSource *src, MfTensor *og, bool zero,
                                MfTensor **grads)
{
    int lo, hi;
    window_bounds(w, t, target, &lo, &hi);
    MfStatus st = check_asked(w);
    if (st == MF_OK)
        st = walk(t, lo, hi, target, n, src, og, zero, grads);
    if (st == MF_OK)
        answered(w, t);
    return st;
}

/* grads[i] += part[i] (both owned; 'part' emptied). */
static MfStatus add_parts(int n, MfTensor **grads, MfTensor **part)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < n; i++) {
        if (!part[i])
            continue;
        MfTensor *sum = NULL;
        if (!grads[i])
            sum = part[i];
        else if (st == MF_OK)
            st = mf_binary(MF_OP_ADD, grads[i], part[i], &sum);
        if (grads[i]) {
            mf_tensor_release(grads[i]);
            mf_tensor_release(part[i]);
        }
        grads[i] = sum;
        part[i] = NULL;
    }
    return st;
}

/* Several symbolic targets: the gradients of each, summed (graph nodes). */
static MfStatus symbolic_gradients(MfTapeWindow *w, MfTape *t, int nt, MfTensor *const *ts,
                                   int n, const MfTapeSource *src, MfTensor *og, bool zero,
                                   MfTensor **grads)
{
    MfTensor **part = calloc((size_t)n + 1, sizeof *part);
    if (!part)
        return mf_err_nomem("gradient", ((size_t)n + 1) * sizeof *part);
    bool asked = w->asked;
    MfStatus st = MF_OK;
    for (int k = 0; k < nt && st == MF_OK; k++) {
        w->asked = asked;   /* one question, in as many walks as targets */
        st = window_gradient(w, t, ts[k], n, src, nt == 1 ? og : NULL, zero, k ? part : grads);
        if (k && st == MF_OK)
            st = add_parts(n, grads, part);
    }
    for (int i = 0; i < n; i++)
        mf_tensor_release(part[i]);
    free(part);
    return st;
}

MfStatus mf_tape_window_gradients(MfTapeWindow *w, MfTape *t, int nt, MfTensor *const *targets,
                                  int n, const MfTapeSource *src, MfTensor *og, bool zero,
                                  MfTensor **grads)
{
    for (int i = 0; i < n; i++)
        grads[i] = NULL;
    if (og && nt > 1)
        return mf_err_set(MF_EARG, "gradient: output_gradients goes with one target, got %d "
                          "targets", nt);
    bool symbolic = false;
    for (int k = 0; k < nt; k++)
        symbolic = symbolic || targets[k]->node;
    MfStatus st = symbolic ? symbolic_gradients(w, t, nt, targets, n, src, og, zero, grads)
                           : mf_tape_gradients(t, nt, targets, n, src, og ? &og : NULL, zero,
                                               grads);
    for (int i = 0; i < n && st != MF_OK; i++) {
        mf_tensor_release(grads[i]);
        grads[i] = NULL;
    }
    return st;
}

/* ---- jacobians of a symbolic target ------------------------------------------------ */

typedef struct WindowRows {
    MfTape *t;
    int lo, hi;
} WindowRows;

static MfStatus window_row(void *self, MfTensor *target, MfTensor *seed,
                           const MfTapeSource *src, MfTensor **row)
{
    const WindowRows *r = self;
    return walk(r->t, r->lo, r->hi, target, 1, src, seed, false, row);
}

/* MF_ESHAPE unless every dim of 't' is known (one walk per element). */
static MfStatus check_known(const char *who, const char *what, const MfTensor *t)
{
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0) {
            char s[MF_MAX_RANK * 24 + 8];
            mf_shape_str(t->rank, t->shape, s, sizeof s);
            return mf_err_set(MF_ESHAPE, "%s: inside a graph the %s's shape must be known "
                              "(one gradient per element), got %s", who, what, s);
        }
    return MF_OK;
}

MfStatus mf_tape_window_jacobians(MfTapeWindow *w, MfTape *t, MfTensor *target, int n,
                                  const MfTapeSource *src, bool zero, bool batch,
                                  MfTensor **outs)
{
    const char *who = batch ? "batch_jacobian" : "jacobian";
    if (!target->node)
        return mf_tape_jacobians_by(t, target, n, src, zero, batch, NULL, outs);
    for (int i = 0; i < n; i++)
        outs[i] = NULL;
    MfStatus st = check_asked(w);
    if (st == MF_OK)
        st = check_known(who, "target", target);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (!src[i].variable)
            st = check_known(who, "source", src[i].tensor);
    WindowRows r = {t, 0, 0};
    window_bounds(w, t, target, &r.lo, &r.hi);
    MfJacobianRows by = {window_row, &r};
    if (st == MF_OK)
        st = mf_tape_jacobians_by(t, target, n, src, zero, batch, &by, outs);
    if (st == MF_OK)
        answered(w, t);
    return st;
}
