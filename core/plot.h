/* plot.h — line plots of number series (loss histories), drawn as Unicode
 * braille text for a terminal or as an SVG document. Presentation only: no
 * Lua here; repl/lmf_plot.c converts the arguments.
 *
 * Ownership: the functions borrow the series and append the text to the
 * caller's MfStrBuf (core/format.h; the caller frees it). Non-finite values
 * are gaps. */
#ifndef MF_PLOT_H
#define MF_PLOT_H

#include <stddef.h>

#include "err.h"
#include "format.h"

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
