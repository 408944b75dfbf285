/* csv.c — mf_read_csv: a comma-separated text file into a 2-D tensor.
 *
 * The file is read whole into memory, then walked twice: once to count the
 * data rows (so the tensor is allocated once, at its final shape), once to
 * split each line into fields and parse the selected ones straight into the
 * tensor. Quoted fields may hold commas, doubled quotes and newlines, as
 * in Python's csv module. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "core/clocale.h"

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
    int64_t line;      /* 1-based number of the last line of the record last returned */
    int64_t start;     /* ... and of its first line, the one messages name */
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

/* Spaces around a field's text are dropped; '\n' only occurs here inside
 * quotes, where Python's float() strips it too ("1\n" is 1). */
static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* The end of the record that starts at 'p': the first newline outside a
 * quoted field (as Python's csv module reads them: a quote opens a quoted
 * field only at the start of a field; '""' inside is a quote). Newlines
 * inside quotes are counted into '*lines'. An unterminated quote runs to
 * the end of the file, where split() reports it. */
static const char *record_end(const char *p, const char *end, int64_t *lines)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    if (!memchr(p, '"', (size_t)(stop - p)))
        return stop; /* the common case: no quote on the line */
    bool field_start = true, quoted = false;
    for (; p < end; p++) {
        if (quoted) {
            if (*p == '"' && p + 1 < end && p[1] == '"')
                p++;
            else if (*p == '"')
                quoted = false;
            else if (*p == '\n')
                (*lines)++;
        } else if (*p == '\n') {
            return p;
        } else if (*p == '"' && field_start) {
            quoted = true;
        } else if (*p == ',' || !is_space(*p)) {
            field_start = *p == ',';
        }
    }
    return end;
}

/* The next record that is not blank, as [*s, *e) without its newline;
 * false at the end of the file. cur->start and cur->line become the
 * numbers of its first and last lines. */
static bool next_line(Cursor *cur, const char **s, const char **e)
{
    while (cur->p < cur->end) {
        int64_t inner = 0; /* newlines inside quoted fields */
        const char *stop = record_end(cur->p, cur->end, &inner);
        *s = cur->p;
        *e = stop;
        cur->p = stop < cur->end ? stop + 1 : cur->end;
        cur->start = cur->line + 1;
        cur->line += 1 + inner;
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

static bool has_nul(const char *s, const char *e)
{
    for (; s < e; s++)
        if (*s == '\0')
            return true;
    return false;
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
        /* C strings end at a NUL: "1\0" "5" would parse as 1 */
        if (st == MF_OK && has_nul(c->f.v[c->f.n - 1].s, c->f.v[c->f.n - 1].e))
            return mf_err_set(MF_EARG, FN ": %s:%lld: column %d: the field holds a NUL byte",
                              c->path, (long long)line, c->f.n);
        if (st != MF_OK || stop >= e)
            return st;
        s = stop + 1;
    }
}

/* Parses the NUL-terminated 'tmp' as a number of 'dt' into 'dst'. */
static bool parse_text(const char *tmp, MfDType dt, void *dst)
{
    char *end;
    errno = 0;
    /* strtod also reads C's hex floats ("0x1A", "0x1p3"); Python's float()
     * and numpy.loadtxt refuse them, and a column of hex ids read as
     * numbers would go unnoticed, so they are not numbers here either. */
    if (strpbrk(tmp, "xX"))
        return false;
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

/* Parses one field as a number of 'dt' into 'dst'; false when it is not one.
 * Fields of any length parse (0.000...1 with 200 digits is a number). */
static bool parse_number(const Span *sp, MfDType dt, void *dst)
{
    char small[128];
    size_t n = (size_t)(sp->e - sp->s);
    if (n == 0)
        return false;
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        return false; /* reported as not a number; a 2 GB field is not one anyway */
    memcpy(tmp, sp->s, n);
    tmp[n] = '\0';
    bool ok = parse_text(tmp, dt, dst);
    if (tmp != small)
        free(tmp);
    return ok;
}

/* For a field that did not parse as 'dt' (int32 or int64): 2 when it is a
 * whole number beyond int64, 1 when it fits int64 but not int32, else 0;
 * the message then says "out of range" rather than "not a number". */
static int int_out_of_range(const Span *sp, MfDType dt)
{
    char tmp[32];
    size_t n = (size_t)(sp->e - sp->s);
    if (!mf_dtype_is_int(dt) || n == 0)
        return 0;
    if (n >= sizeof tmp) /* a run of 32+ digits; the file text is NUL-terminated */
        return strspn(sp->s, "+-0123456789") >= n ? 2 : 0;
    memcpy(tmp, sp->s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end != '\0')
        return 0;
    return errno == ERANGE ? 2 : dt == MF_INT32 && (v < INT32_MIN || v > INT32_MAX);
}

static MfStatus bad_number(const Csv *c, int64_t line, int64_t col, const Span *sp, MfDType dt)
{
    int n = (int)(sp->e - sp->s);
    if (n == 0)
        return mf_err_set(MF_EARG, FN ": %s:%lld: column %lld: empty field (expected %s)",
                          c->path, (long long)line, (long long)col + 1, mf_dtype_name(dt));
    int range = int_out_of_range(sp, dt);
    if (range)
        return mf_err_set(MF_EARG, FN ": %s:%lld: column %lld: '%.*s' is out of the %s range%s",
                          c->path, (long long)line, (long long)col + 1, n > 40 ? 40 : n, sp->s,
                          mf_dtype_name(dt),
                          range == 1 ? " (use dtype = \"int64\")" : "");
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
        } else if (col->number < 1 || col->number > c->nfields) {
            return mf_err_set(MF_EARG, FN ": column %lld out of range: %s has %d columns "
                              "(columns are 1-based: 1..%d)", (long long)col->number,
                              c->path, c->nfields, c->nfields);
        } else {
            c->sel[i] = (int)col->number - 1;
        }
    }
    return MF_OK;
}

/* Whether the first line (in c->f) is a header, for header = -1: one of
 * its selected fields is text that is not a number. An empty field does
 * not count: a first data row with a missing value is still data (and
 * then an error naming the empty field), not a header dropped in silence. */
static bool looks_like_header(const Csv *c, const MfCsvOptions *opt)
{
    if (opt->columns)
        for (int i = 0; i < opt->ncolumns; i++)
            if (opt->columns[i].name)
                return true;
    double v;
    for (int i = 0; i < c->nsel; i++) {
        const Span *sp = &c->f.v[c->sel[i]];
        if (sp->e > sp->s && !parse_number(sp, MF_FLOAT64, &v))
            return true;
    }
    return false;
}

/* Parses the data lines from 'cur' into 'out' (rows x c->nsel). */
static MfStatus parse_rows(Csv *c, Cursor cur, MfTensor *out)
{
    const char *s, *e;
    size_t es = mf_dtype_size(out->dtype);
    char *dst = mf_tensor_data(out);
    for (int64_t r = 0; r < out->shape[0] && next_line(&cur, &s, &e); r++) {
        MfStatus st = split(c, s, e, cur.start);
        if (st != MF_OK)
            return st;
        if (c->f.n != c->nfields)
            return mf_err_set(MF_EARG, FN ": %s:%lld: expected %d fields (as on the first line), "
                              "got %d", c->path, (long long)cur.start, c->nfields, c->f.n);
        for (int i = 0; i < c->nsel; i++, dst += es)
            if (!parse_number(&c->f.v[c->sel[i]], out->dtype, dst))
                return bad_number(c, cur.start, c->sel[i], &c->f.v[c->sel[i]], out->dtype);
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
    Cursor cur = {c->text, c->text + c->len, 0, 0};
    const char *s, *e;
    if (c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
        cur.p += 3;
    if (!next_line(&cur, &s, &e))
        return mf_err_set(MF_EARG, FN ": '%s' is empty", c->path);
    Cursor first = {s, cur.end, cur.start - 1, 0};
    MfStatus st = split(c, s, e, cur.start);
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
    MfCLocale loc = mf_c_locale_begin();   /* strtod reads '.' in every locale */
    if ((st = read_all(&c)) == MF_OK)
        st = parse(&c, opt, out);
    mf_c_locale_end(loc);
    free(c.text);
    free(c.f.v);
    free(c.sel);
    return st;
}
