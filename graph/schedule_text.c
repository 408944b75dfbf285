/* schedule_text.c — a recorded schedule printed as a table, as
 * tostring(schedule) shows it: step, node, op, in-degree and the ready queue
 * after the step ran; the fed placeholders first, marked as values given to
 * the run (not work the executor did). The rows come from the caller (the
 * Lua face keeps the schedule as a table of records the user may read). */
#include <string.h>

#include "graph.h"

/* Column widths: at least the header's, at most these (a very long scoped
 * name then breaks the alignment of its own row only). */
#define NAME_MIN 22
#define OP_MIN 16
#define NAME_MAX 200
#define OP_MAX 60

static const char *or_unknown(const char *s)
{
    return s ? s : "?";
}

static int clamp_width(int w, int lo, int hi)
{
    return w < lo ? lo : w > hi ? hi : w;
}

/* The longest name and op of 'rows' widen '*wname' and '*wop'. */
static void widen(const MfSchedRow *rows, int n, int *wname, int *wop)
{
    for (int i = 0; i < n; i++) {
        int a = (int)strlen(or_unknown(rows[i].name)), o = (int)strlen(or_unknown(rows[i].op));
        *wname = a > *wname ? a : *wname;
        *wop = o > *wop ? o : *wop;
    }
}

MfStatus mf_schedule_text(const MfSchedRow *steps, int nsteps, const MfSchedRow *fed, int nfed,
                          MfStrBuf *out)
{
    int wname = NAME_MIN, wop = OP_MIN;
    widen(steps, nsteps, &wname, &wop);
    widen(fed, nfed, &wname, &wop);
    wname = clamp_width(wname, NAME_MIN, NAME_MAX);
    wop = clamp_width(wop, OP_MIN, OP_MAX);
    mf_strbuf_addf(out, "step  %-*s  %-*s  indegree  ready queue after it ran", wname, "node",
                   wop, "op");
    for (int i = 0; i < nfed; i++)
        mf_strbuf_addf(out, "\n   -  %-*s  %-*s  fed, not run (a value given to run: not "
                       "counted)", wname, or_unknown(fed[i].name), wop, or_unknown(fed[i].op));
    for (int i = 0; i < nsteps; i++) {
        const MfSchedRow *r = &steps[i];
        mf_strbuf_addf(out, "\n%4d  %-*s  %-*s  %8d  ", i + 1, wname, or_unknown(r->name), wop,
                       or_unknown(r->op), r->indegree);
        for (int k = 0; k < r->nready; k++)
            mf_strbuf_addf(out, "%s%s", k > 0 ? ", " : "", or_unknown(r->ready[k]));
    }
    return mf_strbuf_status(out, "Schedule");
}
