/* lmf_strict.h — errors for missing fields, with "did you mean", and
 * tensor '==' (see lmf_strict.c). */
#ifndef LMF_STRICT_H
#define LMF_STRICT_H

#include <lua.h>

/* How many edits (insert, delete, change, swap of neighbours) apart two
 * names are, ignoring case; names of 64 characters or more are 64 from
 * everything. The "did you mean" of fields and of help() both use it. */
int lmf_name_distance(const char *a, const char *b);

/* Raises "<kind>: no field '<key>' (did you mean '<name>'?)", the name
 * taken from the string keys of the table at 'names' (or of the tables
 * among the upvalues of the function there; 0: none) and from 'props'
 * (NULL-terminated, may be NULL). Never returns. */
int lmf_no_field(lua_State *L, const char *kind, const char *key, int names,
                 const char *const *props);

/* The error of a tensor's '__index' for the string key at 2 that it does
 * not serve (other keys index: repl/lmf_index.c); 'methods' is the index
 * of the tensor methods table. */
int lmf_tensor_no_field(lua_State *L, int methods);

/* Wraps the '__index' of moonflow's object metatables, sets tensor '__eq'
 * and a metatable on the table on top (mf) whose '__index' raises. */
void lmf_open_strict(lua_State *L);

#endif
