/* prompt.c — running chunks as lua.c does, and the interactive prompt.
 *
 * Chunks run under 'lmf_docall': a message handler adds a short traceback,
 * and while Lua runs, Ctrl-C raises "interrupted!" in the running thread
 * and stops long kernels (interrupt.c).
 *
 * The prompt reads lines with readline through our own input function, so
 * that Ctrl-C while editing only drops the line (a SIGINT handler sets a
 * flag and interrupts read()); when stdin is not a terminal it reads them
 * with buffered stdio instead (read_line_piped). Each line is first
 * compiled as "return <line>" so expressions print their values; an
 * incomplete chunk asks for more lines with the continuation prompt (input
 * that ends inside one is reported as lua.c does). Completion lives in
 * prompt_complete.c.
 * Readline owns the line buffers it returns; we free them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <lauxlib.h>
#include <lua.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "core/parallel.h"
#include "cell.h"
#include "interrupt.h"
#include "lmf_callback.h"
#include "lmf_explain.h"
#include "prompt.h"
#include "prompt_complete.h"
#include "prompt_show.h"
#include "version.h"

#define PROMPT1 "> "
#define PROMPT2 ">> "
#define HISTORY_MAX 2000
#define EOFMARK "<eof>"

static const char *progname = "moonflow";

void lmf_set_progname(const char *name)
{
    progname = name;
}

/* ---- running chunks (lua.c's docall) ------------------------------------------------ */

/* Drops the "[C]: in ?" lines that end every traceback from the prompt. */
static void trim_traceback(lua_State *L)
{
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    static const char tail[] = "\n\t[C]: in ?";
    size_t n = sizeof tail - 1;
    size_t keep = len;
    while (keep >= n && memcmp(s + keep - n, tail, n) == 0)
        keep -= n;
    if (keep != len) {
        lua_pushlstring(L, s, keep);
        lua_remove(L, -2);
    }
}

static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lmf_push_traceback(L, msg, 1);   /* the user's frames, even through callbacks */
    trim_traceback(L);
    lmf_cell_annotate(L);   /* each frame's source line */
    return 1;
}

int lmf_docall(lua_State *L, int narg, int nres)
{
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    struct sigaction old;
    lmf_interrupt_arm(L, &old);
    int status = lua_pcall(L, narg, nres, base);
    lmf_interrupt_disarm(L, &old);
    lua_remove(L, base);
    return status;
}

int lmf_report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (progname)
            fprintf(stderr, "%s: ", progname);
        fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
        fflush(stderr);
        lua_pop(L, 1);
    }
    return status;
}

void lmf_print_banner(void)
{
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("moonflow %s  (%s)\n", MF_VERSION, LUA_RELEASE);
    printf("BLAS: %s; core %s", openblas_get_config(), openblas_get_corename());
    if (coretype && *coretype)
        printf(" (OPENBLAS_CORETYPE=%s)", coretype);
    printf("; %d thread%s\n", mf_parallel_threads(), mf_parallel_threads() == 1 ? "" : "s");
    fflush(stdout);
}

/* ---- reading lines --------------------------------------------------------------- */

static volatile sig_atomic_t prompt_sigint;
static int line_cancelled;

static void prompt_on_sigint(int sig)
{
    (void)sig;
    prompt_sigint = 1;
}

/* readline's input function. The SIGINT handler is installed without
 * SA_RESTART, so Ctrl-C interrupts read(); the line is then ended with
 * "^C" shown and marked as cancelled. (readline keeps typed-ahead or pasted
 * input in its own buffer between calls, so blocking readline() is used
 * rather than the callback interface with select().) */
static int prompt_getc(FILE *f)
{
    for (;;) {
        if (prompt_sigint) {
            prompt_sigint = 0;
            line_cancelled = 1;
            rl_point = rl_end;
            rl_insert_text("^C");
            rl_redisplay();
            return '\n';
        }
        unsigned char c;
        ssize_t r = read(fileno(f), &c, 1);
        if (r == 1)
            return c;
        if (r == 0 || errno != EINTR)
            return EOF;
        rl_check_signals();
    }
}

/* Set when stdin is not a terminal (moonflow -i < file, a pipe): lines are
 * then read with buffered stdio, not readline, which would read() one byte
 * at a time and treat a Tab in the input as a completion request. */
static int piped_input;

/* Appends 'c' to the growing line '*buf' (length '*len', capacity '*cap').
 * Returns 0 when memory runs out. */
static int line_append(char **buf, size_t *len, size_t *cap, char c)
{
    if (*len + 1 >= *cap) {
        size_t ncap = *cap ? 2 * *cap : 256;
        char *nbuf = realloc(*buf, ncap);
        if (nbuf == NULL)
            return 0;
        *buf = nbuf;
        *cap = ncap;
    }
    (*buf)[(*len)++] = c;
    (*buf)[*len] = '\0';
    return 1;
}

/* read_line for piped input: shows the prompt and echoes the line, as
 * readline does when its input is not a terminal, so a transcript looks
 * the same. A Ctrl-C (SIGINT) while waiting drops what was read of the
 * line, as at a terminal. Returns a malloc'ed line or NULL at end of input
 * (a last line without '\n' is still returned). */
static char *read_line_piped(const char *prompt)
{
    fputs(prompt, stdout);
    fflush(stdout);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        int c = getc(stdin);
        if (c == EOF && ferror(stdin) && errno == EINTR) {
            clearerr(stdin);
            if (prompt_sigint) {
                prompt_sigint = 0;
                line_cancelled = 1;
                if (buf)
                    fwrite(buf, 1, len, stdout);
                fputs("^C\n", stdout);
                free(buf);
                return NULL;
            }
            continue;
        }
        if (c == EOF && len == 0) {
            free(buf);
            return NULL;
        }
        if (c == EOF || c == '\n')
            break;
        if (!line_append(&buf, &len, &cap, (char)c)) {
            fputs("moonflow: input line too long: not enough memory\n", stderr);
            free(buf);
            return NULL;
        }
    }
    if (buf == NULL && (buf = calloc(1, 1)) == NULL)   /* an empty line */
        return NULL;
    fwrite(buf, 1, len, stdout);
    fputs("\n", stdout);
    fflush(stdout);
    return buf;
}

/* Reads one line with 'prompt'. Returns a malloc'ed line (caller frees), or
 * NULL at end of input; '*cancelled' is set when Ctrl-C dropped the line. */
static char *read_line(const char *prompt, int *cancelled)
{
    line_cancelled = 0;
    prompt_sigint = 0;
    char *line = piped_input ? read_line_piped(prompt) : readline(prompt);
    *cancelled = line_cancelled;
    if (line_cancelled) {
        free(line);
        line = NULL;
    }
    return line;
}

/* ---- history --------------------------------------------------------------------- */

static char history_path[4096];

static void history_open(void)
{
    const char *env = getenv("MOONFLOW_HISTORY");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(history_path, sizeof history_path, "%s", env);
    else if (home && *home)
        snprintf(history_path, sizeof history_path, "%s/.moonflow_history", home);
    else
        history_path[0] = '\0';
    /* Time stamps separate entries in the file, so a multi-line chunk comes
     * back as one entry. */
    history_comment_char = '#';
    history_write_timestamps = 1;
    history_multiline_entries = 1;
    using_history();
    stifle_history(HISTORY_MAX);
    if (history_path[0])
        read_history(history_path);
}

/* Adds a chunk to the history and appends it to the file at once, so a
 * crash or a kill loses nothing and parallel sessions interleave (the file
 * is trimmed to HISTORY_MAX entries when the prompt ends). */
static void history_add(const char *chunk)
{
    if (!chunk[0] || piped_input)   /* a script is not typed history */
        return;
    HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
    if (last && strcmp(last->line, chunk) == 0)
        return;
    add_history(chunk);
    if (!history_path[0])
        return;
    FILE *f = fopen(history_path, "a");
    if (f)
        fclose(f);
    append_history(1, history_path);
}

/* ---- chunks: lua.c's loadline ---------------------------------------------------- */

/* The entries read so far: entry N runs as chunk "[N]" (tracebacks name it). */
static int entries;

/* _PROMPT / _PROMPT2 when set (lua.c's rule), else "[N]> " at a terminal,
 * so a traceback's "[N]:2" names an entry the screen shows, and "> " for
 * piped input (a script's transcript does not change with its length). */
static const char *get_prompt(lua_State *L, int first)
{
    static char numbered[32];
    const char *p = lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2") == LUA_TSTRING
                        ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    if (p)
        return p;
    if (!first)
        return PROMPT2;
    if (piped_input)
        return PROMPT1;
    snprintf(numbered, sizeof numbered, "[%d]%s", entries + 1, PROMPT1);
    return numbered;
}

/* Reads one line and pushes it; returns 0 at end of input, -1 when the line
 * was cancelled with Ctrl-C, 1 otherwise. Strings stay on the Lua stack, so
 * the prompt string stays alive while readline uses it. */
static int push_line(lua_State *L, int first)
{
    int cancelled;
    char *line = read_line(get_prompt(L, first), &cancelled);
    if (cancelled)
        return -1;
    if (line == NULL)
        return 0;
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
    if (first && line[0] == '=')     /* lua 5.2 compatibility: '=x' prints x */
        lua_pushfstring(L, "return %s", line + 1);
    else
        lua_pushlstring(L, line, len);
    free(line);
    return 1;
}

static int incomplete(lua_State *L, int status)
{
    if (status != LUA_ERRSYNTAX)
        return 0;
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    size_t lmark = sizeof(EOFMARK) - 1;
    if (lmsg >= lmark && strcmp(msg + lmsg - lmark, EOFMARK) == 0) {
        lua_pop(L, 1);
        return 1;
    }
    return 0;
}

/* Set when the end of input inside a chunk already ended the prompt's line. */
static int eof_line_ended;

/* Compiles the chunk on top with the cell rules (cell.h), reading more
 * lines while it is incomplete. Returns the status with the chunk text
 * below the function (or message); -1 when a continuation line was
 * cancelled, -2 at end of input (then the stack is empty). */
static int multi_line(lua_State *L, const char *name)
{
    for (;;) {
        size_t len;
        const char *line = lua_tolstring(L, 1, &len);
        int status = lmf_cell_load(L, line, len, name);
        if (!incomplete(L, status))
            return status;
        int got = push_line(L, 0);
        if (got == 0 && !piped_input) {   /* Ctrl-D typed in a block cancels it (IPython) */
            fputs("\n-- block cancelled (Ctrl-D on an empty prompt exits)\n", stdout);
            fflush(stdout);
            got = -1;
        }
        if (got == 0) {   /* the input ended inside the chunk: say so (lua.c does) */
            fputs("\n", stdout);   /* end the continuation prompt's line */
            fflush(stdout);
            eof_line_ended = 1;
            lmf_report(L, luaL_loadbuffer(L, lua_tostring(L, 1), lua_rawlen(L, 1), name));
        }
        if (got <= 0) {
            lua_settop(L, 0);
            return got == 0 ? -2 : -1;
        }
        lua_pushliteral(L, "\n");
        lua_insert(L, -2);
        lua_concat(L, 3);
    }
}

/* Reads a chunk and compiles it. Returns -2 at end of input, -1 when
 * cancelled, else the status with the function (or message) on top. */
static int load_line(lua_State *L)
{
    lua_settop(L, 0);
    int got = push_line(L, 1);
    if (got <= 0)
        return got == 0 ? -2 : -1;
    char name[32];
    snprintf(name, sizeof name, "=[%d]", entries + 1);
    int status = multi_line(L, name);
    if (status < 0)
        return status;
    size_t len;
    const char *chunk = lua_tolstring(L, 1, &len);
    entries++;
    lmf_cell_keep(L, name, chunk, len);
    history_add(chunk);
    lua_remove(L, 1);
    return status;
}

void lmf_prompt_loop(lua_State *L)
{
    const char *oldprogname = progname;
    progname = NULL;
    /* While the prompt runs, Ctrl-C outside Lua code only sets a flag (it
     * never kills the program between reading a line and running it). */
    lmf_set_signal(SIGINT, prompt_on_sigint);
    rl_catch_signals = 0;
    rl_getc_function = prompt_getc;
    rl_readline_name = "moonflow";
    /* Piped input is a script, not something typed: it is read with stdio
     * and kept out of the history file. */
    piped_input = !isatty(STDIN_FILENO);
    if (!piped_input)
        history_open();
    lmf_complete_init(L);
    for (;;) {
        int status = load_line(L);
        if (status == -2)
            break;
        if (status == -1)
            continue;
        unsigned long nils = lmf_nil_gradient_count();
        if (status == LUA_OK)
            status = lmf_docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK && lua_gettop(L) > 0) {
            lmf_prompt_remember(L, nils);   /* '_' and the nil-gradient hint */
            lua_pushcfunction(L, lmf_show_values);
            lua_insert(L, 1);
            status = lmf_docall(L, lua_gettop(L) - 1, 0);
            if (status == LUA_OK)
                lmf_prompt_hint(L);
        }
        if (status != LUA_OK && lmf_interrupt_seen())
            fputs("\n", stderr);   /* the terminal echoed "^C" */
        lmf_report(L, status);
    }
    lua_settop(L, 0);
    lmf_set_signal(SIGINT, SIG_DFL);
    if (history_path[0])
        history_truncate_file(history_path, HISTORY_MAX);
    if (!eof_line_ended)
        fputs("\n", stdout);
    fflush(stdout);
    progname = oldprogname;
}
