/* crc32c.c — CRC-32C with a byte-at-a-time table (see crc32c.h). Event
 * files are small; a table is plenty fast and has no CPU dependence. */
#include <pthread.h>

#include "crc32c.h"

#define POLY 0x82F63B78u
#define MASK_DELTA 0xa282ead8u

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[i] = c;
    }
}

uint32_t mf_crc32c_extend(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&table_once, make_table);
    const uint8_t *s = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t mf_crc32c(const void *p, size_t n)
{
    return mf_crc32c_extend(0, p, n);
}

uint32_t mf_crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + MASK_DELTA;
}

uint32_t mf_crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - MASK_DELTA;
    return (rot >> 17) | (rot << 15);
}
