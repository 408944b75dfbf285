/* lmf_index.h — Torch7's table index with TensorFlow's meaning: reads
 * x[key] (repl/lmf_tensor_methods.c, repl/lmf_variable.c call it for any
 * key that is not a method's name) and the writes v[key] = value,
 * v:scatter_update/_add/_sub, t:narrow, t:select (repl/lmf_index.c). */
#ifndef LMF_INDEX_H
#define LMF_INDEX_H

#include "lmf.h"

/* x[key] for the tensor or Variable at 1 and the key at 2 (a number, a
 * table, a bool or integer tensor): pushes the result, returns 1. */
int lmf_index_read(lua_State *L);

/* v[key] = value for the Variable at 1, the key at 2 and the value at 3. */
int lmf_index_write(lua_State *L);

/* mf.newaxis and mf.ellipsis into the mf table at 'mf', narrow and select
 * into the tensor methods at 'methods', scatter_update/_add/_sub into the
 * Variable methods at 'vmethods'. */
void lmf_open_index(lua_State *L, int methods, int vmethods, int mf);

#endif
