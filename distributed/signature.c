/* signature.c — the header every checked collective starts with (see
 * dist.h): one MPI_Allgather of a small header per process (its count of
 * checked collectives, what it is doing, the hash of the call's text and
 * the element count at run time); only when the headers differ, a second
 * MPI_Allgather of the texts (SIG_TEXT bytes each), so every process can
 * name both sides in the same message.
 *
 * What a process is doing: a collective; the end of its script (the exit
 * join of mf_dist_finalize), so a process waiting in a collective gets an
 * error instead of waiting forever; or a step that failed on it alone
 * (mf_dist_join_failed), so the others fail in the same step instead of
 * matching its next step's collectives with their current ones. As in
 * Horovod's negotiation, every process learns the same thing at once.
 *
 * Graph nodes carry a hash (an attribute) rather than a text: the texts
 * live in a registry here, from mf_dist_signature until mf_dist_finalize.
 * A graph node's text holds its build-time shape ("(?,2)"), which is why
 * the element count travels too. */
#include <inttypes.h>
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

/* What a process brings to the exchange. */
enum { HDR_CALL, HDR_EXIT, HDR_FAILED };

typedef struct Header {
    int64_t seq;     /* its checked collectives so far, this one included */
    int64_t state;   /* HDR_* */
    int64_t hash;    /* of the call's text (a uint64_t's bits) */
    int64_t count;   /* elements at run time, -1 when they may differ */
} Header;

static int64_t seq;
static bool broken;      /* a process has ended: nothing can complete */
static unsigned failures;   /* exchanges that failed (every process raised the error) and
                               failures told the others */

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

unsigned mf_dist_failures(void)
{
    return failures;
}

static bool same(const Header *a, const Header *b)
{
    return a->seq == b->seq && a->state == b->state && a->hash == b->hash && a->count == b->count;
}

/* The message for rank 'p' (0) and 'q', the first rank that differs from
 * it, whose texts are 'tp' and 'tq': the same on every process. */
static MfStatus mismatch(const char *who, const Header *h, int q, const char *tp, const char *tq)
{
    const Header *a = &h[0], *b = &h[q];
    if (a->state == HDR_EXIT || b->state == HDR_EXIT) {
        broken = true;
        int e = a->state == HDR_EXIT ? 0 : q, c = e ? 0 : q;
        return mf_err_set(MF_EARG, "%s: rank %d ended its script while rank %d made collective "
                          "#%" PRId64 ", %s; no collective can complete any more (every "
                          "process must make the same collectives)", who, e, c, h[c].seq,
                          c ? tq : tp);
    }
    if (a->state == HDR_FAILED || b->state == HDR_FAILED) {
        int f = a->state == HDR_FAILED ? 0 : q, c = f ? 0 : q;
        return mf_err_set(MF_EARG, "%s: rank %d failed its step (%s) while rank %d made "
                          "collective #%" PRId64 ", %s", who, f, f ? tq : tp, c, h[c].seq,
                          c ? tq : tp);
    }
    if (a->hash == b->hash && a->count != b->count)
        return mf_err_set(MF_EARG, "%s: the processes' collectives do not match (shape, dtype or "
                          "order): rank 0 has %s with %" PRId64 " elements; rank %d has %" PRId64
                          " elements (collective #%" PRId64 ")", who, tp, a->count, q, b->count,
                          a->seq);
    return mf_err_set(MF_EARG, "%s: the processes' collectives do not match (shape, dtype or "
                      "order): rank 0 has %s; rank %d has %s (collective #%" PRId64 ")", who, tp,
                      q, tq, a->seq);
}

/* The texts of every process gathered, then the message. */
static MfStatus report(const char *who, const Header *h, const char *text)
{
    int size = mf_dist_size();
    char mine[SIG_TEXT] = {0};
    snprintf(mine, sizeof mine, "%s", text ? text : "(a call without a description)");
    char *all = malloc((size_t)size * SIG_TEXT);
    if (!all)
        return mf_err_nomem(who, (unsigned long long)size * SIG_TEXT);
    int rc = MPI_Allgather(mine, SIG_TEXT, MPI_CHAR, all, SIG_TEXT, MPI_CHAR, MPI_COMM_WORLD);
    MfStatus st = mf_dist_mpi_status(rc, who);
    int q = 1;
    while (q < size - 1 && same(&h[q], &h[0]))
        q++;
    if (st == MF_OK)
        st = mismatch(who, h, q, all, all + (size_t)q * SIG_TEXT);
    free(all);
    return st;
}

/* The exchange of a header whose call is described by 'text'. */
static MfStatus exchange(const char *who, Header mine, const char *text)
{
    int size = mf_dist_size();
    Header *h = malloc((size_t)size * sizeof *h);
    if (!h)
        return mf_err_nomem(who, (unsigned long long)size * sizeof *h);
    mine.seq = ++seq;
    int rc = MPI_Allgather(&mine, 4, MPI_INT64_T, h, 4, MPI_INT64_T, MPI_COMM_WORLD);
    MfStatus st = mf_dist_mpi_status(rc, who);
    bool all_same = true;
    for (int i = 1; i < size && st == MF_OK; i++)
        all_same = all_same && same(&h[i], &h[0]);
    if (st == MF_OK && !all_same)
        st = report(who, h, text);
    free(h);
    failures += st != MF_OK;
    return st;
}

MfStatus mf_dist_usable(const char *who)
{
    if (mf_dist_size() > 1 && !mf_dist_mpi_on())
        return mf_err_set(MF_EARG, "%s: the run's MPI has ended (the script is exiting)", who);
    if (broken)
        return mf_err_set(MF_EARG, "%s: a process of the run has ended its script; no "
                          "collective can complete any more", who);
    return MF_OK;
}

MfStatus mf_dist_check_hash(const char *who, uint64_t hash, const char *text, int64_t count)
{
    if (mf_dist_size() == 1)
        return MF_OK;
    MfStatus st = mf_dist_usable(who);
    if (st != MF_OK)
        return st;
    Header mine = {0, HDR_CALL, (int64_t)hash, count};
    return exchange(who, mine, text ? text : lookup(hash));
}

MfStatus mf_dist_check(const char *who, const char *text)
{
    return mf_dist_check_hash(who, mf_dist_hash(text), text, -1);
}

void mf_dist_join_failed(const char *why)
{
    if (mf_dist_size() == 1 || !mf_dist_mpi_on() || broken)
        return;
    char text[SIG_TEXT];   /* 'why' may be the pending message, which the exchange keeps */
    snprintf(text, sizeof text, "%s", why);
    bool pending = mf_err_msg()[0] != 0;
    Header mine = {0, HDR_FAILED, 0, 0};
    exchange("step", mine, text);
    failures++;   /* told: an outer step that fails with it tells no one again */
    if (!pending)
        mf_err_clear();
}

MfStatus mf_dist_join_exit(void)
{
    if (mf_dist_size() == 1 || !mf_dist_mpi_on() || broken)
        return MF_OK;
    Header mine = {0, HDR_EXIT, 0, 0};
    MfStatus st = exchange("mf.dist", mine, "");
    broken = true;   /* after its end, this process makes no collective */
    return st;
}
