/* session.c — MfSession: runs fetches of one graph with the in-degree
 * executor. Variables (whose values live in a session) come later; today a
 * session holds its graph and whether it is closed. */
#include <stdlib.h>

#include "graph.h"

struct MfSession {
    MfGraph *g;          /* retained */
    bool closed;
};

MfSession *mf_session_new(MfGraph *g)
{
    MfSession *s = calloc(1, sizeof *s);
    if (!s) {
        mf_err_nomem("Session", sizeof *s);
        return NULL;
    }
    mf_graph_retain(g);
    s->g = g;
    return s;
}

void mf_session_free(MfSession *s)
{
    if (!s)
        return;
    mf_graph_release(s->g);
    free(s);
}

MfGraph *mf_session_graph(const MfSession *s)
{
    return s->g;
}

void mf_session_close(MfSession *s)
{
    s->closed = true;
}

bool mf_session_closed(const MfSession *s)
{
    return s->closed;
}

MfStatus mf_session_run(MfSession *s, int nfetch, MfTensor *const *fetches, int ntargets,
                        MfNode *const *targets, int nfeed, MfTensor *const *fed,
                        MfTensor *const *feeds, const MfExecOptions *opt,
                        MfTensor **results, MfSchedule **sched)
{
    if (s->closed) {
        for (int i = 0; i < nfetch; i++)
            results[i] = NULL;
        if (sched)
            *sched = NULL;
        return mf_err_set(MF_EARG, "run: the session is closed");
    }
    return mf_exec_run(s->g, nfetch, fetches, ntargets, targets, nfeed, fed, feeds, opt,
                       results, sched);
}
