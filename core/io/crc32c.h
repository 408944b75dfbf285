/* crc32c.h — CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as
 * TFRecord files and iSCSI use it, and TFRecord's masked form.
 * Known value: mf_crc32c("123456789", 9) == 0xE3069283. */
#ifndef MF_CRC32C_H
#define MF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues 'crc' (0 to start) over 'n' bytes at 'p'. */
uint32_t mf_crc32c_extend(uint32_t crc, const void *p, size_t n);
uint32_t mf_crc32c(const void *p, size_t n);

/* TFRecord stores CRCs masked: rotated right by 15 bits plus a constant,
 * so a CRC computed over data that itself holds CRCs stays well-mixed. */
uint32_t mf_crc32c_mask(uint32_t crc);
uint32_t mf_crc32c_unmask(uint32_t masked);

#endif
