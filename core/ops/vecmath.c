/* vecmath.c — choosing vecmath.h's kernels at run time and running them
 * over tensors: contiguous inputs in chunks over the worker pool, strided
 * ones row by row through a small buffer (the same kernel either way, so a
 * result never depends on the layout or the thread count). */
#include "vecmath.h"

#include <stdlib.h>
#include <string.h>

#include "../parallel.h"
#include "loop.h"

extern const MfVecKernel mf_vec_kernels_avx512[MF_VEC_COUNT];
extern const MfVecKernel mf_vec_kernels_avx2[MF_VEC_COUNT];
extern const MfVecKernel mf_vec_kernels_scalar[MF_VEC_COUNT];
extern const MfVecPowKernel mf_vec_kernels_avx512_pow[2];
extern const MfVecPowKernel mf_vec_kernels_avx2_pow[2];
extern const MfVecPowKernel mf_vec_kernels_scalar_pow[2];
extern const MfVecGradKernel mf_vec_kernels_avx512_grad[MF_VEC_GRAD_COUNT];
extern const MfVecGradKernel mf_vec_kernels_avx2_grad[MF_VEC_GRAD_COUNT];
extern const MfVecGradKernel mf_vec_kernels_scalar_grad[MF_VEC_GRAD_COUNT];
extern const MfVecKernel64 mf_vec_kernels_avx512_f64[MF_VEC_COUNT];
extern const MfVecKernel64 mf_vec_kernels_avx2_f64[MF_VEC_COUNT];
extern const MfVecKernel64 mf_vec_kernels_scalar_f64[MF_VEC_COUNT];

/* Below this many elements a call runs on one thread; chunks are multiples
 * of 64 elements (whole vectors, whole cache lines). */
enum { VEC_SPLIT_MIN = 32768, VEC_CHUNK_ALIGN = 64 };

static int simd_level = -1; /* -1: not chosen yet */

static bool cpu_has(MfSimd level)
{
    switch (level) {
    case MF_SIMD_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    case MF_SIMD_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default:
        return true;
    }
}

const char *mf_simd_name(MfSimd level)
{
    return level == MF_SIMD_AVX512 ? "avx512" : level == MF_SIMD_AVX2 ? "avx2" : "scalar";
}

/* MF_SIMD=avx512|avx2|scalar caps the choice (an unknown value is ignored) */
static MfSimd choose_level(void)
{
    MfSimd cap = MF_SIMD_AVX512;
    const char *env = getenv("MF_SIMD");
    if (env && strcmp(env, "avx2") == 0)
        cap = MF_SIMD_AVX2;
    else if (env && strcmp(env, "scalar") == 0)
        cap = MF_SIMD_SCALAR;
    for (int l = cap; l > MF_SIMD_SCALAR; l--)
        if (cpu_has((MfSimd)l))
            return (MfSimd)l;
    return MF_SIMD_SCALAR;
}

MfSimd mf_simd_level(void)
{
    if (simd_level < 0)
        simd_level = choose_level();
    return (MfSimd)simd_level;
}

bool mf_simd_set_level(MfSimd level)
{
    if (!cpu_has(level))
        return false;
    simd_level = level;
    return true;
}

static MfVecKernel kernel(MfVecFn f)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return mf_vec_kernels_avx512[f];
    case MF_SIMD_AVX2: return mf_vec_kernels_avx2[f];
    default: return mf_vec_kernels_scalar[f];
    }
}

/* the float64 kernel of 'f' (NULL: none) */
static MfVecKernel64 kernel64(MfVecFn f)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return mf_vec_kernels_avx512_f64[f];
    case MF_SIMD_AVX2: return mf_vec_kernels_avx2_f64[f];
    default: return mf_vec_kernels_scalar_f64[f];
    }
}

bool mf_vec_has_f64(MfVecFn f)
{
    return kernel64(f) != NULL;
}

/* pow's kernel: [1] for a contiguous exponent, [0] for one exponent */
static MfVecPowKernel pow_kernel(int contiguous_b)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return mf_vec_kernels_avx512_pow[contiguous_b];
    case MF_SIMD_AVX2: return mf_vec_kernels_avx2_pow[contiguous_b];
    default: return mf_vec_kernels_scalar_pow[contiguous_b];
    }
}

/* the activations' gradient kernels */
static MfVecGradKernel grad_kernel(MfVecGradFn f)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return mf_vec_kernels_avx512_grad[f];
    case MF_SIMD_AVX2: return mf_vec_kernels_avx2_grad[f];
    default: return mf_vec_kernels_scalar_grad[f];
    }
}

/* One kernel over float32 ('k') or float64 ('k64') data. */
typedef struct {
    MfVecKernel k;
    MfVecKernel64 k64;
    const void *x;
    void *y;
    int64_t n;
} VecJob;

/* elements [lo, hi) of the job */
static void vec_run(const VecJob *j, int64_t lo, int64_t hi)
{
    if (j->k64)
        j->k64((const double *)j->x + lo, (double *)j->y + lo, hi - lo);
    else
        j->k((const float *)j->x + lo, (float *)j->y + lo, hi - lo);
}

/* chunk indices [b, e) are blocks of VEC_CHUNK_ALIGN elements */
static void vec_chunk(void *ctx, int64_t b, int64_t e)
{
    const VecJob *j = ctx;
    int64_t lo = b * VEC_CHUNK_ALIGN, hi = e * VEC_CHUNK_ALIGN;
    vec_run(j, lo, hi < j->n ? hi : j->n);
}

static void vec_split(const VecJob *job)
{
    if (job->n < VEC_SPLIT_MIN) {
        vec_run(job, 0, job->n);
        return;
    }
    int64_t blocks = (job->n + VEC_CHUNK_ALIGN - 1) / VEC_CHUNK_ALIGN;
    mf_parallel_for(blocks, VEC_SPLIT_MIN / VEC_CHUNK_ALIGN, vec_chunk, (void *)job);
}

void mf_vec_f32(MfVecFn f, const float *x, float *y, int64_t n)
{
    VecJob job = {kernel(f), NULL, x, y, n};
    vec_split(&job);
}

void mf_vec_f64(MfVecFn f, const double *x, double *y, int64_t n)
{
    VecJob job = {NULL, kernel64(f), x, y, n};
    vec_split(&job);
}

/* rows of a strided input: gathered into a buffer, computed, written (the
 * same kernel as for contiguous data, so the layout never changes a bit) */
static void vec_rows(const VecJob *job, const MfTensor *x, MfTensor *out)
{
    enum { BUF = 256 };
    union { /* one buffer for either dtype, without aliasing a double as floats */
        double d[BUF];
        float f[BUF];
    } buf;
    MfLoop l;
    MfTensor *ts[2] = {out, (MfTensor *)x};
    mf_loop_init(&l, 2, ts, out->rank, out->shape);
    char *p[2];
    while (mf_loop_next(&l, p)) {
        int64_t sx = l.step[1];
        for (int64_t i0 = 0; i0 < l.n; i0 += BUF) {
            int64_t m = l.n - i0 < BUF ? l.n - i0 : BUF;
            VecJob row = *job;
            if (job->k64) {
                const double *in = (const double *)p[1];
                for (int64_t i = 0; i < m; i++)
                    buf.d[i] = in[(i0 + i) * sx];
                row.x = buf.d;
                row.y = (double *)p[0] + i0;
            } else {
                const float *in = (const float *)p[1];
                for (int64_t i = 0; i < m; i++)
                    buf.f[i] = in[(i0 + i) * sx];
                row.x = buf.f;
                row.y = (float *)p[0] + i0;
            }
            vec_run(&row, 0, m);
        }
    }
}

bool mf_vec_unary(MfVecFn f, const MfTensor *x, MfTensor *out)
{
    VecJob job = {NULL, NULL, mf_tensor_data(x), mf_tensor_data(out), mf_tensor_numel(out)};
    if (x->dtype == MF_FLOAT32 && out->dtype == MF_FLOAT32)
        job.k = kernel(f);
    else if (x->dtype == MF_FLOAT64 && out->dtype == MF_FLOAT64)
        job.k64 = kernel64(f);
    if (!job.k && !job.k64)
        return false;
    if (mf_tensor_is_contiguous(x) && mf_tensor_is_contiguous(out))
        vec_split(&job);
    else
        vec_rows(&job, x, out);
    return true;
}

/* Two-input kernels (pow, the activations' gradients): 'full' reads b[i],
 * 'one' (NULL: none) reads b[0] for every element. */
typedef struct {
    MfVecPowKernel k;
    const float *a, *b;
    float *y;
    int64_t n, sb;
} Vec2Job;

static void vec2_chunk(void *ctx, int64_t b, int64_t e)
{
    const Vec2Job *j = ctx;
    int64_t lo = b * VEC_CHUNK_ALIGN, hi = e * VEC_CHUNK_ALIGN;
    if (hi > j->n)
        hi = j->n;
    j->k(j->a + lo, j->b + lo * j->sb, j->y + lo, hi - lo);
}

/* rows of any strides: those the kernels take directly, the rest gathered */
static void vec2_rows(MfVecPowKernel full, MfVecPowKernel one, const MfTensor *a,
                      const MfTensor *b, MfTensor *out)
{
    enum { BUF = 256 };
    float abuf[BUF], bbuf[BUF];
    MfLoop l;
    MfTensor *ts[3] = {out, (MfTensor *)a, (MfTensor *)b};
    mf_loop_init(&l, 3, ts, out->rank, out->shape);
    char *p[3];
    while (mf_loop_next(&l, p)) {
        float *o = (float *)p[0];
        const float *pa = (const float *)p[1], *pb = (const float *)p[2];
        int64_t sa = l.step[1], sb = l.step[2];
        if (sa == 1 && (sb == 1 || (sb == 0 && one))) {
            (sb == 1 ? full : one)(pa, pb, o, l.n);
            continue;
        }
        for (int64_t i0 = 0; i0 < l.n; i0 += BUF) {
            int64_t m = l.n - i0 < BUF ? l.n - i0 : BUF;
            for (int64_t i = 0; i < m; i++) {
                abuf[i] = pa[(i0 + i) * sa];
                bbuf[i] = pb[(i0 + i) * sb];
            }
            full(abuf, bbuf, o + i0, m);
        }
    }
}

/* out = k(a, b) with broadcasting; contiguous calls split over the pool */
static void vec2_run(MfVecPowKernel full, MfVecPowKernel one, const MfTensor *a,
                     const MfTensor *b, MfTensor *out)
{
    int64_t n = mf_tensor_numel(out), nb = mf_tensor_numel(b);
    bool b_full = nb == n && n != 1, b_one = one && nb == 1;
    bool flat = mf_tensor_is_contiguous(a) && mf_tensor_is_contiguous(out) &&
                mf_tensor_numel(a) == n && mf_tensor_is_contiguous(b) && (b_full || b_one);
    if (!flat) {
        vec2_rows(full, one, a, b, out);
        return;
    }
    Vec2Job job = {b_full ? full : one, mf_tensor_data(a), mf_tensor_data(b),
                   mf_tensor_data(out), n, b_full};
    if (n < VEC_SPLIT_MIN)
        job.k(job.a, job.b, job.y, n);
    else
        mf_parallel_for((n + VEC_CHUNK_ALIGN - 1) / VEC_CHUNK_ALIGN,
                        VEC_SPLIT_MIN / VEC_CHUNK_ALIGN, vec2_chunk, &job);
}

bool mf_vec_pow(const MfTensor *a, const MfTensor *b, MfTensor *out)
{
    if (a->dtype != MF_FLOAT32 || b->dtype != MF_FLOAT32 || out->dtype != MF_FLOAT32)
        return false;
    vec2_run(pow_kernel(1), pow_kernel(0), a, b, out);
    return true;
}

bool mf_vec_grad(MfVecGradFn f, const MfTensor *dy, const MfTensor *x, MfTensor *out)
{
    if (dy->dtype != MF_FLOAT32 || x->dtype != MF_FLOAT32 || out->dtype != MF_FLOAT32)
        return false;
    vec2_run(grad_kernel(f), NULL, dy, x, out);
    return true;
}
