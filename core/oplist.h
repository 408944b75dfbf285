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
MF_OP(MF_OP_EQUAL, mf_desc_equal)
MF_OP(MF_OP_NOT_EQUAL, mf_desc_not_equal)
MF_OP(MF_OP_LESS, mf_desc_less)
MF_OP(MF_OP_LESS_EQUAL, mf_desc_less_equal)
MF_OP(MF_OP_GREATER, mf_desc_greater)
MF_OP(MF_OP_GREATER_EQUAL, mf_desc_greater_equal)
MF_OP(MF_OP_LOGICAL_AND, mf_desc_logical_and)
MF_OP(MF_OP_LOGICAL_OR, mf_desc_logical_or)
MF_OP(MF_OP_LOGICAL_NOT, mf_desc_logical_not)
MF_OP(MF_OP_IS_NAN, mf_desc_is_nan)
MF_OP(MF_OP_IS_INF, mf_desc_is_inf)
MF_OP(MF_OP_IS_FINITE, mf_desc_is_finite)
MF_OP(MF_OP_SELECT, mf_desc_select)
MF_OP(MF_OP_CAST, mf_desc_cast)

/* reductions and arg-reductions (core/ops/reduce.c) */
MF_OP(MF_OP_SUM, mf_desc_sum)
MF_OP(MF_OP_MEAN, mf_desc_mean)
MF_OP(MF_OP_MAX, mf_desc_max)
MF_OP(MF_OP_MIN, mf_desc_min)
MF_OP(MF_OP_PROD, mf_desc_prod)
MF_OP(MF_OP_ARGMAX, mf_desc_argmax)
MF_OP(MF_OP_ARGMIN, mf_desc_argmin)

/* linear algebra and view ops: MatMul, BatchMatMulV2, Transpose, Reshape,
 * ExpandDims, Squeeze, ... (core/ops/linalg.c, core/ops/view.c) */
MF_OP(MF_OP_MATMUL, mf_desc_matmul)
MF_OP(MF_OP_BATCH_MATMUL, mf_desc_batch_matmul)
MF_OP(MF_OP_TRACE, mf_desc_trace)
/* band parts of matrices: MatrixBandPart, Trilu (core/ops/band_part.c) */
MF_OP(MF_OP_MATRIX_BAND_PART, mf_desc_matrix_band_part)
MF_OP(MF_OP_TRILU, mf_desc_trilu)
MF_OP(MF_OP_TRANSPOSE, mf_desc_transpose)
MF_OP(MF_OP_RESHAPE, mf_desc_reshape)
MF_OP(MF_OP_EXPAND_DIMS, mf_desc_expand_dims)
MF_OP(MF_OP_SQUEEZE, mf_desc_squeeze)

/* shape ops: ConcatV2, Pack, Slice, GatherV2, ReverseV2, Tile, Pad,
 * BroadcastTo, OneHot, Identity, StopGradient, Size, Rank, Shape
 * (core/ops/shape_ops.c) */
MF_OP(MF_OP_CONCAT, mf_desc_concat)
MF_OP(MF_OP_STACK, mf_desc_stack)
MF_OP(MF_OP_SLICE, mf_desc_slice)
/* strided slices, their gradient and sliced writes (core/ops/strided_slice.c) */
MF_OP(MF_OP_STRIDED_SLICE, mf_desc_strided_slice)
MF_OP(MF_OP_STRIDED_SLICE_GRAD, mf_desc_strided_slice_grad)
MF_OP(MF_OP_STRIDED_SLICE_UPDATE, mf_desc_strided_slice_update)
MF_OP(MF_OP_GATHER, mf_desc_gather)
MF_OP(MF_OP_REVERSE, mf_desc_reverse)
MF_OP(MF_OP_TILE, mf_desc_tile)
MF_OP(MF_OP_PAD, mf_desc_pad)
MF_OP(MF_OP_BROADCAST_TO, mf_desc_broadcast_to)
MF_OP(MF_OP_ONE_HOT, mf_desc_one_hot)
MF_OP(MF_OP_IDENTITY, mf_desc_identity)
MF_OP(MF_OP_STOP_GRADIENT, mf_desc_stop_gradient)
MF_OP(MF_OP_SIZE, mf_desc_size)
MF_OP(MF_OP_RANK, mf_desc_rank)
MF_OP(MF_OP_SHAPE, mf_desc_shape)
MF_OP(MF_OP_UNSORTED_SEGMENT_SUM, mf_desc_unsorted_segment_sum) /* core/ops/scatter.c */
/* shapes taken at run time, for gradients with unknown dims (core/ops/like.c) */
MF_OP(MF_OP_RESHAPE_LIKE, mf_desc_reshape_like)
MF_OP(MF_OP_BROADCAST_TO_LIKE, mf_desc_broadcast_to_like)
MF_OP(MF_OP_SUM_TO_LIKE, mf_desc_sum_to_like)
MF_OP(MF_OP_CONV2D_BACKPROP_INPUT_LIKE, mf_desc_conv2d_backprop_input_like)
MF_OP(MF_OP_FILL, mf_desc_fill) /* core/ops/fill.c */

/* creation and random ops (core/ops/random.c, core/rng.c) */
MF_OP(MF_OP_RANDOM_NORMAL, mf_desc_random_normal)
MF_OP(MF_OP_RANDOM_UNIFORM, mf_desc_random_uniform)
MF_OP(MF_OP_RANDOM_UNIFORM_INT, mf_desc_random_uniform_int)
MF_OP(MF_OP_TRUNCATED_NORMAL, mf_desc_truncated_normal)
MF_OP(MF_OP_RANDOM_SHUFFLE, mf_desc_random_shuffle)
MF_OP(MF_OP_MULTINOMIAL, mf_desc_multinomial)

/* conv ops (core/ops/conv.c): Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter */
MF_OP(MF_OP_CONV2D, mf_desc_conv2d)
MF_OP(MF_OP_CONV2D_BACKPROP_INPUT, mf_desc_conv2d_backprop_input)
MF_OP(MF_OP_CONV2D_BACKPROP_FILTER, mf_desc_conv2d_backprop_filter)
/* mf.linalg through LAPACK (core/ops/linalg_lapack.c) */
MF_OP(MF_OP_MATRIX_INVERSE, mf_desc_matrix_inverse)
MF_OP(MF_OP_MATRIX_SOLVE, mf_desc_matrix_solve)
MF_OP(MF_OP_CHOLESKY, mf_desc_cholesky)
MF_OP(MF_OP_MATRIX_DETERMINANT, mf_desc_matrix_determinant)
/* depthwise conv ops (core/ops/depthwise.c) */
MF_OP(MF_OP_DEPTHWISE_CONV2D, mf_desc_depthwise_conv2d)
MF_OP(MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, mf_desc_depthwise_conv2d_backprop_input)
MF_OP(MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, mf_desc_depthwise_conv2d_backprop_filter)

/* nn ops (core/ops/softmax.c, layer_norm.c, nn.c, pool.c) */
MF_OP(MF_OP_SOFTMAX, mf_desc_softmax)
MF_OP(MF_OP_LOG_SOFTMAX, mf_desc_log_softmax)
MF_OP(MF_OP_SOFTMAX_GRAD, mf_desc_softmax_grad)
MF_OP(MF_OP_LOG_SOFTMAX_GRAD, mf_desc_log_softmax_grad)
MF_OP(MF_OP_LAYER_NORM, mf_desc_layer_norm)
MF_OP(MF_OP_LAYER_NORM_GRAD, mf_desc_layer_norm_grad)
MF_OP(MF_OP_SOFTMAX_XENT, mf_desc_softmax_xent)
MF_OP(MF_OP_SPARSE_SOFTMAX_XENT, mf_desc_sparse_softmax_xent)
MF_OP(MF_OP_BIAS_ADD, mf_desc_bias_add)
/* attention, flash-tiled, and its gradient (core/ops/attention.c, attention_grad.c) */
MF_OP(MF_OP_ATTENTION, mf_desc_attention)
MF_OP(MF_OP_ATTENTION_GRAD, mf_desc_attention_grad)

/* more elementwise math (core/ops/unary_more.c) */
MF_OP(MF_OP_TAN, mf_desc_tan)
MF_OP(MF_OP_SINH, mf_desc_sinh)
MF_OP(MF_OP_COSH, mf_desc_cosh)
MF_OP(MF_OP_ASIN, mf_desc_asin)
MF_OP(MF_OP_ACOS, mf_desc_acos)
MF_OP(MF_OP_ATAN, mf_desc_atan)
MF_OP(MF_OP_EXPM1, mf_desc_expm1)
MF_OP(MF_OP_ERF, mf_desc_erf)
MF_OP(MF_OP_RECIPROCAL, mf_desc_reciprocal)
MF_OP(MF_OP_ATANH, mf_desc_atanh) /* core/ops/atanh.c */
MF_OP(MF_OP_ASINH, mf_desc_asinh) /* core/ops/asinh.c */
MF_OP(MF_OP_ROLL, mf_desc_roll)   /* core/ops/roll.c */
MF_OP(MF_OP_CUMSUM, mf_desc_cumsum) /* core/ops/scan.c */
MF_OP(MF_OP_CUMPROD, mf_desc_cumprod) /* core/ops/scan.c */
MF_OP(MF_OP_ATAN2, mf_desc_atan2) /* core/ops/atan2.c */
MF_OP(MF_OP_ANY, mf_desc_any) /* core/ops/reduce_logic.c */
MF_OP(MF_OP_ALL, mf_desc_all) /* core/ops/reduce_logic.c */
MF_OP(MF_OP_TOP_K, mf_desc_top_k) /* core/ops/sort.c */
MF_OP(MF_OP_SORT, mf_desc_sort) /* core/ops/sort.c */
MF_OP(MF_OP_ARGSORT, mf_desc_argsort) /* core/ops/sort.c */
MF_OP(MF_OP_GATHER_ALONG_AXIS, mf_desc_gather_along_axis) /* core/ops/along_axis.c */
MF_OP(MF_OP_SCATTER_ALONG_AXIS, mf_desc_scatter_along_axis) /* core/ops/along_axis.c */
MF_OP(MF_OP_GATHER_ND, mf_desc_gather_nd) /* core/ops/gather_nd.c */
MF_OP(MF_OP_SCATTER_ND, mf_desc_scatter_nd) /* core/ops/gather_nd.c */
MF_OP(MF_OP_SCATTER_ND_LIKE, mf_desc_scatter_nd_like) /* core/ops/gather_nd.c */
MF_OP(MF_OP_TENSOR_SCATTER_UPDATE, mf_desc_tensor_scatter_update) /* core/ops/gather_nd.c */
MF_OP(MF_OP_TENSOR_SCATTER_ADD, mf_desc_tensor_scatter_add)
MF_OP(MF_OP_TENSOR_SCATTER_SUB, mf_desc_tensor_scatter_sub)

/* batch normalization, fused (core/ops/batchnorm.c) */
MF_OP(MF_OP_FUSED_BATCH_NORM, mf_desc_fused_batch_norm)
MF_OP(MF_OP_FUSED_BATCH_NORM_GRAD, mf_desc_fused_batch_norm_grad)

/* the elementwise core of an LSTM step, fused (core/ops/lstm_cell.c) */
MF_OP(MF_OP_LSTM_CELL, mf_desc_lstm_cell)
MF_OP(MF_OP_LSTM_CELL_GRAD, mf_desc_lstm_cell_grad)
MF_OP(MF_OP_MAX_POOL, mf_desc_max_pool)
MF_OP(MF_OP_AVG_POOL, mf_desc_avg_pool)
MF_OP(MF_OP_MAX_POOL_GRAD, mf_desc_max_pool_grad)
MF_OP(MF_OP_AVG_POOL_GRAD, mf_desc_avg_pool_grad)
MF_OP(MF_OP_MAX_POOL_GRAD_GRAD, mf_desc_max_pool_grad_grad)
MF_OP(MF_OP_RELU_GRAD, mf_desc_relu_grad) /* core/ops/nn_relu.c */

/* activations as single ops with one-op gradients (core/ops/activation.c) */
MF_OP(MF_OP_GELU, mf_desc_gelu)
MF_OP(MF_OP_GELU_GRAD, mf_desc_gelu_grad)
MF_OP(MF_OP_SILU, mf_desc_silu)
MF_OP(MF_OP_SILU_GRAD, mf_desc_silu_grad)
/* the gradients of Sigmoid and Tanh from their outputs (core/ops/output_grad.c) */
MF_OP(MF_OP_SIGMOID_GRAD, mf_desc_sigmoid_grad)
MF_OP(MF_OP_TANH_GRAD, mf_desc_tanh_grad)
/* erfc, acosh (core/ops/unary_more.c); (x - y)^2 (core/ops/binary.c) */
MF_OP(MF_OP_ERFC, mf_desc_erfc)
MF_OP(MF_OP_ACOSH, mf_desc_acosh)
MF_OP(MF_OP_SQUARED_DIFFERENCE, mf_desc_squared_difference)

/* training: in-place fused update rules (core/ops/apply.c) */
MF_OP(MF_OP_APPLY_GRADIENT_DESCENT, mf_desc_apply_gradient_descent)
MF_OP(MF_OP_APPLY_MOMENTUM, mf_desc_apply_momentum)
MF_OP(MF_OP_APPLY_ADAGRAD, mf_desc_apply_adagrad)
MF_OP(MF_OP_APPLY_RMSPROP, mf_desc_apply_rmsprop)
MF_OP(MF_OP_APPLY_ADAM, mf_desc_apply_adam)
MF_OP(MF_OP_APPLY_LION, mf_desc_apply_lion)

/* collectives over the processes of a distributed run (core/ops/collective.c) */
MF_OP(MF_OP_ALLREDUCE, mf_desc_allreduce)
MF_OP(MF_OP_ALLREDUCE_START, mf_desc_allreduce_start)
MF_OP(MF_OP_ALLREDUCE_WAIT, mf_desc_allreduce_wait)
