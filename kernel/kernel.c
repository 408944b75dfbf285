/* kernel.c — moonflow --kernel: the Jupyter kernel's sockets and its main
 * loop (kernel.h). One thread runs Lua: requests on the control and shell
 * sockets are handled one at a time, control first; the heartbeat echoes
 * on its own thread, and output reaches IOPub through iopub.c. SIGINT
 * (Jupyter's interrupt_mode "signal") stops the running cell with an error
 * (interrupt.c); between cells it is ignored, so the kernel lives on. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "repl/interrupt.h"
#include "kernel/display.h"
#include "kernel/iopub.h"
#include "kernel/kernel.h"
#include "kernel/requests.h"
#include "kernel/wire.h"

typedef struct Sockets {
    void *ctx, *shell, *control, *stdin_, *iopub, *hb;
    pthread_t hb_thread;
    int hb_running;
} Sockets;

/* The connection file's JSON, or NULL (message printed). */
static cJSON *read_connection(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "moonflow: --kernel: cannot open connection file '%s': %s\n", path,
                strerror(errno));
        return NULL;
    }
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *c = cJSON_Parse(buf);
    if (!cJSON_IsObject(c)) {
        fprintf(stderr, "moonflow: --kernel: '%s' is not a JSON connection file\n", path);
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* Reads the key and signature scheme into 'w'; 0 or -1 (message printed). */
static int read_key(const cJSON *c, KWire *w)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(c, "key");
    const cJSON *scheme = cJSON_GetObjectItemCaseSensitive(c, "signature_scheme");
    const char *k = cJSON_IsString(key) ? key->valuestring : "";
    if (*k && cJSON_IsString(scheme) && strcmp(scheme->valuestring, "hmac-sha256") != 0) {
        fprintf(stderr, "moonflow: --kernel: signature_scheme '%s' is not supported (expected "
                "hmac-sha256)\n", scheme->valuestring);
        return -1;
    }
    w->keylen = strlen(k);
    if (w->keylen > sizeof w->key) {
        fprintf(stderr, "moonflow: --kernel: the key has %zu bytes, more than %zu\n", w->keylen,
                sizeof w->key);
        return -1;
    }
    memcpy(w->key, k, w->keylen);
    kwire_uuid(w->session);
    return 0;
}

/* A socket of 'type' bound to the connection file's port 'port_name'. */
static void *bind_socket(void *ctx, const cJSON *c, int type, const char *port_name)
{
    const cJSON *transport = cJSON_GetObjectItemCaseSensitive(c, "transport");
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(c, "ip");
    const cJSON *port = cJSON_GetObjectItemCaseSensitive(c, port_name);
    if (!cJSON_IsNumber(port)) {
        fprintf(stderr, "moonflow: --kernel: the connection file has no '%s'\n", port_name);
        return NULL;
    }
    char endpoint[512];
    snprintf(endpoint, sizeof endpoint, "%s://%s:%d",
             cJSON_IsString(transport) ? transport->valuestring : "tcp",
             cJSON_IsString(ip) ? ip->valuestring : "127.0.0.1", port->valueint);
    void *s = zmq_socket(ctx, type);
    int linger = 1000;
    if (s)
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (s == NULL || zmq_bind(s, endpoint) != 0) {
        fprintf(stderr, "moonflow: --kernel: cannot bind %s (%s): %s\n", endpoint, port_name,
                zmq_strerror(errno));
        if (s)
            zmq_close(s);
        return NULL;
    }
    return s;
}

/* The heartbeat: every message comes back as it is, until the context ends. */
static void *heartbeat(void *sock)
{
    for (;;) {
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            zmq_msg_close(&msg);
            if (errno == EINTR)
                continue;
            break;
        }
        zmq_msg_send(&msg, sock, 0);
        zmq_msg_close(&msg);
    }
    zmq_close(sock);
    return NULL;
}

static void close_sockets(Sockets *s)
{
    void *socks[] = {s->shell, s->control, s->stdin_, s->iopub};
    for (size_t i = 0; i < sizeof socks / sizeof *socks; i++)
        if (socks[i])
            zmq_close(socks[i]);
    if (s->hb && !s->hb_running)
        zmq_close(s->hb);
    if (s->ctx)
        zmq_ctx_shutdown(s->ctx);
    if (s->hb_running)
        pthread_join(s->hb_thread, NULL);
    if (s->ctx)
        zmq_ctx_term(s->ctx);
}

/* Creates the context, the five sockets and the heartbeat thread, with
 * SIGINT blocked so that ZeroMQ's threads never take it. */
static int open_sockets(Sockets *s, const cJSON *c)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    s->ctx = zmq_ctx_new();
    int ok = s->ctx != NULL && (s->shell = bind_socket(s->ctx, c, ZMQ_ROUTER, "shell_port")) &&
             (s->control = bind_socket(s->ctx, c, ZMQ_ROUTER, "control_port")) &&
             (s->stdin_ = bind_socket(s->ctx, c, ZMQ_ROUTER, "stdin_port")) &&
             (s->iopub = bind_socket(s->ctx, c, ZMQ_PUB, "iopub_port")) &&
             (s->hb = bind_socket(s->ctx, c, ZMQ_REP, "hb_port"));
    if (ok)
        s->hb_running = pthread_create(&s->hb_thread, NULL, heartbeat, s->hb) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ok && !s->hb_running)
        fprintf(stderr, "moonflow: --kernel: cannot start the heartbeat thread\n");
    return ok && s->hb_running ? 0 : -1;
}

/* Between cells a SIGINT (an interrupt with nothing running) is dropped. */
static void ignore_sigint(int sig)
{
    (void)sig;
}

/* Receives and handles one message from 'sock'; returns 1 when the kernel
 * should end. */
static int serve_one(KernelState *k, void *sock)
{
    KMsg m;
    int got = kwire_recv(&k->wire, sock, &m);
    if (got <= 0)
        return 0;
    int quit = kreq_handle(k, sock, &m);
    kmsg_free(&m);
    return quit;
}

/* Serves requests until a shutdown, or until the process that started the
 * kernel is gone (its parent changed: a client killed without a shutdown
 * request leaves no kernel behind, as ipykernel's parent poller). */
static void serve(KernelState *k, Sockets *s)
{
    zmq_pollitem_t items[] = {{s->control, 0, ZMQ_POLLIN, 0}, {s->shell, 0, ZMQ_POLLIN, 0}};
    pid_t parent = getppid();
    int quit = 0;
    while (!quit) {
        if (getppid() != parent) {
            kwire_log("the process that started the kernel ended; ending too");
            break;
        }
        if (zmq_poll(items, 2, 1000) < 0) {
            if (errno == EINTR)
                continue;
            kwire_log("zmq_poll: %s", zmq_strerror(errno));
            break;
        }
        if (items[0].revents & ZMQ_POLLIN)
            quit = serve_one(k, s->control);
        else if (items[1].revents & ZMQ_POLLIN)
            quit = serve_one(k, s->shell);
    }
}

int mf_kernel_main(lua_State *L, const char *connection_file)
{
    cJSON *c = read_connection(connection_file);
    KernelState k = {.L = L};
    Sockets s = {0};
    int ok = c && read_key(c, &k.wire) == 0 && open_sockets(&s, c) == 0;
    cJSON_Delete(c);
    if (!ok) {
        close_sockets(&s);
        return EXIT_FAILURE;
    }
    lmf_set_signal(SIGINT, ignore_sigint);
    if (kiopub_start(&k.wire, s.iopub) != 0) {
        close_sockets(&s);
        return EXIT_FAILURE;
    }
    kdisplay_open(L);
    kreq_starting(&k);
    serve(&k, &s);
    kiopub_stop();
    kreq_free(&k);
    close_sockets(&s);
    return EXIT_SUCCESS;
}
