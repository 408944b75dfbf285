/* lmf_graph_grad.c — mf.gradients (symbolic gradients, graph/gradients.h)
 * and the graph methods that write pictures: g:write_dot(path) and
 * g:render(path) (Graphviz 'dot'). They are added to the mf.Graph
 * metatable that lmf_graph.c makes, so lmf_open_graph must run first.
 *
 * Tensors read from Lua stay on the Lua stack (or in the caller's tables)
 * while they are used, so the C arrays here only borrow them. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graph/gradients.h"
#include "lmf.h"
#include "lmf_explain.h"

#define GRAPH_MT "mf.Graph"

/* Reads a tensor or an array of tensors at 'idx' into a new userdata array
 * (left on the stack); returns the count. 'what' names the argument. */
static int read_list(lua_State *L, int idx, const char *what, MfTensor ***out)
{
    MfTensor *one = lmf_test_tensor(L, idx);
    int n = one ? 1 : -1;
    if (!one) {
        if (!lua_istable(L, idx))
            return luaL_error(L, "gradients: %s must be a tensor or an array of tensors, got %s",
                              what, luaL_typename(L, idx));
        n = (int)luaL_len(L, idx);
    }
    MfTensor **ts = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *ts, 1);
    if (one)
        ts[0] = one;
    for (int i = 0; i < n && !one; i++) {
        lua_geti(L, idx, i + 1);
        ts[i] = lmf_test_tensor(L, -1);
        if (!ts[i])
            return luaL_error(L, "gradients: %s[%d] is not a tensor", what, i + 1);
        lmf_keep(L, -2);   /* the slot owning ts[i] lives as long as the array */
    }
    *out = ts;
    return n;
}

/* grad_ys from argument 3: {grad_ys = ...}, or the value itself: one value
 * (a tensor, number or nested table) when ys is one tensor, else an array
 * with one per y. Values are converted to their y's dtype and kept on the
 * stack. NULL when absent. */
static MfTensor **read_grad_ys(lua_State *L, int ny, MfTensor *const *ys)
{
    static const char *const known[] = {"grad_ys", NULL};
    bool ys_single = lmf_test_tensor(L, 1) != NULL;
    if (lua_isnoneornil(L, 3))
        return NULL;
    /* a table with no array part is the options table (else grad_ys itself) */
    if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && lua_rawlen(L, 3) == 0)
        lmf_check_options(L, 3, "gradients", known);
    int src = 3;
    if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && lua_getfield(L, 3, "grad_ys") != LUA_TNIL)
        src = lua_gettop(L);
    else if (lua_istable(L, 3) && !lmf_test_tensor(L, 3) && luaL_len(L, 3) == 0)
        return NULL;
    if (ys_single && lua_istable(L, src) && !lmf_test_tensor(L, src) && luaL_len(L, src) == 1
        && lua_geti(L, src, 1) != LUA_TNIL && lmf_test_tensor(L, -1))
        src = lua_gettop(L);   /* {t}: an array of one tensor for the one y */
    MfTensor **gy = lua_newuserdatauv(L, (size_t)(ny ? ny : 1) * sizeof *gy, 0);
    bool single = ys_single || lmf_test_tensor(L, src) || lua_type(L, src) == LUA_TNUMBER;
    if (!single && !lua_istable(L, src))
        luaL_error(L, "gradients: grad_ys must be a tensor or an array, got %s",
                   luaL_typename(L, src));
    if (!single && (int)luaL_len(L, src) != ny)
        luaL_error(L, "gradients: grad_ys has %d entries but ys has %d", (int)luaL_len(L, src),
                   ny);
    if (single && ny != 1)
        luaL_error(L, "gradients: grad_ys must be an array of %d entries (one per y)", ny);
    luaL_checkstack(L, ny + 2, "gradients: too many ys");
    for (int i = 0; i < ny; i++) {
        if (single)
            lua_pushvalue(L, src);
        else
            lua_geti(L, src, i + 1);
        gy[i] = lua_isnil(L, -1) ? NULL : lmf_to_tensor(L, lua_gettop(L), ys[i]->dtype);
    }
    return gy;
}

/* mf.gradients(ys, xs [, {grad_ys = ...}]) -> array of gradients (nil holes) */
static int l_gradients(lua_State *L)
{
    MfTensor **ys, **xs;
    lua_settop(L, 3);
    int ny = read_list(L, 1, "ys", &ys);
    int nx = read_list(L, 2, "xs", &xs);
    MfTensor **gy = read_grad_ys(L, ny, ys);
    MfGraph *g = ny ? mf_tensor_graph(ys[0]) : NULL;
    if (!g)
        g = mf_graph_default();
    if (!g)
        return luaL_error(L, "gradients: ys must be graph tensors (build them inside "
                          "g:as_default); for eager gradients use mf.GradientTape");
    MfTensor **grads = lua_newuserdatauv(L, (size_t)(nx ? nx : 1) * sizeof *grads, 0);
    lua_State *saved = lmf_set_grad_state(L);   /* custom gradients run on L */
    MfStatus st = mf_graph_gradients(g, ny, ys, nx, xs, gy, grads);
    lmf_set_grad_state(saved);
    if (st != MF_OK)
        return lmf_raise(L);
    lua_createtable(L, nx, 0);
    for (int i = 0; i < nx; i++)
        if (grads[i]) {
            lmf_push_tensor(L, grads[i]);
            lua_seti(L, -2, i + 1);
        } else {
            lmf_note_nil_gradient(1);
        }
    return 1;
}

/* Pushes g:to_dot() for the graph at index 1. */
static const char *dot_text(lua_State *L, size_t *len)
{
    if (!*(void **)luaL_checkudata(L, 1, GRAPH_MT))   /* its __gc was called by hand */
        luaL_argerror(L, 1, "Graph is freed");
    lua_getfield(L, 1, "to_dot");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return lua_tolstring(L, -1, len);
}

/* Writes 'len' bytes to 'path' through "path.tmp" and a rename, so a
 * failed write never leaves a half-written file in place. Raises naming
 * 'fname'. */
static void write_file(lua_State *L, const char *fname, const char *path, const char *s,
                       size_t len)
{
    const char *tmp = lua_pushfstring(L, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        luaL_error(L, "%s: cannot write '%s': %s", fname, path, strerror(errno));
    bool ok = fwrite(s, 1, len, f) == len;
    int err = errno;
    ok = (fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) != 0) {
        err = errno;
        ok = false;
    }
    if (!ok) {
        remove(tmp);
        luaL_error(L, "%s: cannot write '%s': %s", fname, path, strerror(err ? err : EIO));
    }
    lua_pop(L, 1);
}

/* g:write_dot(path): writes g:to_dot() to 'path'. */
static int g_write_dot(lua_State *L)
{
    lmf_check_nargs(L, "write_dot", 2);
    size_t len;
    const char *s = dot_text(L, &len);
    write_file(L, "write_dot", luaL_checkstring(L, 2), s, len);
    return 0;
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

/* Runs "dot -T<format> <src> -o <path>" (no shell: nothing to quote) and
 * waits for it. Returns 0 and its wait status, or the errno that kept it
 * from starting. */
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

/* g:render(path): runs Graphviz 'dot' on g:to_dot(), writing 'path' in the
 * format its extension names (.png .svg .pdf; png otherwise). Errors say
 * what failed (a file that cannot be written, no file descriptor left,
 * dot's exit status); "not installed" only when no 'dot' is on $PATH. */
static int g_render(lua_State *L)
{
    lmf_check_nargs(L, "render", 2);
    size_t len;
    const char *s = dot_text(L, &len);
    const char *path = luaL_checkstring(L, 2);
    if (!dot_installed())
        return luaL_error(L, "render: Graphviz 'dot' is not installed (apt-get install "
                          "graphviz)");
    const char *src = lua_pushfstring(L, "%s.dot", path);
    write_file(L, "render", src, s, len);
    int status = 0;
    int err = run_dot(format_of(path), src, path, &status);
    remove(src);
    if (err)
        return luaL_error(L, "render: cannot start dot: %s", strerror(err));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return luaL_error(L, "render: 'dot' failed writing '%s' (exit status %d)", path,
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

void lmf_open_graph_grad(lua_State *L)
{
    static const luaL_Reg meths[] = {{"write_dot", g_write_dot}, {"render", g_render},
                                     {NULL, NULL}};
    luaL_getmetatable(L, GRAPH_MT);
    if (lua_getfield(L, -1, "__index") == LUA_TTABLE)
        luaL_setfuncs(L, meths, 0);
    lua_pop(L, 2);
    lua_pushcfunction(L, l_gradients);
    lua_setfield(L, -2, "gradients");
}
