/* dtype.c — element sizes and names. */
#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} info[] = {
    [MF_FLOAT32] = {"float32", 4}, [MF_FLOAT64] = {"float64", 8}, [MF_INT32] = {"int32", 4},
    [MF_INT64] = {"int64", 8},     [MF_BOOL] = {"bool", 1},      [MF_UINT8] = {"uint8", 1},
    [MF_FLOAT16] = {"float16", 2}, [MF_BFLOAT16] = {"bfloat16", 2},
};
_Static_assert(MF_COUNTOF(info) == MF_NDTYPES, "one name and size per MfDType");

size_t mf_dtype_size(MfDType dt)
{
    return info[dt].size;
}

const char *mf_dtype_name(MfDType dt)
{
    return (unsigned)dt < MF_NDTYPES ? info[dt].name : "?";
}

bool mf_dtype_fits(MfDType dt, double v)
{
    if (dt == MF_INT32)
        return v > -2147483649.0 && v < 2147483648.0;   /* false for NaN */
    if (dt == MF_INT64)
        return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    if (dt == MF_UINT8)
        return v > -1.0 && v < 256.0;
    return true;
}

bool mf_dtype_fits_int(MfDType dt, int64_t v)
{
    if (dt == MF_UINT8)
        return v >= 0 && v <= 255;
    return dt != MF_INT32 || (v >= INT32_MIN && v <= INT32_MAX);
}

bool mf_dtype_parse(const char *name, MfDType *out)
{
    static const struct {
        const char *alias;
        MfDType dt;
    } aliases[] = {{"float", MF_FLOAT32}, {"double", MF_FLOAT64}, {"int", MF_INT32},
                   {"long", MF_INT64}, {"half", MF_FLOAT16}};
    for (int i = 0; i < MF_NDTYPES; i++) {
        if (strcmp(name, info[i].name) == 0) {
            *out = (MfDType)i;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].dt;
            return true;
        }
    }
    return false;
}
