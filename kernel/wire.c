/* wire.c — signing, verifying, parsing and sending Jupyter messages (see
 * wire.h). The signature is HMAC-SHA256 over the four JSON frames as they
 * were sent, compared in constant time; a message that fails is dropped
 * before any of it is parsed or run. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <zmq.h>

#include "kernel/wire.h"

#define DELIM "<IDS|MSG>"
#define SIG_HEX (2 * 32)

static int log_fd = 2;

void kwire_set_log_fd(int fd)
{
    log_fd = fd;
}

void kwire_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    dprintf(log_fd, "moonflow kernel: %s\n", line);
}

void kwire_uuid(char out[37])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof b) {   /* no /dev/urandom: time and counter */
        static unsigned counter;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20);
        for (int i = 0; i < 16; i++)
            b[i] = (unsigned char)((x >> (8 * (i % 8))) ^ (counter + (unsigned)i * 131u));
        counter++;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);   /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

/* The hex HMAC-SHA256 of the four parts, or "" when there is no key. */
static void sign(const KWire *w, const char *const part[4], const size_t len[4],
                 char hex[SIG_HEX + 1])
{
    hex[0] = '\0';
    if (w->keylen == 0)
        return;
    size_t total = len[0] + len[1] + len[2] + len[3];
    unsigned char *buf = malloc(total ? total : 1);
    if (buf == NULL)
        return;
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        memcpy(buf + at, part[i], len[i]);
        at += len[i];
    }
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    if (HMAC(EVP_sha256(), w->key, (int)w->keylen, buf, total, mac, &maclen) != NULL)
        for (unsigned i = 0; i < maclen && 2 * i < SIG_HEX; i++)
            snprintf(hex + 2 * i, 3, "%02x", mac[i]);
    free(buf);
}

/* Receives the frames of one multipart message (malloc'ed copies). */
static int recv_frames(void *sock, char ***frames, size_t **lens, int *n)
{
    int cap = 0;
    *frames = NULL;
    *lens = NULL;
    *n = 0;
    int more = 1;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, 0) < 0) {
            zmq_msg_close(&part);
            if (*n == 0)
                return -1;   /* interrupted before the message: nothing lost */
            continue;        /* the rest of a message arrives at once */
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *frames = realloc(*frames, (size_t)cap * sizeof **frames);
            *lens = realloc(*lens, (size_t)cap * sizeof **lens);
            if (*frames == NULL || *lens == NULL)
                abort();   /* a few pointers: out of memory here is fatal */
        }
        size_t len = zmq_msg_size(&part);
        char *copy = malloc(len + 1);
        if (copy == NULL)
            abort();
        memcpy(copy, zmq_msg_data(&part), len);
        copy[len] = '\0';
        (*frames)[*n] = copy;
        (*lens)[*n] = len;
        (*n)++;
        more = zmq_msg_more(&part);
        zmq_msg_close(&part);
    }
    return 0;
}

static void free_frames(char **frames, int n)
{
    for (int i = 0; i < n; i++)
        free(frames[i]);
    free(frames);
}

/* Parses the frames after the delimiter at 'd' into 'm'; 0 when malformed. */
static int parse(const KWire *w, char **f, const size_t *len, int n, int d, KMsg *m)
{
    if (n < d + 6)
        return kwire_log("dropped a message with %d frames after the delimiter", n - d - 1), 0;
    const char *part[4] = {f[d + 2], f[d + 3], f[d + 4], f[d + 5]};
    const size_t plen[4] = {len[d + 2], len[d + 3], len[d + 4], len[d + 5]};
    char hex[SIG_HEX + 1];
    sign(w, part, plen, hex);
    if (w->keylen && (len[d + 1] != SIG_HEX || CRYPTO_memcmp(hex, f[d + 1], SIG_HEX) != 0)) {
        kwire_log("dropped a message with a wrong signature (%zu bytes of content)", plen[3]);
        return 0;
    }
    m->header = cJSON_ParseWithLength(part[0], plen[0]);
    m->parent = cJSON_ParseWithLength(part[1], plen[1]);
    m->metadata = cJSON_ParseWithLength(part[2], plen[2]);
    m->content = cJSON_ParseWithLength(part[3], plen[3]);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(m->header, "msg_type");
    if (!cJSON_IsObject(m->header) || !cJSON_IsObject(m->content) || !cJSON_IsString(type)) {
        kwire_log("dropped a message without a header, msg_type or content object");
        return 0;
    }
    m->type = type->valuestring;
    if (!cJSON_IsObject(m->parent)) {
        cJSON_Delete(m->parent);
        m->parent = cJSON_CreateObject();
    }
    if (!cJSON_IsObject(m->metadata)) {
        cJSON_Delete(m->metadata);
        m->metadata = cJSON_CreateObject();
    }
    return 1;
}

int kwire_recv(const KWire *w, void *sock, KMsg *m)
{
    memset(m, 0, sizeof *m);
    char **f;
    size_t *len;
    int n;
    if (recv_frames(sock, &f, &len, &n) < 0)
        return -1;
    int d = 0;
    while (d < n && !(len[d] == sizeof DELIM - 1 && memcmp(f[d], DELIM, len[d]) == 0))
        d++;
    int ok = 0;
    if (d == n || d > KWIRE_MAX_IDS) {
        kwire_log("dropped a message without the <IDS|MSG> delimiter");
    } else if ((ok = parse(w, f, len, n, d, m))) {
        for (int i = 0; i < d; i++) {   /* keep the identities, free the rest */
            m->ids[i] = f[i];
            m->id_len[i] = len[i];
            f[i] = NULL;
        }
        m->nids = d;
    }
    free_frames(f, n);
    free(len);
    if (!ok)
        kmsg_free(m);
    return ok;
}

void kmsg_free(KMsg *m)
{
    for (int i = 0; i < m->nids; i++)
        free(m->ids[i]);
    cJSON_Delete(m->header);
    cJSON_Delete(m->parent);
    cJSON_Delete(m->metadata);
    cJSON_Delete(m->content);
    memset(m, 0, sizeof *m);
}

/* An ISO 8601 time stamp with microseconds, in UTC. */
static void now_iso(char out[40])
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%s.%06ldZ", day, (long)tv.tv_usec);
}

static cJSON *new_header(const KWire *w, const char *type)
{
    char id[37], date[40];
    kwire_uuid(id);
    now_iso(date);
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "msg_id", id);
    cJSON_AddStringToObject(h, "session", w->session);
    cJSON_AddStringToObject(h, "username", "moonflow");
    cJSON_AddStringToObject(h, "date", date);
    cJSON_AddStringToObject(h, "msg_type", type);
    cJSON_AddStringToObject(h, "version", "5.3");
    return h;
}

static int send_frame(void *sock, const void *data, size_t len, int more)
{
    if (zmq_send(sock, data, len, more ? ZMQ_SNDMORE : 0) >= 0)
        return 0;
    kwire_log("zmq_send: %s", zmq_strerror(errno));
    return -1;
}

int kwire_send(const KWire *w, void *sock, const KMsg *parent, bool reply, const char *type,
               cJSON *content, cJSON *metadata)
{
    cJSON *header = new_header(w, type);
    char *part[4] = {cJSON_PrintUnformatted(header),
                     parent ? cJSON_PrintUnformatted(parent->header) : strdup("{}"),
                     metadata ? cJSON_PrintUnformatted(metadata) : strdup("{}"),
                     cJSON_PrintUnformatted(content)};
    cJSON_Delete(header);
    cJSON_Delete(metadata);
    cJSON_Delete(content);
    int rc = -1;
    if (part[0] && part[1] && part[2] && part[3]) {
        size_t len[4];
        for (int i = 0; i < 4; i++)
            len[i] = strlen(part[i]);
        char hex[SIG_HEX + 1];
        sign(w, (const char *const *)part, len, hex);
        rc = 0;
        if (reply && parent)
            for (int i = 0; i < parent->nids && rc == 0; i++)
                rc = send_frame(sock, parent->ids[i], parent->id_len[i], 1);
        else if (!reply)
            rc = send_frame(sock, type, strlen(type), 1);
        if (rc == 0)
            rc = send_frame(sock, DELIM, sizeof DELIM - 1, 1);
        if (rc == 0)
            rc = send_frame(sock, hex, strlen(hex), 1);
        for (int i = 0; i < 4 && rc == 0; i++)
            rc = send_frame(sock, part[i], len[i], i < 3);
    } else {
        kwire_log("cannot encode a %s message: not enough memory", type);
    }
    for (int i = 0; i < 4; i++)
        free(part[i]);
    return rc;
}
