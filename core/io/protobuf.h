/* protobuf.h — a small encoder of the protobuf wire format: varints,
 * fixed 32/64-bit values, length-delimited bytes and nested messages, and
 * packed repeated numbers. Enough to write ONNX models and TensorFlow's
 * Event / Summary / GraphDef messages without generated code: the writers
 * (graph/onnx.c, graph/graphdef.c, core/io/events.c) name the field numbers
 * of the .proto files they follow.
 *
 * Wire format: each field is a key (field_number << 3 | wire type) as a
 * varint, then the value: a varint (wire type 0), 8 little-endian bytes
 * (1), a varint length and that many bytes (2: strings, bytes, nested
 * messages, packed repeated numbers), or 4 little-endian bytes (5).
 *
 * An MfPbuf grows as needed. A failed allocation makes it sticky-failed:
 * later writes do nothing and mf_pb_finish reports MF_ENOMEM once, so a
 * writer checks at the end rather than after every field. */
#ifndef MF_PROTOBUF_H
#define MF_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../err.h"

enum { MF_PB_VARINT = 0, MF_PB_FIXED64 = 1, MF_PB_LEN = 2, MF_PB_FIXED32 = 5 };

typedef struct MfPbuf {
    uint8_t *data;   /* owned */
    size_t len, cap;
    bool failed;     /* an allocation failed: the contents are incomplete */
} MfPbuf;

/* An empty buffer (no allocation until the first write). */
MfPbuf mf_pb_new(void);
void mf_pb_free(MfPbuf *b);

/* MF_OK, or MF_ENOMEM with a message naming 'who' when a write failed. */
MfStatus mf_pb_finish(const MfPbuf *b, const char *who);

/* Raw pieces: a varint, a field key, raw bytes. */
void mf_pb_raw_varint(MfPbuf *b, uint64_t v);
void mf_pb_key(MfPbuf *b, int field, int wire_type);
void mf_pb_raw(MfPbuf *b, const void *p, size_t n);

/* One field each. Signed integers (int32, int64, enums) go as their 64-bit
 * two's complement, as protobuf's int32/int64 do (ten bytes when negative). */
void mf_pb_uint(MfPbuf *b, int field, uint64_t v);
void mf_pb_int(MfPbuf *b, int field, int64_t v);
void mf_pb_fixed32(MfPbuf *b, int field, uint32_t v);
void mf_pb_fixed64(MfPbuf *b, int field, uint64_t v);
void mf_pb_float(MfPbuf *b, int field, float v);
void mf_pb_double(MfPbuf *b, int field, double v);
void mf_pb_bytes(MfPbuf *b, int field, const void *p, size_t n);
void mf_pb_string(MfPbuf *b, int field, const char *s);

/* Packed repeated fields: one length-delimited field holding the values. */
void mf_pb_packed_int(MfPbuf *b, int field, const int64_t *v, size_t n);
void mf_pb_packed_double(MfPbuf *b, int field, const double *v, size_t n);

/* A nested message: 'begin' writes the key and returns a mark; the fields
 * written until 'end' form the message, whose length 'end' inserts before
 * them. Marks nest (end the inner message first). */
size_t mf_pb_begin(MfPbuf *b, int field);
void mf_pb_end(MfPbuf *b, size_t mark);

#endif
