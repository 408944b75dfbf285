/* run_request.c — one sess:run call as TensorFlow 1.x reads it, built item
 * by item: fetches (graph tensors, operations run for their effects, or
 * names: "add:0", "v" for its first output, "init" for an operation) and
 * feeds (a graph tensor or a tensor name -> a value), then the run, its
 * results in fetch order and, when asked, its schedule as printable rows.
 *
 * Ownership: the request holds a reference to every tensor given to it
 * (fetches, feed keys and values) and to every result, so a face can add
 * items while it reads user values and free the request (which releases
 * them all) whenever it stops, error or not. The session is borrowed. */
#include <string.h>

#include "graph.h"

#include "core/alloc.h"

typedef struct Fetch {
    MfTensor *t;       /* a fetched tensor (owned), NULL for an operation */
    MfNode *op;        /* an operation fetched for its effects */
    MfTensor *value;   /* t's value after the run (owned) */
} Fetch;

typedef struct Feed {
    MfTensor *key, *value;   /* owned; 'value' NULL until given */
} Feed;

struct MfRunRequest {
    MfSession *s;
    Fetch *fetches;
    Feed *feeds;
    int nfetch, capfetch, nfeed, capfeed;
    MfSchedRow *steps, *fed;         /* after a run with a schedule */
    const char **ready;              /* the steps' ready names, MF_SCHED_READY_MAX each */
    char *labels;                    /* the fused steps' op labels, copied (owned) */
    int nsteps;
};

MfRunRequest *mf_run_request_new(MfSession *s)
{
    MfRunRequest *r = mf_calloc(1, sizeof *r);
    if (!r)
        mf_err_nomem("run", sizeof *r);
    else
        r->s = s;
    return r;
}

static void clear_schedule(MfRunRequest *r)
{
    mf_free(r->steps);
    mf_free(r->fed);
    mf_free(r->ready);
    mf_free(r->labels);
    r->steps = r->fed = NULL;
    r->ready = NULL;
    r->labels = NULL;
    r->nsteps = 0;
}

void mf_run_request_free(MfRunRequest *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nfetch; i++) {
        mf_tensor_release(r->fetches[i].t);
        mf_tensor_release(r->fetches[i].value);
    }
    for (int i = 0; i < r->capfeed; i++) {   /* past 'nfeed': zero, or a key given last */
        mf_tensor_release(r->feeds[i].key);
        mf_tensor_release(r->feeds[i].value);
    }
    clear_schedule(r);
    mf_free(r->fetches);
    mf_free(r->feeds);
    mf_free(r);
}

/* Room for one more item of 'size' bytes in '*arr' ('n' used of '*cap'),
 * zeroed. */
static MfStatus grow(void **arr, int n, int *cap, size_t size)
{
    if (n < *cap)
        return MF_OK;
    int ncap = *cap ? 2 * *cap : 8;
    char *p = mf_realloc(*arr, (size_t)ncap * size);
    if (!p)
        return mf_err_nomem("run", (size_t)ncap * size);
    memset(p + (size_t)n * size, 0, (size_t)(ncap - n) * size);
    *arr = p;
    *cap = ncap;
    return MF_OK;
}

/* Adds fetch 't' (retained) or operation 'op'. */
static MfStatus add_fetch(MfRunRequest *r, MfTensor *t, MfNode *op)
{
    MfStatus st = grow((void **)&r->fetches, r->nfetch, &r->capfetch, sizeof *r->fetches);
    if (st != MF_OK)
        return st;
    mf_tensor_retain(t);
    r->fetches[r->nfetch++] = (Fetch){t, op, NULL};
    return MF_OK;
}

MfStatus mf_run_request_fetch(MfRunRequest *r, MfTensor *t)
{
    return add_fetch(r, t, NULL);
}

MfStatus mf_run_request_fetch_op(MfRunRequest *r, MfNode *op)
{
    return add_fetch(r, NULL, op);
}

MfStatus mf_run_request_fetch_name(MfRunRequest *r, const char *name)
{
    MfTensor *t;
    MfNode *op;
    MfStatus st = mf_session_fetch_name(mf_session_graph(r->s), name, "run", &t, &op);
    if (st == MF_OK)
        st = add_fetch(r, t, op);
    mf_tensor_release(t);
    return st;
}

MfStatus mf_run_request_feed_key(MfRunRequest *r, MfTensor *key, const char *name,
                                 const MfTensor **out)
{
    *out = NULL;
    if (!name && !key->node)
        return mf_err_set(MF_EARG, "run: feed keys must be graph tensors (placeholders) or "
                          "tensor names, got a tensor with values");
    MfStatus st = grow((void **)&r->feeds, r->nfeed, &r->capfeed, sizeof *r->feeds);
    if (st != MF_OK)
        return st;
    mf_tensor_release(r->feeds[r->nfeed].key);   /* a key given before without a value */
    if (name)
        key = mf_graph_get_tensor(mf_session_graph(r->s), name, "run");
    else
        mf_tensor_retain(key);
    r->feeds[r->nfeed].key = key;
    *out = key;
    return key ? MF_OK : MF_EARG;
}

MfStatus mf_run_request_feed_value(MfRunRequest *r, MfTensor *value, bool from_data)
{
    Feed *f = &r->feeds[r->nfeed];
    MfStatus st = mf_session_feed_value(f->key, value, from_data, &f->value);
    if (st == MF_OK)
        r->nfeed++;
    return st;
}

/* The fused steps' labels (borrowed from the graph's plan, which adding
 * nodes replaces) copied into r->labels, each step's 'op' then pointing at
 * its copy. */
static MfStatus copy_labels(MfRunRequest *r, MfSchedule *s)
{
    size_t len = 1, at = 0;
    for (int i = 0; i < s->nsteps; i++)
        len += s->steps[i].op ? strlen(s->steps[i].op) + 1 : 0;
    if (!(r->labels = mf_malloc(len)))
        return mf_err_nomem("run", (unsigned long long)len);
    for (int i = 0; i < s->nsteps; i++) {
        if (!s->steps[i].op)
            continue;
        size_t n = strlen(s->steps[i].op) + 1;
        memcpy(r->labels + at, s->steps[i].op, n);
        s->steps[i].op = r->labels + at;
        at += n;
    }
    return MF_OK;
}

/* The rows of the schedule 's' and of the fed nodes. */
static MfStatus make_rows(MfRunRequest *r, MfSchedule *s)
{
    const MfGraph *g = mf_session_graph(r->s);
    if (copy_labels(r, s) != MF_OK)
        return MF_ENOMEM;
    r->steps = mf_calloc((size_t)s->nsteps + 1, sizeof *r->steps);
    r->fed = mf_calloc((size_t)r->nfeed + 1, sizeof *r->fed);
    r->ready = mf_calloc((size_t)s->nsteps * MF_SCHED_READY_MAX + 1, sizeof *r->ready);
    if (!r->steps || !r->fed || !r->ready)
        return mf_err_nomem("run", (size_t)s->nsteps * MF_SCHED_READY_MAX * sizeof *r->ready);
    for (int i = 0; i < s->nsteps; i++) {
        const MfSchedStep *st = &s->steps[i];
        const MfNode *n = mf_graph_node(g, st->node);
        const char **ready = r->ready + (size_t)i * MF_SCHED_READY_MAX;
        int kept = st->nready < MF_SCHED_READY_MAX ? st->nready : MF_SCHED_READY_MAX;
        for (int k = 0; k < kept; k++)
            ready[k] = mf_graph_node(g, st->ready[k])->name;
        r->steps[i] = (MfSchedRow){n->name, st->op ? st->op : mf_node_op_name(n), st->indegree,
                                   kept, ready};
    }
    for (int i = 0; i < r->nfeed; i++) {
        const MfNode *n = r->feeds[i].key->node;
        r->fed[i] = (MfSchedRow){n->name, mf_node_op_name(n), 0, 0, NULL};
    }
    r->nsteps = s->nsteps;
    return MF_OK;
}

/* Runs the fetches and feeds of 'r' ('ts' and 'ops' have room for every
 * array the executor takes); the values go to the fetches; '*sched' is
 * filled when not NULL. */
static MfStatus run_fetches(MfRunRequest *r, MfTensor **ts, MfNode **ops, MfSchedule **sched)
{
    int nt = 0, nops = 0;
    for (int i = 0; i < r->nfetch; i++) {
        if (r->fetches[i].t)
            ts[nt++] = r->fetches[i].t;
        else
            ops[nops++] = r->fetches[i].op;
    }
    MfTensor **keys = ts + r->nfetch, **vals = keys + r->nfeed, **results = vals + r->nfeed;
    for (int i = 0; i < r->nfeed; i++) {
        keys[i] = r->feeds[i].key;
        vals[i] = r->feeds[i].value;
    }
    MfExecOptions opt = {sched != NULL, NULL, NULL};
    MfStatus st = mf_session_run(r->s, nt, ts, nops, ops, r->nfeed, keys, vals, &opt, results,
                                 sched);
    for (int i = 0, k = 0; st == MF_OK && i < r->nfetch; i++)
        if (r->fetches[i].t)
            r->fetches[i].value = results[k++];
    return st;
}

MfStatus mf_run_request_run(MfRunRequest *r, bool schedule)
{
    size_t nts = 2 * (size_t)r->nfetch + 2 * (size_t)r->nfeed + 1;
    MfTensor **ts = mf_calloc(nts, sizeof *ts);
    MfNode **ops = mf_calloc((size_t)r->nfetch + 1, sizeof *ops);
    MfSchedule *sched = NULL;
    MfStatus st = ts && ops ? MF_OK : mf_err_nomem("run", nts * sizeof *ts);
    clear_schedule(r);
    if (st == MF_OK)
        st = run_fetches(r, ts, ops, schedule ? &sched : NULL);
    if (st == MF_OK && sched)
        st = make_rows(r, sched);
    mf_schedule_free(sched);
    mf_free(ts);
    mf_free(ops);
    return st;
}

int mf_run_request_nfetch(const MfRunRequest *r)
{
    return r->nfetch;
}

MfTensor *mf_run_request_result(const MfRunRequest *r, int i)
{
    mf_tensor_retain(r->fetches[i].value);
    return r->fetches[i].value;
}

int mf_run_request_schedule(const MfRunRequest *r, const MfSchedRow **steps,
                            const MfSchedRow **fed, int *nfed)
{
    *steps = r->steps;
    *fed = r->fed;
    *nfed = r->steps ? r->nfeed : 0;
    return r->nsteps;
}
