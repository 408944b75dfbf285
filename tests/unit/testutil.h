/* testutil.h — what every cmocka test program shares: a teardown that
 * asserts no tensor is left alive, and tolerance comparisons. */
#ifndef MF_TESTUTIL_H
#define MF_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/op.h"
#include "core/tensor.h"

static inline int setup_engine(void **state)
{
    (void)state;
    mf_err_clear();
    return 0;
}

/* Every test must release what it made. */
static inline int teardown_engine(void **state)
{
    (void)state;
    mf_err_clear();
    if (mf_tensor_live_count() != 0) {
        print_error("%lld tensors still alive after the test\n",
                    (long long)mf_tensor_live_count());
        return -1;
    }
    return 0;
}

/* NAN and INFINITY are float constants in glibc; in a double context
 * clang's -Wdouble-promotion asks for the conversion to be written. */
#define DNAN ((double)NAN)
#define DINF ((double)INFINITY)

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_engine, teardown_engine)

/* A contiguous tensor of 'dt' from doubles. */
static inline MfTensor *make_tensor(MfDType dt, int rank, const int64_t *shape,
                                    const double *values)
{
    MfTensor *t = mf_tensor_new(dt, rank, shape);
    assert_non_null(t);
    int64_t n = mf_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        void *p = (char *)t->storage->data + i * (int64_t)mf_dtype_size(dt);
        switch (dt) {
        case MF_FLOAT32: *(float *)p = (float)values[i]; break;
        case MF_FLOAT64: *(double *)p = values[i]; break;
        case MF_INT32: *(int32_t *)p = (int32_t)values[i]; break;
        case MF_INT64: *(int64_t *)p = (int64_t)values[i]; break;
        default: *(uint8_t *)p = values[i] != 0; break;
        }
    }
    return t;
}

/* Asserts every element of 't' is within 'tol' of 'expect'. */
static inline void assert_values(const MfTensor *t, const double *expect, int64_t n, double tol)
{
    assert_int_equal(mf_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        double got = mf_tensor_get(t, i);
        if (!(fabs(got - expect[i]) <= tol) && !(isnan(got) && isnan(expect[i]))) {
            print_error("element %lld: got %.17g, expected %.17g\n", (long long)i, got,
                        expect[i]);
            fail();
        }
    }
}

/* Asserts the pending error message contains 'part', then clears it. */
static inline void assert_error_contains(const char *part)
{
    const char *msg = mf_err_msg();
    if (!strstr(msg, part)) {
        print_error("error message '%s' does not contain '%s'\n", msg, part);
        fail();
    }
    mf_err_clear();
}

#endif
