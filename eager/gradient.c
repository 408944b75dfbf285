/* gradient.c — 'mf_tape_gradient': a tape's records as the records of the
 * backward walk (autodiff/walk.h).
 *
 * A record's keys are its tensors' ids. The walk marks what the sources
 * reach, this file seeds the targets' gradients (ones, or
 * 'output_gradient'), the walk goes backward over the records, and this
 * file collects each source's gradient: the sum over the ids it stands for.
 * Here a record's gradient runs at once on values: the op's 'backward' (or
 * the override, or the custom function, which gets zeros for unconnected
 * outputs). A Slice's gradient is added into its window of the held one and
 * a MatMul's weight gradient by the GEMM itself (autodiff/accumulate.h).
 * The tape is 'busy' meanwhile, so it records nothing itself, while other
 * recording tapes write the gradient ops down (higher-order gradients). */
#include "tape_impl.h"

#include <string.h>

#include "autodiff/walk.h"
#include "core/alloc.h"
#include "core/create.h"
#include "core/grad.h"
#include "core/ops/view.h"
#include "core/shape.h"
#include "matmul_accumulate.h"
#include "autodiff/slices.h"

typedef struct Walk {
    MfTapeRecords recs;   /* first: the walk's 'self' is also the records' */
    MfAdWalk ad;
    MfTape *t;
    int ntargets;
    MfTensor *const *targets;
    /* With hooks: the sources, and per source the first record reading it
     * (after the walk passes it, its gradient is final; -1: none, -2:
     * already handed to 'ready'). */
    const MfTapeHooks *hooks;
    int nsources;
    const MfTapeSource *srcs;
    bool zero;
    MfTensor **out;
    int64_t *first_use;
} Walk;

static void walk_free(Walk *w)
{
    mf_ad_walk_free(&w->ad);
    mf_tape_records_free(&w->recs);
}

static bool is_target(const Walk *w, int64_t id)
{
    for (int i = 0; i < w->ntargets; i++)
        if (w->targets[i]->id == id)
            return true;
    return false;
}

/* The ids a source stands for: the tensor's, or every value read from the
 * variable on this tape. Returns how many through 'ids'. As TensorFlow, a
 * tensor the tape neither watched nor computed stands for none (its
 * gradient is nil), and a target is its own source (d y / d y = 1; a
 * Variable target is the Variable, as TensorFlow compares handles). */
static int64_t source_ids(const Walk *w, const MfTapeSource *s, const int64_t **ids,
                          int64_t *one)
{
    const MfTape *t = w->t;
    if (s->variable) {
        const MfVarReads *r = mf_idmap_get(&t->vars, s->variable->id);
        *ids = r ? r->ids : NULL;
        if (r || !s->variable->value || !is_target(w, s->variable->value->id))
            return r ? r->n : 0;
    }
    *one = s->variable ? s->variable->value->id : s->tensor->id;
    *ids = one;
    return is_target(w, *one) || mf_idmap_get(&t->live, *one) ? 1 : 0;
}

static MfStatus mark_sources(Walk *w, int n, const MfTapeSource *sources)
{
    for (int i = 0; i < n; i++) {
        const int64_t *ids;
        int64_t one;
        int64_t k = source_ids(w, &sources[i], &ids, &one);
        for (int64_t j = 0; j < k; j++) {
            MfStatus st = mf_ad_walk_source(&w->ad, ids[j]);
            if (st != MF_OK)
                return st;
        }
    }
    return mf_ad_walk_mark(&w->ad);
}

/* ---- the tape's records for the walk ---------------------------------------------- */

void mf_tape_records_init(MfTapeRecords *r, const MfTape *t)
{
    r->t = t;
    r->keys = r->inline_keys;
    r->capkeys = MF_TAPE_INLINE_KEYS;
}

void mf_tape_records_free(MfTapeRecords *r)
{
    if (r->keys != r->inline_keys)
        mf_free(r->keys);
    r->keys = r->inline_keys;
}

MfStatus mf_tape_describe(void *self, int64_t k, MfAdRecord *r)
{
    MfTapeRecords *rs = self;
    const MfTapeRecord *rec = &rs->t->recs[k];
    MfTensor *const *in = mf_rec_inputs(rec);
    if (rec->ninputs > rs->capkeys) {
        MfAdKey *keys = mf_calloc((size_t)rec->ninputs, sizeof *keys);
        if (!keys)
            return mf_err_nomem("gradient", (unsigned long long)rec->ninputs * sizeof *keys);
        mf_tape_records_free(rs);
        rs->keys = keys;
        rs->capkeys = rec->ninputs;
    }
    for (int i = 0; i < rec->ninputs; i++)
        rs->keys[i] = in[i]->id;
    *r = (MfAdRecord){.passes = mf_rec_differentiable(rec), .op = rec->op, .attrs = rec->attrs,
                      .override = rec->override, .custom = rec->fn != NULL,
                      .ninputs = rec->ninputs, .noutputs = rec->noutputs, .inputs = rs->keys};
    for (int j = 0; j < rec->noutputs; j++) {
        r->outputs[j] = rec->outputs[j]->id;
        r->float_outputs |= (unsigned)mf_dtype_is_float(rec->outputs[j]->dtype) << j;
    }
    return MF_OK;
}

/* Checks the gradient of input 'i' of record 'k' against the input. */
static MfStatus check(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *r, int i,
                      MfTensor **gp)
{
    (void)ad;
    (void)r;
    const MfTapeRecord *rec = &((Walk *)self)->t->recs[k];
    MfTensor *g = *gp, *x = mf_rec_inputs(rec)[i];
    if (mf_shape_equal_t(g, x) && g->dtype == x->dtype)
        return MF_OK;
    char a[64], b[64];
    mf_shape_str(g->rank, g->shape, a, sizeof a);
    mf_shape_str(x->rank, x->shape, b, sizeof b);
    MfDType dt = g->dtype;
    mf_tensor_release(g);
    *gp = NULL;
    return mf_err_set(MF_EINTERNAL, "gradient: the gradient of '%s' for input %d has "
                      "shape %s (%s), expected %s (%s)", mf_rec_name(rec), i + 1, a,
                      mf_dtype_name(dt), b, mf_dtype_name(x->dtype));
}

/* Runs the gradient of one record: an op's 'backward' or a custom function
 * (which gets zeros for unconnected outputs). */
static MfStatus backward(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *ar,
                         MfTensor **dout, const bool *needs, MfTensor **din)
{
    (void)ad;
    (void)ar;
    const MfTapeRecord *r = &((Walk *)self)->t->recs[k];
    MfTensor *const *in = mf_rec_inputs(r);
    if (!r->fn) {
        static const MfAttrs no_attrs;
        MfOpCall c = {.op = r->op, .ninputs = r->ninputs, .inputs = in,
                      .attrs = r->attrs ? r->attrs : &no_attrs, .noutputs = r->noutputs};
        for (int j = 0; j < r->noutputs; j++) {
            const MfTensor *o = r->outputs[j];
            c.out[j].dtype = o->dtype;
            c.out[j].rank = o->rank;
            memcpy(c.out[j].shape, o->shape, sizeof o->shape);
        }
        MfGradCall g = {.call = &c, .outputs = r->outputs, .doutputs = dout, .needs = needs,
                        .override = r->override};
        return mf_grad_call(&g, din);
    }
    for (int j = 0; j < r->noutputs; j++) {
        const MfTensor *o = r->outputs[j];
        MfStatus st;
        if (!dout[j] && (st = mf_create_fill(r->fn->name, o->dtype, o->rank, o->shape, 0.0,
                                             &dout[j])) != MF_OK)
            return st;
    }
    MfStatus st = r->fn->backward(r->fn, r->noutputs, dout, r->ninputs, in, din);
    if (st != MF_OK)
        for (int i = 0; i < r->ninputs; i++) {
            mf_tensor_release(din[i]);
            din[i] = NULL;
        }
    return st;
}

/* A Slice's gradient added into the one held for its input (see
 * autodiff/slices.c); false: nothing done, take the op's gradient. */
static bool slice_in_place(Walk *w, const MfTapeRecord *r, MfTensor *x, MfTensor *dy)
{
    if (r->op != MF_OP_SLICE || !mf_ad_walk_reached(&w->ad, x->id))
        return false;
    MfTensor *acc = mf_ad_walk_held(&w->ad, x->id);
    bool fresh = !acc;
    if (!mf_slice_accumulate(r->op, r->attrs, mf_tape_any_recording(), x, dy, &acc)) {
        mf_err_clear();
        return false;
    }
    if (fresh && mf_ad_walk_hold(&w->ad, x->id, acc) != MF_OK) {
        mf_tensor_release(acc);   /* out of memory: the op's gradient tries again */
        mf_err_clear();
        return false;
    }
    return true;
}

/* A MatMul's db added into the gradient held for b by one GEMM (see
 * matmul_accumulate.c); false: nothing done, take the op's gradient. */
static bool matmul_in_place(Walk *w, const MfTapeRecord *r, MfTensor *const *in, MfTensor *dy)
{
    if (r->op != MF_OP_MATMUL || r->ninputs != 2 || !dy)
        return false;
    MfTensor *acc = mf_ad_walk_held(&w->ad, in[1]->id);
    if (!mf_matmul_accumulate(r->op, r->attrs, mf_tape_any_recording(), in[0], dy, acc)) {
        mf_err_clear();
        return false;
    }
    return true;
}

/* Slice and MatMul gradients added in place (true: the record is done). */
static bool shortcut(MfAdWalk *ad, void *self, int64_t k, const MfAdRecord *ar,
                     MfTensor **dout, bool *needs)
{
    (void)ad;
    (void)ar;
    Walk *w = self;
    const MfTapeRecord *r = &w->t->recs[k];
    MfTensor *const *in = mf_rec_inputs(r);
    if (r->fn || r->override)
        return false;
    if (slice_in_place(w, r, in[0], dout[0]))
        return true;
    if (r->op == MF_OP_MATMUL && r->ninputs == 2 && needs[1] &&
        matmul_in_place(w, r, in, dout[0])) {
        needs[1] = false; /* added in place: the op's gradient makes da alone */
        return !needs[0];
    }
    return false;
}

static MfStatus collect(Walk *w, const MfTapeSource *s, bool zero, MfTensor **out);

/* The first record reading each source (see Walk.first_use). */
static MfStatus find_first_uses(Walk *w)
{
    size_t bytes = (size_t)(w->nsources ? w->nsources : 1) * sizeof *w->first_use;
    if (!(w->first_use = mf_alloc(bytes)))
        return mf_err_nomem("gradient", bytes);
    MfIdMap owner;
    memset(&owner, 0, sizeof owner);
    MfStatus st = MF_OK;
    for (int i = 0; i < w->nsources && st == MF_OK; i++) {
        w->first_use[i] = -1;
        const int64_t *ids;
        int64_t one, n = source_ids(w, &w->srcs[i], &ids, &one);
        for (int64_t j = 0; j < n && st == MF_OK; j++)
            st = mf_idmap_put(&owner, ids[j], (void *)(intptr_t)(i + 1), "gradient");
    }
    for (int64_t k = w->t->nrecs - 1; k >= 0 && st == MF_OK; k--) {
        const MfTapeRecord *r = &w->t->recs[k];
        MfTensor *const *in = mf_rec_inputs(r);
        for (int j = 0; j < r->ninputs; j++) {
            intptr_t i = (intptr_t)mf_idmap_get(&owner, in[j]->id);
            if (i)
                w->first_use[i - 1] = k;
        }
    }
    mf_idmap_free(&owner);
    return st;
}

/* Hands to 'ready' the gradients made final by record 'k' (-1: the rest). */
static MfStatus report_ready(Walk *w, int64_t k)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < w->nsources && st == MF_OK; i++) {
        if (w->first_use[i] == -2 || (k >= 0 && w->first_use[i] != k))
            continue;
        w->first_use[i] = -2;
        st = collect(w, &w->srcs[i], w->zero, &w->out[i]);
        if (st == MF_OK)
            st = w->hooks->ready(w->hooks->ctx, i, w->out[i]);
    }
    if (st == MF_OK && k > 0 && w->hooks->between)   /* another record follows */
        st = w->hooks->between(w->hooks->ctx);
    return st;
}

static MfStatus after(MfAdWalk *ad, void *self, int64_t k)
{
    (void)ad;
    Walk *w = self;
    return w->hooks ? report_ready(w, k) : MF_OK;
}

static const MfAdRecordsOps tape_records = {
    .who = "gradient", .describe = mf_tape_describe, .shortcut = shortcut, .backward = backward,
    .check = check, .after = after,
};

/* The seed: 'output_gradient' (checked against the target) or ones. */
static MfStatus seed(Walk *w, MfTensor *target, MfTensor *og)
{
    MfTensor *s = NULL;
    MfStatus st;
    if (og) {
        if (!mf_shape_equal_t(og, target) || og->dtype != target->dtype) {
            char a[64], b[64];
            mf_shape_str(og->rank, og->shape, a, sizeof a);
            mf_shape_str(target->rank, target->shape, b, sizeof b);
            return mf_err_set(MF_EARG, "gradient: output_gradients has shape %s (%s) but the "
                              "target has shape %s (%s)", a, mf_dtype_name(og->dtype), b,
                              mf_dtype_name(target->dtype));
        }
        mf_tensor_retain(og);
        s = og;
    } else if ((st = mf_create_fill("gradient", target->dtype, target->rank, target->shape,
                                    1.0, &s)) != MF_OK) {
        return st;
    }
    return mf_ad_walk_add(&w->ad, target->id, s);   /* a target given twice: its seeds add up */
}

/* The gradient of one source: the sum over the ids it stands for, or NULL
 * (zeros when 'zero'). */
static MfStatus collect(Walk *w, const MfTapeSource *s, bool zero, MfTensor **out)
{
    const int64_t *ids;
    int64_t one;
    int64_t n = source_ids(w, s, &ids, &one);
    MfTensor *sum = NULL;
    for (int64_t j = 0; j < n; j++) {
        MfTensor *g = mf_ad_walk_gradient(&w->ad, ids[j]);
        if (!g)
            continue;
        if (!sum) {
            mf_tensor_retain(g);
            sum = g;
            continue;
        }
        MfTensor *next = NULL;
        MfStatus st = mf_binary(MF_OP_ADD, sum, g, &next);
        mf_tensor_release(sum);
        if (st != MF_OK)
            return st;
        sum = next;
    }
    MfTensor *like = s->variable ? s->variable->value : s->tensor;
    if (!sum && zero && like)
        return mf_create_fill("gradient", like->dtype, like->rank, like->shape, 0.0, out);
    *out = sum;
    return MF_OK;
}

/* One backward walk on 't' from the targets (seeded with 'ogs[i]', or
 * ones when 'ogs' or its entry is NULL) to the sources. */
static MfStatus compute(MfTape *t, int nt, MfTensor *const *targets, MfTensor *const *ogs,
                        int n, const MfTapeSource *sources, bool zero,
                        const MfTapeHooks *hooks, MfTensor **grads)
{
    Walk walk, *w = &walk;
    *w = (Walk){.t = t, .ntargets = nt, .targets = targets, .hooks = hooks, .nsources = n,
                .srcs = sources, .zero = zero, .out = grads};
    mf_tape_records_init(&w->recs, t);
    mf_ad_walk_init(&w->ad, &tape_records, w, t->nrecs);
    MfStatus st = mark_sources(w, n, sources);
    if (st == MF_OK && hooks)
        st = find_first_uses(w);
    bool any = false;
    for (int i = 0; i < nt && st == MF_OK; i++)
        if (mf_grad_is_float(targets[i]->dtype)) {
            st = seed(w, targets[i], ogs ? ogs[i] : NULL);
            any = true;
        }
    if (st == MF_OK && any) {
        t->busy = true;
        st = mf_ad_walk_back(&w->ad);
        t->busy = false;
    }
    if (st == MF_OK && hooks)
        st = report_ready(w, -1);
    for (int i = 0; i < n && st == MF_OK && !hooks; i++)
        st = collect(w, &sources[i], zero, &grads[i]);
    if (w->first_use)
        mf_dealloc(w->first_use, (size_t)(n ? n : 1) * sizeof *w->first_use);
    walk_free(w);
    return st;
}

/* Refuses a tape that cannot give a gradient now. */
static MfStatus check_askable(const MfTape *t)
{
    if (t->used)
        return mf_err_set(MF_EARG, "gradient: a non-persistent GradientTape can only be used "
                          "once; create it with {persistent = true}");
    if (t->busy)
        return mf_err_set(MF_EARG, "gradient: this tape is already computing a gradient");
    if (t->lost_read)
        return mf_err_set(MF_ENOMEM, "gradient: out of memory while recording: a variable "
                          "read could not be watched, so its gradient would be missing");
    return MF_OK;
}

/* A non-persistent tape gives one answer, then stops and lets go of its records. */
static void asked(MfTape *t)
{
    if (!t->persistent) {
        t->used = true;
        mf_tape_stop(t);
        mf_tape_clear_records(t);
    }
}

static MfStatus gradients(MfTape *t, int ntargets, MfTensor *const *targets, int nsources,
                          const MfTapeSource *sources, MfTensor *const *output_gradients,
                          bool unconnected_zero, const MfTapeHooks *hooks, MfTensor **grads)
{
    for (int i = 0; i < nsources; i++)
        grads[i] = NULL;
    MfStatus st = check_askable(t);
    if (st != MF_OK)
        return st;
    st = compute(t, ntargets, targets, output_gradients, nsources, sources, unconnected_zero,
                 hooks, grads);
    if (st != MF_OK)
        for (int i = 0; i < nsources; i++) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    asked(t);
    return st;
}

MfStatus mf_tape_gradients(MfTape *t, int ntargets, MfTensor *const *targets, int nsources,
                           const MfTapeSource *sources, MfTensor *const *output_gradients,
                           bool unconnected_zero, MfTensor **grads)
{
    return gradients(t, ntargets, targets, nsources, sources, output_gradients,
                     unconnected_zero, NULL, grads);
}

MfStatus mf_tape_gradient(MfTape *t, MfTensor *target, int nsources,
                          const MfTapeSource *sources, MfTensor *output_gradient,
                          bool unconnected_zero, MfTensor **grads)
{
    return mf_tape_gradients(t, 1, &target, nsources, sources,
                             output_gradient ? &output_gradient : NULL, unconnected_zero, grads);
}

MfStatus mf_tape_gradient_hooked(MfTape *t, MfTensor *target, int nsources,
                                 const MfTapeSource *sources, const MfTapeHooks *hooks,
                                 MfTensor **grads)
{
    return gradients(t, 1, &target, nsources, sources, NULL, false, hooks, grads);
}

/* ---- jacobians ------------------------------------------------------------------- */

/* An output gradient shaped like 'y': 1 at the flat positions k + j * step
 * (j = 0, 1, ... while inside), 0 elsewhere. */
static MfStatus unit_seed(const MfTensor *y, int64_t k, int64_t step, MfTensor **out)
{
    MfStatus st = mf_create_fill("jacobian", y->dtype, y->rank, y->shape, 0.0, out);
    for (int64_t i = k, n = mf_tensor_numel(y); st == MF_OK && i < n; i += step) {
        if (y->dtype == MF_FLOAT32)
            ((float *)mf_tensor_data(*out))[i] = 1;
        else
            ((double *)mf_tensor_data(*out))[i] = 1;
    }
    return st;
}

/* Stacks the 'n' rows (owned; NULL rows become zeros shaped like 'like')
 * along 'axis' and reshapes to 'shape'. Releases the rows. */
static MfStatus stack_rows(int n, MfTensor **rows, const MfTensor *like, int axis, int rank,
                           const int64_t *shape, MfTensor **out)
{
    MfStatus st = MF_OK;
    MfTensor *stacked = NULL;
    for (int64_t k = 0; k < n && st == MF_OK; k++)
        if (!rows[k])
            st = mf_create_fill("jacobian", like->dtype, like->rank, like->shape, 0.0, &rows[k]);
    MfAttrs a = mf_attrs_default();
    a.axis = axis;
    if (st == MF_OK)
        st = mf_op1(MF_OP_STACK, n, rows, &a, &stacked);
    if (st == MF_OK)
        st = mf_reshape(stacked, rank, shape, out);
    mf_tensor_release(stacked);
    for (int64_t k = 0; k < n; k++)
        mf_tensor_release(rows[k]);
    return st;
}

/* The shape a ++ b (at most MF_MAX_RANK dims) into 'shape'; returns the rank. */
static int concat_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int64_t *shape)
{
    for (int d = 0; d < ra; d++)
        shape[d] = a[d];
    for (int d = 0; d < rb; d++)
        shape[ra + d] = b[d];
    return ra + rb;
}

/* One backward walk per seed: rows[k] = the gradient for seed k of 'seeds'
 * (unit_seed(target, k * kstep, step)); returns whether one is connected. */
static MfStatus seeded_rows(MfTape *t, MfTensor *target, const MfTapeSource *source, int64_t n,
                            int64_t kstep, int64_t step, const MfJacobianRows *by,
                            MfTensor **rows, bool *any)
{
    MfStatus st = MF_OK;
    *any = false;
    for (int64_t k = 0; k < n && st == MF_OK; k++) {
        MfTensor *og = NULL;
        st = unit_seed(target, k * kstep, step, &og);
        if (st == MF_OK && by)
            st = by->row(by->self, target, og, source, &rows[k]);
        else if (st == MF_OK)
            st = compute(t, 1, &target, &og, 1, source, false, NULL, &rows[k]);
        mf_tensor_release(og);
        *any = *any || rows[k];
        if (st == MF_OK && mf_interrupted)
            st = mf_err_set(MF_EINTR, "jacobian: interrupted");
    }
    return st;
}

/* Shared by jacobian and batch_jacobian: 'n' rows of seeds, stacked; each
 * row a walk of the tape's records, or 'by' (NULL: the tape's). */
static MfStatus jacobian_of(MfTape *t, MfTensor *target, const MfTapeSource *source, bool zero,
                            bool batch, const MfJacobianRows *by, bool last, MfTensor **out)
{
    const char *who = batch ? "batch_jacobian" : "jacobian";
    const MfTensor *x = source->variable ? source->variable->value : source->tensor;
    int64_t shape[2 * MF_MAX_RANK];
    *out = NULL;
    MfStatus st = check_askable(t);
    if (st != MF_OK)
        return st;
    if (!x)
        return mf_err_set(MF_EARG, "%s: the source has no value", who);
    if (target->rank + x->rank - (batch ? 1 : 0) > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "%s: the result would have rank %d (at most %d)", who,
                          target->rank + x->rank - (batch ? 1 : 0), MF_MAX_RANK);
    if (batch && (target->rank < 2 || x->rank < 2))   /* TensorFlow's rule */
        return mf_err_set(MF_ESHAPE, "%s: target and source must have rank at least 2 "
                          "([batch, ...]), got ranks %d and %d", who, target->rank, x->rank);
    if (batch && target->shape[0] != x->shape[0])
        return mf_err_set(MF_ESHAPE, "%s: target and source must share their first (batch) "
                          "dimension, got sizes %lld and %lld", who,
                          (long long)target->shape[0], (long long)x->shape[0]);
    int64_t batch_n = batch ? target->shape[0] : 1;
    int64_t n = batch_n ? mf_tensor_numel(target) / batch_n : 0;
    int rank = batch ? concat_shapes(target->rank, target->shape, x->rank - 1, x->shape + 1,
                                     shape)
                     : concat_shapes(target->rank, target->shape, x->rank, x->shape, shape);
    if (n == 0 || !mf_grad_is_float(target->dtype)) {
        if (last)
            asked(t);
        return zero || n == 0 ? mf_create_fill(who, x->dtype, rank, shape, 0.0, out) : MF_OK;
    }
    size_t bytes = (size_t)n * sizeof(MfTensor *);
    MfTensor **rows = mf_alloc_zeroed(bytes);
    if (!rows)
        return mf_err_nomem(who, bytes);
    bool any = false;
    st = seeded_rows(t, target, source, n, 1, batch ? n : mf_tensor_numel(target), by, rows,
                     &any);
    if (st == MF_OK && (any || zero))
        st = stack_rows((int)n, rows, x, batch ? 1 : 0, rank, shape, out);
    else
        for (int64_t k = 0; k < n; k++)
            mf_tensor_release(rows[k]);
    mf_dealloc(rows, bytes);
    if (last)
        asked(t);
    return st;
}

/* jacobian_of with its errors named: the walk's own ("gradient: ...") get
 * the function's name before them. */
static MfStatus named_jacobian(MfTape *t, MfTensor *target, const MfTapeSource *source,
                               bool zero, bool batch, const MfJacobianRows *by, MfTensor **out)
{
    const char *who = batch ? "batch_jacobian" : "jacobian";
    *out = NULL;
    if (target->node && !by)
        return mf_err_set(MF_EARG, "%s: the target is a graph tensor: its rows are symbolic "
                          "gradients (mf_tape_window_jacobians)", who);
    MfStatus st = jacobian_of(t, target, source, zero, batch, by, true, out);
    if (st != MF_OK && strncmp(mf_err_msg(), who, strlen(who)) != 0)
        mf_err_prefix("%s", who);
    return st;
}

MfStatus mf_tape_jacobians_by(MfTape *t, MfTensor *target, int n, const MfTapeSource *sources,
                              bool unconnected_zero, bool batch, const MfJacobianRows *by,
                              MfTensor **outs)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < n; i++)
        outs[i] = NULL;
    if (batch || (target->node && !by))
        return named_jacobian(t, target, sources, unconnected_zero, batch, by, outs);
    for (int i = 0; i < n && st == MF_OK; i++)
        st = jacobian_of(t, target, &sources[i], unconnected_zero, false, by, i == n - 1,
                         &outs[i]);
    if (st != MF_OK) {
        if (strncmp(mf_err_msg(), "jacobian", 8) != 0)
            mf_err_prefix("jacobian");
        for (int i = 0; i < n; i++) {
            mf_tensor_release(outs[i]);
            outs[i] = NULL;
        }
        asked(t);
    }
    return st;
}

MfStatus mf_tape_jacobians(MfTape *t, MfTensor *target, int n, const MfTapeSource *sources,
                           bool unconnected_zero, MfTensor **outs)
{
    return mf_tape_jacobians_by(t, target, n, sources, unconnected_zero, false, NULL, outs);
}

MfStatus mf_tape_jacobian(MfTape *t, MfTensor *target, const MfTapeSource *source,
                          bool unconnected_zero, MfTensor **out)
{
    return named_jacobian(t, target, source, unconnected_zero, false, NULL, out);
}

MfStatus mf_tape_batch_jacobian(MfTape *t, MfTensor *target, const MfTapeSource *source,
                                bool unconnected_zero, MfTensor **out)
{
    return named_jacobian(t, target, source, unconnected_zero, true, NULL, out);
}
