/* events.c — TensorBoard event files (see events.h). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "events.h"
#include "protobuf.h"
#include "tfrecord.h"
#include "write_file.h"

enum { EV_WALL_TIME = 1, EV_STEP = 2, EV_FILE_VERSION = 3, EV_GRAPH_DEF = 4, EV_SUMMARY = 5 };
enum { SUMMARY_VALUE = 1 };
enum { VALUE_TAG = 1, VALUE_SIMPLE = 2, VALUE_HISTO = 5 };
enum { HISTO_MIN = 1, HISTO_MAX, HISTO_NUM, HISTO_SUM, HISTO_SUM_SQUARES, HISTO_LIMIT,
       HISTO_BUCKET };

struct MfEventWriter {
    int fd;         /* -1 once closed */
    char *path;
    off_t good;     /* bytes of whole records in the file */
    char *failure;  /* the first failed write's message (then nothing more is written) */
};

static double wall_time(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Opens a new file events.out.tfevents.<time>.<host> in 'dir' (".<k>" is
 * appended when a writer of the same second took the name). */
static MfStatus open_new_file(MfEventWriter *w, const char *dir, double now)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    size_t cap = strlen(dir) + strlen(host) + 80;
    if (!(w->path = malloc(cap)))
        return mf_err_nomem("create_file_writer", cap);
    for (int k = 0; k < 1000; k++) {
        int len = snprintf(w->path, cap, "%s/events.out.tfevents.%010lld.%s", dir,
                           (long long)now, host);
        if (k > 0)
            snprintf(w->path + len, cap - (size_t)len, ".%d", k);
        w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (w->fd < 0 && errno == EEXIST)
            continue;
        if (w->fd < 0)
            return mf_err_set(MF_EIO, "create_file_writer: cannot create '%s': %s", w->path,
                              strerror(errno));
        return MF_OK;
    }
    return mf_err_set(MF_EIO, "create_file_writer: too many event files named '%s'", w->path);
}

/* Starts an Event with its time and step; the caller adds the payload. */
static void event_head(MfPbuf *b, int64_t step)
{
    mf_pb_double(b, EV_WALL_TIME, wall_time());
    if (step != 0)
        mf_pb_int(b, EV_STEP, step);
}

/* MF_OK when 'w' may write: it is open and no write failed before. */
static MfStatus check_usable(const MfEventWriter *w, const char *who)
{
    if (w->fd < 0)
        return mf_err_set(MF_EARG, "%s: the writer is closed", who);
    if (w->failure)
        return mf_err_set(MF_EIO, "%s: the summary writer failed earlier and writes nothing "
                          "more (%s); '%s' keeps every event written before; open a new "
                          "writer", who, w->failure, w->path);
    return MF_OK;
}

/* A record that failed part-way is cut off (so readers see every whole
 * record and no CRC error) and the writer refuses every later write: it
 * never reports success for events no reader would see. */
static void fail_writer(MfEventWriter *w, const char *who)
{
    if (ftruncate(w->fd, w->good) != 0 || lseek(w->fd, w->good, SEEK_SET) < 0)
        mf_err_prefix("cutting off the torn record failed too (%s)", strerror(errno));
    w->failure = strdup(mf_err_msg());
    mf_err_prefix("%s", who);
}

/* Writes the event in 'b' as one record and frees 'b'. */
static MfStatus write_event(MfEventWriter *w, MfPbuf *b, const char *who)
{
    MfStatus st = mf_pb_finish(b, who);
    if (st == MF_OK)
        st = check_usable(w, who);
    if (st == MF_OK) {
        st = mf_tfrecord_write(w->fd, w->path, b->data, b->len);
        if (st == MF_OK)
            w->good += (off_t)b->len + 16;   /* the record's 12-byte head and 4-byte CRC */
        else
            fail_writer(w, who);
    }
    mf_pb_free(b);
    return st;
}

MfStatus mf_event_writer_open(const char *logdir, MfEventWriter **out)
{
    *out = NULL;
    if (!logdir || !*logdir)
        return mf_err_set(MF_EARG, "create_file_writer: logdir must be a non-empty path");
    MfStatus st = mf_make_dirs("create_file_writer", logdir);
    if (st != MF_OK)
        return st;
    MfEventWriter *w = calloc(1, sizeof *w);
    if (!w)
        return mf_err_nomem("create_file_writer", sizeof *w);
    w->fd = -1;
    double now = wall_time();
    st = open_new_file(w, logdir, now);
    if (st == MF_OK) {
        MfPbuf b = mf_pb_new();
        event_head(&b, 0);
        mf_pb_string(&b, EV_FILE_VERSION, "brain.Event:2");
        st = write_event(w, &b, "create_file_writer");
    }
    if (st != MF_OK) {
        if (w->fd >= 0) {
            close(w->fd);
            remove(w->path);
        }
        free(w->failure);
        free(w->path);
        free(w);
        return st;
    }
    *out = w;
    return MF_OK;
}

const char *mf_event_writer_path(const MfEventWriter *w)
{
    return w->path;
}

MfStatus mf_event_step_of(const char *fname, const MfTensor *t, const char *what, int64_t *step)
{
    if (t && !t->node && mf_dtype_is_int(t->dtype) && mf_tensor_numel(t) == 1) {
        *step = mf_tensor_get_int(t, 0);
        return MF_OK;
    }
    return mf_err_set(MF_EARG, "%s: step must be an integer or a one-element integer tensor "
                      "(e.g. mf.train.global_step()), got %s", fname,
                      t ? (t->node ? "a symbolic tensor" : mf_dtype_name(t->dtype)) : what);
}

MfStatus mf_event_value_of(const MfTensor *t, const char *what, double *value)
{
    if (t && !t->node && mf_tensor_numel(t) == 1 && t->dtype != MF_BOOL) {
        *value = mf_tensor_get(t, 0);
        return MF_OK;
    }
    return mf_err_set(MF_EARG, "scalar: value must be a number or a one-element numeric tensor, "
                      "got %s", t ? (t->node ? "a symbolic tensor (sess:run it first)"
                                             : "a tensor of another size or dtype") : what);
}

MfStatus mf_event_scalar(MfEventWriter *w, const char *tag, double value, int64_t step)
{
    MfPbuf b = mf_pb_new();
    event_head(&b, step);
    size_t summary = mf_pb_begin(&b, EV_SUMMARY);
    size_t val = mf_pb_begin(&b, SUMMARY_VALUE);
    mf_pb_string(&b, VALUE_TAG, tag);
    mf_pb_float(&b, VALUE_SIMPLE, (float)value);
    mf_pb_end(&b, val);
    mf_pb_end(&b, summary);
    return write_event(w, &b, "scalar");
}

/* ---- histograms ------------------------------------------------------------ */

/* TensorFlow's default bucket limits: -DBL_MAX, the negatives of the
 * positive series reversed, 0, then 1e-12 * 1.1^k below 1e20, DBL_MAX. */
static int default_limits(double **out)
{
    int npos = 0;
    for (double v = 1e-12; v < 1e20; v *= 1.1)
        npos++;
    int n = 2 * (npos + 1) + 1;
    double *l = malloc((size_t)n * sizeof *l);
    if (!l)
        return -1;
    int i = 0;
    double v = 1e-12;
    double *pos = l + npos + 2;
    for (int k = 0; k < npos; k++, v *= 1.1)
        pos[k] = v;
    pos[npos] = DBL_MAX;
    l[i++] = -DBL_MAX;
    for (int k = npos - 1; k >= 0; k--)
        l[i++] = -pos[k];
    l[i] = 0.0;
    *out = l;
    return n;
}

/* The bucket of 'x': the first whose limit is greater than 'x'. */
static int bucket_of(const double *limits, int n, double x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (limits[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The HistogramProto of 't' into 'b'. Runs of empty buckets are written as
 * their last bucket only (as TensorFlow does), which keeps the lower edge
 * of the next bucket right. */
static MfStatus histogram_proto(MfPbuf *b, const char *tag, const MfTensor *t)
{
    double *limits;
    int n = default_limits(&limits);
    if (n < 0)
        return mf_err_nomem("histogram", 16000);
    double *counts = calloc((size_t)n, sizeof *counts);
    if (!counts) {
        free(limits);
        return mf_err_nomem("histogram", (unsigned long long)n * sizeof *counts);
    }
    int64_t numel = mf_tensor_numel(t);
    double mn = HUGE_VAL, mx = -HUGE_VAL, sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < numel; i++) {
        double x = mf_tensor_get(t, i);
        if (!isfinite(x)) {
            free(limits);
            free(counts);
            return mf_err_set(MF_EARG, "histogram: '%s' has a non-finite value (%g) at element "
                              "%lld (1-based, row-major)", tag, x, (long long)i + 1);
        }
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
        sum += x;
        sum_sq += x * x;
        counts[bucket_of(limits, n, x)] += 1;
    }
    double *kept_l = malloc((size_t)n * sizeof *kept_l);
    double *kept_c = malloc((size_t)n * sizeof *kept_c);
    int k = 0;
    for (int i = 0; kept_l && kept_c && i < n; i++) {
        if (counts[i] == 0 && i + 1 < n && counts[i + 1] == 0)
            continue;
        kept_l[k] = limits[i];
        kept_c[k++] = counts[i];
    }
    if (kept_l && kept_c) {
        mf_pb_double(b, HISTO_MIN, numel ? mn : 0);
        mf_pb_double(b, HISTO_MAX, numel ? mx : 0);
        mf_pb_double(b, HISTO_NUM, (double)numel);
        mf_pb_double(b, HISTO_SUM, sum);
        mf_pb_double(b, HISTO_SUM_SQUARES, sum_sq);
        mf_pb_packed_double(b, HISTO_LIMIT, kept_l, (size_t)k);
        mf_pb_packed_double(b, HISTO_BUCKET, kept_c, (size_t)k);
    }
    MfStatus st = kept_l && kept_c ? MF_OK : mf_err_nomem("histogram", (unsigned long long)n * 16);
    free(kept_l);
    free(kept_c);
    free(limits);
    free(counts);
    return st;
}

MfStatus mf_event_histogram(MfEventWriter *w, const char *tag, const MfTensor *t, int64_t step)
{
    if (t->node)
        return mf_err_set(MF_EARG, "histogram: '%s' is a symbolic (graph) tensor; pass its "
                          "value (sess:run it first)", tag);
    if (t->dtype == MF_BOOL)
        return mf_err_set(MF_EARG, "histogram: '%s' has dtype bool; a histogram needs numbers "
                          "(mf.cast it)", tag);
    MfPbuf b = mf_pb_new();
    event_head(&b, step);
    size_t summary = mf_pb_begin(&b, EV_SUMMARY);
    size_t val = mf_pb_begin(&b, SUMMARY_VALUE);
    mf_pb_string(&b, VALUE_TAG, tag);
    size_t histo = mf_pb_begin(&b, VALUE_HISTO);
    MfStatus st = histogram_proto(&b, tag, t);
    if (st != MF_OK) {
        mf_pb_free(&b);
        return st;
    }
    mf_pb_end(&b, histo);
    mf_pb_end(&b, val);
    mf_pb_end(&b, summary);
    return write_event(w, &b, "histogram");
}

MfStatus mf_event_graph(MfEventWriter *w, const void *graph_def, size_t n)
{
    MfPbuf b = mf_pb_new();
    event_head(&b, 0);
    mf_pb_bytes(&b, EV_GRAPH_DEF, graph_def, n);
    return write_event(w, &b, "graph");
}

MfStatus mf_event_flush(MfEventWriter *w)
{
    MfStatus st = check_usable(w, "flush");
    if (st == MF_OK && fsync(w->fd) != 0)
        st = mf_err_set(MF_EIO, "flush: cannot write '%s': %s", w->path, strerror(errno));
    return st;
}

MfStatus mf_event_writer_close(MfEventWriter *w)
{
    if (!w)
        return MF_OK;
    MfStatus st = MF_OK;
    if (w->fd >= 0 && close(w->fd) != 0 && !w->failure)
        st = mf_err_set(MF_EIO, "close: cannot write '%s': %s", w->path, strerror(errno));
    free(w->failure);
    free(w->path);
    free(w);
    return st;
}
