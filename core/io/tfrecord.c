/* tfrecord.c — TFRecord framing (see tfrecord.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "tfrecord.h"

/* A record larger than this is taken for a corrupt length, not allocated. */
#define MAX_RECORD ((uint64_t)1 << 34)

static void put_le(uint8_t *p, uint64_t v, int nbytes)
{
    for (int i = 0; i < nbytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int nbytes)
{
    uint64_t v = 0;
    for (int i = nbytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void mf_tfrecord_frame(MfPbuf *out, const void *data, size_t n)
{
    uint8_t head[12], tail[4];
    put_le(head, n, 8);
    put_le(head + 8, mf_crc32c_mask(mf_crc32c(head, 8)), 4);
    put_le(tail, mf_crc32c_mask(mf_crc32c(data, n)), 4);
    mf_pb_raw(out, head, sizeof head);
    mf_pb_raw(out, data, n);
    mf_pb_raw(out, tail, sizeof tail);
}

/* write(2) of all 'n' bytes (a signal or a partial write goes on); 0 or
 * the errno of the failure. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

MfStatus mf_tfrecord_write(int fd, const char *path, const void *data, size_t n)
{
    MfPbuf rec = mf_pb_new();
    mf_tfrecord_frame(&rec, data, n);
    MfStatus st = mf_pb_finish(&rec, "tfrecord");
    int err = st == MF_OK ? write_all(fd, rec.data, rec.len) : 0;
    if (err)
        st = mf_err_set(MF_EIO, "tfrecord: cannot write to '%s': %s", path, strerror(err));
    mf_pb_free(&rec);
    return st;
}

static MfStatus corrupt(const char *path, long offset, const char *what)
{
    return mf_err_set(MF_EIO, "tfrecord: '%s' is corrupt: the record at byte %ld %s", path,
                      offset, what);
}

MfStatus mf_tfrecord_read(FILE *f, const char *path, uint8_t **data, size_t *n, bool *eof)
{
    *data = NULL;
    *n = 0;
    *eof = false;
    long offset = ftell(f);
    uint8_t head[12], tail[4];
    size_t got = fread(head, 1, sizeof head, f);
    if (got == 0 && feof(f)) {
        *eof = true;
        return MF_OK;
    }
    if (got != sizeof head)
        return corrupt(path, offset, "has a truncated header");
    if (mf_crc32c_mask(mf_crc32c(head, 8)) != (uint32_t)get_le(head + 8, 4))
        return corrupt(path, offset, "fails its length CRC");
    uint64_t len = get_le(head, 8);
    if (len > MAX_RECORD)
        return corrupt(path, offset, "claims an implausible length");
    uint8_t *p = malloc(len ? (size_t)len : 1);
    if (!p)
        return mf_err_nomem("tfrecord", (unsigned long long)len);
    if (fread(p, 1, (size_t)len, f) != len || fread(tail, 1, sizeof tail, f) != sizeof tail) {
        free(p);
        return corrupt(path, offset, "is truncated");
    }
    if (mf_crc32c_mask(mf_crc32c(p, (size_t)len)) != (uint32_t)get_le(tail, 4)) {
        free(p);
        return corrupt(path, offset, "fails its data CRC");
    }
    *data = p;
    *n = (size_t)len;
    return MF_OK;
}
