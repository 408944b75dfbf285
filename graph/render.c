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

/* Runs "dot -T<format> <src> -o <path>" and waits for it. Returns 0 and its
 * wait status, or the errno that kept it from starting. */
static int run_dot(const char *format, const char *src, const char *path, int *status)
{
    extern char **environ;
    char prog[] = "dot", tflag[16], oflag[] = "-o";
    snprintf(tflag, sizeof tflag, "-T%s", format);
    char *argv[] = {prog, tflag, (char *)src, oflag, (char *)path, NULL};
    pid_t pid;
    int err = posix_spawnp(&pid, "dot", NULL, NULL, argv, environ);
    while (err == 0 && waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            err = errno;
    return err;
}

MfStatus mf_graph_render(const MfGraph *g, const char *path)
{
    if (!dot_installed())
        return mf_err_set(MF_EIO, "render: Graphviz 'dot' is not installed (apt-get install "
                          "graphviz)");
    char src[4096];
    if (snprintf(src, sizeof src, "%s.dot", path) >= (int)sizeof src)
        return mf_err_set(MF_EIO, "render: cannot write '%s.dot': %s", path,
                          strerror(ENAMETOOLONG));
    MfStatus st = write_dot(g, "render", src);
    if (st != MF_OK)
        return st;
    int status = 0;
    int err = run_dot(format_of(path), src, path, &status);
    remove(src);
    if (err)
        return mf_err_set(MF_EIO, "render: cannot start dot: %s", strerror(err));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return mf_err_set(MF_EIO, "render: 'dot' failed writing '%s' (exit status %d)", path,
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return MF_OK;
}
