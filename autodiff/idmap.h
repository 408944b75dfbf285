/* idmap.h — a small hash map from keys (int64 > 0: tensor ids, graph output
 * slots) to pointers. Open addressing with linear probing; key 0 marks an
 * empty slot. Used as a set (value: any non-NULL marker) for the tensors a
 * tape watches or that depend on watched tensors, and by the backward walk
 * (walk.h) as a map key -> accumulated gradient. The map never owns its
 * values. */
#ifndef MF_AUTODIFF_IDMAP_H
#define MF_AUTODIFF_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"

typedef struct MfIdMap {
    int64_t *keys;
    void **vals;
    int64_t cap;     /* a power of two, or 0 before the first insert */
    int64_t count;   /* live entries */
    int64_t used;    /* live entries plus tombstones */
} MfIdMap;

/* The value stored for 'id', or NULL. */
void *mf_idmap_get(const MfIdMap *m, int64_t id);

/* Stores 'val' (non-NULL) for 'id', replacing any previous value.
 * MF_ENOMEM (message naming 'who') when the table cannot grow. */
MfStatus mf_idmap_put(MfIdMap *m, int64_t id, void *val, const char *who);

/* Removes 'id'; returns the value it had, or NULL. */
void *mf_idmap_take(MfIdMap *m, int64_t id);

/* Iterates: returns the next slot index >= 'i' holding an entry, or -1. */
int64_t mf_idmap_next(const MfIdMap *m, int64_t i);

/* Empties the table and frees its memory. */
void mf_idmap_free(MfIdMap *m);

#endif
