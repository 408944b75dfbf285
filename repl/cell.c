/* cell.c — a chunk of several lines run, checked, completed and explained
 * with the prompt's rules (see cell.h). Rules: a top-level 'local' is made
 * a global, so it lasts for the session as in IPython; a cell that is an
 * expression, or whose last statement is one, returns its value; every
 * cell's text is kept under its name, so tracebacks and help(f) show the
 * lines of the functions it defined. Completion is prompt_complete.c's;
 * help() prints through the global 'print', which is swapped for a
 * collector while it runs. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cell.h"
#include "cell_scan.h"
#include "lmf.h"
#include "prompt_complete.h"

#define EOFMARK "<eof>"
#define CELLS_KEY "lmf.cells"   /* registry: short source name -> cell text; */
                                /* at "": the name of a cell to drop next */
#define MAX_TRIES 16            /* statement starts tried for the last value */

/* The identity on all its arguments: what a cell returns its values through. */
static int all_values(lua_State *L)
{
    return lua_gettop(L);
}

/* Runs a cell compiled by try_return: calls upvalue 1 with all_values. */
static int run_valued(lua_State *L)
{
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcfunction(L, all_values);
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* Tries "<head>return (...)(<tail>)" (head may be empty), run with
 * all_values as '...': every value is kept and the tail is no tail call,
 * so a traceback of "f()" still shows the cell's frame (and no global such
 * as select is needed). On success pushes the function and returns 1, else
 * pushes nothing and returns 0. */
static int try_return(lua_State *L, const char *code, size_t head, size_t len,
                      const char *chunkname)
{
    /* ')' right after the tail's last token, so the tail's last operation
     * keeps its line (a trailing comment is left out: it would hide ')') */
    LmfScan scan;
    lmf_scan_init(&scan, code + head, len - head);
    LmfToken t;
    size_t end = 0;
    while (lmf_scan_next(&scan, &t))
        end = t.start + t.len;
    if (end == 0)
        return 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, head);
    luaL_addstring(&b, "return (...)(");
    luaL_addlstring(&b, code + head, end);
    luaL_addstring(&b, ")");
    luaL_pushresult(&b);
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    if (luaL_loadbuffer(L, s, n, chunkname) == LUA_OK) {
        lua_pushcclosure(L, run_valued, 1);
        lua_remove(L, -2);
        return 1;
    }
    lua_pop(L, 2);
    return 0;
}

/* ---- top-level locals become globals ------------------------------------------- */

typedef struct Rewrite {
    luaL_Buffer *b;
    const char *code;
    size_t copied;   /* code before this offset is in the buffer */
} Rewrite;

static void copy_to(Rewrite *r, size_t at)
{
    luaL_addlstring(r->b, r->code + r->copied, at - r->copied);
    r->copied = at;
}

/* Replaces code[from, to) by blanks (columns and lines stay where they were). */
static void blank(Rewrite *r, size_t from, size_t to)
{
    copy_to(r, from);
    for (size_t i = from; i < to; i++)
        luaL_addchar(r->b, ' ');
    r->copied = to;
}

/* After "local" (token 'kw'): "local function f" loses its 'local';
 * "local a, b <const> = e" its 'local' and attributes; "local a, b" becomes
 * "a, b = nil". A <close> variable stays local (it must be closed when the
 * cell ends). Reads on; leaves in 't' the token after the statement's names
 * (returns 0 when the code ended). */
static int rewrite_local(Rewrite *r, LmfScan *s, const LmfToken *kw, LmfToken *t)
{
    if (!lmf_scan_next(s, t))
        return 0;
    if (lmf_token_is(s, t, "function")) {
        blank(r, kw->start, kw->start + kw->len);
        return 1;
    }
    size_t attr_from[8], attr_to[8], nattr = 0, names_end = 0;
    while (t->kind == LMF_TOK_NAME) {
        names_end = t->start + t->len;
        if (!lmf_scan_next(s, t))
            return 0;
        if (lmf_token_is(s, t, "<")) {
            size_t from = t->start;
            LmfToken a;
            if (!lmf_scan_next(s, &a) || lmf_token_is(s, &a, "close") || !lmf_scan_next(s, t) ||
                !lmf_scan_next(s, t))
                return lmf_scan_next(s, t);
            if (nattr < 8) {
                attr_from[nattr] = from;
                attr_to[nattr++] = a.start + a.len + 1;
            }
            names_end = a.start + a.len + 1;
        }
        if (!lmf_token_is(s, t, ","))
            break;
        if (!lmf_scan_next(s, t))
            return 0;
    }
    if (names_end == 0)
        return 1;
    blank(r, kw->start, kw->start + kw->len);
    for (size_t i = 0; i < nattr; i++)
        blank(r, attr_from[i], attr_to[i]);
    if (!lmf_token_is(s, t, "=")) {
        copy_to(r, names_end);
        luaL_addstring(r->b, " = nil");
    }
    return 1;
}

/* Pushes the cell with its top-level locals made globals. */
static void push_persistent(lua_State *L, const char *code, size_t len)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    Rewrite r = {&b, code, 0};
    LmfScan s;
    lmf_scan_init(&s, code, len);
    LmfToken t;
    int depth = 0, more = lmf_scan_next(&s, &t);
    while (more) {
        if (depth == 0 && lmf_token_is(&s, &t, "local")) {
            LmfToken kw = t;
            more = rewrite_local(&r, &s, &kw, &t);
            continue;
        }
        depth += lmf_block_change(&s, &t);
        more = lmf_scan_next(&s, &t);
    }
    copy_to(&r, len);
    luaL_pushresult(&b);
}

/* ---- the value of the last statement ------------------------------------------- */

/* Fills 'starts' with the offsets where a statement may begin (a line's first
 * token, a token after ';'), the last MAX_TRIES of them, latest first; returns
 * how many. */
static size_t statement_starts(const char *code, size_t len, size_t *starts)
{
    size_t ring[MAX_TRIES], n = 0;
    LmfScan s;
    lmf_scan_init(&s, code, len);
    LmfToken t;
    int after_semicolon = 0;
    while (lmf_scan_next(&s, &t)) {
        if ((t.line_start || after_semicolon) && t.start > 0)
            ring[n++ % MAX_TRIES] = t.start;
        after_semicolon = lmf_token_is(&s, &t, ";");
    }
    size_t count = n < MAX_TRIES ? n : MAX_TRIES;
    for (size_t i = 0; i < count; i++)
        starts[i] = ring[(n - 1 - i) % MAX_TRIES];
    return count;
}

/* Compiles the cell on top of the stack (replacing it) as its value, or as
 * it is. The tail must be an expression on its own: "end" would compile
 * after "return" too, and return from inside the block it closes. */
static int load_valued(lua_State *L, const char *chunkname)
{
    size_t len;
    const char *code = lua_tolstring(L, -1, &len);
    if (try_return(L, code, 0, len, chunkname)) {
        lua_remove(L, -2);
        return LUA_OK;
    }
    size_t starts[MAX_TRIES], n = statement_starts(code, len, starts);
    for (size_t i = 0; i < n; i++) {
        if (!try_return(L, code + starts[i], 0, len - starts[i], chunkname))
            continue;
        lua_pop(L, 1);
        if (try_return(L, code, starts[i], len, chunkname)) {
            lua_remove(L, -2);
            return LUA_OK;
        }
        break;
    }
    int status = luaL_loadbuffer(L, code, len, chunkname);
    lua_remove(L, -2);
    return status;
}

/* ---- "name?" and "name??" ------------------------------------------------------ */

/* Runs a question: upvalue 1 computes the value asked about, upvalue 2 is
 * the number of question marks. '?' prints help(value); '??' prints the
 * source of a Lua function too, or says that a function is built in. */
static int answer_question(lua_State *L)
{
    const char *expr = lua_tostring(L, lua_upvalueindex(3));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_call(L, 0, 1);
    int value = lua_gettop(L);
    int source = lua_tointeger(L, lua_upvalueindex(2)) == 2;
    lua_getglobal(L, "print");
    if (lua_isnil(L, value)) {
        lua_pushfstring(L, "%s is nil (help() lists the topics)", expr);
        lua_call(L, 1, 0);
        return 0;
    }
    if (source && lmf_cell_describe(L, value, 1)) {
        lua_call(L, 1, 0);
        return 0;
    }
    lua_pop(L, 1);
    lua_getglobal(L, "mf");
    lua_getfield(L, -1, "help");
    lua_pushvalue(L, value);
    lua_call(L, 1, 0);
    if (source && lua_type(L, value) == LUA_TFUNCTION) {
        lua_getglobal(L, "print");
        lua_pushfstring(L, "-- %s is built into moonflow (C): no Lua source to show", expr);
        lua_call(L, 1, 0);
    }
    return 0;
}

/* The length of a name path ("mf.matmul", "model:fit") at the start of
 * 'code', 0 when none. */
static size_t name_path(const char *code, size_t len)
{
    size_t i = 0;
    while (i < len && (code[i] == '_' || code[i] == '.' || code[i] == ':' ||
                       (code[i] >= 'a' && code[i] <= 'z') || (code[i] >= 'A' && code[i] <= 'Z') ||
                       (code[i] >= '0' && code[i] <= '9')))
        i++;
    return i > 0 && !(code[0] >= '0' && code[0] <= '9') ? i : 0;
}

/* A cell "name?" or "name??" (blanks around): pushes the question's function
 * and returns 1, else 0. */
static int load_question(lua_State *L, const char *code, size_t len, const char *chunkname)
{
    while (len > 0 && code[len - 1] && strchr(" \t\r\n", code[len - 1]))
        len--;
    while (len > 0 && code[0] && strchr(" \t\r\n", code[0]))
        code++, len--;
    size_t marks = len > 0 && code[len - 1] == '?' ? (len > 1 && code[len - 2] == '?' ? 2 : 1) : 0;
    size_t asked = len - marks;   /* the name's length: "name?" */
    if (marks == 0 && len > 0 && code[0] == '?') {   /* IPython's prefix form: "?name" */
        marks = len > 1 && code[1] == '?' ? 2 : 1;
        code += marks, len -= marks;
        while (len > 0 && code[0] && strchr(" \t", code[0]))
            code++, len--;
        asked = len;
    }
    size_t n = name_path(code, len);
    if (marks == 0 || n == 0 || n != asked)
        return 0;
    lua_pushlstring(L, code, n);
    luaL_gsub(L, lua_tostring(L, -1), ":", ".");
    if (!try_return(L, lua_tostring(L, -1), 0, n, chunkname)) {
        lua_pop(L, 2);
        return 0;
    }
    lua_pushinteger(L, (lua_Integer)marks);
    lua_pushvalue(L, -4);
    lua_pushcclosure(L, answer_question, 3);
    lua_replace(L, -3);
    lua_pop(L, 1);
    return 1;
}

int lmf_cell_load(lua_State *L, const char *code, size_t len, const char *chunkname)
{
    if (load_question(L, code, len, chunkname))
        return LUA_OK;
    push_persistent(L, code, len);
    return load_valued(L, chunkname);
}

const char *lmf_cell_status(lua_State *L, const char *code, size_t len)
{
    int top = lua_gettop(L);
    const char *status = "complete";
    if (lmf_cell_load(L, code, len, "=cell") != LUA_OK) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        size_t lmark = sizeof EOFMARK - 1;
        status = msg && lmsg >= lmark && strcmp(msg + lmsg - lmark, EOFMARK) == 0
                     ? "incomplete" : "invalid";
    }
    lua_settop(L, top);
    return status;
}

/* ---- the cells' text: tracebacks and help(f) ----------------------------------- */

/* Whether the code has the keyword 'function' (it may leave a function
 * behind whose traceback frames and help(f) need its lines). */
static int defines_function(const char *code, size_t len)
{
    LmfScan s;
    lmf_scan_init(&s, code, len);
    LmfToken t;
    while (lmf_scan_next(&s, &t))
        if (lmf_token_is(&s, &t, "function"))
            return 1;
    return 0;
}

void lmf_cell_keep(lua_State *L, const char *chunkname, const char *code, size_t len)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, CELLS_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, CELLS_KEY);
    }
    /* a cell without a function is needed only while it runs: the previous
     * one goes, so 100,000 piped lines keep memory flat */
    if (lua_getfield(L, -1, "") == LUA_TSTRING) {
        lua_pushnil(L);
        lua_rawset(L, -3);
    } else {
        lua_pop(L, 1);
    }
    const char *name = chunkname[0] == '=' || chunkname[0] == '@' ? chunkname + 1 : chunkname;
    lua_pushlstring(L, code, len);
    lua_setfield(L, -2, name);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "");
    if (defines_function(code, len)) {
        lua_pushnil(L);
        lua_setfield(L, -2, "");
    }
    lua_pop(L, 1);
}

/* Pushes line 'n' (1-based) of 'text' without its end; 0 when there is none. */
static int push_text_line(lua_State *L, const char *text, int n)
{
    for (int i = 1; i < n && text; i++) {
        text = strchr(text, '\n');
        if (text)
            text++;
    }
    if (text == NULL || *text == '\0')
        return 0;
    const char *end = strchr(text, '\n');
    lua_pushlstring(L, text, end ? (size_t)(end - text) : strlen(text));
    return 1;
}

/* Pushes line 'n' of a file read from disk; 0 when it cannot be read. */
static int push_file_line(lua_State *L, const char *path, int n)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char buf[512];
    int line = 1, found = 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (line <= n && fgets(buf, sizeof buf, f)) {
        size_t l = strlen(buf);
        int ends = l > 0 && buf[l - 1] == '\n';
        if (line == n) {
            luaL_addlstring(&b, buf, ends ? l - 1 : l);
            found = 1;
        }
        if (ends)
            line++;
    }
    fclose(f);
    luaL_pushresult(&b);
    if (!found)
        lua_pop(L, 1);
    return found;
}

int lmf_cell_source_line(lua_State *L, const char *source, int n)
{
    if (n <= 0 || source == NULL)
        return 0;
    const char *name = source[0] == '=' || source[0] == '@' ? source + 1 : source;
    int pushed = 1;   /* the cells table (or nil), then the cell's text */
    if (lua_getfield(L, LUA_REGISTRYINDEX, CELLS_KEY) == LUA_TTABLE) {
        pushed = 2;
        if (lua_getfield(L, -1, name) == LUA_TSTRING) {
            int found = push_text_line(L, lua_tostring(L, -1), n);
            if (found)
                lua_replace(L, -3);
            lua_pop(L, found ? 1 : 2);
            return found;
        }
    }
    lua_pop(L, pushed);
    const char *const *lines = lmf_lib_source(name);
    if (lines) {
        int i = 0;
        while (i < n - 1 && lines[i])
            i++;
        if (!lines[i])
            return 0;
        size_t l = strlen(lines[i]);
        lua_pushlstring(L, lines[i], l > 0 && lines[i][l - 1] == '\n' ? l - 1 : l);
        return 1;
    }
    return source[0] == '@' ? push_file_line(L, name, n) : 0;
}

/* Whether a traceback line "\t<source>:<n>: ..." names a frame with a line:
 * sets '*name' (pushed) and '*n'. */
static int frame_place(lua_State *L, const char *line, size_t len, int *n)
{
    if (len < 2 || line[0] != '\t' || (line[1] == '[' && len > 2 && line[2] == 'C'))
        return 0;
    const char *colon = memchr(line + 1, ':', len - 1);
    if (colon == NULL || colon == line + 1 || sscanf(colon + 1, "%d:", n) != 1)
        return 0;
    lua_pushlstring(L, line + 1, (size_t)(colon - line - 1));
    return 1;
}

/* Pushes the source line of a traceback frame "<name>:<n>", trimmed, or
 * returns 0. A cell's name is tried first, then a file of that name. */
static int frame_source(lua_State *L, const char *name, int n)
{
    int top = lua_gettop(L);
    if (!lmf_cell_source_line(L, lua_pushfstring(L, "=%s", name), n) &&
        !lmf_cell_source_line(L, lua_pushfstring(L, "@%s", name), n)) {
        lua_settop(L, top);
        return 0;
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    while (len > 0 && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    lua_pushlstring(L, s, len);
    lua_replace(L, top + 1);
    lua_settop(L, len > 0 ? top + 1 : top);
    return len > 0;
}

void lmf_cell_annotate(lua_State *L)
{
    const char *text = lua_tostring(L, -1);
    if (text == NULL)
        return;
    const char *tb = strstr(text, "\nstack traceback:\n");
    if (tb == NULL)
        return;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        luaL_addlstring(&b, p, len);
        int n;
        if (p > tb && frame_place(L, p, len, &n)) {
            if (frame_source(L, lua_tostring(L, -1), n)) {
                lua_pushfstring(L, "\n\t    %s", lua_tostring(L, -1));
                lua_remove(L, -2);
                lua_remove(L, -2);
                luaL_addvalue(&b);
            } else {
                lua_pop(L, 1);
            }
        }
        if (!end)
            break;
        luaL_addchar(&b, '\n');
        p = end + 1;
    }
    luaL_pushresult(&b);
    lua_remove(L, -2);
}

/* Adds the comment lines just above line 'first' of 'source' (the function's
 * leading comment), in order. */
static void add_leading_comment(lua_State *L, luaL_Buffer *b, const char *source, int first)
{
    int top = first;
    while (top > 1 && lmf_cell_source_line(L, source, top - 1)) {
        const char *line = lua_tostring(L, -1);
        line += strspn(line, " \t");
        lua_pop(L, 1);
        if (strncmp(line, "--", 2) != 0)
            break;
        top--;
    }
    for (int i = top; i < first; i++) {
        lmf_cell_source_line(L, source, i);
        lua_pushfstring(L, "%s\n", lua_tostring(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(b);
    }
}

/* Pushes the function at 'idx', or the function lib.publish wrapped in it
 * (lib/util.lua's argument-count wrapper keeps it as its upvalue 'f'). */
static void push_unwrapped(lua_State *L, int idx)
{
    lua_pushvalue(L, idx);
    lua_Debug ar;
    lua_pushvalue(L, -1);
    lua_getinfo(L, ">S", &ar);
    if (strcmp(ar.source, "@lib/util.lua") != 0)
        return;
    for (int i = 1;; i++) {
        const char *name = lua_getupvalue(L, -1, i);
        if (name == NULL)
            return;
        if (strcmp(name, "f") == 0 && lua_isfunction(L, -1)) {
            lua_replace(L, -2);
            return;
        }
        lua_pop(L, 1);
    }
}

int lmf_cell_describe(lua_State *L, int idx, int with_source)
{
    lua_Debug ar;
    push_unwrapped(L, idx);
    lua_getinfo(L, ">S", &ar);
    if (ar.what[0] == 'C')
        return 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "a Lua function defined at %s:%d\n", ar.short_src, ar.linedefined);
    luaL_addvalue(&b);
    if (!lmf_cell_source_line(L, ar.source, ar.linedefined)) {
        luaL_addstring(&b, "(its source is not available)");
        luaL_pushresult(&b);
        return 1;
    }
    lua_pop(L, 1);
    add_leading_comment(L, &b, ar.source, ar.linedefined);
    int last = with_source ? ar.lastlinedefined : ar.linedefined;
    for (int i = ar.linedefined; i <= last && lmf_cell_source_line(L, ar.source, i); i++) {
        lua_pushfstring(L, "%s%s", lua_tostring(L, -1), i < last ? "\n" : "");
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

void lmf_cell_complete(lua_State *L, const char *word)
{
    lua_pushcfunction(L, lmf_complete_collect);
    lua_pushstring(L, word);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
}
/* print(...) while help runs: appends its line to the table upvalue 1. */
static int collect_print(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    lua_rawseti(L, lua_upvalueindex(1), (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)) + 1);
    return 0;
}

int lmf_cell_help(lua_State *L, const char *name)
{
    lua_getglobal(L, "print");
    int saved = lua_gettop(L);
    lua_newtable(L);
    int lines = lua_gettop(L);
    lua_pushvalue(L, lines);
    lua_pushcclosure(L, collect_print, 1);
    lua_setglobal(L, "print");
    lua_getglobal(L, "mf");
    lua_getfield(L, -1, "help");
    lua_remove(L, -2);
    lua_pushstring(L, name);
    int status = lua_pcall(L, 1, 0, 0);   /* an error too when mf.help is gone */
    lua_pushvalue(L, saved);
    lua_setglobal(L, "print");
    if (status != LUA_OK) {
        lua_replace(L, saved);
        lua_settop(L, saved);
        return 0;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, lines); i++) {
        lua_rawgeti(L, lines, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_replace(L, saved);
    lua_settop(L, saved);
    return strncmp(lua_tostring(L, -1), "help: no entry", 14) != 0;
}
