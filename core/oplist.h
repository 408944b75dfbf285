/* oplist.h — the only list of ops (an X-macro; no include guard on purpose).
 *
 * Each line names the enum value and the 'const MfOpDesc' that describes the
 * op; the descriptor lives next to its kernels in core/ops/. Including this
 * file with MF_OP defined generates the enum (op.h) and the table (op.c).
 * To add an op: one line here, one descriptor, its tests. */

/* elementwise binary (core/ops/binary.c) */
MF_OP(MF_OP_ADD, mf_desc_add)
MF_OP(MF_OP_SUB, mf_desc_sub)
MF_OP(MF_OP_MUL, mf_desc_mul)
MF_OP(MF_OP_DIV, mf_desc_div)
MF_OP(MF_OP_MOD, mf_desc_mod)
MF_OP(MF_OP_POW, mf_desc_pow)
MF_OP(MF_OP_MAXIMUM, mf_desc_maximum)
MF_OP(MF_OP_MINIMUM, mf_desc_minimum)

/* elementwise unary math (core/ops/unary.c) */
MF_OP(MF_OP_NEG, mf_desc_neg)
MF_OP(MF_OP_ABS, mf_desc_abs)
MF_OP(MF_OP_SIGN, mf_desc_sign)
MF_OP(MF_OP_SQUARE, mf_desc_square)
MF_OP(MF_OP_SQRT, mf_desc_sqrt)
MF_OP(MF_OP_RSQRT, mf_desc_rsqrt)
MF_OP(MF_OP_EXP, mf_desc_exp)
MF_OP(MF_OP_LOG, mf_desc_log)
MF_OP(MF_OP_LOG1P, mf_desc_log1p)
MF_OP(MF_OP_SIN, mf_desc_sin)
MF_OP(MF_OP_COS, mf_desc_cos)
MF_OP(MF_OP_TANH, mf_desc_tanh)
MF_OP(MF_OP_SIGMOID, mf_desc_sigmoid)
MF_OP(MF_OP_RELU, mf_desc_relu)
MF_OP(MF_OP_SOFTPLUS, mf_desc_softplus)
MF_OP(MF_OP_FLOOR, mf_desc_floor)
MF_OP(MF_OP_CEIL, mf_desc_ceil)
MF_OP(MF_OP_ROUND, mf_desc_round)

/* compare, logic, select, cast (core/ops/compare.c) */

/* reductions and arg-reductions (core/ops/reduce.c) */

/* linear algebra and view ops: MatMul, BatchMatMulV2, Transpose, Reshape,
 * ExpandDims, Squeeze, ... (core/ops/linalg.c, core/ops/view.c) */

/* shape ops: ConcatV2, Pack, Slice, GatherV2, ReverseV2, Tile, Pad,
 * BroadcastTo, OneHot, Identity, StopGradient, Size, Rank, Shape
 * (core/ops/shape_ops.c) */

/* creation and random ops (core/ops/random.c, core/rng.c) */
