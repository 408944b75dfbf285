/* safetensors.h — checkpoint files in the safetensors format.
 *
 * Layout: an 8-byte little-endian unsigned header length N, N bytes of JSON
 *   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
 *    "__metadata__": {"key": "value", ...}}          (metadata optional)
 * then the raw little-endian row-major data; offsets are relative to the
 * start of the data section, and the tensors tile it with no gap, overlap or
 * trailing byte. dtypes: F32, F64, F16, BF16, I32, I64, U8, BOOL (one byte, 0
 * or 1) map to float32, float64, float16, bfloat16, int32, int64, uint8,
 * bool; other safetensors dtypes (F8_*, I8, I16, U16, ...) are refused on
 * reading with a message naming the tensor.
 *
 * The header is built and parsed with cJSON. Writing sorts the names (the
 * same tensors always give the same bytes) and pads the header with spaces
 * to a multiple of 8 bytes, as the reference implementation does.
 *
 * Writes go through the one safe path of core/io/write_file.h (a unique
 * temporary file, fsync, rename; a target that is not a regular file is
 * refused): on any failure an existing file at 'path' is left as it was.
 * A header over 100 MiB (the reference reader's limit, which load keeps)
 * is refused on writing too, so every file save writes can be loaded.
 *
 * Errors: MF_EIO for files (cannot open, short, corrupt: every message starts
 * with "save: " or "load: ", names the file and says what is wrong), MF_EARG
 * for bad arguments, MF_EDTYPE for an unsupported dtype in a file, MF_ENOMEM. */
#ifndef MF_IO_SAFETENSORS_H
#define MF_IO_SAFETENSORS_H

#include "core/err.h"
#include "core/tensor.h"

/* Writes 'n' tensors named 'names[i]' to 'path'. Names must be distinct,
 * non-empty and not "__metadata__"; tensors must hold data (not graph
 * symbolic tensors); strided views are written in row-major order. The
 * tensors and names are borrowed. 'metadata' is NULL or a NULL-terminated
 * array of alternating key and value strings ({"step", "10", NULL}) stored
 * as the header's "__metadata__". Returns MF_OK or an error (see above). */
MfStatus mf_safetensors_write(const char *path, int n, const char *const *names,
                              MfTensor *const *tensors, const char *const *metadata);

/* Reads every tensor of 'path'. On MF_OK, '*n' is the count and '*names' /
 * '*tensors' are new arrays (sorted by name) the caller owns: free them all
 * with mf_safetensors_free. On failure nothing is allocated and the outputs
 * are set to 0 / NULL. */
MfStatus mf_safetensors_read(const char *path, int *n, char ***names, MfTensor ***tensors);

/* mf_safetensors_read that also returns the "__metadata__" entries in
 * '*metadata': a NULL-terminated array of alternating key and value strings
 * (sorted by key; just {NULL} when the file has none), owned by the caller
 * and freed with mf_safetensors_free_metadata. 'metadata' may be NULL. */
MfStatus mf_safetensors_read_meta(const char *path, int *n, char ***names, MfTensor ***tensors,
                                  char ***metadata);

/* Releases what mf_safetensors_read returned (each tensor, each name, both
 * arrays). NULL arrays are fine. */
void mf_safetensors_free(int n, char **names, MfTensor **tensors);

/* Frees a metadata array from mf_safetensors_read_meta (NULL is fine). */
void mf_safetensors_free_metadata(char **metadata);

/* The test hook mf_ckpt_fail_after_write (a failure right before the
 * rename) is write_file.h's. */
#include "core/io/write_file.h"

#endif
