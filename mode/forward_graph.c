/* forward_graph.c — forward mode's transposed rules (eager/jvp.c's
 * TRANSPOSE: softmaxes, pools, normalisations, linear algebra, Pow, ...) on
 * a graph being built (mf.trace, g:as_default). Eagerly the rule takes
 * d<backward(u), t>/du with a tape; a graph being built takes the ops, so
 * here the rule asks for the symbolic gradient over the nodes it built
 * since it began, as a GradientTape's window does (tape_window.c). eager/
 * cannot see graphs, so these are hooks (eager/jvp.h), registered once by
 * mf_forward_graph_register (mode.h). Nothing is owned here: the gradients
 * go to the caller. */
#include <limits.h>

#include "eager/jvp.h"
#include "graph/gradients.h"
#include "mode.h"

/* The node count of the graph an op on 'like' goes into (-1: none). */
static int64_t mark(const MfTensor *like)
{
    MfGraph *g = mf_mode_graph_of(like);
    return g ? mf_graph_nnodes(g) : -1;
}

/* d(s)/d(u[i]) over the nodes built since 'lo': the rule's own. */
static MfStatus gradients(int64_t lo, MfTensor *s, int n, MfTensor *const *u, MfTensor **grads)
{
    MfGraph *g = mf_mode_graph_of(s);
    if (!g || lo < 0 || lo > INT_MAX)
        return mf_err_set(MF_EARG, "forward mode: the transposed rule found no graph being "
                          "built");
    return mf_graph_gradients_window(g, 1, &s, n, u, NULL, (int)lo, INT_MAX, grads);
}

static const MfJvpGraphHooks hooks = {.mark = mark, .gradients = gradients};

void mf_forward_graph_register(void)
{
    mf_jvp_set_graph_hooks(&hooks);
}
