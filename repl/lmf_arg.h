/* lmf_arg.h — the argument layer of the bindings (repl/lmf_arg.c), as
 * lauxlib is to Lua: arguments, options, errors and text buffers. It knows
 * no box (tensors, Variables, graphs: lmf.h). The floors of repl/ are in
 * doc/design.md. */
#ifndef LMF_ARG_H
#define LMF_ARG_H

#include <stdbool.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/dtype.h"
#include "core/err.h"
#include "core/strbuf.h"

/* The string at 'idx' as a file path; raises naming 'fname' when it is
 * empty or holds a NUL byte (C would silently cut the path there). */
const char *lmf_check_path(lua_State *L, int idx, const char *fname);

/* The string at 'idx' when it names something (an option's choice, a
 * dtype): NULL when the value is not a string or holds a NUL byte, which C
 * would cut ("SAME\0x" is not "SAME"). */
const char *lmf_name_string(lua_State *L, int idx);

/* Pushes the value at 'idx' as text for an error message (luaL_tolstring,
 * with a NUL byte shown as \0) and returns it. */
const char *lmf_value_text(lua_State *L, int idx);

/* Pushes the engine's pending message and clears it. Every engine error
 * reaches Lua through here: while Ctrl-C is pending, the error is the
 * interrupt (lmf_interrupt_taken). */
void lmf_push_engine_error(lua_State *L);

/* Raises a Lua error with the engine's pending message, after the caller's
 * position ("script.lua:12: ", as luaL_error gives), and clears it.
 * Call only after releasing every C temporary. */
int lmf_raise(lua_State *L);

/* Raises when 'st' is not MF_OK. */
void lmf_check_status(lua_State *L, MfStatus st);
/* lmf_check_status for a file writer's status: on MF_OK the file is in
 * place, so a Ctrl-C that came during the write stops the script after the
 * call returns instead of failing it (a failure means the old file is
 * untouched: write_file.c stops before the rename when interrupted). */
void lmf_check_written(lua_State *L, MfStatus st);

/* Reads a dtype name at 'idx' (or 'dflt' when absent/nil). */
MfDType lmf_opt_dtype(lua_State *L, int idx, MfDType dflt);
/* The 'dtype' option of the table at 'idx': its MfDType, or -1 when absent;
 * raises "FNAME: option 'dtype' must be a dtype name (...), got X". */
int lmf_opt_dtype_field(lua_State *L, int idx, const char *fname);

/* Reads a shape {2, 3} (or a single number) at 'idx' into 'shape'; returns
 * the rank. 'allow_unknown' lets -1 through (placeholders, reshape). */
int lmf_check_shape(lua_State *L, int idx, const char *fname, int64_t *shape, int allow_unknown);

/* Converts a 1-based (or negative) Lua axis to 0-based for rank 'rank';
 * raises naming 'fname' when out of range. 'extra' widens the range by one
 * (expand_dims, stack take an axis after the last). */
int64_t lmf_axis(lua_State *L, const char *fname, lua_Integer axis, int rank, int extra);
/* The axis at 'idx' (an integer, 1-based or negative) through lmf_axis;
 * raises "FNAME: an axis must be an integer, got ..." for anything else. */
int64_t lmf_check_axis(lua_State *L, int idx, const char *fname, int rank, int extra);

/* The integer at 'idx' (a Lua integer or a whole float), or raises
 * "FNAME: WHAT must be an integer, got ...". */
lua_Integer lmf_check_integer(lua_State *L, int idx, const char *fname, const char *what);

/* Options table helpers: the field 'key' of the table at 'idx' (which may be
 * absent or nil). 'lmf_opt_field' pushes it and returns 1, or pushes nothing
 * and returns 0 when 'idx' is not a table or the field is nil; the typed
 * readers return 'dflt' then, else raise "FNAME: option 'key' must be a
 * number, got ...". */
int lmf_opt_field(lua_State *L, int idx, const char *key);
int lmf_opt_bool(lua_State *L, int idx, const char *fname, const char *key, int dflt);
lua_Number lmf_opt_number(lua_State *L, int idx, const char *fname, const char *key,
                          lua_Number dflt);
lua_Integer lmf_opt_integer(lua_State *L, int idx, const char *fname, const char *key,
                            lua_Integer dflt);
/* lmf_opt_integer for an option whose absence matters (no default stands
 * for it): sets '*v' and returns true when the option is given. */
bool lmf_opt_integer_given(lua_State *L, int idx, const char *fname, const char *key,
                           lua_Integer *v);

/* Raises "fname: unknown option 'k' (known: a, b)" when the table at 'idx'
 * has a key outside the NULL-terminated 'known', so a misspelled option is an
 * error rather than silently ignored. Does nothing when 'idx' holds no table
 * (callers check the argument's type, some also take a positional value). */
void lmf_check_options(lua_State *L, int idx, const char *fname, const char *const *known);
/* Raises "bad argument #arg to 'fname' (want expected, got <type>)", naming
 * the function explicitly (luaL_argerror guesses it from the stack). */
int lmf_arg_error(lua_State *L, int arg, const char *fname, const char *want);
/* Raises "bad argument #n to 'fname' (no value expected ...)" when more than
 * 'max' arguments are given (trailing nils aside; n is the first non-nil one
 * after 'max'): hand-written bindings call it first, as the binder does for
 * every op. */
void lmf_check_nargs(lua_State *L, const char *fname, int max);

/* Pushes an empty text buffer, freed by its __gc should a Lua error unwind
 * before 'lmf_push_strbuf' (for the engine's listings: graph, DOT, tape). */
MfStrBuf *lmf_new_strbuf(lua_State *L);

/* Replaces buffer 'b' (on top, from lmf_new_strbuf) by its text, or raises
 * the engine's message when 'st' (what filled it returned) is not MF_OK. */
void lmf_push_strbuf(lua_State *L, MfStrBuf *b, MfStatus st);

#endif
