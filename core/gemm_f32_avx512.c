/* gemm_f32_avx512.c — gemm_f32_kernels.h compiled for AVX-512 (flags in
 * the Makefile), with the 32-column tiles of 16-float (zmm) vectors. */
#define MF_GEMM_F32_TABLE mf_gemm_f32_tiles_avx512
#define MF_GEMM_F32_WIDE 1
#include "gemm_f32_kernels.h"
