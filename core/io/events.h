/* events.h — TensorBoard event files: a TFRecord file (tfrecord.h) of
 * tensorflow.Event messages, named events.out.tfevents.<time>.<host> in a
 * log directory. The first record is the version event "brain.Event:2";
 * each later one holds a summary (a scalar or a histogram) or a GraphDef.
 * Every record goes to the file with write(2) as it is made (no stdio
 * buffer), so a crash loses at most the record being written.
 *
 * An event file is appended to, so it cannot be renamed into place as
 * core/io/write_file.h's files are; its rule instead: the file is always new
 * (O_EXCL, nothing replaced), and when a write fails (a full disk) the torn
 * part of the record is cut off, so readers see every event written before
 * and no CRC error, and the writer refuses every later write and flush with
 * an error that names the first failure: it never reports success for
 * events no reader would see.
 *
 * Field numbers follow TensorFlow's event.proto (Event: wall_time 1,
 * step 2, file_version 3, graph_def 4, summary 5) and summary.proto
 * (Summary: value 1; Value: tag 1, simple_value 2, histo 5;
 * HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5,
 * bucket_limit 6, bucket 7). */
#ifndef MF_EVENTS_H
#define MF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "../tensor.h"

typedef struct MfEventWriter MfEventWriter;

/* Creates 'logdir' (and its parents) when missing, opens a new event file
 * in it and writes the version event. '*out' is owned (close it). */
MfStatus mf_event_writer_open(const char *logdir, MfEventWriter **out);

/* The event file's path (borrowed). */
const char *mf_event_writer_path(const MfEventWriter *w);

/* A record's step and a scalar's value given as tensor 't' (NULL: a value
 * of the face's type 'what' that is no tensor): the step a one-element
 * integer tensor with a value (e.g. the global step), the value a
 * one-element tensor of a number dtype with a value. MF_EARG naming 'fname'
 * ("scalar" for a value) and what was given otherwise. */
MfStatus mf_event_step_of(const char *fname, const MfTensor *t, const char *what, int64_t *step);
MfStatus mf_event_value_of(const MfTensor *t, const char *what, double *value);

/* A scalar summary: 'value' under 'tag' at 'step'. */
MfStatus mf_event_scalar(MfEventWriter *w, const char *tag, double value, int64_t step);

/* A histogram summary of every element of 't' (any real dtype), with
 * TensorFlow's default buckets (limits +-1e-12 * 1.1^k up to 1e20, 0, and
 * +-DBL_MAX); a NaN or infinite element is an error, as in TensorFlow. */
MfStatus mf_event_histogram(MfEventWriter *w, const char *tag, const MfTensor *t,
                            int64_t step);

/* An event holding 'n' bytes of a serialized GraphDef (graph/graphdef.c). */
MfStatus mf_event_graph(MfEventWriter *w, const void *graph_def, size_t n);

/* Syncs the file to disk (records reach the file as they are written). */
MfStatus mf_event_flush(MfEventWriter *w);

/* Closes the file and frees 'w' (NULL: nothing); fails when the close does
 * (a writer whose write failed earlier closes without a second error). */
MfStatus mf_event_writer_close(MfEventWriter *w);

#endif
