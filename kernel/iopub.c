/* iopub.c — IOPub publishing and the capture of fd 1 and 2 (iopub.h).
 *
 * What C code prints (a progress line, a library's warning) never passes
 * through Lua, so the descriptors themselves are redirected into pipes. A
 * thread waits on them and forwards what arrives as 'stream' messages; it
 * reads only while holding the send mutex and sends what it read before
 * releasing it, so kiopub_drain (the same reads, on the main thread) can
 * never overtake text already read. A UTF-8 sequence cut by a read waits
 * for its end, as Jupyter decodes every message as UTF-8. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/iopub.h"

#define CHUNK 65536

typedef struct Stream {
    const char *name;   /* "stdout" or "stderr" */
    int fd;             /* the fd redirected (1 or 2) */
    int saved;          /* what it was before */
    int read_end;
    char pending[4];    /* the start of a cut UTF-8 sequence */
    size_t npending;
} Stream;

static struct {
    const KWire *wire;
    void *sock;
    const KMsg *parent;
    pthread_mutex_t lock;
    pthread_t thread;
    int wake[2];        /* written to end the thread */
    int running;
    Stream streams[2];
} pub = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The length of 'buf' without a trailing incomplete UTF-8 sequence. */
static size_t utf8_complete(const char *buf, size_t len)
{
    size_t back = 0;
    while (back < 3 && back < len && ((unsigned char)buf[len - 1 - back] & 0xC0) == 0x80)
        back++;
    if (back == len)
        return len;
    unsigned char lead = (unsigned char)buf[len - 1 - back];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return need > back + 1 ? len - back - 1 : len;
}

/* Publishes 'text' as a stream message of 's'. */
static void send_text(const Stream *s, const char *text)
{
    cJSON *content = cJSON_CreateObject();
    cJSON_AddStringToObject(content, "name", s->name);
    cJSON_AddStringToObject(content, "text", text);
    kwire_send(pub.wire, pub.sock, pub.parent, false, "stream", content, NULL);
}

/* Reads what 's' has (without blocking) and publishes it; 'all': the
 * held-back end of a cut UTF-8 sequence too (the cell is over, nothing
 * completes it). Returns 0, or -1 at end of file (every writer closed fd
 * s->fd). Lock held. */
static int forward(Stream *s, bool all)
{
    static char buf[CHUNK + 5];
    for (;;) {
        memcpy(buf, s->pending, s->npending);
        ssize_t got = read(s->read_end, buf + s->npending, CHUNK);
        if (got <= 0 && !(all && s->npending))
            return got == 0 ? -1 : 0;
        size_t len = s->npending + (size_t)(got > 0 ? got : 0);
        size_t whole = got > 0 ? utf8_complete(buf, len) : len;
        s->npending = len - whole;
        memcpy(s->pending, buf + whole, s->npending);
        if (whole == 0)
            continue;
        buf[whole] = '\0';
        send_text(s, buf);
    }
}

static void *forward_loop(void *arg)
{
    (void)arg;
    struct pollfd fds[3] = {{pub.streams[0].read_end, POLLIN, 0},
                            {pub.streams[1].read_end, POLLIN, 0},
                            {pub.wake[0], POLLIN, 0}};
    for (;;) {
        if (poll(fds, 3, -1) < 0 && errno != EINTR)
            break;
        if (fds[2].revents)
            break;
        pthread_mutex_lock(&pub.lock);
        for (int i = 0; i < 2; i++)
            if (fds[i].revents && forward(&pub.streams[i], false) < 0)
                fds[i].fd = -1;   /* closed for good: poll would report it forever */
        pthread_mutex_unlock(&pub.lock);
    }
    return NULL;
}

/* Makes fd 's->fd' the write end of a new pipe. */
static int redirect(Stream *s, const char *name, int fd)
{
    int p[2];
    s->name = name;
    s->fd = fd;
    if (pipe(p) != 0)
        return -1;
    s->saved = dup(fd);
    if (s->saved < 0 || dup2(p[1], fd) < 0)
        return -1;
    close(p[1]);
    s->read_end = p[0];
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(s->saved, F_SETFD, FD_CLOEXEC);
    return 0;
}

int kiopub_start(const KWire *w, void *sock)
{
    pub.wire = w;
    pub.sock = sock;
    fflush(stdout);
    fflush(stderr);
    if (pipe(pub.wake) != 0 || redirect(&pub.streams[0], "stdout", 1) != 0 ||
        redirect(&pub.streams[1], "stderr", 2) != 0) {
        kwire_log("cannot redirect stdout and stderr: %s", strerror(errno));
        return -1;
    }
    kwire_set_log_fd(pub.streams[1].saved);
    setvbuf(stdout, NULL, _IOLBF, 0);   /* lines reach the notebook as they are printed */
    /* SIGINT interrupts the main thread's Lua code, never this thread */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&pub.thread, NULL, forward_loop, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        kwire_log("cannot start the output thread: %s", strerror(rc));
        return -1;
    }
    pub.running = 1;
    return 0;
}

void kiopub_set_parent(const KMsg *parent)
{
    pthread_mutex_lock(&pub.lock);
    pub.parent = parent;
    pthread_mutex_unlock(&pub.lock);
}

void kiopub_send(const char *type, cJSON *content)
{
    pthread_mutex_lock(&pub.lock);
    kwire_send(pub.wire, pub.sock, pub.parent, false, type, content, NULL);
    pthread_mutex_unlock(&pub.lock);
}

void kiopub_drain(void)
{
    fflush(stdout);
    fflush(stderr);
    if (!pub.running)
        return;
    pthread_mutex_lock(&pub.lock);
    forward(&pub.streams[0], true);
    forward(&pub.streams[1], true);
    pthread_mutex_unlock(&pub.lock);
}

void kiopub_stop(void)
{
    if (!pub.running)
        return;
    kiopub_drain();
    if (write(pub.wake[1], "x", 1) == 1)
        pthread_join(pub.thread, NULL);
    pub.running = 0;
    for (int i = 0; i < 2; i++) {
        dup2(pub.streams[i].saved, pub.streams[i].fd);
        close(pub.streams[i].read_end);
    }
    kwire_set_log_fd(2);
    close(pub.wake[0]);
    close(pub.wake[1]);
}
