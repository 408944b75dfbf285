/* lmf_print.h — NumPy-style printing of tensors and mf.set_printoptions. */
#ifndef LMF_PRINT_H
#define LMF_PRINT_H

#include <lua.h>

#include "core/tensor.h"

typedef struct LmfPrintOptions {
    int precision;  /* significant decimals (default 4) */
    int threshold;  /* summarise above this many elements (default 1000) */
    int edgeitems;  /* items kept at each edge when summarising (default 3) */
    int linewidth;  /* wrap rows longer than this (default 75) */
} LmfPrintOptions;

extern LmfPrintOptions lmf_print_options;

/* Pushes the printed form of 't' (values, then "shape=(2,3), dtype=float32"). */
void lmf_push_tensor_string(lua_State *L, const MfTensor *t);

/* Registers mf.set_printoptions (and mf.get_printoptions) into the table on top. */
void lmf_open_print(lua_State *L);

#endif
