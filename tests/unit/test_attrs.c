/* test_attrs.c — reading an op's attributes through its schema (core/op.h,
 * core/attrs.c), as the binder, mf.ops() and the listings do: the field
 * and count macros, enum choices by index, type names, and the formatted
 * non-default attributes. */
#include "testutil.h"

/* The definition named 'name' among the attributes of 'op'. */
static const MfAttrDef *attr(MfOpId op, const char *name)
{
    const MfOpDesc *d = mf_op_table[op];
    for (int i = 0; i < d->nattrs; i++)
        if (strcmp(d->attrs[i].name, name) == 0)
            return &d->attrs[i];
    fail_msg("%s has no attribute '%s'", d->name, name);
    return NULL;
}

static void test_schema_access(void **state)
{
    (void)state;
    const MfAttrDef *pad = attr(MF_OP_CONV2D, "padding");
    assert_int_equal(pad->type, MF_ATTR_ENUM);
    assert_string_equal(mf_attr_choice(pad, 1), "SAME");
    assert_null(mf_attr_choice(pad, 2));
    assert_null(mf_attr_choice(pad, -1));
    assert_string_equal(mf_attr_type_name(MF_ATTR_AXES), "axes");
    assert_string_equal(mf_attr_type_name(MF_ATTR_WINDOW), "window");
    MfAttrs a = mf_attrs_default();
    mf_attrs_apply_defaults(MF_OP_SUM, &a);
    const MfAttrDef *axis = attr(MF_OP_SUM, "axis");
    MF_ATTR_FIELD(&a, axis, int64_t)[0] = 1;   /* 0-based here: the face's axis 2 */
    MF_ATTR_COUNT(&a, axis) = 1;
    a.all_axes = false;
    *MF_ATTR_FIELD(&a, attr(MF_OP_SUM, "keepdims"), bool) = true;
    assert_int_equal(MF_ATTR_CCOUNT(&a, axis), 1);
    char buf[64];
    mf_attrs_format(MF_OP_SUM, &a, 2, buf, sizeof buf);
    assert_string_equal(buf, "axis=2, keepdims");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_schema_access),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
