/* attention_tile_avx512.c — attention_tile_kernels.h compiled for AVX-512
 * (flags in the Makefile), with blocks of 4 x 32 in zmm vectors. */
#define MF_ATTN_ROWS mf_attn_rows_avx512
#define MF_ATTN_WIDE 1
#include "attention_tile_kernels.h"
