/* csv.c — mf_read_csv: a comma-separated text file into a 2-D tensor.
 *
 * The file is read whole into memory, then walked twice: once to count the
 * data rows (so the tensor is allocated once, at its final shape), once to
 * split each line into fields and parse the selected ones straight into the
 * tensor. Quoted fields may hold commas but not newlines. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define FN "read_csv"

typedef struct Span {
    const char *s, *e; /* the field's text, without surrounding spaces and quotes */
} Span;

/* The fields of the current line (a growable array). */
typedef struct Fields {
    Span *v;
    int n, cap;
} Fields;

/* The walk over the lines of the file. */
typedef struct Cursor {
    const char *p, *end;
    int64_t line;      /* 1-based number of the line last returned */
} Cursor;

typedef struct Csv {
    const char *path;
    char *text;
    size_t len;
    Fields f;
    int nfields;       /* fields per line, from the first line */
    int64_t *sel;      /* selected 0-based columns */
    int nsel;
} Csv;

/* Reads the whole file into c->text (NUL-terminated). */
static MfStatus read_all(Csv *c)
{
    FILE *fp = fopen(c->path, "rb");
    if (!fp)
        return mf_err_set(MF_EIO, FN ": cannot open '%s': %s", c->path, strerror(errno));
    size_t cap = 1 << 16;
    c->text = malloc(cap);
    while (c->text) {
        c->len += fread(c->text + c->len, 1, cap - 1 - c->len, fp);
        if (c->len < cap - 1)
            break;
        char *bigger = realloc(c->text, cap * 2);
        if (!bigger)
            free(c->text);
        c->text = bigger;
        cap *= 2;
    }
    int err = ferror(fp) ? errno : 0;
    fclose(fp);
    if (!c->text)
        return mf_err_nomem(FN, (unsigned long long)cap);
    c->text[c->len] = '\0';
    if (err)
        return mf_err_set(MF_EIO, FN ": cannot read '%s': %s", c->path, strerror(err));
    return MF_OK;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}

/* The next line that is not blank, as [*s, *e) without its newline;
 * false at the end of the file. */
static bool next_line(Cursor *cur, const char **s, const char **e)
{
    while (cur->p < cur->end) {
        const char *nl = memchr(cur->p, '\n', (size_t)(cur->end - cur->p));
        const char *stop = nl ? nl : cur->end;
        *s = cur->p;
        *e = stop;
        cur->p = nl ? nl + 1 : cur->end;
        cur->line++;
        for (const char *q = *s; q < stop; q++)
            if (!is_space(*q))
                return true;
    }
    return false;
}

static MfStatus push_field(Fields *f, const char *s, const char *e)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        Span *v = realloc(f->v, (size_t)cap * sizeof *v);
        if (!v)
            return mf_err_nomem(FN, (unsigned long long)cap * sizeof *v);
        f->v = v;
        f->cap = cap;
    }
    while (s < e && is_space(*s))
        s++;
    while (e > s && is_space(e[-1]))
        e--;
    f->v[f->n++] = (Span){s, e};
    return MF_OK;
}

/* The end of the quoted field opening at 'q' (the quote), just past the
 * closing quote; NULL when it is not closed on this line. */
static const char *skip_quoted(const char *q, const char *e)
{
    for (q++; q < e; q++) {
        if (*q != '"')
            continue;
        if (q + 1 < e && q[1] == '"')
            q++;
        else
            return q + 1;
    }
    return NULL;
}

/* Splits the line [s, e) at commas into c->f. */
static MfStatus split(Csv *c, const char *s, const char *e, int64_t line)
{
    c->f.n = 0;
    for (;;) {
        const char *p = s;
        while (p < e && is_space(*p))
            p++;
        const char *stop = p, *fs = s, *fe;
        if (p < e && *p == '"') {
            if (!(stop = skip_quoted(p, e)))
                return mf_err_set(MF_EARG, FN ": %s:%lld: column %d: unterminated quote",
                                  c->path, (long long)line, c->f.n + 1);
            fs = p + 1;
            fe = stop - 1;
            while (stop < e && is_space(*stop))
                stop++;
            if (stop < e && *stop != ',')
                return mf_err_set(MF_EARG, FN ": %s:%lld: column %d: text after the closing "
                                  "quote", c->path, (long long)line, c->f.n + 1);
        } else {
            stop = memchr(p, ',', (size_t)(e - p));
            stop = stop ? stop : e;
            fe = stop;
        }
        MfStatus st = push_field(&c->f, fs, fe);
        if (st != MF_OK || stop >= e)
            return st;
        s = stop + 1;
    }
}

/* Parses one field as a number of 'dt' into 'dst'; false when it is not one. */
static bool parse_number(const Span *sp, MfDType dt, void *dst)
{
    char tmp[128];
    size_t n = (size_t)(sp->e - sp->s);
    if (n == 0 || n >= sizeof tmp)
        return false;
    memcpy(tmp, sp->s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    if (mf_dtype_is_float(dt)) {
        double v = strtod(tmp, &end);
        if (dt == MF_FLOAT32)
            *(float *)dst = (float)v;
        else
            *(double *)dst = v;
        return *end == '\0';
    }
    long long v = strtoll(tmp, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    if (dt == MF_INT64) {
        *(int64_t *)dst = v;
        return true;
    }
    *(int32_t *)dst = (int32_t)v;
    return v >= INT32_MIN && v <= INT32_MAX;
}

static MfStatus bad_number(const Csv *c, int64_t line, int64_t col, const Span *sp, MfDType dt)
{
    int n = (int)(sp->e - sp->s);
    if (n == 0)
        return mf_err_set(MF_EARG, FN ": %s:%lld: column %lld: empty field (expected %s)",
                          c->path, (long long)line, (long long)col + 1, mf_dtype_name(dt));
    return mf_err_set(MF_EARG, FN ": %s:%lld: column %lld: expected a%s %s number, got '%.*s'",
                      c->path, (long long)line, (long long)col + 1,
                      mf_dtype_is_int(dt) ? "n" : "", mf_dtype_name(dt), n > 40 ? 40 : n, sp->s);
}

/* Field 'k' of the current line as a newly allocated string (quotes
 * undoubled); NULL when out of memory. */
static char *field_text(const Span *sp)
{
    size_t n = (size_t)(sp->e - sp->s), j = 0;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s[j++] = sp->s[i];
        if (sp->s[i] == '"' && i + 1 < n && sp->s[i + 1] == '"')
            i++;
    }
    s[j] = '\0';
    return s;
}

/* The 0-based index of the header field named 'name', or -1. */
static MfStatus find_name(const Csv *c, const char *name, int64_t *idx)
{
    *idx = -1;
    for (int k = 0; k < c->f.n && *idx < 0; k++) {
        char *s = field_text(&c->f.v[k]);
        if (!s)
            return mf_err_nomem(FN, (unsigned long long)(c->f.v[k].e - c->f.v[k].s) + 1);
        if (strcmp(s, name) == 0)
            *idx = k;
        free(s);
    }
    if (*idx < 0)
        return mf_err_set(MF_EARG, FN ": %s has no column named '%s' in its header (line 1 has "
                          "%d columns)", c->path, name, c->nfields);
    return MF_OK;
}

/* Fills c->sel from the options; the first line's fields are in c->f. */
static MfStatus select_columns(Csv *c, const MfCsvOptions *opt, int header)
{
    c->nsel = opt->columns && opt->ncolumns > 0 ? opt->ncolumns : c->nfields;
    c->sel = malloc((size_t)c->nsel * sizeof *c->sel);
    if (!c->sel)
        return mf_err_nomem(FN, (unsigned long long)c->nsel * sizeof *c->sel);
    for (int i = 0; i < c->nsel; i++) {
        const MfCsvColumn *col = opt->columns && opt->ncolumns > 0 ? &opt->columns[i] : NULL;
        if (!col) {
            c->sel[i] = i;
        } else if (col->name) {
            if (!header)
                return mf_err_set(MF_EARG, FN ": column '%s' is selected by name, but header = "
                                  "false", col->name);
            MfStatus st = find_name(c, col->name, &c->sel[i]);
            if (st != MF_OK)
                return st;
        } else if (col->index < 0 || col->index >= c->nfields) {
            return mf_err_set(MF_EARG, FN ": column %lld out of range: %s has %d columns "
                              "(columns are 1-based: 1..%d)", (long long)col->index + 1,
                              c->path, c->nfields, c->nfields);
        } else {
            c->sel[i] = col->index;
        }
    }
    return MF_OK;
}

/* Whether the first line (in c->f) is a header, for header = -1: one of
 * its selected fields is not a number. */
static bool looks_like_header(const Csv *c, const MfCsvOptions *opt)
{
    if (opt->columns)
        for (int i = 0; i < opt->ncolumns; i++)
            if (opt->columns[i].name)
                return true;
    double v;
    for (int i = 0; i < c->nsel; i++)
        if (!parse_number(&c->f.v[c->sel[i]], MF_FLOAT64, &v))
            return true;
    return false;
}

/* Parses the data lines from 'cur' into 'out' (rows x c->nsel). */
static MfStatus parse_rows(Csv *c, Cursor cur, MfTensor *out)
{
    const char *s, *e;
    size_t es = mf_dtype_size(out->dtype);
    char *dst = mf_tensor_data(out);
    for (int64_t r = 0; r < out->shape[0] && next_line(&cur, &s, &e); r++) {
        MfStatus st = split(c, s, e, cur.line);
        if (st != MF_OK)
            return st;
        if (c->f.n != c->nfields)
            return mf_err_set(MF_EARG, FN ": %s:%lld: expected %d fields (as on the first line), "
                              "got %d", c->path, (long long)cur.line, c->nfields, c->f.n);
        for (int i = 0; i < c->nsel; i++, dst += es)
            if (!parse_number(&c->f.v[c->sel[i]], out->dtype, dst))
                return bad_number(c, cur.line, c->sel[i], &c->f.v[c->sel[i]], out->dtype);
    }
    return MF_OK;
}

static MfStatus check_dtype(MfDType dt)
{
    if (dt == MF_FLOAT32 || dt == MF_FLOAT64 || dt == MF_INT32 || dt == MF_INT64)
        return MF_OK;
    return mf_err_set(MF_EARG, FN ": dtype must be float32, float64, int32 or int64, got %s",
                      mf_dtype_name(dt));
}

/* Reads the first line, settles header and columns, counts the rows. */
static MfStatus parse(Csv *c, const MfCsvOptions *opt, MfTensor **out)
{
    Cursor cur = {c->text, c->text + c->len, 0};
    const char *s, *e;
    if (c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
        cur.p += 3;
    if (!next_line(&cur, &s, &e))
        return mf_err_set(MF_EARG, FN ": '%s' is empty", c->path);
    Cursor first = {s, cur.end, cur.line - 1};
    MfStatus st = split(c, s, e, cur.line);
    if (st != MF_OK)
        return st;
    c->nfields = c->f.n;
    if ((st = select_columns(c, opt, opt->header != 0)) != MF_OK)
        return st;
    int header = opt->header >= 0 ? opt->header : looks_like_header(c, opt);
    Cursor data = header ? cur : first;
    int64_t rows = 0;
    for (Cursor k = data; next_line(&k, &s, &e);)
        rows++;
    if (rows == 0)
        return mf_err_set(MF_EARG, FN ": '%s' has no data rows (only a header line)", c->path);
    *out = mf_tensor_new(opt->dtype, 2, (int64_t[]){rows, c->nsel});
    if (!*out)
        return MF_ENOMEM;
    if ((st = parse_rows(c, data, *out)) != MF_OK) {
        mf_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

MfStatus mf_read_csv(const char *path, const MfCsvOptions *opt, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_dtype(opt->dtype);
    if (st != MF_OK)
        return st;
    Csv c = {.path = path};
    if ((st = read_all(&c)) == MF_OK)
        st = parse(&c, opt, out);
    free(c.text);
    free(c.f.v);
    free(c.sel);
    return st;
}
