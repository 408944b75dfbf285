/* prompt.h — running chunks the way lua.c does (traceback handler, Ctrl-C
 * through a debug hook) and the interactive prompt (readline editing,
 * persistent history, completion, multi-line input, value printing).
 *
 * All functions work on the Lua state the program owns; none keeps a
 * reference to a Lua value after it returns. */
#ifndef LMF_PROMPT_H
#define LMF_PROMPT_H

#include <lua.h>

/* Name used to prefix error messages outside the prompt ("moonflow"), or
 * NULL for none. Borrowed: must outlive its use (argv[0] does). */
void lmf_set_progname(const char *name);

/* Calls the function below 'narg' arguments on the stack under a traceback
 * handler, with Ctrl-C armed to interrupt it (lua.c's 'docall'; the SIGINT
 * action in place before is restored after). Clears 'mf_interrupted'.
 * Returns the Lua status; on error the message (with a short traceback) is
 * left on the stack, otherwise 'nres' results
 * (LUA_MULTRET: all). */
int lmf_docall(lua_State *L, int narg, int nres);

/* When 'status' is not LUA_OK, prints the message on top to stderr and pops
 * it. Returns 'status'. */
int lmf_report(lua_State *L, int status);

/* Prints the version line(s) and the BLAS configuration (the banner). */
void lmf_print_banner(void);

/* Runs the interactive prompt until end of input (Ctrl-D). History is read
 * from and appended to $MOONFLOW_HISTORY or ~/.moonflow_history. */
void lmf_prompt_loop(lua_State *L);

#endif
