/* gemm_f32_avx2.c — gemm_f32_kernels.h compiled for AVX2 and FMA (flags
 * in the Makefile): 16-column tiles of two 8-float vectors. */
#define MF_GEMM_F32_TABLE mf_gemm_f32_tiles_avx2
#include "gemm_f32_kernels.h"
