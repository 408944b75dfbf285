/* safetensors.c — reading and writing safetensors checkpoint files (see
 * safetensors.h for the format, the atomic write and the errors).
 *
 * Writing: check the arguments, sort by name, take contiguous copies of
 * strided views, build the header with cJSON (at most MAX_HEADER bytes, as
 * reading requires), write it through write_file.h's safe path. Reading: the 8-byte length, the header
 * (parsed by cJSON, then every field checked), the layout (tensors tile the
 * data section exactly), then the data straight into new tensors. */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c writes tensors as they lie in memory: big-endian hosts need byte swaps"
#endif

#define MAX_HEADER ((uint64_t)100 << 20) /* the reference implementation's limit */
#define MAX_JSON_INT ((double)((uint64_t)1 << 53))
#define ULL(x) ((unsigned long long)(x))

static const char *const tags[] = {
    [MF_FLOAT32] = "F32", [MF_FLOAT64] = "F64", [MF_INT32] = "I32",
    [MF_INT64] = "I64",   [MF_BOOL] = "BOOL", [MF_UINT8] = "U8",
    [MF_FLOAT16] = "F16", [MF_BFLOAT16] = "BF16",
};
_Static_assert(MF_COUNTOF(tags) == MF_NDTYPES, "one safetensors tag per MfDType");

/* Records "VERB: <message> (in 'PATH')" and returns 'code'. */
static MfStatus fail(MfStatus code, const char *verb, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static MfStatus fail(MfStatus code, const char *verb, const char *path, const char *fmt, ...)
{
    char text[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return mf_err_set(code, "%s: %s (in '%s')", verb, text, path);
}

static char *dup_string(const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = malloc(len);
    if (d)
        memcpy(d, s, len);
    return d;
}

/* ---- writing -------------------------------------------------------------- */

typedef struct Named {
    const char *name;
    int index;    /* into the caller's arrays */
    size_t align; /* element size (tensors) */
} Named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const Named *)a)->name, ((const Named *)b)->name);
}

/* The data order: larger elements first (so every tensor is aligned to its
 * element size, as the reference writer does), then by name. */
static int cmp_layout(const void *a, const void *b)
{
    const Named *x = a, *y = b;
    if (x->align != y->align)
        return x->align > y->align ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Checks names and tensors; fills 'order' with them sorted by name. */
static MfStatus check_tensors(const char *path, int n, const char *const *names,
                              MfTensor *const *tensors, Named *order)
{
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0])
            return fail(MF_EARG, "save", path, "tensor %d has no name (names are non-empty "
                        "strings)", i + 1);
        if (strcmp(names[i], "__metadata__") == 0)
            return fail(MF_EARG, "save", path, "the name '__metadata__' is reserved for the "
                        "header's metadata");
        if (!tensors[i])
            return fail(MF_EARG, "save", path, "tensor '%s' is missing (NULL)", names[i]);
        if (!tensors[i]->storage)
            return fail(MF_EARG, "save", path, "'%s' is a graph (symbolic) tensor without a "
                        "value; run it in a Session and save the result", names[i]);
        order[i] = (Named){names[i], i, mf_dtype_size(tensors[i]->dtype)};
    }
    qsort(order, (size_t)n, sizeof *order, cmp_named);
    for (int i = 1; i < n; i++)
        if (strcmp(order[i - 1].name, order[i].name) == 0)
            return fail(MF_EARG, "save", path, "the name '%s' is given twice; names must be "
                        "unique", order[i].name);
    return MF_OK;
}

/* Checks the key/value list and fills 'order' (k entries) sorted by key. */
static MfStatus check_metadata(const char *path, const char *const *meta, Named *order, int *k)
{
    *k = 0;
    for (int i = 0; meta && meta[i]; i += 2) {
        if (!meta[i + 1])
            return fail(MF_EARG, "save", path, "metadata key '%s' has no value (the list "
                        "alternates keys and values and ends with NULL)", meta[i]);
        order[(*k)++] = (Named){meta[i], i, 0};
    }
    qsort(order, (size_t)*k, sizeof *order, cmp_named);
    for (int i = 1; i < *k; i++)
        if (strcmp(order[i - 1].name, order[i].name) == 0)
            return fail(MF_EARG, "save", path, "metadata key '%s' is given twice",
                        order[i].name);
    return MF_OK;
}

static int count_metadata(const char *const *meta)
{
    int k = 0;
    while (meta && meta[k] && meta[k + 1])
        k += 2;
    return k / 2 + 1;
}

/* Appends 'v' to a JSON array as an exact integer literal. */
static bool add_uint(cJSON *array, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", ULL(v));
    cJSON *item = cJSON_CreateRaw(buf);
    if (item && cJSON_AddItemToArray(array, item))
        return true;
    cJSON_Delete(item);
    return false;
}

static bool add_entry(cJSON *root, const char *name, const MfTensor *t, uint64_t begin,
                      uint64_t end)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToObject(root, name, e)) {
        cJSON_Delete(e);
        return false;
    }
    bool ok = cJSON_AddStringToObject(e, "dtype", tags[t->dtype]) != NULL;
    cJSON *shape = ok ? cJSON_AddArrayToObject(e, "shape") : NULL;
    ok = shape != NULL;
    for (int d = 0; ok && d < t->rank; d++)
        ok = add_uint(shape, (uint64_t)t->shape[d]);
    cJSON *offsets = ok ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
    return offsets && add_uint(offsets, begin) && add_uint(offsets, end);
}

static uint64_t tensor_bytes(const MfTensor *t)
{
    return (uint64_t)mf_tensor_numel(t) * mf_dtype_size(t->dtype);
}

/* Fills 'layout' (the tensors in data order) and 'begins' (each tensor's
 * data offset, by the caller's index). */
static void plan_layout(int n, const Named *order, MfTensor *const *contig, Named *layout,
                        uint64_t *begins)
{
    memcpy(layout, order, sizeof *layout * (size_t)n);
    qsort(layout, (size_t)n, sizeof *layout, cmp_layout);
    uint64_t offset = 0;
    for (int i = 0; i < n; i++) {
        begins[layout[i].index] = offset;
        offset += tensor_bytes(contig[layout[i].index]);
    }
}

/* The header JSON (keys sorted by name), padded with spaces to a multiple of
 * 8 bytes (malloc'ed). */
static char *build_header(int n, const Named *order, MfTensor *const *contig,
                          const uint64_t *begins, const char *const *meta, const Named *keys,
                          int k, size_t *len)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    if (ok && k > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        ok = m != NULL;
        for (int i = 0; ok && i < k; i++)
            ok = cJSON_AddStringToObject(m, keys[i].name, meta[keys[i].index + 1]) != NULL;
    }
    for (int i = 0; ok && i < n; i++) {
        int j = order[i].index;
        uint64_t end = begins[j] + tensor_bytes(contig[j]);
        ok = add_entry(root, order[i].name, contig[j], begins[j], end);
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json)
        return NULL;
    size_t raw = strlen(json), padded = (raw + 7) & ~(size_t)7;
    char *buf = malloc(padded + 1);
    if (buf) {
        memcpy(buf, json, raw);
        memset(buf + raw, ' ', padded - raw);
        buf[padded] = '\0';
        *len = padded;
    }
    cJSON_free(json);
    return buf;
}

/* Writes the file through the one safe path (write_file.h): the 8-byte
 * header length, the header, then each tensor's bytes in layout order. */
static MfStatus commit(const char *path, const char *header, size_t hlen, int n,
                       const Named *layout, MfTensor *const *contig)
{
    MfSafeWrite w;
    MfStatus st = mf_safe_write_begin(&w, "save", path);
    if (st != MF_OK)
        return st;
    unsigned char len8[8];
    for (int b = 0; b < 8; b++)
        len8[b] = (unsigned char)((uint64_t)hlen >> (8 * b));
    bool ok = fwrite(len8, 1, 8, w.f) == 8 && fwrite(header, 1, hlen, w.f) == hlen;
    for (int i = 0; ok && i < n; i++) {
        const MfTensor *t = contig[layout[i].index];
        size_t nb = (size_t)tensor_bytes(t);
        ok = nb == 0 || fwrite(mf_tensor_data(t), 1, nb, w.f) == nb;
    }
    return mf_safe_write_commit(&w);   /* reports a failed fwrite (the FILE's error flag) */
}

/* Contiguous references to every tensor (the tensor itself when it is). */
static MfStatus make_contiguous(const char *path, int n, MfTensor *const *tensors,
                                MfTensor **contig)
{
    for (int i = 0; i < n; i++) {
        contig[i] = mf_tensor_contiguous(tensors[i]);
        if (!contig[i]) {
            mf_err_prefix("save: '%s'", path);
            return MF_ENOMEM;
        }
    }
    return MF_OK;
}

MfStatus mf_safetensors_write(const char *path, int n, const char *const *names,
                              MfTensor *const *tensors, const char *const *metadata)
{
    if (!path || !path[0])
        return mf_err_set(MF_EARG, "save: expected a path, got %s",
                          path ? "an empty string" : "none");
    if (n < 0 || (n > 0 && (!names || !tensors)))
        return mf_err_set(MF_EARG, "save: expected %d names and tensors", n);
    int nkeys = count_metadata(metadata), k = 0;
    Named *order = malloc(sizeof(Named) * (size_t)(n + 1));
    Named *layout = malloc(sizeof(Named) * (size_t)(n + 1));
    Named *keys = malloc(sizeof(Named) * (size_t)nkeys);
    uint64_t *begins = malloc(sizeof(uint64_t) * (size_t)(n + 1));
    MfTensor **contig = calloc((size_t)n + 1, sizeof *contig);
    char *header = NULL;
    size_t hlen = 0;
    MfStatus st = MF_OK;
    if (!order || !layout || !keys || !begins || !contig)
        st = mf_err_nomem("save", sizeof(Named) * (size_t)(2 * n + nkeys));
    if (st == MF_OK)
        st = check_tensors(path, n, names, tensors, order);
    if (st == MF_OK)
        st = check_metadata(path, metadata, keys, &k);
    if (st == MF_OK)
        st = make_contiguous(path, n, tensors, contig);
    if (st == MF_OK)
        plan_layout(n, order, contig, layout, begins);
    if (st == MF_OK &&
        !(header = build_header(n, order, contig, begins, metadata, keys, k, &hlen)))
        st = mf_err_set(MF_ENOMEM, "save: out of memory building the header (in '%s')", path);
    if (st == MF_OK && hlen > MAX_HEADER)
        st = fail(MF_EARG, "save", path, "the header would be %llu bytes, over the %llu-byte "
                  "limit of safetensors readers (load's too); save fewer or shorter names "
                  "and metadata per file", ULL(hlen), ULL(MAX_HEADER));
    if (st == MF_OK)
        st = commit(path, header, hlen, n, layout, contig);
    for (int i = 0; contig && i < n; i++)
        if (contig[i])
            mf_tensor_release(contig[i]);
    free(header);
    free(contig);
    free(begins);
    free(keys);
    free(layout);
    free(order);
    return st;
}

/* ---- reading -------------------------------------------------------------- */

typedef struct Entry {
    char *name; /* owned */
    MfDType dtype;
    int rank;
    int64_t shape[MF_MAX_RANK];
    uint64_t begin, end;
} Entry;

typedef struct Reader {
    const char *path;
    FILE *f;
    uint64_t hlen, data_size;
    char *json;
    cJSON *root;
    Entry *entries;
    int count;
    char **meta;
    MfTensor **tensors;
} Reader;

/* The length prefix and the header bytes (NUL-terminated in r->json). */
static MfStatus read_header(Reader *r)
{
    struct stat sb;
    if (fstat(fileno(r->f), &sb) != 0 || !S_ISREG(sb.st_mode))
        return fail(MF_EIO, "load", r->path, "not a regular file");
    uint64_t size = (uint64_t)sb.st_size;
    unsigned char len8[8];
    if (size < 8 || fread(len8, 1, 8, r->f) != 8)
        return fail(MF_EIO, "load", r->path, "file too short: %llu bytes, but a safetensors "
                    "file starts with an 8-byte header length", ULL(size));
    r->hlen = 0;
    for (int b = 0; b < 8; b++)
        r->hlen |= (uint64_t)len8[b] << (8 * b);
    if (r->hlen > size - 8)
        return fail(MF_EIO, "load", r->path, "header length %llu goes beyond the end of the "
                    "file (%llu bytes follow the length)", ULL(r->hlen), ULL(size - 8));
    if (r->hlen > MAX_HEADER)
        return fail(MF_EIO, "load", r->path, "header length %llu is over the 100 MB limit",
                    ULL(r->hlen));
    r->data_size = size - 8 - r->hlen;
    r->json = malloc((size_t)r->hlen + 1);
    if (!r->json)
        return mf_err_nomem("load", r->hlen + 1);
    if (fread(r->json, 1, (size_t)r->hlen, r->f) != r->hlen)
        return fail(MF_EIO, "load", r->path, "reading the header failed");
    r->json[r->hlen] = '\0';
    if (strlen(r->json) != r->hlen)
        return fail(MF_EIO, "load", r->path, "the header is not valid JSON (a NUL byte at "
                    "byte %zu)", strlen(r->json));
    return MF_OK;
}

/* Whether the JSON text holds the escape \u0000 (a NUL inside a string,
 * which cJSON would keep and C strings then cut: "a\u0000b" would load as
 * "a"). An escaped backslash before 'u' does not count. */
static bool has_nul_escape(const char *json, uint64_t n)
{
    for (uint64_t i = 0; i + 6 <= n; i++) {
        if (json[i] != '\\')
            continue;
        if (json[i + 1] == 'u' && strncmp(json + i + 2, "0000", 4) == 0)
            return true;
        i++;   /* skip the escaped character (a second backslash too) */
    }
    return false;
}

static MfStatus parse_json(Reader *r)
{
    if (has_nul_escape(r->json, r->hlen))
        return fail(MF_EIO, "load", r->path, "the header holds a \\u0000 escape (a NUL byte in "
                    "a name or metadata value); refusing it");
    const char *end = NULL;
    r->root = cJSON_ParseWithOpts(r->json, &end, 1);
    if (!r->root)
        return fail(MF_EIO, "load", r->path, "the header is not valid JSON (error at byte %lld "
                    "of %llu)", end ? (long long)(end - r->json) : 0LL, ULL(r->hlen));
    if (!cJSON_IsObject(r->root))
        return fail(MF_EIO, "load", r->path, "the header is JSON but not an object of tensors");
    return MF_OK;
}

/* A JSON number that is an integer in [0, 2^53]. */
static bool get_uint(const cJSON *item, uint64_t *out)
{
    if (!cJSON_IsNumber(item))
        return false;
    double v = item->valuedouble;
    if (!(v >= 0 && v <= MAX_JSON_INT) || v != (double)(uint64_t)v)
        return false;
    *out = (uint64_t)v;
    return true;
}

static bool lookup_dtype(const char *tag, MfDType *dt)
{
    for (int i = 0; i < MF_NDTYPES; i++)
        if (strcmp(tags[i], tag) == 0) {
            *dt = (MfDType)i;
            return true;
        }
    return false;
}

/* dtype and shape of one entry; '*bytes' is what they need (0 on overflow). */
static MfStatus parse_dtype_shape(const Reader *r, const cJSON *item, Entry *e, uint64_t *bytes)
{
    const char *name = item->string;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    if (!cJSON_IsString(dt))
        return fail(MF_EIO, "load", r->path, "tensor '%s' has no \"dtype\" string", name);
    if (!lookup_dtype(dt->valuestring, &e->dtype))
        return fail(MF_EDTYPE, "load", r->path, "tensor '%s' has dtype %s; moonflow reads F32, "
                    "F64, F16, BF16, I32, I64, U8, BOOL", name, dt->valuestring);
    if (!cJSON_IsArray(shape))
        return fail(MF_EIO, "load", r->path, "tensor '%s' has no \"shape\" array", name);
    e->rank = cJSON_GetArraySize(shape);
    if (e->rank > MF_MAX_RANK)
        return fail(MF_EIO, "load", r->path, "tensor '%s' has %d dims; moonflow tensors have "
                    "at most %d", name, e->rank, MF_MAX_RANK);
    uint64_t n = mf_dtype_size(e->dtype);
    for (int d = 0; d < e->rank; d++) {
        uint64_t dim;
        if (!get_uint(cJSON_GetArrayItem(shape, d), &dim))
            return fail(MF_EIO, "load", r->path, "tensor '%s': shape entries must be "
                        "non-negative integers", name);
        e->shape[d] = (int64_t)dim;
        n = (dim != 0 && n > UINT64_MAX / dim) ? UINT64_MAX : n * dim;
    }
    *bytes = n;
    return MF_OK;
}

static MfStatus parse_entry(const Reader *r, const cJSON *item, Entry *e)
{
    const char *name = item->string;
    if (!name[0])   /* the writer's rule too: a tensor is found by its name */
        return fail(MF_EIO, "load", r->path, "a tensor has an empty name (names are "
                    "non-empty strings)");
    if (!cJSON_IsObject(item))
        return fail(MF_EIO, "load", r->path, "tensor '%s': expected an object with dtype, "
                    "shape and data_offsets", name);
    uint64_t bytes = 0;
    MfStatus st = parse_dtype_shape(r, item, e, &bytes);
    if (st != MF_OK)
        return st;
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        !get_uint(cJSON_GetArrayItem(offs, 0), &e->begin) ||
        !get_uint(cJSON_GetArrayItem(offs, 1), &e->end))
        return fail(MF_EIO, "load", r->path, "tensor '%s': \"data_offsets\" must be two "
                    "non-negative integers [begin, end]", name);
    if (e->end < e->begin)
        return fail(MF_EIO, "load", r->path, "tensor '%s': data_offsets [%llu, %llu] end "
                    "before they begin", name, ULL(e->begin), ULL(e->end));
    char buf[160];
    if (bytes == UINT64_MAX)
        return fail(MF_EIO, "load", r->path, "tensor '%s': shape %s is too large", name,
                    mf_shape_str(e->rank, e->shape, buf, sizeof buf));
    if (bytes != e->end - e->begin) {
        return fail(MF_EIO, "load", r->path, "tensor '%s': shape %s of %s needs %llu bytes "
                    "but data_offsets [%llu, %llu] span %llu", name,
                    mf_shape_str(e->rank, e->shape, buf, sizeof buf), tags[e->dtype],
                    ULL(bytes), ULL(e->begin), ULL(e->end), ULL(e->end - e->begin));
    }
    e->name = dup_string(name);
    return e->name ? MF_OK : mf_err_nomem("load", strlen(name) + 1);
}

static int cmp_meta(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "__metadata__": an object of strings, kept as sorted key/value pairs. */
static MfStatus parse_metadata(Reader *r, const cJSON *item)
{
    if (r->meta)
        return fail(MF_EIO, "load", r->path, "\"__metadata__\" appears twice");
    if (!cJSON_IsObject(item))
        return fail(MF_EIO, "load", r->path, "\"__metadata__\" must be an object of strings");
    int k = cJSON_GetArraySize(item);
    r->meta = calloc(2 * (size_t)k + 1, sizeof *r->meta);
    if (!r->meta)
        return mf_err_nomem("load", (2 * (size_t)k + 1) * sizeof *r->meta);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i += 2) {
        if (!cJSON_IsString(c))
            return fail(MF_EIO, "load", r->path, "\"__metadata__\" entry '%s' is not a string",
                        c->string);
        r->meta[i] = dup_string(c->string);
        r->meta[i + 1] = r->meta[i] ? dup_string(c->valuestring) : NULL;
        if (!r->meta[i + 1])
            return mf_err_nomem("load", strlen(c->valuestring) + 1);
    }
    qsort(r->meta, (size_t)k, 2 * sizeof *r->meta, cmp_meta);
    for (int j = 2; j < 2 * k; j += 2)
        if (strcmp(r->meta[j - 2], r->meta[j]) == 0)
            return fail(MF_EIO, "load", r->path, "\"__metadata__\" key '%s' appears twice",
                        r->meta[j]);
    return MF_OK;
}

static int cmp_entry_name(const void *a, const void *b)
{
    return strcmp(((const Entry *)a)->name, ((const Entry *)b)->name);
}

/* Every entry of the header, sorted by name; names must be unique. */
static MfStatus parse_entries(Reader *r)
{
    int total = cJSON_GetArraySize(r->root);
    r->entries = calloc((size_t)total + 1, sizeof *r->entries);
    if (!r->entries)
        return mf_err_nomem("load", ((size_t)total + 1) * sizeof *r->entries);
    for (const cJSON *c = r->root->child; c; c = c->next) {
        MfStatus st = strcmp(c->string, "__metadata__") == 0
                          ? parse_metadata(r, c)
                          : parse_entry(r, c, &r->entries[r->count]);
        if (st != MF_OK)
            return st;
        if (strcmp(c->string, "__metadata__") != 0)
            r->count++;
    }
    qsort(r->entries, (size_t)r->count, sizeof *r->entries, cmp_entry_name);
    for (int i = 1; i < r->count; i++)
        if (strcmp(r->entries[i - 1].name, r->entries[i].name) == 0)
            return fail(MF_EIO, "load", r->path, "tensor name '%s' appears twice in the header",
                        r->entries[i].name);
    return MF_OK;
}

static int cmp_entry_offsets(const void *a, const void *b)
{
    const Entry *x = *(const Entry *const *)a, *y = *(const Entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The tensors must tile the data section: no overlap, gap or trailing byte. */
static MfStatus check_layout(const Reader *r)
{
    const Entry **by = malloc(sizeof *by * ((size_t)r->count + 1));
    if (!by)
        return mf_err_nomem("load", sizeof *by * ((size_t)r->count + 1));
    for (int i = 0; i < r->count; i++)
        by[i] = &r->entries[i];
    qsort(by, (size_t)r->count, sizeof *by, cmp_entry_offsets);
    uint64_t pos = 0;
    MfStatus st = MF_OK;
    for (int i = 0; st == MF_OK && i < r->count; i++) {
        const Entry *e = by[i];
        if (e->begin < pos)
            st = fail(MF_EIO, "load", r->path, "tensors '%s' and '%s' overlap: data_offsets "
                      "[%llu, %llu] and [%llu, %llu]", by[i - 1]->name, e->name,
                      ULL(by[i - 1]->begin), ULL(by[i - 1]->end), ULL(e->begin), ULL(e->end));
        else if (e->begin > pos)
            st = fail(MF_EIO, "load", r->path, "a gap of %llu bytes before tensor '%s' "
                      "(data_offsets [%llu, %llu]); tensors must tile the data section",
                      ULL(e->begin - pos), e->name, ULL(e->begin), ULL(e->end));
        else if (e->end > r->data_size)
            st = fail(MF_EIO, "load", r->path, "truncated data: tensor '%s' ends at byte %llu "
                      "of the data section, which holds %llu bytes", e->name, ULL(e->end),
                      ULL(r->data_size));
        pos = e->end;
    }
    if (st == MF_OK && pos < r->data_size)
        st = fail(MF_EIO, "load", r->path, "trailing garbage: %llu bytes after the last "
                  "tensor's data", ULL(r->data_size - pos));
    free(by);
    return st;
}

/* Reads one entry's bytes into a new tensor. */
static MfStatus load_one(const Reader *r, const Entry *e, MfTensor **out)
{
    MfTensor *t = mf_tensor_new(e->dtype, e->rank, e->shape);
    if (!t) {
        mf_err_prefix("load: tensor '%s' (in '%s')", e->name, r->path);
        return MF_ENOMEM;
    }
    *out = t;
    size_t nb = (size_t)(e->end - e->begin);
    if (nb == 0)
        return MF_OK;
    if (fseeko(r->f, (off_t)(8 + r->hlen + e->begin), SEEK_SET) != 0 ||
        fread(mf_tensor_data(t), 1, nb, r->f) != nb)
        return fail(MF_EIO, "load", r->path, "reading tensor '%s' failed: %s", e->name,
                    ferror(r->f) ? strerror(errno) : "unexpected end of file");
    if (e->dtype == MF_BOOL) {
        const unsigned char *b = mf_tensor_data(t);
        for (size_t i = 0; i < nb; i++)
            if (b[i] > 1)
                return fail(MF_EIO, "load", r->path, "BOOL tensor '%s' holds byte %u at "
                            "element %zu; expected 0 or 1", e->name, b[i], i + 1);
    }
    return MF_OK;
}

static MfStatus load_tensors(Reader *r)
{
    r->tensors = calloc((size_t)r->count + 1, sizeof *r->tensors);
    if (!r->tensors)
        return mf_err_nomem("load", ((size_t)r->count + 1) * sizeof *r->tensors);
    for (int i = 0; i < r->count; i++) {
        MfStatus st = load_one(r, &r->entries[i], &r->tensors[i]);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

/* Hands the names and tensors to the caller (the Reader keeps nothing). */
static MfStatus hand_over(Reader *r, int *n, char ***names, MfTensor ***tensors)
{
    char **out = calloc((size_t)r->count + 1, sizeof *out);
    if (!out)
        return mf_err_nomem("load", ((size_t)r->count + 1) * sizeof *out);
    for (int i = 0; i < r->count; i++) {
        out[i] = r->entries[i].name;
        r->entries[i].name = NULL;
    }
    *n = r->count;
    *names = out;
    *tensors = r->tensors;
    r->tensors = NULL;
    return MF_OK;
}

static void reader_free(Reader *r)
{
    if (r->f)
        fclose(r->f);
    cJSON_Delete(r->root);
    free(r->json);
    for (int i = 0; r->entries && i < r->count + 1; i++)
        free(r->entries[i].name);
    free(r->entries);
    for (int i = 0; r->tensors && i < r->count; i++)
        if (r->tensors[i])
            mf_tensor_release(r->tensors[i]);
    free(r->tensors);
    mf_safetensors_free_metadata(r->meta);
}

MfStatus mf_safetensors_read_meta(const char *path, int *n, char ***names, MfTensor ***tensors,
                                  char ***metadata)
{
    *n = 0;
    *names = NULL;
    *tensors = NULL;
    if (metadata)
        *metadata = NULL;
    if (!path)
        return mf_err_set(MF_EARG, "load: expected a path");
    mf_write_file_reap(path);   /* temporary files of saves that were killed */
    Reader r = {.path = path, .f = fopen(path, "rb")};
    MfStatus st = r.f ? MF_OK
                      : fail(MF_EIO, "load", path, "cannot open the file: %s", strerror(errno));
    if (st == MF_OK)
        st = read_header(&r);
    if (st == MF_OK)
        st = parse_json(&r);
    if (st == MF_OK)
        st = parse_entries(&r);
    if (st == MF_OK)
        st = check_layout(&r);
    if (st == MF_OK)
        st = load_tensors(&r);
    if (st == MF_OK && metadata && !r.meta && !(r.meta = calloc(1, sizeof *r.meta)))
        st = mf_err_nomem("load", sizeof *r.meta);
    if (st == MF_OK)
        st = hand_over(&r, n, names, tensors);
    if (st == MF_OK && metadata) {
        *metadata = r.meta;
        r.meta = NULL;
    }
    reader_free(&r);
    return st;
}

MfStatus mf_safetensors_read(const char *path, int *n, char ***names, MfTensor ***tensors)
{
    return mf_safetensors_read_meta(path, n, names, tensors, NULL);
}

void mf_safetensors_free(int n, char **names, MfTensor **tensors)
{
    for (int i = 0; i < n; i++) {
        if (names)
            free(names[i]);
        if (tensors && tensors[i])
            mf_tensor_release(tensors[i]);
    }
    free(names);
    free(tensors);
}

void mf_safetensors_free_metadata(char **metadata)
{
    for (int i = 0; metadata && metadata[i]; i++)
        free(metadata[i]);
    free(metadata);
}
