/* format.h — NumPy-style text for tensors (what print(t) shows).
 *
 * The values block follows NumPy's 'str(array)': aligned columns, nested
 * brackets with a newline between rows and a blank line between 2-D blocks,
 * floats with at most 'precision' fraction digits and trailing zeros trimmed
 * ("1." for one), scientific notation when the non-zero finite magnitudes call
 * for it, 'nan' / 'inf', integers exactly, bools as true/false, tensors with
 * more than 'threshold' elements summarised with "..." keeping 'edgeitems' at
 * each edge of every axis, rows wrapped at 'linewidth'.
 *
 * Pure string formatting: no Lua here, so the unit tests can call it. The text
 * lives in an MfStrBuf that the caller owns and frees with 'mf_strbuf_free'. */
#ifndef MF_PRESENT_FORMAT_H
#define MF_PRESENT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/tensor.h"
#include "core/variable.h"

typedef struct MfPrintOptions {
    int precision;     /* fraction digits of floats (default 4) */
    int64_t threshold; /* summarise tensors with more elements (default 1000) */
    int edgeitems;     /* items kept at each edge when summarising (default 3) */
    int linewidth;     /* wrap rows longer than this (default 75) */
} MfPrintOptions;

#define MF_PRINT_DEFAULTS {4, 1000, 3, 75}

/* Limits accepted for each option (set_printoptions checks them). */
#define MF_PRINT_MAX_PRECISION 17
#define MF_PRINT_MAX_ITEMS 1000000

/* The options' names in order (precision, threshold, edgeitems,
 * linewidth), NULL-terminated, and the value of option 'k' of 'o' (a
 * threshold of INT64_MAX: never summarise). */
extern const char *const mf_print_option_names[];
int64_t mf_print_option_get(const MfPrintOptions *o, int k);

/* mf.set_printoptions' rule for one option: sets option 'name' of 'o'
 * (precision 0..17, threshold >= 0 or +inf: never summarise, stored as
 * INT64_MAX; edgeitems and linewidth 1..MF_PRINT_MAX_ITEMS) to a value given
 * as a number: 'is_int' when 'i' holds it exactly, else 'x' (NaN for a value
 * that is not a number). 'got' shows the value as given, for the message:
 * MF_EARG "set_printoptions: precision must be an integer from 0 to 17, got
 * -1" ("threshold must be an integer >= 0 (or math.huge), got -5"). 'name'
 * must be one of the four. */
MfStatus mf_print_option_set(MfPrintOptions *o, const char *name, bool is_int, int64_t i,
                             double x, const char *got);

/* Appends the values block of 't' (no shape line) to 'out': a rank-0 tensor
 * gives just its value, an empty one "[]". 't' must have storage.
 * Returns MF_OK, or MF_ENOMEM with a message ('out' must still be freed). */
MfStatus mf_format_values(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out);

/* Appends the whole printed form of 't' to 'out': the values block, a newline
 * and "shape=(2,3), dtype=float32"; a symbolic tensor (no storage) gives
 * "<symbolic mf.Tensor shape=(?,3), dtype=float32>". Errors as above. */
MfStatus mf_format_tensor(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out);

/* print(v), appended to 'out': "<mf.Variable 'w' shape=(2,) dtype=float32>"
 * (" trainable=false" when not trainable) then a newline and the values
 * block of mf_format_values; a graph variable, whose value lives in a
 * Session, says so instead of values; one without a value yet says that.
 * MF_ENOMEM when 'out' could not grow. */
MfStatus mf_variable_format(const MfVariable *v, const MfPrintOptions *opt, MfStrBuf *out);

#endif
