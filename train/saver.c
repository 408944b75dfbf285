/* saver.c — the Saver (see train.h): named Variables, optimizer slots and
 * non-slot variables and the global step saved to and restored from one
 * safetensors file (core/io/safetensors.h, atomic writes).
 *
 * Save and restore first build the list of entries (name, Variable, a
 * description for messages). A slot or beta power the optimizer has not made
 * yet is a "pending" entry: optional, and made (mf_optimizer_ensure_slots)
 * when the file has it, so a restored training continues exactly. Restore
 * checks everything before assigning anything.
 *
 * Graph mode: the Variables are handles of graph variables (their values
 * symbolic, giving dtype and shape for the checks); the values are read
 * from and written to the session passed to save and restore. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/io/safetensors.h"
#include "distributed/dist.h"
#include "optimizer_impl.h"

typedef struct SaverVar {
    char *name; /* owned */
    MfVariable *var;
} SaverVar;

struct MfSaver {
    SaverVar *vars;
    int nvars, capvars;
    MfOptimizer **opts;
    int nopts, capopts;
    char **extras; /* names of the last restore's unexpected entries (owned) */
    int nextras;
    bool graph;    /* holds a graph variable: save and restore need its Session */
};

/* One entry of a save or restore. */
typedef struct Entry {
    char name[256];
    char what[160];     /* "Variable 'w'", "slot \"m\" of 'w' (Adam)", ... */
    MfVariable *var;    /* borrowed; NULL while pending */
    MfOptimizer *opt;   /* pending: the optimizer that makes it */
    MfVariable *owner;  /* pending slot: its Variable; NULL for a beta power */
    int index;          /* slot or beta-power index */
    bool optional;
    int file;           /* index in the file, -1 when absent */
} Entry;

typedef struct Entries {
    Entry *e;
    int n, cap;
} Entries;

static char *dup_str(const char *s)
{
    size_t len = strlen(s) + 1;
    char *c = mf_alloc(len);
    if (c)
        memcpy(c, s, len);
    return c;
}

static void free_str(char *s)
{
    if (s)
        mf_dealloc(s, strlen(s) + 1);
}

/* Grows '*arr' (of 'size'-byte items, '*cap' of them) to hold one more. */
static MfStatus grow(void **arr, int n, int *cap, size_t size, const char *who)
{
    if (n < *cap)
        return MF_OK;
    int c = *cap ? *cap * 2 : 8;
    void *a = mf_alloc((size_t)c * size);
    if (!a)
        return mf_err_nomem(who, (unsigned long long)c * size);
    if (n)
        memcpy(a, *arr, (size_t)n * size);
    if (*cap)
        mf_dealloc(*arr, (size_t)*cap * size);
    *arr = a;
    *cap = c;
    return MF_OK;
}

MfSaver *mf_saver_new(void)
{
    MfSaver *s = mf_alloc_zeroed(sizeof *s);
    if (!s)
        mf_err_nomem("Saver", sizeof *s);
    return s;
}

static void clear_extras(MfSaver *s)
{
    for (int i = 0; i < s->nextras; i++)
        free_str(s->extras[i]);
    if (s->extras)
        mf_dealloc(s->extras, (size_t)s->nextras * sizeof *s->extras);
    s->extras = NULL;
    s->nextras = 0;
}

void mf_saver_free(MfSaver *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nvars; i++) {
        free_str(s->vars[i].name);
        mf_variable_release(s->vars[i].var);
    }
    if (s->capvars)
        mf_dealloc(s->vars, (size_t)s->capvars * sizeof *s->vars);
    for (int i = 0; i < s->nopts; i++)
        mf_optimizer_release(s->opts[i]);
    if (s->capopts)
        mf_dealloc(s->opts, (size_t)s->capopts * sizeof *s->opts);
    clear_extras(s);
    mf_dealloc(s, sizeof *s);
}

MfStatus mf_saver_add_variable(MfSaver *s, const char *name, MfVariable *v)
{
    if (!*name || strlen(name) >= 200)
        return mf_err_set(MF_EARG, "Saver: a name must have 1 to 199 characters, got \"%.40s\"",
                          name);
    for (int i = 0; i < s->nvars; i++)
        if (strcmp(s->vars[i].name, name) == 0)
            return mf_err_set(MF_EARG, "Saver: two Variables are saved as '%s': Variable '%s' "
                              "(id %lld) and Variable '%s' (id %lld); give a map {name = "
                              "Variable} to choose distinct names", name, s->vars[i].var->name,
                              (long long)s->vars[i].var->id, v->name, (long long)v->id);
    MfStatus st = grow((void **)&s->vars, s->nvars, &s->capvars, sizeof *s->vars, "Saver");
    char *copy = st == MF_OK ? dup_str(name) : NULL;
    if (st == MF_OK && !copy)
        st = mf_err_nomem("Saver", strlen(name) + 1);
    if (st != MF_OK)
        return st;
    mf_variable_retain(v);
    s->vars[s->nvars++] = (SaverVar){copy, v};
    s->graph |= mf_mode_variable_node(v) != NULL;
    return MF_OK;
}

MfStatus mf_saver_add_graph_variables(MfSaver *s, MfGraph *g)
{
    g = g ? g : mf_mode_graph();
    /* Eager Variables are registered nowhere (a live one may be garbage not
     * collected yet, or an optimizer's slot): "all of them" is unknowable */
    if (!g)
        return mf_err_set(MF_EARG, "Saver: give the Variables to save: mf.train.Saver{w, b} or "
                          "mf.train.Saver{var_list = {w, b}, optimizers = {opt}} (eager "
                          "Variables are not tracked; mf.train.Saver() with no argument saves "
                          "every variable of a graph, while it is built)");
    int n = mf_graph_variables(g, false, NULL, 0);
    if (n == 0)
        return mf_err_set(MF_EARG, "Saver: the graph has no variables to save");
    MfNode **nodes = mf_malloc((size_t)n * sizeof *nodes);
    if (!nodes)
        return mf_err_nomem("Saver", (size_t)n * sizeof *nodes);
    mf_graph_variables(g, false, nodes, n);
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++) {
        MfVariable *h = mf_train_graph_handle(nodes[i]);
        st = h ? mf_saver_add_variable(s, nodes[i]->name, h) : MF_ENOMEM;
        mf_variable_release(h);
    }
    mf_free(nodes);
    return st;
}

MfStatus mf_saver_check_session(const MfSaver *s, const MfSession *sess, const char *who)
{
    const char *verb = strcmp(who, "Saver.save") == 0 ? "save" : "restore";
    if (sess && !s->graph)
        return mf_err_set(MF_EARG, "%s: this Saver holds eager Variables, which keep their own "
                          "values: call saver:%s(path) without the Session (a Saver of graph "
                          "variables is made while the graph is built, inside g:as_default)",
                          who, verb);
    if (!sess && s->graph)
        return mf_err_set(MF_EARG, "%s: this Saver holds graph variables, whose values live in "
                          "a Session: call saver:%s(sess, path)", who, verb);
    return MF_OK;
}

MfStatus mf_saver_session_global_step(MfSession *sess, MfVariable **out)
{
    MfNode *n = mf_graph_find(mf_session_graph(sess), "global_step");
    *out = NULL;
    if (!n || n->kind != MF_NODE_VARIABLE)
        return MF_OK;
    *out = mf_train_graph_handle(n);
    return *out ? MF_OK : MF_ENOMEM;
}

MfStatus mf_saver_add_optimizer(MfSaver *s, MfOptimizer *o)
{
    MfStatus st = grow((void **)&s->opts, s->nopts, &s->capopts, sizeof *s->opts, "Saver");
    if (st != MF_OK)
        return st;
    mf_optimizer_retain(o);
    s->opts[s->nopts++] = o;
    return MF_OK;
}

MfStatus mf_saver_check_not_empty(const MfSaver *s)
{
    if (s->nvars == 0)
        return mf_err_set(MF_EARG, "Saver: no Variables to save (var_list is empty)");
    return MF_OK;
}

int mf_saver_nvars(const MfSaver *s)
{
    return s->nvars;
}

int mf_saver_nopts(const MfSaver *s)
{
    return s->nopts;
}

int mf_saver_extras(const MfSaver *s, char *const **names)
{
    *names = s->extras;
    return s->nextras;
}

/* ---- entries ----------------------------------------------------------------------- */

static Entry *push_entry(Entries *es, const char *name)
{
    if (grow((void **)&es->e, es->n, &es->cap, sizeof *es->e, "Saver") != MF_OK)
        return NULL;
    Entry *e = &es->e[es->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->file = -1;
    return e;
}

static void free_entries(Entries *es)
{
    if (es->cap)
        mf_dealloc(es->e, (size_t)es->cap * sizeof *es->e);
}

/* The slots of the saved Variable 'sv' for optimizer 'o'. 'restoring': slots
 * not made yet become pending entries; saving skips them. */
static MfStatus add_slots(Entries *es, MfOptimizer *o, const SaverVar *sv, bool restoring)
{
    const char *names[MF_OPT_MAX_SLOTS];
    int n = mf_optimizer_slot_names(o, names);
    if (!sv->var->value || !mf_dtype_is_float(sv->var->value->dtype))
        return MF_OK;
    for (int k = 0; k < n; k++) {
        MfVariable *slot;
        mf_optimizer_get_slot(o, sv->var, names[k], &slot);
        if (!slot && !restoring)
            continue;
        char name[256];
        snprintf(name, sizeof name, k ? "%s/%s_%d" : "%s/%s", sv->name,
                 mf_optimizer_config(o)->name, k);
        Entry *e = push_entry(es, name);
        if (!e)
            return MF_ENOMEM;
        e->var = slot;
        e->opt = o;
        e->owner = sv->var;
        e->index = k;
        e->optional = !slot;
        snprintf(e->what, sizeof e->what, "slot \"%s\" of '%s' (%s)", names[k], sv->name,
                 mf_optimizer_config(o)->name);
    }
    return MF_OK;
}

/* The descriptor's non-slot state (Adam's beta1_power and beta2_power). */
static MfStatus add_nonslots(Entries *es, MfOptimizer *o, bool restoring)
{
    const MfOptClass *d = mf_opt_desc(o);
    for (int k = 0; k < d->npowers; k++) {
        const char *name = d->powers[k].name;
        MfVariable *v = mf_optimizer_nonslot(o, name);
        if (!v && !restoring)
            continue;
        Entry *e = push_entry(es, name);
        if (!e)
            return MF_ENOMEM;
        e->var = v;
        e->opt = o;
        e->index = k;
        e->optional = !v;
        snprintf(e->what, sizeof e->what, "%s of optimizer '%s'", name,
                 mf_optimizer_config(o)->name);
    }
    return MF_OK;
}

/* Two entries with one name: an error naming both. */
static MfStatus check_clashes(const Entries *es, const char *who)
{
    for (int i = 0; i < es->n; i++)
        for (int j = i + 1; j < es->n; j++)
            if (strcmp(es->e[i].name, es->e[j].name) == 0)
                return mf_err_set(MF_EARG, "%s: two entries are named '%s': %s and %s", who,
                                  es->e[i].name, es->e[i].what, es->e[j].what);
    return MF_OK;
}

/* Every entry of a save ('restoring' false) or restore. */
static MfStatus build(const MfSaver *s, Entries *es, MfVariable *gs, bool gs_optional,
                      bool restoring, const char *who)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < s->nvars && st == MF_OK; i++) {
        Entry *e = push_entry(es, s->vars[i].name);
        st = e ? MF_OK : MF_ENOMEM;
        if (e) {
            e->var = s->vars[i].var;
            snprintf(e->what, sizeof e->what, "Variable '%s'", s->vars[i].var->name);
        }
    }
    bool gs_listed = false;
    for (int i = 0; i < s->nvars; i++)
        gs_listed = gs_listed || s->vars[i].var == gs ||
                    (gs && mf_opt_graph_node(gs) &&
                     mf_opt_graph_node(s->vars[i].var) == mf_opt_graph_node(gs));
    if (st == MF_OK && gs && !gs_listed) {
        Entry *e = push_entry(es, "global_step");
        st = e ? MF_OK : MF_ENOMEM;
        if (e) {
            e->var = gs;
            e->optional = gs_optional;
            snprintf(e->what, sizeof e->what, "the global step");
        }
    }
    for (int k = 0; k < s->nopts && st == MF_OK; k++) {
        for (int i = 0; i < s->nvars && st == MF_OK; i++)
            st = add_slots(es, s->opts[k], &s->vars[i], restoring);
        if (st == MF_OK)
            st = add_nonslots(es, s->opts[k], restoring);
    }
    return st == MF_OK ? check_clashes(es, who) : st;
}

/* ---- values: a Variable's own, or a graph variable's in the session ----------------- */

/* The VARIABLE node behind a graph Variable handle, or NULL (eager). */
static const MfNode *node_of(const MfVariable *v)
{
    return mf_opt_graph_node(v);
}

/* The value of 'v' now (owned): eager, its own; graph, the session's. */
static MfStatus value_of(MfSession *sess, const Entry *e, const char *who, MfTensor **out)
{
    const MfNode *n = node_of(e->var);
    *out = NULL;
    if (!n) {
        if (!e->var->value)
            return mf_err_set(MF_EARG, "%s: %s has no value yet", who, e->what);
        mf_tensor_retain(e->var->value);
        *out = e->var->value;
        return MF_OK;
    }
    if (!sess)
        return mf_err_set(MF_EARG, "%s: %s is a graph variable: its value lives in a Session, "
                          "pass it: saver:save(sess, path) / saver:restore(sess, path)", who,
                          e->what);
    MfStatus st = mf_session_variable_value(sess, n, out);
    if (st != MF_OK)
        mf_err_prefix("%s: %s", who, e->what);
    return st;
}

/* Assigns 't' to the entry's Variable (its session value in graph mode). */
static MfStatus set_value(MfSession *sess, const Entry *e, MfTensor *t)
{
    const MfNode *n = node_of(e->var);
    return n ? mf_session_set_variable(sess, n, t) : mf_variable_assign(e->var, t);
}

/* ---- save -------------------------------------------------------------------------- */

static void release_all(MfTensor **ts, int n)
{
    for (int i = 0; ts && i < n; i++)
        mf_tensor_release(ts[i]);
}

MfStatus mf_saver_save(MfSaver *s, const char *path, MfVariable *global_step)
{
    return mf_saver_save_session(s, NULL, path, global_step);
}

/* In a session the global step, when none is given, is the "global_step"
 * variable of its graph: '*step' is then a new handle, also in '*own' (to
 * release). */
static MfStatus session_step(MfSession *sess, MfVariable **step, MfVariable **own)
{
    *own = NULL;
    if (!sess || *step)
        return MF_OK;
    MfStatus st = mf_saver_session_global_step(sess, own);
    *step = *own;
    return st;
}

static MfStatus save_here(MfSaver *s, MfSession *sess, const char *path,
                          MfVariable *global_step)
{
    Entries es = {0};
    MfVariable *own;
    MfStatus st = session_step(sess, &global_step, &own);
    if (st == MF_OK)
        st = build(s, &es, global_step, false, false, "Saver.save");
    const char **names = NULL;
    MfTensor **tensors = NULL;
    size_t cap = (size_t)(es.n ? es.n : 1);
    if (st == MF_OK) {
        names = mf_alloc(cap * sizeof *names);
        tensors = mf_alloc_zeroed(cap * sizeof *tensors);
        if (!names || !tensors)
            st = mf_err_nomem("Saver.save", cap * (sizeof *names + sizeof *tensors));
    }
    for (int i = 0; i < es.n && st == MF_OK; i++) {
        names[i] = es.e[i].name;
        st = value_of(sess, &es.e[i], "Saver.save", &tensors[i]);
    }
    if (st == MF_OK) {
        st = mf_safetensors_write(path, es.n, names, tensors, NULL);
        if (st != MF_OK)
            mf_err_prefix("Saver.save");
    }
    release_all(tensors, es.n);
    mf_dealloc(names, cap * sizeof *names);
    mf_dealloc(tensors, cap * sizeof *tensors);
    free_entries(&es);
    mf_variable_release(own);
    return st;
}

/* In a run of several processes (distributed/) only rank 0 writes; the others
 * wait for it and return its status, so every process fails when the write
 * does and none reads a file before it is complete. */
MfStatus mf_saver_save_session(MfSaver *s, MfSession *sess, const char *path,
                               MfVariable *global_step)
{
    if (mf_dist_size() == 1)
        return save_here(s, sess, path, global_step);
    MfStatus st = mf_dist_check("Saver.save", path);
    if (st == MF_OK)
        st = mf_dist_rank() == 0 ? save_here(s, sess, path, global_step) : MF_OK;
    return st == MF_OK || mf_dist_rank() == 0 ? mf_dist_share_status(0, st) : st;
}

/* ---- restore ----------------------------------------------------------------------- */

/* The problems a restore found, joined for one message. */
typedef struct Report {
    char buf[800];
    size_t len;
    int count;
} Report;

static void report(Report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(Report *r, const char *fmt, ...)
{
    r->count++;
    if (r->len + 1 >= sizeof r->buf)
        return;
    if (r->len)
        r->len += (size_t)snprintf(r->buf + r->len, sizeof r->buf - r->len, "; ");
    va_list ap;
    va_start(ap, fmt);
    int n = r->len + 1 < sizeof r->buf
                ? vsnprintf(r->buf + r->len, sizeof r->buf - r->len, fmt, ap) : 0;
    va_end(ap);
    r->len += n > 0 ? (size_t)n : 0;
    if (r->len + 1 >= sizeof r->buf) {
        r->len = sizeof r->buf - 1;
        memcpy(r->buf + r->len - 3, "...", 4);
    }
}

static int find_name(char **names, int n, const char *name)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(names[mid], name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static bool same_shape(const MfTensor *a, const MfTensor *b)
{
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape) == 0;
}

/* Checks the file tensor 't' against entry 'e'. */
static void check_entry(Report *r, const Entry *e, const MfTensor *t)
{
    const MfTensor *want = e->var ? e->var->value : e->owner ? e->owner->value : NULL;
    char fs[96], ws[96];
    mf_shape_str(t->rank, t->shape, fs, sizeof fs);
    if (e->var && !want) {
        report(r, "%s has no value yet (graph mode: run its initializer first)", e->what);
    } else if (!want) {
        if (t->rank != 0 || !mf_dtype_is_float(t->dtype))
            report(r, "'%s': the file has %s %s, %s must be a float scalar", e->name,
                   mf_dtype_name(t->dtype), fs, e->what);
    } else if (!same_shape(t, want)) {
        report(r, "'%s': the file has %s %s, %s is %s %s", e->name, mf_dtype_name(t->dtype),
               fs, e->what, mf_dtype_name(want->dtype),
               mf_shape_str(want->rank, want->shape, ws, sizeof ws));
    }
}

/* A pending entry absent from the file is missing when a sibling (same
 * optimizer and Variable) is present: its state would be half restored. */
static bool sibling_present(const Entries *es, const Entry *e)
{
    for (int i = 0; i < es->n; i++) {
        const Entry *o = &es->e[i];
        if (o != e && o->opt == e->opt && o->owner == e->owner && !o->var && o->file >= 0)
            return true;
    }
    return false;
}

static bool is_used(const Entries *es, int j)
{
    for (int i = 0; i < es->n; i++)
        if (es->e[i].file == j)
            return true;
    return false;
}

/* Matches entries with the file, reports problems, keeps the extras. */
static void match(MfSaver *s, Entries *es, int n, char **names, MfTensor **tensors,
                  bool strict, Report *r)
{
    for (int i = 0; i < es->n; i++) {
        Entry *e = &es->e[i];
        e->file = find_name(names, n, e->name);
        if (e->file >= 0)
            check_entry(r, e, tensors[e->file]);
    }
    for (int i = 0; i < es->n; i++) {
        const Entry *e = &es->e[i];
        if (e->file < 0 && (!e->optional || (!e->var && e->opt && sibling_present(es, e))))
            report(r, "missing '%s' (%s)", e->name, e->what);
    }
    clear_extras(s);
    int nextra = 0;
    for (int j = 0; j < n; j++)
        nextra += !is_used(es, j);
    s->extras = nextra ? mf_alloc_zeroed((size_t)nextra * sizeof *s->extras) : NULL;
    s->nextras = s->extras ? nextra : 0;
    for (int j = 0, k = 0; j < n; j++) {
        if (is_used(es, j))
            continue;
        if (strict)
            report(r, "unexpected '%s' in the file (strict)", names[j]);
        if (s->extras)
            s->extras[k++] = dup_str(names[j]);
    }
}

/* Makes the slots and powers the file has and the optimizers do not
 * (eager mode; in graph mode they are variables that apply_gradients adds,
 * so a file that has them needs the train op built first). */
static MfStatus make_pending(Entries *es, MfTensor **tensors, MfSession *sess)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < es->n; i++) {
        const Entry *e = &es->e[i];
        if (!e->var && e->file >= 0 && (sess || node_of(e->owner)))
            return mf_err_set(MF_EARG, "Saver.restore: the file has '%s' (%s), which this graph "
                              "does not have yet: build the train op (opt:minimize) before "
                              "restoring", e->name, e->what);
    }
    for (int i = 0; i < es->n && st == MF_OK; i++)
        if (!es->e[i].var && es->e[i].file >= 0 && es->e[i].owner)
            st = mf_optimizer_ensure_slots(es->e[i].opt, es->e[i].owner);
    for (int i = 0; i < es->n && st == MF_OK; i++) {
        Entry *e = &es->e[i];
        if (e->var || e->file < 0)
            continue;
        if (e->owner) {
            const char *names[MF_OPT_MAX_SLOTS];
            mf_optimizer_slot_names(e->opt, names);
            st = mf_optimizer_get_slot(e->opt, e->owner, names[e->index], &e->var);
        } else {
            const char *name = mf_opt_desc(e->opt)->powers[e->index].name;
            if (!mf_optimizer_nonslot(e->opt, name))
                st = mf_opt_powers_prepare(e->opt, tensors[e->file]->dtype);
            e->var = mf_optimizer_nonslot(e->opt, name);
        }
    }
    return st;
}

/* Checks again (made slots included), then assigns every present entry. */
static MfStatus assign_all(Entries *es, MfTensor **tensors, const char *path, MfSession *sess)
{
    for (int i = 0; i < es->n; i++)
        if (es->e[i].file >= 0 && es->e[i].var && node_of(es->e[i].var) && !sess)
            return mf_err_set(MF_EARG, "Saver.restore: %s is a graph variable: its value lives "
                              "in a Session, pass it: saver:restore(sess, path)", es->e[i].what);
    Report r = {.len = 0};
    for (int i = 0; i < es->n; i++)
        if (es->e[i].file >= 0 && (!es->e[i].var || !es->e[i].var->value ||
                                   !same_shape(es->e[i].var->value, tensors[es->e[i].file])))
            report(&r, "'%s' does not fit %s", es->e[i].name, es->e[i].what);
    if (r.count)
        return mf_err_set(MF_EARG, "Saver.restore: '%s': %s", path, r.buf);
    MfStatus st = MF_OK;
    for (int i = 0; i < es->n && st == MF_OK; i++)
        if (es->e[i].file >= 0)
            st = set_value(sess, &es->e[i], tensors[es->e[i].file]);
    return st;
}

MfStatus mf_saver_restore_session(MfSaver *s, MfSession *sess, const char *path, bool strict,
                                  MfVariable *global_step, bool gs_optional)
{
    Entries es = {0};
    MfVariable *own;
    MfStatus st = session_step(sess, &global_step, &own);
    if (st == MF_OK)
        st = build(s, &es, global_step, gs_optional, true, "Saver.restore");
    int n = 0;
    char **names = NULL;
    MfTensor **tensors = NULL;
    if (st == MF_OK && (st = mf_safetensors_read(path, &n, &names, &tensors)) != MF_OK)
        mf_err_prefix("Saver.restore");
    if (st == MF_OK) {
        Report r = {.len = 0};
        match(s, &es, n, names, tensors, strict, &r);
        if (r.count)
            st = mf_err_set(MF_EARG, "Saver.restore: '%s' does not fit the saver (%d problem%s): "
                            "%s", path, r.count, r.count > 1 ? "s" : "", r.buf);
    }
    if (st == MF_OK)
        st = make_pending(&es, tensors, sess);
    if (st == MF_OK)
        st = assign_all(&es, tensors, path, sess);
    mf_safetensors_free(n, names, tensors);
    free_entries(&es);
    mf_variable_release(own);
    return st;
}
