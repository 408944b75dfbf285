/* winograd.c — Winograd F(4x4, 3x3) convolution, float32 NHWC, 3x3 filters
 * at stride 1 without dilation (see conv.h).
 *
 * The output is cut into 4x4 tiles, each computed from the 6x6 input tile
 * around it (Lavin & Gray, "Fast Algorithms for Convolutional Neural
 * Networks", 2015):
 *   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
 * The elementwise product over channels is 36 GEMMs, one per point xi of the
 * 6x6 transform domain: M[xi] (tiles x Cout) = V[xi] (tiles x Cin) x
 * U[xi] (Cin x Cout), through mf_gemm labelled "winograd", so the profiler
 * lists them with M, N, K. 36 products replace 144 per tile and channel
 * pair (4x fewer multiply-adds than im2col, less the transforms).
 *   forward:         d = x, g = w;
 *   backprop-input:  the same on dy with the filter turned 180 degrees and
 *                    its channel axes swapped, padding 2 - pad (stride 1);
 *   backprop-filter: dw = G^T [ sum over tiles (A dy A^T) (.) (B^T x B) ] G,
 *                    the adjoint of the forward formula in g: 36 GEMMs
 *                    V[xi]^T (Cin x tiles) x Z[xi] (tiles x Cout).
 * Tiles are taken a block at a time so the transformed tiles stay within a
 * few MiB; transforms are vectorised over channels (contiguous in NHWC)
 * and split over the worker pool by tiles; each output element has one
 * writer, so results do not depend on the thread count beyond mf_gemm's.
 *
 * Accuracy: the transforms multiply by constants up to 8 (A) and 5 (B) and
 * divide by 6 and 24 (G), so float32 F(4,3) loses a few bits against im2col:
 * the tests bound its error against a float64 reference by 2^-12 of the
 * sum of |x| |w| products (tests/unit/test_conv_algo.c). float64 never takes
 * this path. Where that sum is 0 (an output whose 3x3 field holds only
 * zeros, as inside the zero border of digit images), the bound is exact:
 * the transforms would leave rounding residue of up to ~1e-6 there, taken
 * from the tile's other outputs, which a following ReLU passes as a
 * positive value with its gradient (on 128 padded digits, conv2's bias
 * gradient moved by 0.011 of 0.035). So such outputs are written as an
 * exact 0, as im2col and PyTorch give them, from a map of the input
 * positions whose channels are all zero (one read of the input; not made
 * when the filter holds a NaN or Inf, whose product with 0 is NaN).
 *
 * Filter transforms are cached: the last few (filter bytes, transform) pairs
 * are kept, and a filter whose bytes equal a cached copy reuses its
 * transform (a memcmp costs a tenth of the transform), which is exact
 * whatever wrote the filter in place. */
#include <cblas.h>
#include <math.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc.h"
#include "../gemm.h"
#include "../parallel.h"
#include "../profile/profile.h"
#include "conv.h"

#define CB 16           /* channels per vector block of a transform */
/* Inlined into each caller, so a full block (L == CB) compiles with
 * constant sizes: vector moves instead of calls to memcpy (3x faster). */
#define INLINE static inline __attribute__((always_inline))
#define BLOCK_BYTES ((int64_t)1 << 20) /* transformed tiles per block, about (L2) */
#define CACHE_SLOTS 8
#define CACHE_MAX_BYTES ((size_t)256 << 20)

/* One Winograd convolution: input [N, H, W, C] -> output [N, Ho, Wo, O],
 * output (oh, ow) reading input rows oh - pt .. oh - pt + 2. */
typedef struct Wino {
    const char *op;
    int64_t N, H, W, C, O, Ho, Wo, pt, pl;
    int64_t th, tw, tiles;  /* tile grid: th x tw per image */
    int64_t block;          /* tiles per block */
    const uint8_t *zero;    /* [N][H][W]: 1 where every channel of the input is 0; NULL:
                               no map (outputs are written as computed) */
} Wino;

/* ---- the 1-D transforms, on CB-wide (or 'L'-wide) vectors --------------------- */

/* out[k] = (B^T in)[k], 6 -> 6; rows 'si' / 'so' floats apart. */
INLINE void bt6(const float *in, int64_t si, float *out, int64_t so, int64_t L)
{
    for (int64_t l = 0; l < L; l++) {
        float d0 = in[l], d1 = in[si + l], d2 = in[2 * si + l], d3 = in[3 * si + l];
        float d4 = in[4 * si + l], d5 = in[5 * si + l];
        out[l] = 4 * d0 - 5 * d2 + d4;
        out[so + l] = -4 * d1 - 4 * d2 + d3 + d4;
        out[2 * so + l] = 4 * d1 - 4 * d2 - d3 + d4;
        out[3 * so + l] = -2 * d1 - d2 + 2 * d3 + d4;
        out[4 * so + l] = 2 * d1 - d2 - 2 * d3 + d4;
        out[5 * so + l] = 4 * d1 - 5 * d3 + d5;
    }
}

/* out = A^T in, 6 -> 4. */
INLINE void at6(const float *in, int64_t si, float *out, int64_t so, int64_t L)
{
    for (int64_t l = 0; l < L; l++) {
        float m0 = in[l], m1 = in[si + l], m2 = in[2 * si + l], m3 = in[3 * si + l];
        float m4 = in[4 * si + l], m5 = in[5 * si + l];
        float p12 = m1 + m2, m12 = m1 - m2, p34 = m3 + m4, m34 = m3 - m4;
        out[l] = m0 + p12 + p34;
        out[so + l] = m12 + 2 * m34;
        out[2 * so + l] = p12 + 4 * p34;
        out[3 * so + l] = m12 + 8 * m34 + m5;
    }
}

/* out = A in, 4 -> 6 (the adjoint of at6: dy tiles for backprop-filter). */
INLINE void a4(const float *in, int64_t si, float *out, int64_t so, int64_t L)
{
    for (int64_t l = 0; l < L; l++) {
        float y0 = in[l], y1 = in[si + l], y2 = in[2 * si + l], y3 = in[3 * si + l];
        out[l] = y0;
        out[so + l] = y0 + y1 + y2 + y3;
        out[2 * so + l] = y0 - y1 + y2 - y3;
        out[3 * so + l] = y0 + 2 * y1 + 4 * y2 + 8 * y3;
        out[4 * so + l] = y0 - 2 * y1 + 4 * y2 - 8 * y3;
        out[5 * so + l] = y3;
    }
}

/* The 1-D filter transform G (3 -> 6) on L-wide vectors of doubles
 * (filters are transformed in double: precision is free here), and its
 * adjoint G^T (6 -> 3) in float for backprop-filter's output. Divisions
 * are multiplications by the reciprocals (a division per element made a
 * 256x256 filter's transform cost as much as the convolution). */
INLINE void g3(const double *g, int64_t si, double *u, int64_t so, int64_t L)
{
    const double q = 0.25, s6 = 1.0 / 6, s12 = 1.0 / 12, s24 = 1.0 / 24;
    for (int64_t l = 0; l < L; l++) {
        double g0 = g[l], g1 = g[si + l], g2 = g[2 * si + l];
        u[l] = g0 * q;
        u[so + l] = -(g0 + g1 + g2) * s6;
        u[2 * so + l] = -(g0 - g1 + g2) * s6;
        u[3 * so + l] = g0 * s24 + g1 * s12 + g2 * s6;
        u[4 * so + l] = g0 * s24 - g1 * s12 + g2 * s6;
        u[5 * so + l] = g2;
    }
}

INLINE void gt6(const float *in, int64_t si, float *out, int64_t so, int64_t L)
{
    for (int64_t l = 0; l < L; l++) {
        float m0 = in[l], m1 = in[si + l], m2 = in[2 * si + l], m3 = in[3 * si + l];
        float m4 = in[4 * si + l], m5 = in[5 * si + l];
        const float s6 = 1.0f / 6, s12 = 1.0f / 12, s24 = 1.0f / 24;
        out[l] = m0 * 0.25f - (m1 + m2) * s6 + (m3 + m4) * s24;
        out[so + l] = (m2 - m1) * s6 + (m3 - m4) * s12;
        out[2 * so + l] = (m3 + m4 - m1 - m2) * s6 + m5;
    }
}

/* ---- geometry ------------------------------------------------------------------ */

static Wino wino_make(const char *op, int64_t N, int64_t H, int64_t W, int64_t C, int64_t O,
                      int64_t Ho, int64_t Wo, int64_t pt, int64_t pl)
{
    Wino s = {op, N, H, W, C, O, Ho, Wo, pt, pl, (Ho + 3) / 4, (Wo + 3) / 4, 0, 0, NULL};
    s.tiles = N * s.th * s.tw;
    /* blocks of about BLOCK_BYTES of transformed tiles, cut evenly (no short
     * last block), a multiple of 16 tiles */
    int64_t per_tile = 36 * (C + O) * (int64_t)sizeof(float);
    int64_t most = BLOCK_BYTES / (per_tile > 0 ? per_tile : 1);
    most = most < 64 ? 64 : most;
    int64_t nblocks = (s.tiles + most - 1) / most;
    int64_t block = nblocks > 0 ? (s.tiles + nblocks - 1) / nblocks : 0;
    block = (block + 15) / 16 * 16;
    s.block = block < s.tiles ? block : s.tiles;
    return s;
}

/* Tile t's image and top-left output corner. */
static void tile_at(const Wino *s, int64_t t, int64_t *n, int64_t *oh, int64_t *ow)
{
    int64_t per = s->th * s->tw;
    *n = t / per;
    *oh = t % per / s->tw * 4;
    *ow = t % s->tw * 4;
}

/* ---- input transform: V[t][xi][c] = (B^T d B)[xi] for the tiles of a block ---
 * Transformed tiles are stored tile-major ([tile][xi][channel]): a tile's
 * 36 rows are contiguous, so the transforms stream, and each GEMM reads
 * its xi's rows with a stride (lda = 36 * Cin); plane-major storage made
 * the output transform gather from 36 planes a block apart (a cache miss
 * per row, half its time). */

typedef struct TileJob {
    const Wino *s;
    int64_t t0;         /* the block's first tile */
    const float *src;   /* x (input transform) or dy / M (output side) */
    float *dst;
    int64_t ld;         /* channels per row of the [block][36][ld] matrices */
} TileJob;

/* The 6x6 tile of 'x' at output corner (oh, ow), channels [c0, c0 + L),
 * zero outside the image, into d[36][CB]. */
INLINE void load_tile(const Wino *s, const float *x, int64_t n, int64_t oh, int64_t ow,
                      int64_t c0, int64_t L, float *d)
{
    for (int64_t y = 0; y < 6; y++) {
        int64_t ih = oh - s->pt + y;
        for (int64_t xx = 0; xx < 6; xx++) {
            int64_t iw = ow - s->pl + xx;
            float *dst = d + (y * 6 + xx) * CB;
            if (ih < 0 || ih >= s->H || iw < 0 || iw >= s->W)
                memset(dst, 0, (size_t)L * sizeof *dst);
            else
                memcpy(dst, x + ((n * s->H + ih) * s->W + iw) * s->C + c0,
                       (size_t)L * sizeof *dst);
        }
    }
}

/* Tile (n, oh, ow), channels [c0, c0 + L), into row k of the V planes. */
INLINE void input_tile(const TileJob *j, int64_t k, int64_t n, int64_t oh, int64_t ow,
                       int64_t c0, int64_t L)
{
    const Wino *s = j->s;
    float d[36 * CB], t[36 * CB], row[6 * CB];
    int64_t stride = j->ld; /* between xi rows of a tile */
    load_tile(s, j->src, n, oh, ow, c0, L, d);
    for (int64_t xx = 0; xx < 6; xx++) /* columns: t = B^T d */
        bt6(d + xx * CB, 6 * CB, t + xx * CB, 6 * CB, L);
    float *v = j->dst + k * 36 * j->ld + c0;
    for (int64_t r = 0; r < 6; r++) { /* rows: V = t B */
        bt6(t + r * 6 * CB, CB, row, CB, L);
        for (int64_t c = 0; c < 6; c++)
            memcpy(v + (r * 6 + c) * stride, row + c * CB, (size_t)L * sizeof(float));
    }
}

static void input_tiles(void *ctx, int64_t b, int64_t e)
{
    const TileJob *j = ctx;
    const Wino *s = j->s;
    for (int64_t k = b; k < e; k++) {
        int64_t n, oh, ow;
        tile_at(s, j->t0 + k, &n, &oh, &ow);
        for (int64_t c0 = 0; c0 < s->C; c0 += CB) {
            if (s->C - c0 >= CB)
                input_tile(j, k, n, oh, ow, c0, CB);
            else
                input_tile(j, k, n, oh, ow, c0, s->C - c0);
        }
    }
}

/* ---- output transform: y tile = A^T M A ---------------------------------------- */

/* Whether output (n, oh, ow) reads only zeros: every in-image position of
 * its 3x3 field is marked in the zero map (the padding is zeros too). */
static bool field_is_zero(const Wino *s, int64_t n, int64_t oh, int64_t ow)
{
    for (int64_t y = oh - s->pt; y < oh - s->pt + 3; y++)
        for (int64_t x = ow - s->pl; x < ow - s->pl + 3; x++)
            if (y >= 0 && y < s->H && x >= 0 && x < s->W && !s->zero[(n * s->H + y) * s->W + x])
                return false;
    return true;
}

/* Tile (n, oh, ow) of the output, channels [o0, o0 + L), from row k of the M
 * planes; the outputs marked in 'zero' (16, row-major) are written as 0. */
INLINE void output_tile(const TileJob *j, int64_t k, int64_t n, int64_t oh, int64_t ow,
                        int64_t o0, int64_t L, const bool *zero)
{
    const Wino *s = j->s;
    float m[36 * CB], t[24 * CB], out[16 * CB];
    int64_t stride = s->O;
    const float *src = j->src + k * 36 * s->O + o0;
    for (int64_t xi = 0; xi < 36; xi++)
        memcpy(m + xi * CB, src + xi * stride, (size_t)L * sizeof(float));
    for (int64_t c = 0; c < 6; c++) /* columns: t = A^T m (4 x 6) */
        at6(m + c * CB, 6 * CB, t + c * CB, 6 * CB, L);
    for (int64_t r = 0; r < 4; r++) /* rows: out = t A (4 x 4) */
        at6(t + r * 6 * CB, CB, out + r * 4 * CB, CB, L);
    for (int64_t r = 0; r < 4 && oh + r < s->Ho; r++)
        for (int64_t c = 0; c < 4 && ow + c < s->Wo; c++) {
            float *dst = j->dst + ((n * s->Ho + oh + r) * s->Wo + ow + c) * s->O + o0;
            if (zero[r * 4 + c])
                memset(dst, 0, (size_t)L * sizeof(float));
            else
                memcpy(dst, out + (r * 4 + c) * CB, (size_t)L * sizeof(float));
        }
}

static void output_tiles(void *ctx, int64_t b, int64_t e)
{
    const TileJob *j = ctx;
    const Wino *s = j->s;
    for (int64_t k = b; k < e; k++) {
        int64_t n, oh, ow;
        tile_at(s, j->t0 + k, &n, &oh, &ow);
        bool zero[16] = {false};
        for (int64_t i = 0; s->zero && i < 16; i++)
            zero[i] = field_is_zero(s, n, oh + i / 4, ow + i % 4);
        for (int64_t o0 = 0; o0 < s->O; o0 += CB) {
            if (s->O - o0 >= CB)
                output_tile(j, k, n, oh, ow, o0, CB, zero);
            else
                output_tile(j, k, n, oh, ow, o0, s->O - o0, zero);
        }
    }
}

/* ---- dy transform for backprop-filter: Z[t][xi][o] = (A dy A^T)[xi] ----------- */

/* The dy tile (n, oh, ow), channels [o0, o0 + L), into row k of the Z planes. */
INLINE void dy_tile(const TileJob *j, int64_t k, int64_t n, int64_t oh, int64_t ow,
                    int64_t o0, int64_t L)
{
    const Wino *s = j->s;
    float d[16 * CB], t[24 * CB], row[6 * CB];
    int64_t stride = s->O;
    for (int64_t r = 0; r < 4; r++)
        for (int64_t c = 0; c < 4; c++) {
            float *dst = d + (r * 4 + c) * CB;
            if (oh + r < s->Ho && ow + c < s->Wo)
                memcpy(dst, j->src + ((n * s->Ho + oh + r) * s->Wo + ow + c) * s->O + o0,
                       (size_t)L * sizeof(float));
            else
                memset(dst, 0, (size_t)L * sizeof(float));
        }
    for (int64_t c = 0; c < 4; c++) /* columns: t = A d (6 x 4) */
        a4(d + c * CB, 4 * CB, t + c * CB, 4 * CB, L);
    float *z = j->dst + k * 36 * s->O + o0;
    for (int64_t r = 0; r < 6; r++) { /* rows: Z = t A^T (6 x 6) */
        a4(t + r * 4 * CB, CB, row, CB, L);
        for (int64_t c = 0; c < 6; c++)
            memcpy(z + (r * 6 + c) * stride, row + c * CB, (size_t)L * sizeof(float));
    }
}

static void dy_tiles(void *ctx, int64_t b, int64_t e)
{
    const TileJob *j = ctx;
    const Wino *s = j->s;
    for (int64_t k = b; k < e; k++) {
        int64_t n, oh, ow;
        tile_at(s, j->t0 + k, &n, &oh, &ow);
        for (int64_t o0 = 0; o0 < s->O; o0 += CB) {
            if (s->O - o0 >= CB)
                dy_tile(j, k, n, oh, ow, o0, CB);
            else
                dy_tile(j, k, n, oh, ow, o0, s->O - o0);
        }
    }
}

/* ---- filter transforms and their cache ----------------------------------------- */

typedef struct CacheSlot {
    float *filter;      /* a copy of the filter's bytes (kh*kw*C*O) */
    float *u;           /* its transform [36][Cin'][Cout'] */
    int64_t C, O;
    bool flip;
    uint64_t used;      /* last use, for eviction */
} CacheSlot;

static CacheSlot cache[CACHE_SLOTS];
static uint64_t cache_clock;

/* U[xi][i][o] of filter w (3x3xCxO). With 'flip' (backprop-input), the
 * filter of the convolution of dy: turned 180 degrees, in channels O and
 * out channels C: U[xi][o][c] from w[2-a][2-b][c][o]. */
/* Channels [o0, o0 + L) of input channel c: the 3x3 taps g[9][L] (turned
 * 180 degrees with 'flip') -> v[36][L] = G g G^T, written to U. */
INLINE void transform_block(const float *w, int64_t C, int64_t O, bool flip, int64_t c,
                            int64_t o0, int64_t L, float *u)
{
    double g[9 * CB], t[18 * CB], v[36 * CB];
    int64_t in = flip ? O : C, out = flip ? C : O;
    for (int64_t a = 0; a < 3; a++)
        for (int64_t b = 0; b < 3; b++) {
            int64_t sa = flip ? 2 - a : a, sb = flip ? 2 - b : b;
            const float *src = w + ((sa * 3 + sb) * C + c) * O + o0;
            for (int64_t l = 0; l < L; l++)
                g[(a * 3 + b) * CB + l] = (double)src[l];
        }
    for (int64_t b = 0; b < 3; b++) /* columns: t (6 x 3) = G g */
        g3(g + b * CB, 3 * CB, t + b * CB, 3 * CB, L);
    for (int64_t a = 0; a < 6; a++) /* rows: v (6 x 6) = t G^T */
        g3(t + a * 3 * CB, CB, v + a * 6 * CB, CB, L);
    for (int64_t xi = 0; xi < 36; xi++)
        for (int64_t l = 0; l < L; l++) {
            int64_t i = flip ? o0 + l : c, k = flip ? c : o0 + l;
            u[(xi * in + i) * out + k] = (float)v[xi * CB + l];
        }
}

/* U[xi][i][o] of filter w (3x3xCxO). With 'flip' (backprop-input), the
 * filter of the convolution of dy: turned 180 degrees, in channels O and
 * out channels C: U[xi][o][c] from w[2-a][2-b][c][o]. */
static void transform_filter(const float *w, int64_t C, int64_t O, bool flip, float *u)
{
    for (int64_t c = 0; c < C; c++)
        for (int64_t o0 = 0; o0 < O; o0 += CB) {
            if (O - o0 >= CB)
                transform_block(w, C, O, flip, c, o0, CB, u);
            else
                transform_block(w, C, O, flip, c, o0, O - o0, u);
        }
}

static void slot_free(CacheSlot *s)
{
    free(s->filter);
    free(s->u);
    *s = (CacheSlot){0};
}

/* The transform of 'w' (cached; NULL when memory is short: the caller
 * falls back to a private transform). */
static const float *cached_transform(const float *w, int64_t C, int64_t O, bool flip,
                                     float **own)
{
    size_t nw = (size_t)(9 * C * O), nu = (size_t)(36 * C * O);
    *own = NULL;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        CacheSlot *s = &cache[i];
        if (s->u && s->C == C && s->O == O && s->flip == flip &&
            memcmp(s->filter, w, nw * sizeof *w) == 0) {
            s->used = ++cache_clock;
            return s->u;
        }
    }
    if ((nw + nu) * sizeof(float) > CACHE_MAX_BYTES / CACHE_SLOTS) {
        *own = malloc(nu * sizeof(float));
        if (*own)
            transform_filter(w, C, O, flip, *own);
        return *own;
    }
    CacheSlot *victim = &cache[0];
    for (int i = 1; i < CACHE_SLOTS; i++)
        if (cache[i].used < victim->used)
            victim = &cache[i];
    slot_free(victim);
    victim->filter = malloc(nw * sizeof(float));
    victim->u = malloc(nu * sizeof(float));
    if (!victim->filter || !victim->u) {
        slot_free(victim);
        return NULL;
    }
    memcpy(victim->filter, w, nw * sizeof *w);
    transform_filter(w, C, O, flip, victim->u);
    *victim = (CacheSlot){victim->filter, victim->u, C, O, flip, ++cache_clock};
    return victim->u;
}

void mf_winograd_cache_clear(void)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        slot_free(&cache[i]);
}

static bool fits_int(const MfGemm *g)
{
    return g->M <= INT_MAX && g->N <= INT_MAX && g->K <= INT_MAX && g->lda <= INT_MAX &&
           g->ldb <= INT_MAX && g->ldc <= INT_MAX;
}

/* ---- the passes, a run of blocks per thread -------------------------------------
 * A pass cuts its blocks of tiles into 'chunks' contiguous runs, one per
 * thread of the worker pool (one run on one thread). Each run has its own
 * transformed-tile buffers and does its blocks' transforms and 36 GEMMs
 * itself (OpenBLAS single-threaded), so the threads meet once per pass
 * instead of three times per block, and the transforms, the GEMMs and the
 * cache reuse between them all scale with the threads. A block is computed
 * the same way whichever thread runs it (the same GEMM calls): the same bits
 * on any thread count. Backprop-filter sums the blocks of each of a fixed
 * number of groups (at most FILTER_GROUPS, whatever the thread count) into
 * the group's own dw partial, then adds the partials in group order.
 * Each block's step and GEMM times are kept and given to the profiler in
 * block order after the threads are done (events are only appended on the
 * calling thread). */

#define FILTER_GROUPS 8
#define STEPS 2                  /* transforms per block: input, then output or dy */
#define EVENTS (STEPS + 36)      /* timed events per block */

typedef struct Timing {
    double t0, dur;
} Timing;

typedef struct Pass {
    const Wino *s;
    bool filter;        /* backprop-filter (else forward, also backprop-input) */
    const float *a, *b; /* forward: x and the transformed filter; filter: x and dy */
    float *out;         /* forward: y; filter: the groups' partials [group][36][C][O] */
    float *bufs;        /* per chunk: V [block][36][C] then M or Z [block][36][O] */
    int64_t nblocks, units, chunks; /* units: blocks (forward) or groups (filter) */
    Timing *times;      /* [nblocks][EVENTS] when profiling, else NULL */
    volatile int stopped; /* set by a run that saw Ctrl-C */
} Pass;

static double clock_us(const Pass *p)
{
    return p->times ? mf_prof_now_us() : 0;
}

/* The GEMM of one xi: C = op(A) B (+ C when beta is 1). */
static MfGemm xi_gemm(const Wino *s, bool ta, int64_t M, int64_t N, int64_t K, const float *A,
                      int64_t lda, const float *B, int64_t ldb, double beta, float *C,
                      int64_t ldc)
{
    return (MfGemm){.op = s->op, .algorithm = "winograd", .dtype = MF_FLOAT32, .trans_a = ta,
                    .M = M, .N = N, .K = K, .alpha = 1.0, .beta = beta, .A = A, .lda = lda,
                    .B = B, .ldb = ldb, .C = C, .ldc = ldc};
}

/* Block k's 36 GEMMs (into 'acc', the group's partial, for backprop-filter;
 * 'first': the group's first block overwrites it). */
static MfGemm block_gemm(const Pass *p, int64_t k, int xi, const float *buf, float *acc,
                         bool first)
{
    const Wino *s = p->s;
    int64_t n = s->tiles - k * s->block < s->block ? s->tiles - k * s->block : s->block;
    const float *v = buf, *m = buf + 36 * s->block * s->C;
    if (p->filter)
        return xi_gemm(s, true, s->C, s->O, n, v + xi * s->C, 36 * s->C, m + xi * s->O,
                       36 * s->O, first ? 0.0 : 1.0, acc + xi * s->C * s->O, s->O);
    return xi_gemm(s, false, n, s->O, s->C, v + xi * s->C, 36 * s->C, p->b + xi * s->C * s->O,
                   s->O, 0.0, (float *)m + xi * s->O, 36 * s->O);
}

static void run_gemm(const MfGemm *g)
{
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)g->M,
                (int)g->N, (int)g->K, 1.0f, g->A, (int)g->lda, g->B, (int)g->ldb,
                (float)g->beta, g->C, (int)g->ldc);
}

/* Block k: transforms and GEMMs, in 'buf'. */
static void pass_block(Pass *p, int64_t k, float *buf, float *acc, bool first)
{
    const Wino *s = p->s;
    int64_t t0 = k * s->block, n = s->tiles - t0 < s->block ? s->tiles - t0 : s->block;
    float *v = buf, *m = buf + 36 * s->block * s->C;
    Timing *tm = p->times ? p->times + k * EVENTS : NULL, unused;
    Timing *step = tm ? tm : &unused;
    step->t0 = clock_us(p);
    TileJob in = {s, t0, p->a, v, s->C};
    input_tiles(&in, 0, n);
    step->dur = clock_us(p) - step->t0;
    if (p->filter) {
        step = tm ? tm + 1 : &unused;
        step->t0 = clock_us(p);
        TileJob dj = {s, t0, p->b, m, s->O};
        dy_tiles(&dj, 0, n);
        step->dur = clock_us(p) - step->t0;
    }
    for (int xi = 0; xi < 36; xi++) {
        MfGemm g = block_gemm(p, k, xi, buf, acc, first);
        Timing *e = tm ? tm + STEPS + xi : &unused;
        e->t0 = clock_us(p);
        run_gemm(&g);
        e->dur = clock_us(p) - e->t0;
    }
    if (!p->filter) {
        step = tm ? tm + 1 : &unused;
        step->t0 = clock_us(p);
        TileJob out = {s, t0, m, p->out, s->O};
        output_tiles(&out, 0, n);
        step->dur = clock_us(p) - step->t0;
    }
}

/* Runs [r0, r1) of the pass: each its units' blocks in order. */
static void pass_runs(void *ctx, int64_t r0, int64_t r1)
{
    Pass *p = ctx;
    const Wino *s = p->s;
    int64_t per_buf = 36 * s->block * (s->C + s->O);
    for (int64_t r = r0; r < r1; r++)
        for (int64_t u = r * p->units / p->chunks; u < (r + 1) * p->units / p->chunks; u++) {
            int64_t b0 = u * p->nblocks / p->units, b1 = (u + 1) * p->nblocks / p->units;
            float *acc = p->filter ? p->out + u * 36 * s->C * s->O : NULL;
            for (int64_t k = b0; k < b1; k++) {
                if (k > 0 && mf_interrupted)
                    p->stopped = 1;
                if (p->stopped)
                    return;
                pass_block(p, k, p->bufs + r * per_buf, acc, k == b0);
            }
        }
}

/* The profiler's events of the pass, in block order. */
static void pass_report(const Pass *p)
{
    const Wino *s = p->s;
    const char *second = p->filter ? "winograd dy" : "winograd output";
    for (int64_t k = 0; k < p->nblocks && p->times; k++) {
        const Timing *tm = p->times + k * EVENTS;
        int64_t n = s->tiles - k * s->block < s->block ? s->tiles - k * s->block : s->block;
        mf_prof_add_step(s->op, "winograd input", (double)(36 * n * s->C) * 4, tm[0].t0,
                         tm[0].dur);
        if (p->filter)
            mf_prof_add_step(s->op, second, (double)(36 * n * s->O) * 4, tm[1].t0, tm[1].dur);
        for (int xi = 0; xi < 36; xi++) {
            MfGemm g = block_gemm(p, k, xi, p->bufs, p->out, false);
            mf_prof_add_gemm(&g, tm[STEPS + xi].t0, tm[STEPS + xi].dur);
        }
        if (!p->filter)
            mf_prof_add_step(s->op, second, (double)(36 * n * s->O) * 4, tm[1].t0, tm[1].dur);
    }
}

/* Runs pass 'p' (its a, b, out and filter set) over the worker pool. */
static MfStatus pass_run(Pass *p)
{
    const Wino *s = p->s;
    MfGemm probe = xi_gemm(s, false, s->block, s->O, s->C, NULL, 36 * s->C, NULL, s->O, 0, NULL,
                           36 * s->O);
    if (s->block > INT_MAX || !fits_int(&probe))
        return mf_err_set(MF_EARG, "%s: GEMM of M=%lld N=%lld K=%lld is too large for BLAS",
                          s->op, (long long)s->block, (long long)s->O, (long long)s->C);
    p->nblocks = s->block > 0 ? (s->tiles + s->block - 1) / s->block : 0;
    p->units = p->filter ? (p->nblocks < FILTER_GROUPS ? p->nblocks : FILTER_GROUPS)
                         : p->nblocks;
    int64_t threads = mf_parallel_threads();
    p->chunks = threads < p->units ? threads : p->units;
    if (p->chunks == 0)
        return MF_OK;
    MfStatus st = mf_parallel_blas_buffers(s->op, (int)p->chunks);
    if (st != MF_OK)
        return st;
    size_t bbytes = (size_t)(p->chunks * 36 * s->block * (s->C + s->O)) * sizeof(float);
    size_t tbytes = mf_prof_on ? (size_t)(p->nblocks * EVENTS) * sizeof(Timing) : 0;
    p->bufs = mf_alloc(bbytes);
    p->times = tbytes ? mf_alloc(tbytes) : NULL;
    if (!p->bufs || (tbytes && !p->times)) {
        mf_dealloc(p->bufs, bbytes);
        mf_dealloc(p->times, tbytes);
        return mf_err_nomem(s->op, bbytes + tbytes);
    }
    mf_parallel_for_threads((int)p->chunks, p->chunks, 1, pass_runs, p);
    pass_report(p);
    mf_dealloc(p->bufs, bbytes);
    mf_dealloc(p->times, tbytes);
    return p->stopped ? mf_err_set(MF_EINTR, "%s: interrupted", s->op) : MF_OK;
}

/* Marks the positions of x ([N][H][W][C], s's input) whose channels are all
 * zero; NULL with *bytes 0 when the 3x3 filter w (9 C O values) is not all
 * finite. */
static MfStatus zero_map(const Wino *s, const float *x, const float *w, int64_t C, int64_t O,
                         uint8_t **map, size_t *bytes)
{
    *map = NULL;
    *bytes = 0;
    for (int64_t i = 0; i < 9 * C * O; i++)
        if (!isfinite(w[i]))
            return MF_OK;
    size_t n = (size_t)(s->N * s->H * s->W);
    uint8_t *m = mf_alloc(n ? n : 1);
    if (!m)
        return mf_err_nomem(s->op, n);
    for (size_t p = 0; p < n; p++) {
        const float *v = x + (int64_t)p * s->C;
        int64_t c = 0;
        while (c < s->C && v[c] == 0)
            c++;
        m[p] = c == s->C;
    }
    *map = m;
    *bytes = n ? n : 1;
    return MF_OK;
}

static MfStatus with_filter(const Wino *s0, const float *w, int64_t C, int64_t O, bool flip,
                            const float *x, float *y)
{
    Wino copy = *s0;
    const Wino *s = &copy;
    uint8_t *map;
    size_t map_bytes;
    MfStatus st = zero_map(s, x, w, C, O, &map, &map_bytes);
    if (st != MF_OK)
        return st;
    copy.zero = map;
    float *own;
    MfProfSpan span;
    mf_prof_begin(&span);
    const float *u = cached_transform(w, C, O, flip, &own);
    mf_prof_end_step(&span, s->op, "winograd filter", (double)(36 * C * O) * 4);
    if (!u) {
        mf_dealloc(map, map_bytes);
        return mf_err_nomem(s->op, (size_t)(36 * C * O) * sizeof(float));
    }
    Pass p = {.s = s, .a = x, .b = u, .out = y};
    st = pass_run(&p);
    free(own);
    mf_dealloc(map, map_bytes);
    return st;
}

MfStatus mf_winograd_forward(const char *op, const MfConvGeom *g, const float *x, const float *w,
                             float *y)
{
    Wino s = wino_make(op, g->N, g->H, g->W, g->C, g->O, g->Ho, g->Wo, g->pad_top, g->pad_left);
    return with_filter(&s, w, g->C, g->O, false, x, y);
}

MfStatus mf_winograd_backprop_input(const char *op, const MfConvGeom *g, const float *w,
                                    const float *dy, float *dx)
{
    Wino s = wino_make(op, g->N, g->Ho, g->Wo, g->O, g->C, g->H, g->W, 2 - g->pad_top,
                       2 - g->pad_left);
    return with_filter(&s, w, g->C, g->O, true, dy, dx);
}

/* Elements [k, k + L) of the C*O filter entries: dw = G^T M G. */
INLINE void filter_block(const float *macc, int64_t CO, int64_t k, int64_t L, float *dw)
{
    float m[36 * CB], t[18 * CB], out[9 * CB];
    for (int64_t xi = 0; xi < 36; xi++)
        memcpy(m + xi * CB, macc + xi * CO + k, (size_t)L * sizeof(float));
    for (int64_t c = 0; c < 6; c++) /* columns: t (3 x 6) = G^T m */
        gt6(m + c * CB, 6 * CB, t + c * CB, 6 * CB, L);
    for (int64_t r = 0; r < 3; r++) /* rows: out (3 x 3) = t G */
        gt6(t + r * 6 * CB, CB, out + r * 3 * CB, CB, L);
    for (int64_t ab = 0; ab < 9; ab++)
        memcpy(dw + ab * CO + k, out + ab * CB, (size_t)L * sizeof(float));
}

/* dw[a][b][c][o] = (G^T M[.][c][o] G)[a][b]. */
static void filter_output(const Wino *s, const float *macc, float *dw)
{
    int64_t CO = s->C * s->O;
    for (int64_t k = 0; k < CO; k += CB) {
        if (CO - k >= CB)
            filter_block(macc, CO, k, CB, dw);
        else
            filter_block(macc, CO, k, CO - k, dw);
    }
}

MfStatus mf_winograd_backprop_filter(const char *op, const MfConvGeom *g, const float *x,
                                     const float *dy, float *dw)
{
    Wino s = wino_make(op, g->N, g->H, g->W, g->C, g->O, g->Ho, g->Wo, g->pad_top, g->pad_left);
    int64_t nblocks = s.block > 0 ? (s.tiles + s.block - 1) / s.block : 0;
    int64_t groups = nblocks < FILTER_GROUPS ? nblocks : FILTER_GROUPS, CO36 = 36 * s.C * s.O;
    size_t abytes = (size_t)((groups > 0 ? groups : 1) * CO36) * sizeof(float);
    float *acc = mf_alloc(abytes);
    if (!acc)
        return mf_err_nomem(op, abytes);
    if (groups == 0)
        memset(acc, 0, (size_t)CO36 * sizeof *acc);
    Pass p = {.s = &s, .filter = true, .a = x, .b = dy, .out = acc};
    MfStatus st = pass_run(&p);
    if (st == MF_OK) {
        MfProfSpan span;
        mf_prof_begin(&span);
        for (int64_t u = 1; u < groups; u++) /* group order, whatever thread made each */
            for (int64_t k = 0; k < CO36; k++)
                acc[k] += acc[u * CO36 + k];
        filter_output(&s, acc, dw);
        mf_prof_end_step(&span, op, "winograd filter", (double)abytes);
    }
    mf_dealloc(acc, abytes);
    return st;
}
