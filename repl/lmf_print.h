/* lmf_print.h — printing tensors (tostring/print) and mf.set_printoptions /
 * mf.get_printoptions. The formatting itself lives in core/format.c. */
#ifndef LMF_PRINT_H
#define LMF_PRINT_H

#include <lua.h>

#include "present/format.h"
#include "core/tensor.h"

/* The options every print uses: precision (fraction digits, default 4),
 * threshold (summarise above this many elements, default 1000), edgeitems
 * (kept at each edge when summarising, default 3), linewidth (default 75). */
typedef MfPrintOptions LmfPrintOptions;

extern LmfPrintOptions lmf_print_options;

/* Pushes the printed form of 't' (values, then "shape=(2,3), dtype=float32";
 * a graph tensor with its name and op: "<mf.Tensor 'add:0' shape=(?,3)
 * dtype=float32 op=AddV2>").
 * Raises only when memory runs out. */
void lmf_push_tensor_string(lua_State *L, const MfTensor *t);

/* Registers mf.set_printoptions and mf.get_printoptions into the table on top. */
void lmf_open_print(lua_State *L);

#endif
