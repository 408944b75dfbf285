/* idmap.c — the hash map from keys to pointers (see idmap.h).
 * Deleted slots become tombstones (key -1) so probe chains stay intact; the
 * table is rebuilt when live entries plus tombstones pass half its size. */
#include "idmap.h"

#include <string.h>

#include "core/alloc.h"

#define TOMBSTONE ((int64_t)-1)

static uint64_t hash_id(int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Slot holding 'id', or -1. */
static int64_t find(const MfIdMap *m, int64_t id)
{
    if (m->cap == 0)
        return -1;
    uint64_t mask = (uint64_t)m->cap - 1;
    for (uint64_t i = hash_id(id) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == id)
            return (int64_t)i;
        if (m->keys[i] == 0)
            return -1;
    }
}

void *mf_idmap_get(const MfIdMap *m, int64_t id)
{
    int64_t i = find(m, id);
    return i < 0 ? NULL : m->vals[i];
}

/* Inserts into a table known to have room and not to hold 'id'. */
static void insert_fresh(MfIdMap *m, int64_t id, void *val)
{
    uint64_t mask = (uint64_t)m->cap - 1;
    uint64_t i = hash_id(id) & mask;
    while (m->keys[i] > 0)
        i = (i + 1) & mask;
    if (m->keys[i] == 0)
        m->used++;
    m->keys[i] = id;
    m->vals[i] = val;
    m->count++;
}

static MfStatus rehash(MfIdMap *m, int64_t cap, const char *who)
{
    int64_t *keys = mf_alloc_zeroed((size_t)cap * sizeof *keys);
    void **vals = mf_alloc((size_t)cap * sizeof *vals);
    if (!keys || !vals) {
        if (keys)
            mf_dealloc(keys, (size_t)cap * sizeof *keys);
        if (vals)
            mf_dealloc(vals, (size_t)cap * sizeof *vals);
        return mf_err_nomem(who, (unsigned long long)cap * 16u);
    }
    MfIdMap old = *m;
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    m->count = m->used = 0;
    for (int64_t i = 0; i < old.cap; i++)
        if (old.keys[i] > 0)
            insert_fresh(m, old.keys[i], old.vals[i]);
    if (old.cap) {
        mf_dealloc(old.keys, (size_t)old.cap * sizeof *old.keys);
        mf_dealloc(old.vals, (size_t)old.cap * sizeof *old.vals);
    }
    return MF_OK;
}

MfStatus mf_idmap_put(MfIdMap *m, int64_t id, void *val, const char *who)
{
    int64_t i = find(m, id);
    if (i >= 0) {
        m->vals[i] = val;
        return MF_OK;
    }
    if ((m->used + 1) * 2 > m->cap) {
        /* After the rebuild at most a quarter of the slots are in use. */
        int64_t cap = 16;
        while ((m->count + 1) * 4 > cap)
            cap *= 2;
        MfStatus st = rehash(m, cap, who);
        if (st != MF_OK)
            return st;
    }
    insert_fresh(m, id, val);
    return MF_OK;
}

void *mf_idmap_take(MfIdMap *m, int64_t id)
{
    int64_t i = find(m, id);
    if (i < 0)
        return NULL;
    void *v = m->vals[i];
    m->keys[i] = TOMBSTONE;
    m->count--;
    return v;
}

int64_t mf_idmap_next(const MfIdMap *m, int64_t i)
{
    for (; i < m->cap; i++)
        if (m->keys[i] > 0)
            return i;
    return -1;
}

void mf_idmap_free(MfIdMap *m)
{
    if (m->cap) {
        mf_dealloc(m->keys, (size_t)m->cap * sizeof *m->keys);
        mf_dealloc(m->vals, (size_t)m->cap * sizeof *m->vals);
    }
    memset(m, 0, sizeof *m);
}
