/* requests.c — one function per request type (requests.h). A cell runs
 * with the prompt's rules (repl/cell.h): compiled so that its last
 * expression is its result, run under lmf_docall (traceback, Ctrl-C), its
 * values shown as the prompt would show them (kernel/display.c). */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "repl/cell.h"
#include "kernel/display.h"
#include "kernel/iopub.h"
#include "kernel/requests.h"
#include "repl/lmf_explain.h"
#include "repl/prompt.h"
#include "repl/version.h"

/* The characters that end a word for completion (the prompt's readline
 * word breaks). */
#define WORD_BREAKS " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#"

static void publish_status(const char *state)
{
    cJSON *content = cJSON_CreateObject();
    cJSON_AddStringToObject(content, "execution_state", state);
    kiopub_send("status", content);
}

void kreq_starting(KernelState *k)
{
    (void)k;
    publish_status("starting");
}

static const char *string_field(const KMsg *m, const char *name, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->content, name);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static int int_field(const KMsg *m, const char *name, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->content, name);
    return cJSON_IsNumber(v) ? v->valueint : dflt;
}

static int bool_field(const KMsg *m, const char *name, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->content, name);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

/* The byte offset of code point 'pos' in the UTF-8 text 'code' (Jupyter
 * counts cursor positions in code points). */
static size_t byte_offset(const char *code, int pos)
{
    size_t i = 0;
    for (int cp = 0; code[i] && cp < pos; cp++)
        do
            i++;
        while (((unsigned char)code[i] & 0xC0) == 0x80);
    return i;
}

static int code_points(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static cJSON *ok_content(void)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "status", "ok");
    return c;
}

static void reply(KernelState *k, void *sock, const KMsg *m, const char *type, cJSON *content)
{
    kwire_send(&k->wire, sock, m, true, type, content, NULL);
}

static void kernel_info(KernelState *k, void *sock, const KMsg *m)
{
    cJSON *c = ok_content();
    cJSON_AddStringToObject(c, "protocol_version", "5.3");
    cJSON_AddStringToObject(c, "implementation", "moonflow");
    cJSON_AddStringToObject(c, "implementation_version", MF_VERSION);
    cJSON *lang = cJSON_AddObjectToObject(c, "language_info");
    cJSON_AddStringToObject(lang, "name", "lua");
    cJSON_AddStringToObject(lang, "version", LUA_VERSION_MAJOR "." LUA_VERSION_MINOR);
    cJSON_AddStringToObject(lang, "mimetype", "text/x-lua");
    cJSON_AddStringToObject(lang, "file_extension", ".lua");
    cJSON_AddStringToObject(lang, "pygments_lexer", "lua");
    cJSON_AddStringToObject(lang, "codemirror_mode", "lua");
    cJSON_AddStringToObject(c, "banner", "moonflow " MF_VERSION " (" LUA_RELEASE
                            "): tensors, autodiff and training from Lua. help() lists the "
                            "topics.");
    cJSON_AddArrayToObject(c, "help_links");
    reply(k, sock, m, "kernel_info_reply", c);
}

/* The error content (the message's first line as evalue, every line of it
 * with the traceback as the traceback) for the message on top. */
static cJSON *error_content(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    if (msg == NULL)
        msg = "(error object is not a string)";
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "ename", strstr(msg, "interrupted!") ? "Interrupted" : "LuaError");
    const char *nl = strchr(msg, '\n');
    char *first = strndup(msg, nl ? (size_t)(nl - msg) : strlen(msg));
    cJSON_AddStringToObject(c, "evalue", first ? first : msg);
    free(first);
    cJSON *tb = cJSON_AddArrayToObject(c, "traceback");
    for (const char *line = msg; line;) {
        nl = strchr(line, '\n');
        char *one = strndup(line, nl ? (size_t)(nl - line) : strlen(line));
        if (one)
            cJSON_AddItemToArray(tb, cJSON_CreateString(one));
        free(one);
        line = nl ? nl + 1 : NULL;
    }
    return c;
}

static void remember_cell(KernelState *k, const char *code)
{
    char **h = realloc(k->history, (size_t)(k->nhistory + 1) * sizeof *h);
    if (h == NULL)
        return;
    k->history = h;
    if ((h[k->nhistory] = strdup(code)) != NULL)
        k->nhistory++;
}

/* Runs the cell: returns the Lua status, with the values (LUA_OK) or the
 * message on the stack. */
static int run_cell(KernelState *k, const char *code)
{
    lua_State *L = k->L;
    lua_settop(L, 0);
    char name[32];
    snprintf(name, sizeof name, "=In[%d]", k->execution_count);
    unsigned long nils = lmf_nil_gradient_count();
    lmf_cell_keep(L, name, code, strlen(code));   /* its lines in tracebacks, help(f) */
    int status = lmf_cell_load(L, code, strlen(code), name);
    if (status == LUA_OK)
        status = lmf_docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK && lua_gettop(L) > 0)
        lmf_prompt_remember(L, nils);
    return status;
}

static void execute(KernelState *k, void *sock, const KMsg *m)
{
    lua_State *L = k->L;
    const char *code = string_field(m, "code", "");
    int silent = bool_field(m, "silent", 0);
    if (bool_field(m, "store_history", !silent)) {
        k->execution_count++;
        remember_cell(k, code);
    }
    int count = k->execution_count;
    if (!silent) {
        cJSON *input = cJSON_CreateObject();
        cJSON_AddStringToObject(input, "code", code);
        cJSON_AddNumberToObject(input, "execution_count", count);
        kiopub_send("execute_input", input);
    }
    int status = run_cell(k, code);
    if (status == LUA_OK && lua_gettop(L) > 0 && !silent) {
        cJSON *data = kdisplay_bundle(L, lua_gettop(L));
        kiopub_drain();
        cJSON *result = cJSON_CreateObject();
        cJSON_AddNumberToObject(result, "execution_count", count);
        cJSON_AddItemToObject(result, "data", data);
        cJSON_AddItemToObject(result, "metadata", cJSON_CreateObject());
        kiopub_send("execute_result", result);
        lmf_prompt_hint(L);
    }
    kiopub_drain();
    cJSON *c;
    if (status != LUA_OK) {
        kiopub_send("error", error_content(L));
        c = error_content(L);
        cJSON_AddStringToObject(c, "status", "error");
    } else {
        c = ok_content();
        cJSON_AddItemToObject(c, "user_expressions", cJSON_CreateObject());
        cJSON_AddItemToObject(c, "payload", cJSON_CreateArray());
    }
    lua_settop(L, 0);
    cJSON_AddNumberToObject(c, "execution_count", count);
    reply(k, sock, m, "execute_reply", c);
}

static void complete(KernelState *k, void *sock, const KMsg *m)
{
    const char *code = string_field(m, "code", "");
    size_t end = byte_offset(code, int_field(m, "cursor_pos", code_points(code, strlen(code))));
    size_t start = end;
    while (start > 0 && !strchr(WORD_BREAKS, code[start - 1]))
        start--;
    char *word = strndup(code + start, end - start);
    cJSON *matches = cJSON_CreateArray();
    if (word) {
        lmf_cell_complete(k->L, word);
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(k->L, -1); i++) {
            lua_rawgeti(k->L, -1, i);
            cJSON_AddItemToArray(matches, cJSON_CreateString(lua_tostring(k->L, -1)));
            lua_pop(k->L, 1);
        }
        lua_pop(k->L, 1);
    }
    free(word);
    cJSON *c = ok_content();
    cJSON_AddItemToObject(c, "matches", matches);
    cJSON_AddNumberToObject(c, "cursor_start", code_points(code, start));
    cJSON_AddNumberToObject(c, "cursor_end", code_points(code, end));
    cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
    reply(k, sock, m, "complete_reply", c);
}

/* The name around byte 'at' of 'code' ("mf.zeros" in "mf.zeros(2"), or
 * the one before a '(' just typed. */
static char *name_at(const char *code, size_t at)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:";
    size_t len = strlen(code);
    if (at > 0 && (at == len || !strchr(chars, code[at])) && code[at - 1] == '(')
        at--;
    size_t start = at, end = at;
    while (start > 0 && code[start - 1] && strchr(chars, code[start - 1]))
        start--;
    while (end < len && strchr(chars, code[end]))
        end++;
    return strndup(code + start, end - start);
}

static void inspect(KernelState *k, void *sock, const KMsg *m)
{
    const char *code = string_field(m, "code", "");
    char *name = name_at(code, byte_offset(code, int_field(m, "cursor_pos", 0)));
    cJSON *c = ok_content();
    cJSON *data = cJSON_CreateObject();
    int found = 0;
    if (name && *name) {
        found = lmf_cell_help(k->L, name);
        if (found)
            cJSON_AddStringToObject(data, "text/plain", lua_tostring(k->L, -1));
        lua_pop(k->L, 1);
    }
    free(name);
    cJSON_AddBoolToObject(c, "found", found);
    cJSON_AddItemToObject(c, "data", data);
    cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
    reply(k, sock, m, "inspect_reply", c);
}

static void is_complete(KernelState *k, void *sock, const KMsg *m)
{
    const char *code = string_field(m, "code", "");
    const char *status = lmf_cell_status(k->L, code, strlen(code));
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "status", status);
    if (strcmp(status, "incomplete") == 0)
        cJSON_AddStringToObject(c, "indent", "  ");
    reply(k, sock, m, "is_complete_reply", c);
}

/* history_request: the cells of this session ('tail': the last n; any
 * other access type: all), without their outputs. */
static void history(KernelState *k, void *sock, const KMsg *m)
{
    int first = 0;
    if (strcmp(string_field(m, "hist_access_type", "tail"), "tail") == 0) {
        int n = int_field(m, "n", k->nhistory);
        first = n >= 0 && n < k->nhistory ? k->nhistory - n : 0;
    }
    cJSON *c = ok_content();
    cJSON *list = cJSON_AddArrayToObject(c, "history");
    for (int i = first; i < k->nhistory; i++) {
        cJSON *entry = cJSON_CreateArray();
        cJSON_AddItemToArray(entry, cJSON_CreateNumber(0));
        cJSON_AddItemToArray(entry, cJSON_CreateNumber(i + 1));
        cJSON *input = cJSON_CreateString(k->history[i]);
        if (bool_field(m, "output", 0)) {   /* [input, output]: outputs are not kept */
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, input);
            cJSON_AddItemToArray(pair, cJSON_CreateNull());
            input = pair;
        }
        cJSON_AddItemToArray(entry, input);
        cJSON_AddItemToArray(list, entry);
    }
    reply(k, sock, m, "history_reply", c);
}

static void comm_info(KernelState *k, void *sock, const KMsg *m)
{
    cJSON *c = ok_content();
    cJSON_AddObjectToObject(c, "comms");
    reply(k, sock, m, "comm_info_reply", c);
}

static void shutdown(KernelState *k, void *sock, const KMsg *m)
{
    cJSON *c = ok_content();
    cJSON_AddBoolToObject(c, "restart", bool_field(m, "restart", 0));
    reply(k, sock, m, "shutdown_reply", c);
}

/* interrupt_request (interrupt_mode "message"): nothing runs while a
 * request is read, so there is nothing to stop; the cell being run is
 * stopped by SIGINT instead (kernel.json says "signal"). */
static void interrupt(KernelState *k, void *sock, const KMsg *m)
{
    reply(k, sock, m, "interrupt_reply", ok_content());
}

typedef void (*Handler)(KernelState *, void *, const KMsg *);

static const struct {
    const char *type;
    Handler fn;
} handlers[] = {
    {"kernel_info_request", kernel_info}, {"execute_request", execute},
    {"complete_request", complete},       {"inspect_request", inspect},
    {"is_complete_request", is_complete}, {"history_request", history},
    {"comm_info_request", comm_info},     {"shutdown_request", shutdown},
    {"interrupt_request", interrupt},
};

int kreq_handle(KernelState *k, void *sock, const KMsg *m)
{
    kiopub_set_parent(m);
    publish_status("busy");
    Handler fn = NULL;
    for (size_t i = 0; i < sizeof handlers / sizeof *handlers && !fn; i++)
        if (strcmp(m->type, handlers[i].type) == 0)
            fn = handlers[i].fn;
    if (fn)
        fn(k, sock, m);
    else
        kwire_log("ignored a message of unknown type '%s'", m->type);
    publish_status("idle");
    kiopub_set_parent(NULL);
    return fn == shutdown;
}

void kreq_free(KernelState *k)
{
    for (int i = 0; i < k->nhistory; i++)
        free(k->history[i]);
    free(k->history);
    k->history = NULL;
    k->nhistory = 0;
}
