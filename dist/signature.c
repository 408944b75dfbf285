/* signature.c — the signature exchange that runs before a collective (see
 * dist.h): one MPI_Allgather of a 64-bit hash per process; only when the
 * hashes differ, a second MPI_Allgather of the texts (SIG_TEXT bytes each),
 * so every process can name both sides in the same message.
 *
 * Graph nodes carry a hash (an attribute) rather than a text: the texts
 * live in a registry here, from mf_dist_signature until mf_dist_finalize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_impl.h"

#define SIG_TEXT 1024

typedef struct Sig {
    uint64_t hash;
    char *text;
    struct Sig *next;
} Sig;

static Sig *registry;

uint64_t mf_dist_hash(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ? h : 1;
}

static const char *lookup(uint64_t hash)
{
    for (const Sig *s = registry; s; s = s->next)
        if (s->hash == hash)
            return s->text;
    return NULL;
}

uint64_t mf_dist_signature(const char *text)
{
    if (mf_dist_size() == 1)
        return 0;
    uint64_t h = mf_dist_hash(text);
    if (lookup(h))
        return h;
    Sig *s = malloc(sizeof *s);
    char *copy = strdup(text);
    if (!s || !copy) {   /* the exchange still compares the hash */
        free(s);
        free(copy);
        return h;
    }
    *s = (Sig){h, copy, registry};
    registry = s;
    return h;
}

void mf_dist_signatures_free(void)
{
    while (registry) {
        Sig *next = registry->next;
        free(registry->text);
        free(registry);
        registry = next;
    }
}

/* The texts of every process gathered; the error names rank 0's and the
 * first rank that differs from it. */
static MfStatus report(const char *who, const uint64_t *hashes, const char *text)
{
    int size = mf_dist_size();
    char mine[SIG_TEXT] = {0};
    snprintf(mine, sizeof mine, "%s", text ? text : "(a call without a description)");
    char *all = malloc((size_t)size * SIG_TEXT);
    if (!all)
        return mf_err_nomem(who, (unsigned long long)size * SIG_TEXT);
    int rc = MPI_Allgather(mine, SIG_TEXT, MPI_CHAR, all, SIG_TEXT, MPI_CHAR, MPI_COMM_WORLD);
    MfStatus st = mf_dist_mpi_status(rc, who);
    int other = 1;
    while (other < size - 1 && hashes[other] == hashes[0])
        other++;
    if (st == MF_OK)
        st = mf_err_set(MF_EARG, "%s: the processes' collectives do not match (shape, dtype or "
                        "order): rank 0 has %s; rank %d has %s", who, all, other,
                        all + (size_t)other * SIG_TEXT);
    free(all);
    return st;
}

MfStatus mf_dist_check_hash(const char *who, uint64_t hash, const char *text)
{
    int size = mf_dist_size();
    if (size == 1)
        return MF_OK;
    uint64_t *hashes = malloc((size_t)size * sizeof *hashes);
    if (!hashes)
        return mf_err_nomem(who, (unsigned long long)size * sizeof *hashes);
    int rc = MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    MfStatus st = mf_dist_mpi_status(rc, who);
    bool same = true;
    for (int i = 1; i < size && st == MF_OK; i++)
        same = same && hashes[i] == hashes[0];
    if (st == MF_OK && !same)
        st = report(who, hashes, text ? text : lookup(hash));
    free(hashes);
    return st;
}

MfStatus mf_dist_check(const char *who, const char *text)
{
    return mf_dist_check_hash(who, mf_dist_hash(text), text);
}
