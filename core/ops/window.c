/* window.c — the geometry of windowed ops (see window.h for the rule). */
#include "window.h"

#include "../dtype.h"
#include "../shape.h"

#define SHAPE_BUF 160

const char *const mf_padding_names[] = {"VALID", "SAME", NULL};
const char *const mf_data_format_names[] = {"NHWC", "NCHW", NULL};
_Static_assert(MF_COUNTOF(mf_padding_names) == MF_NPADDINGS + 1, "one name per MfPadding");
_Static_assert(MF_COUNTOF(mf_data_format_names) == MF_NDATA_FORMATS + 1,
               "one name per MfDataFormat");

const int64_t mf_nchw_to_nhwc[4] = {0, 2, 3, 1}, mf_nhwc_to_nchw[4] = {0, 3, 1, 2};

int64_t mf_window_one_if_zero(int64_t v)
{
    return v == 0 ? 1 : v;
}

int64_t mf_window_extent(int64_t k, int64_t d)
{
    int64_t e;
    if (k < 1)
        return 1;
    if (__builtin_mul_overflow(k - 1, d, &e) || e == INT64_MAX)
        return INT64_MAX;
    return e + 1;
}

void mf_window_axis(MfPadding padding, int64_t in, int64_t k, int64_t s, int64_t d,
                    int64_t *out, int64_t *pad_before, int64_t *pad_after)
{
    int64_t ek = mf_window_extent(k, d), total = 0;
    if (in < 0 || k < 0) {
        *out = -1;
    } else if (padding == MF_PADDING_SAME) {
        /* ceil(in / s) without in + s - 1; pad_total is ek - (in - (out - 1) * s),
         * whose subtrahend lies in [1, s] (s for in = 0), without (out - 1) * s + ek */
        *out = in == 0 ? 0 : (in - 1) / s + 1;
        total = ek - (in - (*out - 1) * s);
        total = total > 0 ? total : 0;
    } else {
        /* a span over int64 (INT64_MAX) fits no input */
        *out = ek > in || ek == INT64_MAX ? 0 : (in - ek) / s + 1;
    }
    *pad_before = total / 2;
    if (pad_after)
        *pad_after = total - total / 2;
}

MfAttrs mf_window_nhwc_attrs(const MfAttrs *a, MfDataFormat format)
{
    MfAttrs at = *a;
    at.data_format = MF_NHWC;
    if (format == MF_NCHW)
        for (int i = 0; i < 4; i++) {
            at.strides[i] = a->strides[mf_nchw_to_nhwc[i]];
            at.dilations[i] = a->dilations[mf_nchw_to_nhwc[i]];
            at.ksize[i] = a->ksize[mf_nchw_to_nhwc[i]];
        }
    return at;
}

MfStatus mf_window_check_padding(const char *fname, int padding)
{
    if (padding == MF_PADDING_VALID || padding == MF_PADDING_SAME)
        return MF_OK;
    return mf_err_set(MF_EARG, "%s: padding must be VALID (0) or SAME (1), got %d", fname,
                      padding);
}

MfStatus mf_window_check_steps(const char *fname, const int64_t v[4], const char *what,
                               MfDataFormat format)
{
    int64_t e[4];
    for (int i = 0; i < 4; i++)
        e[i] = mf_window_one_if_zero(v[i]);
    const char *order = format == MF_NCHW ? " (NCHW)" : "";
    int n = 0, h = format == MF_NCHW ? 2 : 1;
    int w = h + 1, ch = format == MF_NCHW ? 1 : 3;
    if (e[h] < 1 || e[w] < 1)
        return mf_err_set(MF_EARG, "%s: %s must be positive, got {%lld, %lld, %lld, %lld}%s",
                          fname, what, (long long)e[0], (long long)e[1], (long long)e[2],
                          (long long)e[3], order);
    if (e[n] != 1 || e[ch] != 1)
        return mf_err_set(MF_EARG, "%s: %s on the batch and channel axes must be 1, got "
                          "{%lld, %lld, %lld, %lld}%s", fname, what, (long long)e[0],
                          (long long)e[1], (long long)e[2], (long long)e[3], order);
    return MF_OK;
}

MfStatus mf_window_check_rank4(const char *fname, const MfTensor *t, const char *what,
                               const char *layout)
{
    if (t->rank == 4)
        return MF_OK;
    char buf[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "%s: expected %s of rank 4 (%s), got shape %s (rank %d)",
                      fname, what, layout, mf_shape_str(t->rank, t->shape, buf, sizeof buf),
                      t->rank);
}

MfStatus mf_window_check_fit(const char *fname, MfPadding padding, const int64_t hw[2],
                             const int64_t k[2], const int64_t d[2])
{
    if ((k[0] >= 0 && k[0] < 1) || (k[1] >= 0 && k[1] < 1))
        return mf_err_set(MF_ESHAPE, "%s: the filter's height and width must be at least 1, "
                          "got %lld x %lld", fname, (long long)k[0], (long long)k[1]);
    int64_t ekh = mf_window_extent(k[0], d[0]), ekw = mf_window_extent(k[1], d[1]);
    if (ekh == INT64_MAX || ekw == INT64_MAX)
        return mf_err_set(MF_ESHAPE, "%s: the filter (%lld x %lld) with dilations {%lld, %lld} "
                          "is too large: its dilated span (k - 1) * dilation + 1 does not fit "
                          "in int64", fname, (long long)k[0], (long long)k[1], (long long)d[0],
                          (long long)d[1]);
    bool tall = hw[0] >= 0 && k[0] >= 0 && ekh > hw[0];
    bool wide = hw[1] >= 0 && k[1] >= 0 && ekw > hw[1];
    if (padding == MF_PADDING_SAME || (!tall && !wide))
        return MF_OK;
    return mf_err_set(MF_ESHAPE, "%s: the filter (%lld x %lld, %lld x %lld with dilations) is "
                      "larger than the input (%lld x %lld) with VALID padding; use SAME "
                      "padding or a smaller filter", fname, (long long)k[0], (long long)k[1],
                      (long long)ekh, (long long)ekw, (long long)hw[0], (long long)hw[1]);
}
