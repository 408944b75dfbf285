/* grad_registry.c — the registry of named gradients and the stack of
 * override scopes (see grad_registry.h). Both are small arrays: a program
 * registers a handful of gradients and nests few override maps. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grad_registry.h"
#include "shape.h"

typedef struct Entry {
    char *name;
    MfGradFn *fn;
} Entry;

static Entry *entries;
static int nentries, capentries;

typedef struct Override {
    MfOpId op;
    MfGradFn *fn;
} Override;

static Override *scopes;
static int nscopes, capscopes;

MfGradFn *mf_grad_find(const char *name)
{
    for (int i = 0; i < nentries; i++)
        if (strcmp(entries[i].name, name) == 0)
            return entries[i].fn;
    return NULL;
}

MfStatus mf_grad_register(const char *name, MfGradFn *f)
{
    if (!name[0])
        return mf_err_set(MF_EARG, "RegisterGradient: the name must not be empty");
    if (mf_grad_find(name))
        return mf_err_set(MF_EARG, "RegisterGradient: a gradient named '%s' is registered "
                          "already (TensorFlow: \"Registering two gradient with name\"); pick "
                          "another name", name);
    if (nentries == capentries) {
        int cap = capentries ? 2 * capentries : 8;
        Entry *e = realloc(entries, (size_t)cap * sizeof *e);
        if (!e)
            return mf_err_nomem("RegisterGradient", (unsigned long long)cap * sizeof *e);
        entries = e;
        capentries = cap;
    }
    char *copy = malloc(strlen(name) + 1);
    if (!copy)
        return mf_err_nomem("RegisterGradient", strlen(name) + 1);
    strcpy(copy, name);
    f->name = copy;
    entries[nentries++] = (Entry){copy, f};
    return MF_OK;
}

int mf_grad_count(void)
{
    return nentries;
}

int mf_grad_override_begin(MfOpId op, MfGradFn *f)
{
    if (nscopes == capscopes) {
        int cap = capscopes ? 2 * capscopes : 8;
        Override *s = realloc(scopes, (size_t)cap * sizeof *s);
        if (!s) {
            mf_err_nomem("gradient_override_map", (unsigned long long)cap * sizeof *s);
            return -1;
        }
        scopes = s;
        capscopes = cap;
    }
    scopes[nscopes] = (Override){op, f};
    return nscopes++;
}

void mf_grad_override_end(int mark)
{
    if (mark >= 0 && mark < nscopes)
        nscopes = mark;
}

MfGradFn *mf_grad_override(MfOpId op)
{
    for (int i = nscopes - 1; i >= 0; i--)
        if (scopes[i].op == op)
            return scopes[i].fn;
    return NULL;
}

int mf_grad_override_begin_named(const char *type, const char *name)
{
    MfOpId op = mf_op_find(type);
    if (op == MF_NOPS) {
        mf_err_set(MF_EARG, "gradient_override_map: no op type '%s' (op types are "
                   "TensorFlow's names, e.g. Square, AddV2, MatMul; mf.ops() lists them)", type);
        return -1;
    }
    MfGradFn *f = mf_grad_find(name);
    if (!f) {
        mf_err_set(MF_EARG, "gradient_override_map: no gradient registered as '%s' (register "
                   "it first with mf.RegisterGradient(\"%s\", fn))", name, name);
        return -1;
    }
    return mf_grad_override_begin(op, f);
}

/* Whether every dim the two shapes both have is known (>= 0). */
static bool dims_known(const MfTensor *a, const MfTensor *b)
{
    for (int k = 0; k < a->rank && k < b->rank; k++)
        if (a->shape[k] < 0 || b->shape[k] < 0)
            return false;
    return true;
}

MfStatus mf_grad_check_result(const MfGradFn *f, const MfGradCall *g, int i, const MfTensor *dx)
{
    const MfTensor *x = g->call->inputs[i];
    if (!dx || !dims_known(x, dx) || mf_shape_equal_t(dx, x))
        return MF_OK;
    char want[96], got[96];
    return mf_err_set(MF_EARG, "gradient '%s' (registered for %s): result %d has shape %s, but "
                      "input %d has shape %s", f->name, mf_op_table[g->call->op]->name, i + 1,
                      mf_shape_str(dx->rank, dx->shape, got, sizeof got), i + 1,
                      mf_shape_str(x->rank, x->shape, want, sizeof want));
}
