/* interrupt.c — Ctrl-C while Lua code runs, as lua.c's laction/lstop, for
 * every thread.
 *
 * The SIGINT handler sets 'mf_interrupted' (long kernels and the graph
 * executor poll it and stop with an 'interrupted' engine error) and a debug
 * hook that raises "interrupted!" at the next instruction. A hook belongs
 * to one thread, and code in a coroutine never runs the main thread's, so
 * the handler sets it on every thread that is running: the main thread and
 * each coroutine resumed from it that has not yet yielded or returned.
 * Those coroutines form a chain of 'Running' records on the C stack of
 * coroutine.resume, coroutine.wrap's function and coroutine.close, which
 * this file replaces (same behaviour and messages as Lua 5.4's lcorolib):
 * a record is linked before the coroutine runs and unlinked after, and
 * lua_resume never unwinds past it, so the chain only ever holds live
 * records.
 *
 * One Ctrl-C raises one error: whichever raises first (a hook, or a
 * binding raising a kernel's 'interrupted' error) takes the interrupt
 * (lmf_interrupt_taken): the flag and the chain's hooks are cleared and
 * SIGINT is armed again, so a pcall that caught it goes on and a later
 * Ctrl-C interrupts again. A hook left on a thread that has since left the
 * chain finds no interrupt pending and removes itself. A second Ctrl-C
 * before the first is taken ends the process (SIG_DFL), as in lua.c. */
#include <stdatomic.h>

#include <lauxlib.h>

#include "core/op.h"
#include "interrupt.h"

typedef struct Running {
    lua_State *co;
    struct Running *prev;
} Running;

static lua_State *main_L;                  /* the thread chunks run on */
static Running *volatile running;          /* the innermost resumed coroutine */
static volatile sig_atomic_t seen;         /* Ctrl-C since the last arm */
static int armed;                          /* nested arms: SIGINT raises */

void lmf_set_signal(int sig, void (*handler)(int))
{
    struct sigaction sa;
    sa.sa_handler = handler;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Sets (or with NULL removes) 'hook' on the main thread and on each
 * coroutine of the chain. Signal-safe: lua_sethook only stores fields. */
static void hook_running(lua_Hook hook)
{
    int mask = hook ? LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT : 0;
    if (main_L)
        lua_sethook(main_L, hook, mask, 1);
    for (Running *r = running; r; r = r->prev)
        lua_sethook(r->co, hook, mask, 1);
}

static void on_sigint(int sig);

lua_State *lmf_interrupt_running(void)
{
    Running *r = running;
    return r ? r->co : NULL;
}

void lmf_interrupt_taken(void)
{
    if (!mf_interrupted)
        return;
    mf_interrupted = 0;
    hook_running(NULL);
    if (armed > 0)
        lmf_set_signal(SIGINT, on_sigint);
}

/* The hook set by 'on_sigint': stops the running code with an error,
 * unless another thread's hook or an engine error took the interrupt. */
static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    if (!mf_interrupted)
        return;
    lmf_interrupt_taken();
    luaL_error(L, "interrupted!");
}

/* The hook is pending (Ctrl-C came during the call): it would fire on the
 * binding's return and fail the call. Only the count hook stays, which
 * fires at the next instruction of Lua code: the caller's, after the call
 * returned its result. */
void lmf_interrupt_after_return(void)
{
    if (!mf_interrupted)
        return;
    if (main_L)
        lua_sethook(main_L, stop_hook, LUA_MASKCOUNT, 1);
    for (Running *r = running; r; r = r->prev)
        lua_sethook(r->co, stop_hook, LUA_MASKCOUNT, 1);
}

static void on_sigint(int sig)
{
    lmf_set_signal(sig, SIG_DFL);
    mf_interrupted = 1;
    seen = 1;
    hook_running(stop_hook);
}

void lmf_interrupt_arm(lua_State *L, struct sigaction *old)
{
    main_L = L;
    mf_interrupted = 0;
    seen = 0;
    sigaction(SIGINT, NULL, old);
    lmf_set_signal(SIGINT, on_sigint);
    armed++;
}

void lmf_interrupt_disarm(lua_State *L, const struct sigaction *old)
{
    armed--;
    sigaction(SIGINT, old, NULL);   /* SIG_DFL, or the prompt's handler */
    lua_sethook(L, NULL, 0, 0);
    mf_interrupted = 0;
}

bool lmf_interrupt_seen(void)
{
    return seen;
}

/* ---- the coroutine functions ------------------------------------------------ */

/* lua_resume(co, L, narg) with 'co' on the chain while it runs. */
static int resume_linked(lua_State *L, lua_State *co, int narg, int *nres)
{
    Running r = {co, running};
    atomic_signal_fence(memory_order_seq_cst);   /* 'r' is whole before the handler sees it */
    running = &r;
    int status = lua_resume(co, L, narg, nres);
    running = r.prev;
    return status;
}

/* lcorolib's auxresume: moves 'narg' arguments to 'co' and resumes it;
 * returns the count of results moved back, or -1 with the error pushed. */
static int aux_resume(lua_State *L, lua_State *co, int narg)
{
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, narg);
    int nres;
    int status = resume_linked(L, co, narg, &nres);
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_xmove(co, L, 1);
        return -1;
    }
    if (!lua_checkstack(L, nres + 1)) {
        lua_pop(co, nres);
        lua_pushliteral(L, "too many results to resume");
        return -1;
    }
    lua_xmove(co, L, nres);
    return nres;
}

static int co_resume(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "thread");
    int r = aux_resume(L, co, lua_gettop(L) - 1);
    if (r < 0) {
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -(r + 1));
    return r + 1;
}

/* coroutine.wrap's function (lcorolib's auxwrap): the coroutine is its
 * upvalue; an error in it is closed and raised with the caller's position. */
static int co_wrapped(lua_State *L)
{
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int r = aux_resume(L, co, lua_gettop(L));
    if (r >= 0)
        return r;
    int status = lua_status(co);
    if (status != LUA_OK && status != LUA_YIELD) {   /* the error ended it */
        Running link = {co, running};   /* its __close handlers run Lua code */
        atomic_signal_fence(memory_order_seq_cst);
        running = &link;
        status = lua_resetthread(co);
        running = link.prev;
        lua_xmove(co, L, 1);
    }
    if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int co_wrap(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, co_wrapped, 1);
    return 1;
}

/* coroutine.close: Lua's own (upvalue 1) with the coroutine on the chain,
 * as its pending __close handlers run in it. Its only error (closing a
 * running or normal coroutine) comes before they run. */
static int co_close(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "thread");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    Running r = {co, running};
    atomic_signal_fence(memory_order_seq_cst);
    running = &r;
    int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    running = r.prev;
    if (status != LUA_OK)
        return lua_error(L);
    return lua_gettop(L);
}

void lmf_open_interrupt(lua_State *L)
{
    if (lua_getglobal(L, "coroutine") != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_pushcfunction(L, co_resume);
    lua_setfield(L, -2, "resume");
    lua_pushcfunction(L, co_wrap);
    lua_setfield(L, -2, "wrap");
    lua_getfield(L, -1, "close");
    lua_pushcclosure(L, co_close, 1);
    lua_setfield(L, -2, "close");
    lua_pop(L, 1);
}
