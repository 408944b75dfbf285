/* attention_tile.h — between attention_tile.c (the tile products' driver:
 * bands, B^T's copy) and its register blocks (attention_tile_kernels.h,
 * compiled once per instruction set; the driver picks one by MF_SIMD). */
#ifndef MF_ATTENTION_TILE_H
#define MF_ATTENTION_TILE_H

#include <stdbool.h>
#include <stdint.h>

/* Rows of a register block, and the columns the bands round to. */
#define ATTN_TILE_MR 4
#define ATTN_TILE_NR 16

/* A(i, k) of the row-major A or, transposed, of A^T. */
typedef struct AttnOperand {
    const float *p;
    int64_t rs, cs; /* strides of i and k */
} AttnOperand;

/* 'rows' (at most ATTN_TILE_MR) rows of C, columns [0, cols): alpha times
 * the sum over k in [k0, k1) of A(i, k) B(k, j), plus C when acc. Each
 * element is one FMA chain in k order, then one FMA with C: the same bits
 * from every table that has FMAs. */
typedef void (*AttnRowBlock)(AttnOperand a, int64_t rows, const float *B, int64_t ldb,
                             int64_t cols, int64_t k0, int64_t k1, float alpha, bool acc,
                             float *C, int64_t ldc);

extern const AttnRowBlock mf_attn_rows_avx512; /* 4 x 32 blocks of zmm vectors */
extern const AttnRowBlock mf_attn_rows_avx2;   /* 4 x 16 of two ymm */
extern const AttnRowBlock mf_attn_rows_generic;

#endif
