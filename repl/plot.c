/* plot.c — line plots of number series as braille text or SVG (see plot.h).
 *
 * Both renderers share one frame: x runs over the steps 1..n of the longest
 * series, y over the finite values of all series (a flat series gets a unit
 * range around its value so it draws as a line in the middle). Non-finite
 * values (a diverged loss) leave gaps rather than stretching the axis.
 * Output is built in a growing malloc'd buffer; every allocation failure
 * makes the functions return NULL after freeing what they hold. */
#include "plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growing string ----------------------------------------------------- */

typedef struct Buf {
    char *s;
    size_t len, cap;
    int failed; /* sticky: after one failed growth every append is a no-op */
} Buf;

static void buf_grow(Buf *b, size_t extra)
{
    if (b->failed || b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void buf_add(Buf *b, const char *s)
{
    size_t n = strlen(s);
    buf_grow(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

static void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(Buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_add(b, tmp);
}

static void buf_repeat(Buf *b, const char *s, int times)
{
    for (int i = 0; i < times; i++)
        buf_add(b, s);
}

/* Hands the text to the caller, or frees it and returns NULL on failure. */
static char *buf_finish(Buf *b)
{
    if (b->failed || !b->s) {
        free(b->s);
        return NULL;
    }
    return b->s;
}

/* ---- the shared frame ------------------------------------------------------ */

typedef struct Frame {
    double ymin, ymax; /* finite, ymin < ymax */
    size_t nmax;       /* the longest series */
} Frame;

/* Finds the value range; returns 0 when no series has a finite value. */
static int frame_of(const MfPlotSeries *series, int nseries, Frame *f)
{
    int any = 0;
    f->ymin = HUGE_VAL;
    f->ymax = -HUGE_VAL;
    f->nmax = 0;
    for (int k = 0; k < nseries; k++) {
        if (series[k].n > f->nmax)
            f->nmax = series[k].n;
        for (size_t i = 0; i < series[k].n; i++) {
            double v = series[k].y[i];
            if (!isfinite(v))
                continue;
            any = 1;
            f->ymin = v < f->ymin ? v : f->ymin;
            f->ymax = v > f->ymax ? v : f->ymax;
        }
    }
    if (any && f->ymin == f->ymax) {
        double pad = fabs(f->ymin) > 0 ? 0.5 * fabs(f->ymin) : 1.0;
        f->ymin -= pad;
        f->ymax += pad;
    }
    return any;
}

/* Maps step i (0-based) to [0, span] and value v to [0, span] from the top. */
static double frame_x(const Frame *f, size_t i, double span)
{
    return f->nmax > 1 ? (double)i * span / (double)(f->nmax - 1) : 0.0;
}

static double frame_y(const Frame *f, double v, double span)
{
    return (f->ymax - v) / (f->ymax - f->ymin) * span;
}

/* ---- braille text ---------------------------------------------------------- */

/* A braille cell is 2 dots wide and 4 high; bit of the dot at (col, row). */
static const unsigned char dot_bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20},
                                            {0x40, 0x80}};
static const char *const ansi[] = {"\033[34m", "\033[31m", "\033[32m",
                                   "\033[33m", "\033[35m", "\033[36m"};

typedef struct Canvas {
    int w, h;              /* in cells */
    unsigned char *bits;   /* w*h braille patterns */
    unsigned char *color;  /* w*h: series index + 1 of the last dot drawn */
} Canvas;

static void canvas_dot(Canvas *c, int x, int y, int series)
{
    if (x < 0 || y < 0 || x >= 2 * c->w || y >= 4 * c->h)
        return;
    size_t cell = (size_t)(y / 4) * (size_t)c->w + (size_t)(x / 2);
    c->bits[cell] |= dot_bit[y % 4][x % 2];
    c->color[cell] = (unsigned char)(series % 6 + 1);
}

/* Bresenham's line, so a steep fall between two steps stays connected. */
static void canvas_line(Canvas *c, int x0, int y0, int x1, int y1, int series)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (;;) {
        canvas_dot(c, x0, y0, series);
        if (x0 == x1 && y0 == y1)
            return;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

static void canvas_series(Canvas *c, const Frame *f, const MfPlotSeries *s, int k)
{
    int have_prev = 0, px = 0, py = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->y[i])) {
            have_prev = 0; /* a gap */
            continue;
        }
        int x = (int)lround(frame_x(f, i, 2.0 * c->w - 1));
        int y = (int)lround(frame_y(f, s->y[i], 4.0 * c->h - 1));
        if (have_prev)
            canvas_line(c, px, py, x, y, k);
        else
            canvas_dot(c, x, y, k);
        have_prev = 1;
        px = x;
        py = y;
    }
}

static void add_cell(Buf *b, const Canvas *c, size_t cell, int color)
{
    unsigned bits = c->bits[cell];
    if (!bits) {
        buf_add(b, " ");
        return;
    }
    char utf8[4] = {(char)0xE2, (char)(0xA0 | (bits >> 6)), (char)(0x80 | (bits & 0x3F)), 0};
    if (color)
        buf_add(b, ansi[c->color[cell] - 1]);
    buf_add(b, utf8);
    if (color)
        buf_add(b, "\033[0m");
}

/* The canvas rows with the y labels (max on top, middle, min at the bottom). */
static void add_rows(Buf *b, const Canvas *c, const Frame *f, int color)
{
    char lab[3][32];
    snprintf(lab[0], sizeof lab[0], "%.4g", f->ymax);
    snprintf(lab[1], sizeof lab[1], "%.4g", 0.5 * (f->ymin + f->ymax));
    snprintf(lab[2], sizeof lab[2], "%.4g", f->ymin);
    int lw = 0;
    for (int i = 0; i < 3; i++)
        lw = (int)strlen(lab[i]) > lw ? (int)strlen(lab[i]) : lw;
    for (int r = 0; r < c->h; r++) {
        const char *l = r == 0 ? lab[0] : r == c->h - 1 ? lab[2]
                        : (c->h >= 5 && r == (c->h - 1) / 2) ? lab[1] : NULL;
        buf_printf(b, "%*s %s", lw, l ? l : "", l ? "\xe2\x94\xa4" : "\xe2\x94\x82");
        for (int x = 0; x < c->w; x++)
            add_cell(b, c, (size_t)r * (size_t)c->w + (size_t)x, color);
        buf_add(b, "\n");
    }
    buf_printf(b, "%*s \xe2\x94\x94", lw, "");
    buf_repeat(b, "\xe2\x94\x80", c->w);
    char last[32];
    int nl = snprintf(last, sizeof last, "%zu", f->nmax);
    buf_printf(b, "\n%*s  1%*s\n", lw, "", c->w - 1 > nl ? c->w - 1 : nl, last);
}

static void add_legend(Buf *b, const MfPlotSeries *series, int nseries, int color)
{
    int any = 0;
    for (int k = 0; k < nseries; k++)
        any |= series[k].label != NULL;
    if (!any)
        return;
    for (int k = 0; k < nseries; k++) {
        buf_printf(b, "%s%s\xe2\xa3\xbf%s ", k ? "   " : "  ", color ? ansi[k % 6] : "",
                   color ? "\033[0m" : "");
        buf_add(b, series[k].label ? series[k].label : "?");
    }
    buf_add(b, "\n");
}

char *mf_plot_text(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts)
{
    Frame f;
    if (!frame_of(series, nseries, &f))
        return NULL;
    Canvas c = {opts->width, opts->height, NULL, NULL};
    size_t cells = (size_t)c.w * (size_t)c.h;
    c.bits = calloc(cells, 1);
    c.color = calloc(cells, 1);
    Buf b = {0};
    if (!c.bits || !c.color)
        b.failed = 1;
    else
        for (int k = 0; k < nseries; k++)
            canvas_series(&c, &f, &series[k], k);
    if (opts->title && *opts->title) {
        int pad = (c.w - (int)strlen(opts->title)) / 2 + 8;
        buf_printf(&b, "%*s", pad > 0 ? pad : 0, "");
        buf_add(&b, opts->title);
        buf_add(&b, "\n");
    }
    if (!b.failed)
        add_rows(&b, &c, &f, opts->color);
    add_legend(&b, series, nseries, opts->color);
    free(c.bits);
    free(c.color);
    return buf_finish(&b);
}

/* ---- SVG -------------------------------------------------------------------- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#17becf"};

typedef struct Area {
    double left, top, w, h; /* the plotting rectangle in pixels */
} Area;

/* Appends 's' with XML's five special characters escaped. */
static void add_xml(Buf *b, const char *s)
{
    char one[2] = {0, 0};
    for (; *s; s++) {
        switch (*s) {
        case '<': buf_add(b, "&lt;"); break;
        case '>': buf_add(b, "&gt;"); break;
        case '&': buf_add(b, "&amp;"); break;
        case '"': buf_add(b, "&quot;"); break;
        case '\'': buf_add(b, "&apos;"); break;
        default: one[0] = *s; buf_add(b, one); break;
        }
    }
}

/* Frame, grid lines and five labelled ticks per axis. */
static void svg_axes(Buf *b, const Area *a, const Frame *f)
{
    buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#333\"/>\n", a->left, a->top, a->w, a->h);
    buf_add(b, "<g font-family=\"sans-serif\" font-size=\"12\" fill=\"#333\">\n");
    for (int t = 0; t <= 4; t++) {
        double v = f->ymin + (f->ymax - f->ymin) * t / 4.0;
        double y = a->top + frame_y(f, v, a->h);
        buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n",
                   a->left, y, a->left + a->w, y, a->left - 6, y + 4, v);
    }
    size_t prev = 0;
    for (int t = 0; t <= 4; t++) {
        size_t step = 1 + (size_t)lround((double)(f->nmax > 1 ? f->nmax - 1 : 0) * t / 4.0);
        if (t > 0 && step == prev)
            continue; /* fewer than 5 distinct steps */
        prev = step;
        double x = a->left + frame_x(f, step - 1, a->w);
        buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu</text>\n",
                   x, a->top + a->h, x, a->top + a->h + 5, x, a->top + a->h + 19, step);
    }
    buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n</g>\n",
               a->left + a->w / 2, a->top + a->h + 36);
}

/* One polyline per run of finite values. */
static void svg_series(Buf *b, const Area *a, const Frame *f, const MfPlotSeries *s, int k)
{
    int open = 0;
    for (size_t i = 0; i <= s->n; i++) {
        int ok = i < s->n && isfinite(s->y[i]);
        if (!ok && open) {
            buf_add(b, "\"/>\n");
            open = 0;
        }
        if (!ok)
            continue;
        if (!open)
            buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                       palette[k % 6]);
        buf_printf(b, "%s%.2f,%.2f", open ? " " : "", a->left + frame_x(f, i, a->w),
                   a->top + frame_y(f, s->y[i], a->h));
        open = 1;
    }
}

static void svg_legend(Buf *b, const Area *a, const MfPlotSeries *series, int nseries)
{
    double y = a->top + 16;
    for (int k = 0; k < nseries; k++) {
        if (!series[k].label)
            continue;
        double x = a->left + a->w - 140;
        buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" "
                   "font-size=\"12\">", x, y - 4, x + 20, y - 4, palette[k % 6], x + 26, y);
        add_xml(b, series[k].label);
        buf_add(b, "</text>\n");
        y += 16;
    }
}

char *mf_plot_svg(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts)
{
    Frame f;
    if (!frame_of(series, nseries, &f))
        return NULL;
    Area a = {70, 40, opts->width - 90.0, opts->height - 90.0};
    Buf b = {0};
    buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
               opts->width, opts->height, opts->width, opts->height);
    if (opts->title && *opts->title) {
        buf_printf(&b, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
                   "font-family=\"sans-serif\" font-size=\"16\">", opts->width / 2.0);
        add_xml(&b, opts->title);
        buf_add(&b, "</text>\n");
    }
    svg_axes(&b, &a, &f);
    for (int k = 0; k < nseries; k++)
        svg_series(&b, &a, &f, &series[k], k);
    svg_legend(&b, &a, series, nseries);
    buf_add(&b, "</svg>\n");
    return buf_finish(&b);
}
