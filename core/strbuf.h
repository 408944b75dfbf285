/* strbuf.h — a growable NUL-terminated string (strbuf.c): what the
 * engine's listings, the tensor text (present/format.h) and the plots are
 * built in. The caller owns the text and frees it with 'mf_strbuf_free'. */
#ifndef MF_CORE_STRBUF_H
#define MF_CORE_STRBUF_H

#include <stddef.h>

#include "err.h"

/* A growable NUL-terminated string; zero-initialise before first use. */
typedef struct MfStrBuf {
    char *data;
    size_t len;
    size_t cap;
    int failed; /* an allocation failed: the text is incomplete */
} MfStrBuf;

/* Frees the text and resets 'b' to empty. */
void mf_strbuf_free(MfStrBuf *b);

/* Append 's', or text formatted as snprintf does, to 'b' (the engine's
 * listings are built with them). When memory runs out 'b->failed' is set
 * and later appends do nothing: check it once at the end. */
void mf_strbuf_add(MfStrBuf *b, const char *s);
void mf_strbuf_addn(MfStrBuf *b, const char *s, size_t n);    /* the first 'n' bytes of 's' */
void mf_strbuf_repeat(MfStrBuf *b, char c, int n);            /* 'c' 'n' times (none if n <= 0) */
void mf_strbuf_addf(MfStrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* MF_OK when every append to 'b' succeeded, else MF_ENOMEM with the message
 * "'fname': out of memory ..." (the text is incomplete). */
MfStatus mf_strbuf_status(const MfStrBuf *b, const char *fname);

#endif
