/* interrupt.h — Ctrl-C while Lua code runs: one SIGINT becomes one Lua
 * error, raised in the thread that runs (the main one or a coroutine), that
 * a pcall catches (see interrupt.c). */
#ifndef LMF_INTERRUPT_H
#define LMF_INTERRUPT_H

#include <signal.h>
#include <stdbool.h>

#include <lua.h>

/* Sets the action for 'sig' (no SA_RESTART: a blocking read returns EINTR). */
void lmf_set_signal(int sig, void (*handler)(int));

/* Arms Ctrl-C for a chunk about to run on 'L' (the main thread): saves the
 * SIGINT action in place in '*old' and clears 'mf_interrupted'. Arms nest. */
void lmf_interrupt_arm(lua_State *L, struct sigaction *old);

/* Undoes lmf_interrupt_arm after the chunk: restores '*old', removes the
 * hooks and clears 'mf_interrupted'. */
void lmf_interrupt_disarm(lua_State *L, const struct sigaction *old);

/* True when a Ctrl-C arrived since the last lmf_interrupt_arm. */
bool lmf_interrupt_seen(void);

/* Called when an error for a pending Ctrl-C is raised (by the interrupt
 * hook, or by lmf_push_engine_error for an engine error while
 * 'mf_interrupted' is set): clears the flag and the hooks and arms Ctrl-C
 * again, so one Ctrl-C raises once. */
void lmf_interrupt_taken(void);

/* For a binding whose effect is done and cannot be undone (a file renamed
 * into place): a Ctrl-C that came during the call stops the script right
 * after it returns, rather than making it report failure. */
void lmf_interrupt_after_return(void);

/* Replaces coroutine.resume, coroutine.wrap and coroutine.close (same
 * behaviour and messages as Lua's) with versions that keep the chain of
 * running threads the SIGINT handler sets its hook on. */
void lmf_open_interrupt(lua_State *L);

/* The innermost coroutine resumed through those versions that has not yet
 * yielded or returned (the thread running now), or NULL: the main thread
 * runs (or Lua's own coroutine functions are in use). */
lua_State *lmf_interrupt_running(void);

#endif
