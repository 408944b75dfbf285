/* err.h — status codes and the one error-message slot of the engine.
 *
 * Engine functions return an MfStatus. On failure they record a message
 * (op name, what was expected, what was given) with 'mf_err_set' and return.
 * The first message of a failure wins: callers may prefix context with
 * 'mf_err_prefix' but never replace it. Nothing below repl/ prints or aborts. */
#ifndef MF_ERR_H
#define MF_ERR_H

typedef enum MfStatus {
    MF_OK = 0,
    MF_ENOMEM,   /* an allocation failed */
    MF_ESHAPE,   /* shapes do not fit the op */
    MF_EARG,     /* a bad argument: value, axis, attribute */
    MF_EDTYPE,   /* a dtype the op does not take */
    MF_EINTR,    /* interrupted by the user (Ctrl-C) */
    MF_EIO,      /* a file could not be read or written */
    MF_EINTERNAL /* a broken invariant that is not the user's fault */
} MfStatus;

/* Records a printf-style message and returns 'code'. When a message is
 * already pending (an inner call failed first), the inner one is kept. */
MfStatus mf_err_set(MfStatus code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts "context: " before the pending message (e.g. a node name). */
void mf_err_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Puts " (note)" after the pending message (what the caller did to the
 * user's arguments, e.g. a layout transposed before the op saw it). */
void mf_err_suffix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The pending message; "" when none. Borrowed: valid until the next set/clear. */
const char *mf_err_msg(void);

/* Forgets the pending message; call before starting a new top-level action. */
void mf_err_clear(void);

/* Records "NAME: out of memory (N bytes)" and returns MF_ENOMEM. */
MfStatus mf_err_nomem(const char *where, unsigned long long nbytes);

#endif
