/* test_protobuf.c — the plain encoders of core/io: protobuf wire format
 * (vectors from the protobuf encoding guide), CRC-32C (RFC 3720's iSCSI
 * vectors and the check value of "123456789"), masked CRCs and TFRecord
 * framing, whose reader must reject any flipped byte. */
#include <stdlib.h>

#include "core/io/crc32c.h"
#include "core/io/protobuf.h"
#include "core/io/tfrecord.h"
#include "testutil.h"

static void assert_bytes(const MfPbuf *b, const uint8_t *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

static void test_varints(void **state)
{
    (void)state;
    MfPbuf b = mf_pb_new();
    mf_pb_raw_varint(&b, 300);
    assert_bytes(&b, (const uint8_t[]){0xAC, 0x02}, 2);
    mf_pb_free(&b);
    mf_pb_uint(&b, 1, 150);   /* the guide's Test1 message */
    assert_bytes(&b, (const uint8_t[]){0x08, 0x96, 0x01}, 3);
    mf_pb_free(&b);
    mf_pb_int(&b, 1, -1);     /* int64 -1: ten bytes */
    assert_bytes(&b, (const uint8_t[]){0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                       0xFF, 0x01}, 11);
    mf_pb_free(&b);
    mf_pb_raw_varint(&b, UINT64_MAX);
    assert_int_equal(b.len, 10);
    assert_int_equal(b.data[9], 0x01);
    mf_pb_free(&b);
}

static void test_length_delimited(void **state)
{
    (void)state;
    MfPbuf b = mf_pb_new();
    mf_pb_string(&b, 2, "testing");
    assert_bytes(&b, (const uint8_t[]){0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}, 9);
    mf_pb_free(&b);
    /* Test3 { Test1 c = 3; } with a = 150: 1a 03 08 96 01 */
    size_t m = mf_pb_begin(&b, 3);
    mf_pb_uint(&b, 1, 150);
    mf_pb_end(&b, m);
    assert_bytes(&b, (const uint8_t[]){0x1A, 0x03, 0x08, 0x96, 0x01}, 5);
    mf_pb_free(&b);
    /* packed repeated int32 d = 4: [3, 270, 86942] */
    mf_pb_packed_int(&b, 4, (const int64_t[]){3, 270, 86942}, 3);
    assert_bytes(&b, (const uint8_t[]){0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05}, 8);
    mf_pb_free(&b);
}

/* A nested message longer than 127 bytes needs a two-byte length, so the
 * contents move right by two. */
static void test_nested_long(void **state)
{
    (void)state;
    MfPbuf b = mf_pb_new();
    uint8_t blob[200];
    for (int i = 0; i < 200; i++)
        blob[i] = (uint8_t)i;
    size_t outer = mf_pb_begin(&b, 1);
    size_t inner = mf_pb_begin(&b, 2);
    mf_pb_bytes(&b, 3, blob, sizeof blob);
    mf_pb_end(&b, inner);
    mf_pb_end(&b, outer);
    /* inner: key 0x1A, len 200 (C8 01), 200 bytes = 203; middle: key 0x12,
     * len 203 (CB 01) = 206; outer: key 0x0A, len 206 (CE 01) */
    assert_false(b.failed);
    assert_int_equal(b.len, 209);
    const uint8_t head[] = {0x0A, 0xCE, 0x01, 0x12, 0xCB, 0x01, 0x1A, 0xC8, 0x01};
    assert_memory_equal(b.data, head, sizeof head);
    assert_memory_equal(b.data + 9, blob, sizeof blob);
    mf_pb_free(&b);
}

static void test_fixed(void **state)
{
    (void)state;
    MfPbuf b = mf_pb_new();
    mf_pb_float(&b, 2, 1.0f);    /* 0x3F800000, little-endian */
    mf_pb_double(&b, 1, -2.0);   /* 0xC000000000000000 */
    assert_bytes(&b, (const uint8_t[]){0x15, 0x00, 0x00, 0x80, 0x3F, 0x09, 0, 0, 0, 0, 0, 0, 0,
                                       0xC0}, 14);
    mf_pb_free(&b);
    mf_pb_packed_double(&b, 6, (const double[]){1.0, 0.5}, 2);
    assert_bytes(&b, (const uint8_t[]){0x32, 0x10, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 0, 0, 0, 0,
                                       0, 0xE0, 0x3F}, 18);
    mf_pb_free(&b);
}

static void test_crc32c_vectors(void **state)
{
    (void)state;
    assert_int_equal(mf_crc32c("123456789", 9), 0xE3069283u);
    uint8_t buf[32];
    memset(buf, 0, sizeof buf);
    assert_int_equal(mf_crc32c(buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, sizeof buf);
    assert_int_equal(mf_crc32c(buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    assert_int_equal(mf_crc32c(buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    assert_int_equal(mf_crc32c(buf, 32), 0x113FDB5Cu);
    assert_int_equal(mf_crc32c("", 0), 0);
    /* extending in pieces gives the same CRC */
    assert_int_equal(mf_crc32c_extend(mf_crc32c("1234", 4), "56789", 5), 0xE3069283u);
}

static void test_masked_crc(void **state)
{
    (void)state;
    uint32_t crc = 0xE3069283u;
    uint32_t masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
    assert_int_equal(mf_crc32c_mask(crc), masked);
    assert_int_equal(mf_crc32c_unmask(masked), crc);
    assert_int_not_equal(mf_crc32c_mask(crc), crc);
}

/* The framing of "hello": length 5 as 8 bytes, its masked CRC, the data,
 * the data's masked CRC. */
static void test_tfrecord_frame(void **state)
{
    (void)state;
    MfPbuf b = mf_pb_new();
    mf_tfrecord_frame(&b, "hello", 5);
    assert_false(b.failed);
    assert_int_equal(b.len, 8 + 4 + 5 + 4);
    const uint8_t len[8] = {5, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(b.data, len, 8);
    uint32_t lc = mf_crc32c_mask(mf_crc32c(len, 8));
    assert_int_equal(b.data[8] | b.data[9] << 8 | b.data[10] << 16 | (uint32_t)b.data[11] << 24,
                     lc);
    assert_memory_equal(b.data + 12, "hello", 5);
    uint32_t dc = mf_crc32c_mask(mf_crc32c("hello", 5));
    assert_int_equal(b.data[17] | b.data[18] << 8 | b.data[19] << 16 | (uint32_t)b.data[20] << 24,
                     dc);
    mf_pb_free(&b);
}

/* Reads every record of the file 'f'; returns the count or -1 at an error. */
static int read_all(FILE *f)
{
    rewind(f);
    int n = 0;
    for (;;) {
        uint8_t *data;
        size_t len;
        bool eof;
        if (mf_tfrecord_read(f, "test", &data, &len, &eof) != MF_OK)
            return -1;
        if (eof)
            return n;
        free(data);
        n++;
    }
}

/* Two records round-trip; flipping any single byte of the file (or
 * cutting it short) makes the reader fail with a message. */
static void test_tfrecord_corruption(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(mf_tfrecord_write(fileno(f), "test", "first record", 12), MF_OK);
    assert_int_equal(mf_tfrecord_write(fileno(f), "test", "second", 6), MF_OK);
    assert_int_equal(read_all(f), 2);
    long size = ftell(f);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    assert_int_equal(size, 2 * 16 + 12 + 6);
    for (long i = 0; i < size; i++) {
        fseek(f, i, SEEK_SET);
        int c = fgetc(f);
        fseek(f, i, SEEK_SET);
        fputc(c ^ 0x01, f);
        fflush(f);
        mf_err_clear();
        assert_int_equal(read_all(f), -1);
        assert_non_null(strstr(mf_err_msg(), "corrupt"));
        fseek(f, i, SEEK_SET);
        fputc(c, f);
        fflush(f);
    }
    mf_err_clear();
    assert_int_equal(read_all(f), 2);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_varints),        TEST(test_length_delimited), TEST(test_nested_long),
        TEST(test_fixed),          TEST(test_crc32c_vectors),   TEST(test_masked_crc),
        TEST(test_tfrecord_frame), TEST(test_tfrecord_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
