/* linalg_lapack_grad.c — gradients of mf.linalg's ops, written with ops
 * (TensorFlow's linalg_grad.py), for matrices batched over any leading dims:
 *   inv:      Y = A^-1           dA = -Y^T g Y^T
 *   solve:    X = A^-1 B         dB = A^-T g (a solve with the adjoint flipped),
 *                                dA = -dB X^T  (adjoint: -X dB^T)
 *   det:      d = det(A)         dA = (g d) A^-T
 *   cholesky: A = L L^T          dA = sym(L^-T Phi(L^T g) L^-1), Phi taking the
 *             lower triangle with half the diagonal, sym(M) = (M + M^T) / 2
 *             (Murray 2016; TensorFlow's CholeskyGrad); exact for our op,
 *             which factors the symmetric part of A.
 * Products of rank > 3 fold the batch dims into one (BatchMatMulV2 takes
 * rank 3). A singular A has no gradient for det: its A^-T is refused by
 * inv's error. */
#include "../grad.h"
#include "grads_math.h"
#include "linalg.h"
#include "linalg_lapack.h"
#include "view.h"

/* op(x) op(y) of two batches of matrices with the same leading dims. */
static MfStatus mm(MfTensor *x, MfTensor *y, bool tx, bool ty, MfTensor **out)
{
    int r = x->rank;
    if (r <= 3)
        return mf_matmul(x, y, tx, ty, out);
    int64_t sx[3] = {-1, x->shape[r - 2], x->shape[r - 1]};
    int64_t sy[3] = {-1, y->shape[r - 2], y->shape[r - 1]}, s[MF_MAX_RANK];
    MfTensor *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_reshape(x, 3, sx, &t[0]));
    MF_GRAD_TRY(mf_reshape(y, 3, sy, &t[1]));
    MF_GRAD_TRY(mf_matmul(t[0], t[1], tx, ty, &t[2]));
    for (int d = 0; d < r - 2; d++)
        s[d] = x->shape[d];
    s[r - 2] = t[2]->shape[1];
    s[r - 1] = t[2]->shape[2];
    st = mf_reshape(t[2], r, s, out);
done:
    mf_grad_release_n(t, 3);
    return st;
}

/* The last two axes swapped. */
static MfStatus mt(MfTensor *x, MfTensor **out)
{
    int64_t perm[MF_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        perm[d] = d;
    perm[x->rank - 2] = x->rank - 1;
    perm[x->rank - 1] = x->rank - 2;
    return mf_transpose(x, perm, x->rank, out);
}

static MfStatus inverse(MfTensor *a, MfTensor **out)
{
    MfAttrs at = mf_attrs_default();
    return mf_op1(MF_OP_MATRIX_INVERSE, 1, &a, &at, out);
}

MfStatus mf_matrix_inverse_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->outputs[0], *t[2] = {0};
    MfStatus st;
    MF_GRAD_TRY(mm(y, g->doutputs[0], true, false, &t[0]));
    MF_GRAD_TRY(mm(t[0], y, false, true, &t[1]));
    st = mf_unary(MF_OP_NEG, t[1], &dinputs[0]);
done:
    mf_grad_release_n(t, 2);
    return st;
}

MfStatus mf_matrix_solve_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *a = g->call->inputs[0], *x = g->outputs[0], *t[2] = {0}, *in[2];
    bool adjoint = g->call->attrs->transpose_a;
    MfAttrs at = *g->call->attrs;
    at.transpose_a = !adjoint;
    in[0] = a;
    in[1] = g->doutputs[0];
    MfStatus st;
    MF_GRAD_TRY(mf_op1(MF_OP_MATRIX_SOLVE, 2, in, &at, &t[0]));
    if (mf_grad_needs(g, 0)) {
        MF_GRAD_TRY(adjoint ? mm(x, t[0], false, true, &t[1]) : mm(t[0], x, false, true, &t[1]));
        MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[1], &dinputs[0]));
    }
    dinputs[1] = t[0];
    t[0] = NULL;
done:
    mf_grad_release_n(t, 2);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

MfStatus mf_matrix_determinant_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *a = g->call->inputs[0], *t[5] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->doutputs[0], g->outputs[0], &t[0]));
    MF_GRAD_TRY(mf_expand_dims(t[0], a->rank - 2, &t[1]));
    MF_GRAD_TRY(mf_expand_dims(t[1], a->rank - 1, &t[2]));
    MF_GRAD_TRY(inverse(a, &t[3]));
    MF_GRAD_TRY(mt(t[3], &t[4]));
    st = mf_binary(MF_OP_MUL, t[2], t[4], &dinputs[0]);
done:
    mf_grad_release_n(t, 5);
    return st;
}

/* Phi's mask: n x n, 1 below the diagonal, 0.5 on it, 0 above. */
static MfStatus phi_mask(const MfTensor *like, int64_t n, MfTensor **out)
{
    int64_t shape[2] = {n, n};
    *out = mf_tensor_new(like->dtype, 2, shape);
    if (!*out)
        return mf_err_set(MF_ENOMEM, "cholesky gradient: out of memory");
    void *p = mf_tensor_data(*out);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = j < i ? 1 : j == i ? 0.5 : 0;
            if (like->dtype == MF_FLOAT32)
                ((float *)p)[i * n + j] = (float)v;
            else
                ((double *)p)[i * n + j] = v;
        }
    return MF_OK;
}

MfStatus mf_cholesky_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *l = g->outputs[0], *t[9] = {0};
    MfStatus st;
    MF_GRAD_TRY(inverse(l, &t[0]));                                /* L^-1 */
    MF_GRAD_TRY(mm(l, g->doutputs[0], true, false, &t[1]));       /* L^T g */
    MF_GRAD_TRY(phi_mask(l, l->shape[l->rank - 1], &t[2]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[1], t[2], &t[3]));          /* Phi(L^T g) */
    MF_GRAD_TRY(mm(t[0], t[3], true, false, &t[4]));               /* L^-T Phi */
    MF_GRAD_TRY(mm(t[4], t[0], false, false, &t[5]));              /* L^-T Phi L^-1 */
    MF_GRAD_TRY(mt(t[5], &t[6]));
    MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[5], t[6], &t[7]));
    st = mf_grad_scale(t[7], 0.5, &dinputs[0]);
done:
    mf_grad_release_n(t, 9);
    return st;
}
