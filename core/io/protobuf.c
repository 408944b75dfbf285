/* protobuf.c — the protobuf wire-format encoder (see protobuf.h). */
#include <stdlib.h>
#include <string.h>

#include "protobuf.h"

MfPbuf mf_pb_new(void)
{
    return (MfPbuf){0};
}

void mf_pb_free(MfPbuf *b)
{
    free(b->data);
    *b = (MfPbuf){0};
}

MfStatus mf_pb_finish(const MfPbuf *b, const char *who)
{
    return b->failed ? mf_err_nomem(who, (unsigned long long)b->cap * 2) : MF_OK;
}

/* Room for 'n' more bytes; false (and failed) when it cannot grow. */
static bool reserve(MfPbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

/* Writes 'v' as a varint at 'p' (at least 10 bytes); returns its length. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void mf_pb_raw_varint(MfPbuf *b, uint64_t v)
{
    if (reserve(b, 10))
        b->len += put_varint(b->data + b->len, v);
}

void mf_pb_key(MfPbuf *b, int field, int wire_type)
{
    mf_pb_raw_varint(b, (uint64_t)field << 3 | (uint64_t)wire_type);
}

void mf_pb_raw(MfPbuf *b, const void *p, size_t n)
{
    if (n && reserve(b, n)) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

/* Little-endian bytes of 'v', whatever the host's order. */
static void raw_le(MfPbuf *b, uint64_t v, int nbytes)
{
    uint8_t p[8];
    for (int i = 0; i < nbytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    mf_pb_raw(b, p, (size_t)nbytes);
}

void mf_pb_uint(MfPbuf *b, int field, uint64_t v)
{
    mf_pb_key(b, field, MF_PB_VARINT);
    mf_pb_raw_varint(b, v);
}

void mf_pb_int(MfPbuf *b, int field, int64_t v)
{
    mf_pb_uint(b, field, (uint64_t)v);
}

void mf_pb_fixed32(MfPbuf *b, int field, uint32_t v)
{
    mf_pb_key(b, field, MF_PB_FIXED32);
    raw_le(b, v, 4);
}

void mf_pb_fixed64(MfPbuf *b, int field, uint64_t v)
{
    mf_pb_key(b, field, MF_PB_FIXED64);
    raw_le(b, v, 8);
}

static uint32_t float_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static uint64_t double_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

void mf_pb_float(MfPbuf *b, int field, float v)
{
    mf_pb_fixed32(b, field, float_bits(v));
}

void mf_pb_double(MfPbuf *b, int field, double v)
{
    mf_pb_fixed64(b, field, double_bits(v));
}

void mf_pb_bytes(MfPbuf *b, int field, const void *p, size_t n)
{
    mf_pb_key(b, field, MF_PB_LEN);
    mf_pb_raw_varint(b, n);
    mf_pb_raw(b, p, n);
}

void mf_pb_string(MfPbuf *b, int field, const char *s)
{
    mf_pb_bytes(b, field, s, strlen(s));
}

void mf_pb_packed_int(MfPbuf *b, int field, const int64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_len((uint64_t)v[i]);
    mf_pb_key(b, field, MF_PB_LEN);
    mf_pb_raw_varint(b, len);
    for (size_t i = 0; i < n; i++)
        mf_pb_raw_varint(b, (uint64_t)v[i]);
}

void mf_pb_packed_double(MfPbuf *b, int field, const double *v, size_t n)
{
    mf_pb_key(b, field, MF_PB_LEN);
    mf_pb_raw_varint(b, 8 * n);
    for (size_t i = 0; i < n; i++)
        raw_le(b, double_bits(v[i]), 8);
}

size_t mf_pb_begin(MfPbuf *b, int field)
{
    mf_pb_key(b, field, MF_PB_LEN);
    return b->len;
}

/* The message's bytes were written after the key; its length goes between:
 * the bytes move right by the length's own size. */
void mf_pb_end(MfPbuf *b, size_t mark)
{
    if (b->failed)
        return;
    size_t n = b->len - mark;
    size_t k = varint_len(n);
    if (!reserve(b, k))
        return;
    memmove(b->data + mark + k, b->data + mark, n);
    put_varint(b->data + mark, n);
    b->len += k;
}
