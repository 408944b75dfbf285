/* im2col.c — the patch matrix of a 2-D convolution and its adjoint (see
 * conv.h): mf_im2col gathers each output position's receptive field into one
 * row, mf_col2im adds rows back into an NHWC gradient.
 *
 * NHWC keeps a tap's channels contiguous, so a row is built from runs of C
 * elements; with no column dilation, a filter row whose kw taps all lie
 * inside the image is one run of kw*C elements. Rows are walked in order, so
 * both loops stream through the patch matrix, and a row's position advances
 * from the previous one rather than by division. With one input channel a
 * run is a few bytes (12 for a 3x3 filter's row): those are copied inline,
 * as a call to memcpy per run cost more than the copy (a first conv layer's
 * im2col took 1.4 ns per element). */
#include <stdint.h>
#include <string.h>

#include "conv.h"

/* Position of patch row 'r': batch index and the top-left input corner of
 * its receptive field (may lie in the padding). */
typedef struct RowPos {
    int64_t n, ih0, iw0;
} RowPos;

static RowPos row_pos(const MfConvGeom *g, int64_t r)
{
    int64_t hw = g->Ho * g->Wo;
    int64_t n = r / hw, rem = r % hw;
    int64_t oh = rem / g->Wo, ow = rem % g->Wo;
    RowPos p = {n, oh * g->sh - g->pad_top, ow * g->sw - g->pad_left};
    return p;
}

/* The position of the row after 'p': one output column right, wrapping to
 * the next output row and then the next image. */
static void next_row(const MfConvGeom *g, RowPos *p)
{
    p->iw0 += g->sw;
    if (p->iw0 < g->Wo * g->sw - g->pad_left)
        return;
    p->iw0 = -g->pad_left;
    p->ih0 += g->sh;
    if (p->ih0 < g->Ho * g->sh - g->pad_top)
        return;
    p->ih0 = -g->pad_top;
    p->n++;
}

#define SHORT_RUN 64 /* bytes; longer runs go to memcpy */

/* Copies 'n' bytes (a multiple of 4). The 4-byte steps through a local
 * keep GCC from turning the loop back into a memcpy call. */
static inline void copy_run(char *dst, const char *src, size_t n)
{
    if (n > SHORT_RUN) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t i = 0; i < n; i += 4) {
        uint32_t w;
        memcpy(&w, src + i, 4);
        memcpy(dst + i, &w, 4);
    }
}

static inline void zero_run(char *dst, size_t n)
{
    if (n > SHORT_RUN) {
        memset(dst, 0, n);
        return;
    }
    for (size_t i = 0; i < n; i += 4)
        memcpy(dst + i, &(uint32_t){0}, 4);
}

/* One filter row (tap row i at input row ih) of patch row 'p' into 'dst'
 * (kw*C elements). */
static void gather_taps(const MfConvGeom *g, size_t es, const char *xrow, int64_t iw0,
                        char *dst)
{
    size_t run = (size_t)g->C * es;
    if (g->dw == 1 && iw0 >= 0 && iw0 + g->kw <= g->W) {
        copy_run(dst, xrow + (size_t)iw0 * run, (size_t)g->kw * run);
        return;
    }
    for (int64_t j = 0; j < g->kw; j++) {
        int64_t iw = iw0 + j * g->dw;
        if (iw >= 0 && iw < g->W)
            copy_run(dst + (size_t)j * run, xrow + (size_t)iw * run, run);
        else
            zero_run(dst + (size_t)j * run, run);
    }
}

void mf_im2col(const MfConvGeom *g, size_t es, const void *x, int64_t r0, int64_t r1,
               void *patches)
{
    size_t tap_row = (size_t)(g->kw * g->C) * es;
    size_t img = (size_t)(g->H * g->W * g->C) * es, xrow_bytes = (size_t)(g->W * g->C) * es;
    char *dst = patches;
    RowPos p = row_pos(g, r0);
    for (int64_t r = r0; r < r1; r++, next_row(g, &p)) {
        const char *ximg = (const char *)x + (size_t)p.n * img;
        for (int64_t i = 0; i < g->kh; i++, dst += tap_row) {
            int64_t ih = p.ih0 + i * g->dh;
            if (ih < 0 || ih >= g->H)
                zero_run(dst, tap_row);
            else
                gather_taps(g, es, ximg + (size_t)ih * xrow_bytes, p.iw0, dst);
        }
    }
}

/* dst[0..n) += src[0..n) for element type T. */
#define ADD_RUN(T, dst, src, n)                                                  \
    do {                                                                         \
        T *d_ = (T *)(dst);                                                      \
        const T *s_ = (const T *)(src);                                          \
        for (int64_t k_ = 0; k_ < (n); k_++)                                     \
            d_[k_] += s_[k_];                                                    \
    } while (0)

/* Adds one filter row of taps (kw*C elements at 'src') into the input row
 * 'xrow'; taps outside the image are dropped. */
static void scatter_taps(const MfConvGeom *g, bool f64, const char *src, char *xrow,
                         int64_t iw0)
{
    size_t es = f64 ? sizeof(double) : sizeof(float);
    int64_t C = g->C;
    if (g->dw == 1 && iw0 >= 0 && iw0 + g->kw <= g->W) {
        if (f64)
            ADD_RUN(double, xrow + (size_t)(iw0 * C) * es, src, g->kw * C);
        else
            ADD_RUN(float, xrow + (size_t)(iw0 * C) * es, src, g->kw * C);
        return;
    }
    for (int64_t j = 0; j < g->kw; j++) {
        int64_t iw = iw0 + j * g->dw;
        if (iw < 0 || iw >= g->W)
            continue;
        if (f64)
            ADD_RUN(double, xrow + (size_t)(iw * C) * es, src + (size_t)(j * C) * es, C);
        else
            ADD_RUN(float, xrow + (size_t)(iw * C) * es, src + (size_t)(j * C) * es, C);
    }
}

void mf_col2im(const MfConvGeom *g, bool f64, const void *patches, int64_t r0, int64_t r1,
               void *dx)
{
    size_t es = f64 ? sizeof(double) : sizeof(float);
    size_t tap_row = (size_t)(g->kw * g->C) * es;
    size_t img = (size_t)(g->H * g->W * g->C) * es, xrow_bytes = (size_t)(g->W * g->C) * es;
    const char *src = patches;
    RowPos p = row_pos(g, r0);
    for (int64_t r = r0; r < r1; r++, next_row(g, &p)) {
        char *ximg = (char *)dx + (size_t)p.n * img;
        for (int64_t i = 0; i < g->kh; i++, src += tap_row) {
            int64_t ih = p.ih0 + i * g->dh;
            if (ih >= 0 && ih < g->H)
                scatter_taps(g, f64, src, ximg + (size_t)ih * xrow_bytes, p.iw0);
        }
    }
}
