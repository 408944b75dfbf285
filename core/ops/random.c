/* random.c — random ops (see random.h): RandomStandardNormal, RandomUniform,
 * RandomUniformInt, TruncatedNormal, RandomShuffle and Multinomial.
 *
 * Values come from the counter-based generator in core/rng.c keyed by the
 * op seed, so element i depends only on (seed, i):
 *   - normals: block i/2 of stream 0 gives a Box-Muller pair (in double)
 *     for elements 2k and 2k+1;
 *   - truncated normals: element i tries the pairs of blocks (i, stream
 *     1, 2, ...) until one value lies within 2 stddev (as TensorFlow,
 *     which resamples rather than clamps);
 *   - uniform float32: one 32-bit word per element (24 random bits), four
 *     elements per block; float64 and integers: two words (53 or 64 bits);
 *   - shuffle: Fisher-Yates from the last slice down, the draw for position
 *     i from block i;
 *   - categorical (Multinomial): sample s of row b inverts the cumulative
 *     softmax weights (in double) at the uniform of block b * n + s.
 * In a graph node the key is the op seed mixed with the node's run count
 * ('run_seed'), so each run draws fresh values; eager calls use the op
 * seed itself. Kernels write contiguous outputs with plain typed loops. */
#include "random.h"

#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "../create.h"
#include "../rng.h"
#include "common.h"

/* Checks the shape, dtype and scalars of a zero-input random op and fills
 * the output spec. 'mask' is the dtypes the op takes. */
static MfStatus infer_shaped(MfOpCall *c, unsigned mask, const char *what)
{
    const MfAttrs *a = c->attrs;
    int rank = a->nints;
    int64_t shape[MF_MAX_RANK];
    if (c->ninputs > 1)
        return mf_err_set(MF_EARG, "%s: expected at most one input (the shape), got %d",
                          op_api(c), c->ninputs);
    if (c->ninputs == 1) {   /* the shape as a tensor: known when the node runs */
        MfStatus st = mf_shape_from_tensor(c, c->inputs[0], &rank, shape);
        if (st != MF_OK)
            return st;
    } else if (rank < 0 || rank > MF_MAX_RANK) {
        return mf_err_set(MF_ESHAPE, "%s: rank must be 0..%d, got %d", op_api(c), MF_MAX_RANK,
                          rank);
    } else {
        for (int i = 0; i < rank; i++)
            shape[i] = a->ints[i];
    }
    if ((unsigned)a->dtype >= MF_NDTYPES || !(mask & MF_MASK(a->dtype)))
        return mf_err_set(MF_EDTYPE, "%s: expected dtype %s, got %s", op_api(c), what,
                          mf_dtype_name(a->dtype));
    bool symbolic = c->ninputs == 1 && !c->inputs[0]->storage;   /* dims known when it runs */
    MfStatus st = symbolic ? MF_OK : mf_create_check_size(op_api(c), a->dtype, rank, shape);
    if (st != MF_OK)
        return st;
    c->noutputs = 1;
    c->out[0].dtype = a->dtype;
    c->out[0].rank = rank;
    for (int i = 0; i < rank; i++)
        c->out[0].shape[i] = shape[i];
    return MF_OK;
}

static MfStatus infer_normal(MfOpCall *c)
{
    double mean = c->attrs->scalar[0], stddev = c->attrs->scalar[1];
    if (!isfinite(mean) || !isfinite(stddev) || stddev < 0)
        return mf_err_set(MF_EARG, "%s: mean must be finite and stddev finite and >= 0, got "
                          "mean %g, stddev %g", op_api(c), mean, stddev);
    return infer_shaped(c, MF_FLOATS, "float32 or float64");
}

static MfStatus infer_uniform(MfOpCall *c)
{
    double lo = c->attrs->scalar[0], hi = c->attrs->scalar[1];
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        return mf_err_set(MF_EARG, "%s: expected finite minval <= maxval, got minval %g, "
                          "maxval %g", op_api(c), lo, hi);
    return infer_shaped(c, MF_FLOATS, "float32, float64, int32 or int64");
}

/* Integer bounds must be whole, ordered and within the dtype. */
static MfStatus infer_uniform_int(MfOpCall *c)
{
    double lo = c->attrs->scalar[0], hi = c->attrs->scalar[1];
    double top = c->attrs->dtype == MF_INT32 ? 2147483648.0 : 9223372036854775808.0;
    if (lo != floor(lo) || hi != floor(hi) || !(lo < hi) || lo < -top || hi > top)
        return mf_err_set(MF_EARG, "%s: expected integer minval < maxval within %s, got "
                          "minval %g, maxval %g", op_api(c), mf_dtype_name(c->attrs->dtype),
                          lo, hi);
    return infer_shaped(c, MF_INTS, "int32 or int64");
}

/* ---- kernels -------------------------------------------------------------- */

/* The Philox key for this execution: the op seed in eager mode; in a graph
 * node, the op seed mixed with the node's run count, so each run draws
 * fresh values (see 'mf_rng_run_seed'). Every kernel takes its key here
 * and nowhere else. */
static MfStatus run_seed(const MfOpCall *c, uint64_t *seed)
{
    return mf_rng_run_seed(op_api(c), c->attrs->seed, c->attrs->runs, seed);
}

#define NORMAL_LOOP(T)                                                             \
    do {                                                                           \
        T *p = (T *)out->storage->data;                                            \
        for (int64_t k = 0; 2 * k < n; k++) {                                      \
            double z[2];                                                           \
            mf_rng_normal2(seed, (uint64_t)k, 0, z);                               \
            p[2 * k] = (T)(mean + stddev * z[0]);                                  \
            if (2 * k + 1 < n)                                                     \
                p[2 * k + 1] = (T)(mean + stddev * z[1]);                          \
        }                                                                          \
    } while (0)

static MfStatus normal_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t n = mf_tensor_numel(out);
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK)
        return st;
    double mean = c->attrs->scalar[0], stddev = c->attrs->scalar[1];
    if (out->dtype == MF_FLOAT32)
        NORMAL_LOOP(float);
    else
        NORMAL_LOOP(double);
    return MF_OK;
}

/* One standard normal within [-2, 2] for element 'i'. Each try yields two
 * candidates; a miss has probability about 0.002, so the cap (which would
 * return 0) is never reached in practice but bounds the loop. */
static double truncated_draw(uint64_t seed, uint64_t i)
{
    for (uint64_t attempt = 1; attempt <= 64; attempt++) {
        double z[2];
        mf_rng_normal2(seed, i, attempt, z);
        if (fabs(z[0]) <= 2.0)
            return z[0];
        if (fabs(z[1]) <= 2.0)
            return z[1];
    }
    return 0.0;
}

static MfStatus truncated_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t n = mf_tensor_numel(out);
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK)
        return st;
    double mean = c->attrs->scalar[0], stddev = c->attrs->scalar[1];
    if (out->dtype == MF_FLOAT32) {
        float *p = out->storage->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(mean + stddev * truncated_draw(seed, (uint64_t)i));
    } else {
        double *p = out->storage->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = mean + stddev * truncated_draw(seed, (uint64_t)i);
    }
    return MF_OK;
}

/* float32: four elements per block. Rounding of lo + (hi - lo) * u can
 * reach 'hi'; such values step down to the float just below it. */
static void uniform_f32(float *p, int64_t n, uint64_t seed, double lo, double hi)
{
    float fhi = (float)hi, below = nextafterf(fhi, -INFINITY);
    for (int64_t k = 0; 4 * k < n; k++) {
        uint32_t w[4];
        mf_rng_block(seed, (uint64_t)k, 0, w);
        for (int j = 0; j < 4 && 4 * k + j < n; j++) {
            float v = (float)(lo + (hi - lo) * (double)mf_rng_u01f(w[j]));
            p[4 * k + j] = v >= fhi && hi > lo ? below : v;
        }
    }
}

static void uniform_f64(double *p, int64_t n, uint64_t seed, double lo, double hi)
{
    double below = nextafter(hi, -HUGE_VAL);
    for (int64_t k = 0; 2 * k < n; k++) {
        uint32_t w[4];
        mf_rng_block(seed, (uint64_t)k, 0, w);
        for (int j = 0; j < 2 && 2 * k + j < n; j++) {
            double v = lo + (hi - lo) * mf_rng_u01(w[2 * j], w[2 * j + 1]);
            p[2 * k + j] = v >= hi && hi > lo ? below : v;
        }
    }
}

static MfStatus uniform_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t n = mf_tensor_numel(out);
    const MfAttrs *a = c->attrs;
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK)
        return st;
    if (out->dtype == MF_FLOAT32)
        uniform_f32(out->storage->data, n, seed, a->scalar[0], a->scalar[1]);
    else
        uniform_f64(out->storage->data, n, seed, a->scalar[0], a->scalar[1]);
    return MF_OK;
}

/* Integers minval + (r mod (maxval - minval)) from 64 random bits, as
 * TensorFlow (the modulo bias is below 2^-32 for spans under 2^32). The
 * sums run unsigned so wide int64 spans cannot overflow. */
#define UNIFORM_INT_LOOP(T)                                                        \
    do {                                                                           \
        T *p = (T *)out->storage->data;                                            \
        for (int64_t k = 0; 2 * k < n; k++) {                                      \
            uint32_t w[4];                                                         \
            mf_rng_block(seed, (uint64_t)k, 0, w);                                 \
            for (int j = 0; j < 2 && 2 * k + j < n; j++) {                         \
                uint64_t r = (uint64_t)w[2 * j] << 32 | w[2 * j + 1];              \
                p[2 * k + j] = (T)(int64_t)(lo + (span ? r % span : r));           \
            }                                                                      \
        }                                                                          \
    } while (0)

static MfStatus uniform_int_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    int64_t n = mf_tensor_numel(out);
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK)
        return st;
    int64_t ilo = (int64_t)c->attrs->scalar[0];
    /* maxval may be 2^63 (exclusive), which int64_t cannot hold; span 0
     * stands for the full 2^64. */
    uint64_t lo = (uint64_t)ilo;
    uint64_t span = c->attrs->scalar[1] >= 9223372036854775808.0
                        ? (uint64_t)INT64_MAX - lo + 1
                        : (uint64_t)(int64_t)c->attrs->scalar[1] - lo;
    if (out->dtype == MF_INT32)
        UNIFORM_INT_LOOP(int32_t);
    else
        UNIFORM_INT_LOOP(int64_t);
    return MF_OK;
}

/* ---- shuffle ---------------------------------------------------------------- */

static MfStatus infer_shuffle(MfOpCall *c)
{
    mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return MF_OK;
}

/* Fisher-Yates over 0..n-1; position i draws from block i. */
static void permutation(int64_t *perm, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        uint32_t w[4];
        mf_rng_block(seed, (uint64_t)i, 0, w);
        uint64_t r = (uint64_t)w[0] << 32 | w[1];
        int64_t j = (int64_t)(r % (uint64_t)(i + 1));
        int64_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}

static MfStatus shuffle_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *in = c->inputs[0], *out = outs[0];
    int64_t rows = in->rank > 0 ? in->shape[0] : 0;
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK)
        return st;
    if (rows < 2) {
        mf_tensor_copy_into(out, in);
        return MF_OK;
    }
    size_t pbytes = (size_t)rows * sizeof(int64_t);
    int64_t *perm = mf_alloc(pbytes);
    if (!perm)
        return mf_err_nomem(op_api(c), pbytes);
    MfTensor *src = mf_tensor_contiguous(in);
    if (!src) {
        mf_dealloc(perm, pbytes);
        mf_err_prefix("%s", op_api(c));
        return MF_ENOMEM;
    }
    permutation(perm, rows, seed);
    size_t row_bytes = (size_t)(mf_tensor_numel(in) / rows) * mf_dtype_size(in->dtype);
    const char *s = mf_tensor_data(src);
    char *d = out->storage->data;
    for (int64_t i = 0; i < rows; i++)
        memcpy(d + (size_t)i * row_bytes, s + (size_t)perm[i] * row_bytes, row_bytes);
    mf_tensor_release(src);
    mf_dealloc(perm, pbytes);
    return MF_OK;
}

/* ---- categorical (Multinomial) ------------------------------------------------- */

/* logits [batch, classes] (float32 or float64, classes >= 1); out [batch, n]
 * of 'dtype' (int32 or int64), n = attrs.n. */
static MfStatus infer_categorical(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    const MfAttrs *a = c->attrs;
    char buf[160];
    if (x->rank != 2)
        return mf_err_set(MF_ESHAPE, "%s: expected logits of rank 2 [batch, classes], got shape "
                          "%s (rank %d)", op_api(c), mf_shape_str(x->rank, x->shape, buf,
                                                                  sizeof buf), x->rank);
    MfStatus st = mf_check_dtype(c, x, MF_MASK(MF_FLOAT32) | MF_MASK(MF_FLOAT64),
                                 "a float dtype (float32, float64)");
    if (st != MF_OK)
        return st;
    if (x->shape[1] == 0)
        return mf_err_set(MF_ESHAPE, "%s: the logits have no classes (shape %s)", op_api(c),
                          mf_shape_str(x->rank, x->shape, buf, sizeof buf));
    if (a->n < 0)
        return mf_err_set(MF_EARG, "%s: num_samples must be >= 0, got %lld", op_api(c),
                          (long long)a->n);
    if (a->dtype != MF_INT32 && a->dtype != MF_INT64)
        return mf_err_set(MF_EDTYPE, "%s: expected dtype int32 or int64, got %s", op_api(c),
                          mf_dtype_name(a->dtype));
    if (a->dtype == MF_INT32 && x->shape[1] > INT32_MAX)
        return mf_err_set(MF_EDTYPE, "%s: %lld classes do not fit dtype int32", op_api(c),
                          (long long)x->shape[1]);
    c->noutputs = 1;
    c->out[0].dtype = a->dtype;
    c->out[0].rank = 2;
    c->out[0].shape[0] = x->shape[0];
    c->out[0].shape[1] = a->n;
    return MF_OK;
}

/* Row 'b' of the logits as cumulative weights exp(l - max) in 'cum'
 * (double); false when the row has a NaN or +Inf logit or no finite one. */
static bool row_weights(const MfTensor *x, int64_t b, double *cum)
{
    int64_t k = x->shape[1];
    double mx = -HUGE_VAL;
    for (int64_t j = 0; j < k; j++) {
        double v = mf_tensor_get(x, b * k + j);
        if (isnan(v) || v == HUGE_VAL)
            return false;
        mx = v > mx ? v : mx;
    }
    if (mx == -HUGE_VAL)
        return false;
    double s = 0;
    for (int64_t j = 0; j < k; j++) {
        s += exp(mf_tensor_get(x, b * k + j) - mx);
        cum[j] = s;
    }
    return true;
}

/* The class of uniform draw 'u' in [0, 1): the first j with cum[j] > u *
 * total (a class of weight 0 is never drawn); the last class of positive
 * weight when rounding puts u * total at the total. */
static int64_t draw_class(const double *cum, int64_t k, double u)
{
    double t = u * cum[k - 1];
    int64_t lo = 0, hi = k - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    while (lo > 0 && cum[lo] == cum[lo - 1])
        lo--;
    return lo;
}

/* Sample s of row b draws from block b * n + s. */
static MfStatus categorical_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    MfTensor *out = outs[0];
    int64_t rows = x->shape[0], k = x->shape[1], n = c->attrs->n;
    uint64_t seed;
    MfStatus st = run_seed(c, &seed);
    if (st != MF_OK || rows == 0 || n == 0)
        return st;
    size_t bytes = (size_t)k * sizeof(double);
    double *cum = mf_alloc(bytes);
    if (!cum)
        return mf_err_nomem(op_api(c), bytes);
    for (int64_t b = 0; b < rows && st == MF_OK; b++) {
        if (!row_weights(x, b, cum)) {
            st = mf_err_set(MF_EARG, "%s: row %lld of the logits has a NaN or +Inf logit, or "
                            "no finite one", op_api(c), (long long)b + 1);
            break;
        }
        for (int64_t s = 0; s < n; s++) {
            uint32_t w[4];
            mf_rng_block(seed, (uint64_t)(b * n + s), 0, w);
            int64_t cls = draw_class(cum, k, mf_rng_u01(w[0], w[1])) + 1;
            if (out->dtype == MF_INT32)
                ((int32_t *)out->storage->data)[b * n + s] = (int32_t)cls;
            else
                ((int64_t *)out->storage->data)[b * n + s] = cls;
        }
    }
    mf_dealloc(cum, bytes);
    return st;
}

/* ---- descriptors ------------------------------------------------------------ */

#define RANDOM_OP(sym, tfname, apiname, nin, inf, fwd)                             \
    const MfOpDesc sym = {                                                         \
        .name = tfname, .api = apiname, .arity = nin,                              \
        .flags = MF_OP_RANDOM | MF_OP_NONDIFF | (nin ? 0 : MF_OP_VARIADIC),         \
        .infer = inf, .forward = fwd,                                              \
        .cost = mf_cost_elementwise,                                               \
    }

RANDOM_OP(mf_desc_random_normal, "RandomStandardNormal", "random.normal", 0, infer_normal,
          normal_forward);
RANDOM_OP(mf_desc_truncated_normal, "TruncatedNormal", "random.truncated_normal", 0,
          infer_normal, truncated_forward);
RANDOM_OP(mf_desc_random_uniform, "RandomUniform", "random.uniform", 0, infer_uniform,
          uniform_forward);
RANDOM_OP(mf_desc_random_uniform_int, "RandomUniformInt", "random.uniform", 0,
          infer_uniform_int, uniform_int_forward);
RANDOM_OP(mf_desc_random_shuffle, "RandomShuffle", "random.shuffle", 1, infer_shuffle,
          shuffle_forward);
RANDOM_OP(mf_desc_multinomial, "Multinomial", "random.categorical", 1, infer_categorical,
          categorical_forward);

/* ---- helpers ------------------------------------------------------------------ */

static MfStatus call_shaped(MfOpId op, int rank, const int64_t *shape, MfDType dt, double a,
                            double b, uint64_t seed, MfTensor **out)
{
    *out = NULL;
    if (rank < 0 || rank > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "%s: rank must be 0..%d, got %d", mf_op_table[op]->api,
                          MF_MAX_RANK, rank);
    MfAttrs at = mf_attrs_default();
    at.nints = rank;
    for (int i = 0; i < rank; i++)
        at.ints[i] = shape[i];
    at.dtype = dt;
    at.seed = seed;
    at.scalar[0] = a;
    at.scalar[1] = b;
    return mf_op1(op, 0, NULL, &at, out);
}

MfStatus mf_random_normal(int rank, const int64_t *shape, MfDType dt, double mean,
                          double stddev, uint64_t seed, MfTensor **out)
{
    return call_shaped(MF_OP_RANDOM_NORMAL, rank, shape, dt, mean, stddev, seed, out);
}

MfStatus mf_random_truncated_normal(int rank, const int64_t *shape, MfDType dt, double mean,
                                    double stddev, uint64_t seed, MfTensor **out)
{
    return call_shaped(MF_OP_TRUNCATED_NORMAL, rank, shape, dt, mean, stddev, seed, out);
}

/* TensorFlow's maxval=None (NaN here): 1 for floats, required for integers. */
static MfStatus default_maxval(MfDType dt, double *maxval)
{
    if (!isnan(*maxval))
        return MF_OK;
    if (mf_dtype_is_int(dt))
        return mf_err_set(MF_EARG, "random.uniform: maxval is required for integer dtypes (%s)",
                          mf_dtype_name(dt));
    *maxval = 1.0;
    return MF_OK;
}

MfStatus mf_random_uniform(int rank, const int64_t *shape, MfDType dt, double minval,
                           double maxval, uint64_t seed, MfTensor **out)
{
    *out = NULL;
    MfStatus st = default_maxval(dt, &maxval);
    if (st != MF_OK)
        return st;
    MfOpId op = mf_dtype_is_int(dt) ? MF_OP_RANDOM_UNIFORM_INT : MF_OP_RANDOM_UNIFORM;
    return call_shaped(op, rank, shape, dt, minval, maxval, seed, out);
}

MfStatus mf_random_shaped_by(MfOpId op, MfTensor *shape, MfDType dt, double a, double b,
                             uint64_t seed, MfTensor **out)
{
    *out = NULL;
    if (op == MF_OP_RANDOM_UNIFORM && default_maxval(dt, &b) != MF_OK)
        return MF_EARG;
    MfAttrs at = mf_attrs_default();
    if (op == MF_OP_RANDOM_UNIFORM && mf_dtype_is_int(dt))
        op = MF_OP_RANDOM_UNIFORM_INT;
    at.dtype = dt;
    at.seed = seed;
    at.scalar[0] = a;
    at.scalar[1] = b;
    return mf_op1(op, 1, &shape, &at, out);
}

MfStatus mf_random_shuffle(MfTensor *t, uint64_t seed, MfTensor **out)
{
    MfAttrs at = mf_attrs_default();
    at.seed = seed;
    return mf_op1(MF_OP_RANDOM_SHUFFLE, 1, &t, &at, out);
}

MfStatus mf_random_categorical(MfTensor *logits, int64_t num_samples, MfDType dt, uint64_t seed,
                               MfTensor **out)
{
    MfAttrs at = mf_attrs_default();
    at.n = num_samples;
    at.dtype = dt;
    at.seed = seed;
    return mf_op1(MF_OP_MULTINOMIAL, 1, &logits, &at, out);
}
