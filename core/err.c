/* err.c — the single pending error message (see err.h). One message slot per
 * thread; a pending message is kept until 'mf_err_clear' so that the outermost
 * caller can report the innermost cause. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MSG_CAP 1024

static _Thread_local char msg[MSG_CAP];
static _Thread_local int pending;

MfStatus mf_err_set(MfStatus code, const char *fmt, ...)
{
    if (pending)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pending = 1;
    return code;
}

void mf_err_suffix(const char *fmt, ...)
{
    if (!pending)
        return;
    size_t n = strlen(msg);
    if (n + 4 >= MSG_CAP)
        return;
    msg[n++] = ' ';
    msg[n++] = '(';
    size_t room = MSG_CAP - n - 2; /* leaves space for ')' and the end */
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(msg + n, room + 1, fmt, ap);
    va_end(ap);
    if (w > 0)
        n += (size_t)w < room ? (size_t)w : room;
    msg[n++] = ')';
    msg[n] = '\0';
}

void mf_err_prefix(const char *fmt, ...)
{
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char joined[MSG_CAP];
    size_t n = strlen(head);
    if (n > MSG_CAP - 3)
        n = MSG_CAP - 3;
    /* A message that already begins with this head keeps it once: an
     * error raised inside apply_gradients and named by it would otherwise
     * read "apply_gradients: apply_gradients: ...". */
    if (pending && strncmp(msg, head, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return;
    memcpy(joined, head, n);
    memcpy(joined + n, ": ", 2);
    const char *rest = pending ? msg : "failed";
    size_t room = MSG_CAP - n - 3, len = strlen(rest);
    if (len > room)
        len = room;
    memcpy(joined + n + 2, rest, len);
    joined[n + 2 + len] = '\0';
    memcpy(msg, joined, sizeof msg);
    pending = 1;
}

const char *mf_err_msg(void)
{
    return pending ? msg : "";
}

void mf_err_clear(void)
{
    pending = 0;
    msg[0] = '\0';
}

MfStatus mf_err_nomem(const char *where, unsigned long long nbytes)
{
    return mf_err_set(MF_ENOMEM, "%s: out of memory (could not allocate %llu bytes)", where,
                      nbytes);
}
