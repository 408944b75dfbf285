/* custom_reads.c — the trainable variables read while a custom_gradient's
 * function runs under a recording tape (eager.h: mf_tape_custom_begin).
 * Their gradients come from the user's gradient function as TensorFlow's
 * 'variables' (custom_gradient passes them to it), not silently nowhere. */
#include "tape_impl.h"

enum { MAX_NOTED = 16 };   /* the first few are enough to name one */

static MfVariable *noted[MAX_NOTED];   /* retained */
static int nnoted;
static int depth;                      /* nested custom_gradient calls */

int mf_tape_custom_begin(void)
{
    depth++;
    return nnoted;
}

void mf_tape_note_custom_read_(MfVariable *v)
{
    if (!depth || nnoted == MAX_NOTED)
        return;
    for (int i = 0; i < nnoted; i++)
        if (noted[i] == v)
            return;
    mf_variable_retain(v);
    noted[nnoted++] = v;
}

static bool among(const MfVariable *v, int n, MfVariable *const *vs)
{
    for (int i = 0; i < n; i++)
        if (vs[i] == v)
            return true;
    return false;
}

int mf_tape_custom_end_all(int mark, int n, MfVariable *const *inputs, MfVariable **out,
                           int cap)
{
    int k = 0;
    if (depth > 0)
        depth--;
    for (int i = mark; i < nnoted; i++) {
        if (k < cap && !among(noted[i], n, inputs))
            out[k++] = noted[i];   /* the reference passes to the caller */
        else
            mf_variable_release(noted[i]);
        noted[i] = NULL;
    }
    if (mark < nnoted)
        nnoted = mark;
    return k;
}

MfVariable *mf_tape_custom_end(int mark, int n, MfVariable *const *inputs)
{
    MfVariable *found = NULL;
    if (depth > 0)
        depth--;
    for (int i = mark; i < nnoted; i++) {
        if (!found && !among(noted[i], n, inputs))
            found = noted[i];   /* the reference passes to the caller */
        else
            mf_variable_release(noted[i]);
        noted[i] = NULL;
    }
    if (mark < nnoted)
        nnoted = mark;
    return found;
}
