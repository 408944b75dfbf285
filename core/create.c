/* create.c — fill, eye, range and linspace (see create.h).
 *
 * Every helper checks the requested size first with 'mf_create_check_size',
 * so an absurd request (mf.zeros{1e6, 1e6}) fails with a message naming the
 * user's function before anything is allocated. Outputs are fresh and
 * contiguous; kernels are plain typed loops. */
#include "create.h"

#include <math.h>
#include <string.h>

#include "half.h"
#include "ops/fill.h"

MfStatus mf_create_check_size(const char *who, MfDType dt, int rank, const int64_t *shape)
{
    char buf[160];
    if (rank < 0 || rank > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "%s: rank must be 0..%d, got %d", who, MF_MAX_RANK, rank);
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0)
            return mf_err_set(MF_ESHAPE, "%s: dimensions must be >= 0, got %lld for "
                              "dimension %d (1-based)", who, (long long)shape[i], i + 1);
    int64_t n;
    if (!mf_shape_fits(dt, rank, shape, &n)) {
        double bytes = (double)mf_dtype_size(dt);
        bool empty = false;
        for (int i = 0; i < rank; i++) {
            bytes *= shape[i] ? (double)shape[i] : 1.0;
            empty = empty || shape[i] == 0;
        }
        /* empty, but its strides and loop counts would overflow */
        if (empty)
            return mf_err_set(MF_ENOMEM, "%s: shape %s is too large: the dimensions other "
                              "than 0 of an empty shape may multiply to at most 2^56",
                              who, mf_shape_str(rank, shape, buf, sizeof buf));
        return mf_err_set(MF_ENOMEM, "%s: shape %s of %s is too large (%.3g bytes; the limit "
                          "is %lld bytes)", who, mf_shape_str(rank, shape, buf, sizeof buf),
                          mf_dtype_name(dt), bytes, (long long)MF_MAX_TENSOR_BYTES);
    }
    return MF_OK;
}

/* A fresh tensor after the size check; failures name 'who'. */
static MfStatus new_tensor(const char *who, MfDType dt, int rank, const int64_t *shape,
                           MfTensor **out)
{
    *out = NULL;
    MfStatus st = mf_create_check_size(who, dt, rank, shape);
    if (st != MF_OK)
        return st;
    *out = mf_tensor_new(dt, rank, shape);
    if (!*out) {
        mf_err_prefix("%s", who);
        return MF_ENOMEM;
    }
    return MF_OK;
}

#define FILL_LOOP(T, v)                                                            \
    do {                                                                           \
        T *p = (T *)t->storage->data, x = (v);                                     \
        for (int64_t i = 0; i < n; i++)                                            \
            p[i] = x;                                                              \
    } while (0)

/* Writes one value into every element; 'iv' is used for integer dtypes
 * when 'exact' is set (int64 values beyond 2^53). */
static void fill_data(MfTensor *t, double value, int64_t iv, bool exact)
{
    int64_t n = mf_tensor_numel(t);
    switch (t->dtype) {
    case MF_FLOAT32: FILL_LOOP(float, (float)value); break;
    case MF_FLOAT64: FILL_LOOP(double, value); break;
    case MF_INT32: FILL_LOOP(int32_t, exact ? (int32_t)iv : (int32_t)value); break;
    case MF_INT64: FILL_LOOP(int64_t, exact ? iv : (int64_t)value); break;
    case MF_BOOL: memset(t->storage->data, exact ? iv != 0 : value != 0, (size_t)n); break;
    case MF_UINT8: memset(t->storage->data, exact ? (uint8_t)iv : mf_sat_u8(value), (size_t)n);
        break;
    case MF_FLOAT16: FILL_LOOP(uint16_t, mf_f64_to_f16(value)); break;
    case MF_BFLOAT16: FILL_LOOP(uint16_t, mf_f32_to_bf16((float)value)); break;
    default: break;
    }
}

MfStatus mf_create_fill(const char *who, MfDType dt, int rank, const int64_t *shape,
                        double value, MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_fits(dt, value))
        return mf_err_set(MF_EARG, "%s: the value %g does not fit %s", who, value,
                          mf_dtype_name(dt));
    MfStatus st = new_tensor(who, dt, rank, shape, out);
    if (st == MF_OK)
        fill_data(*out, value, 0, false);
    return st;
}

MfStatus mf_create_fill_int(const char *who, MfDType dt, int rank, const int64_t *shape,
                            int64_t value, MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_fits_int(dt, value))
        return mf_err_set(MF_EARG, "%s: the value %lld does not fit %s", who, (long long)value,
                          mf_dtype_name(dt));
    MfStatus st = new_tensor(who, dt, rank, shape, out);
    if (st == MF_OK)
        fill_data(*out, (double)value, value, true);
    return st;
}

MfStatus mf_create_fill_scalar(const char *who, int dt, const MfScalar *v, int rank,
                               const int64_t *shape, MfTensor **out)
{
    *out = NULL;
    MfDType d = dt >= 0 ? (MfDType)dt : v->dtype >= 0 ? (MfDType)v->dtype
                : v->is_bool ? MF_BOOL : MF_FLOAT32;
    if (v->is_bool != (d == MF_BOOL))
        return mf_err_set(MF_EARG, "%s: a %s value does not fit dtype %s", who,
                          v->is_bool ? "boolean" : "number", mf_dtype_name(d));
    if (v->is_int)
        return mf_create_fill_int(who, d, rank, shape, v->i, out);
    if (!mf_dtype_is_int(d))
        return mf_create_fill(who, d, rank, shape, v->x, out);
    /* a whole float in int64's range is the integer it writes */
    if (!(v->x == floor(v->x) && v->x >= -0x1p63 && v->x < 0x1p63))
        return mf_err_set(MF_EARG, "%s: the value for an integer dtype must be an integer, got "
                          "%.14g", who, v->x);
    return mf_create_fill_int(who, d, rank, shape, (int64_t)v->x, out);
}

MfStatus mf_create_scalar_of(const char *who, const MfTensor *t, MfScalar *v)
{
    if (t->node || mf_tensor_numel(t) != 1)
        return mf_err_set(MF_EARG, "%s: value must be a number, a boolean or a one-element "
                          "tensor", who);
    *v = (MfScalar){.dtype = (int)t->dtype, .is_bool = t->dtype == MF_BOOL,
                    .is_int = mf_dtype_is_int(t->dtype) || t->dtype == MF_BOOL};
    v->i = v->is_int ? mf_tensor_get_int(t, 0) : 0;
    v->x = mf_tensor_get(t, 0);
    return MF_OK;
}

MfStatus mf_create_shape_of(const char *who, const MfTensor *t, int64_t *shape, int *rank)
{
    *rank = 0;
    if (t->node && mf_dtype_is_int(t->dtype) && t->rank == 1 && t->shape[0] >= 0 &&
        t->shape[0] <= MF_MAX_RANK) {
        *rank = MF_CREATE_RUN_TIME_SHAPE;
        return MF_OK;
    }
    if (t->node || !mf_dtype_is_int(t->dtype) || t->rank > 1 ||
        mf_tensor_numel(t) > MF_MAX_RANK)
        return mf_err_set(MF_EARG, "%s: a shape tensor must be a 1-D int32/int64 tensor of at "
                          "most %d entries", who, MF_MAX_RANK);
    int n = (int)mf_tensor_numel(t);
    for (int i = 0; i < n; i++) {
        shape[i] = mf_tensor_get_int(t, i);
        if (shape[i] < 0)
            return mf_err_set(MF_EARG, "%s: shape entry %d must be >= 0, got %lld", who, i + 1,
                              (long long)shape[i]);
    }
    *rank = n;
    return MF_OK;
}

MfStatus mf_create_like(const char *who, MfTensor *t, MfDType dt, int value, MfTensor **out)
{
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0)
            return mf_fill_like(t, dt, value, out);
    return mf_create_fill_int(who, dt, t->rank, t->shape, value, out);
}

MfStatus mf_create_eye(MfDType dt, int64_t rows, int64_t cols, MfTensor **out)
{
    *out = NULL;
    if (rows < 0 || cols < 0)
        return mf_err_set(MF_ESHAPE, "eye: sizes must be >= 0, got %lld x %lld", (long long)rows,
                          (long long)cols);
    int64_t shape[2] = {rows, cols};
    MfStatus st = mf_create_fill("eye", dt, 2, shape, 0.0, out);
    if (st != MF_OK)
        return st;
    int64_t n = rows < cols ? rows : cols;
    size_t es = mf_dtype_size(dt);
    char *base = (*out)->storage->data;
    for (int64_t i = 0; i < n; i++) {
        char *p = base + (i * cols + i) * (int64_t)es;
        switch (dt) {
        case MF_FLOAT32: *(float *)p = 1.0f; break;
        case MF_FLOAT64: *(double *)p = 1.0; break;
        case MF_INT32: *(int32_t *)p = 1; break;
        case MF_INT64: *(int64_t *)p = 1; break;
        case MF_FLOAT16: *(uint16_t *)p = mf_f64_to_f16(1.0); break;
        case MF_BFLOAT16: *(uint16_t *)p = mf_f32_to_bf16(1.0f); break;
        default: *(uint8_t *)p = 1; break;
        }
    }
    return MF_OK;
}

MfStatus mf_create_range(MfDType dt, double start, double limit, double delta, MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_is_float(dt))
        return mf_err_set(MF_EDTYPE, "range: expected a float dtype here, got %s",
                          mf_dtype_name(dt));
    if (!isfinite(start) || !isfinite(limit) || !isfinite(delta))
        return mf_err_set(MF_EARG, "range: start, limit and delta must be finite, got %g, %g, %g",
                          start, limit, delta);
    if (delta == 0)
        return mf_err_set(MF_EARG, "range: delta must not be 0");
    double count = ceil((limit - start) / delta);
    if (!(count > 0))
        count = 0;
    if (count > (double)MF_MAX_TENSOR_BYTES)
        return mf_err_set(MF_ENOMEM, "range: %.3g elements are too many (start %g, limit %g, "
                          "delta %g)", count, start, limit, delta);
    int64_t n = (int64_t)count;
    MfStatus st = new_tensor("range", dt, 1, &n, out);
    if (st != MF_OK)
        return st;
    if (dt == MF_FLOAT32) {
        float *p = (*out)->storage->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(start + (double)i * delta);
    } else {
        double *p = (*out)->storage->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = start + (double)i * delta;
    }
    return MF_OK;
}

/* Elements of an integer range, computed in unsigned arithmetic so that
 * wide spans cannot overflow. */
static int64_t int_range_count(int64_t start, int64_t limit, int64_t delta)
{
    uint64_t span, step;
    if (delta > 0 && limit > start) {
        span = (uint64_t)limit - (uint64_t)start;
        step = (uint64_t)delta;
    } else if (delta < 0 && limit < start) {
        span = (uint64_t)start - (uint64_t)limit;
        step = (uint64_t)0 - (uint64_t)delta;
    } else {
        return 0;
    }
    uint64_t n = span / step + (span % step != 0);
    return n > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)n;
}

MfStatus mf_create_range_int(MfDType dt, int64_t start, int64_t limit, int64_t delta,
                             MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_is_int(dt))
        return mf_err_set(MF_EDTYPE, "range: expected an integer dtype here, got %s",
                          mf_dtype_name(dt));
    if (delta == 0)
        return mf_err_set(MF_EARG, "range: delta must not be 0");
    if (dt == MF_INT32 && (start < INT32_MIN || start > INT32_MAX || limit < INT32_MIN ||
                           limit > INT32_MAX || delta < INT32_MIN || delta > INT32_MAX))
        return mf_err_set(MF_EARG, "range: start %lld, limit %lld or delta %lld does not fit "
                          "int32 (pass {dtype = \"int64\"})", (long long)start,
                          (long long)limit, (long long)delta);
    int64_t n = int_range_count(start, limit, delta);
    MfStatus st = new_tensor("range", dt, 1, &n, out);
    if (st != MF_OK)
        return st;
    /* Unsigned steps: the last value lies between start and limit, so it
     * fits, but intermediate signed sums could formally overflow. */
    uint64_t v = (uint64_t)start;
    if (dt == MF_INT32) {
        int32_t *p = (*out)->storage->data;
        for (int64_t i = 0; i < n; i++, v += (uint64_t)delta)
            p[i] = (int32_t)(int64_t)v;
    } else {
        int64_t *p = (*out)->storage->data;
        for (int64_t i = 0; i < n; i++, v += (uint64_t)delta)
            p[i] = (int64_t)v;
    }
    return MF_OK;
}

MfStatus mf_create_range_of(int n, const double given[3], const int64_t igiven[3], bool all_int,
                            int dt, MfTensor **out)
{
    *out = NULL;
    double v[3] = {0, given[0], 1};   /* range(limit) */
    int64_t iv[3] = {0, igiven[0], 1};
    for (int i = 0; n > 1 && i < n; i++)
        v[i] = given[i], iv[i] = igiven[i];
    MfDType d = dt >= 0 ? (MfDType)dt : all_int ? MF_INT32 : MF_FLOAT32;
    if (d == MF_BOOL)
        return mf_err_set(MF_EDTYPE, "range: dtype bool is not a number type");
    if (!mf_dtype_is_int(d))
        return mf_create_range(d, v[0], v[1], v[2], out);
    if (all_int)
        return mf_create_range_int(d, iv[0], iv[1], iv[2], out);
    for (int i = 0; i < 3; i++)
        if (v[i] != floor(v[i]) || fabs(v[i]) > 9007199254740992.0)
            return mf_err_set(MF_EARG, "range: dtype %s needs integer start, limit and delta, "
                              "got %f", mf_dtype_name(d), v[i]);
    return mf_create_range_int(d, (int64_t)v[0], (int64_t)v[1], (int64_t)v[2], out);
}

MfStatus mf_create_linspace(MfDType dt, double a, double b, int64_t n, MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_is_float(dt))
        return mf_err_set(MF_EDTYPE, "linspace: expected float32 or float64, got %s",
                          mf_dtype_name(dt));
    if (n < 1)
        return mf_err_set(MF_EARG, "linspace: n must be >= 1, got %lld", (long long)n);
    MfStatus st = new_tensor("linspace", dt, 1, &n, out);
    if (st != MF_OK)
        return st;
    double step = n > 1 ? (b - a) / (double)(n - 1) : 0.0;
    for (int64_t i = 0; i < n; i++) {
        /* The last value is 'b' exactly, not a + (n-1) * step. */
        double v = i == n - 1 && n > 1 ? b : a + (double)i * step;
        if (dt == MF_FLOAT32)
            ((float *)(*out)->storage->data)[i] = (float)v;
        else
            ((double *)(*out)->storage->data)[i] = v;
    }
    return MF_OK;
}

MfStatus mf_create_constant(MfTensor *t, int dt, int rank, const int64_t *shape,
                            MfTensor **out)
{
    char want[160], got[160];
    *out = NULL;
    if (dt >= 0 && dt != (int)t->dtype)
        return mf_err_set(MF_EDTYPE, "constant: data has dtype %s but dtype %s was asked "
                          "(convert with mf.cast)", mf_dtype_name(t->dtype),
                          mf_dtype_name((MfDType)dt));
    if (rank < 0) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    if (t->node)
        return mf_err_set(MF_ESHAPE, "constant: cannot give a shape to a symbolic (graph) "
                          "tensor; use mf.reshape");
    if (mf_shape_numel(rank, shape) != mf_tensor_numel(t))
        return mf_err_set(MF_ESHAPE, "constant: data has %lld element(s) (shape %s) but shape "
                          "%s needs %lld", (long long)mf_tensor_numel(t),
                          mf_shape_str(t->rank, t->shape, got, sizeof got),
                          mf_shape_str(rank, shape, want, sizeof want),
                          (long long)mf_shape_numel(rank, shape));
    MfTensor *c = mf_tensor_contiguous(t);   /* NULL: out of memory, said by it */
    if (!c)
        return MF_ENOMEM;
    int64_t strides[MF_MAX_RANK];
    mf_shape_strides(rank, shape, strides);
    *out = mf_tensor_view(c, rank, shape, strides, c->offset);
    mf_tensor_release(c);
    return *out ? MF_OK : MF_ENOMEM;
}
