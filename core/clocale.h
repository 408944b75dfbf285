/* clocale.h — number text that does not depend on the C library's locale.
 *
 * snprintf and strtod write and read the decimal point of the current
 * locale: after os.setlocale("de_DE.UTF-8") they would print "1,5" and read
 * "1.5" as 1. moonflow's number text (CSV, printed tensors, the Chrome
 * trace JSON, profiler tables, attribute listings) is always written and
 * read with '.': the code that converts switches the calling thread to the
 * "C" locale (uselocale) for the duration and back. Lua's own tostring and
 * tonumber keep following os.setlocale, as in plain Lua. */
#ifndef MF_CLOCALE_H
#define MF_CLOCALE_H

/* The thread's locale before mf_c_locale_begin (opaque). */
typedef struct MfCLocale {
    void *prev;
} MfCLocale;

/* Switches the calling thread to the "C" locale; give the result to
 * mf_c_locale_end. Without memory for the locale object nothing changes. */
MfCLocale mf_c_locale_begin(void);
void mf_c_locale_end(MfCLocale saved);

#endif
