/* io.h — reading data files into tensors: CSV text (csv.c) and the MNIST
 * IDX binary format, plain or gzip-compressed (idx.c).
 *
 * Both readers load the whole file in C and return one new contiguous
 * tensor. Errors are reported as the Lua user sees them ("read_csv: ...",
 * "read_idx: ...") with the path, and for CSV the 1-based line and column.
 * On failure '*out' is NULL, nothing is left allocated and a message is
 * pending (err.h). */
#ifndef MF_IO_H
#define MF_IO_H

#include <stdint.h>

#include "../err.h"
#include "../tensor.h"

/* One selected CSV column: by its number as a user counts it (1-based, as
 * given: mf_read_csv checks its range), or by header name when 'name' is not
 * NULL. */
typedef struct MfCsvColumn {
    int64_t number;
    const char *name;
} MfCsvColumn;

/* Options of mf_read_csv. 'header': 1 the first non-blank line names the
 * columns, 0 it is data, -1 decide: it is a header when one of the selected
 * fields of that line is not a number (always a header when a column is
 * selected by name). 'columns' NULL (or 'ncolumns' 0) selects every column,
 * in file order. 'dtype': float32, float64, int32 or int64. */
typedef struct MfCsvOptions {
    int header;
    const MfCsvColumn *columns;
    int ncolumns;
    MfDType dtype;
} MfCsvOptions;

/* Reads the comma-separated file at 'path' into a 2-D tensor (rows x
 * selected columns) of opt->dtype. Blank lines are skipped; a field may be
 * double-quoted ("" is a quote inside); spaces around a number are ignored;
 * "nan" and "inf" parse as floats. Every row must have as many fields as
 * the first one. Errors: MF_EIO (cannot open or read), MF_EARG (empty file,
 * no data rows, malformed number, ragged row, bad column selection, dtype),
 * MF_ENOMEM. '*out' is owned on success. */
MfStatus mf_read_csv(const char *path, const MfCsvOptions *opt, MfTensor **out);

/* Reads the IDX file at 'path' (gzip-compressed or plain: zlib detects it).
 * Header: two zero bytes, a type code, the number of dims, then each dim as
 * a big-endian 32-bit integer; the data follow, big-endian, and must fill
 * the dims exactly. Types: 0x08 unsigned byte gives uint8 (MNIST's pixels
 * and labels, as stored); 0x09 signed byte, 0x0B
 * 16-bit and 0x0C 32-bit integers give int32 tensors; 0x0D float32 and
 * 0x0E float64 give float tensors. Errors: MF_EIO (cannot open or read,
 * corrupt gzip), MF_EARG (bad magic, type code or rank, truncated data,
 * trailing bytes), MF_ENOMEM. '*out' is owned on success. */
MfStatus mf_read_idx(const char *path, MfTensor **out);

#endif
