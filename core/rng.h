/* rng.h — the engine's counter-based random numbers and its seed rule.
 *
 * Generator: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
 * as 1, 2, 3", SC'11). It maps a 128-bit counter and a 64-bit key to four
 * 32-bit words, with no state. Random ops use the op seed as the key and
 * (element block, stream) as the counter, so element i of a tensor depends
 * only on (seed, i): results are reproducible across runs, independent of
 * the order in which elements are computed, and the same in eager and graph
 * mode.
 *
 * Seed rule (TensorFlow's, see 'mf_rng_op_seed'): a global seed (set by
 * 'mf_rng_set_global_seed', i.e. mf.random.seed) and an op counter. An op
 * without its own seed draws the next counter value; an op with a seed
 * depends only on (global seed, op seed).
 *
 * Graph runs (TensorFlow 1's stateful random ops, see 'mf_rng_run_seed'): a
 * random op node keeps one op seed from the time it was built, but each
 * execution of the node mixes in how many times it ran before, so
 * successive runs (and successive calls of a traced function) draw fresh
 * values while the sequence over runs stays reproducible. Run 0 uses the
 * op seed unchanged, so a graph's first run equals eager mode. Only the run
 * counters allocate (and can fail); the rest is pure. */
#ifndef MF_RNG_H
#define MF_RNG_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* The global seed TensorFlow uses when an op seed is given but no global
 * seed was set (DEFAULT_GRAPH_SEED). */
#define MF_RNG_DEFAULT_GLOBAL_SEED 87654321u

/* One Philox4x32-10 evaluation: 'out' = philox(ctr, key). */
void mf_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* Four random words for block 'index' of stream 'stream' under op seed
 * 'seed' (the key). Streams separate independent uses of one seed. */
void mf_rng_block(uint64_t seed, uint64_t index, uint64_t stream, uint32_t out[4]);

/* A double in [0, 1) with 53 random bits from two words. */
static inline double mf_rng_u01(uint32_t hi, uint32_t lo)
{
    uint64_t bits = ((uint64_t)hi << 32 | lo) >> 11;
    return (double)bits * (1.0 / 9007199254740992.0);
}

/* A float in [0, 1) with 24 random bits from one word. */
static inline float mf_rng_u01f(uint32_t w)
{
    return (float)(w >> 8) * (1.0f / 16777216.0f);
}

/* Two independent standard normals (Box-Muller, in double) from block
 * 'index' of stream 'stream'. */
void mf_rng_normal2(uint64_t seed, uint64_t index, uint64_t stream, double out[2]);

/* Sets the global seed and resets the op counter (mf.random.seed). */
void mf_rng_set_global_seed(uint64_t seed);

/* Forgets the global seed: ops without their own seed become
 * non-reproducible again, as at process start. */
void mf_rng_clear_global_seed(void);

/* True after 'mf_rng_set_global_seed'. */
bool mf_rng_has_global_seed(void);

/* The op seed (Philox key) for one random op call:
 *   global seed G set,   op seed s given: mix(G, s);
 *   global seed unset,   op seed s given: mix(MF_RNG_DEFAULT_GLOBAL_SEED, s);
 *   global seed G set,   no op seed:      mix'(G, counter++) — a sequence that
 *                                          restarts at every mf.random.seed;
 *   neither:                              mix'(process entropy, counter++).
 * mix and mix' are different hashes, so an explicit seed never collides with
 * a counter-drawn one. */
uint64_t mf_rng_op_seed(bool has_op_seed, int64_t op_seed);

/* The splitmix64 finaliser: a bijective 64-bit hash. */
uint64_t mf_rng_mix64(uint64_t x);

/* ---- run counters of graph random ops ------------------------------------ */

/* How many times one graph node ran, counted separately per random context
 * (see 'mf_rng_context_new'): TensorFlow keeps a random op's state in the
 * session's kernel, so two sessions of one graph see the same sequence. */
typedef struct MfRngRuns MfRngRuns;

/* New counters, all at zero (owned; 'mf_rng_runs_free'). NULL with a
 * message naming 'fname' when out of memory. */
MfRngRuns *mf_rng_runs_new(const char *fname);
void mf_rng_runs_free(MfRngRuns *r);

/* The Philox key for one execution of a random op whose op seed is 'seed':
 *   'runs' NULL (eager):        'seed' itself, always;
 *   run k of the node in the current context: 'seed' for k = 0, otherwise
 *                               a hash of (seed, k) in a domain of its own.
 * Counts the run. Fails (MF_ENOMEM, naming 'fname') only when a context is
 * seen for the first time and its counter cannot be stored. */
MfStatus mf_rng_run_seed(const char *fname, uint64_t seed, MfRngRuns *runs, uint64_t *out);

/* A fresh random context id (never 0, never reused in the process). A
 * session takes one when it is created and makes it current while it runs,
 * so each session counts runs of a node from 0. Context 0 is current
 * otherwise (graph runs outside any session). */
uint64_t mf_rng_context_new(void);

/* Makes 'ctx' the current context and returns the previous one (to be
 * restored after the run). */
uint64_t mf_rng_context_swap(uint64_t ctx);

/* The current context id. */
uint64_t mf_rng_context(void);

#endif
