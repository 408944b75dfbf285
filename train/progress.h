/* progress.h — the progress line of a training loop (Keras' Progbar,
 * Torch's xlua.progress), mf.progress's engine:
 *
 *   epoch 2/3  step  40/100 [=========>..............]  40%  loss 0.1234 | 850 steps/s ETA 0:03
 *
 * On a terminal the line is redrawn in place ("\r", at most 10 times a
 * second) and each epoch keeps its last line; otherwise (a log file, a pipe)
 * it prints plain lines, at most one per 'interval' seconds plus the first
 * step and the end of each epoch, so logs stay short. Times are seconds of
 * a monotonic clock (mf_progress_now), passed in so tests can set them.
 *
 * Ownership: an MfProgress is a plain value the caller allocates (the face
 * keeps it in a userdata); metric names are copied in. */
#ifndef MF_PROGRESS_H
#define MF_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"

#define MF_PROGRESS_MAX_METRICS 8

typedef struct MfProgressMetric {
    char name[24];
    double value;
} MfProgressMetric;

typedef struct MfProgress {
    int64_t total, epochs;     /* 0: unknown */
    int64_t step, epoch;       /* the last update, 1-based; 0 before the first */
    int64_t done;              /* steps counted across epochs */
    double created, last_draw; /* last_draw < 0: never drawn */
    double first, end;         /* times of the first update and of the finish (0: not yet) */
    int64_t first_done;        /* 'done' after the first update */
    double interval;           /* seconds between plain lines */
    bool tty, finished;
    bool ended;                /* done() was called: no update after it */
    bool show_epoch;           /* epochs given, or an update named its epoch */
    int64_t drawn_epoch;
    bool line_closed;          /* tty: the last draw ended its line (an epoch's end) */
    int nmetrics;
    MfProgressMetric metrics[MF_PROGRESS_MAX_METRICS]; /* "loss" first, then by name */
} MfProgress;

/* Seconds of the monotonic clock. */
double mf_progress_now(void);

/* A progress of 'total' steps per epoch and 'epochs' epochs (0: unknown),
 * made at time 'now'. Errors (MF_EARG, "progress: ..."): epochs without
 * total, a negative or NaN interval. */
MfStatus mf_progress_init(MfProgress *p, int64_t total, int64_t epochs, double interval,
                          bool tty, double now);

/* MF_OK when a 'total' or 'epochs' given to mf.progress ('key') is at least
 * 1; MF_EARG ("progress: 'total' must be at least 1, got 0") otherwise. */
MfStatus mf_progress_check_count(const char *key, int64_t v);

/* MF_OK when an update's given "step" or "epoch" ('key') is 1-based and
 * within 'total' or 'epochs' (when known); MF_EARG ("update: 'step' = 6 is
 * out of range 1..5 (1-based)") otherwise. */
MfStatus mf_progress_check_position(const MfProgress *p, const char *key, int64_t v);

/* The step and epoch an update without them means: the next step, rolling
 * over into the next epoch after 'total' (saturating at INT64_MAX). */
void mf_progress_next(const MfProgress *p, int64_t *step, int64_t *epoch);

/* Sets metric 'name' to 'v' (added when new). Errors (MF_EARG, "update:
 * ..."): more than MF_PROGRESS_MAX_METRICS metrics, a name of 24 or more
 * characters. */
MfStatus mf_progress_set_metric(MfProgress *p, const char *name, double v);

/* MF_OK when an update may be at 'epoch'; MF_EARG ("update: epoch N is
 * past epochs = M ...") past the last epoch. */
MfStatus mf_progress_check_epoch(const MfProgress *p, int64_t epoch);

/* Records an update at ('step', 'epoch') at time 'now' ('named_epoch': the
 * update gave its epoch, so the line shows it) and draws the line to 'out'
 * when it is due ('out' NULL: never; mf_progress_line reads it). Errors, with
 * nothing changed: mf_progress_check_epoch's; the line was ended by
 * mf_progress_done (as the update's own arguments may do from Lua: issue #35
 * M2). */
MfStatus mf_progress_update(MfProgress *p, int64_t step, int64_t epoch, bool named_epoch,
                            double now, FILE *out);

/* Ends the line: the final state with the total time, unless the finish was
 * already drawn or nothing was updated ('out' NULL: records the end only).
 * Later updates are refused; ending it again does nothing. */
void mf_progress_done(MfProgress *p, double now, FILE *out);

/* The line at time 'now' (no line ending) into 'buf', '.' as the decimal
 * point whatever the locale. */
void mf_progress_line(const MfProgress *p, double now, char *buf, size_t cap);

#endif
