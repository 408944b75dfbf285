/* tensor.c — tensor headers, storages, views and copies (see tensor.h).
 *
 * Headers and storages come from the caching allocator, so a small eager op
 * costs a few free-list pops, not malloc calls. */
#include "tensor.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "half.h"

static int64_t live_tensors;
static int64_t next_id = 1;
static void (*node_retain)(void *node);
static void (*node_release)(void *node);
static void (*free_hook)(int64_t id);

void mf_tensor_set_free_hook(void (*on_free)(int64_t id))
{
    free_hook = on_free;
}

void mf_tensor_set_node_hooks(void (*retain)(void *node), void (*release)(void *node))
{
    node_retain = retain;
    node_release = release;
}

int64_t mf_shape_numel(int rank, const int64_t *shape)
{
    /* a symbolic shape may be far beyond any tensor: saturate at INT64_MAX
     * instead of overflowing (a zero dim still makes 0) */
    int64_t n = 1;
    bool over = false;
    for (int i = 0; i < rank; i++) {
        int64_t d = shape[i] < 0 ? 0 : shape[i];
        if (d == 0)
            return 0;
        over = over || __builtin_mul_overflow(n, d, &n);
    }
    return over ? INT64_MAX : n;
}

int64_t mf_tensor_numel(const MfTensor *t)
{
    return mf_shape_numel(t->rank, t->shape);
}

void mf_shape_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        /* only an empty tensor (a 0 dim beside huge ones, e.g. (0,2^32,2^32))
         * can overflow: its strides never reach an element, so stop growing */
        if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s))
            s = 0;
    }
}

char *mf_shape_str(int rank, const int64_t *shape, char *buf, int cap)
{
    int n = snprintf(buf, (size_t)cap, "(");
    for (int i = 0; i < rank && n < cap; i++) {
        const char *sep = i ? "," : "";
        if (shape[i] < 0)
            n += snprintf(buf + n, (size_t)(cap - n), "%s?", sep);
        else
            n += snprintf(buf + n, (size_t)(cap - n), "%s%lld", sep, (long long)shape[i]);
    }
    if (n < cap)
        snprintf(buf + n, (size_t)(cap - n), rank == 1 ? ",)" : ")");
    return buf;
}

/* Fills a tensor header at 't' (NULL: allocation failed, reported as such). */
static MfTensor *header_init(MfTensor *t, MfDType dt, int rank, const int64_t *shape)
{
    if (!t) {
        mf_err_nomem("tensor", sizeof *t);
        return NULL;
    }
    t->refcount = 1;
    t->id = next_id++;
    t->dtype = dt;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->shape[i] = shape[i];
    mf_shape_strides(rank, shape, t->strides);
    t->offset = 0;
    t->storage = NULL;
    t->node = NULL;
    t->node_output = 0;
    live_tensors++;
    return t;
}

static MfTensor *header_new(MfDType dt, int rank, const int64_t *shape)
{
    return header_init(mf_alloc(sizeof(MfTensor)), dt, rank, shape);
}

/* A storage lives in the block of the tensor that created it
 * (mf_tensor_new): that tensor's header, padded to 64 bytes, then the
 * storage header, padded to 64 bytes so the data stays 64-byte aligned for
 * vector kernels and BLAS, then the data. One allocation and one free per
 * tensor, and releasing a tensor touches neighbouring cache lines instead
 * of two blocks that may have left the cache apart (a large part of a
 * 1-element eager op). Views have headers of their own; the block goes
 * when the last of its tensor and the storage's views lets go. */
#define TENSOR_HEADER ((sizeof(MfTensor) + 63) / 64 * 64)
#define STORAGE_HEADER 64

static void storage_release(MfStorage *s)
{
    if (s && --s->refcount == 0)
        mf_dealloc((char *)s - TENSOR_HEADER, TENSOR_HEADER + STORAGE_HEADER + s->nbytes);
}

bool mf_shape_fits(MfDType dt, int rank, const int64_t *shape, int64_t *numel)
{
    int64_t limit = MF_MAX_TENSOR_BYTES / (int64_t)mf_dtype_size(dt);
    int64_t extent = 1;
    bool empty = false;
    /* multiply-with-overflow instead of a division per dim: this runs for
     * every tensor an op makes */
    for (int i = 0; i < rank; i++) {
        if (shape[i] == 0)
            empty = true;
        else if (__builtin_mul_overflow(extent, shape[i], &extent) || extent > MF_MAX_EXTENT)
            return false;
    }
    *numel = empty ? 0 : extent;
    return empty || extent <= limit;
}

/* Checks rank and dims and computes the byte size without overflow. */
static bool shape_bytes(MfDType dt, int rank, const int64_t *shape, size_t *nbytes)
{
    char buf[160];
    if (rank < 0 || rank > MF_MAX_RANK) {
        mf_err_set(MF_ESHAPE, "tensor: rank must be 0..%d, got %d", MF_MAX_RANK, rank);
        return false;
    }
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0) {
            mf_err_set(MF_ESHAPE, "tensor: dimensions must be >= 0, got %lld for dimension %d",
                       (long long)shape[i], i + 1);
            return false;
        }
    int64_t n;
    if (!mf_shape_fits(dt, rank, shape, &n)) {
        mf_err_set(MF_ENOMEM, "tensor: shape %s is too large (more than %lld bytes)",
                   mf_shape_str(rank, shape, buf, sizeof buf), (long long)MF_MAX_TENSOR_BYTES);
        return false;
    }
    *nbytes = (size_t)n * mf_dtype_size(dt);
    return true;
}

int64_t mf_tensor_next_id(void)
{
    return next_id;
}

MfStatus mf_shape_check(MfDType dt, int rank, const int64_t *shape)
{
    int64_t known[MF_MAX_RANK];
    size_t nbytes;
    for (int i = 0; i < rank && i < MF_MAX_RANK; i++)
        known[i] = shape[i] == -1 ? 1 : shape[i];
    return shape_bytes(dt, rank, known, &nbytes) ? MF_OK : MF_ESHAPE;
}

MfTensor *mf_tensor_new(MfDType dt, int rank, const int64_t *shape)
{
    size_t nbytes;
    if (!shape_bytes(dt, rank, shape, &nbytes))
        return NULL;
    char *block = mf_alloc(TENSOR_HEADER + STORAGE_HEADER + nbytes);
    if (!block) {
        char buf[160];
        mf_err_set(MF_ENOMEM, "tensor: out of memory for shape %s (%zu bytes)",
                   mf_shape_str(rank, shape, buf, sizeof buf), nbytes);
        return NULL;
    }
    MfTensor *t = header_init((MfTensor *)block, dt, rank, shape);
    MfStorage *s = (MfStorage *)(block + TENSOR_HEADER);
    s->refcount = 1;
    s->nbytes = nbytes;
    s->data = (char *)s + STORAGE_HEADER;
    t->storage = s;
    return t;
}

MfTensor *mf_tensor_zeros(MfDType dt, int rank, const int64_t *shape)
{
    MfTensor *t = mf_tensor_new(dt, rank, shape);
    if (t)
        memset(t->storage->data, 0, t->storage->nbytes);
    return t;
}

MfTensor *mf_tensor_from_data(MfDType dt, int rank, const int64_t *shape, const void *data)
{
    MfTensor *t = mf_tensor_new(dt, rank, shape);
    if (t)
        memcpy(t->storage->data, data, t->storage->nbytes);
    return t;
}

MfTensor *mf_tensor_scalar(MfDType dt, double value)
{
    MfTensor *t = mf_tensor_new(dt, 0, NULL);
    if (!t)
        return NULL;
    void *p = t->storage->data;
    switch (dt) {
    case MF_FLOAT32: *(float *)p = (float)value; break;
    case MF_FLOAT64: *(double *)p = value; break;
    case MF_INT32: *(int32_t *)p = mf_sat_i32(value); break;
    case MF_INT64: *(int64_t *)p = mf_sat_i64(value); break;
    case MF_BOOL: *(uint8_t *)p = value != 0; break;
    case MF_UINT8: *(uint8_t *)p = mf_sat_u8(value); break;
    case MF_FLOAT16: *(uint16_t *)p = mf_f64_to_f16(value); break;
    case MF_BFLOAT16: *(uint16_t *)p = mf_f32_to_bf16((float)value); break;
    default: break;
    }
    return t;
}

MfTensor *mf_tensor_view(const MfTensor *t, int rank, const int64_t *shape,
                         const int64_t *strides, int64_t offset)
{
    MfTensor *v = header_new(t->dtype, rank, shape);
    if (!v)
        return NULL;
    for (int i = 0; i < rank; i++)
        v->strides[i] = strides[i];
    v->offset = offset;
    v->storage = t->storage;
    if (v->storage)
        v->storage->refcount++;
    return v;
}

MfTensor *mf_tensor_symbolic(MfDType dt, int rank, const int64_t *shape, void *node, int output)
{
    MfTensor *t = header_new(dt, rank, shape);
    if (!t)
        return NULL;
    t->node = node;
    t->node_output = output;
    if (node && node_retain)
        node_retain(node);
    return t;
}

void mf_tensor_retain(MfTensor *t)
{
    if (t)
        t->refcount++;
}

void mf_tensor_release(MfTensor *t)
{
    if (!t || --t->refcount > 0)
        return;
    if (t->node && node_release)
        node_release(t->node);
    if (free_hook)
        free_hook(t->id);
    live_tensors--;
    MfStorage *s = t->storage;
    bool own_block = s && (char *)s == (char *)t + TENSOR_HEADER;
    storage_release(s);
    /* A view's or a symbolic tensor's header is a block of its own; the
     * creator's header goes with its storage block (a view may still use
     * the data: then the dead header waits there). */
    if (!own_block)
        mf_dealloc(t, sizeof *t);
}

bool mf_tensor_is_contiguous(const MfTensor *t)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != s)
            return false;
        s *= t->shape[i];
    }
    return true;
}

void *mf_tensor_data(const MfTensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)mf_dtype_size(t->dtype);
}

/* Offset in elements of row-major element 'i' of a possibly strided tensor. */
static int64_t element_offset(const MfTensor *t, int64_t i)
{
    int64_t off = t->offset;
    for (int d = t->rank - 1; d >= 0; d--) {
        int64_t n = t->shape[d];
        off += (i % n) * t->strides[d];
        i /= n;
    }
    return off;
}

double mf_tensor_get(const MfTensor *t, int64_t i)
{
    int64_t off = element_offset(t, i);
    const void *base = t->storage->data;
    switch (t->dtype) {
    case MF_FLOAT32: return (double)((const float *)base)[off];
    case MF_FLOAT64: return ((const double *)base)[off];
    case MF_INT32: return ((const int32_t *)base)[off];
    case MF_INT64: return (double)((const int64_t *)base)[off];
    case MF_BOOL:
    case MF_UINT8: return ((const uint8_t *)base)[off];
    case MF_FLOAT16: return (double)mf_f16_to_f32(((const uint16_t *)base)[off]);
    case MF_BFLOAT16: return (double)mf_bf16_to_f32(((const uint16_t *)base)[off]);
    default: return 0;
    }
}

int64_t mf_tensor_get_int(const MfTensor *t, int64_t i)
{
    int64_t off = element_offset(t, i);
    switch (t->dtype) {
    case MF_INT32: return ((const int32_t *)t->storage->data)[off];
    case MF_INT64: return ((const int64_t *)t->storage->data)[off];
    case MF_BOOL:
    case MF_UINT8: return ((const uint8_t *)t->storage->data)[off];
    default: return (int64_t)mf_tensor_get(t, i);
    }
}

void mf_tensor_set(MfTensor *t, int64_t i, double v)
{
    int64_t off = element_offset(t, i);
    void *base = t->storage->data;
    switch (t->dtype) {
    case MF_FLOAT32: ((float *)base)[off] = (float)v; break;
    case MF_FLOAT64: ((double *)base)[off] = v; break;
    case MF_INT32: ((int32_t *)base)[off] = (int32_t)v; break;
    case MF_INT64: ((int64_t *)base)[off] = (int64_t)v; break;
    case MF_BOOL: ((uint8_t *)base)[off] = v != 0; break;
    case MF_UINT8: ((uint8_t *)base)[off] = (uint8_t)v; break;
    case MF_FLOAT16: ((uint16_t *)base)[off] = mf_f64_to_f16(v); break;
    case MF_BFLOAT16: ((uint16_t *)base)[off] = mf_f32_to_bf16((float)v); break;
    default: break;
    }
}

void mf_tensor_set_int(MfTensor *t, int64_t i, int64_t v)
{
    if (t->dtype == MF_INT64)
        ((int64_t *)t->storage->data)[element_offset(t, i)] = v;
    else
        mf_tensor_set(t, i, (double)v);
}

MfStatus mf_tensor_check_values(const MfTensor *t, const char *who, bool one)
{
    char buf[160];
    if (t->node)
        return mf_err_set(MF_EARG, "%s: a symbolic (graph) tensor has no values yet; run it in "
                          "a Session", who);
    if (one && mf_tensor_numel(t) != 1)
        return mf_err_set(MF_EARG, "%s: expected a tensor with one element, got shape %s", who,
                          mf_shape_str(t->rank, t->shape, buf, sizeof buf));
    return MF_OK;
}

MfStatus mf_tensor_index(MfTensor *t, int64_t i, int64_t *k, MfTensor **view)
{
    *view = NULL;
    if (t->node)
        return mf_err_set(MF_EARG, "index: a symbolic (graph) tensor has no values; use "
                          "mf.gather or mf.slice");
    if (t->rank == 0)
        return mf_err_set(MF_EARG, "index: a scalar cannot be indexed (use t:item())");
    int64_t n = t->shape[0];
    *k = i >= 1 ? i - 1 : n + i;
    if (i == 0 || *k < 0 || *k >= n)
        return mf_err_set(MF_EARG, "index: index %lld out of range for axis 1 of size %lld "
                          "(indices are 1-based: 1..%lld, or -%lld..-1)", (long long)i,
                          (long long)n, (long long)n, (long long)n);
    if (t->rank == 1)
        return MF_OK;
    *view = mf_tensor_view(t, t->rank - 1, t->shape + 1, t->strides + 1,
                           t->offset + *k * t->strides[0]);
    return *view ? MF_OK : mf_err_nomem("index", sizeof **view);
}

/* Copies rows of the innermost dimension; the outer index walks like an odometer. */
/* n elements of es bytes, 'stride' elements apart, to 'out' packed: one
 * memcpy for a contiguous row, else fixed-size copies the compiler turns
 * into plain loads and stores (a memcpy call of a variable size per element
 * made a strided copy cost about 3 ns per element). */
#define COPY_STRIDED(size)                                                          \
    for (int64_t j = 0; j < n; j++)                                                 \
        memcpy(out + j * (size), in + j * stride * (size), size)

static void copy_row(char *out, const char *in, int64_t n, int64_t stride, size_t es)
{
    if (stride == 1)
        memcpy(out, in, (size_t)n * es);
    else if (es == 4)
        COPY_STRIDED(4);
    else if (es == 8)
        COPY_STRIDED(8);
    else
        for (int64_t j = 0; j < n; j++)
            memcpy(out + j * (int64_t)es, in + j * stride * (int64_t)es, es);
}

void mf_tensor_copy_into(MfTensor *dst, const MfTensor *src)
{
    size_t es = mf_dtype_size(src->dtype);
    int64_t n = mf_tensor_numel(src);
    char *out = mf_tensor_data(dst);
    if (mf_tensor_is_contiguous(src)) {
        memcpy(out, mf_tensor_data(src), (size_t)n * es);
        return;
    }
    if (n == 0)
        return;
    int r = src->rank;
    int64_t inner = src->shape[r - 1], istride = src->strides[r - 1];
    int64_t idx[MF_MAX_RANK] = {0};
    const char *base = (const char *)src->storage->data;
    /* the row's offset follows the odometer: recomputing it from the index
     * cost more than copying a row of 32 floats (a head-transposed view) */
    int64_t off = src->offset;
    for (int64_t done = 0; done < n; done += inner) {
        copy_row(out, base + off * (int64_t)es, inner, istride, es);
        out += inner * (int64_t)es;
        for (int d = r - 2; d >= 0; d--) {
            off += src->strides[d];
            if (++idx[d] < src->shape[d])
                break;
            off -= src->strides[d] * src->shape[d];
            idx[d] = 0;
        }
    }
}

MfTensor *mf_tensor_clone(const MfTensor *t)
{
    MfTensor *c = mf_tensor_new(t->dtype, t->rank, t->shape);
    if (c)
        mf_tensor_copy_into(c, t);
    return c;
}

MfTensor *mf_tensor_contiguous(MfTensor *t)
{
    if (mf_tensor_is_contiguous(t)) {
        mf_tensor_retain(t);
        return t;
    }
    return mf_tensor_clone(t);
}

/* A contiguous half tensor: finite when no element has every exponent bit
 * set ('mask': float16's or bfloat16's exponent). */
static bool half_all_finite(const uint16_t *x, int64_t n, uint16_t mask)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad |= (x[i] & mask) == mask;
    return !bad;
}

bool mf_tensor_all_finite(const MfTensor *t)
{
    bool half = mf_dtype_is_half(t->dtype);
    if ((!mf_dtype_is_float(t->dtype) && !half) || !t->storage)
        return true;
    int64_t n = mf_tensor_numel(t);
    bool ok = true;
    if (half && mf_tensor_is_contiguous(t)) {
        ok = half_all_finite(mf_tensor_data(t), n, t->dtype == MF_FLOAT16 ? 0x7c00u : 0x7f80u);
    } else if (!mf_tensor_is_contiguous(t)) {
        for (int64_t i = 0; i < n && ok; i++)
            ok = isfinite(mf_tensor_get(t, i));
    } else if (t->dtype == MF_FLOAT32) {
        /* written so that it vectorizes (a compare and an OR, no early
         * exit): 12x faster than isfinite() per element on AVX2 */
        const float *x = mf_tensor_data(t);
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad |= !(fabsf(x[i]) <= FLT_MAX);
        ok = !bad;
    } else {
        const double *x = mf_tensor_data(t);
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad |= !(fabs(x[i]) <= DBL_MAX);
        ok = !bad;
    }
    return ok;
}

int64_t mf_tensor_live_count(void)
{
    return live_tensors;
}
