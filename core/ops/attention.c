/* attention.c — ScaledDotProductAttention(q, k, v [, mask]) -> out, lse:
 *   out = softmax(scale q k^T + mask) v   over the last axis of the scores,
 * as torch.nn.functional.scaled_dot_product_attention (bool mask: true
 * keeps; a float mask is added; causal keeps key j <= query i, top-left
 * aligned as torch's is_causal; scale defaults to 1 / sqrt(d)), and lse,
 * the log of each score row's softmax denominator (log-sum-exp of the
 * scaled, masked scores), which the gradient op (attention_grad.c) reads
 * to recompute the probabilities without the row statistics.
 *
 * FlashAttention's tiling on the CPU: the query rows are cut into blocks
 * of ATTN_BLOCK_ROWS; for a block, the keys are visited in blocks of
 * KEY_BLOCK, the scores of that tile computed by one GEMM (alpha = scale),
 * masked, and folded into a running row maximum m, a running sum l of
 * exp(s - m) and an accumulator of exp(s - m) v (rescaled by exp(m_old -
 * m) when the maximum grows: the online softmax). Extra memory is one
 * tile of scores per thread, whatever T; causal tiles above the diagonal
 * are never computed. Blocks of rows (of every batch) are split over the
 * worker pool; a row's result does not depend on the thread count. The
 * float32 products of tiles up to 256 keys are attention_tile.c's register
 * blocks (only a causal tile's lower part; OpenBLAS's packing and call
 * costs were half the op at T = 64), larger ones and float64 OpenBLAS's;
 * float32 exponentials mf_expf_fast (about 1 ulp), float64 libm.
 * The output equals the composition matmul, scale, mask, softmax, matmul
 * to float32 rounding (tests/lua/test_attention.lua).
 *
 * Dropout (attribute scalar[1], the rate): the weights of a tile are
 * dropped after they enter the row sum l (the softmax is of the undropped
 * scores) and before the product with v; the keep decision of (b, i, j)
 * comes from a Philox key (mf_attn_keep_row), drawn per run as a random
 * op's and given out as a third output, so the gradient op redraws the
 * same mask tile by tile. */
#include "attention.h"

#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "../parallel.h"
#include "../rng.h"
#include "common.h"
#include "fast_mathf.h"
#include "reduce_walk.h"

/* Keys per tile: a 64 x 256 float32 tile is 64 KiB, in L2 with its q and k. */
#define KEY_BLOCK 256
#define SHAPE_BUF 96

/* ---- checks and shapes ------------------------------------------------------------ */

double mf_attn_scale(const MfAttrs *a, int64_t d)
{
    return a->scalar[0] != 0 ? a->scalar[0] : 1 / sqrt((double)(d > 0 ? d : 1));
}

/* Both known and different. */
static bool differ(int64_t a, int64_t b)
{
    return a >= 0 && b >= 0 && a != b;
}

static MfStatus shape_error(const MfOpCall *c, const char *what, MfTensor *const *in)
{
    char s[3][SHAPE_BUF];
    for (int i = 0; i < 3; i++)
        mf_shape_str(in[i]->rank, in[i]->shape, s[i], SHAPE_BUF);
    return mf_err_set(MF_ESHAPE, "%s: %s; expected q (..., Tq, d), k (..., Tk, d), v (..., Tk, "
                      "dv), got q %s, k %s, v %s", op_api(c), what, s[0], s[1], s[2]);
}

/* The batch axes of q, k and v (all but the last two) broadcast together. */
static MfStatus batch_axes(const MfOpCall *c, MfTensor *const *in, int *nb, int64_t *bshape)
{
    int r = 0;
    int64_t s[MF_MAX_RANK];
    for (int i = 0; i < 3; i++) {
        int64_t tmp[MF_MAX_RANK];
        int rt = 0;
        if (mf_broadcast_shapes(op_api(c), r, s, in[i]->rank - 2, in[i]->shape, &rt, tmp) !=
            MF_OK) {
            mf_err_clear();
            return shape_error(c, "their batch axes do not broadcast", in);
        }
        r = rt;
        for (int k = 0; k < r; k++)
            s[k] = tmp[k];
    }
    *nb = r;
    for (int k = 0; k < r; k++)
        bshape[k] = s[k];
    return MF_OK;
}

/* The mask: bool or q's float dtype, broadcastable to (batch..., Tq, Tk). */
static MfStatus check_mask(const MfOpCall *c, const MfTensor *q, const MfTensor *mask, int nb,
                           const int64_t *bshape, int64_t tq, int64_t tk)
{
    if (mask->dtype != MF_BOOL && mask->dtype != q->dtype)
        return mf_err_set(MF_EDTYPE, "%s: mask must be bool (true keeps a score) or %s (added "
                          "to the scores), got %s", op_api(c), mf_dtype_name(q->dtype),
                          mf_dtype_name(mask->dtype));
    int64_t want[MF_MAX_RANK], got[MF_MAX_RANK];
    for (int k = 0; k < nb; k++)
        want[k] = bshape[k];
    want[nb] = tq;
    want[nb + 1] = tk;
    int r = 0;
    bool ok = mask->rank <= nb + 2 &&
              mf_broadcast_shapes(op_api(c), nb + 2, want, mask->rank, mask->shape, &r, got) ==
                  MF_OK;
    for (int k = 0; ok && k < r; k++)
        ok = !differ(got[k], want[k]);
    if (ok)
        return MF_OK;
    mf_err_clear();
    char sm[SHAPE_BUF], sw[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "%s: mask of shape %s does not broadcast to the scores' shape "
                      "%s (batch..., Tq, Tk)", op_api(c),
                      mf_shape_str(mask->rank, mask->shape, sm, sizeof sm),
                      mf_shape_str(nb + 2, want, sw, sizeof sw));
}

MfStatus mf_attn_check(const MfOpCall *c, MfTensor *const *in, const MfTensor *mask, int *nb,
                       int64_t *bshape)
{
    const MfTensor *q = in[0], *k = in[1], *v = in[2];
    MfStatus st = mf_check_dtype(c, q, MF_FLOATS, "a float dtype (float32 or float64) for q");
    if (st == MF_OK && (k->dtype != q->dtype || v->dtype != q->dtype))
        st = mf_err_set(MF_EDTYPE, "%s: q, k and v must have one dtype, got %s, %s and %s",
                        op_api(c), mf_dtype_name(q->dtype), mf_dtype_name(k->dtype),
                        mf_dtype_name(v->dtype));
    if (st != MF_OK)
        return st;
    if (q->rank < 2 || k->rank < 2 || v->rank < 2)
        return shape_error(c, "each needs rank 2 or more", in);
    if (differ(q->shape[q->rank - 1], k->shape[k->rank - 1]))
        return shape_error(c, "q and k differ in their last axis (d)", in);
    if (differ(k->shape[k->rank - 2], v->shape[v->rank - 2]))
        return shape_error(c, "k and v differ in their number of keys (Tk)", in);
    st = batch_axes(c, in, nb, bshape);
    if (st != MF_OK)
        return st;
    double scale = c->attrs->scalar[0], rate = c->attrs->scalar[1];
    if (!isfinite(scale))
        return mf_err_set(MF_EARG, "%s: scale must be a finite number (0: 1 / sqrt(d)), got %g",
                          op_api(c), scale);
    if (!(rate >= 0 && rate <= 1))
        return mf_err_set(MF_EARG, "%s: dropout must be a rate in [0, 1] (the fraction of "
                          "weights dropped), got %g", op_api(c), rate);
    int64_t tk = k->shape[k->rank - 2] >= 0 ? k->shape[k->rank - 2] : v->shape[v->rank - 2];
    return mask ? check_mask(c, q, mask, *nb, bshape, q->shape[q->rank - 2], tk) : MF_OK;
}

static MfStatus attn_infer(MfOpCall *c)
{
    int nb = 0;
    int64_t bshape[MF_MAX_RANK];
    MfTensor *const *in = c->inputs;
    MfStatus st = mf_attn_check(c, in, c->ninputs > 3 ? in[3] : NULL, &nb, bshape);
    if (st != MF_OK)
        return st;
    const MfTensor *q = in[0], *v = in[2];
    for (int o = 0; o < 2; o++) {
        MfTensorSpec *s = &c->out[o];
        s->dtype = q->dtype;
        s->rank = nb + 2 - o;
        for (int k = 0; k < nb; k++)
            s->shape[k] = bshape[k];
        s->shape[nb] = q->shape[q->rank - 2];
    }
    c->out[0].shape[nb + 1] = v->shape[v->rank - 1];
    c->noutputs = 2;
    if (c->attrs->scalar[1] > 0)   /* the dropout mask's key, for the gradient op */
        c->out[c->noutputs++] = (MfTensorSpec){.dtype = MF_INT64, .rank = 0};
    return MF_OK;
}

/* ---- the plan ------------------------------------------------------------------------ */

/* The offsets of 't' read at the output's batch axes with its own last
 * two axes 'rows, cols', into off[ATTN_OPERANDS * b + which], and its row
 * stride (the mask's row and column strides). */
static void batch_offsets(AttnPlan *p, const MfTensor *t, int which, int64_t rows,
                          int64_t cols)
{
    int nb = p->nb;
    int64_t shape[MF_MAX_RANK], strides[MF_MAX_RANK];
    for (int k = 0; k < nb; k++)
        shape[k] = p->bshape[k];
    shape[nb] = rows;
    shape[nb + 1] = cols;
    mf_broadcast_strides(t, nb + 2, shape, strides);
    for (int64_t b = 0; b < p->nbatch; b++) {
        int64_t rest = b, off = 0;
        for (int k = nb - 1; k >= 0; k--) {
            off += (rest % p->bshape[k]) * strides[k];
            rest /= p->bshape[k];
        }
        p->off[ATTN_OPERANDS * b + which] = off;
    }
    /* one row: any stride reads it, but BLAS wants one of at least cols */
    p->rs[which] = rows > 1 ? strides[nb] : cols;
    if (which == ATTN_MASK) {
        p->mrs = strides[nb];
        p->mcs = strides[nb + 1];
    }
}

/* Rows the tile products read where they are: the last axis contiguous,
 * rows apart by at least their length (BLAS's lda), no negative strides. */
static bool rows_in_place(const MfTensor *t)
{
    int r = t->rank;
    if (t->shape[r - 1] < 1 || (t->shape[r - 1] > 1 && t->strides[r - 1] != 1) ||
        (t->shape[r - 2] > 1 && t->strides[r - 2] < t->shape[r - 1]))
        return false;
    for (int k = 0; k < r; k++)
        if (t->strides[k] < 0)
            return false;
    return true;
}

/* Operand 'which' from 't': in place or a contiguous copy, laid out. */
static MfStatus plan_operand(AttnPlan *p, MfTensor *t, int which, int64_t rows, int64_t cols)
{
    const char **data[ATTN_HELD] = {&p->q, &p->k, &p->v, &p->mask, &p->dout, &p->o};
    if (which != ATTN_MASK && rows_in_place(t)) {
        mf_tensor_retain(t);
        p->hold[which] = t;
    } else if (!(p->hold[which] = mf_tensor_contiguous(t))) {
        return mf_err_nomem(p->op, (unsigned long long)mf_tensor_numel(t) *
                                       mf_dtype_size(t->dtype));
    }
    *data[which] = mf_tensor_data(p->hold[which]);
    batch_offsets(p, p->hold[which], which, rows, cols);
    return MF_OK;
}

void mf_attn_plan_free(AttnPlan *p)
{
    for (int i = 0; i < ATTN_HELD; i++)
        mf_tensor_release(p->hold[i]);
    mf_free(p->off);
    p->off = NULL;
}

MfStatus mf_attn_plan(const MfOpCall *c, MfTensor *const *in, MfTensor *mask, AttnPlan *p)
{
    *p = (AttnPlan){.op = op_api(c)};
    MfStatus st = mf_attn_check(c, in, mask, &p->nb, p->bshape);
    if (st != MF_OK)
        return st;
    p->dtype = in[0]->dtype;
    p->nbatch = 1;
    for (int k = 0; k < p->nb; k++)
        p->nbatch *= p->bshape[k];
    p->tq = in[0]->shape[in[0]->rank - 2];
    p->d = in[0]->shape[in[0]->rank - 1];
    p->tk = in[1]->shape[in[1]->rank - 2];
    p->dv = in[2]->shape[in[2]->rank - 1];
    p->scale = mf_attn_scale(c->attrs, p->d);
    p->causal = c->attrs->causal;
    p->mask_kind = !mask ? ATTN_NO_MASK : mask->dtype == MF_BOOL ? ATTN_BOOL_MASK : ATTN_ADD_MASK;
    p->rate = c->attrs->scalar[1];
    p->keep_scale = p->rate < 1 ? 1 / (1 - p->rate) : 0;
    size_t n = (size_t)(p->nbatch > 0 ? p->nbatch : 1) * ATTN_OPERANDS;
    if (!(p->off = mf_calloc(n, sizeof *p->off)))
        return mf_err_nomem(p->op, (unsigned long long)(n * sizeof *p->off));
    MfTensor *src[4] = {in[0], in[1], in[2], mask};
    int64_t rows[4] = {p->tq, p->tk, p->tk, p->tq}, cols[4] = {p->d, p->d, p->dv, p->tk};
    for (int i = 0; i < 4 && st == MF_OK; i++)
        if (src[i])
            st = plan_operand(p, src[i], i, rows[i], cols[i]);
    if (st != MF_OK)
        mf_attn_plan_free(p);
    return st;
}

MfStatus mf_attn_plan_dout(AttnPlan *p, MfTensor *out, MfTensor *dout)
{
    MfStatus st = plan_operand(p, out, ATTN_O, p->tq, p->dv);
    return st == MF_OK ? plan_operand(p, dout, ATTN_DOUT, p->tq, p->dv) : st;
}

void mf_attn_plan_output(AttnPlan *p, const MfTensor *t, int which)
{
    bool queries = which == ATTN_O || which == ATTN_DQ;
    batch_offsets(p, t, which, queries ? p->tq : p->tk,
                  which == ATTN_O || which == ATTN_DV ? p->dv : p->d);
}

/* ---- the outputs --------------------------------------------------------------------- */

/* Whether q's heads are interleaved: q (..., H, T, d) is the transpose of
 * a (..., T, H, d) tensor, as the heads a model cuts from one product (its
 * head axis steps less than its rows), and spec 's' has q's batch axes. */
static bool heads_interleaved(const MfTensor *q, const MfTensorSpec *s)
{
    int r = q->rank;
    if (r < 3 || s->rank != r)
        return false;
    for (int k = 0; k < r - 2; k++)
        if (q->shape[k] != s->shape[k] || q->strides[k] < 0)
            return false;
    return q->shape[r - 3] > 1 && q->shape[r - 2] > 1 && q->strides[r - 3] < q->strides[r - 2];
}

/* A new tensor of spec 's' whose last batch axis and rows are stored the
 * other way round: (..., T, H, dv) in memory, seen as (..., H, T, dv). */
static MfTensor *new_interleaved(const MfTensorSpec *s)
{
    int r = s->rank;
    int64_t shape[MF_MAX_RANK], strides[MF_MAX_RANK], st;
    for (int k = 0; k < r; k++)
        shape[k] = s->shape[k];
    shape[r - 3] = s->shape[r - 2];
    shape[r - 2] = s->shape[r - 3];
    MfTensor *base = mf_tensor_new(s->dtype, r, shape), *view = NULL;
    if (!base)
        return NULL;
    for (int k = 0; k < r; k++)
        strides[k] = base->strides[k];
    st = strides[r - 3];
    strides[r - 3] = strides[r - 2];
    strides[r - 2] = st;
    view = mf_tensor_view(base, r, s->shape, strides, 0);
    mf_tensor_release(base);
    return view;
}

MfStatus mf_attn_new_outputs(const MfOpCall *c, MfTensor **outs, int first)
{
    for (int i = first; i < c->noutputs; i++) {
        const MfTensorSpec *s = &c->out[i];
        if (!(outs[i] = mf_tensor_new(s->dtype, s->rank, s->shape))) {
            for (int k = 0; k < i; k++) {
                mf_tensor_release(outs[k]);
                outs[k] = NULL;
            }
            mf_err_prefix("%s", op_api(c));
            return MF_ENOMEM;
        }
    }
    return MF_OK;
}

/* The forward op's outputs: out in q's layout when q's heads are
 * interleaved (then the transpose a model makes back to (B, T, H, dv) is
 * contiguous and merging the heads is a view, not a copy, as PyTorch's
 * flash attention returns its output), else contiguous; lse and the
 * dropout key contiguous. */
static MfStatus attn_outputs(const MfOpCall *c, MfTensor **outs)
{
    if (!heads_interleaved(c->inputs[0], &c->out[0]))
        return mf_attn_new_outputs(c, outs, 0);
    if (!(outs[0] = new_interleaved(&c->out[0]))) {
        mf_err_prefix("%s", op_api(c));
        return MF_ENOMEM;
    }
    return mf_attn_new_outputs(c, outs, 1);
}

/* ---- tiles ---------------------------------------------------------------------------- */

void mf_attn_gemm(MfDType dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                  int64_t ldc, AttnBand band)
{
    enum CBLAS_TRANSPOSE a = ta ? CblasTrans : CblasNoTrans, b = tb ? CblasTrans : CblasNoTrans;
    if (M == 0 || N == 0)
        return;
    if (dt == MF_FLOAT32 && mf_attn_tile_fits(tb, N, K)) {
        mf_attn_tile_gemm(ta, tb, M, N, K, (float)alpha, A, lda, B, ldb, beta != 0, C, ldc, band);
        return;
    }
    if (beta == 0 && ldc == N) {   /* a memset: OpenBLAS's beta pass is slower on tiles */
        memset(C, 0, (size_t)(M * N) * mf_dtype_size(dt));
        beta = 1;
    }
    if (dt == MF_FLOAT32)
        cblas_sgemm(CblasRowMajor, a, b, (int)M, (int)N, (int)K, (float)alpha, A, (int)lda, B,
                    (int)ldb, (float)beta, C, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, a, b, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb,
                    beta, C, (int)ldc);
}

/* The causal and given masks on a tile of scores. */
#define MASK_TILE(T, SUF)                                                                 \
    static void mask_tile_##SUF(const AttnPlan *p, int64_t b, int64_t i0, int64_t ni,     \
                                int64_t j0, int64_t nj, T *S)                             \
    {                                                                                     \
        int64_t at = p->mask ? mf_attn_off(p, b, ATTN_MASK) : 0;                          \
        const T *fm = (const T *)p->mask + at;                                            \
        const uint8_t *bm = (const uint8_t *)p->mask + at;                                \
        for (int64_t r = 0; r < ni; r++) {                                                \
            T *s = S + r * nj;                                                            \
            int64_t mrow = (i0 + r) * p->mrs, n = mf_attn_row_keys(p, i0 + r, j0, nj);    \
            if (p->mask_kind == ATTN_ADD_MASK)                                            \
                for (int64_t c = 0; c < n; c++)                                           \
                    s[c] += fm[mrow + (j0 + c) * p->mcs];                                 \
            else if (p->mask_kind == ATTN_BOOL_MASK)                                      \
                for (int64_t c = 0; c < n; c++)                                           \
                    s[c] = bm[mrow + (j0 + c) * p->mcs] ? s[c] : -(T)INFINITY;            \
            for (int64_t c = n; c < nj; c++) /* not computed past n (the band) */         \
                s[c] = -(T)INFINITY;                                                      \
        }                                                                                 \
    }

MASK_TILE(float, f32)
MASK_TILE(double, f64)

void mf_attn_scores(const AttnPlan *p, int64_t b, int64_t i0, int64_t ni, int64_t j0,
                    int64_t nj, void *S)
{
    size_t es = mf_dtype_size(p->dtype);
    const char *q = p->q + (size_t)(mf_attn_off(p, b, ATTN_Q) + i0 * p->rs[ATTN_Q]) * es;
    const char *k = p->k + (size_t)(mf_attn_off(p, b, ATTN_K) + j0 * p->rs[ATTN_K]) * es;
    mf_attn_gemm(p->dtype, false, true, ni, nj, p->d, p->scale, q, p->rs[ATTN_Q], k,
                 p->rs[ATTN_K], 0, S, nj,
                 mf_attn_band(p, ATTN_BAND_COLS, i0 - j0));
    if (p->dtype == MF_FLOAT32)
        mask_tile_f32(p, b, i0, ni, j0, nj, S);
    else
        mask_tile_f64(p, b, i0, ni, j0, nj, S);
}

/* ---- dropout ------------------------------------------------------------------------- */

void mf_attn_keep_row(const AttnPlan *p, int64_t b, int64_t i, int64_t j0, int64_t nj,
                      uint8_t *keep)
{
    uint64_t e = (uint64_t)((b * p->tq + i) * p->tk + j0), per = p->dtype == MF_FLOAT32 ? 4 : 2;
    uint64_t block = e / per;
    uint32_t w[4];
    mf_rng_block(p->key, block, 0, w);
    float ratef = (float)p->rate;
    for (int64_t c = 0; c < nj; c++, e++) {
        if (e / per != block)
            mf_rng_block(p->key, block = e / per, 0, w);
        unsigned at = (unsigned)(e % per);
        keep[c] = per == 4 ? mf_rng_u01f(w[at]) >= ratef
                           : mf_rng_u01(w[2 * at], w[2 * at + 1]) >= p->rate;
    }
}

/* The weights of a tile (ni x nj) times 1 / (1 - rate) where kept, 0 where
 * dropped. */
#define DROP_TILE(T, SUF)                                                                 \
    static void drop_tile_##SUF(const AttnPlan *p, int64_t b, int64_t i0, int64_t ni,     \
                                int64_t j0, int64_t nj, T *S)                             \
    {                                                                                     \
        uint8_t keep[KEY_BLOCK];                                                          \
        T scale = (T)p->keep_scale;                                                       \
        for (int64_t r = 0; r < ni; r++) {                                                \
            mf_attn_keep_row(p, b, i0 + r, j0, nj, keep);                                 \
            for (int64_t c = 0; c < nj; c++)                                              \
                S[r * nj + c] = keep[c] ? S[r * nj + c] * scale : 0;                      \
        }                                                                                 \
    }

DROP_TILE(float, f32)
DROP_TILE(double, f64)

/* ---- the forward pass: online softmax over key tiles ------------------------------- */

static inline float exp_f32(float x)
{
    return mf_expf_fast(x);
}

/* The row maximum in 16 lanes (the loop vectorises). */
static float row_max_f32(const float *x, int64_t n, float m)
{
    float lanes[16];
    int64_t i = 0;
    for (int j = 0; j < 16; j++)
        lanes[j] = m;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
    for (int w = 8; w >= 1; w /= 2)   /* halves, not a 16-step chain: short rows */
        for (int j = 0; j < w; j++)
            lanes[j] = lanes[j + w] > lanes[j] ? lanes[j + w] : lanes[j];
    m = lanes[0];
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

static double row_max_f64(const double *x, int64_t n, double m)
{
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* A row's sum: 8 float lanes (the loop vectorises), then halves in
 * double (not an 8-step chain: rows are short). */
static double row_sum_f32(const float *x, int64_t n)
{
    float lanes[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            lanes[j] += x[i + j];
    double s = 0, h[4];
    for (; i < n; i++)
        s += (double)x[i];
    for (int j = 0; j < 4; j++)
        h[j] = (double)lanes[j] + (double)lanes[j + 4];
    return s + ((h[0] + h[2]) + (h[1] + h[3]));
}

static double row_sum_f64(const double *x, int64_t n)
{
    return mf_sum_row_f64(x, n);
}

/* One tile (rows i0.., keys j0..) folded into the row statistics m, l
 * (running max, running sum) and the output rows o (ni x dv, unnormalised):
 * S becomes exp(S - m), 0 where S is -inf (both sides computed: the loop
 * vectorises; a masked score takes exp(0), as exp(-inf) through
 * mf_expf_fast's clamp would be a slow subnormal). Past a row's causal
 * keys (rounded up to whole vectors, mf_attn_row_lanes) nothing is
 * computed: zeros. */
#define FOLD_TILE(T, SUF, EXPF)                                                           \
    static void fold_tile_##SUF(const AttnPlan *p, int64_t i0, int64_t j0, T *S,          \
                                int64_t ni, int64_t nj, T *m, double *l, T *o)            \
    {                                                                                     \
        int64_t dv = p->dv, ldo = p->rs[ATTN_O];                                          \
        for (int64_t r = 0; r < ni; r++) {                                                \
            int64_t n = mf_attn_row_lanes(mf_attn_row_keys(p, i0 + r, j0, nj), nj);       \
            T *s = S + r * nj, mx = (T)row_max_##SUF(s, n, m[r]);                         \
            memset(s + n, 0, (size_t)(nj - n) * sizeof *s);                               \
            if (mx == -(T)INFINITY) { /* nothing kept yet: adds nothing */                \
                memset(s, 0, (size_t)n * sizeof *s);                                      \
                continue;                                                                 \
            }                                                                             \
            for (int64_t c = 0; c < n; c++) {                                             \
                bool out = s[c] == -(T)INFINITY; /* exp(0), not a subnormal: then 0 */  \
                T e = EXPF(out ? 0 : s[c] - mx);                                          \
                s[c] = out ? 0 : e;                                                       \
            }                                                                             \
            if (m[r] != -(T)INFINITY && m[r] != mx) { /* o is 0 before the first */     \
                T alpha = EXPF(m[r] - mx);                                                \
                for (int64_t c = 0; c < dv; c++)                                          \
                    o[r * ldo + c] *= alpha;                                              \
                l[r] *= (double)alpha;                                                    \
            }                                                                             \
            l[r] += row_sum_##SUF(s, n);                                                  \
            m[r] = mx;                                                                    \
        }                                                                                 \
    }

FOLD_TILE(float, f32, exp_f32)
FOLD_TILE(double, f64, exp)

/* o /= l and lse = m + log(l); a row with no kept score divides 0 by 0
 * (NaN, as softmax of a row of -inf). o's rows are ldo apart. */
#define FINISH_ROWS(T, SUF)                                                               \
    static void finish_rows_##SUF(T *o, int64_t ldo, T *lse, const T *m, const double *l, \
                                  int64_t ni, int64_t dv)                                 \
    {                                                                                     \
        for (int64_t r = 0; r < ni; r++) {                                                \
            T inv = (T)(1 / l[r]);                                                        \
            for (int64_t c = 0; c < dv; c++)                                              \
                o[r * ldo + c] = l[r] > 0 ? o[r * ldo + c] * inv : (T)NAN;                \
            lse[r] = (T)((double)m[r] + log(l[r]));                                       \
        }                                                                                 \
    }

FINISH_ROWS(float, f32)
FINISH_ROWS(double, f64)

typedef struct FwdJob {
    const AttnPlan *p;
    char *out, *lse;
    int64_t blocks;          /* row blocks per batch */
    atomic_bool nomem;
} FwdJob;

/* Row block 'u' (batch u / blocks, block u % blocks) with scratch 'S' and
 * the row statistics 'm' (typed) and 'l'. */
static void fwd_block(FwdJob *j, int64_t u, void *S, void *m, double *l)
{
    const AttnPlan *p = j->p;
    size_t es = mf_dtype_size(p->dtype);
    int64_t b = u / j->blocks, i0 = (u % j->blocks) * ATTN_BLOCK_ROWS;
    int64_t ni = p->tq - i0 < ATTN_BLOCK_ROWS ? p->tq - i0 : ATTN_BLOCK_ROWS;
    int64_t ldo = p->rs[ATTN_O];
    char *o = j->out + (size_t)(mf_attn_off(p, b, ATTN_O) + i0 * ldo) * es;
    char *lse = j->lse + (size_t)(b * p->tq + i0) * es;
    for (int64_t r = 0; r < ni; r++) {
        l[r] = 0;
        if (p->dtype == MF_FLOAT32)
            ((float *)m)[r] = -INFINITY;
        else
            ((double *)m)[r] = -INFINITY;
    }
    int64_t keys = mf_attn_keys(p, i0, ni);
    for (int64_t r = 0; keys == 0 && r < ni; r++)   /* else the first tile's P v writes o */
        memset(o + (size_t)(r * ldo) * es, 0, (size_t)p->dv * es);
    const char *v = p->v + (size_t)mf_attn_off(p, b, ATTN_V) * es;
    for (int64_t j0 = 0; j0 < keys; j0 += KEY_BLOCK) {
        int64_t nj = keys - j0 < KEY_BLOCK ? keys - j0 : KEY_BLOCK;
        mf_attn_scores(p, b, i0, ni, j0, nj, S);
        if (p->dtype == MF_FLOAT32)
            fold_tile_f32(p, i0, j0, S, ni, nj, m, l, (float *)o);
        else
            fold_tile_f64(p, i0, j0, S, ni, nj, m, l, (double *)o);
        if (p->rate > 0 && p->dtype == MF_FLOAT32)   /* after the sum l: P is undropped */
            drop_tile_f32(p, b, i0, ni, j0, nj, S);
        else if (p->rate > 0)
            drop_tile_f64(p, b, i0, ni, j0, nj, S);
        mf_attn_gemm(p->dtype, false, false, ni, p->dv, nj, 1, S, nj,
                     v + (size_t)(j0 * p->rs[ATTN_V]) * es, p->rs[ATTN_V], j0 > 0, o, ldo,
                     mf_attn_band(p, ATTN_BAND_KEND, i0 - j0));
    }
    if (p->dtype == MF_FLOAT32)
        finish_rows_f32((float *)o, ldo, (float *)lse, m, l, ni, p->dv);
    else
        finish_rows_f64((double *)o, ldo, (double *)lse, m, l, ni, p->dv);
}

static void fwd_blocks(void *ctx, int64_t begin, int64_t end)
{
    FwdJob *j = ctx;
    size_t es = mf_dtype_size(j->p->dtype);
    size_t bytes = (size_t)(ATTN_BLOCK_ROWS * KEY_BLOCK + ATTN_BLOCK_ROWS) * es +
                   ATTN_BLOCK_ROWS * sizeof(double);
    char *scratch = mf_alloc(bytes);
    if (!scratch) {
        atomic_store(&j->nomem, true);
        return;
    }
    void *m = scratch + (size_t)(ATTN_BLOCK_ROWS * KEY_BLOCK) * es;
    double *l = (double *)(scratch + (size_t)(ATTN_BLOCK_ROWS * KEY_BLOCK + ATTN_BLOCK_ROWS) * es);
    for (int64_t u = begin; u < end; u++)
        fwd_block(j, u, scratch, m, l);
    mf_dealloc(scratch, bytes);
}

static MfStatus attn_forward(const MfOpCall *c, MfTensor **outs)
{
    AttnPlan p;
    MfStatus st = mf_attn_plan(c, c->inputs, c->ninputs > 3 ? c->inputs[3] : NULL, &p);
    if (st != MF_OK)
        return st;
    if ((st = attn_outputs(c, outs)) != MF_OK) {
        mf_attn_plan_free(&p);
        return st;
    }
    mf_attn_plan_output(&p, outs[0], ATTN_O);
    if (p.rate > 0) {   /* a fresh key per graph run (core/rng.h), output for the gradient */
        st = mf_rng_run_seed(p.op, c->attrs->seed, c->attrs->runs, &p.key);
        if (st == MF_OK)
            *(int64_t *)mf_tensor_data(outs[2]) = (int64_t)p.key;
    }
    int64_t blocks = (p.tq + ATTN_BLOCK_ROWS - 1) / ATTN_BLOCK_ROWS;
    FwdJob j = {&p, mf_tensor_data(outs[0]), mf_tensor_data(outs[1]), blocks, false};
    int64_t units = p.nbatch * blocks;
    if (st == MF_OK)
        st = mf_parallel_blas_buffers(p.op, mf_parallel_threads());
    if (st == MF_OK && units > 0)
        mf_parallel_for(units, 1, fwd_blocks, &j);
    mf_attn_plan_free(&p);
    if (st == MF_OK && atomic_load(&j.nomem))
        st = mf_err_nomem(p.op, (unsigned long long)ATTN_BLOCK_ROWS * KEY_BLOCK * 8);
    for (int i = 0; st != MF_OK && i < c->noutputs; i++) {
        mf_tensor_release(outs[i]);
        outs[i] = NULL;
    }
    return st;
}

/* ---- the op and its face ------------------------------------------------------------ */

/* Two GEMMs of 2 Tq Tk d FLOPs (half of them under a causal mask). */
static MfCost attn_cost(const MfOpCall *c)
{
    const MfTensor *q = c->inputs[0], *k = c->inputs[1];
    double d = (double)q->shape[q->rank - 1], keys = (double)k->shape[k->rank - 2];
    double rows = d > 0 ? (double)mf_tensor_numel(q) / d : 0;
    double flops = 4 * rows * keys * d * (c->attrs->causal ? 0.5 : 1);
    return (MfCost){.flops = flops, .bytes = 4 * (double)mf_tensor_numel(q) *
                                             (double)mf_dtype_size(q->dtype)};
}

/* The face returns the attention alone; the row log-sum-exps (and the
 * dropout key) are the gradient's. With dropout, the op seed is resolved
 * here, once per call, as mf.nn.dropout resolves its own: the global seed
 * with the option 'seed', or the next of the global sequence. */
static MfStatus attn_entry(int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                           MfTensor **outs, int *noutputs)
{
    MfAttrs a = *attrs;
    double rate = a.scalar[1];
    if (rate > 0 && rate <= 1) {
        int64_t given = (int64_t)a.seed;
        a.seed = mf_rng_op_seed(given != (int64_t)ATTN_NO_SEED, given);
    }
    MfStatus st = mf_op_call(MF_OP_ATTENTION, ninputs, inputs, &a, outs, noutputs);
    for (int i = 1; st == MF_OK && i < *noutputs; i++) {
        mf_tensor_release(outs[i]);
        outs[i] = NULL;
    }
    if (st == MF_OK)
        *noutputs = 1;
    return st;
}

static const MfAttrDef attn_attrs[] = {
    {"causal", MF_ATTR_BOOL, 0, MF_ATTR_AT(causal), 0, 0, NULL, NULL},
    {"scale", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[0]), 0, 0, NULL, NULL},
    {"dropout", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[1]), 0, 0, NULL, NULL},
    {"seed", MF_ATTR_INT, 0, MF_ATTR_AT(seed), 0, ATTN_NO_SEED, NULL, NULL},
};

const MfOpDesc mf_desc_attention = {
    .name = "ScaledDotProductAttention", .api = "scaled_dot_product_attention", .arity = 3,
    .flags = MF_OP_VARIADIC | MF_OP_RANDOM | MF_OP_VIEW, .infer = attn_infer,
    .forward = attn_forward,
    .backward = mf_attn_backward, .cost = attn_cost, .attrs = attn_attrs,
    .nattrs = MF_NATTRS(attn_attrs), .lua = "nn.scaled_dot_product_attention",
    .inputs = "q, k, v [, mask]", .optional_inputs = 1, .entry = attn_entry,
    .summary = "softmax(scale q k^T + mask) v, one flash-tiled pass per block of query rows",
    .topic = "nn",
    .grad_note = "dq, dk, dv (and a float mask's) by ScaledDotProductAttentionGrad, "
                 "FlashAttention-2's backward from the saved row log-sum-exps; no second "
                 "derivatives",
    .details =
        "torch.nn.functional.scaled_dot_product_attention: q (..., Tq, d), k (..., Tk, d), v "
        "(..., Tk, dv) give (..., Tq, dv); the batch axes broadcast as matmul's. mask "
        "(positional, or {mask = m}): a bool tensor, true keeps a score (torch's bool "
        "attn_mask), or a float tensor of q's dtype added to the scores; it broadcasts to "
        "(..., Tq, Tk). causal keeps key j <= query i (top-left aligned, torch's is_causal). "
        "scale defaults to 1 / sqrt(d) (0 means the default). A row whose scores are all "
        "masked gives NaN, as softmax of -inf does. The scores are computed in tiles of 64 "
        "query rows and 256 keys with an online softmax (FlashAttention), so no (Tq, Tk) "
        "matrix is made; the tiles above the diagonal of a causal mask are skipped. "
        "When q holds the heads of a (..., T, H, d) tensor transposed (as a model cuts "
        "them from one product), the output is stored as (..., T, H, dv), so transposing "
        "it back and merging the heads is a view, and the gradients of q, k and v cut from "
        "one product are written as thirds of one block laid out as that product, so its "
        "gradient (their concat) is a view too. "
        "Equal to mf.matmul, scale, mask, mf.nn.softmax, mf.matmul to float32 rounding. "
        "dropout (a rate in [0, 1], default 0) drops attention weights after the softmax "
        "and scales the kept ones by 1 / (1 - rate), as torch's dropout_p and Keras's "
        "attention dropout (rate 1 gives zeros, as torch); the mask is the one "
        "mf.nn.dropout(weights, rate, {seed = seed}) draws on the (..., Tq, Tk) weights, "
        "seeded by the same rule (seed: the op seed; none: the next of the global "
        "sequence), fresh on every call without a seed and on every graph run or traced "
        "call, and redrawn tile by tile (no mask is stored): the gradient uses the mask "
        "of its own run. Train with dropout, not at inference.",
    .example =
        "q = mf.tensor{{1, 0}, {0, 1}}\n"
        "mf.nn.scaled_dot_product_attention(q, q, mf.tensor{{1}, {3}}, {causal = true, "
        "scale = 0.5})\n"
        "--> {{1}, {2.2449}}",
};
