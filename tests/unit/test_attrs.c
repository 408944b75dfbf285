/* test_attrs.c — reading an op's attributes through its schema (core/op.h,
 * core/attrs.c), as the binder, mf.ops() and the listings do: the field
 * and count macros, enum choices by index, type names, the formatted
 * non-default attributes, and the face a descriptor declares (input names,
 * positional attributes, signatures, what a value must be). */
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
    mf_attrs_apply_defaults(mf_op_table[MF_OP_SUM], &a);
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

/* Slice's begin and size share one array in halves; begin is shown
 * 1-based, size only when not -1 everywhere; Pad's paddings as pairs. */
static void test_halves_and_pairs(void **state)
{
    (void)state;
    MfAttrs a = mf_attrs_default();
    mf_attrs_apply_defaults(mf_op_table[MF_OP_SLICE], &a);
    int64_t packed[] = {1, 0, -1, -1};   /* begin {2, 1} (0-based {1, 0}), size -1 */
    memcpy(a.ints, packed, sizeof packed);
    a.nints = 4;
    char buf[96];
    mf_attrs_format(MF_OP_SLICE, &a, 2, buf, sizeof buf);
    assert_string_equal(buf, "begin={2,1}");
    a.ints[3] = 2;
    mf_attrs_format(MF_OP_SLICE, &a, 2, buf, sizeof buf);
    assert_string_equal(buf, "begin={2,1}, size={-1,2}");
    int64_t v[2 * MF_MAX_RANK];
    assert_int_equal(mf_attr_face_ints(attr(MF_OP_SLICE, "size"), &a, v), 2);
    assert_int_equal(v[1], 2);
    a.nints = 2 * MF_MAX_RANK + 1;   /* a bad count shows nothing, reads nothing */
    assert_int_equal(mf_attr_face_ints(attr(MF_OP_SLICE, "begin"), &a, v), 0);

    MfAttrs p = mf_attrs_default();
    mf_attrs_apply_defaults(mf_op_table[MF_OP_PAD], &p);
    int64_t pairs[] = {1, 0, 0, 2};
    memcpy(p.ints, pairs, sizeof pairs);
    p.nints = 4;
    mf_attrs_format(MF_OP_PAD, &p, 2, buf, sizeof buf);
    assert_string_equal(buf, "paddings={{1,0},{0,2}}");
    assert_string_equal(mf_attr_type_name(MF_ATTR_PAIRS), "pairs");
    char desc[512];
    mf_attrs_describe(mf_op_table[MF_OP_PAD], desc, sizeof desc);
    assert_non_null(strstr(desc, "paddings: array of {before, after} pairs, one per axis, "
                                 "required"));
    mf_attrs_describe(mf_op_table[MF_OP_SLICE], desc, sizeof desc);
    assert_non_null(strstr(desc, "size: array of integers, one per axis, default -1 per axis"));
}

/* A one-element list is shown bare only where the face takes an integer (an
 * axis); a shape keeps its braces, and an empty shape (a scalar) is shown. */
static void test_one_element_lists(void **state)
{
    (void)state;
    char buf[64];
    MfAttrs r = mf_attrs_default();
    mf_attrs_apply_defaults(mf_op_table[MF_OP_RESHAPE], &r);
    const MfAttrDef *shape = attr(MF_OP_RESHAPE, "shape");
    MF_ATTR_FIELD(&r, shape, int64_t)[0] = 1;
    MF_ATTR_COUNT(&r, shape) = 1;
    mf_attrs_format(MF_OP_RESHAPE, &r, 1, buf, sizeof buf);
    assert_string_equal(buf, "shape={1}");
    MF_ATTR_COUNT(&r, shape) = 0;
    mf_attrs_format(MF_OP_RESHAPE, &r, 1, buf, sizeof buf);
    assert_string_equal(buf, "shape={}");

    MfAttrs s = mf_attrs_default();
    mf_attrs_apply_defaults(mf_op_table[MF_OP_SLICE], &s);
    int64_t packed[] = {1, -1};   /* begin {2} (0-based {1}), size -1 */
    memcpy(s.ints, packed, sizeof packed);
    s.nints = 2;
    mf_attrs_format(MF_OP_SLICE, &s, 1, buf, sizeof buf);
    assert_string_equal(buf, "begin={2}");
}

/* The face a descriptor declares, as the binder, help and mf.test.ops() read it. */
static void test_face(void **state)
{
    (void)state;
    const MfOpDesc *gather = mf_op_table[MF_OP_GATHER];
    const MfOpDesc *bpi = mf_op_table[MF_OP_CONV2D_BACKPROP_INPUT];
    size_t len;
    const char *name = mf_op_input_name(gather, 1, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(name, "indices", 7);
    assert_null(mf_op_input_name(gather, 2, &len));
    assert_memory_equal(mf_op_input_name(mf_op_table[MF_OP_EXP], 0, &len), "x", 1);
    assert_true(mf_op_input_is_index(gather, 1, 1));
    assert_false(mf_op_input_gives_dtype(gather, 1, 1));
    assert_true(mf_op_input_gives_dtype(gather, 0, 0));
    assert_false(mf_op_input_gives_dtype(mf_op_table[MF_OP_SELECT], 0, 0));   /* cond */
    assert_string_equal(mf_op_arg_attr(bpi, 0)->name, "input_sizes");
    assert_null(mf_op_arg_attr(bpi, 1));
    assert_int_equal(mf_op_input_slots(bpi), 3);
    assert_int_equal(mf_op_input_slots(mf_op_table[MF_OP_CONCAT]), 1);
    const MfOpDesc *sum = mf_op_table[MF_OP_SUM];
    assert_int_equal(mf_op_npositional(sum), 2);
    assert_string_equal(mf_op_positional(sum, 1)->name, "keepdims");
    assert_null(mf_op_positional(sum, 2));
    assert_string_equal(mf_op_lua_name(mf_op_table[MF_OP_MAX_POOL]), "nn.max_pool");
    assert_null(mf_op_lua_name(mf_op_table[MF_OP_MAX_POOL_GRAD]));
    int notes = 0;   /* help's gradient notes describe gradients that exist */
    for (int i = 0; i < MF_NOPS; i++)
        if (mf_op_table[i]->grad_note) {
            assert_non_null(mf_op_table[i]->backward);
            notes++;
        }
    assert_true(notes >= 20);
}

static void test_signature(void **state)
{
    (void)state;
    char buf[160];
    mf_op_signature(mf_op_table[MF_OP_SUM], MF_SIG_CALL, buf, sizeof buf);
    assert_string_equal(buf, "reduce_sum(x [, axis [, keepdims [, {options}]]])");
    mf_op_signature(mf_op_table[MF_OP_SUM], MF_SIG_HELP, buf, sizeof buf);
    assert_string_equal(buf, "mf.reduce_sum(x [, axis [, keepdims]]) or x:reduce_sum(...)");
    mf_op_signature(mf_op_table[MF_OP_MATMUL], MF_SIG_HELP, buf, sizeof buf);
    assert_string_equal(buf, "mf.matmul(a, b [, {transpose_a, transpose_b}]) or a:matmul(...)");
    mf_op_signature(mf_op_table[MF_OP_EXP], MF_SIG_HELP, buf, sizeof buf);
    assert_string_equal(buf, "mf.exp(x) or x:exp()");
    mf_op_signature(mf_op_table[MF_OP_EXP], MF_SIG_CALL, buf, sizeof buf);
    assert_string_equal(buf, "exp(x)");
    mf_op_signature(mf_op_table[MF_OP_MAX_POOL], MF_SIG_CALL, buf, sizeof buf);
    assert_string_equal(buf, "max_pool(x, ksize, strides, padding [, {options}])");
    mf_op_signature(mf_op_table[MF_OP_MAX_POOL], MF_SIG_HELP, buf, sizeof buf);
    assert_string_equal(buf, "mf.nn.max_pool(x, ksize, strides, padding [, {data_format}])");
    mf_op_signature(mf_op_table[MF_OP_CONCAT], MF_SIG_HELP, buf, sizeof buf);
    assert_string_equal(buf, "mf.concat(list [, axis])");
    mf_op_signature(mf_op_table[MF_OP_SOFTMAX_XENT], MF_SIG_KEYWORDS, buf, sizeof buf);
    assert_string_equal(buf, "{labels = ..., logits = ...}");
    assert_int_equal(mf_op_signature(mf_op_table[MF_OP_SUM], MF_SIG_CALL, buf, 8), 7);
    assert_string_equal(buf, "reduce_");   /* cut, still terminated */
    assert_int_equal(mf_op_signature(mf_op_table[MF_OP_MAX_POOL_GRAD], MF_SIG_HELP, buf,
                                     sizeof buf), 0);   /* internal: no face */
}

/* What the binder's messages say a value must be, and enum names in any case. */
static void test_want_and_enum(void **state)
{
    (void)state;
    char buf[128];
    const MfAttrDef *pad = attr(MF_OP_CONV2D, "padding");
    assert_string_equal(mf_attr_want(pad, buf, sizeof buf), "\"VALID\" or \"SAME\"");
    assert_string_equal(mf_attr_want(attr(MF_OP_RESHAPE, "shape"), buf, sizeof buf),
                        "a shape (an array of integers)");
    assert_string_equal(mf_attr_want(attr(MF_OP_CAST, "dtype"), buf, sizeof buf),
                        "a dtype name (float32, float64, int32, int64, bool, uint8, float16 or "
                        "bfloat16)");
    assert_string_equal(mf_attr_want(attr(MF_OP_SUM, "keepdims"), buf, sizeof buf),
                        "a boolean");
    assert_int_equal(mf_attr_enum_parse(pad, "same"), 1);
    assert_int_equal(mf_attr_enum_parse(pad, "VALID"), 0);
    assert_int_equal(mf_attr_enum_parse(pad, "SAM"), -1);
    assert_int_equal(mf_attr_enum_parse(pad, "SAMEE"), -1);
    assert_int_equal(mf_attr_enum_parse(pad, NULL), -1);
}

/* The values a call gives: windows expanded in the data format's order,
 * shapes and 1-based positions checked, per-axis lists counted. */
static void test_value_checks(void **state)
{
    (void)state;
    int64_t w[4];
    assert_int_equal(mf_attr_window("max_pool", "ksize", (int64_t[]){2, 3}, 2, false, w), MF_OK);
    assert_int_equal(w[0], 1);
    assert_int_equal(w[1], 2);
    assert_int_equal(w[2], 3);
    assert_int_equal(mf_attr_window("max_pool", "ksize", (int64_t[]){2}, 1, true, w), MF_OK);
    assert_int_equal(w[1], 1);   /* NCHW: h and w are the last two */
    assert_int_equal(w[3], 2);
    assert_int_equal(mf_attr_window("max_pool", "ksize", (int64_t[]){1, 2, 3}, 3, false, w),
                     MF_EARG);
    assert_string_equal(mf_err_msg(), "max_pool: ksize must be a number or an array of 1, 2 or "
                                      "4 integers, got 3 entries");
    mf_err_clear();
    assert_int_equal(mf_attr_window("conv2d", "strides", (int64_t[]){1, 1, 0, 1}, 4, false, w),
                     MF_EARG);
    assert_string_equal(mf_err_msg(), "conv2d: strides must be positive, got 0 at position 3");
    mf_err_clear();

    int64_t shape[] = {2, -1};
    assert_int_equal(mf_attr_check_ints("reshape", attr(MF_OP_RESHAPE, "shape"), NULL, shape, 2),
                     MF_OK);
    shape[1] = -2;
    assert_int_equal(mf_attr_check_ints("reshape", attr(MF_OP_RESHAPE, "shape"), NULL, shape, 2),
                     MF_EARG);
    assert_string_equal(mf_err_msg(), "reshape: shape entry 2 must be >= 0 (or -1, inferred), "
                                      "got -2");
    mf_err_clear();
    MfTensor *x = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){3, 4});
    int64_t begin[] = {1, 4};
    assert_int_equal(mf_attr_check_ints("slice", attr(MF_OP_SLICE, "begin"), x, begin, 2), MF_OK);
    assert_int_equal(begin[0], 0);   /* 0-based now */
    assert_int_equal(begin[1], 3);
    begin[0] = 1, begin[1] = 0;
    assert_int_equal(mf_attr_check_ints("slice", attr(MF_OP_SLICE, "begin"), x, begin, 2),
                     MF_EARG);
    assert_string_equal(mf_err_msg(), "slice: begin 0 out of range for axis 2 of size 4 (begin "
                                      "is 1-based: 1..4)");
    mf_err_clear();
    mf_tensor_release(x);

    MfAttrs a = mf_attrs_default();
    a.nints = 3;   /* begin 2 entries, size 1 */
    assert_int_equal(mf_attrs_check_per_axis(mf_op_table[MF_OP_SLICE], "slice", &a, 2, 2),
                     MF_EARG);
    assert_string_equal(mf_err_msg(), "slice: begin and size need 2 entries each (one per "
                                      "axis), got 2 and 1");
    mf_err_clear();
    a.nints = 4;
    assert_int_equal(mf_attrs_check_per_axis(mf_op_table[MF_OP_SLICE], "slice", &a, 2, 2),
                     MF_OK);
}

/* gather's 1-based indices become 0-based through a Sub op; a float input
 * is refused naming the function and the input. */
static void test_positions_zero_based(void **state)
{
    (void)state;
    MfTensor *i = mf_tensor_from_data(MF_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 3}), *out;
    assert_int_equal(mf_positions_zero_based("gather", "indices", i, &out), MF_OK);
    assert_int_equal(out->dtype, MF_INT64);
    assert_int_equal(mf_tensor_get_int(out, 0), 0);
    assert_int_equal(mf_tensor_get_int(out, 1), 2);
    mf_tensor_release(out);
    MfTensor *f = mf_tensor_scalar(MF_FLOAT32, 1);
    assert_int_equal(mf_positions_zero_based("gather", "indices", f, &out), MF_EDTYPE);
    assert_null(out);
    assert_string_equal(mf_err_msg(), "gather: indices must be int32 or int64, got float32 "
                                      "(convert with mf.cast)");
    mf_err_clear();
    mf_tensor_release(f);
    mf_tensor_release(i);
}

/* The composites have an op's face but are no op: an entry and a Lua name,
 * no kernel, and no place in the op table (graphs see the ops they call). */
static void test_composites(void **state)
{
    (void)state;
    int n = 0;
    for (const MfOpDesc *const *d = mf_composite_table; *d; d++, n++) {
        assert_non_null((*d)->entry);
        assert_non_null(mf_op_lua_name(*d));
        assert_non_null((*d)->summary);
        assert_null((*d)->forward);
        assert_int_equal(mf_op_find((*d)->name), MF_NOPS);
    }
    assert_true(n >= 6);
    MfTensor *t = mf_tensor_from_data(MF_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3}), *out;
    MfAttrs a = mf_attrs_default();
    int nout = 0;
    for (const MfOpDesc *const *d = mf_composite_table; *d; d++)
        if (strcmp((*d)->name, "l2_loss") == 0)
            assert_int_equal((*d)->entry(1, &t, &a, &out, &nout), MF_OK);
    assert_int_equal(nout, 1);
    assert_float_equal(mf_tensor_get(out, 0), 7.0, 1e-6);
    mf_tensor_release(out);
    mf_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_schema_access),
        TEST(test_halves_and_pairs),
        TEST(test_one_element_lists),
        TEST(test_face),
        TEST(test_signature),
        TEST(test_want_and_enum),
        TEST(test_value_checks),
        TEST(test_positions_zero_based),
        TEST(test_composites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
