/* requests.h — the kernel's answers to the requests of the shell and
 * control channels (Jupyter messaging protocol 5.3). */
#ifndef MF_KERNEL_REQUESTS_H
#define MF_KERNEL_REQUESTS_H

#include <lua.h>

#include "kernel/wire.h"

typedef struct KernelState {
    lua_State *L;
    KWire wire;
    int execution_count;
    char **history;     /* the cells run with store_history, in order */
    int nhistory;
} KernelState;

/* Publishes the "starting" status. */
void kreq_starting(KernelState *k);

/* Handles 'm' received on 'sock' (status busy, the reply, status idle);
 * an unknown type is logged and ignored. Returns 1 after a shutdown
 * request (the reply is sent). */
int kreq_handle(KernelState *k, void *sock, const KMsg *m);

/* Frees the history. */
void kreq_free(KernelState *k);

#endif
