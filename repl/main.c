/* main.c — the moonflow program, shaped like Lua 5.4's lua.c.
 *
 *   moonflow                    the prompt (or, when stdin is not a
 *                               terminal, run standard input as a chunk)
 *   moonflow script.lua [args]  run a script; 'arg' and '...' as in lua
 *   moonflow -e "code"          run a string (repeatable, in order)
 *   moonflow -l mod             require 'mod' into global 'mod'
 *   moonflow -i [script]        the prompt after the script and -e chunks
 *   moonflow --version | -v     version, Lua and BLAS configuration
 *   moonflow --help | -h        usage
 *   moonflow --kernel -f FILE   a Jupyter kernel on FILE's sockets (kernel/)
 *   moonflow --install-kernel [--user | --prefix DIR]   its kernelspec
 *
 * Everything runs inside one protected call ('pmain'), so a Lua memory
 * error at start-up is reported rather than aborting. Exit status is
 * non-zero when any chunk fails. MOONFLOW_NUM_THREADS sets OpenBLAS's
 * thread count before anything runs.
 *
 * Under mpirun (mf.dist) MPI starts before the script and ends after it
 * (also at os.exit), after telling the others (dist.h); a script that
 * fails on one process ends every process of the run (MPI_Abort, after its
 * message is printed), so none waits forever in a collective for a process
 * that is gone.
 *
 * SIGTERM and SIGHUP (kill, a closed terminal, mpirun ending a run) remove
 * the temporary files of writes in progress (core/io/write_file.h) before
 * the process ends as the signal says; a signal the caller set to be
 * ignored stays ignored. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/io/write_file.h"
#include "core/parallel.h"
#include "distributed/dist.h"
#include "kernel/kernel.h"
#include "lmf.h"
#include "lua_alloc.h"
#include "prompt.h"
#include "version.h"

static const char *progname = "moonflow";

enum {
    HAS_ERROR = 1,  /* bad option */
    HAS_I = 2,      /* -i */
    HAS_V = 4,      /* -v, --version */
    HAS_E = 8,      /* -e or -l */
    HAS_H = 16,     /* -h, --help */
};

static void print_usage(const char *badoption)
{
    FILE *out = badoption ? stderr : stdout;
    if (badoption) {
        if (badoption[1] == 'e' || badoption[1] == 'l')
            fprintf(stderr, "%s: '%s' needs argument\n", progname, badoption);
        else
            fprintf(stderr, "%s: unrecognized option '%s'\n", progname, badoption);
    }
    fprintf(out,
            "usage: %s [options] [script [args]]\n"
            "Available options are:\n"
            "  -e stat    execute string 'stat'\n"
            "  -i         enter the prompt after executing 'script'\n"
            "  -l mod     require library 'mod' into global 'mod'\n"
            "  -v         show version information (also --version)\n"
            "  -h         show this help (also --help)\n"
            "  --kernel -f FILE   run as a Jupyter kernel (FILE: the connection file)\n"
            "  --install-kernel [--user | --prefix DIR]   install the Jupyter kernelspec\n"
            "  --         stop handling options\n"
            "  -          stop handling options and execute stdin\n"
            "Without a script, a terminal gets the prompt; other stdin (a pipe, a file) runs as\n"
            "one script, where values print only with print(). With -i, stdin is read line by\n"
            "line as if typed at the prompt: values are printed and an error does not stop it.\n"
            "Environment: MOONFLOW_NUM_THREADS (BLAS threads), MOONFLOW_HISTORY (history file,\n"
            "default ~/.moonflow_history), OPENBLAS_CORETYPE (BLAS kernel choice).\n"
            "At the prompt, help() lists the topics.\n",
            progname);
    fflush(out);
}

/* Scans the options; '*first' gets the index of the script (or argc), or
 * of the bad option with HAS_ERROR. Returns the HAS_ flags. */
static int collect_args(char **argv, int *first)
{
    int args = 0;
    int i;
    for (i = 1; argv[i] != NULL; i++) {
        *first = i;
        if (argv[i][0] != '-')
            return args;
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
            args |= HAS_V;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            args |= HAS_H;
        } else if (strcmp(argv[i], "--") == 0) {
            *first = i + 1;
            return args;
        } else if (strcmp(argv[i], "-") == 0) {
            return args;
        } else if (strcmp(argv[i], "-i") == 0) {
            args |= HAS_I | HAS_V;
        } else if (strcmp(argv[i], "-e") == 0 || strcmp(argv[i], "-l") == 0) {
            args |= HAS_E;
            if (argv[i + 1] == NULL || argv[i + 1][0] == '-')
                return HAS_ERROR;
            i++;
        } else if ((argv[i][1] == 'e' || argv[i][1] == 'l') && argv[i][2] != '\0') {
            args |= HAS_E;   /* -e'code' and -lmod */
        } else {
            return HAS_ERROR;
        }
    }
    *first = i;
    return args;
}

/* The global 'arg' as in lua: arg[0] is the script, arg[1..] its
 * arguments, arg[-1] .. the interpreter and options before it. */
static void create_arg_table(lua_State *L, char **argv, int argc, int script)
{
    if (script == argc)
        script = 0;
    lua_createtable(L, argc - script - 1, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int do_chunk(lua_State *L, int status)
{
    if (status == LUA_OK)
        status = lmf_docall(L, 0, 0);
    return lmf_report(L, status);
}

static int do_string(lua_State *L, const char *s, const char *name)
{
    return do_chunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l mod: global[mod] = require(mod). */
static int do_library(lua_State *L, const char *name)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    int status = lmf_docall(L, 1, 1);
    if (status == LUA_OK)
        lua_setglobal(L, name);
    return lmf_report(L, status);
}

/* Pushes the script's arguments (arg[1..#arg]); returns how many. */
static int push_args(lua_State *L)
{
    if (lua_getglobal(L, "arg") != LUA_TTABLE)
        luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++)
        lua_rawgeti(L, -i, i);
    lua_remove(L, -n - 1);
    return n;
}

static int handle_script(lua_State *L, char **argv)
{
    const char *fname = argv[0];
    if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0)
        fname = NULL;   /* stdin */
    int status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
        int n = push_args(L);
        status = lmf_docall(L, n, LUA_MULTRET);
    }
    return lmf_report(L, status);
}

/* Runs -e and -l in order; returns 0 when one fails. */
static int run_args(lua_State *L, char **argv, int n)
{
    for (int i = 1; i < n; i++) {
        char option = argv[i][1];
        if (argv[i][0] != '-' || (option != 'e' && option != 'l'))
            continue;
        const char *extra = argv[i] + 2;
        if (*extra == '\0')
            extra = argv[++i];
        int status = option == 'e' ? do_string(L, extra, "=(command line)")
                                   : do_library(L, extra);
        if (status != LUA_OK)
            return 0;
    }
    return 1;
}

/* MOONFLOW_NUM_THREADS=n sets OpenBLAS's threads; a bad value is reported
 * and ignored. */
static void apply_thread_env(void)
{
    const char *s = getenv("MOONFLOW_NUM_THREADS");
    if (s == NULL || *s == '\0')
        return;
    char *end;
    long n = strtol(s, &end, 10);
    if (*end != '\0' || mf_parallel_set_threads(n) != MF_OK) {
        mf_err_clear();
        fprintf(stderr, "%s: ignoring MOONFLOW_NUM_THREADS='%s' (expected an integer from 1 "
                "to 4096)\n", progname, s);
    }
}

/* Opens the standard libraries and moonflow: globals 'mf' and 'help'. The
 * module is registered as package.loaded.mf, because tracebacks name a
 * function by the loaded module holding it: "in function 'mf.zeros'", as
 * the user wrote it, not 'moonflow.zeros'. */
/* The end of this process's part of an mpirun run (dist.h): the others
 * learn that it ended, then MPI ends. False (message printed) when another
 * process was making a collective meanwhile. */
static bool end_dist(void)
{
    if (mf_dist_finalize() == MF_OK)
        return true;
    fprintf(stderr, "%s: rank %d: %s\n", progname, mf_dist_rank(), mf_err_msg());
    fflush(stderr);
    return false;
}

/* os.exit ends MPI first (as the end of the script does), or mpirun calls
 * the exit abnormal and the others would wait for this process forever;
 * then Lua's os.exit (upvalue 1) with the same arguments. */
static int os_exit(lua_State *L)
{
    bool success = lua_isnoneornil(L, 1) || (lua_isboolean(L, 1) && lua_toboolean(L, 1)) ||
                   (lua_isinteger(L, 1) && lua_tointeger(L, 1) == EXIT_SUCCESS);
    if (!end_dist() && success) {   /* the run failed: not a success */
        lua_settop(L, lua_gettop(L) < 1 ? 1 : lua_gettop(L));
        lua_pushboolean(L, 0);
        lua_replace(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

static void open_libs(lua_State *L)
{
    luaL_openlibs(L);
    if (mf_dist_size() > 1) {
        lua_getglobal(L, "os");
        lua_getfield(L, -1, "exit");
        lua_pushcclosure(L, os_exit, 1);
        lua_setfield(L, -2, "exit");
        lua_pop(L, 1);
    }
    lmf_open_shell(L);
    luaL_requiref(L, "mf", luaopen_moonflow, 1);   /* loaded: pushes package.loaded.mf */
    if (lua_getfield(L, -1, "help") != LUA_TNIL)
        lua_setglobal(L, "help");
    else
        lua_pop(L, 1);
    lua_setglobal(L, "mf");
}

static void start_prompt(lua_State *L)
{
    lmf_print_banner();
    printf("Type help() for help, Ctrl-D to exit.\n");
    fflush(stdout);
    lmf_prompt_loop(L);
}

/* moonflow --kernel -f FILE and --install-kernel: the whole command line
 * is theirs. Returns -1 for another command line, else the exit status. */
static int jupyter_command(lua_State *L, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--install-kernel") == 0)
        return mf_kernel_install(argv + 2);
    if (argc < 2 || strcmp(argv[1], "--kernel") != 0)
        return -1;
    if (argc != 4 || strcmp(argv[2], "-f") != 0) {
        fprintf(stderr, "%s: usage: %s --kernel -f CONNECTION_FILE\n", progname, progname);
        return EXIT_FAILURE;
    }
    apply_thread_env();
    if (mf_parallel_reserve_blas() != MF_OK)
        mf_err_clear();
    open_libs(L);
    return mf_kernel_main(L, argv[3]);
}

/* The protected main: argc and argv arrive as light values. */
static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = lua_touserdata(L, 2);
    int jupyter = jupyter_command(L, argc, argv);
    if (jupyter >= 0) {
        lua_pushboolean(L, jupyter == EXIT_SUCCESS);
        return 1;
    }
    int script = argc;
    int args = collect_args(argv, &script);
    if (args & HAS_ERROR) {
        print_usage(argv[script]);
        return 0;
    }
    if (args & HAS_H) {
        print_usage(NULL);
        lua_pushboolean(L, 1);
        return 1;
    }
    apply_thread_env();
    /* OpenBLAS's work buffers now, while memory is there (core/parallel.c);
     * when they cannot be mapped, a GEMM says so then */
    if (mf_parallel_reserve_blas() != MF_OK)
        mf_err_clear();
    open_libs(L);
    create_arg_table(L, argv, argc, script);
    if ((args & HAS_V) && !(args & HAS_I))
        lmf_print_banner();
    if (!run_args(L, argv, script))
        return 0;
    if (script < argc && handle_script(L, argv + script) != LUA_OK)
        return 0;
    if (args & HAS_I) {
        start_prompt(L);
    } else if (script == argc && !(args & (HAS_E | HAS_V))) {
        if (isatty(0))
            start_prompt(L);
        else if (do_chunk(L, luaL_loadfile(L, NULL)) != LUA_OK)
            return 0;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* As luaL_newstate's: an error outside any protected call ends the program
 * with a message (this cannot happen from the prompt, which runs every chunk
 * protected). */
static int panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "%s: unprotected error: %s\n", progname, msg ? msg : "(not a string)");
    return 0;
}

/* Removes the temporary files being written, then ends the process by
 * the same signal (its default action, unblocked once this returns). */
static void end_on_signal(int sig)
{
    mf_write_file_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_temporaries_on(int sig)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
        return;
    struct sigaction sa = {.sa_handler = end_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
    if (argv[0] && argv[0][0])
        progname = argv[0];
    if (mf_dist_init() != MF_OK) {
        fprintf(stderr, "%s: %s\n", progname, mf_err_msg());
        return EXIT_FAILURE;
    }
    remove_temporaries_on(SIGTERM);
    remove_temporaries_on(SIGHUP);
    lua_State *L = lua_newstate(lmf_lua_alloc, NULL);
    if (L != NULL)
        lua_atpanic(L, panic);
    if (L == NULL) {
        fprintf(stderr, "%s: cannot create state: not enough memory\n", progname);
        return EXIT_FAILURE;
    }
    lmf_set_progname(progname);
    lua_pushcfunction(L, pmain);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    int status = lua_pcall(L, 2, 1, 0);
    int result = lua_toboolean(L, -1);
    lmf_report(L, status);
    bool ok = result && status == LUA_OK;
    if (!ok && mf_dist_size() > 1) {
        fprintf(stderr, "%s: rank %d failed; ending all %d processes\n", progname,
                mf_dist_rank(), mf_dist_size());
        fflush(stderr);
        mf_dist_abort(1);
    }
    lua_close(L);
    ok = end_dist() && ok;
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
