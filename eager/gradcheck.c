/* gradcheck.c — the one gradient check (see eager.h): a tape's gradient of
 * L(x) = sum_k sum(w_k * f(x)_k) against central finite differences of L,
 * element by element of every contiguous float64 input. The C tests walk
 * the op table with it (f = one op, or for second order the op's backward
 * contracted with a vector, differentiated through a second tape level);
 * mf.test.gradcheck calls it on a Lua function.
 *
 * Ownership: the inputs are borrowed and perturbed in place, each element
 * restored before the next; f's outputs are released after each call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clocale.h"
#include "eager.h"

MfGradcheckOptions mf_gradcheck_defaults(void)
{
    return (MfGradcheckOptions){.eps = 1e-6, .atol = 1e-5, .rtol = 1e-3, .stop_after = 1};
}

static bool checked(const MfTensor *x)
{
    return x->dtype == MF_FLOAT64 && x->storage != NULL;
}

static void release_outs(MfTensor **outs, int nout)
{
    for (int k = 0; k < nout; k++) {
        mf_tensor_release(outs[k]);
        outs[k] = NULL;
    }
}

/* Calls f; its outputs must be concrete and at most MF_GRADCHECK_MAX_OUTPUTS. */
static MfStatus call(MfGradcheckFn f, void *ctx, int n, MfTensor *const *xs, int *nout,
                     MfTensor **outs)
{
    *nout = 0;
    MfStatus st = f(ctx, n, xs, nout, outs);
    if (st != MF_OK)
        return st;
    for (int k = 0; k < *nout; k++)
        if (outs[k] && !outs[k]->storage) {
            release_outs(outs, *nout);
            return mf_err_set(MF_EARG, "gradcheck: f returned a symbolic (graph) tensor; "
                              "gradcheck runs eagerly on values");
        }
    return MF_OK;
}

static const MfTensor *weight(const MfGradcheckOptions *o, int k)
{
    return o->weights ? o->weights[k] : NULL;
}

static bool counted(const MfGradcheckOptions *o, MfTensor *const *outs, int k)
{
    return outs[k] && (!o->weights || o->weights[k]);
}

/* L at the current inputs. */
static MfStatus objective(MfGradcheckFn f, void *ctx, int n, MfTensor *const *xs,
                          const MfGradcheckOptions *o, double *out)
{
    MfTensor *outs[MF_GRADCHECK_MAX_OUTPUTS] = {0};
    int nout;
    MfStatus st = call(f, ctx, n, xs, &nout, outs);
    double s = 0;
    for (int k = 0; k < nout && st == MF_OK; k++) {
        if (!counted(o, outs, k))
            continue;
        const MfTensor *w = weight(o, k);
        for (int64_t i = 0, m = mf_tensor_numel(outs[k]); i < m; i++)
            s += (w ? mf_tensor_get(w, i) : 1.0) * mf_tensor_get(outs[k], i);
    }
    release_outs(outs, nout);
    *out = s;
    return st;
}

/* The tape's gradients of L for the checked inputs ('grads[i]' owned, zeros
 * where unconnected; NULL for the inputs not checked). */
static MfStatus tape_grads(MfTape *t, MfGradcheckFn f, void *ctx, int n, MfTensor *const *xs,
                           const MfGradcheckOptions *o, MfTapeSource *src, MfTensor **grads)
{
    MfTensor *outs[MF_GRADCHECK_MAX_OUTPUTS] = {0}, *targets[MF_GRADCHECK_MAX_OUTPUTS];
    MfTensor *seeds[MF_GRADCHECK_MAX_OUTPUTS];
    int ns = 0, nt = 0, nout = 0;
    for (int i = 0; i < n; i++)
        if (checked(xs[i]))
            src[ns++] = (MfTapeSource){xs[i], NULL};
    MfStatus st = MF_OK;
    for (int i = 0; i < ns && st == MF_OK; i++)
        st = mf_tape_watch(t, src[i].tensor);
    if (st == MF_OK)
        st = call(f, ctx, n, xs, &nout, outs);
    for (int k = 0; k < nout && st == MF_OK; k++)
        if (counted(o, outs, k)) {
            targets[nt] = outs[k];
            seeds[nt++] = (MfTensor *)weight(o, k);
        }
    MfTensor **g = calloc((size_t)ns + 1, sizeof *g);
    if (st == MF_OK && !g)
        st = mf_err_nomem("gradcheck", ((size_t)ns + 1) * sizeof *g);
    if (st == MF_OK && nt > 0)
        st = mf_tape_gradients(t, nt, targets, ns, src, o->weights ? seeds : NULL, true, g);
    for (int i = 0, j = 0; i < n && g; i++)
        grads[i] = checked(xs[i]) ? g[j++] : NULL;
    free(g);
    release_outs(outs, nout);
    return st;
}

/* Compares element j of input i: '*ok' when it passes, '*m' says how. */
static MfStatus check_element(MfGradcheckFn f, void *ctx, int n, MfTensor *const *xs,
                              const MfGradcheckOptions *o, const MfTensor *grad, int i,
                              int64_t j, MfGradcheckMismatch *m, bool *ok)
{
    double *x = mf_tensor_data(xs[i]), x0 = x[j], fp = 0, fm = 0;
    x[j] = x0 + o->eps;
    MfStatus st = objective(f, ctx, n, xs, o, &fp);
    x[j] = x0 - o->eps;
    if (st == MF_OK)
        st = objective(f, ctx, n, xs, o, &fm);
    x[j] = x0;
    double num = (fp - fm) / (2 * o->eps), ana = grad ? mf_tensor_get(grad, j) : 0.0;
    *ok = fabs(ana - num) <= o->atol + o->rtol * fabs(num);
    *m = (MfGradcheckMismatch){i, j, x0, ana, num};
    return st;
}

/* Walks every element of the checked inputs. */
static MfStatus compare(MfGradcheckFn f, void *ctx, int n, MfTensor *const *xs,
                        const MfGradcheckOptions *o, MfTensor *const *grads, int *nbad)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++) {
        if (!checked(xs[i]))
            continue;
        for (int64_t j = 0, m = mf_tensor_numel(xs[i]); j < m && st == MF_OK; j++) {
            MfGradcheckMismatch mm;
            bool ok = true;
            st = check_element(f, ctx, n, xs, o, grads[i], i, j, &mm, &ok);
            if (st != MF_OK || ok)
                continue;
            ++*nbad;
            if (o->report)
                o->report(o->report_ctx, &mm);
            if (o->stop_after > 0 && *nbad >= o->stop_after)
                return MF_OK;
        }
    }
    return st;
}

MfStatus mf_gradcheck(MfGradcheckFn f, void *ctx, int n, MfTensor *const *inputs,
                      const MfGradcheckOptions *o, int *nbad)
{
    *nbad = 0;
    for (int i = 0; i < n; i++)
        if (checked(inputs[i]) && !mf_tensor_is_contiguous(inputs[i]))
            return mf_err_set(MF_EARG, "gradcheck: input %d is a float64 view; give a "
                              "contiguous tensor", i + 1);
    MfTapeSource *src = calloc((size_t)n + 1, sizeof *src);
    MfTensor **grads = calloc((size_t)n + 1, sizeof *grads);
    MfTape *t = src && grads ? mf_tape_new(false, false) : NULL;
    MfStatus st = t ? MF_OK : src && grads ? MF_ENOMEM
                                           : mf_err_nomem("gradcheck", 2 * (size_t)n * 16);
    if (st == MF_OK)
        st = tape_grads(t, f, ctx, n, inputs, o, src, grads);
    mf_tape_release(t);   /* recording stops before the differences */
    if (st == MF_OK)
        st = compare(f, ctx, n, inputs, o, grads, nbad);
    for (int i = 0; grads && i < n; i++)
        mf_tensor_release(grads[i]);
    free(grads);
    free(src);
    return st;
}

const char *mf_gradcheck_message(const MfGradcheckMismatch *m, const MfTensor *x, char *buf,
                                 size_t cap)
{
    int64_t idx[MF_MAX_RANK], k = m->index;
    for (int d = x->rank - 1; d >= 0; d--) {
        idx[d] = x->shape[d] ? k % x->shape[d] : 0;
        k = x->shape[d] ? k / x->shape[d] : 0;
    }
    char where[MF_MAX_RANK * 21 + 3] = "{";
    for (int d = 0; d < x->rank; d++)
        snprintf(where + strlen(where), sizeof where - strlen(where), d ? ",%lld" : "%lld",
                 (long long)idx[d] + 1);
    strcat(where, "}");
    MfCLocale loc = mf_c_locale_begin();
    snprintf(buf, cap, "gradcheck: input %d, index %s: analytic %.9g, numeric %.9g, "
             "difference %.3g", m->input + 1, where, m->analytic, m->numeric,
             fabs(m->analytic - m->numeric));
    mf_c_locale_end(loc);
    return buf;
}

MfTensor *mf_gradcheck_input(const MfTensor *t)
{
    if (!t->storage) {   /* its values are read here */
        mf_err_set(MF_EARG, "gradcheck: an input is a symbolic (graph) tensor; gradcheck runs "
                   "eagerly on values");
        return NULL;
    }
    MfTensor *x = mf_tensor_new(MF_FLOAT64, t->rank, t->shape);
    if (!x)
        return NULL;
    double *p = mf_tensor_data(x);
    for (int64_t i = 0, n = mf_tensor_numel(x); i < n; i++)
        p[i] = mf_tensor_get(t, i);
    return x;
}
