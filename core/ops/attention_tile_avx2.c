/* attention_tile_avx2.c — attention_tile_kernels.h compiled for AVX2 and
 * FMA (flags in the Makefile): blocks of 4 x 16 in two 8-float vectors. */
#define MF_ATTN_ROWS mf_attn_rows_avx2
#include "attention_tile_kernels.h"
