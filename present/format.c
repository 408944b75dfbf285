/* format.c — NumPy-style text for tensors (see format.h).
 *
 * Two passes over the displayed elements (all of them, or only the edge items
 * of every axis when summarising). The first measures them, as NumPy's
 * FloatingFormat.fillFormat does, so that every element gets the same width;
 * the second lays them out as NumPy's '_formatArray' does, wrapping a row
 * before a word that would pass the line width.
 *
 * A float takes the shortest digits that read back as the same value in its
 * own dtype (float32, float64, float16 or bfloat16), cut at 'precision' fraction digits (of the
 * mantissa in scientific notation), with trailing zeros trimmed; in
 * scientific notation all mantissas are then padded to the same digits.
 * Elements are read with 'mf_tensor_get' / 'mf_tensor_get_int', so strided
 * views print correctly. */
#include "format.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clocale.h"
#include "core/half.h"
#include "core/shape.h"

const char *const mf_print_option_names[] = {"precision", "threshold", "edgeitems", "linewidth",
                                             NULL};

/* The integers each option takes; hi INT64_MAX: threshold, which also takes +inf. */
static const int64_t print_option_range[][2] = {
    {0, MF_PRINT_MAX_PRECISION}, {0, INT64_MAX}, {1, MF_PRINT_MAX_ITEMS}, {1, MF_PRINT_MAX_ITEMS},
};
_Static_assert(MF_COUNTOF(print_option_range) + 1 == MF_COUNTOF(mf_print_option_names),
               "one range per print option");

int64_t mf_print_option_get(const MfPrintOptions *o, int k)
{
    switch (k) {
    case 0: return o->precision;
    case 1: return o->threshold;
    case 2: return o->edgeitems;
    default: return o->linewidth;
    }
}

static void set_print_option(MfPrintOptions *o, int k, int64_t v)
{
    switch (k) {
    case 0: o->precision = (int)v; break;
    case 1: o->threshold = v; break;
    case 2: o->edgeitems = (int)v; break;
    default: o->linewidth = (int)v; break;
    }
}

MfStatus mf_print_option_set(MfPrintOptions *o, const char *name, bool is_int, int64_t i,
                             double x, const char *got)
{
    int k = 0;
    while (k < 3 && strcmp(mf_print_option_names[k], name) != 0)
        k++;
    int64_t lo = print_option_range[k][0], hi = print_option_range[k][1];
    if (!is_int && hi == INT64_MAX && x == HUGE_VAL)
        is_int = true, i = INT64_MAX;
    if (is_int && i >= lo && i <= hi) {
        set_print_option(o, k, i);
        return MF_OK;
    }
    if (hi == INT64_MAX)
        return mf_err_set(MF_EARG, "set_printoptions: %s must be an integer >= %d (or "
                          "math.huge), got %s", name, (int)lo, got);
    return mf_err_set(MF_EARG, "set_printoptions: %s must be an integer from %d to %d, got %s",
                      name, (int)lo, (int)hi, got);
}

/* ---- which elements are shown --------------------------------------------------- */

typedef struct Walk {
    const MfTensor *t;
    int64_t rowstride[MF_MAX_RANK]; /* row-major strides: the index 'mf_tensor_get' takes */
    int64_t edge;                   /* items kept at each edge; 0 when not summarising */
} Walk;

static bool summarised(const Walk *w, int axis)
{
    return w->edge > 0 && w->t->shape[axis] > 2 * w->edge;
}

static int64_t ndisplayed(const Walk *w, int axis)
{
    return summarised(w, axis) ? 2 * w->edge : w->t->shape[axis];
}

/* The index along 'axis' of the 'j'-th displayed item. */
static int64_t displayed_index(const Walk *w, int axis, int64_t j)
{
    if (summarised(w, axis) && j >= w->edge)
        return w->t->shape[axis] - 2 * w->edge + j;
    return j;
}

/* Advances 'pos' (displayed positions) like an odometer; false after the last. */
static bool next_pos(const Walk *w, int64_t *pos)
{
    for (int d = w->t->rank - 1; d >= 0; d--) {
        if (++pos[d] < ndisplayed(w, d))
            return true;
        pos[d] = 0;
    }
    return false;
}

static int64_t flat_index(const Walk *w, const int64_t *pos)
{
    int64_t i = 0;
    for (int d = 0; d < w->t->rank; d++)
        i += displayed_index(w, d, pos[d]) * w->rowstride[d];
    return i;
}

/* ---- one element ------------------------------------------------------------------ */

typedef enum Kind { KIND_INT, KIND_BOOL, KIND_POS, KIND_EXP } Kind;

typedef struct ElemFmt {
    Kind kind;
    MfDType dt;    /* a float's digits read back as the same value of this dtype */
    int cutoff;    /* at most this many fraction digits (the 'precision' option) */
    int digits;    /* KIND_EXP: every mantissa shows this many fraction digits */
    int pad_left;  /* characters before the '.' (sign included) */
    int pad_right; /* characters after the '.' */
    int exp_size;  /* KIND_EXP: exponent digits */
    int width;     /* of every element */
} ElemFmt;

/* A float's text split into sign-and-integer part, fraction and exponent.
 * The pointers point into 'text': do not copy a Num. */
typedef struct Num {
    char text[80];
    int int_len;
    const char *frac;
    int frac_len; /* trailing zeros trimmed */
    char exp_sign;
    const char *exp;
    int exp_len;
} Num;

static bool reads_back(const char *s, double x, MfDType dt)
{
    switch (dt) {
    case MF_FLOAT32: return strtof(s, NULL) == (float)x;
    case MF_FLOAT16: return (double)mf_f16_to_f32(mf_f64_to_f16(strtod(s, NULL))) == x;
    case MF_BFLOAT16: return (double)mf_bf16_to_f32(mf_f32_to_bf16(strtof(s, NULL))) == x;
    default: return strtod(s, NULL) == x;
    }
}

static void split_num(Num *n)
{
    char *s = n->text;
    char *e = strchr(s, 'e');
    n->exp_sign = '+';
    n->exp = "";
    n->exp_len = 0;
    if (e) {
        n->exp_sign = e[1];
        n->exp = e + 2;
        n->exp_len = (int)strlen(e + 2);
        *e = '\0';
    }
    char *dot = strchr(s, '.');
    n->int_len = dot ? (int)(dot - s) : (int)strlen(s);
    n->frac = dot ? dot + 1 : s + n->int_len;
    n->frac_len = (int)strlen(n->frac);
    while (n->frac_len > 0 && n->frac[n->frac_len - 1] == '0')
        n->frac_len--;
}

/* The shortest text of finite 'x' with at most 'cutoff' fraction digits that
 * reads back as 'x' (or 'x' rounded at 'cutoff' digits when none does). */
static void float_digits(double x, MfDType dt, bool exp, int cutoff, Num *n)
{
    for (int k = 0; k <= cutoff; k++) {
        snprintf(n->text, sizeof n->text, exp ? "%.*e" : "%.*f", k, x);
        if (reads_back(n->text, x, dt))
            break;
    }
    split_num(n);
}

static void put_float(MfStrBuf *b, const ElemFmt *f, double x)
{
    if (!isfinite(x)) {
        const char *s = isnan(x) ? "nan" : x < 0 ? "-inf" : "inf";
        mf_strbuf_repeat(b, ' ', f->width - (int)strlen(s));
        mf_strbuf_add(b, s);
        return;
    }
    Num n;
    float_digits(x, f->dt, f->kind == KIND_EXP, f->cutoff, &n);
    mf_strbuf_repeat(b, ' ', f->pad_left - n.int_len);
    mf_strbuf_addn(b, n.text, (size_t)n.int_len);
    mf_strbuf_addn(b, ".", 1);
    mf_strbuf_addn(b, n.frac, (size_t)n.frac_len);
    if (f->kind == KIND_POS) {
        mf_strbuf_repeat(b, ' ', f->pad_right - n.frac_len);
        return;
    }
    mf_strbuf_repeat(b, '0', f->digits - n.frac_len);
    char e[2] = {'e', n.exp_sign};
    mf_strbuf_addn(b, e, 2);
    mf_strbuf_repeat(b, '0', f->exp_size - n.exp_len);
    mf_strbuf_addn(b, n.exp, (size_t)n.exp_len);
}

static void put_elem(MfStrBuf *b, const ElemFmt *f, const MfTensor *t, int64_t i)
{
    char buf[32];
    switch (f->kind) {
    case KIND_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)mf_tensor_get_int(t, i));
        break;
    case KIND_BOOL:
        snprintf(buf, sizeof buf, "%s", mf_tensor_get_int(t, i) ? "true" : "false");
        break;
    default:
        put_float(b, f, mf_tensor_get(t, i));
        return;
    }
    mf_strbuf_repeat(b, ' ', f->width - (int)strlen(buf));
    mf_strbuf_add(b, buf);
}

/* ---- measuring (first pass) ------------------------------------------------------ */

static void int_fill(const Walk *w, ElemFmt *f)
{
    int64_t pos[MF_MAX_RANK] = {0};
    char buf[32];
    f->width = 0;
    do {
        int64_t v = mf_tensor_get_int(w->t, flat_index(w, pos));
        int len = f->kind == KIND_BOOL ? (v ? 4 : 5) : snprintf(buf, sizeof buf, "%lld",
                                                                (long long)v);
        if (len > f->width)
            f->width = len;
    } while (next_pos(w, pos));
}

typedef struct FloatStats {
    bool any_finite, nonfinite, neginf;
    double maxv, minv; /* of the non-zero finite magnitudes; maxv 0 when none */
} FloatStats;

static void float_stats(const Walk *w, FloatStats *s)
{
    int64_t pos[MF_MAX_RANK] = {0};
    *s = (FloatStats){false, false, false, 0.0, HUGE_VAL};
    do {
        double x = mf_tensor_get(w->t, flat_index(w, pos));
        if (!isfinite(x)) {
            s->nonfinite = true;
            s->neginf = s->neginf || (isinf(x) && x < 0);
            continue;
        }
        s->any_finite = true;
        double a = fabs(x);
        if (a > 0) {
            s->maxv = a > s->maxv ? a : s->maxv;
            s->minv = a < s->minv ? a : s->minv;
        }
    } while (next_pos(w, pos));
}

/* NumPy's rule, evaluated in the tensor's own precision. */
static bool wants_exp(const FloatStats *s, bool f32)
{
    if (s->maxv == 0)
        return false;
    if (f32) {
        float mx = (float)s->maxv, mn = (float)s->minv;
        return mx >= 1e8f || mn < 1e-4f || mx / mn > 1e3f;
    }
    return s->maxv >= 1e8 || s->minv < 1e-4 || s->maxv / s->minv > 1e3;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static void float_fill(const Walk *w, const MfPrintOptions *o, ElemFmt *f)
{
    FloatStats s;
    float_stats(w, &s);
    f->dt = w->t->dtype;
    f->kind = wants_exp(&s, f->dt != MF_FLOAT64) ? KIND_EXP : KIND_POS;
    f->cutoff = o->precision;
    int max_int = 0, max_frac = 0, max_exp = 0;
    int64_t pos[MF_MAX_RANK] = {0};
    do {
        double x = mf_tensor_get(w->t, flat_index(w, pos));
        if (!isfinite(x))
            continue;
        Num n;
        float_digits(x, f->dt, f->kind == KIND_EXP, f->cutoff, &n);
        max_int = imax(max_int, n.int_len);
        max_frac = imax(max_frac, n.frac_len);
        max_exp = imax(max_exp, n.exp_len);
    } while (next_pos(w, pos));
    f->pad_left = max_int;
    f->pad_right = max_frac;
    f->digits = max_frac;
    f->exp_size = max_exp;
    if (f->kind == KIND_EXP)
        f->pad_right = max_exp + 2 + max_frac;
    if (s.nonfinite) {
        int room = f->pad_right + 1;
        f->pad_left = imax(f->pad_left, imax(3 - room, 3 + (int)s.neginf - room));
    }
    f->width = f->pad_left + f->pad_right + 1;
}

/* ---- layout (second pass) ---------------------------------------------------------- */

typedef struct Layout {
    MfStrBuf *b;
    const Walk *w;
    const ElemFmt *f;
    size_t line_start; /* where the current line begins in 'b' */
    int linewidth;
} Layout;

static void new_line(Layout *L, int newlines, int indent)
{
    mf_strbuf_repeat(L->b, '\n', newlines);
    L->line_start = L->b->len;
    mf_strbuf_repeat(L->b, ' ', indent);
}

/* NumPy's '_extendLine': wraps before a word that would pass 'limit', unless
 * the line holds nothing but its indent. */
static void before_word(Layout *L, int len, int indent, int limit)
{
    MfStrBuf *b = L->b;
    int col = (int)(b->len - L->line_start);
    if (b->failed || col + len <= limit || col <= indent)
        return;
    while (b->len > L->line_start && b->data[b->len - 1] == ' ')
        b->len--;
    b->data[b->len] = '\0';
    new_line(L, 1, indent);
}

/* The innermost axis at depth 'level': elements separated by one space. */
static void put_row(Layout *L, int64_t base, int level)
{
    const Walk *w = L->w;
    int indent = level + 1, limit = L->linewidth - level - 1;
    int64_t n = ndisplayed(w, level);
    mf_strbuf_addn(L->b, "[", 1);
    for (int64_t j = 0; j < n; j++) {
        if (summarised(w, level) && j == w->edge) {
            before_word(L, 3, indent, limit);
            mf_strbuf_add(L->b, "... ");
        }
        before_word(L, L->f->width, indent, limit);
        put_elem(L->b, L->f, w->t, base + displayed_index(w, level, j) * w->rowstride[level]);
        if (j + 1 < n)
            mf_strbuf_addn(L->b, " ", 1);
    }
    mf_strbuf_addn(L->b, "]", 1);
}

/* An outer axis: sub-blocks separated by as many newlines as axes remain below. */
static void put_block(Layout *L, int64_t base, int level)
{
    const Walk *w = L->w;
    int rank = w->t->rank;
    if (level == rank - 1) {
        put_row(L, base, level);
        return;
    }
    int gap = rank - level - 1;
    int64_t n = ndisplayed(w, level);
    mf_strbuf_addn(L->b, "[", 1);
    for (int64_t j = 0; j < n; j++) {
        if (j > 0)
            new_line(L, gap, level + 1);
        if (summarised(w, level) && j == w->edge) {
            mf_strbuf_add(L->b, "...");
            new_line(L, gap, level + 1);
        }
        put_block(L, base + displayed_index(w, level, j) * w->rowstride[level], level + 1);
    }
    mf_strbuf_addn(L->b, "]", 1);
}

/* ---- entry points ---------------------------------------------------------------- */

static void format_nonempty(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out)
{
    Walk w = {.t = t, .edge = 0};
    mf_shape_strides(t->rank, t->shape, w.rowstride);
    if (mf_tensor_numel(t) > opt->threshold)
        w.edge = opt->edgeitems;
    ElemFmt f = {0};
    if (mf_dtype_is_float(t->dtype) || mf_dtype_is_half(t->dtype)) {
        float_fill(&w, opt, &f);
    } else {
        f.kind = t->dtype == MF_BOOL ? KIND_BOOL : KIND_INT;
        int_fill(&w, &f);
    }
    Layout L = {out, &w, &f, out->len, opt->linewidth};
    if (t->rank == 0)
        put_elem(out, &f, t, 0);
    else
        put_block(&L, 0, 0);
}

MfStatus mf_format_values(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out)
{
    if (!t->storage)
        return mf_err_set(MF_EARG, "print: a symbolic tensor has no values to print");
    if (t->rank > 0 && mf_tensor_numel(t) == 0)
        mf_strbuf_add(out, "[]");
    else {
        MfCLocale loc = mf_c_locale_begin();   /* "1.5" whatever os.setlocale says */
        format_nonempty(t, opt, out);
        mf_c_locale_end(loc);
    }
    if (out->failed)
        return mf_err_nomem("print", (unsigned long long)out->cap * 2);
    return MF_OK;
}

MfStatus mf_format_tensor(const MfTensor *t, const MfPrintOptions *opt, MfStrBuf *out)
{
    char shape[MF_MAX_RANK * 24 + 8];
    mf_shape_str(t->rank, t->shape, shape, (int)sizeof shape);
    if (!t->storage) {
        mf_strbuf_add(out, "<symbolic mf.Tensor shape=");
    } else {
        MfStatus st = mf_format_values(t, opt, out);
        if (st != MF_OK)
            return st;
        mf_strbuf_add(out, "\nshape=");
    }
    mf_strbuf_add(out, shape);
    mf_strbuf_add(out, ", dtype=");
    mf_strbuf_add(out, mf_dtype_name(t->dtype));
    if (!t->storage)
        mf_strbuf_add(out, ">");
    if (out->failed)
        return mf_err_nomem("print", (unsigned long long)out->cap * 2);
    return MF_OK;
}

MfStatus mf_variable_format(const MfVariable *v, const MfPrintOptions *opt, MfStrBuf *out)
{
    if (!v->value) {
        mf_strbuf_addf(out, "<mf.Variable '%s' (no value yet)>", v->name);
        return mf_strbuf_status(out, "tostring");
    }
    char shape[MF_MAX_RANK * 24 + 8];
    mf_shape_str(v->value->rank, v->value->shape, shape, sizeof shape);
    mf_strbuf_addf(out, "<mf.Variable '%s' shape=%s dtype=%s%s", v->name, shape,
                   mf_dtype_name(v->value->dtype), v->trainable ? "" : " trainable=false");
    if (v->value->node) {   /* a graph variable: its value lives in a Session */
        mf_strbuf_add(out, " (graph: sess:run(v) reads it)>");
        return mf_strbuf_status(out, "tostring");
    }
    mf_strbuf_add(out, ">\n");
    MfStatus st = mf_format_values(v->value, opt, out);
    return st == MF_OK ? mf_strbuf_status(out, "tostring") : st;
}
