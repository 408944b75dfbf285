/* render.c — a graph's picture on disk: g:write_dot(path) writes the
 * Graphviz text of mf_graph_dot (graph/dot.c), g:render(path) runs
 * Graphviz's 'dot' on it. 'dot' is looked up on $PATH and started with
 * posix_spawnp (no shell, nothing to quote); "not installed" is said only
 * when no 'dot' is on $PATH, so other failures (no file descriptor left, a
 * file that cannot be written, dot's own exit status) read as what they
 * are. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/io/write_file.h"
#include "graph.h"

static MfStatus write_dot(const MfGraph *g, const char *who, const char *path)
{
    MfStrBuf b = {0};
    MfStatus st = mf_graph_dot(g, &b);
    if (st == MF_OK)
        st = mf_write_file_atomic(who, path, b.data ? b.data : "", b.len);
    mf_strbuf_free(&b);
    return st;
}

MfStatus mf_graph_write_dot(const MfGraph *g, const char *path)
{
    return write_dot(g, "write_dot", path);
}

/* The output format for 'path': its extension when dot knows it, else png. */
static const char *format_of(const char *path)
{
    static const char *const known[] = {"png", "svg", "pdf", "jpg", "gif", "ps", NULL};
    const char *dot = strrchr(path, '.');
    if (dot && !strchr(dot, '/'))
        for (int i = 0; known[i]; i++)
            if (strcmp(dot + 1, known[i]) == 0)
                return known[i];
    return "png";
}

/* Whether an executable 'dot' is on $PATH. Looked up here, not by a
 * shell's "command -v": a shell fails for other reasons (no file
 * descriptor left for its >/dev/null), which read as "not installed". */
static bool dot_installed(void)
{
    const char *dirs = getenv("PATH");
    for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d;) {
        size_t n = strcspn(d, ":");
        char path[4096];
        int w = snprintf(path, sizeof path, "%.*s/dot", (int)n, n ? d : ".");
        if (w > 0 && (size_t)w < sizeof path && access(path, X_OK) == 0)
            return true;
        d += n + (d[n] == ':');
    }
    return false;
}

/* Runs "dot -T<format> <src>" with its standard output on 'out' (the
 * output's temporary file) and waits for it. Returns 0 and its wait
 * status, or the errno that kept it from starting. */
static int run_dot(const char *format, const char *src, FILE *out, int *status)
{
    extern char **environ;
    char prog[] = "dot", tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", format);
    char *argv[] = {prog, tflag, (char *)src, NULL};
    posix_spawn_file_actions_t fa;
    int err = posix_spawn_file_actions_init(&fa);
    if (err)
        return err;
    err = posix_spawn_file_actions_adddup2(&fa, fileno(out), STDOUT_FILENO);
    pid_t pid;
    if (!err)
        err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    while (err == 0 && waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            err = errno;
    return err;
}

/* The DOT text of 'g' in a temporary file beside 'path' (begun, written and
 * flushed; the caller aborts it once dot has read it). */
static MfStatus write_source(const MfGraph *g, const char *path, MfSafeWrite *src)
{
    MfStrBuf b = {0};
    MfStatus st = mf_graph_dot(g, &b);
    if (st == MF_OK)
        st = mf_safe_write_begin(src, "render", path);
    if (st == MF_OK && ((b.len > 0 && fwrite(b.data, 1, b.len, src->f) != b.len) ||
                        fflush(src->f) != 0)) {
        st = mf_err_set(MF_EIO, "render: cannot write the DOT text to '%s': %s", src->tmp,
                        strerror(errno));
        mf_safe_write_abort(src);
    }
    mf_strbuf_free(&b);
    return st;
}

/* Graphviz writes the picture into the output's temporary file, which is
 * renamed over 'path' only when dot succeeded: the rules of write_file.h
 * (a FIFO or device at 'path' is refused before dot starts). */
MfStatus mf_graph_render(const MfGraph *g, const char *path)
{
    if (!dot_installed())
        return mf_err_set(MF_EIO, "render: Graphviz 'dot' is not installed (apt-get install "
                          "graphviz)");
    MfSafeWrite src, out;
    MfStatus st = write_source(g, path, &src);
    if (st != MF_OK)
        return st;
    st = mf_safe_write_begin(&out, "render", path);
    if (st != MF_OK) {
        mf_safe_write_abort(&src);
        return st;
    }
    int status = 0;
    int err = run_dot(format_of(path), src.tmp, out.f, &status);
    mf_safe_write_abort(&src);
    if (err)
        st = mf_err_set(MF_EIO, "render: cannot start dot: %s", strerror(err));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        st = mf_err_set(MF_EIO, "render: 'dot' failed writing '%s' (exit status %d)", path,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (st != MF_OK) {
        mf_safe_write_abort(&out);
        return st;
    }
    return mf_safe_write_commit(&out);
}
