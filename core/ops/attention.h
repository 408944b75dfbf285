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

/* One call: q (batch..., tq, d), k (batch..., tk, d), v (batch..., tk, dv),
 * their batch axes broadcast to the output's 'nbatch' batches. */
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
    MfTensor *hold[4];          /* contiguous q, k, v, mask (owned) */
    const char *q, *k, *v, *mask;
    int64_t *off;               /* per batch: the element offsets of q, k, v, mask */
    int64_t mrs, mcs;           /* the mask's row and column strides (0: broadcast) */
} AttnPlan;

/* Score rows [i0, i0 + ni) against keys [j0, j0 + nj) per query block. */
#define ATTN_BLOCK_ROWS 64

/* Checks q, k, v and the mask (NULL: none) and their broadcast; writes the
 * batch axes of the output into 'bshape' (rank '*nb'). For 'infer'. */
MfStatus mf_attn_check(const MfOpCall *c, MfTensor *const *in, const MfTensor *mask, int *nb,
                       int64_t *bshape);

/* Lays out a concrete call (contiguous copies, batch offsets). */
MfStatus mf_attn_plan(const MfOpCall *c, MfTensor *const *in, MfTensor *mask, AttnPlan *p);
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

/* C (M x N, ldc) = alpha op(A) op(B) + beta C through BLAS on the calling
 * thread (the ops split their blocks over the pool themselves). */
void mf_attn_gemm(MfDType dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                  int64_t ldc);

/* The forward op's gradient (attention_grad.c). */
MfStatus mf_attn_backward(const MfGradCall *g, MfTensor **dinputs);

#endif
