/* tfrecord.h — TFRecord framing, the container of TensorFlow's event
 * files: each record is
 *     uint64 length, little-endian
 *     uint32 masked CRC-32C of those 8 length bytes
 *     the data (length bytes)
 *     uint32 masked CRC-32C of the data
 * (crc32c.h). A reader that checks both CRCs detects any corrupted byte
 * (a torn or flipped length as well as flipped data). */
#ifndef MF_TFRECORD_H
#define MF_TFRECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../err.h"
#include "protobuf.h"

/* Appends the framed record of the 'n' bytes at 'data' to 'out'. */
void mf_tfrecord_frame(MfPbuf *out, const void *data, size_t n);

/* Writes one record to the file descriptor 'fd' with write(2) (no stdio
 * buffer: nothing of a failed record is written later), so a crash of the
 * process loses nothing written before. Fails with MF_EIO naming 'path';
 * part of the record may then be in the file (the caller cuts it off). */
MfStatus mf_tfrecord_write(int fd, const char *path, const void *data, size_t n);

/* Reads the next record of 'f': on MF_OK either '*eof' (a clean end of
 * file) or '*data' (malloc'd, the caller frees) with '*n' bytes. A short
 * header or body, or a CRC that does not match, fails with MF_EIO naming
 * 'path' and the record's byte offset. */
MfStatus mf_tfrecord_read(FILE *f, const char *path, uint8_t **data, size_t *n, bool *eof);

#endif
