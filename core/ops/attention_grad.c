/* attention_grad.c — the gradient of ScaledDotProductAttention
 * (attention.c), FlashAttention-2's backward pass on the CPU:
 *
 *   ScaledDotProductAttentionGrad(q, k, v, out, lse, dout, dlse [, mask] [, key])
 *     -> dq, dk, dv [, dmask]        (at the output's batch axes)
 * (key: the forward op's dropout key, with the attribute dropout > 0).
 *
 * The probabilities are recomputed tile by tile from the saved row
 * log-sum-exps, P = exp(S - lse); with D = rowsum(dout * out) - dlse,
 *   dv += P^T dout,  dP = dout v^T,  dS = P (dP - D),
 *   dk += scale dS^T q,  dq += scale dS k   (and dmask = dS for a float mask).
 * Nothing of size (Tq, Tk) is kept except the optional dmask. The keys of
 * a batch are cut into groups of equal work (causal tiles counted), so a
 * call has a few units of the worker pool even at batch 1 (GRAD_UNITS); a
 * unit owns its keys' rows of dk and dv, and writes its share of dq to dq
 * itself (group 0) or to a partial (T, d) matrix of its own, added to dq
 * in group order afterwards. The groups depend on the shapes alone, so the
 * sums run in one order whatever the thread count. The forward op's
 * gradient then sums over the batch axes an input was broadcast along.
 * Its own gradient is not written: second derivatives through attention
 * are refused (MF_OP_NONDIFF), as LSTMCellGrad's. */
#include "attention.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "../grad.h"
#include "../parallel.h"
#include "common.h"
#include "fast_mathf.h"
#include "grads_math.h"

/* Keys per tile of the backward pass (five GEMMs per tile). */
#define GRAD_KEY_BLOCK 64
/* Units of work wanted per call (batches times key groups, when there are
 * enough key blocks): 2, so that one head keeps 2 threads busy. More would
 * balance odd batch counts too, but each extra group of a batch holds a
 * (Tq, d) partial of dq. */
#define GRAD_UNITS 2
#define MAX_GROUPS GRAD_UNITS

typedef struct GradJob {
    const AttnPlan *p;
    const char *lse, *dlse;            /* contiguous, at the output's shape (o, dout: the plan's) */
    char *dq, *dk, *dv, *dmask;        /* outputs (laid out by the plan); dmask NULL: not wanted */
    int64_t groups;                    /* key groups per batch */
    int64_t bounds[MAX_GROUPS + 1];    /* group g: keys [bounds[g], bounds[g + 1]) */
    char *dq_part;                     /* (nbatch, groups - 1, tq, d): groups 1.. */
    atomic_bool nomem;
} GradJob;

/* P = exp(S - lse) over a tile (0 where S is -inf), then dS = P (dP - D);
 * the row's lse and D in locals and restrict pointers, so the inner loops
 * vectorise (a reload of lse[r] per element, which S might alias, kept
 * them scalar). rowdots: D = rowsum(o * dout) - dlse in double, 8 lanes. */
#define PROBS(T, SUF, EXPF)                                                               \
    static void probs_##SUF(const AttnPlan *p, int64_t i0, int64_t j0, T *restrict S,     \
                            const T *restrict lse, int64_t ni, int64_t nj)                \
    {                                                                                     \
        for (int64_t r = 0; r < ni; r++) {                                                \
            int64_t n = mf_attn_row_lanes(mf_attn_row_keys(p, i0 + r, j0, nj), nj);       \
            T *restrict s = S + r * nj, l = lse[r];                                       \
            for (int64_t c = 0; c < n; c++) { /* both sides computed: vectorises */      \
                bool out = s[c] == -(T)INFINITY; /* exp(0), not a slow subnormal */       \
                T e = EXPF(out ? 0 : s[c] - l);                                           \
                s[c] = out ? 0 : e;                                                       \
            }                                                                             \
            memset(s + n, 0, (size_t)(nj - n) * sizeof *s);                               \
        }                                                                                 \
    }                                                                                     \
    static void dscores_##SUF(const AttnPlan *p, int64_t i0, int64_t j0,                  \
                              const T *restrict P, T *restrict dP, const T *restrict D,   \
                              int64_t ni, int64_t nj)                                     \
    {                                                                                     \
        for (int64_t r = 0; r < ni; r++) {                                                \
            int64_t n = mf_attn_row_lanes(mf_attn_row_keys(p, i0 + r, j0, nj), nj);       \
            T d = D[r];                                                                   \
            for (int64_t c = 0; c < n; c++)                                               \
                dP[r * nj + c] = P[r * nj + c] * (dP[r * nj + c] - d);                    \
            memset(dP + r * nj + n, 0, (size_t)(nj - n) * sizeof *dP);                   \
        }                                                                                 \
    }                                                                                     \
    static void rowdots_##SUF(const T *restrict o, int64_t ors, const T *restrict dout,   \
                              int64_t drs, const T *restrict dlse, T *restrict D,         \
                              int64_t n, int64_t dv)                                      \
    {                                                                                     \
        for (int64_t r = 0; r < n; r++) {                                                 \
            const T *a = o + r * ors, *b = dout + r * drs;                                \
            double lanes[8] = {0}, s = 0;                                                 \
            int64_t c = 0;                                                                \
            for (; c + 8 <= dv; c += 8)                                                   \
                for (int k = 0; k < 8; k++)                                               \
                    lanes[k] += (double)a[c + k] * (double)b[c + k];                      \
            for (; c < dv; c++)                                                           \
                s += (double)a[c] * (double)b[c];                                         \
            for (int k = 0; k < 4; k++) /* halves, not an 8-step chain */               \
                lanes[k] += lanes[k + 4];                                                 \
            s += (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);                           \
            D[r] = (T)(s - (double)dlse[r]);                                              \
        }                                                                                 \
    }

static inline float exp_f32(float x)
{
    return mf_expf_fast(x);
}

PROBS(float, f32, exp_f32)
PROBS(double, f64, exp)

/* With dropout (Z: 1 / (1 - rate) where kept, 0 where dropped), the
 * forward pass used P Z: dS = P (Z dP - D) (D = rowsum(dout * out) holds
 * as is, as out = (P Z) v), and P becomes P Z for dv += (P Z)^T dout. */
#define DROP_DSCORES(T, SUF)                                                              \
    static void drop_dscores_##SUF(const AttnPlan *p, int64_t b, int64_t i0, int64_t ni,  \
                                   int64_t j0, int64_t nj, T *P, T *dP, const T *D)       \
    {                                                                                     \
        uint8_t keep[GRAD_KEY_BLOCK];                                                     \
        T scale = (T)p->keep_scale;                                                       \
        for (int64_t r = 0; r < ni; r++) {                                                \
            int64_t n = mf_attn_row_keys(p, i0 + r, j0, nj); /* past n: P and dS are 0 */ \
            mf_attn_keep_row(p, b, i0 + r, j0, n, keep);                                  \
            for (int64_t c = 0; c < n; c++) {                                             \
                T z = keep[c] ? scale : 0, pr = P[r * nj + c];                            \
                dP[r * nj + c] = pr * (dP[r * nj + c] * z - D[r]);                        \
                P[r * nj + c] = pr * z;                                                   \
            }                                                                             \
            memset(dP + r * nj + n, 0, (size_t)(nj - n) * sizeof *dP);                    \
        }                                                                                 \
    }

DROP_DSCORES(float, f32)
DROP_DSCORES(double, f64)

/* One tile (rows i0.., keys j0..) of batch b: P in S, dS in dP. The
 * first tile to reach rows of dk and dv (first_keys) or of dq (first_rows)
 * writes them, later ones add (no zeroing pass). */
static void grad_tile(const GradJob *j, int64_t b, int64_t i0, int64_t ni, int64_t j0,
                      int64_t nj, void *S, void *dP, const void *D, char *dq, int64_t ldq,
                      bool first_keys, bool first_rows)
{
    const AttnPlan *p = j->p;
    MfDType dt = p->dtype;
    size_t es = mf_dtype_size(dt);
    const int64_t *rs = p->rs;
    const char *q = p->q + (size_t)(mf_attn_off(p, b, ATTN_Q) + i0 * rs[ATTN_Q]) * es;
    const char *k = p->k + (size_t)(mf_attn_off(p, b, ATTN_K) + j0 * rs[ATTN_K]) * es;
    const char *v = p->v + (size_t)(mf_attn_off(p, b, ATTN_V) + j0 * rs[ATTN_V]) * es;
    const char *dout = p->dout + (size_t)(mf_attn_off(p, b, ATTN_DOUT) + i0 * rs[ATTN_DOUT]) * es;
    const char *lse = j->lse + (size_t)(b * p->tq + i0) * es;
    const char *Di = (const char *)D + (size_t)i0 * es;
    mf_attn_scores(p, b, i0, ni, j0, nj, S);
    if (dt == MF_FLOAT32)
        probs_f32(p, i0, j0, S, (const float *)lse, ni, nj);
    else
        probs_f64(p, i0, j0, S, (const double *)lse, ni, nj);
    mf_attn_gemm(dt, false, true, ni, nj, p->dv, 1, dout, rs[ATTN_DOUT], v, rs[ATTN_V], 0, dP, nj,
                 mf_attn_band(p, ATTN_BAND_COLS, i0 - j0));
    if (p->rate > 0 && dt == MF_FLOAT32)
        drop_dscores_f32(p, b, i0, ni, j0, nj, S, dP, (const float *)Di);
    else if (p->rate > 0)
        drop_dscores_f64(p, b, i0, ni, j0, nj, S, dP, (const double *)Di);
    else if (dt == MF_FLOAT32)
        dscores_f32(p, i0, j0, S, dP, (const float *)Di, ni, nj);
    else
        dscores_f64(p, i0, j0, S, dP, (const double *)Di, ni, nj);
    AttnBand keys = mf_attn_band(p, ATTN_BAND_KSTART, j0 - i0);
    mf_attn_gemm(dt, true, false, nj, p->dv, ni, 1, S, nj, dout, rs[ATTN_DOUT], !first_keys,
                 j->dv + (size_t)(mf_attn_off(p, b, ATTN_DV) + j0 * rs[ATTN_DV]) * es,
                 rs[ATTN_DV], keys);
    if (j->dmask)
        for (int64_t r = 0; r < ni; r++)
            memcpy(j->dmask + (size_t)((b * p->tq + i0 + r) * p->tk + j0) * es,
                   (char *)dP + (size_t)(r * nj) * es, (size_t)nj * es);
    mf_attn_gemm(dt, true, false, nj, p->d, ni, p->scale, dP, nj, q, rs[ATTN_Q], !first_keys,
                 j->dk + (size_t)(mf_attn_off(p, b, ATTN_DK) + j0 * rs[ATTN_DK]) * es,
                 rs[ATTN_DK], keys);
    mf_attn_gemm(dt, false, false, ni, p->d, nj, p->scale, dP, nj, k, rs[ATTN_K], !first_rows,
                 dq + (size_t)(i0 * ldq) * es, ldq, mf_attn_band(p, ATTN_BAND_KEND, i0 - j0));
}

/* The share of batch b's work in keys [j0, j0 + GRAD_KEY_BLOCK): the query
 * rows of the tiles that see them (all but those above a causal diagonal). */
static int64_t key_block_work(const AttnPlan *p, int64_t j0)
{
    int64_t first = p->causal ? j0 / ATTN_BLOCK_ROWS * ATTN_BLOCK_ROWS : 0;
    return first < p->tq ? p->tq - first : 0;
}

/* Cuts the keys into j->groups groups of whole key blocks and about equal
 * work (from the shapes alone: the sums do not depend on the threads). */
static void key_groups(GradJob *j)
{
    const AttnPlan *p = j->p;
    int64_t blocks = (p->tk + GRAD_KEY_BLOCK - 1) / GRAD_KEY_BLOCK, total = 0, acc = 0;
    int64_t g = p->nbatch >= GRAD_UNITS ? 1 : (GRAD_UNITS + p->nbatch - 1) / p->nbatch;
    j->groups = g < blocks ? g : blocks > 0 ? blocks : 1;
    for (int64_t kb = 0; kb < blocks; kb++)
        total += key_block_work(p, kb * GRAD_KEY_BLOCK);
    j->bounds[0] = 0;
    g = 1;
    for (int64_t kb = 0; kb < blocks && g < j->groups; kb++) {
        acc += key_block_work(p, kb * GRAD_KEY_BLOCK);
        while (g < j->groups && acc * j->groups >= total * g)
            j->bounds[g++] = (kb + 1) * GRAD_KEY_BLOCK < p->tk ? (kb + 1) * GRAD_KEY_BLOCK : p->tk;
    }
    for (; g <= j->groups; g++)
        j->bounds[g] = p->tk;
}

/* Rows [r0, r1) of an output at 'x' (rows 'ld' apart, 'cols' wide): zeros. */
static void zero_rows(char *x, int64_t r0, int64_t r1, int64_t ld, int64_t cols, size_t es)
{
    for (int64_t r = r0; r < r1; r++)
        memset(x + (size_t)(r * ld) * es, 0, (size_t)cols * es);
}

/* Unit u: group u % groups of batch u / groups, every query tile that
 * sees its keys; its dq share into dq (group 0) or its partial. */
static void grad_unit(const GradJob *j, int64_t u, char *scratch)
{
    const AttnPlan *p = j->p;
    size_t es = mf_dtype_size(p->dtype);
    int64_t b = u / j->groups, g = u % j->groups, k0 = j->bounds[g], k1 = j->bounds[g + 1];
    char *S = scratch, *dP = S + (size_t)(ATTN_BLOCK_ROWS * GRAD_KEY_BLOCK) * es;
    char *D = dP + (size_t)(ATTN_BLOCK_ROWS * GRAD_KEY_BLOCK) * es;
    char *dq = g == 0 ? j->dq + (size_t)mf_attn_off(p, b, ATTN_DQ) * es
                      : j->dq_part + (size_t)((b * (j->groups - 1) + g - 1) * p->tq * p->d) * es;
    int64_t ldq = g == 0 ? p->rs[ATTN_DQ] : p->d;
    /* dq's rows no tile reaches (before key k0 under a causal mask; all of
     * them for no keys): zeros; the others the first tile writes */
    int64_t unseen = k0 >= k1 || (p->causal && k0 >= p->tq) ? p->tq
                     : p->causal ? k0 / ATTN_BLOCK_ROWS * ATTN_BLOCK_ROWS : 0;
    zero_rows(dq, 0, unseen, ldq, p->d, es);
    for (int64_t r = 0; j->dmask && r < p->tq; r++)
        memset(j->dmask + (size_t)((b * p->tq + r) * p->tk + k0) * es, 0, (size_t)(k1 - k0) * es);
    size_t row = (size_t)(b * p->tq) * es;
    const char *dout = p->dout + (size_t)mf_attn_off(p, b, ATTN_DOUT) * es;
    const char *o = p->o + (size_t)mf_attn_off(p, b, ATTN_O) * es;
    if (p->dtype == MF_FLOAT32)
        rowdots_f32((const float *)o, p->rs[ATTN_O], (const float *)dout, p->rs[ATTN_DOUT],
                    (const float *)(j->dlse + row), (float *)D, p->tq, p->dv);
    else
        rowdots_f64((const double *)o, p->rs[ATTN_O], (const double *)dout, p->rs[ATTN_DOUT],
                    (const double *)(j->dlse + row), (double *)D, p->tq, p->dv);
    for (int64_t j0 = k0; j0 < k1; j0 += GRAD_KEY_BLOCK) {
        int64_t nj = k1 - j0 < GRAD_KEY_BLOCK ? k1 - j0 : GRAD_KEY_BLOCK;
        bool seen = false;
        for (int64_t i0 = 0; i0 < p->tq; i0 += ATTN_BLOCK_ROWS) {
            int64_t ni = p->tq - i0 < ATTN_BLOCK_ROWS ? p->tq - i0 : ATTN_BLOCK_ROWS;
            if (p->causal && i0 + ni <= j0)   /* every row of the tile is before key j0 */
                continue;
            grad_tile(j, b, i0, ni, j0, nj, S, dP, D, dq, ldq, !seen, j0 == k0);
            seen = true;
        }
        if (!seen) {   /* keys after every query (causal): zero gradients */
            zero_rows(j->dk + (size_t)mf_attn_off(p, b, ATTN_DK) * es, j0, j0 + nj,
                      p->rs[ATTN_DK], p->d, es);
            zero_rows(j->dv + (size_t)mf_attn_off(p, b, ATTN_DV) * es, j0, j0 + nj,
                      p->rs[ATTN_DV], p->dv, es);
        }
    }
}

static size_t grad_scratch_bytes(const AttnPlan *p)
{
    return (size_t)(2 * ATTN_BLOCK_ROWS * GRAD_KEY_BLOCK + p->tq) * mf_dtype_size(p->dtype);
}

static void grad_units(void *ctx, int64_t begin, int64_t end)
{
    GradJob *j = ctx;
    size_t bytes = grad_scratch_bytes(j->p);
    char *scratch = mf_alloc(bytes);
    if (!scratch) {
        atomic_store(&j->nomem, true);
        return;
    }
    for (int64_t u = begin; u < end; u++)
        grad_unit(j, u, scratch);
    mf_dealloc(scratch, bytes);
}

/* dq += the partials of groups 1.. in group order, by blocks of rows. */
#define ADD_PARTS(T, SUF)                                                                 \
    static void add_parts_##SUF(const GradJob *j, int64_t b, int64_t i0, int64_t ni)      \
    {                                                                                     \
        const AttnPlan *p = j->p;                                                         \
        int64_t ldq = p->rs[ATTN_DQ];                                                     \
        T *dq = (T *)j->dq + mf_attn_off(p, b, ATTN_DQ) + i0 * ldq;                       \
        for (int64_t g = 1; g < j->groups; g++) {                                         \
            const T *part = (const T *)j->dq_part +                                       \
                            ((b * (j->groups - 1) + g - 1) * p->tq + i0) * p->d;          \
            for (int64_t r = 0; r < ni; r++)                                              \
                for (int64_t k = 0; k < p->d; k++)                                        \
                    dq[r * ldq + k] += part[r * p->d + k];                                \
        }                                                                                 \
    }

ADD_PARTS(float, f32)
ADD_PARTS(double, f64)

static void add_parts(const GradJob *j, int64_t begin, int64_t end)
{
    int64_t blocks = (j->p->tq + ATTN_BLOCK_ROWS - 1) / ATTN_BLOCK_ROWS;
    for (int64_t u = begin; u < end; u++) {
        int64_t b = u / blocks, i0 = (u % blocks) * ATTN_BLOCK_ROWS;
        int64_t ni = j->p->tq - i0 < ATTN_BLOCK_ROWS ? j->p->tq - i0 : ATTN_BLOCK_ROWS;
        if (j->p->dtype == MF_FLOAT32)
            add_parts_f32(j, b, i0, ni);
        else
            add_parts_f64(j, b, i0, ni);
    }
}

/* The units of a laid-out job, then the partials into dq. */
static MfStatus grad_run(GradJob *j)
{
    const AttnPlan *p = j->p;
    key_groups(j);
    size_t part_bytes = (size_t)(p->nbatch * (j->groups - 1) * p->tq * p->d) *
                        mf_dtype_size(p->dtype);
    if (part_bytes && !(j->dq_part = mf_alloc(part_bytes)))
        return mf_err_nomem(p->op, (unsigned long long)part_bytes);
    if (p->nbatch > 0)
        mf_parallel_for(p->nbatch * j->groups, 1, grad_units, j);
    if (part_bytes && !atomic_load(&j->nomem))   /* Tq d additions: on this thread */
        add_parts(j, 0, p->nbatch * ((p->tq + ATTN_BLOCK_ROWS - 1) / ATTN_BLOCK_ROWS));
    if (part_bytes)
        mf_dealloc(j->dq_part, part_bytes);
    return atomic_load(&j->nomem) ? mf_err_nomem(p->op, (unsigned long long)grad_scratch_bytes(p))
                                  : MF_OK;
}

/* ---- the gradient op ---------------------------------------------------------------- */

/* The inputs after dlse: [mask] [key] (the key when the forward op drew
 * a dropout mask). */
static bool has_dropout(const MfOpCall *c)
{
    return c->attrs->scalar[1] > 0;
}

static bool has_mask(const MfOpCall *c)
{
    return c->ninputs > 7 + has_dropout(c);
}

static MfStatus check_key(const MfOpCall *c)
{
    const MfTensor *key = c->inputs[c->ninputs - 1];
    if (c->ninputs < 8 || key->dtype != MF_INT64 || key->rank != 0)
        return mf_err_set(MF_EARG, "%s: with dropout, the last input must be the forward "
                          "op's key (an int64 scalar)", op_api(c));
    return MF_OK;
}

static MfStatus grad_infer(MfOpCall *c)
{
    int nb = 0;
    int64_t bs[MF_MAX_RANK];
    MfTensor *const *in = c->inputs;
    MfStatus st = has_dropout(c) ? check_key(c) : MF_OK;
    if (st == MF_OK)
        st = mf_attn_check(c, in, has_mask(c) ? in[7] : NULL, &nb, bs);
    if (st != MF_OK)
        return st;
    const MfTensor *q = in[0], *k = in[1], *v = in[2];
    int64_t rows[4] = {q->shape[q->rank - 2], k->shape[k->rank - 2], v->shape[v->rank - 2],
                       q->shape[q->rank - 2]};
    int64_t cols[4] = {q->shape[q->rank - 1], k->shape[k->rank - 1], v->shape[v->rank - 1],
                       rows[1]};
    c->noutputs = has_mask(c) && c->attrs->mask_grad ? 4 : 3;
    for (int o = 0; o < c->noutputs; o++) {
        MfTensorSpec *s = &c->out[o];
        s->dtype = q->dtype;
        s->rank = nb + 2;
        for (int a = 0; a < nb; a++)
            s->shape[a] = bs[a];
        s->shape[nb] = rows[o];
        s->shape[nb + 1] = cols[o];
    }
    return MF_OK;
}

/* Whether q, k and v are the three thirds of one dense block, in order
 * (the heads of q, k and v a model cuts from one (B, T, 3H, d) product):
 * one shape and strides, each 'step' elements after the last, 'step' one
 * axis's extent, and the three together without gaps. */
static bool thirds(const MfTensor *q, const MfTensor *k, const MfTensor *v, int64_t *step)
{
    int r = q->rank, axis = -1;
    *step = k->offset - q->offset;
    if (!q->storage || k->storage != q->storage || v->storage != q->storage || *step <= 0 ||
        v->offset - k->offset != *step || k->rank != r || v->rank != r)
        return false;
    for (int a = 0; a < r; a++) {
        if (k->shape[a] != q->shape[a] || v->shape[a] != q->shape[a] ||
            k->strides[a] != q->strides[a] || v->strides[a] != q->strides[a] || q->strides[a] < 0)
            return false;
        if (axis < 0 && q->shape[a] > 1 && q->shape[a] * q->strides[a] == *step)
            axis = a;
    }
    if (axis < 0)
        return false;
    int64_t expect = 1, done = 0;   /* dense: each axis steps over all the smaller ones */
    for (int n = 0; n < r; n++) {
        int next = -1;
        for (int a = 0; a < r; a++)
            if (!(done >> a & 1) && q->shape[a] > 1 &&
                (next < 0 || q->strides[a] < q->strides[next]))
                next = a;
        if (next < 0)
            break;
        if (q->strides[next] != expect)
            return false;
        expect *= q->shape[next] * (next == axis ? 3 : 1);
        done |= (int64_t)1 << next;
    }
    return true;
}

/* dq, dk, dv: when q, k and v are thirds of one block, thirds of one new
 * block laid out as theirs, so the gradient of the product they were cut
 * from is that block (ConcatV2 of adjacent views is a view, shape_ops.c),
 * no copy; else contiguous. dmask contiguous. */
static MfStatus grad_outputs(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *const *in = c->inputs;
    const MfTensor *q = in[0];
    int64_t step = 0;
    bool same = q->rank == c->out[0].rank;
    for (int a = 0; same && a < q->rank; a++)
        same = q->shape[a] == c->out[0].shape[a];
    if (!same || !thirds(q, in[1], in[2], &step))
        return mf_attn_new_outputs(c, outs, 0);
    int64_t n = 3 * mf_tensor_numel(q);
    MfTensor *block = mf_tensor_new(q->dtype, 1, &n);
    for (int i = 0; block && i < 3; i++)
        outs[i] = mf_tensor_view(block, q->rank, q->shape, q->strides, i * step);
    mf_tensor_release(block);
    if (!block || !outs[0] || !outs[1] || !outs[2]) {
        for (int i = 0; i < 3; i++) {
            mf_tensor_release(outs[i]);
            outs[i] = NULL;
        }
        mf_err_prefix("%s", op_api(c));
        return MF_ENOMEM;
    }
    return mf_attn_new_outputs(c, outs, 3);
}

static MfStatus grad_forward(const MfOpCall *c, MfTensor **outs)
{
    AttnPlan p;
    MfStatus st = mf_attn_plan(c, c->inputs, has_mask(c) ? c->inputs[7] : NULL, &p);
    if (st != MF_OK)
        return st;
    if (has_dropout(c))
        p.key = (uint64_t)*(const int64_t *)mf_tensor_data(c->inputs[c->ninputs - 1]);
    MfTensor *held[2] = {NULL};   /* lse, dlse (out and dout: the plan's) */
    for (int i = 0; i < 2 && st == MF_OK; i++)
        if (!(held[i] = mf_tensor_contiguous(c->inputs[4 + 2 * i])))
            st = mf_err_nomem(p.op, (unsigned long long)mf_tensor_numel(c->inputs[4 + 2 * i]) *
                                        mf_dtype_size(p.dtype));
    if (st == MF_OK)
        st = mf_attn_plan_dout(&p, c->inputs[3], c->inputs[5]);
    if (st == MF_OK)
        st = grad_outputs(c, outs);
    GradJob j = {.p = &p};
    if (st == MF_OK) {
        for (int i = 0; i < 3; i++)
            mf_attn_plan_output(&p, outs[i], ATTN_DQ + i);
        j = (GradJob){.p = &p, .lse = mf_tensor_data(held[0]), .dlse = mf_tensor_data(held[1]),
                      .dq = mf_tensor_data(outs[0]), .dk = mf_tensor_data(outs[1]),
                      .dv = mf_tensor_data(outs[2]),
                      .dmask = c->noutputs > 3 ? mf_tensor_data(outs[3]) : NULL};
        st = mf_parallel_blas_buffers(p.op, mf_parallel_threads());
    }
    if (st == MF_OK)
        st = grad_run(&j);
    for (int i = 0; i < 2; i++)
        mf_tensor_release(held[i]);
    mf_attn_plan_free(&p);
    for (int i = 0; st != MF_OK && i < c->noutputs; i++) {
        mf_tensor_release(outs[i]);
        outs[i] = NULL;
    }
    return st;
}

/* ---- the forward op's gradient -------------------------------------------------------- */

/* 't', or zeros shaped like 'like' when it is NULL (an output without a gradient). */
static MfStatus or_zeros(MfTensor *t, MfTensor *like, MfTensor **out)
{
    if (t) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    return mf_grad_zeros_like(like, out);
}

MfStatus mf_attn_backward(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *dout = NULL, *dlse = NULL, *outs[MF_MAX_OUTPUTS] = {NULL};
    MfStatus st = or_zeros(g->doutputs[0], g->outputs[0], &dout);
    if (st == MF_OK)
        st = or_zeros(g->doutputs[1], g->outputs[1], &dlse);
    bool float_mask = c->ninputs > 3 && c->inputs[3]->dtype != MF_BOOL;
    MfAttrs a = *c->attrs;
    a.mask_grad = float_mask && mf_grad_needs(g, 3);
    MfTensor *in[9] = {c->inputs[0], c->inputs[1], c->inputs[2], g->outputs[0], g->outputs[1],
                       dout, dlse};
    int n = 7;
    if (c->ninputs > 3)
        in[n++] = c->inputs[3];
    if (c->attrs->scalar[1] > 0)   /* the same dropout mask as the forward op's run */
        in[n++] = g->outputs[2];
    if (st == MF_OK)
        st = mf_op_call(MF_OP_ATTENTION_GRAD, n, in, &a, outs, NULL);
    for (int i = 0; i < 4 && st == MF_OK; i++)
        if (outs[i] && mf_grad_needs(g, i))
            st = mf_grad_unbroadcast(outs[i], c->inputs[i], &dinputs[i]);
    for (int i = 0; i < MF_MAX_OUTPUTS; i++)
        mf_tensor_release(outs[i]);
    mf_tensor_release(dout);
    mf_tensor_release(dlse);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, c->ninputs);
    return st;
}

/* Each tile: five GEMMs of 2 Br Bc d FLOPs (d = dv here), P and dS. */
static MfCost grad_cost(const MfOpCall *c)
{
    const MfTensor *q = c->inputs[0], *k = c->inputs[1];
    double rows = (double)mf_tensor_numel(q) / (double)q->shape[q->rank - 1];
    double keys = (double)k->shape[k->rank - 2], d = (double)q->shape[q->rank - 1];
    double flops = 10 * rows * keys * d * (c->attrs->causal ? 0.5 : 1);
    return (MfCost){.flops = flops, .bytes = 8 * (double)mf_tensor_numel(q) * 4};
}

const MfOpDesc mf_desc_attention_grad = {
    .name = "ScaledDotProductAttentionGrad", .api = "scaled_dot_product_attention_grad",
    .arity = 7, .flags = MF_OP_NONDIFF | MF_OP_VARIADIC | MF_OP_VIEW, .infer = grad_infer,
    .forward = grad_forward, .cost = grad_cost,
};
