/* forward.h — forward-mode autodiff: TensorFlow's tf.autodiff.ForwardAccumulator.
 *
 * An accumulator holds a tangent per tensor (keyed by tensor id, as a tape
 * keys its records). While one is active, the dispatcher calls its hook after
 * every op (core/op.h 'mf_op_set_forward'), eager or built into a graph; for
 * an op reading a tensor with a tangent, the op's forward rule (eager/jvp.h)
 * computes the tangents of its outputs, with that accumulator paused (the
 * rule's own ops are seen by outer accumulators and by tapes: forward over
 * forward, forward over reverse, reverse over forward).
 *
 * Ownership: an accumulator is refcounted and holds a reference to each
 * tangent it stores; 'close' stops it (its tangents stay readable), the last
 * release frees them. A tensor's tangent is released when the tensor is
 * freed (core/tensor.h's free hook, set while an accumulator lives), as
 * TensorFlow's accumulator forgets it with its primal: nobody can ask for
 * it any more. */
#ifndef MF_EAGER_FORWARD_H
#define MF_EAGER_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/op.h"

typedef struct MfForwardAcc MfForwardAcc;

/* A new accumulator, active at once (NULL with MF_ENOMEM's message). */
MfForwardAcc *mf_forward_new(void);
void mf_forward_retain(MfForwardAcc *a);
void mf_forward_release(MfForwardAcc *a);

/* Gives 'primal' the tangent 'tangent' (same shape and dtype, float:
 * MF_EARG "ForwardAccumulator: ..." naming 'which', 1-based, otherwise). */
MfStatus mf_forward_watch(MfForwardAcc *a, MfTensor *primal, MfTensor *tangent, int which);

/* The tangent of 'x' (borrowed), or NULL when no watched primal reaches it. */
MfTensor *mf_forward_tangent(const MfForwardAcc *a, const MfTensor *x);

/* Stops computing tangents (ops after it get none); idempotent. */
void mf_forward_close(MfForwardAcc *a);
bool mf_forward_active(const MfForwardAcc *a);

/* Ops run meanwhile get no tangents from 'a' (nests). */
void mf_forward_pause(MfForwardAcc *a);
void mf_forward_unpause(MfForwardAcc *a);

/* The tangents 'a' keeps: one per live tensor a watched primal reaches (a
 * freed tensor's tangent is dropped). */
int64_t mf_forward_ntangents(const MfForwardAcc *a);

/* Live accumulators (tests assert 0 at teardown). */
int64_t mf_forward_live_count(void);

#endif
