/* conv_algo.c — which kernel runs a convolution (see conv.h "Algorithms"):
 * the process-wide setting (mf.config{conv_algorithm = ...}), a call's own
 * choice, the rule 'auto' follows, and the dispatch to the direct and
 * Winograd kernels (im2col stays in conv.c). */
#include <string.h>

#include "common.h"
#include "conv.h"
#include "../profile/profile.h"

const char *const mf_conv_algo_names[] = {
    [MF_CONV_AUTO] = "auto", [MF_CONV_IM2COL] = "im2col", [MF_CONV_WINOGRAD] = "winograd",
    [MF_CONV_DIRECT] = "direct", [MF_CONV_NALGOS] = NULL,
};
_Static_assert(MF_COUNTOF(mf_conv_algo_names) == MF_CONV_NALGOS + 1,
               "one name per MfConvAlgo, then NULL");

static MfConvAlgo setting = MF_CONV_AUTO;

const char *const *mf_conv_algorithm_names(void)
{
    return mf_conv_algo_names;
}

int mf_conv_algorithm_parse(const char *name)
{
    for (int i = 0; name && mf_conv_algo_names[i]; i++)
        if (strcmp(name, mf_conv_algo_names[i]) == 0)
            return i;
    return -1;
}

void mf_conv_set_algorithm(MfConvAlgo a)
{
    setting = a;
}

MfConvAlgo mf_conv_get_algorithm(void)
{
    return setting;
}

bool mf_conv_winograd_fits(const MfConvGeom *g)
{
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1;
}

MfConvAlgo mf_conv_choose(const MfConvGeom *g, MfDType dt, MfConvAlgo wanted)
{
    MfConvAlgo a = wanted == MF_CONV_AUTO ? setting : wanted;
    if (dt != MF_FLOAT32)
        return MF_CONV_IM2COL; /* float64 stays exact: no transforms, BLAS's DGEMM */
    if (a == MF_CONV_DIRECT && !mf_conv_direct_fits(g))
        return MF_CONV_IM2COL;
    if (a == MF_CONV_AUTO) {
        if (g->C <= MF_CONV_DIRECT_MAX_CIN && mf_conv_direct_fits(g))
            return MF_CONV_DIRECT;
        if (mf_conv_winograd_fits(g) && g->C >= MF_CONV_WINOGRAD_MIN_CH &&
            g->O >= MF_CONV_WINOGRAD_MIN_CH)
            return MF_CONV_WINOGRAD;
        return MF_CONV_IM2COL;
    }
    if (a == MF_CONV_WINOGRAD && !mf_conv_winograd_fits(g))
        return MF_CONV_IM2COL;
    return a;
}

/* The direct kernel of the op; in a profile one step "direct", so that
 * prof:gemms() shows where a convolution without GEMMs spent its time. */
static MfStatus run_direct(const MfOpCall *c, const MfConvGeom *g, const float *p,
                           const float *q, float *y)
{
    const char *op = mf_op_table[c->op]->name;
    double t0 = mf_prof_on ? mf_prof_now_us() : 0;
    MfStatus st = c->op == MF_OP_CONV2D ? mf_conv_direct_forward(op, g, p, q, y)
                  : c->op == MF_OP_CONV2D_BACKPROP_INPUT
                      ? mf_conv_direct_backprop_input(op, g, p, q, y)
                      : mf_conv_direct_backprop_filter(op, g, p, q, y);
    if (mf_prof_on)
        mf_prof_add_step(op, "direct", (double)(g->N * g->H * g->W * g->C) * 4, t0,
                         mf_prof_now_us() - t0);
    return st;
}

/* Runs the chosen kernel on contiguous copies of the inputs. */
static MfStatus run(const MfOpCall *c, const MfConvGeom *g, MfConvAlgo a, MfTensor *out)
{
    MfTensor *in[2] = {mf_tensor_contiguous(c->inputs[0]), mf_tensor_contiguous(c->inputs[1])};
    MfStatus st = in[0] && in[1] ? MF_OK : MF_ENOMEM;
    const char *op = mf_op_table[c->op]->name;
    const float *p = st == MF_OK ? mf_tensor_data(in[0]) : NULL;
    const float *q = st == MF_OK ? mf_tensor_data(in[1]) : NULL;
    float *y = mf_tensor_data(out);
    if (st != MF_OK)
        ;
    else if (a == MF_CONV_DIRECT)
        st = run_direct(c, g, p, q, y);
    else if (c->op == MF_OP_CONV2D)
        st = mf_winograd_forward(op, g, p, q, y);
    else if (c->op == MF_OP_CONV2D_BACKPROP_INPUT)
        st = mf_winograd_backprop_input(op, g, p, q, y);
    else
        st = mf_winograd_backprop_filter(op, g, p, q, y);
    mf_tensor_release(in[0]);
    mf_tensor_release(in[1]);
    return st;
}

bool mf_conv_fast_path(const MfOpCall *c, const MfConvGeom *g, MfTensor *out, MfStatus *st)
{
    MfConvAlgo a = mf_conv_choose(g, c->inputs[0]->dtype, (MfConvAlgo)c->attrs->conv_algorithm);
    mf_prof_note_algorithm(mf_conv_algo_names[a]);   /* the profile's row says which ran */
    if (a == MF_CONV_IM2COL || g->N * g->H * g->W * g->C * g->O == 0 ||
        g->N * g->Ho * g->Wo == 0)
        return false;
    *st = run(c, g, a, out);
    return true;
}
