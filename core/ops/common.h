/* common.h — helpers shared by the op families in core/ops/: argument checks
 * and shape inference that several ops need. Each reports errors with the
 * op's user-facing name ('api'). */
#ifndef MF_OPS_COMMON_H
#define MF_OPS_COMMON_H

#include "../op.h"
#include "../shape.h"

/* The user-facing name of the op being called. */
static inline const char *op_api(const MfOpCall *c)
{
    return mf_op_table[c->op]->api;
}

/* Both inputs share a dtype: else "WHO: dtypes differ: float32 and int32 (use mf.cast)". */
MfStatus mf_check_same_dtype(const MfOpCall *c, const MfTensor *a, const MfTensor *b);

/* The input's dtype is one 'mask' allows (bit 1<<dtype); 'what' describes
 * the allowed set in the message ("a float dtype"). */
MfStatus mf_check_dtype(const MfOpCall *c, const MfTensor *t, unsigned mask, const char *what);

#define MF_MASK(dt) (1u << (dt))
#define MF_FLOATS (MF_MASK(MF_FLOAT32) | MF_MASK(MF_FLOAT64))
#define MF_INTS (MF_MASK(MF_INT32) | MF_MASK(MF_INT64))
#define MF_NUMERIC (MF_FLOATS | MF_INTS)
#define MF_ANY (MF_NUMERIC | MF_MASK(MF_BOOL))

/* One output with input 0's shape and the given dtype. */
void mf_spec_like(MfOpCall *c, const MfTensor *t, MfDType dt);

/* The elementwise float ops' infer: input 0 is float32 or float64 (an
 * integer is refused: "use mf.cast"), the one output is like it. */
MfStatus mf_infer_float_like(MfOpCall *c);

/* The infer of an activation's gradient op (ReluGrad, GeluGrad, SiluGrad):
 * inputs (gradients, features) of one dtype in 'mask' ('what' names it)
 * and one shape (a known dim wins over an unknown one); the output is
 * like them. */
MfStatus mf_infer_grad_pair(MfOpCall *c, unsigned mask, const char *what);

/* Two inputs of one dtype, broadcast together; output dtype 'dt' (pass
 * a negative value to keep the inputs' dtype). */
MfStatus mf_infer_broadcast(MfOpCall *c, unsigned mask, const char *what, int dt);

/* The output shape given by a shape tensor 's' (TensorFlow's 'shape' /
 * 'dims' input of Fill and the random ops): a 1-D int32/int64 tensor of
 * known length. Concrete (eager, or a graph run): its values, each >= 0; a
 * symbolic one (graph building): its length with every dim unknown (-1). */
MfStatus mf_shape_from_tensor(const MfOpCall *c, const MfTensor *s, int *rank, int64_t *shape);

/* Elementwise cost: one FLOP per output element. */
MfCost mf_cost_elementwise(const MfOpCall *c);

/* Runs a large float call of an MF_OP_ELEMENTWISE op as pieces of its
 * output over the worker pool, the op's forward on each (elementwise_split.c):
 * true when done; false (nothing or part written) when the call does not
 * qualify, and the caller runs 'forward' on the whole. */
bool mf_elementwise_split(const MfOpDesc *d, const MfOpCall *c, MfTensor **outs);

#endif
