/* attention_tile_generic.c — attention_tile_kernels.h compiled for the
 * build's own target (no -march of its own): for a CPU without AVX2. */
#define MF_ATTN_ROWS mf_attn_rows_generic
#include "attention_tile_kernels.h"
