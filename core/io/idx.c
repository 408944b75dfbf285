/* idx.c — mf_read_idx: the IDX format of the MNIST files, plain or gzip.
 *
 * zlib's gzread reads gzip streams and passes plain files through, so one
 * path serves both. The header is checked field by field, the data must
 * fill the dims exactly (a short file and trailing bytes are both errors),
 * and the big-endian values are converted to the host's order in C. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io.h"

#define FN "read_idx"

typedef struct Idx {
    const char *path;
    gzFile gz;
    int type;                 /* the type code: 0x08 .. 0x0E */
    int rank;
    int64_t shape[MF_MAX_RANK];
    size_t esize;             /* bytes per element in the file */
} Idx;

/* Reads up to 'n' bytes; '*got' says how many came. Fails on read errors
 * and corrupt gzip data (not on a short file). */
static MfStatus read_some(Idx *x, void *buf, size_t n, size_t *got)
{
    *got = 0;
    while (*got < n) {
        size_t chunk = n - *got > (1u << 30) ? (1u << 30) : n - *got;
        int k = gzread(x->gz, (char *)buf + *got, (unsigned)chunk);
        if (k < 0) {
            int code;
            const char *msg = gzerror(x->gz, &code);
            return mf_err_set(MF_EIO, FN ": cannot read '%s': %s", x->path,
                              code == Z_ERRNO ? strerror(errno) : msg);
        }
        if (k == 0)
            break;
        *got += (size_t)k;
    }
    return MF_OK;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static MfDType type_dtype(int type, size_t *esize)
{
    switch (type) {
    case 0x08: *esize = 1; return MF_UINT8;   /* images: the bytes as they are */
    case 0x09: *esize = 1; return MF_INT32;
    case 0x0B: *esize = 2; return MF_INT32;
    case 0x0C: *esize = 4; return MF_INT32;
    case 0x0D: *esize = 4; return MF_FLOAT32;
    case 0x0E: *esize = 8; return MF_FLOAT64;
    default: *esize = 0; return MF_NDTYPES;
    }
}

/* Reads and checks the magic number and the dims. */
static MfStatus read_header(Idx *x, MfDType *dt)
{
    unsigned char h[4 + 4 * MF_MAX_RANK];
    size_t got;
    MfStatus st = read_some(x, h, 4, &got);
    if (st != MF_OK)
        return st;
    if (got < 4)
        return mf_err_set(MF_EARG, FN ": '%s' is %s: an IDX file starts with a 4-byte magic "
                          "number", x->path, got == 0 ? "empty" : "too short");
    if (h[0] != 0 || h[1] != 0)
        return mf_err_set(MF_EARG, FN ": '%s' is not an IDX file: magic number 0x%02x%02x%02x%02x"
                          " does not start with two zero bytes (MNIST images have 0x00000803)",
                          x->path, h[0], h[1], h[2], h[3]);
    x->type = h[2];
    if ((*dt = type_dtype(x->type, &x->esize)) == MF_NDTYPES)
        return mf_err_set(MF_EARG, FN ": '%s': unknown IDX type code 0x%02x (expected 0x08, "
                          "0x09, 0x0B, 0x0C, 0x0D or 0x0E)", x->path, x->type);
    x->rank = h[3];
    if (x->rank < 1 || x->rank > MF_MAX_RANK)
        return mf_err_set(MF_EARG, FN ": '%s': %d dimensions in the header (expected 1..%d)",
                          x->path, x->rank, MF_MAX_RANK);
    if ((st = read_some(x, h + 4, 4 * (size_t)x->rank, &got)) != MF_OK)
        return st;
    if (got < 4 * (size_t)x->rank)
        return mf_err_set(MF_EARG, FN ": '%s' is truncated: the header ends inside its %d "
                          "dimensions", x->path, x->rank);
    for (int d = 0; d < x->rank; d++)
        x->shape[d] = be32(h + 4 + 4 * d);
    return MF_OK;
}

/* Converts 'n' big-endian elements of the file's type at 'raw' into 'out'. */
static void convert(const Idx *x, const unsigned char *raw, int64_t n, void *out)
{
    int32_t *o32 = out;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *p = raw + (size_t)i * x->esize;
        switch (x->type) {
        case 0x08: ((uint8_t *)out)[i] = p[0]; break;
        case 0x09: o32[i] = (int8_t)p[0]; break;
        case 0x0B: o32[i] = (int16_t)(uint16_t)(p[0] << 8 | p[1]); break;
        case 0x0C: o32[i] = (int32_t)be32(p); break;
        case 0x0D: {
            uint32_t u = be32(p);
            memcpy((float *)out + i, &u, 4);
            break;
        }
        default: {
            uint64_t u = (uint64_t)be32(p) << 32 | be32(p + 4);
            memcpy((double *)out + i, &u, 8);
            break;
        }
        }
    }
}

/* Checks the header's dims against the size cap; '*n' is their element count. */
static MfStatus check_dims(const Idx *x, int64_t *n)
{
    int64_t limit = MF_MAX_TENSOR_BYTES / 8;
    bool empty = false, too_large = false;
    *n = 1;
    for (int d = 0; d < x->rank; d++) {
        empty = empty || x->shape[d] == 0;
        too_large = too_large || (x->shape[d] > 0 && *n > limit / x->shape[d]);
        *n = too_large ? *n : *n * x->shape[d];
    }
    if (empty)
        *n = 0;
    if (too_large && !empty) {
        char dims[64];
        return mf_err_set(MF_EARG, FN ": '%s': dims %s in the header are too large", x->path,
                          mf_shape_str(x->rank, x->shape, dims, sizeof dims));
    }
    return MF_OK;
}

/* Reads the data section (at most 'need' + 1 bytes, to see a trailing byte)
 * into '*raw', a buffer that grows as bytes arrive: a short file whose header
 * claims gigabytes fails as truncated instead of allocating them first (the
 * gzip case cannot know the size in advance). '*raw' is malloc'ed on MF_OK. */
static MfStatus read_payload(Idx *x, size_t need, unsigned char **raw, size_t *got)
{
    size_t want = need + 1, cap = want < (1u << 20) ? want : (1u << 20);
    *raw = NULL;
    *got = 0;
    for (;;) {
        unsigned char *bigger = realloc(*raw, cap);
        size_t k = 0;
        MfStatus st = bigger ? read_some(x, bigger + *got, cap - *got, &k)
                             : mf_err_nomem(FN, (unsigned long long)cap);
        if (st != MF_OK) {
            free(bigger ? bigger : *raw);
            *raw = NULL;
            return st;
        }
        *raw = bigger;
        *got += k;
        if (*got < cap || cap == want)
            return MF_OK;
        cap = cap > want / 2 ? want : cap * 2;
    }
}

/* Reads exactly the data bytes the dims need into a new tensor '*out'. */
static MfStatus read_data(Idx *x, MfDType dt, MfTensor **out)
{
    char dims[64];
    int64_t n;
    MfStatus st = check_dims(x, &n);
    if (st != MF_OK)
        return st;
    size_t need = (size_t)n * x->esize, got;
    unsigned char *raw;
    if ((st = read_payload(x, need, &raw, &got)) != MF_OK)
        return st;
    mf_shape_str(x->rank, x->shape, dims, sizeof dims);
    if (got < need)
        st = mf_err_set(MF_EARG, FN ": '%s' is truncated: dims %s need %zu data bytes, the file "
                        "has %zu", x->path, dims, need, got);
    else if (got > need)
        st = mf_err_set(MF_EARG, FN ": '%s' has trailing bytes after the %zu data bytes that "
                        "dims %s need", x->path, need, dims);
    else if (!(*out = mf_tensor_new(dt, x->rank, x->shape))) {
        mf_err_prefix(FN ": '%s'", x->path);   /* e.g. dims like (2^32, 2^32, 0) */
        st = MF_ENOMEM;
    }
    if (st == MF_OK)
        convert(x, raw, n, mf_tensor_data(*out));
    free(raw);
    return st;
}

MfStatus mf_read_idx(const char *path, MfTensor **out)
{
    *out = NULL;
    Idx x = {.path = path};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return mf_err_set(MF_EIO, FN ": cannot open '%s': %s", path, strerror(errno));
    if (!(x.gz = gzdopen(fd, "rb"))) {
        close(fd);
        return mf_err_nomem(FN, 1u << 16);
    }
    gzbuffer(x.gz, 1u << 17);
    MfDType dt = MF_NDTYPES;
    MfStatus st = read_header(&x, &dt);
    if (st == MF_OK)
        st = read_data(&x, dt, out);
    gzclose(x.gz);
    return st;
}
