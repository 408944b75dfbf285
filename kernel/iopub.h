/* iopub.h — the IOPub socket shared by the kernel's main thread (status,
 * results, display data) and the thread that forwards what is written to
 * fd 1 and 2 (Lua's print, C's printf, progress lines) as 'stream'
 * messages. Every send holds one mutex, so messages go out whole and in
 * the order they were made; the stream text of a cell is forwarded before
 * its result (kiopub_drain). */
#ifndef MF_KERNEL_IOPUB_H
#define MF_KERNEL_IOPUB_H

#include <cJSON.h>

#include "kernel/wire.h"

/* Starts publishing on 'sock' (borrowed, kept until kiopub_stop) signed by
 * 'w': fd 1 and 2 become pipes read by a forwarding thread; the previous
 * fd 2 becomes the log (kwire_set_log_fd). Returns 0, or -1 (logged). */
int kiopub_start(const KWire *w, void *sock);

/* The request whose output is being published (borrowed: NULL before the
 * request is freed); stream messages name it as their parent. */
void kiopub_set_parent(const KMsg *parent);

/* Publishes a message of 'type' with 'content' (taken over) under the
 * current parent. */
void kiopub_send(const char *type, cJSON *content);

/* Flushes C's stdout and stderr and publishes everything written so far. */
void kiopub_drain(void);

/* Ends the forwarding thread (after a last drain) and gives fd 1 and 2
 * back. */
void kiopub_stop(void);

#endif
