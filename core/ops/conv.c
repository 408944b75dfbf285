/* conv.c — the ops Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter,
 * lowered to im2col / col2im and GEMMs through mf_gemm, and the composites
 * mf_conv2d, mf_conv2d_backprop_input, mf_conv2d_backprop_filter that also
 * take NCHW (see conv.h for layouts, attributes, output sizes and the
 * lowering).
 *
 * Each op works a tile of patch rows at a time: the scratch patch matrix
 * (from mf_alloc) holds at most MF_CONV_PATCH_BYTES (64 MiB), whole images
 * per tile when one image fits. im2col and col2im run inside profiler step
 * spans named by the op, so a profile shows each step beside its GEMMs. */
#include <string.h>

#include "../alloc.h"
#include "../gemm.h"
#include "../parallel.h"
#include "../profile/profile.h"
#include "common.h"
#include "conv.h"
#include "view.h"
#include "window.h"

#define SHAPE_BUF 160

/* ---- geometry (the rule: window.h) ------------------------------------------ */

/* The input and filter shapes of the call: for the backprops one of them is
 * the sizes attribute, with -1 batch / channel entries taken from the
 * tensors. */
static void call_shapes(const MfOpCall *c, int64_t xs[4], int64_t ws[4])
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    const int64_t *at = c->attrs->ints;
    for (int i = 0; i < 4; i++) {
        xs[i] = c->op == MF_OP_CONV2D_BACKPROP_INPUT ? at[i] : a->shape[i];
        ws[i] = c->op == MF_OP_CONV2D ? b->shape[i]
                : c->op == MF_OP_CONV2D_BACKPROP_INPUT ? a->shape[i] : at[i];
    }
    if (c->op == MF_OP_CONV2D_BACKPROP_INPUT) {
        xs[0] = xs[0] < 0 ? b->shape[0] : xs[0];
        xs[3] = xs[3] < 0 ? a->shape[2] : xs[3];
    } else if (c->op == MF_OP_CONV2D_BACKPROP_FILTER) {
        ws[2] = ws[2] < 0 ? a->shape[3] : ws[2];
        ws[3] = ws[3] < 0 ? b->shape[3] : ws[3];
    }
}

/* The geometry of a call whose shapes are known to fit (after 'infer'). */
static MfConvGeom call_geom(const MfOpCall *c)
{
    int64_t xs[4], ws[4];
    call_shapes(c, xs, ws);
    const MfAttrs *a = c->attrs;
    MfConvGeom g = {
        .N = xs[0], .H = xs[1], .W = xs[2], .C = xs[3], .kh = ws[0], .kw = ws[1], .O = ws[3],
        .sh = mf_window_one_if_zero(a->strides[1]), .sw = mf_window_one_if_zero(a->strides[2]),
        .dh = mf_window_one_if_zero(a->dilations[1]), .dw = mf_window_one_if_zero(a->dilations[2]),
    };
    mf_window_axis(a->padding, g.H, g.kh, g.sh, g.dh, &g.Ho, &g.pad_top, NULL);
    mf_window_axis(a->padding, g.W, g.kw, g.sw, g.dw, &g.Wo, &g.pad_left, NULL);
    return g;
}

/* ---- checks -------------------------------------------------------------------- */

static MfStatus check_attrs(const MfOpCall *c)
{
    const MfAttrs *a = c->attrs;
    MfStatus st = mf_window_check_padding(op_api(c), a->padding);
    if (st != MF_OK)
        return st;
    if (c->op != MF_OP_CONV2D && a->nints != 4)
        return mf_err_set(MF_EARG, "%s: expected 4 %s, got %d", op_api(c),
                          c->op == MF_OP_CONV2D_BACKPROP_INPUT ? "input_sizes (N, H, W, C)"
                                                               : "filter_sizes (kh, kw, Cin, Cout)",
                          a->nints);
    st = mf_window_check_steps(op_api(c), a->strides, "strides", MF_NHWC);
    return st != MF_OK ? st : mf_window_check_steps(op_api(c), a->dilations, "dilations", MF_NHWC);
}

/* The filter fits the input (window.h). */
static MfStatus check_fit(const MfOpCall *c, const MfConvGeom *g)
{
    return mf_window_check_fit(op_api(c), c->attrs->padding, (int64_t[2]){g->H, g->W},
                               (int64_t[2]){g->kh, g->kw}, (int64_t[2]){g->dh, g->dw});
}

/* Two sizes agree (unknown matches anything). */
static bool same(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a == b;
}

static MfStatus check_channels(const MfOpCall *c, const int64_t *xs, const int64_t *ws)
{
    if (same(xs[3], ws[2]))
        return MF_OK;
    char sx[SHAPE_BUF], sw[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "%s: the input has %lld channels but the filter expects %lld "
                      "(input %s NHWC, filter %s HWIO)", op_api(c), (long long)xs[3],
                      (long long)ws[2], mf_shape_str(4, xs, sx, sizeof sx),
                      mf_shape_str(4, ws, sw, sizeof sw));
}

/* out_backprop has the shape the forward conv would give. */
static MfStatus check_dy(const MfOpCall *c, const MfConvGeom *g, const MfTensor *dy)
{
    int64_t want[4] = {g->N, g->Ho, g->Wo, g->O};
    bool ok = true;
    for (int i = 0; i < 4; i++)
        ok = ok && same(dy->shape[i], want[i]);
    if (ok)
        return MF_OK;
    char sd[SHAPE_BUF], sw[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "%s: out_backprop has shape %s, but the convolution of an "
                      "input (%lld,%lld,%lld,%lld) with a (%lld,%lld,%lld,%lld) filter gives %s "
                      "with these strides, dilations and %s padding", op_api(c),
                      mf_shape_str(4, dy->shape, sd, sizeof sd), (long long)g->N,
                      (long long)g->H, (long long)g->W, (long long)g->C, (long long)g->kh,
                      (long long)g->kw, (long long)g->C, (long long)g->O,
                      mf_shape_str(4, want, sw, sizeof sw),
                      mf_padding_names[c->attrs->padding]);
}

/* ---- shape inference ------------------------------------------------------------ */

static MfStatus check_inputs(const MfOpCall *c)
{
    static const char *const what[3][2] = {
        {"an input", "a filter"}, {"a filter", "out_backprop"}, {"an input", "out_backprop"}};
    static const char *const layout[3][2] = {
        {"NHWC", "HWIO"}, {"HWIO", "NHWC"}, {"NHWC", "NHWC"}};
    int k = c->op == MF_OP_CONV2D ? 0 : c->op == MF_OP_CONV2D_BACKPROP_INPUT ? 1 : 2;
    MfStatus st = MF_OK;
    for (int i = 0; i < 2 && st == MF_OK; i++)
        st = mf_window_check_rank4(op_api(c), c->inputs[i], what[k][i], layout[k][i]);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, c->inputs[0], c->inputs[1]);
    if (st == MF_OK)
        st = mf_check_dtype(c, c->inputs[0], MF_FLOATS, "float32 or float64");
    return st != MF_OK ? st : check_attrs(c);
}

static MfStatus conv_infer(MfOpCall *c)
{
    MfStatus st = check_inputs(c);
    if (st != MF_OK)
        return st;
    int64_t xs[4], ws[4];
    call_shapes(c, xs, ws);
    MfConvGeom g = call_geom(c);
    st = check_channels(c, xs, ws);
    if (st == MF_OK)
        st = check_fit(c, &g);
    if (st == MF_OK && c->op != MF_OP_CONV2D)
        st = check_dy(c, &g, c->inputs[1]);
    if (st != MF_OK)
        return st;
    const int64_t *o = c->op == MF_OP_CONV2D ? (int64_t[4]){g.N, g.Ho, g.Wo, g.O}
                       : c->op == MF_OP_CONV2D_BACKPROP_INPUT ? xs : ws;
    c->noutputs = 1;
    c->out[0].dtype = c->inputs[0]->dtype;
    c->out[0].rank = 4;
    memcpy(c->out[0].shape, o, 4 * sizeof *o);
    return MF_OK;
}

/* ---- kernels -------------------------------------------------------------------- */

/* A 1x1 filter with stride 1: the input is its own patch matrix. */
static bool pointwise(const MfConvGeom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1;
}

/* Patch rows per tile: what MF_CONV_TILE_BYTES holds, at least
 * MF_CONV_TILE_MIN_ROWS and 8 * Cout (so re-reading the filter or dW, Cout
 * wide, per tile stays small beside the patches), at most what MF_CONV_PATCH_BYTES holds (and at
 * least one row); rounded down to whole images when an image fits. */
static int64_t tile_rows(const MfConvGeom *g, size_t es)
{
    int64_t K = g->kh * g->kw * g->C, hw = g->Ho * g->Wo, total = g->N * hw;
    int64_t row_bytes = K * (int64_t)es, cap = MF_CONV_PATCH_BYTES / row_bytes;
    int64_t rows = MF_CONV_TILE_BYTES / row_bytes;
    int64_t min_rows = 8 * g->O > MF_CONV_TILE_MIN_ROWS ? 8 * g->O : MF_CONV_TILE_MIN_ROWS;
    if (rows < min_rows)
        rows = min_rows;
    if (rows > cap)
        rows = cap;
    if (rows < 1)
        rows = 1;
    if (rows >= hw)
        rows = rows / hw * hw;
    return rows < total ? rows : total;
}

/* The state of one op call: its geometry, contiguous inputs and scratch. */
typedef struct ConvRun {
    const char *op;       /* TensorFlow name, for GEMMs and steps */
    MfConvGeom g;
    MfDType dt;
    size_t es;
    int64_t K, rows;      /* patch columns; rows per tile */
    MfTensor *in[2];      /* contiguous inputs (owned) */
    void *patches;        /* NULL for pointwise */
    size_t patch_bytes;
} ConvRun;

static void run_free(ConvRun *r)
{
    mf_tensor_release(r->in[0]);
    mf_tensor_release(r->in[1]);
    if (r->patches)
        mf_dealloc(r->patches, r->patch_bytes);
}

/* Sets up 'r' for call 'c'; 'patches' false when no scratch is needed. */
static MfStatus run_init(const MfOpCall *c, ConvRun *r, bool patches)
{
    *r = (ConvRun){.op = mf_op_table[c->op]->name, .g = call_geom(c), .dt = c->inputs[0]->dtype};
    r->es = mf_dtype_size(r->dt);
    r->K = r->g.kh * r->g.kw * r->g.C;
    for (int i = 0; i < 2; i++) {
        r->in[i] = mf_tensor_contiguous(c->inputs[i]);
        if (!r->in[i])
            return MF_ENOMEM;
    }
    if (!patches || pointwise(&r->g) || r->g.N * r->g.Ho * r->g.Wo == 0 || r->K == 0)
        return MF_OK;
    r->rows = tile_rows(&r->g, r->es);
    r->patch_bytes = (size_t)(r->rows * r->K) * r->es;
    r->patches = mf_alloc(r->patch_bytes);
    if (!r->patches)
        return mf_err_nomem(op_api(c), r->patch_bytes);
    return MF_OK;
}

static MfStatus gemm(const ConvRun *r, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                     const void *A, int64_t lda, const void *B, int64_t ldb, double beta,
                     void *C, int64_t ldc)
{
    MfGemm g = {.op = r->op, .dtype = r->dt, .trans_a = ta, .trans_b = tb, .M = M, .N = N,
                .K = K, .alpha = 1.0, .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb,
                .C = C, .ldc = ldc};
    return mf_gemm(&g);
}

/* A share of one im2col: patch rows are disjoint, so any split works. */
typedef struct Im2colJob {
    const ConvRun *r;
    const void *x;
    int64_t r0;
} Im2colJob;

static void im2col_chunk(void *ctx, int64_t b, int64_t e)
{
    const Im2colJob *j = ctx;
    char *dst = (char *)j->r->patches + (size_t)(b * j->r->K) * j->r->es;
    mf_im2col(&j->r->g, j->r->es, j->x, j->r0 + b, j->r0 + e, dst);
}

/* im2col of rows [r0, r1) of input 'x' into the scratch, as a profiler
 * step, shared among the BLAS threads (it is memory-bound work between
 * threaded GEMMs). */
static void run_im2col(const ConvRun *r, const void *x, int64_t r0, int64_t r1)
{
    MfProfSpan s;
    mf_prof_begin(&s);
    Im2colJob job = {r, x, r0};
    mf_parallel_for(r1 - r0, 1024, im2col_chunk, &job);
    mf_prof_end_step(&s, r->op, "im2col", (double)((r1 - r0) * r->K) * (double)r->es);
}

static MfStatus interrupted(const ConvRun *r)
{
    return mf_err_set(MF_EINTR, "%s: interrupted", r->op);
}

/* The byte offset of patch row 'row' in an [rows, n]-element matrix. */
static size_t at(const ConvRun *r, int64_t row, int64_t n)
{
    return (size_t)(row * n) * r->es;
}

/* Conv2D: out [rows, O] = patches [rows, K] x filter [K, O], tile by tile. */
static MfStatus conv2d_forward(const MfOpCall *c, MfTensor **outs)
{
    MfConvGeom geom = call_geom(c);
    MfStatus fast;
    if (mf_conv_fast_path(c, &geom, outs[0], &fast))
        return fast;
    ConvRun r;
    MfStatus st = run_init(c, &r, true);
    char *y = mf_tensor_data(outs[0]);
    const void *x = mf_tensor_data(r.in[0]), *w = mf_tensor_data(r.in[1]);
    int64_t total = r.g.N * r.g.Ho * r.g.Wo, O = r.g.O;
    if (st == MF_OK && r.K == 0)
        memset(y, 0, at(&r, total, O));
    else if (st == MF_OK && pointwise(&r.g))
        st = gemm(&r, false, false, total, O, r.K, x, r.K, w, O, 0.0, y, O);
    for (int64_t r0 = 0; st == MF_OK && r.patches && r0 < total; r0 += r.rows) {
        int64_t r1 = r0 + r.rows < total ? r0 + r.rows : total;
        if (r0 > 0 && mf_interrupted) {
            st = interrupted(&r);
            break;
        }
        run_im2col(&r, x, r0, r1);
        st = gemm(&r, false, false, r1 - r0, O, r.K, r.patches, r.K, w, O, 0.0, y + at(&r, r0, O),
                  O);
    }
    run_free(&r);
    return st;
}

/* Conv2DBackpropFilter: dw [K, O] = sum over tiles of patches^T x dy. */
static MfStatus backprop_filter_forward(const MfOpCall *c, MfTensor **outs)
{
    MfConvGeom geom = call_geom(c);
    MfStatus fast;
    if (mf_conv_fast_path(c, &geom, outs[0], &fast))
        return fast;
    ConvRun r;
    MfStatus st = run_init(c, &r, true);
    char *dw = mf_tensor_data(outs[0]);
    const void *x = mf_tensor_data(r.in[0]);
    const char *dy = mf_tensor_data(r.in[1]);
    int64_t total = r.g.N * r.g.Ho * r.g.Wo, O = r.g.O;
    if (st == MF_OK && (total == 0 || r.K == 0))
        memset(dw, 0, at(&r, r.K, O));
    else if (st == MF_OK && pointwise(&r.g))
        st = gemm(&r, true, false, r.K, O, total, x, r.K, dy, O, 0.0, dw, O);
    for (int64_t r0 = 0; st == MF_OK && r.patches && r0 < total; r0 += r.rows) {
        int64_t r1 = r0 + r.rows < total ? r0 + r.rows : total;
        if (r0 > 0 && mf_interrupted) {
            st = interrupted(&r);
            break;
        }
        run_im2col(&r, x, r0, r1);
        st = gemm(&r, true, false, r.K, O, r1 - r0, r.patches, r.K, dy + at(&r, r0, O), O,
                  r0 == 0 ? 0.0 : 1.0, dw, O);
    }
    run_free(&r);
    return st;
}

/* A share of one col2im: whole images of the tile [r0, r1), since the
 * patches of one image overlap in 'dx' but those of two images do not. */
typedef struct Col2imJob {
    const ConvRun *r;
    int64_t r0, r1, first; /* tile rows; the tile's first image */
    void *dx;
} Col2imJob;

static void col2im_chunk(void *ctx, int64_t b, int64_t e)
{
    const Col2imJob *j = ctx;
    int64_t hw = j->r->g.Ho * j->r->g.Wo;
    int64_t lo = (j->first + b) * hw, hi = (j->first + e) * hw;
    lo = lo > j->r0 ? lo : j->r0;
    hi = hi < j->r1 ? hi : j->r1;
    const char *src = (const char *)j->r->patches + (size_t)((lo - j->r0) * j->r->K) * j->r->es;
    mf_col2im(&j->r->g, j->r->dt == MF_FLOAT64, src, lo, hi, j->dx);
}

/* col2im of tile rows [r0, r1) into 'dx', images shared among the BLAS
 * threads, as a profiler step. */
static void run_col2im(const ConvRun *r, int64_t r0, int64_t r1, void *dx)
{
    MfProfSpan s;
    mf_prof_begin(&s);
    int64_t hw = r->g.Ho * r->g.Wo;
    Col2imJob job = {r, r0, r1, r0 / hw, dx};
    int64_t images = (r1 - 1) / hw - r0 / hw + 1;
    int64_t per = (4096 + hw - 1) / hw; /* at least 4096 patch rows a share */
    mf_parallel_for(images, per, col2im_chunk, &job);
    mf_prof_end_step(&s, r->op, "col2im", (double)at(r, r1 - r0, r->K));
}

/* Conv2DBackpropInput: per tile dpatches = dy x filter^T, then col2im adds
 * them into dx (zeroed first). */
static MfStatus backprop_input_forward(const MfOpCall *c, MfTensor **outs)
{
    MfConvGeom geom = call_geom(c);
    MfStatus fast;
    if (mf_conv_fast_path(c, &geom, outs[0], &fast))
        return fast;
    ConvRun r;
    MfStatus st = run_init(c, &r, true);
    char *dx = mf_tensor_data(outs[0]);
    const void *w = mf_tensor_data(r.in[0]);
    const char *dy = mf_tensor_data(r.in[1]);
    int64_t total = r.g.N * r.g.Ho * r.g.Wo, O = r.g.O;
    int64_t nx = mf_tensor_numel(outs[0]);
    if (st == MF_OK && pointwise(&r.g) && O > 0) {
        st = gemm(&r, false, true, total, r.g.C, O, dy, O, w, O, 0.0, dx, r.g.C);
        run_free(&r);
        return st;
    }
    if (st == MF_OK)
        memset(dx, 0, (size_t)nx * r.es);
    for (int64_t r0 = 0; st == MF_OK && r.patches && O > 0 && r0 < total; r0 += r.rows) {
        int64_t r1 = r0 + r.rows < total ? r0 + r.rows : total;
        if (r0 > 0 && mf_interrupted) {
            st = interrupted(&r);
            break;
        }
        st = gemm(&r, false, true, r1 - r0, r.K, O, dy + at(&r, r0, O), O, w, O, 0.0, r.patches,
                  r.K);
        if (st != MF_OK)
            break;
        run_col2im(&r, r0, r1, dx);
    }
    run_free(&r);
    return st;
}

/* 2 * N*Ho*Wo * kh*kw*Cin * Cout FLOPs for each of the three; bytes of the
 * inputs and the output. */
static MfCost conv_cost(const MfOpCall *c)
{
    MfConvGeom g = call_geom(c);
    MfCost cost = mf_cost_elementwise(c);
    /* in double: the sizes attributes of a graph node need not fit a tensor */
    double rows = (double)g.N * (double)g.Ho * (double)g.Wo;
    double K = (double)g.kh * (double)g.kw * (double)g.C;
    cost.flops = rows > 0 && K > 0 && g.O > 0 ? 2.0 * rows * K * (double)g.O : 0;
    return cost;
}

/* strides, dilations: n, {h, w} or four entries in the data format's order
 * (one list for the three ops; the backprops add their sizes in front) */
#define CONV_ATTRS                                                                              \
    {"strides", MF_ATTR_WINDOW, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(strides), 0,  \
     0, NULL, NULL},                                                                            \
    {"padding", MF_ATTR_ENUM, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(padding), 0, 0, \
     mf_padding_names, NULL},                                                                   \
    {"data_format", MF_ATTR_ENUM, 0, MF_ATTR_AT(data_format), 0, 0, mf_data_format_names,       \
     NULL},                                                                                     \
    {"dilations", MF_ATTR_WINDOW, 0, MF_ATTR_AT(dilations), 0, 0, NULL, NULL},                  \
    {"algorithm", MF_ATTR_ENUM, 0, MF_ATTR_AT(conv_algorithm), 0, MF_CONV_AUTO,                 \
     mf_conv_algo_names, NULL}

static const MfAttrDef conv_attrs[] = {CONV_ATTRS};

/* The backprops' sizes: a Lua array of 4 (or a 1-D int tensor) given among
 * the inputs, in the data format's order (filter_sizes HWIO). */
static const MfAttrDef backprop_input_attrs[] = {
    {"input_sizes", MF_ATTR_INTS, MF_ATTR_ARG | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
    CONV_ATTRS,
};
static const MfAttrDef backprop_filter_attrs[] = {
    {"filter_sizes", MF_ATTR_INTS, MF_ATTR_ARG | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
    CONV_ATTRS,
};

/* Lua's conv2d: NCHW by transposing around the NHWC op (mf_conv2d). */
static MfStatus conv2d_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                             int *nout)
{
    (void)n;
    *nout = 1;
    MfAttrs at = *a;
    at.data_format = MF_NHWC;
    return mf_conv2d(in[0], in[1], &at, a->data_format == MF_NCHW, outs);
}

const MfOpDesc mf_desc_conv2d = {
    .name = "Conv2D", .api = "conv2d", .arity = 2, .infer = conv_infer,
    .forward = conv2d_forward, .backward = mf_conv2d_grad, .cost = conv_cost,
    .attrs = conv_attrs, .nattrs = MF_NATTRS(conv_attrs), .lua = "nn.conv2d",
    .inputs = "input, filter", .entry = conv2d_entry,
    .summary = "2-D convolution of an NHWC input with an HWIO filter",
    .topic = "nn",
    .grad_note = "dinput = Conv2DBackpropInput(dy, filter), dfilter = "
                 "Conv2DBackpropFilter(input, dy): two more GEMMs",
    .details =
        "2-D convolution as TensorFlow's: input NHWC [N, H, W, Cin] (or NCHW with data_format = "
        "\"NCHW\"), filter HWIO [kh, kw, Cin, Cout]; float32 or float64. 'strides' and "
        "'dilations' are a number s (1, s, s, 1), a pair {sh, sw} or 4 entries in the data "
        "format's order; 'padding' is \"SAME\" (output ceil(H / s); the odd padding row or "
        "column goes at the bottom / right) or \"VALID\" (no padding). 'algorithm' picks the "
        "kernel for this call and its gradients: \"im2col\" (im2col and one GEMM, tiling the "
        "batch so the patch buffer stays at most 64 MiB; a 1x1 stride-1 filter skips im2col), "
        "\"winograd\" (float32 3x3 stride 1: F(4x4, 3x3) transforms and 36 GEMMs, a few bits "
        "less accurate, but an output whose 3x3 field holds only zeros is an exact 0, as "
        "im2col's, so a ReLU after it passes no gradient there), \"direct\" (float32, any filter: register-blocked loops, for few input "
        "channels) or \"auto\" (the default, or mf.config's conv_algorithm): direct for Cin <= "
        "4, "
        "winograd for 3x3 stride-1 with Cin and Cout >= 16, else im2col. float64 always runs "
        "im2col. Differentiable, also twice.",
    .example =
        "x = mf.ones{1, 4, 4, 1}\n"
        "w = mf.ones{3, 3, 1, 2}\n"
        "mf.nn.conv2d(x, w, 1, \"SAME\").shape      --> {1, 4, 4, 2}\n"
        "mf.nn.conv2d(x, w, 2, \"VALID\")           --> {{{{9, 9}}}}",
};

/* Lua's backprops (below): NCHW by transposing around the NHWC op, the
 * sizes from the attributes. */
static MfStatus backprop_input_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                     MfTensor **outs, int *nout);
static MfStatus backprop_filter_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                      MfTensor **outs, int *nout);

const MfOpDesc mf_desc_conv2d_backprop_input = {
    .name = "Conv2DBackpropInput", .api = "conv2d_backprop_input", .arity = 2,
    .infer = conv_infer, .forward = backprop_input_forward,
    .backward = mf_conv2d_backprop_input_grad, .cost = conv_cost,
    .attrs = backprop_input_attrs, .nattrs = MF_NATTRS(backprop_input_attrs),
    .lua = "nn.conv2d_backprop_input", .inputs = "input_sizes, filter, out_backprop",
    .entry = backprop_input_entry,
    .summary = "the gradient of conv2d with respect to its input",
    .topic = "nn",
    .details =
        "The gradient of mf.nn.conv2d with respect to its input, of shape 'input_sizes' (an "
        "array of 4, in the data format's order), given the filter and the gradient of the "
        "output; options as mf.nn.conv2d. With im2col it runs as a GEMM out_backprop x "
        "filter^T, then col2im adds the patches back, 64 MiB of patches at a time; Winograd "
        "convolves out_backprop with the filter turned 180 degrees.",
    .example =
        "w = mf.ones{2, 2, 1, 1}\n"
        "dy = mf.ones{1, 2, 2, 1}\n"
        "mf.nn.conv2d_backprop_input({1, 3, 3, 1}, w, dy, 1, \"VALID\")   "
        "--> {{{{1}, {2}, {1}}, {{2}, {4}, {2}}, {{1}, {2}, {1}}}}",
};

const MfOpDesc mf_desc_conv2d_backprop_filter = {
    .name = "Conv2DBackpropFilter", .api = "conv2d_backprop_filter", .arity = 2,
    .infer = conv_infer, .forward = backprop_filter_forward,
    .backward = mf_conv2d_backprop_filter_grad, .cost = conv_cost,
    .attrs = backprop_filter_attrs, .nattrs = MF_NATTRS(backprop_filter_attrs),
    .lua = "nn.conv2d_backprop_filter", .inputs = "input, filter_sizes, out_backprop",
    .entry = backprop_filter_entry,
    .summary = "the gradient of conv2d with respect to its filter",
    .topic = "nn",
    .details =
        "The gradient of mf.nn.conv2d with respect to its filter, of shape 'filter_sizes' "
        "(HWIO), given the input and the gradient of the output; options as mf.nn.conv2d. With "
        "im2col it runs as im2col and a GEMM patches^T x out_backprop, 64 MiB of patches at a "
        "time; Winograd sums the tiles' products in the transform domain (36 GEMMs).",
    .example =
        "x = mf.ones{1, 3, 3, 1}\n"
        "dy = mf.ones{1, 2, 2, 1}\n"
        "mf.nn.conv2d_backprop_filter(x, {2, 2, 1, 1}, dy, 1, \"VALID\")  "
        "--> {{{{4}}, {{4}}}, {{{4}}, {{4}}}}",
};

/* ---- composites: NCHW by transposing -------------------------------------------- */

/* The op's attributes in NHWC order; with 'nchw', checks the batch and
 * channel entries in the caller's order first. */
static MfStatus nhwc_attrs(const char *fname, const MfAttrs *a, bool nchw, MfAttrs *out)
{
    *out = *a;
    if (!nchw)
        return MF_OK;
    MfStatus st = mf_window_check_steps(fname, a->strides, "strides", MF_NCHW);
    if (st == MF_OK)
        st = mf_window_check_steps(fname, a->dilations, "dilations", MF_NCHW);
    if (st == MF_OK)
        *out = mf_window_nhwc_attrs(a, MF_NCHW);
    return st;
}

/* Runs 'op' on (a, b) and, with 'back', transposes the result to NCHW. */
static MfStatus call_maybe_nchw(MfOpId op, MfTensor *a, MfTensor *b, const MfAttrs *at,
                                bool back, MfTensor **out)
{
    MfTensor *in[2] = {a, b}, *y = NULL;
    MfStatus st = mf_op1(op, 2, in, at, back ? &y : out);
    if (st != MF_OK && back)
        mf_err_suffix("data_format NCHW: shapes shown after transposing to NHWC");
    if (st != MF_OK || !back)
        return st;
    st = mf_transpose(y, mf_nhwc_to_nchw, 4, out);
    mf_tensor_release(y);
    return st;
}

/* '*t' as NHWC: a Transpose of 't' (owned in '*own') with 'nchw', else 't'. */
static MfStatus as_nhwc(MfTensor *t, bool nchw, MfTensor **own, MfTensor **use)
{
    *own = NULL;
    *use = t;
    if (!nchw)
        return MF_OK;
    if (t->rank != 4)
        return MF_OK; /* the op reports the rank */
    MfStatus st = mf_transpose(t, mf_nchw_to_nhwc, 4, own);
    *use = *own;
    return st;
}

MfStatus mf_conv2d(MfTensor *x, MfTensor *w, const MfAttrs *a, bool nchw, MfTensor **out)
{
    MfAttrs at;
    MfTensor *xt = NULL, *xu;
    *out = NULL;
    MfStatus st = nhwc_attrs("conv2d", a, nchw, &at);
    if (st == MF_OK)
        st = as_nhwc(x, nchw, &xt, &xu);
    if (st == MF_OK)
        st = call_maybe_nchw(MF_OP_CONV2D, xu, w, &at, nchw, out);
    mf_tensor_release(xt);
    return st;
}

MfStatus mf_conv2d_backprop_input(const int64_t sizes[4], MfTensor *w, MfTensor *dy,
                                  const MfAttrs *a, bool nchw, MfTensor **out)
{
    MfAttrs at;
    MfTensor *dt = NULL, *du;
    *out = NULL;
    MfStatus st = nhwc_attrs("conv2d_backprop_input", a, nchw, &at);
    at.nints = 4;
    for (int i = 0; i < 4; i++)
        at.ints[i] = sizes[nchw ? mf_nchw_to_nhwc[i] : i];
    if (st == MF_OK)
        st = as_nhwc(dy, nchw, &dt, &du);
    if (st == MF_OK)
        st = call_maybe_nchw(MF_OP_CONV2D_BACKPROP_INPUT, w, du, &at, nchw, out);
    mf_tensor_release(dt);
    return st;
}

MfStatus mf_conv_entry_begin(const char *fname, const char *what, const MfAttrs *a,
                             MfAttrs *nhwc, int *nout)
{
    *nout = 1;
    *nhwc = *a;
    nhwc->data_format = MF_NHWC;
    if (a->nints != 4) /* a Lua call may give another count */
        return mf_err_set(MF_EARG, "%s: %s must be an array of 4 integers (or a 1-D integer "
                          "tensor of 4), got %d entries", fname, what, a->nints);
    return MF_OK;
}

static MfStatus backprop_input_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                     MfTensor **outs, int *nout)
{
    (void)n;
    MfAttrs at;
    MfStatus st = mf_conv_entry_begin("conv2d_backprop_input", "input_sizes", a, &at, nout);
    return st != MF_OK ? st : mf_conv2d_backprop_input(a->ints, in[0], in[1], &at,
                                                       a->data_format == MF_NCHW, outs);
}

static MfStatus backprop_filter_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                      MfTensor **outs, int *nout)
{
    (void)n;
    MfAttrs at;
    MfStatus st = mf_conv_entry_begin("conv2d_backprop_filter", "filter_sizes", a, &at, nout);
    return st != MF_OK ? st : mf_conv2d_backprop_filter(in[0], a->ints, in[1], &at,
                                                        a->data_format == MF_NCHW, outs);
}

/* TensorFlow's conv2d_transpose is conv2d_backprop_input with the input as
 * out_backprop: the filter is [kh, kw, out_channels, in_channels] (the HWIO
 * filter of the conv2d it transposes), and its gradients are conv2d (input)
 * and conv2d_backprop_filter (filter). A batch of -1 in output_shape is the
 * input's (a graph with an unknown batch). */
static MfStatus conv2d_transpose_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                       MfTensor **outs, int *nout)
{
    (void)n;
    MfAttrs at;
    MfStatus st = mf_conv_entry_begin("conv2d_transpose", "output_shape", a, &at, nout);
    for (int i = 1; st == MF_OK && i < 4; i++)
        if (a->ints[i] < 0)
            st = mf_err_set(MF_EARG, "conv2d_transpose: output_shape entry %d must be a "
                            "non-negative integer (only the batch, entry 1, may be -1: the "
                            "input's)", i + 1);
    if (st != MF_OK)
        return st;
    st = mf_conv2d_backprop_input(a->ints, in[1], in[0], &at, a->data_format == MF_NCHW, outs);
    if (st != MF_OK)
        mf_err_prefix("conv2d_transpose (the input is conv2d_backprop_input's out_backprop)");
    return st;
}

static const MfAttrDef conv2d_transpose_attrs[] = {
    {"output_shape", MF_ATTR_INTS, MF_ATTR_ARG | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), -1, NULL, NULL},
    CONV_ATTRS,
};

const MfOpDesc mf_desc_conv2d_transpose = {
    .name = "conv2d_transpose", .api = "conv2d_transpose", .arity = 2,
    .lua = "nn.conv2d_transpose", .inputs = "input, filter, output_shape",
    .attrs = conv2d_transpose_attrs, .nattrs = MF_NATTRS(conv2d_transpose_attrs),
    .entry = conv2d_transpose_entry, .topic = "nn",
    .summary = "the transposed convolution (\"deconvolution\") as TensorFlow's: it is "
               "mf.nn.conv2d_backprop_input(output_shape, filter, input, ...)",
    .details = "So it maps an input of conv2d's output shape back to 'output_shape' (4 sizes "
               "in the data format's order; a batch of -1 means the input's, for graphs with "
               "an unknown batch). The filter is [kh, kw, out_channels, in_channels], the HWIO "
               "filter of the conv2d it transposes. Several output shapes can give the same "
               "input shape under strides, hence the argument. Gradients: conv2d (input) and "
               "conv2d_backprop_filter (filter).",
    .example = "x = mf.ones{1, 2, 2, 1}\n"
               "w = mf.ones{2, 2, 1, 1}\n"
               "mf.nn.conv2d_transpose(x, w, {1, 4, 4, 1}, 2, \"VALID\"):reduce_sum():item()  "
               "--> 16\n"
               "mf.nn.conv2d_transpose(x, w, {1, 3, 3, 1}, 1, \"VALID\")   "
               "--> {{{{1}, {2}, {1}}, {{2}, {4}, {2}}, {{1}, {2}, {1}}}}",
};

MfStatus mf_conv2d_backprop_filter(MfTensor *x, const int64_t sizes[4], MfTensor *dy,
                                   const MfAttrs *a, bool nchw, MfTensor **out)
{
    MfAttrs at;
    MfTensor *xt = NULL, *xu, *dt = NULL, *du;
    *out = NULL;
    MfStatus st = nhwc_attrs("conv2d_backprop_filter", a, nchw, &at);
    at.nints = 4;
    for (int i = 0; i < 4; i++)
        at.ints[i] = sizes[i];
    if (st == MF_OK)
        st = as_nhwc(x, nchw, &xt, &xu);
    if (st == MF_OK)
        st = as_nhwc(dy, nchw, &dt, &du);
    if (st == MF_OK)
        st = call_maybe_nchw(MF_OP_CONV2D_BACKPROP_FILTER, xu, du, &at, false, out);
    mf_tensor_release(xt);
    mf_tensor_release(dt);
    return st;
}
