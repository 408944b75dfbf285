/* matmul_accumulate.c — the gradient of a MatMul's second operand added
 * into the gradient accumulated for it by one GEMM with beta = 1.
 *
 * A weight read by T MatMuls (a recurrent kernel unrolled over T steps) gets
 * T products db = op(a)^T dy; the walk would make each a new zeroed tensor
 * and add it (AddV2) into the gradient it holds: T full-size adds. Here BLAS
 * adds the product into the held gradient itself. The sum is the same up to
 * rounding order: the product is added to the held value instead of being
 * rounded on its own first (identical when K fits one block of the kernel).
 *
 * The same conditions as autodiff/slices.c: eager values, float32/float64,
 * rank 2, no other tape recording (a higher-order tape must see the ops),
 * and a held gradient the walk alone owns. The first product (no gradient
 * held yet) is the op's gradient as usual. */
#include "matmul_accumulate.h"

#include "core/gemm.h"
#include "core/profile/profile.h"
#include "autodiff/slices.h"

static bool plain_float_matrix(const MfTensor *t, MfDType dtype)
{
    return t && t->storage && t->rank == 2 && t->dtype == dtype;
}

/* acc += db with db as the op's gradient writes it (linalg_grad.c):
 *   tb: db = dy^T op(a)    else: db = op(a)^T dy */
static MfStatus add_product(const MfAttrs *attrs, MfTensor *a, MfTensor *dy, MfTensor *acc)
{
    bool ta = attrs && attrs->transpose_a, tb = attrs && attrs->transpose_b;
    MfTensor *x = tb ? dy : a, *y = tb ? a : dy;
    bool tx = tb ? true : !ta, ty = tb ? ta : false;
    if ((tx ? x->shape[1] : x->shape[0]) != acc->shape[0] ||
        (ty ? y->shape[0] : y->shape[1]) != acc->shape[1] ||
        (tx ? x->shape[0] : x->shape[1]) != (ty ? y->shape[1] : y->shape[0]))
        return MF_ESHAPE; /* not the record's operands: take the op's gradient */
    MfGemm g = {.op = "MatMul", .dtype = acc->dtype, .trans_a = tx, .trans_b = ty,
                .M = acc->shape[0], .N = acc->shape[1], .K = tx ? x->shape[0] : x->shape[1],
                .alpha = 1.0, .beta = 1.0, .A = mf_tensor_data(x), .lda = x->shape[1],
                .B = mf_tensor_data(y), .ldb = y->shape[1], .C = mf_tensor_data(acc),
                .ldc = acc->shape[1]};
    MfProfSpan span;
    mf_prof_begin(&span);
    MfStatus st = mf_gemm(&g);
    mf_prof_end_op(&span, "MatMul[gradient accumulated]", 2.0 * (double)g.M * (double)g.N *
                   (double)g.K, 0);
    return st;
}

bool mf_matmul_accumulate(MfOpId op, const MfAttrs *attrs, bool higher_order, MfTensor *a,
                          MfTensor *dy, MfTensor *acc)
{
    if (op != MF_OP_MATMUL || higher_order || !acc || !mf_accumulator_owned(acc))
        return false;
    MfDType dt = acc->dtype;
    if ((dt != MF_FLOAT32 && dt != MF_FLOAT64) || !plain_float_matrix(acc, dt) ||
        !plain_float_matrix(a, dt) || !plain_float_matrix(dy, dt))
        return false;
    MfTensor *ac = mf_tensor_contiguous(a);
    MfTensor *dyc = ac ? mf_tensor_contiguous(dy) : NULL;
    bool done = dyc && add_product(attrs, ac, dyc, acc) == MF_OK;
    mf_tensor_release(ac);
    mf_tensor_release(dyc);
    return done;
}
