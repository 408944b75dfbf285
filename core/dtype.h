/* dtype.h — the five element types and their names. */
#ifndef MF_DTYPE_H
#define MF_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum MfDType {
    MF_FLOAT32 = 0,
    MF_FLOAT64,
    MF_INT32,
    MF_INT64,
    MF_BOOL,
    MF_NDTYPES
} MfDType;

/* Bytes per element. */
size_t mf_dtype_size(MfDType dt);

/* The Lua-facing name: "float32", "float64", "int32", "int64", "bool". */
const char *mf_dtype_name(MfDType dt);

/* Parses a name (also "float", "double", "int", "long"); false when unknown. */
bool mf_dtype_parse(const char *name, MfDType *out);

static inline bool mf_dtype_is_float(MfDType dt)
{
    return dt == MF_FLOAT32 || dt == MF_FLOAT64;
}

static inline bool mf_dtype_is_int(MfDType dt)
{
    return dt == MF_INT32 || dt == MF_INT64;
}

#endif
