/* help.c — help(): topics, entries and suggestions for unknown names.
 *
 * An op's entry comes from its descriptor (summary, topic, details,
 * example) with the signature and options generated from its schema; the
 * other texts are plain text in doc/help/, one file per topic, made into C
 * at build time (tools/embed_help.sh). help is a closure with the
 * 'mf' table as upvalue 1, so help(f) can find a function's name by
 * searching mf and its tables for that value; a method (sess.run) is found
 * in its class's metatable, and a function of Lua's own library points to
 * the Lua manual. Text is built in a luaL_Buffer
 * and printed through the global 'print' (so output can be redirected the
 * Lua way); nothing here allocates outside Lua. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cell.h"
#include "help.h"
#include "help_objects.h"
#include "lmf.h"
#include "lmf_strict.h"
#include "version.h"

#define WRAP_WIDTH 76
#define MAX_SUGGESTIONS 6

typedef struct Topic {
    const char *name;
    const char *about;
} Topic;

/* The topics and the hand-written entries, from doc/help/<topic>.txt: the
 * build makes them C (tools/embed_help.sh) as one HELP_TOPIC row per file
 * and one HELP_ENTRY row per entry, read here twice. */
#define HELP_TOPIC(name, about) {name, about},
#define HELP_ENTRY(name, topic, signature, text, example)
static const Topic topics[] = {
#include "help_doc.inc"
    {NULL, NULL},
};
#undef HELP_TOPIC
#undef HELP_ENTRY

#define HELP_TOPIC(name, about)
#define HELP_ENTRY(name, topic, signature, text, example) \
    {name, topic, signature, text, example, -1},
static const LmfHelpEntry written[] = {
#include "help_doc.inc"
    {NULL, NULL, NULL, NULL, NULL, -1},
};
#undef HELP_TOPIC
#undef HELP_ENTRY

/* Prints the string on top through the global 'print' and pops it. */
static void emit(lua_State *L)
{
    if (lua_getglobal(L, "print") == LUA_TFUNCTION) {
        lua_insert(L, -2);
        lua_call(L, 1, 0);
        return;
    }
    lua_pop(L, 1);
    fputs(lua_tostring(L, -1), stdout);
    fputs("\n", stdout);
    lua_pop(L, 1);
}

/* Adds 'text' wrapped at WRAP_WIDTH, each line starting with 'indent';
 * 'col' > 0 continues a line that already holds that many characters. */
static void add_wrapped_at(luaL_Buffer *b, const char *text, const char *indent, size_t col)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = 0;
        while (p[n] && p[n] != ' ')
            n++;
        if (n == 0)
            break;
        if (col == 0) {
            luaL_addstring(b, indent);
            col = strlen(indent);
        } else if (col + 1 + n > WRAP_WIDTH) {
            luaL_addchar(b, '\n');
            luaL_addstring(b, indent);
            col = strlen(indent);
        } else {
            luaL_addchar(b, ' ');
            col++;
        }
        luaL_addlstring(b, p, n);
        col += n;
        p += n;
    }
}

static void add_wrapped(luaL_Buffer *b, const char *text, const char *indent)
{
    add_wrapped_at(b, text, indent, 0);
}

/* The entries lib/'s files declare beside their functions (lib.help in
 * lib/util.lua), one {name, topic, signature, text, example} array each,
 * copied into 'out' as LmfHelpEntry: the strings stay anchored in the array
 * that lmf_open_lib keeps in the registry. Returns the count. */
static size_t lib_entries(lua_State *L, LmfHelpEntry *out, size_t room)
{
    size_t n = 0;
    if (lua_getfield(L, LUA_REGISTRYINDEX, LMF_LIB_HELP) == LUA_TTABLE) {
        size_t len = (size_t)lua_rawlen(L, -1);
        for (size_t i = 1; i <= len && n < room; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i);
            const char *f[5] = {NULL};
            for (int k = 0; k < 5 && lua_istable(L, -1); k++) {
                lua_rawgeti(L, -1, k + 1);
                f[k] = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
                lua_pop(L, 1); /* the string stays in the entry's array */
            }
            lua_pop(L, 1);
            if (f[0] && f[1] && f[2] && f[3] && f[4])
                out[n++] = (LmfHelpEntry){f[0], f[1], f[2], f[3], f[4], -1};
        }
    }
    lua_pop(L, 1);
    return n;
}

/* The hand-written entries, lib/'s entries, then one per op or composite
 * the schema binder registers whose descriptor has an example (an entry of the same
 * name written by hand or in lib/ wins: mf.trace is tf.function, the matrix
 * trace its tensor case), ended by a NULL name. Built once per Lua state,
 * in a userdata kept in the registry; the texts are their owners' own. */
#define ALL_ENTRIES "lmf.help_entries"
#define MAX_LIB_ENTRIES 256

static const LmfHelpEntry *all_entries(lua_State *L)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, ALL_ENTRIES) == LUA_TUSERDATA) {
        const LmfHelpEntry *all = lua_touserdata(L, -1);
        lua_pop(L, 1); /* the registry keeps it */
        return all;
    }
    lua_pop(L, 1);
    size_t nwritten = sizeof written / sizeof written[0] - 1;
    int nbound = 0;   /* the ops and composites the binder binds */
    while (lmf_op_desc(nbound))
        nbound++;
    LmfHelpEntry *all =
        lua_newuserdatauv(L, (nwritten + MAX_LIB_ENTRIES + (size_t)nbound + 1) * sizeof *all, 0);
    /* compat's entries last: they are TensorFlow's calls side by side, and a
     * short name (help "GradientDescentOptimizer") finds moonflow's own. */
    size_t n = 0;
    for (int compat = 0; compat <= 1; compat++)
        for (size_t i = 0; i < nwritten; i++)
            if ((strcmp(written[i].topic, "compat") == 0) == compat)
                all[n++] = written[i];
    n += lib_entries(L, all + n, MAX_LIB_ENTRIES);
    size_t nnamed = n;
    for (int i = 0; i < nbound; i++) {
        const MfOpDesc *d = lmf_op_desc(i);
        if (!d->example || !d->lua)
            continue;
        bool shadowed = false;
        for (size_t k = 0; k < nnamed && !shadowed; k++)
            shadowed = strcmp(all[k].name, d->lua) == 0;
        if (!shadowed)
            all[n++] = (LmfHelpEntry){d->lua, d->topic ? d->topic : "math", NULL, d->summary,
                                      d->example, i};
    }
    all[n].name = NULL;
    lua_setfield(L, LUA_REGISTRYINDEX, ALL_ENTRIES);
    return all;
}

static const LmfHelpEntry *find_entry(lua_State *L, const char *name)
{
    for (const LmfHelpEntry *e = all_entries(L); e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* The entry whose name ends with "." .. 'name' ("train.Saver" for
 * "Saver"), the first in table order, or NULL. */
static const LmfHelpEntry *find_suffix(lua_State *L, const char *name)
{
    size_t n = strlen(name);
    for (const LmfHelpEntry *e = all_entries(L); e->name; e++) {
        size_t m = strlen(e->name);
        if (m > n && e->name[m - n - 1] == '.' && strcmp(e->name + m - n, name) == 0)
            return e;
    }
    return NULL;
}

static const Topic *find_topic(const char *name)
{
    for (const Topic *t = topics; t->name; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

/* True when 's' starts with a word of two letters or more: a summary that
 * starts with a variable ("x Phi(x)", "x - log(...)") keeps its case, or
 * "X" would read as another name. */
static bool starts_with_word(const char *s)
{
    return isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]);
}

/* An op's text: its summary as a sentence, its details, its options.
 * (Built in C buffers: nothing may sit above 'b' on the stack while it is
 * added to.) */
static void add_op_text(luaL_Buffer *b, const LmfHelpEntry *e)
{
    const MfOpDesc *d = lmf_op_desc(e->op);
    char text[1280];
    const char *s = d->summary;
    snprintf(text, sizeof text, "%c%s.", starts_with_word(s) ? toupper((unsigned char)s[0]) : s[0],
             s + 1);
    add_wrapped(b, text, "  ");
    if (d->details) {
        luaL_addstring(b, "\n\n");
        add_wrapped(b, d->details, "  ");
    }
    char opts[1024];
    if (mf_attrs_describe(d, opts, sizeof opts) > 0) {
        bool positional = d->attrs[0].flags & MF_ATTR_POSITIONAL;
        snprintf(text, sizeof text, "Options (%s): %s.", positional
                 ? "the positional ones in this order, each also by name in a final table"
                 : "by name in a final table", opts);
        luaL_addstring(b, "\n\n");
        add_wrapped(b, text, "  ");
    }
}

static void show_entry(lua_State *L, const LmfHelpEntry *e)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (e->op >= 0) {
        lmf_op_help_signature(L, e->op);
        luaL_addvalue(&b);
    } else {
        luaL_addstring(&b, e->signature);
    }
    luaL_addstring(&b, "\n\n");
    if (e->op >= 0)
        add_op_text(&b, e);
    else
        add_wrapped(&b, e->text, "  ");
    luaL_addstring(&b, "\n\n  Example:\n");
    for (const char *p = e->example; *p;) {
        size_t n = strcspn(p, "\n");
        luaL_addstring(&b, "    ");
        luaL_addlstring(&b, p, n);
        luaL_addchar(&b, '\n');
        p += n + (p[n] == '\n');
    }
    char note[512];
    if (lmf_help_op_note(e->name, note, sizeof note)) {
        luaL_addstring(&b, "\n");
        add_wrapped(&b, note, "  ");
    }
    lua_pushfstring(L, "\n  (topic: %s; help() lists all topics)", e->topic);
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    emit(L);
}

/* The first sentence of an entry's paragraph, wrapped and indented. */
static void add_summary(luaL_Buffer *b, const char *text)
{
    char first[512];
    const char *end = strstr(text, ". ");
    size_t n = end ? (size_t)(end - text) : strlen(text);
    if (n > 0 && text[n - 1] == '.')
        n--;
    if (n >= sizeof first)
        n = sizeof first - 1;
    memcpy(first, text, n);
    first[n] = '\0';
    add_wrapped(b, first, "      ");
}

static void show_topic(lua_State *L, const Topic *t)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "%s:", t->name);
    luaL_addvalue(&b);
    add_wrapped_at(&b, t->about, "  ", strlen(t->name) + 1);
    luaL_addchar(&b, '\n');
    for (const LmfHelpEntry *e = all_entries(L); e->name; e++) {
        if (strcmp(e->topic, t->name) != 0)
            continue;
        if (e->op >= 0)
            lmf_op_help_signature(L, e->op);
        else
            lua_pushstring(L, e->signature);
        lua_pushfstring(L, "\n  %s\n", lua_tostring(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(&b);
        add_summary(&b, e->text);
    }
    luaL_addstring(&b, "\n\nhelp \"name\" (or help(mf.name)) shows one function with an example.");
    luaL_pushresult(&b);
    emit(L);
}

static void show_topics(lua_State *L)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "moonflow help. Topics (help \"topic\" lists its functions):\n\n");
    for (const Topic *t = topics; t->name; t++) {
        char pad[16];
        snprintf(pad, sizeof pad, "  %-10s", t->name);
        luaL_addstring(&b, pad);
        add_wrapped_at(&b, t->about, "             ", strlen(pad));
        luaL_addchar(&b, '\n');
    }
    luaL_addstring(&b,
                   "\nhelp \"matmul\", help(mf.matmul) or help \"mf.random.normal\" shows one "
                   "function:\nits signature, what it does and an example. mf.config() shows the "
                   "version,\nBLAS and threads. Indices and axes are 1-based; options go in a "
                   "trailing table.");
    luaL_pushresult(&b);
    emit(L);
}

/* How close 'name' is to 'query' (lower is closer; 128: not close), twice
 * the edit distance, plus one when only the last part after a dot is that
 * close ("matmul" before "compat.matmul"). A name containing the query
 * counts as close. */
static size_t closeness(const char *query, const char *name)
{
    const char *dot = strrchr(name, '.');
    size_t d = 2 * (size_t)lmf_name_distance(query, name);
    if (dot && 2 * (size_t)lmf_name_distance(query, dot + 1) + 1 < d)
        d = 2 * (size_t)lmf_name_distance(query, dot + 1) + 1;
    size_t limit = strlen(query) / 3 > 2 ? strlen(query) / 3 : 2;
    if (d <= 2 * limit + 1)
        return d;
    if (strlen(query) >= 3 && strstr(name, query))
        return 2 * limit + 2;
    return 128;
}

static void suggest(lua_State *L, const char *query)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "help: no entry for '%s'.", query);
    luaL_addvalue(&b);
    int shown = 0;
    for (size_t d = 0; d <= 48 && shown < MAX_SUGGESTIONS; d++) {
        for (const LmfHelpEntry *e = all_entries(L); e->name && shown < MAX_SUGGESTIONS; e++) {
            if (closeness(query, e->name) != d)
                continue;
            luaL_addstring(&b, shown++ ? ", " : " Did you mean: ");
            luaL_addstring(&b, e->name);
        }
    }
    luaL_addstring(&b, shown ? "?" : "");
    luaL_addstring(&b, " help() lists the topics.");
    luaL_pushresult(&b);
    emit(L);
}

/* Looks for the value at 'idx' among the string keys of the table on
 * top, which is popped. Pushes prefix..key and returns 1 when found. */
static int search_table(lua_State *L, int idx, const char *prefix)
{
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, idx)) {
            lua_pushfstring(L, "%s%s", prefix, lua_tostring(L, -2));
            lua_replace(L, -4);
            lua_pop(L, 2);
            return 1;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* The tables of mf, in the order help(f) searches them for a function's
 * name, and what help(t) shows for each: the entry of that name, or a topic. */
static const struct {
    const char *field;
    const char *topic;
} mf_tables[] = {
    {"random", "random"}, {"test", "autodiff"}, {"nn", "nn"}, {"profiler", "profiling"},
    {"initializers", NULL}, {"data", "data"}, {"train", "training"}, {"dist", "training"},
    {"layers", NULL}, {"losses", NULL}, {"metrics", NULL}, {"linalg", "linalg"},
    {"onnx", "interchange"}, {"summary", "interchange"},
};

/* The name of the function at 'idx' in mf (upvalue 1), one of its tables
 * or the tensor methods, pushed; returns 0 (nothing pushed) when it is in none. */
static int push_function_name(lua_State *L, int idx)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    if (search_table(L, idx, ""))
        return 1;
    for (size_t i = 0; i < sizeof mf_tables / sizeof mf_tables[0]; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s.", mf_tables[i].field);
        lua_getfield(L, lua_upvalueindex(1), mf_tables[i].field);
        if (search_table(L, idx, prefix))
            return 1;
    }
    if (lua_getfield(L, lua_upvalueindex(1), "data") == LUA_TTABLE) {
        lua_getfield(L, -1, "Dataset");   /* its methods: ds:batch(n) */
        lua_remove(L, -2);
        if (search_table(L, idx, "data.Dataset."))
            return 1;
    } else {
        lua_pop(L, 1);
    }
    luaL_getmetatable(L, "mf.Tensor");
    if (lua_istable(L, -1) && lua_getfield(L, -1, "__index") == LUA_TFUNCTION &&
        lua_getupvalue(L, -1, 1)) {
        lua_replace(L, -3);
        lua_pop(L, 1);
    }
    return search_table(L, idx, "");
}

/* Strips "mf." and "x:" prefixes: "mf.random.normal" -> "random.normal",
 * "t:reduce_sum" -> "reduce_sum". */
static const char *plain_name(const char *s)
{
    if (strncmp(s, "mf.", 3) == 0)
        s += 3;
    const char *colon = strchr(s, ':');
    return colon ? colon + 1 : s;
}

/* Shows the entry or topic 'query' names; a typed name ('concepts') finds
 * a concept first ("gradients": the idea, not mf.gradients). */
static void help_name(lua_State *L, const char *query, bool concepts)
{
    const char *name = plain_name(query);
    const LmfHelpEntry *e = NULL;
    if (concepts) {   /* "forward mode" is concept.forward_mode */
        lua_pushfstring(L, "concept.%s", name);
        e = find_entry(L, luaL_gsub(L, lua_tostring(L, -1), " ", "_"));
        lua_pop(L, 2);
    }
    if (!e)
        e = find_entry(L, name);
    const Topic *t = find_topic(name);
    if (!e && !t)
        e = find_suffix(L, name);   /* "Saver" -> "train.Saver", "conv2d_backprop_input" */
    /* "initializers.zeros", "data.Dataset.batch": the longest prefix with
     * an entry (the table's or the class's, which covers its members). */
    for (size_t n = strlen(name); !e && !t && n > 0; n--) {
        if (name[n - 1] != '.')
            continue;
        lua_pushlstring(L, name, n - 1);
        e = find_entry(L, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    if (e)
        show_entry(L, e);
    else if (t)
        show_topic(L, t);
    else
        suggest(L, name);
}

/* The name of a function of Lua's standard library ("print",
 * "string.format"), pushed; returns 0 (nothing pushed) when it is none. */
static int push_lua_name(lua_State *L, int idx)
{
    static const char *const libs[] = {"string", "table", "math", "io", "os", "coroutine",
                                       "utf8", "debug", "package"};
    if (!lua_iscfunction(L, idx))   /* the user's own functions are Lua functions */
        return 0;
    lua_pushglobaltable(L);
    if (search_table(L, idx, ""))
        return 1;
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s.", libs[i]);
        lua_getglobal(L, libs[i]);
        if (search_table(L, idx, prefix))
            return 1;
    }
    return 0;
}

/* The classes whose methods a user meets on values (sess:run, opt:minimize)
 * and the help entry that documents them. */
static const struct {
    const char *metatable;
    const char *entry;
} method_owners[] = {
    {"mf.Session", "Session"},
    {"mf.Graph", "Graph"},
    {"mf.GradientTape", "GradientTape"},
    {"mf.train.Optimizer", "train.Optimizer"},
    {"mf.train.Saver", "train.Saver"},
    {"mf.Progress", "Progress"},
    {"mf.ProfileReport", "profile"},
    {"mf.Function", "trace"},
    {"mf.Variable", "Variable"},
};

/* Looks for the function at 'idx' among the methods of a metatable's
 * '__index' (a table, or the tables among a C function's upvalues). Pushes
 * the method's name and returns 1 when found. */
static int search_methods(lua_State *L, int idx, const char *metatable)
{
    luaL_getmetatable(L, metatable);
    int found = 0;
    if (lua_istable(L, -1)) {
        int type = lua_getfield(L, -1, "__index");
        int index = lua_gettop(L);
        if (type == LUA_TTABLE) {
            lua_pushvalue(L, index);
            found = search_table(L, idx, "");
        }
        for (int i = 1; !found && type == LUA_TFUNCTION && lua_getupvalue(L, index, i); i++)
            found = search_table(L, idx, "");
        if (found) {
            lua_replace(L, index - 1);   /* the name, where the metatable was */
            lua_settop(L, index - 1);
        } else {
            lua_settop(L, index - 2);
        }
    } else {
        lua_pop(L, 1);
    }
    return found;
}

/* help(obj.method): the method's own entry when there is one in the
 * class's topic (g.render), else the class's entry, which lists the
 * methods (sess.run: Session). Returns 0 when 'idx' is no such method. */
static int help_method(lua_State *L, int idx)
{
    for (size_t i = 0; i < sizeof method_owners / sizeof method_owners[0]; i++) {
        if (!search_methods(L, idx, method_owners[i].metatable))
            continue;
        const LmfHelpEntry *owner = find_entry(L, method_owners[i].entry);
        const LmfHelpEntry *own = find_entry(L, lua_tostring(L, -1));
        if (own && owner && strcmp(own->topic, owner->topic) != 0)
            own = NULL;
        lua_pushfstring(L, "%s is a method of %s; help for %s:\n", lua_tostring(L, -1),
                        method_owners[i].metatable, own ? own->name : method_owners[i].entry);
        emit(L);
        lua_pop(L, 1);
        if (own || owner)
            show_entry(L, own ? own : owner);
        return 1;
    }
    return 0;
}

/* help(mf.nn) and the like; returns 0 when the value is none of them. */
static int help_table(lua_State *L, int idx)
{
    for (size_t i = 0; i < sizeof mf_tables / sizeof mf_tables[0]; i++) {
        int same = lua_getfield(L, lua_upvalueindex(1), mf_tables[i].field) == LUA_TTABLE &&
                   lua_rawequal(L, idx, -1);
        lua_pop(L, 1);
        if (!same)
            continue;
        const LmfHelpEntry *e = find_entry(L, mf_tables[i].field);
        if (e)
            show_entry(L, e);
        else
            show_topic(L, find_topic(mf_tables[i].topic));
        return 1;
    }
    int top = lua_gettop(L);
    lua_getfield(L, lua_upvalueindex(1), "data");
    int dataset = lua_istable(L, -1) && lua_getfield(L, -1, "Dataset") == LUA_TTABLE &&
                  lua_rawequal(L, idx, -1);
    lua_settop(L, top);
    if (dataset)
        show_entry(L, find_entry(L, "data.Dataset"));
    return dataset;
}

/* help(obj) for an object with methods (an optimizer, a session, a
 * Dataset, a layer...): its class's entry when there is one, then its
 * methods. Returns 0 when the value has no methods. */
static int help_object(lua_State *L, int idx)
{
    const char *cls = luaL_getmetafield(L, idx, "__name") == LUA_TSTRING ? lua_tostring(L, -1)
                                                                         : "";
    for (size_t i = 0; i < sizeof method_owners / sizeof method_owners[0]; i++)
        if (strcmp(cls, method_owners[i].metatable) == 0 && find_entry(L, method_owners[i].entry))
            show_entry(L, find_entry(L, method_owners[i].entry));
    if (strcmp(cls, "mf.data.Dataset") == 0)
        show_entry(L, find_entry(L, "data.Dataset"));
    if (strncmp(cls, "mf.layers.", 10) == 0 && find_entry(L, cls + 3))   /* its layer's page */
        show_entry(L, find_entry(L, cls + 3));
    if (!lmf_help_methods(L, idx))
        return 0;
    emit(L);
    return 1;
}

/* help(x) for a value that is not a string: a function of mf or a method,
 * the mf table itself or one of its tables, or a tensor. */
static void help_value(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TFUNCTION && push_function_name(L, 1)) {
        help_name(L, lua_tostring(L, -1), false);
        return;
    }
    if (lua_type(L, 1) == LUA_TFUNCTION && help_method(L, 1))
        return;
    if (lua_rawequal(L, 1, lua_upvalueindex(1))) {
        show_topics(L);
        return;
    }
    if (lua_type(L, 1) == LUA_TTABLE && help_table(L, 1))
        return;
    if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING &&
        strcmp(lua_tostring(L, -1), "mf.Tensor") == 0) {
        show_entry(L, find_entry(L, "Tensor"));
        return;
    }
    if (help_object(L, 1))
        return;
    if (lua_type(L, 1) == LUA_TFUNCTION && lmf_cell_describe(L, 1, 0)) {
        emit(L);
        return;
    }
    if (lua_type(L, 1) == LUA_TFUNCTION && push_lua_name(L, 1)) {
        lua_pushfstring(L, "help: %s is part of Lua, not of mf; see the Lua 5.4 manual:\n"
                        "  https://www.lua.org/manual/5.4/manual.html#pdf-%s\n"
                        "help() lists moonflow's topics.", lua_tostring(L, -1),
                        lua_tostring(L, -1));
        emit(L);
        return;
    }
    lua_pushfstring(L, "help: no entry for this %s (help knows the functions of mf; "
                    "help() lists the topics)", luaL_typename(L, 1));
    emit(L);
}

int lmf_help(lua_State *L)
{
    lmf_check_nargs(L, "help", 1);
    if (lua_isnoneornil(L, 1))
        show_topics(L);
    else if (lua_type(L, 1) == LUA_TSTRING)
        help_name(L, lua_tostring(L, 1), true);
    else
        help_value(L);
    return 0;
}
