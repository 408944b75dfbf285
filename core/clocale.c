/* clocale.c — the "C" locale around number conversions (clocale.h). */
#define _POSIX_C_SOURCE 200809L /* uselocale, newlocale (the build asks XOPEN 600) */
#include "clocale.h"

#include <locale.h>
#include <pthread.h>

static locale_t c_locale;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

MfCLocale mf_c_locale_begin(void)
{
    pthread_once(&once, make_c_locale);
    MfCLocale saved = {NULL};
    if (c_locale)
        saved.prev = uselocale(c_locale);
    return saved;
}

void mf_c_locale_end(MfCLocale saved)
{
    if (saved.prev)
        uselocale((locale_t)saved.prev);
}
