/* plot.h — line plots of number series (loss histories), drawn as Unicode
 * braille text for a terminal or as an SVG document. Presentation only: no
 * Lua here; repl/lmf_plot.c converts the arguments.
 *
 * Ownership: the functions borrow the series and append the text to the
 * caller's MfStrBuf (core/strbuf.h; the caller frees it). Non-finite values
 * are gaps. */
#ifndef MF_PRESENT_PLOT_H
#define MF_PRESENT_PLOT_H

#include <stddef.h>

#include "core/err.h"
#include "core/strbuf.h"

typedef struct MfPlotSeries {
    const double *y;   /* y[0..n-1], plotted at x = 1..n */
    size_t n;
    const char *label; /* legend text, or NULL */
} MfPlotSeries;

typedef struct MfPlotOpts {
    const char *title;  /* or NULL */
    int width;          /* text: columns of the canvas; svg: pixels */
    int height;         /* text: rows of the canvas; svg: pixels */
    int color;          /* text: ANSI colours per series (for terminals) */
    int has_x;          /* label the x axis with x values (evenly spaced) */
    double x_first, x_last; /* the x of step 1 and of the last step */
} MfPlotOpts;

/* The default size: 60 columns by 12 rows of text, or 640 by 400 pixels. */
void mf_plot_default_size(int svg, int *width, int *height);

/* Checks a size given by the caller against the range each renderer can
 * draw (text 10-400 columns and 2-200 rows, svg 200-10000 by 150-10000
 * pixels). Errors: MF_EARG "plot: 'width' must be between 10 and 400
 * columns, got 3" and the like. */
MfStatus mf_plot_check_size(int svg, long long width, long long height);

/* Sets opts' x axis from the x values 'x' (n of them, 0 for none): as many
 * as the longest series' steps and evenly spaced (as mf.linspace gives),
 * since the plot places points by step. Errors: MF_EARG naming the count
 * or the first value off the even spacing. */
MfStatus mf_plot_set_x(MfPlotOpts *opts, const MfPlotSeries *series, int nseries,
                       const double *x, size_t n);

/* The braille plot as UTF-8 text: an optional title line, 'height' canvas
 * rows with the y axis labelled with max, middle and min, the x axis and
 * its first and last step, and a legend line when a series has a label.
 * Errors: MF_EARG "plot: nothing to draw: no series has a finite value",
 * MF_ENOMEM (the text is then incomplete). */
MfStatus mf_plot_text(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                      MfStrBuf *out);

/* A standalone SVG document of the same plot: frame, ticks at round numbers
 * with labels on each axis, one polyline per run of finite values (a dot
 * for a run of one; runs longer than twice the width in pixels keep per
 * pixel column the first, lowest, highest and last point), title and
 * legend. Errors as mf_plot_text's. */
MfStatus mf_plot_svg(const MfPlotSeries *series, int nseries, const MfPlotOpts *opts,
                     MfStrBuf *out);

#endif
