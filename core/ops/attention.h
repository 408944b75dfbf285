/* attention.h — what ScaledDotProductAttention (attention.c) and its
 * gradient op (attention_grad.c) share: the checked call laid out as
 * batches of contiguous matrices, and the score block both passes compute
 * (scale q k^T, the causal and given masks). */
#ifndef MF_OPS_ATTENTION_H
#define MF_OPS_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "../op.h"

/* What the mask input is: none, bool (true keeps, as torch's bool
 * attn_mask), or added to the scores (a float mask of q's dtype). */
typedef enum { ATTN_NO_MASK, ATTN_BOOL_MASK, ATTN_ADD_MASK } AttnMaskKind;

/* The operands a plan lays out by rows: q, k, v, the mask, the gradient
 * op's dout and the output o (the forward op writes it, the gradient op
 * reads it), then what the gradient op writes, dq, dk, dv. Each has its
 * batch offsets and row stride; the first ATTN_HELD are read (held). */
enum { ATTN_Q, ATTN_K, ATTN_V, ATTN_MASK, ATTN_DOUT, ATTN_O, ATTN_HELD,
       ATTN_DQ = ATTN_HELD, ATTN_DK, ATTN_DV, ATTN_OPERANDS };

/* One call: q (batch..., tq, d), k (batch..., tk, d), v (batch..., tk, dv),
 * their batch axes broadcast to the output's 'nbatch' batches. q, k, v and
 * dout are read in place when their rows are (the last axis contiguous:
 * the heads of a (B, T, H, hd) tensor transposed to (B, H, T, hd), say),
 * else from a contiguous copy. */
typedef struct AttnPlan {
    const char *op;             /* for messages */
    MfDType dtype;
    int64_t nbatch, tq, tk, d, dv;
    double scale;
    bool causal;
    AttnMaskKind mask_kind;
    double rate;                /* dropout on the weights (0: none) */
    double keep_scale;          /* 1 / (1 - rate) for a kept weight; 0 at rate 1 */
    uint64_t key;               /* the dropout mask's Philox key for this run */
    int nb;                     /* the output's batch axes */
    int64_t bshape[MF_MAX_RANK];
    MfTensor *hold[ATTN_HELD];  /* q, k, v, mask, dout, o or their copies (owned) */
    const char *q, *k, *v, *mask, *dout, *o;
    int64_t *off;               /* off[ATTN_OPERANDS * b + operand]: batch b's element offset */
    int64_t rs[ATTN_OPERANDS];  /* the row strides of q, k, v, dout, o, dq, dk, dv */
    int64_t mrs, mcs;           /* the mask's row and column strides (0: broadcast) */
} AttnPlan;

/* Batch b's rows of an operand (element offset). */
static inline int64_t mf_attn_off(const AttnPlan *p, int64_t b, int which)
{
    return p->off[ATTN_OPERANDS * b + which];
}

/* Score rows [i0, i0 + ni) against keys [j0, j0 + nj) per query block. */
#define ATTN_BLOCK_ROWS 64

/* Checks q, k, v and the mask (NULL: none) and their broadcast; writes the
 * batch axes of the output into 'bshape' (rank '*nb'). For 'infer'. */
MfStatus mf_attn_check(const MfOpCall *c, MfTensor *const *in, const MfTensor *mask, int *nb,
                       int64_t *bshape);

/* Lays out a concrete call (batch offsets, row strides, copies where the
 * rows are not contiguous). */
MfStatus mf_attn_plan(const MfOpCall *c, MfTensor *const *in, MfTensor *mask, AttnPlan *p);
/* Adds the gradient op's out and dout (batch..., tq, dv) to a plan. */
MfStatus mf_attn_plan_dout(AttnPlan *p, MfTensor *out, MfTensor *dout);
/* Lays out an output the op writes where its rows are ('which': ATTN_O,
 * ATTN_DQ, ATTN_DK or ATTN_DV, at the output's batch axes). */
void mf_attn_plan_output(AttnPlan *p, const MfTensor *t, int which);
/* The outputs of a call (MF_OP_VIEW: the ops make their own), from its
 * specs; first[0..n) when given are made by the caller. Releases what it
 * made on failure. */
MfStatus mf_attn_new_outputs(const MfOpCall *c, MfTensor **outs, int first);
void mf_attn_plan_free(AttnPlan *p);

/* The scale in use: the attribute, or 1 / sqrt(d) when it is 0. */
double mf_attn_scale(const MfAttrs *a, int64_t d);

/* S (ni x nj, row stride nj) = scale q[i0..] k[j0..]^T of batch b, the
 * causal and given masks applied (-inf where not kept, the float mask
 * added). Typed by the plan's dtype. */
void mf_attn_scores(const AttnPlan *p, int64_t b, int64_t i0, int64_t ni, int64_t j0,
                    int64_t nj, void *S);

/* Keys [0, end) a query row block [i0, i0 + ni) can see (causal: i0 + ni). */
static inline int64_t mf_attn_keys(const AttnPlan *p, int64_t i0, int64_t ni)
{
    return p->causal && i0 + ni < p->tk ? i0 + ni : p->tk;
}

/* The dropout attribute "seed" when the call gives none: the entry then
 * draws one by the seed rule (core/rng.h). INT64_MIN, which no caller
 * writes as a seed. */
#define ATTN_NO_SEED (-9223372036854775807.0 - 1.0)

/* Dropout of weight (b, i, j) is the decision mf.nn.dropout makes for
 * element (b, i, j) of a (batch, Tq, Tk) tensor with the same key: its
 * uniform of random.uniform (float32: word e % 4 of Philox block e / 4;
 * float64: two words of block e / 2, e the flat index) kept when >= rate.
 * keep[c] for the weights (b, i, j0 + c), c < nj, of one row. Any tile
 * can so be redrawn, in any pass, without a (Tq, Tk) mask. */
void mf_attn_keep_row(const AttnPlan *p, int64_t b, int64_t i, int64_t j0, int64_t nj,
                      uint8_t *keep);

/* How many of the keys [j0, j0 + nj) score row i keeps under the causal
 * mask (the first ones; nj without it): the passes compute exp only there. */
static inline int64_t mf_attn_row_keys(const AttnPlan *p, int64_t i, int64_t j0, int64_t nj)
{
    int64_t n = i + 1 - j0;
    return !p->causal ? nj : n < 0 ? 0 : n < nj ? n : nj;
}

/* A row's causal keys n rounded up to whole 8-lane vectors (at most nj):
 * the row loops run to there, so they have no scalar tails; the scores
 * between n and it are masked (-inf), their probabilities 0. */
static inline int64_t mf_attn_row_lanes(int64_t n, int64_t nj)
{
    int64_t up = (n + 7) / 8 * 8;
    return up < nj ? up : nj;
}

/* The part of a tile product a causal mask needs, for a block of rows
 * [r, r + n) of C: ATTN_BAND_COLS, the columns [0, r + n + off) (scores:
 * off = i0 - j0); ATTN_BAND_KEND, the sum over k in [0, r + n + off)
 * (P v, dS k); ATTN_BAND_KSTART, over k from r + off (P^T dout, dS^T q:
 * off = j0 - i0). The rest of the product is never read or is zero. */
typedef enum { ATTN_BAND_FULL, ATTN_BAND_COLS, ATTN_BAND_KEND, ATTN_BAND_KSTART } AttnBandKind;
typedef struct AttnBand {
    AttnBandKind kind;
    int64_t off;
} AttnBand;

/* The float32 tile products of attention_tile.c: K <= ATTN_TILE_K, and a
 * transposed B of at most ATTN_TILE_MAX floats (copied on the stack). */
#define ATTN_TILE_K 256
#define ATTN_TILE_MAX 8192
bool mf_attn_tile_fits(bool tb, int64_t N, int64_t K);
/* C = alpha op(A) op(B) (+ C when acc), the band's part of it. */
void mf_attn_tile_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, bool acc,
                       float *C, int64_t ldc, AttnBand band);

/* The band of a causal call (the full product otherwise). */
static inline AttnBand mf_attn_band(const AttnPlan *p, AttnBandKind kind, int64_t off)
{
    return p->causal ? (AttnBand){kind, off} : (AttnBand){ATTN_BAND_FULL, 0};
}

/* C (M x N, ldc) = alpha op(A) op(B) + beta C (beta 0 or 1) on the calling
 * thread (the ops split their blocks over the pool themselves): float32
 * tiles by mf_attn_tile_gemm (only the band's part), the rest by BLAS. */
void mf_attn_gemm(MfDType dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                  int64_t ldc, AttnBand band);

/* The forward op's gradient (attention_grad.c). */
MfStatus mf_attn_backward(const MfGradCall *g, MfTensor **dinputs);

#endif
