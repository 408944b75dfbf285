/* fuzz_one.h — one input through one file reader, with the checks every
 * reader must pass. Shared by the libFuzzer programs (tests/fuzz/fuzz_*.c,
 * built by `make fuzz`) and the regression replay in `make test`
 * (tests/unit/test_fuzz_regress.c), so a saved crash input is replayed by
 * exactly the code that found it.
 *
 * The readers take a path, so the input is written to a per-process file
 * first. The first byte of the input chooses the reader's options (CSV:
 * header mode, dtype, column selection; IDX: plain or gzip-compressed); the
 * rest is the file. The includer defines FUZZ_FAIL(msg), which must not
 * return (abort() under libFuzzer, a cmocka failure in the replay). */
#ifndef MF_FUZZ_ONE_H
#define MF_FUZZ_ONE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/err.h"
#include "core/io/io.h"
#include "core/io/safetensors.h"
#include "core/tensor.h"

/* A file name private to this process (several fuzzers may run at once). */
static inline const char *fuzz_path(const char *what)
{
    static char buf[4][256];
    static int k;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char *p = buf[k++ & 3];
    snprintf(p, sizeof buf[0], "%s/mf-fuzz-%ld.%s", dir, (long)getpid(), what);
    return p;
}

static inline void fuzz_write(const char *path, const uint8_t *data, size_t size, int gzip)
{
    if (gzip) {
        gzFile g = gzopen(path, "wb");
        if (!g || (size && gzwrite(g, data, (unsigned)size) != (int)size) || gzclose(g) != Z_OK)
            FUZZ_FAIL("cannot write the gzip input file");
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        FUZZ_FAIL("cannot write the input file");
}

/* The contract of every reader: MF_OK with a tensor, or an error with no
 * tensor, a message that names the reader, and nothing left alive. */
static inline void fuzz_check(MfStatus st, int got_output, const char *prefix, int64_t live0)
{
    if (st == MF_OK && !got_output)
        FUZZ_FAIL("MF_OK but no output");
    if (st != MF_OK) {
        if (got_output)
            FUZZ_FAIL("an error but an output came back");
        if (strncmp(mf_err_msg(), prefix, strlen(prefix)) != 0) {
            fprintf(stderr, "message: %s\n", mf_err_msg());
            FUZZ_FAIL("the error message does not name the reader");
        }
        if (mf_tensor_live_count() != live0)
            FUZZ_FAIL("tensors left alive after an error");
    }
    mf_err_clear();
}

static inline void fuzz_one_csv(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    static const MfDType dts[4] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64};
    static const MfCsvColumn by_index[2] = {{1, NULL}, {0, NULL}};
    static const MfCsvColumn by_name[1] = {{0, "a"}};
    uint8_t o = data[0];
    MfCsvOptions opt = {.header = (int)(o % 3) - 1, .dtype = dts[(o >> 2) & 3]};
    if (o & 16) {
        opt.columns = by_index;
        opt.ncolumns = 2;
    } else if (o & 32) {
        opt.columns = by_name;
        opt.ncolumns = 1;
    }
    const char *path = fuzz_path("csv");
    fuzz_write(path, data + 1, size - 1, 0);
    int64_t live0 = mf_tensor_live_count();
    MfTensor *t = NULL;
    MfStatus st = mf_read_csv(path, &opt, &t);
    fuzz_check(st, t != NULL, "read_csv: ", live0);
    if (t && (t->rank != 2 || mf_tensor_numel(t) < 1))
        FUZZ_FAIL("read_csv returned a tensor that is not a non-empty matrix");
    if (t)
        mf_tensor_release(t);
    unlink(path);
}

static inline void fuzz_one_idx(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    const char *path = fuzz_path("idx");
    fuzz_write(path, data + 1, size - 1, data[0] & 1);
    int64_t live0 = mf_tensor_live_count();
    MfTensor *t = NULL;
    MfStatus st = mf_read_idx(path, &t);
    fuzz_check(st, t != NULL, "read_idx: ", live0);
    if (t)
        mf_tensor_release(t);
    unlink(path);
}

/* A file that loads must save and load back to the same names and values. */
static inline void fuzz_roundtrip(int n, char **names, MfTensor **ts)
{
    const char *path = fuzz_path("st2");
    if (mf_safetensors_write(path, n, (const char *const *)names, ts, NULL) != MF_OK)
        FUZZ_FAIL("a loaded checkpoint does not save again");
    int n2 = 0;
    char **names2 = NULL;
    MfTensor **ts2 = NULL;
    if (mf_safetensors_read(path, &n2, &names2, &ts2) != MF_OK || n2 != n)
        FUZZ_FAIL("a saved checkpoint does not load back");
    for (int i = 0; i < n; i++) {
        int64_t numel = mf_tensor_numel(ts[i]);
        if (strcmp(names[i], names2[i]) != 0 || ts2[i]->dtype != ts[i]->dtype ||
            mf_tensor_numel(ts2[i]) != numel)
            FUZZ_FAIL("names, dtypes or sizes changed in a save/load round trip");
        size_t bytes = (size_t)numel * mf_dtype_size(ts[i]->dtype);
        if (bytes && memcmp(mf_tensor_data(ts[i]), mf_tensor_data(ts2[i]), bytes) != 0)
            FUZZ_FAIL("values changed in a save/load round trip");
    }
    mf_safetensors_free(n2, names2, ts2);
    unlink(path);
}

static inline void fuzz_one_safetensors(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("st");
    fuzz_write(path, data, size, 0);
    int64_t live0 = mf_tensor_live_count();
    int n = -1;
    char **names = NULL;
    MfTensor **ts = NULL;
    MfStatus st = mf_safetensors_read(path, &n, &names, &ts);
    if (st != MF_OK && n != 0)
        FUZZ_FAIL("load failed but left a count set");
    fuzz_check(st, st == MF_OK || names || ts, "load: ", live0);
    if (st == MF_OK) {
        fuzz_roundtrip(n, names, ts);
        mf_safetensors_free(n, names, ts);
    }
    if (mf_tensor_live_count() != live0)
        FUZZ_FAIL("tensors left alive after load");
    unlink(path);
}

#endif
