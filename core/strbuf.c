/* strbuf.c — the growable string every folder builds text in (strbuf.h).
 *
 * Memory comes from the caching allocator; a failed growth sets 'failed'
 * and makes every later append a no-op, so a caller checks once at the end
 * (mf_strbuf_status). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

static bool reserve(MfStrBuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = mf_alloc(cap);
    if (!p) {
        b->failed = 1;
        return false;
    }
    if (b->data) {
        memcpy(p, b->data, b->len + 1);
        mf_dealloc(b->data, b->cap);
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void mf_strbuf_addn(MfStrBuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void mf_strbuf_repeat(MfStrBuf *b, char c, int n)
{
    if (n <= 0 || !reserve(b, (size_t)n))
        return;
    memset(b->data + b->len, c, (size_t)n);
    b->len += (size_t)n;
    b->data[b->len] = '\0';
}

void mf_strbuf_free(MfStrBuf *b)
{
    if (b->data)
        mf_dealloc(b->data, b->cap);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

void mf_strbuf_add(MfStrBuf *b, const char *s)
{
    mf_strbuf_addn(b, s, strlen(s));
}

void mf_strbuf_addf(MfStrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

MfStatus mf_strbuf_status(const MfStrBuf *b, const char *fname)
{
    return b->failed ? mf_err_nomem(fname, (unsigned long long)b->len * 2 + 256) : MF_OK;
}
