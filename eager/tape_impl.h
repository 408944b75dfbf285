/* tape_impl.h — the insides of a tape, shared by tape.c (recording),
 * gradient.c (the backward walk) and explain.c. Private to eager/.
 *
 * 'live' maps every tensor id the tape cares about: LIVE_WATCHED for watched
 * tensors, or record index + LIVE_RECORD for tensors a record produced.
 * Records are appended in execution order, so they are topologically sorted. */
#ifndef MF_EAGER_TAPE_IMPL_H
#define MF_EAGER_TAPE_IMPL_H

#include "core/grad.h"
#include "eager.h"
#include "autodiff/idmap.h"
#include "autodiff/walk.h"

#define LIVE_WATCHED ((uintptr_t)1)
#define LIVE_RECORD ((uintptr_t)2)
#define REC_INLINE 4

typedef struct MfTapeRecord {
    MfOpId op;                      /* MF_NOPS for a custom function */
    MfTapeFunction *fn;             /* custom function (retained) or NULL */
    int ninputs, noutputs;
    MfTensor *in_inline[REC_INLINE];
    MfTensor **in_heap;             /* inputs when more than REC_INLINE, else NULL */
    MfTensor *outputs[MF_MAX_OUTPUTS];
    MfAttrs *attrs;                 /* owned copy; NULL when all zero (most ops) */
    MfGradFn *override;             /* registered gradient replacing the op's (borrowed) */
} MfTapeRecord;

/* The values read from one variable on this tape (distinct tensor ids). */
typedef struct MfVarReads {
    MfVariable *var;       /* retained (mf_tape_variables lists it) */
    int64_t n, cap;
    int64_t *ids;
} MfVarReads;

struct MfTape {
    int64_t refcount;
    bool persistent;
    bool watch_vars;       /* watch trainable variables when they are read */
    bool active;           /* in the list of recording tapes */
    bool busy;             /* computing its own gradient: records nothing */
    int paused;            /* inside tape:stop_recording (nests): records nothing */
    bool used;             /* a non-persistent tape that gave its gradient */
    bool lost_read;        /* a variable read could not be watched (out of memory) */
    int64_t stop_id;       /* first tensor id made after 'stop' (0 while recording) */
    MfTapeRecord *recs;
    int64_t nrecs, caprecs;
    MfIdMap live;
    MfIdMap vars;          /* variable id -> MfVarReads* */
    MfIdMap watched_vars;  /* variable ids watched with 'watch' */
    MfIdMap exported;      /* ids of its tensors whose values went to Lua (item) */
};

static inline MfTensor *const *mf_rec_inputs(const MfTapeRecord *r)
{
    return r->in_heap ? r->in_heap : r->in_inline;
}

static inline bool mf_rec_differentiable(const MfTapeRecord *r)
{
    return r->fn != NULL || r->override != NULL || mf_op_differentiable(r->op);
}

static inline const char *mf_rec_name(const MfTapeRecord *r)
{
    return r->fn ? r->fn->name : mf_op_table[r->op]->name;
}

/* A tape's records as the backward walk's (autodiff/walk.h), for the walk
 * (gradient.c) and explain (explain.c): keys are tensor ids. 'describe'
 * writes a record's input keys into 'keys' (grown as needed). */
#define MF_TAPE_INLINE_KEYS 16
typedef struct MfTapeRecords {
    const MfTape *t;
    MfAdKey inline_keys[MF_TAPE_INLINE_KEYS];
    MfAdKey *keys;
    int capkeys;
} MfTapeRecords;

void mf_tape_records_init(MfTapeRecords *r, const MfTape *t);
void mf_tape_records_free(MfTapeRecords *r);
/* MfAdRecordsOps.describe, 'self' an MfTapeRecords. */
MfStatus mf_tape_describe(void *self, int64_t k, MfAdRecord *r);

/* Frees the records (releasing their tensors) and the id tables. */
void mf_tape_clear(MfTape *t);
/* Releases the records and watched tensors, keeping the variables (a used
 * non-persistent tape still answers watched_variables). */
void mf_tape_clear_records(MfTape *t);

/* custom_reads.c: notes a trainable variable a recording tape watched
 * while a custom_gradient's function ran. */
void mf_tape_note_custom_read_(MfVariable *v);

#endif
