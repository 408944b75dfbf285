/* help_objects.h — help for ops and objects (see help_objects.c). */
#ifndef LMF_HELP_OBJECTS_H
#define LMF_HELP_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>

/* When 'entry' is the api name of an op of the table, writes into 'buf'
 * the op's TensorFlow name and how its gradient is computed; returns
 * whether it did. */
bool lmf_help_op_note(const char *entry, char *buf, size_t cap);

/* Pushes "<class> methods (...):\n  a, b, c" for the value at 'idx' (its
 * metatable's methods, sorted) and returns 1; 0 (nothing pushed) when it
 * has none. */
int lmf_help_methods(lua_State *L, int idx);

/* For an object of a lib/ class (its metatable has '__properties', the
 * class's property getters): pushes two sorted arrays of names, its
 * methods (the class's functions and its bases') and its properties (the
 * getters and the object's own non-function fields), private names (a
 * leading or trailing '_') left out; returns 1. Returns 0, nothing pushed,
 * for any other value. Reads with raw gets only: no Lua code of the
 * object's runs (completion calls it while the user types). */
int lmf_object_members(lua_State *L, int idx);

#endif
