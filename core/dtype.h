/* dtype.h — the eight element types and their names. Newer dtypes come
 * last so the older ones keep their numbers. uint8 (images, IDX files) is
 * not one of the "int" dtypes of mf_dtype_is_int (int32, int64): ops take
 * it only where they say so (casts, comparisons, add/subtract/multiply/
 * maximum/minimum, shape ops), and others refuse it naming the dtype.
 * float16 and bfloat16 are storage dtypes (mf_dtype_is_half, not
 * mf_dtype_is_float): tensors hold, print, save and cast them, and ops
 * compute them in float32 (core/half_call.c). */
#ifndef MF_DTYPE_H
#define MF_DTYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef enum MfDType {
    MF_FLOAT32 = 0,
    MF_FLOAT64,
    MF_INT32,
    MF_INT64,
    MF_BOOL,
    MF_UINT8,
    MF_FLOAT16,
    MF_BFLOAT16,
    MF_NDTYPES
} MfDType;

/* The number of entries of array 'a'. A table indexed by an enum checks
 * it has one entry per value: _Static_assert(MF_COUNTOF(t) == MF_NDTYPES,
 * ...), so a value added without its entry does not compile. */
#define MF_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* Bytes per element. */
size_t mf_dtype_size(MfDType dt);

/* The Lua-facing name: "float32", "float64", "int32", "int64", "bool", "uint8",
 * "float16", "bfloat16". */
const char *mf_dtype_name(MfDType dt);

/* Parses a name (also "float", "double", "int", "long", "half"); false when
 * unknown. */
bool mf_dtype_parse(const char *name, MfDType *out);

static inline bool mf_dtype_is_float(MfDType dt)
{
    return dt == MF_FLOAT32 || dt == MF_FLOAT64;
}

static inline bool mf_dtype_is_half(MfDType dt)
{
    return dt == MF_FLOAT16 || dt == MF_BFLOAT16;
}

static inline bool mf_dtype_is_int(MfDType dt)
{
    return dt == MF_INT32 || dt == MF_INT64;
}

/* Whether the number 'v' converts to 'dt' without overflow: always for the
 * float types and bool; for the integers, when it is not NaN and lies in the
 * range once its fraction is dropped (C leaves the conversion undefined
 * otherwise). The _int form for a Lua integer. */
bool mf_dtype_fits(MfDType dt, double v);
bool mf_dtype_fits_int(MfDType dt, int64_t v);

/* Float to integer: truncation toward zero, saturated, NaN to 0 (mf.cast's
 * rule: defined behaviour where C's conversion would be undefined). */
static inline int32_t mf_sat_i32(double x)
{
    if (x != x)
        return 0;
    if (x >= 2147483648.0)
        return INT32_MAX;
    if (x <= -2147483649.0)
        return INT32_MIN;
    return (int32_t)x;
}

static inline uint8_t mf_sat_u8(double x)
{
    if (x != x || x <= 0)
        return 0;
    if (x >= 255)
        return 255;
    return (uint8_t)x;
}

static inline int64_t mf_sat_i64(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775808.0)
        return INT64_MAX;
    if (x < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

#endif
