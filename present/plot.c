/* plot.c — line plots of number series as braille text or SVG (see plot.h).
 *
 * Both renderers share one frame: x runs over the steps 1..n of the longest
 * series, y over the finite values of all series (a flat series gets a unit
 * range around its value so it draws as a line in the middle). Non-finite
 * values (a diverged loss) leave gaps rather than stretching the axis.
 * Output is appended to the caller's MfStrBuf (core/strbuf.h); an
 * allocation failure makes the text incomplete and the call MF_ENOMEM. */
#include "plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clocale.h"

/* Appends 's' 'times' times. */
static void add_repeat(MfStrBuf *b, const char *s, int times)
{
    for (int i = 0; i < times; i++)
        mf_strbuf_add(b, s);
}

/* ---- the shared frame ------------------------------------------------------ */

typedef struct Frame {
    double ymin, ymax; /* finite, ymin < ymax */
    size_t nmax;       /* the longest series */
    int has_x;         /* the options' x values label the axis */
    double x_first, x_last;
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
        double v = f->ymin, pad = 0.5 * fabs(v);
        pad = pad > 0 ? pad : 1.0; /* zero, or a subnormal whose half rounds to zero */
        f->ymin = v - pad;
        f->ymax = v + pad;
        /* Near +-DBL_MAX one side overflows: pad the other side only. */
        f->ymax = isfinite(f->ymax) ? f->ymax : v;
        f->ymin = isfinite(f->ymin) ? f->ymin : v;
    }
    return any;
}

/* Half the value range: ymax - ymin itself overflows to inf when the values
 * span more than DBL_MAX (e.g. -1e308 and 1e308), and inf / inf is NaN. */
static double frame_half_range(const Frame *f)
{
    return 0.5 * f->ymax - 0.5 * f->ymin;
}

/* Maps step i (0-based) to [0, span] and value v to [0, span] from the top. */
static double frame_x(const Frame *f, size_t i, double span)
{
    return f->nmax > 1 ? (double)i * span / (double)(f->nmax - 1) : 0.0;
}

static double frame_y(const Frame *f, double v, double span)
{
    return (0.5 * f->ymax - 0.5 * v) / frame_half_range(f) * span;
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
    char *mark;            /* w*h: a series' marker drawn instead of dots, or 0 */
} Canvas;

/* Without colour, several series are told apart by a marker each: drawn on
 * its line (at a third and at the end) and beside its label in the legend. */
static char series_marker(int k)
{
    static const char markers[] = "123456789abcdefghijklmnopqrstuvwxyz";
    return markers[k % (int)(sizeof markers - 1)];
}

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

/* Puts series k's marker on the cells of its last finite point and of the
 * finite point nearest a third of the way, so each line carries its name. */
static void canvas_marks(Canvas *c, const Frame *f, const MfPlotSeries *s, int k)
{
    size_t last = s->n, third = s->n;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->y[i]))
            continue;
        last = i;
        if (third == s->n && 3 * i >= s->n)
            third = i;
    }
    size_t at[2] = {third, last};
    for (int j = 0; j < 2; j++) {
        if (at[j] >= s->n)
            continue;
        int x = (int)lround(frame_x(f, at[j], 2.0 * c->w - 1));
        int y = (int)lround(frame_y(f, s->y[at[j]], 4.0 * c->h - 1));
        if (x >= 0 && y >= 0 && x < 2 * c->w && y < 4 * c->h)
            c->mark[(size_t)(y / 4) * (size_t)c->w + (size_t)(x / 2)] = series_marker(k);
    }
}

static void add_cell(MfStrBuf *b, const Canvas *c, size_t cell, int color)
{
    unsigned bits = c->bits[cell];
    if (c->mark && c->mark[cell]) {
        char m[2] = {c->mark[cell], 0};
        mf_strbuf_add(b, m);
        return;
    }
    if (!bits) {
        mf_strbuf_add(b, " ");
        return;
    }
    char utf8[4] = {(char)0xE2, (char)(0xA0 | (bits >> 6)), (char)(0x80 | (bits & 0x3F)), 0};
    if (color)
        mf_strbuf_add(b, ansi[c->color[cell] - 1]);
    mf_strbuf_add(b, utf8);
    if (color)
        mf_strbuf_add(b, "\033[0m");
}

/* The canvas rows with the y labels (max on top, middle, min at the bottom). */
static void add_rows(MfStrBuf *b, const Canvas *c, const Frame *f, int color)
{
    char lab[3][32];
    snprintf(lab[0], sizeof lab[0], "%.4g", f->ymax);
    snprintf(lab[1], sizeof lab[1], "%.4g", 0.5 * f->ymin + 0.5 * f->ymax);
    snprintf(lab[2], sizeof lab[2], "%.4g", f->ymin);
    int lw = 0;
    for (int i = 0; i < 3; i++)
        lw = (int)strlen(lab[i]) > lw ? (int)strlen(lab[i]) : lw;
    for (int r = 0; r < c->h; r++) {
        const char *l = r == 0 ? lab[0] : r == c->h - 1 ? lab[2]
                        : (c->h >= 5 && r == (c->h - 1) / 2) ? lab[1] : NULL;
        mf_strbuf_addf(b, "%*s %s", lw, l ? l : "", l ? "\xe2\x94\xa4" : "\xe2\x94\x82");
        for (int x = 0; x < c->w; x++)
            add_cell(b, c, (size_t)r * (size_t)c->w + (size_t)x, color);
        mf_strbuf_add(b, "\n");
    }
    mf_strbuf_addf(b, "%*s \xe2\x94\x94", lw, "");
    add_repeat(b, "\xe2\x94\x80", c->w);
    char first[32] = "1", last[32];
    int nl = snprintf(last, sizeof last, "%zu", f->nmax);
    if (f->has_x) {   /* the x values of the first and last points */
        snprintf(first, sizeof first, "%.4g", f->x_first);
        nl = snprintf(last, sizeof last, "%.4g", f->x_last);
    }
    int w = c->w - (int)strlen(first);
    mf_strbuf_addf(b, "\n%*s  %s%*s\n", lw, "", first, w > nl ? w : nl, last);
}

static void add_legend(MfStrBuf *b, const MfPlotSeries *series, int nseries, int color)
{
    int any = 0;
    for (int k = 0; k < nseries; k++)
        any |= series[k].label != NULL;
    if (!any)
        return;
    for (int k = 0; k < nseries; k++) {
        if (color || nseries == 1)
            mf_strbuf_addf(b, "%s%s\xe2\xa3\xbf%s ", k ? "   " : "  ",
                           color ? ansi[k % 6] : "", color ? "\033[0m" : "");
        else
            mf_strbuf_addf(b, "%s%c ", k ? "   " : "  ", series_marker(k));
        mf_strbuf_add(b, series[k].label ? series[k].label : "?");
    }
    mf_strbuf_add(b, "\n");
}

static void plot_text_c(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                        const Frame *frame, MfStrBuf *b)
{
    Frame f = *frame;
    Canvas c = {opts->width, opts->height, NULL, NULL, NULL};
    size_t cells = (size_t)c.w * (size_t)c.h;
    int marks = !opts->color && nseries > 1;
    c.bits = mf_calloc(cells, 1);
    c.color = mf_calloc(cells, 1);
    c.mark = marks ? mf_calloc(cells, 1) : NULL;
    if (!c.bits || !c.color || (marks && !c.mark))
        b->failed = 1;
    else
        for (int k = 0; k < nseries; k++)
            canvas_series(&c, &f, &series[k], k);
    for (int k = 0; marks && !b->failed && k < nseries; k++)
        canvas_marks(&c, &f, &series[k], k);
    if (opts->title && *opts->title) {
        int pad = (c.w - (int)strlen(opts->title)) / 2 + 8;
        mf_strbuf_addf(b, "%*s", pad > 0 ? pad : 0, "");
        mf_strbuf_add(b, opts->title);
        mf_strbuf_add(b, "\n");
    }
    if (!b->failed)
        add_rows(b, &c, &f, opts->color);
    add_legend(b, series, nseries, opts->color);
    mf_free(c.bits);
    mf_free(c.color);
    mf_free(c.mark);
}

/* ---- SVG -------------------------------------------------------------------- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#17becf"};

typedef struct Area {
    double left, top, w, h; /* the plotting rectangle in pixels */
} Area;

/* Appends 's' with XML's five special characters escaped. */
static void add_xml(MfStrBuf *b, const char *s)
{
    char one[2] = {0, 0};
    for (; *s; s++) {
        switch (*s) {
        case '<': mf_strbuf_add(b, "&lt;"); break;
        case '>': mf_strbuf_add(b, "&gt;"); break;
        case '&': mf_strbuf_add(b, "&amp;"); break;
        case '"': mf_strbuf_add(b, "&quot;"); break;
        case '\'': mf_strbuf_add(b, "&apos;"); break;
        default:
            /* XML 1.0 forbids control characters other than tab and newlines
             * (a parser rejects the whole file): show U+FFFD instead. */
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') {
                mf_strbuf_add(b, "\xef\xbf\xbd");
                break;
            }
            one[0] = *s;
            mf_strbuf_add(b, one);
            break;
        }
    }
}

/* A "nice" tick spacing, 1, 2, 2.5 or 5 times a power of ten, of at least
 * 'raw' (> 0, finite): ticks then fall on round numbers as in other
 * plotting tools (0.5, 1, 1.5 rather than 0.485, 1.06). */
static double nice_step(double raw)
{
    static const double mult[] = {1, 2, 2.5, 5};
    double p = pow(10, floor(log10(raw)));
    for (int i = 0; i < 4; i++)
        if (mult[i] * p >= raw * (1 - 1e-9))
            return mult[i] * p;
    return 10 * p;
}

/* A tick label at x, anchored at its middle, or at its end when it would
 * stick out past 'right' (the last step label of a long run). */
static void svg_x_tick(MfStrBuf *b, const Area *a, const Frame *f, double x, size_t step,
                       double right)
{
    char lab[32];
    int n = f->has_x && f->nmax > 1
                ? snprintf(lab, sizeof lab, "%.4g", f->x_first + (double)(step - 1) *
                           (f->x_last - f->x_first) / (double)(f->nmax - 1))
                : snprintf(lab, sizeof lab, "%zu", step);
    const char *anchor = x + 3.6 * n > right ? "end" : "middle";
    mf_strbuf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
               x, a->top + a->h, x, a->top + a->h + 5, x, a->top + a->h + 19, anchor, lab);
}

/* Steps 1 and every multiple of a nice integer spacing up to the last. */
static void svg_x_ticks(MfStrBuf *b, const Area *a, const Frame *f, double right)
{
    svg_x_tick(b, a, f, a->left, 1, right);
    if (f->nmax < 2)
        return;
    double raw = (double)(f->nmax - 1) / 4.0;
    double step = ceil(nice_step(raw < 1 ? 1 : raw)); /* 2.5 -> 3: steps are integers */
    for (double s = step; s <= (double)f->nmax; s += step)
        if (s >= 1 + 0.5 * step) /* not crowding step 1 */
            svg_x_tick(b, a, f, a->left + frame_x(f, (size_t)s - 1, a->w), (size_t)s,
                       right);
}

/* Grid lines at multiples of a nice spacing inside the value range, with
 * enough digits that neighbouring labels differ (values near 1e6 that
 * vary by 0.01 need more than %.4g). */
static void svg_y_ticks(MfStrBuf *b, const Area *a, const Frame *f)
{
    double step = nice_step(0.4 * frame_half_range(f)); /* 4 to 10 intervals */
    double kmin = ceil(f->ymin / step), kmax = floor(f->ymax / step);
    double big = fmax(fabs(f->ymin), fabs(f->ymax));
    int digits = (int)ceil(log10(big / step)) + 2;
    digits = digits < 4 ? 4 : digits > 17 ? 17 : digits;
    for (int t = 0; t <= 20 && kmin + t <= kmax; t++) {
        double v = (kmin + t) * step;
        v = fabs(v) < 1e-9 * step ? 0 : v; /* no "-0" or "1e-17" at zero */
        double y = a->top + frame_y(f, v, a->h);
        if (!isfinite(y) || y < a->top - 0.5 || y > a->top + a->h + 0.5)
            continue;
        mf_strbuf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*g</text>\n",
                   a->left, y, a->left + a->w, y, a->left - 6, y + 4, digits, v);
    }
}

/* Frame, grid lines and labelled ticks on both axes; 'right' is the
 * document's right edge. */
static void svg_axes(MfStrBuf *b, const Area *a, const Frame *f, double right)
{
    mf_strbuf_addf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#333\"/>\n", a->left, a->top, a->w, a->h);
    mf_strbuf_add(b, "<g font-family=\"sans-serif\" font-size=\"12\" fill=\"#333\">\n");
    svg_y_ticks(b, a, f);
    svg_x_ticks(b, a, f, right);
    mf_strbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n</g>\n",
               a->left + a->w / 2, a->top + a->h + 36, f->has_x ? "x" : "step");
}

static void svg_point(MfStrBuf *b, const Area *a, const Frame *f, const double *y, size_t i,
                      int first)
{
    mf_strbuf_addf(b, "%s%.2f,%.2f", first ? "" : " ", a->left + frame_x(f, i, a->w),
               a->top + frame_y(f, y[i], a->h));
}

/* The points of the run y[i..j) of finite values. A run longer than twice
 * the plot's width in pixels keeps, per pixel column, only its first,
 * lowest, highest and last point (M4 aggregation): the line drawn is the
 * same, and a 100k-step history does not make a file of megabytes. */
static void svg_points(MfStrBuf *b, const Area *a, const Frame *f, const double *y, size_t i,
                       size_t j)
{
    int decimate = (double)(j - i) > 2.0 * a->w, first = 1;
    for (size_t k = i; k < j;) {
        size_t end = k + 1, lo = k, hi = k;
        long col = (long)frame_x(f, k, a->w);
        while (decimate && end < j && (long)frame_x(f, end, a->w) == col)
            end++;
        for (size_t m = k; m < end; m++) {
            lo = y[m] < y[lo] ? m : lo;
            hi = y[m] > y[hi] ? m : hi;
        }
        size_t pick[4] = {k, lo < hi ? lo : hi, lo < hi ? hi : lo, end - 1};
        for (int p = 0; p < 4; p++)
            if (p == 0 || pick[p] != pick[p - 1]) {
                svg_point(b, a, f, y, pick[p], first);
                first = 0;
            }
        k = end;
    }
}

/* One polyline per run of finite values; a run of one value (between NaNs,
 * or a one-step series) is a dot, since a one-point polyline draws nothing. */
static void svg_series(MfStrBuf *b, const Area *a, const Frame *f, const MfPlotSeries *s, int k)
{
    for (size_t i = 0; i < s->n;) {
        if (!isfinite(s->y[i])) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < s->n && isfinite(s->y[j]))
            j++;
        if (j - i == 1) {
            mf_strbuf_addf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n",
                       a->left + frame_x(f, i, a->w), a->top + frame_y(f, s->y[i], a->h),
                       palette[k % 6]);
        } else {
            mf_strbuf_addf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                       "points=\"", palette[k % 6]);
            svg_points(b, a, f, s->y, i, j);
            mf_strbuf_add(b, "\"/>\n");
        }
        i = j;
    }
}

static void svg_legend(MfStrBuf *b, const Area *a, const MfPlotSeries *series, int nseries)
{
    double y = a->top + 16;
    for (int k = 0; k < nseries; k++) {
        if (!series[k].label)
            continue;
        double x = a->left + a->w - 140;
        mf_strbuf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" "
                   "font-size=\"12\">", x, y - 4, x + 20, y - 4, palette[k % 6], x + 26, y);
        add_xml(b, series[k].label);
        mf_strbuf_add(b, "</text>\n");
        y += 16;
    }
}

static void plot_svg_c(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                       const Frame *frame, MfStrBuf *b)
{
    Frame f = *frame;
    Area a = {70, 40, opts->width - 90.0, opts->height - 90.0};
    mf_strbuf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
               opts->width, opts->height, opts->width, opts->height);
    if (opts->title && *opts->title) {
        mf_strbuf_addf(b, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
                   "font-family=\"sans-serif\" font-size=\"16\">", opts->width / 2.0);
        add_xml(b, opts->title);
        mf_strbuf_add(b, "</text>\n");
    }
    svg_axes(b, &a, &f, opts->width);
    for (int k = 0; k < nseries; k++)
        svg_series(b, &a, &f, &series[k], k);
    svg_legend(b, &a, series, nseries);
    mf_strbuf_add(b, "</svg>\n");
}

/* Draws with 'draw' into 'out', labels and SVG coordinates with '.'
 * whatever os.setlocale says. */
static MfStatus plot(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                     MfStrBuf *out,
                     void (*draw)(const MfPlotSeries *, int, const MfPlotOpts *, const Frame *,
                                  MfStrBuf *))
{
    Frame f;
    if (!frame_of(series, nseries, &f))
        return mf_err_set(MF_EARG, "plot: nothing to draw: no series has a finite value");
    f.has_x = opts->has_x; /* both renderers label the x axis from the options */
    f.x_first = opts->x_first;
    f.x_last = opts->x_last;
    MfCLocale loc = mf_c_locale_begin();
    draw(series, nseries, opts, &f, out);
    mf_c_locale_end(loc);
    return mf_strbuf_status(out, "plot");
}

MfStatus mf_plot_text(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                      MfStrBuf *out)
{
    return plot(series, nseries, opts, out, plot_text_c);
}

MfStatus mf_plot_svg(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                     MfStrBuf *out)
{
    return plot(series, nseries, opts, out, plot_svg_c);
}

void mf_plot_default_size(int svg, int *width, int *height)
{
    *width = svg ? 640 : 60;
    *height = svg ? 400 : 12;
}

static MfStatus check_in(const char *key, long long v, int lo, int hi, const char *unit)
{
    if (v < lo || v > hi)
        return mf_err_set(MF_EARG, "plot: '%s' must be between %d and %d %s, got %lld", key, lo,
                          hi, unit, v);
    return MF_OK;
}

MfStatus mf_plot_check_size(int svg, long long width, long long height)
{
    const char *unit = svg ? "pixels" : "columns";
    MfStatus st = svg ? check_in("width", width, 200, 10000, unit)
                      : check_in("width", width, 10, 400, unit);
    if (st != MF_OK)
        return st;
    return svg ? check_in("height", height, 150, 10000, "pixels")
               : check_in("height", height, 2, 200, "rows");
}

MfStatus mf_plot_set_x(MfPlotOpts *opts, const MfPlotSeries *series, int nseries,
                       const double *x, size_t n)
{
    size_t len = 0;
    for (int k = 0; k < nseries; k++)
        len = series[k].n > len ? series[k].n : len;
    if (n != len)
        return mf_err_set(MF_EARG, "plot: 'x' has %zu values but the longest series has %zu", n,
                          len);
    double span = n > 1 ? x[n - 1] - x[0] : 0;
    for (size_t i = 1; i < n; i++) {
        double want = x[0] + span * (double)i / (double)(n - 1);
        if (!(fabs(x[i] - want) <= 1e-4 * fabs(span) + 1e-12))
            return mf_err_set(MF_EARG, "plot: 'x' values must be evenly spaced (as mf.linspace "
                              "gives); x[%zu] = %f, expected %f", i + 1, x[i], want);
    }
    opts->has_x = n > 0;
    opts->x_first = n ? x[0] : 0;
    opts->x_last = n ? x[n - 1] : 0;
    return MF_OK;
}
