/* gemm_f32_generic.c — gemm_f32_kernels.h compiled for the build's own
 * target (no -march of its own): the tiles for a CPU without AVX2. */
#define MF_GEMM_F32_TABLE mf_gemm_f32_tiles_generic
#include "gemm_f32_kernels.h"
