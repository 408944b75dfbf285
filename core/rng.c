/* rng.c — Philox4x32-10, Box-Muller normals and the seed rule (see rng.h).
 *
 * The only global state is the global seed, the op counter and the current
 * random context; the generator itself is a pure function of (counter,
 * key). Run counters (MfRngRuns) belong to the graph node that owns them. */
#include "rng.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "alloc.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

void mf_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(PHILOX_M0, c0, &hi0);
        uint32_t lo1 = mulhilo(PHILOX_M1, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void mf_rng_block(uint64_t seed, uint64_t index, uint64_t stream, uint32_t out[4])
{
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)stream,
                             (uint32_t)(stream >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    mf_philox4x32(ctr, key, out);
}

void mf_rng_normal2(uint64_t seed, uint64_t index, uint64_t stream, double out[2])
{
    static const double two_pi = 6.283185307179586476925286766559;
    uint32_t w[4];
    mf_rng_block(seed, index, stream, w);
    /* 1 - u lies in (0, 1], so the logarithm is finite. */
    double u1 = 1.0 - mf_rng_u01(w[0], w[1]);
    double u2 = mf_rng_u01(w[2], w[3]);
    double r = sqrt(-2.0 * log(u1));
    out[0] = r * cos(two_pi * u2);
    out[1] = r * sin(two_pi * u2);
}

uint64_t mf_rng_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t global_seed;
static bool global_seed_set;
static uint64_t op_counter;
static uint64_t entropy;

void mf_rng_set_global_seed(uint64_t seed)
{
    global_seed = seed;
    global_seed_set = true;
    op_counter = 0;
}

void mf_rng_clear_global_seed(void)
{
    global_seed_set = false;
    op_counter = 0;
}

bool mf_rng_has_global_seed(void)
{
    return global_seed_set;
}

/* A per-process seed for the unseeded case: the clock and an address
 * (ASLR), hashed. Drawn once, so unseeded ops still differ from each other
 * through the counter. */
static uint64_t process_entropy(void)
{
    if (!entropy) {
        struct timespec ts = {0, 0};
        timespec_get(&ts, TIME_UTC);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000007ull + (uint64_t)ts.tv_nsec;
        x ^= (uint64_t)(uintptr_t)&entropy;
        x ^= (uint64_t)clock() << 20;
        entropy = mf_rng_mix64(x) | 1;
    }
    return entropy;
}

/* Two domains of hashing: 'tag' separates explicit op seeds from counter
 * draws. */
static uint64_t mix2(uint64_t a, uint64_t b, uint64_t tag)
{
    return mf_rng_mix64(mf_rng_mix64(a ^ tag) ^ mf_rng_mix64(b + tag));
}

uint64_t mf_rng_op_seed(bool has_op_seed, int64_t op_seed)
{
    static const uint64_t tag_explicit = 0x5EEDull, tag_counter = 0xC0C0ull;
    if (has_op_seed) {
        uint64_t g = global_seed_set ? global_seed : MF_RNG_DEFAULT_GLOBAL_SEED;
        return mix2(g, (uint64_t)op_seed, tag_explicit);
    }
    uint64_t g = global_seed_set ? global_seed : process_entropy();
    return mix2(g, op_counter++, tag_counter);
}

/* ---- run counters ----------------------------------------------------------- */

/* One counter per context that ran the node, in first-run order. A node
 * is run by few sessions (usually one), so a short array searched from the
 * end (the latest context is the likeliest) beats a hash table. Blocks come
 * from 'mf_alloc', so its failure hook reaches these paths too. */
typedef struct RunSlot {
    uint64_t ctx;
    uint64_t count;
} RunSlot;

/* Room for two contexts inside the block (sessionless runs and one
 * session), so that the common cases never allocate while a graph runs. */
#define RUNS_INLINE 2

struct MfRngRuns {
    int n, cap;
    RunSlot *slots;             /* 'inline_slots' or an 'mf_alloc' block */
    RunSlot inline_slots[RUNS_INLINE];
};

static uint64_t current_ctx;
static uint64_t last_ctx;

MfRngRuns *mf_rng_runs_new(const char *fname)
{
    MfRngRuns *r = mf_alloc_zeroed(sizeof *r);
    if (!r) {
        mf_err_nomem(fname, sizeof *r);
        return NULL;
    }
    r->cap = RUNS_INLINE;
    r->slots = r->inline_slots;
    return r;
}

void mf_rng_runs_free(MfRngRuns *r)
{
    if (!r)
        return;
    if (r->slots != r->inline_slots)
        mf_dealloc(r->slots, (size_t)r->cap * sizeof *r->slots);
    mf_dealloc(r, sizeof *r);
}

/* Doubles the room for contexts; MF_ENOMEM (naming 'fname') on failure,
 * with 'r' unchanged. */
static MfStatus runs_grow(const char *fname, MfRngRuns *r)
{
    int cap = r->cap * 2;
    size_t nbytes = (size_t)cap * sizeof(RunSlot);
    RunSlot *p = mf_alloc(nbytes);
    if (!p)
        return mf_err_nomem(fname, nbytes);
    memcpy(p, r->slots, (size_t)r->n * sizeof *p);
    if (r->slots != r->inline_slots)
        mf_dealloc(r->slots, (size_t)r->cap * sizeof *p);
    r->slots = p;
    r->cap = cap;
    return MF_OK;
}

/* The counter of the current context, added at zero on its first run. */
static RunSlot *run_slot(const char *fname, MfRngRuns *r)
{
    for (int i = r->n - 1; i >= 0; i--)
        if (r->slots[i].ctx == current_ctx)
            return &r->slots[i];
    if (r->n == r->cap && runs_grow(fname, r) != MF_OK)
        return NULL;
    r->slots[r->n] = (RunSlot){current_ctx, 0};
    return &r->slots[r->n++];
}

MfStatus mf_rng_run_seed(const char *fname, uint64_t seed, MfRngRuns *runs, uint64_t *out)
{
    static const uint64_t tag_run = 0x52554Eull;
    *out = seed;
    if (!runs)
        return MF_OK;
    RunSlot *s = run_slot(fname, runs);
    if (!s)
        return MF_ENOMEM;
    uint64_t k = s->count++;
    /* Run 0 keeps the op seed, so the first run matches eager mode; later
     * runs hash (seed, k) in their own domain ('tag_run'), which no op
     * seed drawn by 'mf_rng_op_seed' shares. */
    if (k > 0)
        *out = mix2(seed, k, tag_run);
    return MF_OK;
}

uint64_t mf_rng_context_new(void)
{
    return ++last_ctx;
}

uint64_t mf_rng_context_swap(uint64_t ctx)
{
    uint64_t prev = current_ctx;
    current_ctx = ctx;
    return prev;
}

uint64_t mf_rng_context(void)
{
    return current_ctx;
}
