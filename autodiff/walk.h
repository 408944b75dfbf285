/* walk.h — the one backward walk, over an interface of records.
 *
 * A tape (eager/gradient.c) and a graph (graph/gradients.c) are both a list
 * of records in an order where a value's producer comes before its readers:
 * a tape's records in execution order, a graph's nodes in creation order.
 * Each value a record reads or makes has a key (MfAdKey): a tape tensor's id,
 * a graph node output's slot + 1. The walk knows only records and keys:
 *
 * 1. 'mf_ad_walk_source' marks the sources' keys; 'mf_ad_walk_mark' goes
 *    forward over the records and marks the outputs of every record a
 *    gradient passes through that reads a marked key ('reach').
 * 2. The implementation seeds the targets ('mf_ad_walk_add').
 * 3. 'mf_ad_walk_back' goes backward over the records: for a record a
 *    gradient passes through that reads a reached key, it takes the
 *    gradients of the record's outputs out of the table (a source's is kept
 *    as well), lets the implementation handle it another way ('shortcut':
 *    a Slice or MatMul gradient added in place, or a Slice's deferred) or
 *    run its gradient ('backward': the op's, the registered override, or a
 *    custom function), checks each input gradient ('check') and adds it to
 *    the table (AddV2 when one is already there).
 * 4. The implementation collects the sources' gradients
 *    ('mf_ad_walk_gradient').
 *
 * What differs between eager and graph mode lives in the hooks: how a
 * gradient runs (at once on values, or as nodes under "gradients/"), what a
 * shape check compares (shapes, or static specs with unknown dims), the
 * Slice trick, and per-record work (DistributedOptimizer's ready hooks).
 * Forward mode walks no records: tangents are computed as ops run
 * (eager/forward.h; doc/design.md "Gradients are written in ops").
 *
 * Ownership: every gradient in the table is owned by the walk; 'dout'
 * handed to a hook is borrowed for the call; 'din' and a checked gradient
 * are owned by whoever holds them. */
#ifndef MF_AUTODIFF_WALK_H
#define MF_AUTODIFF_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "autodiff/idmap.h"
#include "core/grad.h"

/* One value a record reads or makes (> 0). */
typedef int64_t MfAdKey;

/* What the walk needs of one record. */
typedef struct MfAdRecord {
    bool passes;             /* a gradient passes through it (else the walk skips it) */
    MfOpId op;               /* the op (MF_NOPS: no op, e.g. a custom function) */
    const MfAttrs *attrs;    /* its attributes (NULL: all default) */
    MfGradFn *override;      /* a registered gradient replacing the op's, or NULL */
    bool custom;             /* a custom gradient function replaces the op's */
    int ninputs, noutputs;
    const MfAdKey *inputs;   /* the keys its gradient flows to (valid until the
                              * next 'describe') */
    MfAdKey outputs[MF_MAX_OUTPUTS];
    unsigned float_outputs;  /* bit j: output j is a float tensor (explain.h) */
} MfAdRecord;

typedef struct MfAdWalk MfAdWalk;

/* The interface a list of records implements. 'self' is the implementation's
 * own state; every hook but 'describe' and 'backward' may be NULL. */
typedef struct MfAdRecordsOps {
    const char *who;   /* names the walk's own errors: "gradient", "gradients" */
    /* Describes record 'k' into 'r'. */
    MfStatus (*describe)(void *self, int64_t k, MfAdRecord *r);
    /* Before record 'k' (which a source reaches) gives up its outputs'
     * gradients: the graph adds its deferred Slice gradients there. */
    MfStatus (*before)(MfAdWalk *w, void *self, int64_t k, const MfAdRecord *r);
    /* Handles the gradient of record 'k' without 'backward': true when done
     * (it may instead clear entries of 'needs' it has handled). */
    bool (*shortcut)(MfAdWalk *w, void *self, int64_t k, const MfAdRecord *r, MfTensor **dout,
                     bool *needs);
    /* Computes din[0..ninputs) (owned, NULL: none) of record 'k' from 'dout'
     * (NULL where no gradient reached an output) for the inputs with 'needs'. */
    MfStatus (*backward)(MfAdWalk *w, void *self, int64_t k, const MfAdRecord *r,
                         MfTensor **dout, const bool *needs, MfTensor **din);
    /* Checks (and may replace) '*g', the gradient of input 'i' of record 'k',
     * before it is added; on error it releases '*g'. */
    MfStatus (*check)(MfAdWalk *w, void *self, int64_t k, const MfAdRecord *r, int i,
                      MfTensor **g);
    /* After record 'k', walked or skipped (per-record hooks, Ctrl-C). */
    MfStatus (*after)(MfAdWalk *w, void *self, int64_t k);
} MfAdRecordsOps;

struct MfAdWalk {
    const MfAdRecordsOps *ops;
    void *self;
    int64_t nrecords;   /* records 0 .. nrecords-1, fixed when the walk starts */
    MfIdMap reach;      /* keys that depend on a source */
    MfIdMap sources;    /* source keys */
    MfIdMap grads;      /* key -> accumulated gradient (owned) */
    MfIdMap kept;       /* source keys a record made -> their final gradient (owned) */
};

/* A walk over 'n' records of 'ops' / 'self'. */
void mf_ad_walk_init(MfAdWalk *w, const MfAdRecordsOps *ops, void *self, int64_t n);
/* Releases every gradient the walk holds. */
void mf_ad_walk_free(MfAdWalk *w);

/* Marks 'key' as a source (its gradient is kept when a record takes it). */
MfStatus mf_ad_walk_source(MfAdWalk *w, MfAdKey key);
/* The forward pass: marks what the sources reach. */
MfStatus mf_ad_walk_mark(MfAdWalk *w);
/* True when a source reaches 'key'. */
bool mf_ad_walk_reached(const MfAdWalk *w, MfAdKey key);

/* Adds 'g' (owned) to the gradient held for 'key' (AddV2(held, g)). */
MfStatus mf_ad_walk_add(MfAdWalk *w, MfAdKey key, MfTensor *g);
/* The gradient held for 'key' (a source's kept one first), borrowed, or NULL. */
MfTensor *mf_ad_walk_gradient(const MfAdWalk *w, MfAdKey key);
/* The held gradient of 'key' (borrowed; NULL: none) and, when 'fresh' is
 * given, a new one stored there: for in-place accumulation. */
MfTensor *mf_ad_walk_held(const MfAdWalk *w, MfAdKey key);
MfStatus mf_ad_walk_hold(MfAdWalk *w, MfAdKey key, MfTensor *fresh);

/* The backward pass over the records, from the last to the first. */
MfStatus mf_ad_walk_back(MfAdWalk *w);

#endif
