/* wire.h — Jupyter's wire protocol: the multipart ZeroMQ messages
 * (identities, "<IDS|MSG>", HMAC-SHA256 signature, header, parent header,
 * metadata, content), signed and verified with the connection file's key.
 *
 * Ownership: a KMsg owns its identity frames and its four JSON parts
 * (kmsg_free releases them); kwire_send takes over the content and
 * metadata it is given. */
#ifndef MF_KERNEL_WIRE_H
#define MF_KERNEL_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#define KWIRE_MAX_IDS 16

typedef struct KWire {
    unsigned char key[256];
    size_t keylen;         /* 0: messages are neither signed nor checked */
    char session[37];      /* this kernel's session id (a UUID) */
} KWire;

typedef struct KMsg {
    void *ids[KWIRE_MAX_IDS];
    size_t id_len[KWIRE_MAX_IDS];
    int nids;
    cJSON *header, *parent, *metadata, *content;
    const char *type;      /* header.msg_type (inside 'header') */
} KMsg;

/* Writes a random UUID (36 characters and a NUL) to 'out'. */
void kwire_uuid(char out[37]);

/* Logs a line to the kernel's log (the stderr Jupyter started it with). */
void kwire_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where kwire_log writes: a file descriptor (2 until the kernel redirects
 * fd 2 into the notebook). */
void kwire_set_log_fd(int fd);

/* Receives one message from 'sock' into 'm'. Returns 1 for a message, 0
 * when one was dropped (a wrong signature, a malformed message: logged),
 * -1 when the receive was interrupted (EINTR) or the context ended. */
int kwire_recv(const KWire *w, void *sock, KMsg *m);

void kmsg_free(KMsg *m);

/* Sends a message of type 'type' with 'content' (taken over) on 'sock'.
 * 'parent' (may be NULL) gives the parent header and, when 'reply' is
 * true, the identities to route the reply to; otherwise (IOPub) the first
 * frame is the topic 'type'. 'metadata' may be NULL (an empty object) and
 * is taken over. Returns 0, or -1 when ZeroMQ failed (logged). */
int kwire_send(const KWire *w, void *sock, const KMsg *parent, bool reply, const char *type,
               cJSON *content, cJSON *metadata);

#endif
