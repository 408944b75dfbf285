/* grads_math.h — the gradient functions of the math families: elementwise
 * binary (binary_grad.c), elementwise unary (unary_grad.c), select and cast
 * (compare family, unary_grad.c) and reductions (reduce_grad.c).
 *
 * Each is an MfOpDesc 'backward' (op.h): it reads the forward call, its
 * outputs and 'doutputs[0]', and writes owned gradients into 'dinputs'
 * (NULL: no gradient), computing only by calling ops, so eager tapes record
 * it (higher-order gradients) and graph mode builds it. On error nothing is
 * left in 'dinputs' and every temporary is released. */
#ifndef MF_OPS_GRADS_MATH_H
#define MF_OPS_GRADS_MATH_H

#include "../grad.h"

/* binary_grad.c */
MfStatus mf_add_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sub_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_mul_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_div_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_mod_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_pow_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_maximum_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_minimum_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_squared_difference_grad(const MfGradCall *g, MfTensor **dinputs);

/* unary_grad.c */
MfStatus mf_neg_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_abs_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_square_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sqrt_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_rsqrt_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_exp_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_log_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_log1p_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sin_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_cos_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_tanh_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sigmoid_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_relu_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_softplus_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_select_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_cast_grad(const MfGradCall *g, MfTensor **dinputs);

/* unary_more_grad.c */
MfStatus mf_tan_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_sinh_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_cosh_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_asin_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_acos_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_atan_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_expm1_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_erf_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_reciprocal_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_erfc_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_acosh_grad(const MfGradCall *g, MfTensor **dinputs);

/* output_grad.c: dy * (1 - y*y) ('op' MF_OP_TANH_GRAD) or dy * y * (1 - y)
 * (MF_OP_SIGMOID_GRAD) as one op, y the forward output */
MfStatus mf_output_grad(MfOpId op, MfTensor *dy, MfTensor *y, MfTensor **out);

/* reduce_grad.c */
MfStatus mf_sum_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_mean_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_max_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_min_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_prod_grad(const MfGradCall *g, MfTensor **dinputs);

/* Releases 't[0..n)' and sets them to NULL (temporaries, or 'dinputs' on an
 * error path). */
static inline void mf_grad_release_n(MfTensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(t[i]);
        t[i] = NULL;
    }
}

/* In gradient functions: run 'e' (an MfStatus expression) and jump to
 * 'done' with 'st' set when it fails. */
#define MF_GRAD_TRY(e)                                                             \
    do {                                                                           \
        if ((st = (e)) != MF_OK)                                                   \
            goto done;                                                             \
    } while (0)

#endif
