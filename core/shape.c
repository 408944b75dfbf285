/* shape.c — broadcasting (see shape.h). */
#include "shape.h"

MfStatus mf_broadcast_shapes(const char *who, int ra, const int64_t *sa, int rb,
                             const int64_t *sb, int *rout, int64_t *sout)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int ia = ra - r + i, ib = rb - r + i;
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        if (da == db || db == 1) {
            sout[i] = da;
        } else if (da == 1) {
            sout[i] = db;
        } else if (da < 0 || db < 0) {
            sout[i] = da < 0 ? db : da; /* unknown meets known: the known one must hold */
        } else {
            char b1[160], b2[160];
            return mf_err_set(MF_ESHAPE, "%s: shapes %s and %s do not broadcast", who,
                              mf_shape_str(ra, sa, b1, sizeof b1),
                              mf_shape_str(rb, sb, b2, sizeof b2));
        }
    }
    *rout = r;
    return MF_OK;
}

void mf_broadcast_strides(const MfTensor *t, int rout, const int64_t *sout, int64_t *strides)
{
    for (int i = 0; i < rout; i++) {
        int it = t->rank - rout + i;
        if (it < 0 || (t->shape[it] == 1 && sout[i] != 1))
            strides[i] = 0;
        else
            strides[i] = t->strides[it];
    }
}

int mf_shape_equal(int ra, const int64_t *sa, int rb, const int64_t *sb)
{
    if (ra != rb)
        return 0;
    for (int i = 0; i < ra; i++)
        if (sa[i] != sb[i])
            return 0;
    return 1;
}

MfStatus mf_axis_one_based(const char *who, int64_t axis, int rank, int extra, int64_t *out)
{
    int64_t n = rank + extra;
    /* n + axis only once axis is known in range: math.maxinteger would overflow */
    if (axis >= 1 && axis <= n) {
        *out = axis - 1;
        return MF_OK;
    }
    if (axis < 0 && axis >= -n) {
        *out = n + axis;
        return MF_OK;
    }
    /* the axis as given, not truncated (2^32-1 is not "axis -1") */
    if (n == 0)
        return mf_err_set(MF_EARG, "%s: a scalar has no axes (got axis %lld)", who,
                          (long long)axis);
    return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d (axes are 1-based: "
                      "1..%lld, or -%lld..-1)", who, (long long)axis, rank, (long long)n,
                      (long long)n);
}
