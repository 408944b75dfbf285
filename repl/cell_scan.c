/* cell_scan.c — a small scanner of Lua source for the cell rules (cell.h):
 * where a cell's statements may begin (after ';' and at each line) and
 * which 'local' statements stand at the cell's top level. It knows
 * strings, long strings and comments, so a ';' or a 'local' inside them is
 * never taken for code; it does not check syntax (Lua's compiler does). */
#include <ctype.h>
#include <string.h>

#include "cell_scan.h"

/* The length of a long bracket's opening "[", "=" * n, "[" at 's' (its
 * level n in '*level'), or 0 when 's' does not open one. */
static size_t long_open(const char *s, const char *end, size_t *level)
{
    if (s >= end || *s != '[')
        return 0;
    const char *p = s + 1;
    while (p < end && *p == '=')
        p++;
    if (p >= end || *p != '[')
        return 0;
    *level = (size_t)(p - s - 1);
    return (size_t)(p - s + 1);
}

/* Skips a long string or comment body up to its closing "]" "=" * level "]". */
static const char *long_close(const char *p, const char *end, size_t level)
{
    for (; p < end; p++) {
        if (*p != ']')
            continue;
        const char *q = p + 1;
        while (q < end && *q == '=')
            q++;
        if (q < end && *q == ']' && (size_t)(q - p - 1) == level)
            return q + 1;
    }
    return end;
}

static const char *quoted_end(const char *p, const char *end)
{
    char quote = *p++;
    for (; p < end && *p != quote && *p != '\n'; p++)
        if (*p == '\\' && p + 1 < end)
            p++;
    return p < end ? p + 1 : end;
}

void lmf_scan_init(LmfScan *s, const char *code, size_t len)
{
    s->code = code;
    s->p = code;
    s->end = code + len;
    s->newline = 1;
}

/* Skips blanks and comments; sets s->newline when a line ended. */
static void skip_space(LmfScan *s)
{
    while (s->p < s->end) {
        if (*s->p == '\n') {
            s->newline = 1;
            s->p++;
        } else if (isspace((unsigned char)*s->p)) {
            s->p++;
        } else if (s->p + 1 < s->end && s->p[0] == '-' && s->p[1] == '-') {
            size_t level, open = long_open(s->p + 2, s->end, &level);
            if (open) {
                s->p = long_close(s->p + 2 + open, s->end, level);
            } else {
                while (s->p < s->end && *s->p != '\n')
                    s->p++;
            }
        } else {
            return;
        }
    }
}

int lmf_scan_next(LmfScan *s, LmfToken *t)
{
    s->newline = 0;
    skip_space(s);
    if (s->p >= s->end)
        return 0;
    t->line_start = s->newline;
    t->start = (size_t)(s->p - s->code);
    const char *p = s->p;
    size_t level, open = long_open(p, s->end, &level);
    if (isalpha((unsigned char)*p) || *p == '_') {
        while (p < s->end && (isalnum((unsigned char)*p) || *p == '_'))
            p++;
        t->kind = LMF_TOK_NAME;
    } else if (isdigit((unsigned char)*p)) {
        while (p < s->end && (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
                              ((*p == '+' || *p == '-') && strchr("eEpP", p[-1]))))
            p++;
        t->kind = LMF_TOK_OTHER;
    } else if (*p == '"' || *p == '\'') {
        p = quoted_end(p, s->end);
        t->kind = LMF_TOK_STRING;
    } else if (open) {
        p = long_close(p + open, s->end, level);
        t->kind = LMF_TOK_STRING;
    } else {
        p++;
        t->kind = LMF_TOK_OTHER;
    }
    t->len = (size_t)(p - s->p);
    s->p = p;
    return 1;
}

int lmf_token_is(const LmfScan *s, const LmfToken *t, const char *text)
{
    return t->len == strlen(text) && memcmp(s->code + t->start, text, t->len) == 0;
}

int lmf_block_change(const LmfScan *s, const LmfToken *t)
{
    if (t->kind != LMF_TOK_NAME)
        return 0;
    static const char *const opens[] = {"do", "if", "function", "repeat"};
    for (size_t i = 0; i < sizeof opens / sizeof *opens; i++)
        if (lmf_token_is(s, t, opens[i]))
            return 1;
    return lmf_token_is(s, t, "end") || lmf_token_is(s, t, "until") ? -1 : 0;
}
