/* attrs.c — reading an op's attributes through its schema (see op.h,
 * MfAttrDef): defaults, and the one formatter every listing uses (print(g),
 * g:nodes(), DOT, tape listings, profiler rows), so an attribute reads the
 * same everywhere: "MatMul[transpose_a]", "Sum[axis=2, keepdims]",
 * "Conv2D[strides=2, SAME]". Axes are shown 1-based, as Lua writes them.
 * Also the face the descriptor declares (input names, positional
 * attributes, signatures, what a value must be), which the Lua binder and
 * help read. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "clocale.h"

#define FIELD MF_ATTR_FIELD
#define CFIELD MF_ATTR_CFIELD
#define COUNT MF_ATTR_CCOUNT

const char *mf_attr_choice(const MfAttrDef *def, int v)
{
    int n = 0;
    while (def->choices[n])
        n++;
    return v >= 0 && v < n ? def->choices[v] : NULL;
}

const char *mf_attr_type_name(MfAttrType type)
{
    static const char *const names[] = {
        [MF_ATTR_BOOL] = "bool", [MF_ATTR_INT] = "int", [MF_ATTR_FLOAT] = "float",
        [MF_ATTR_DTYPE] = "dtype", [MF_ATTR_ENUM] = "enum", [MF_ATTR_AXIS] = "axis",
        [MF_ATTR_AXES] = "axes", [MF_ATTR_INTS] = "ints", [MF_ATTR_WINDOW] = "window",
        [MF_ATTR_PAIRS] = "pairs",
    };
    _Static_assert(MF_COUNTOF(names) == MF_ATTR_NTYPES, "one name per MfAttrType");
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "?";
}

void mf_attrs_apply_defaults(const MfOpDesc *d, MfAttrs *a)
{
    for (int i = 0; i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        switch (def->type) {
        case MF_ATTR_BOOL:
            *FIELD(a, def, bool) = def->dflt != 0;
            break;
        case MF_ATTR_INT:
            *FIELD(a, def, int64_t) = (int64_t)def->dflt;
            break;
        case MF_ATTR_FLOAT:
            *FIELD(a, def, double) = def->dflt;
            break;
        case MF_ATTR_DTYPE:
            *FIELD(a, def, MfDType) = (MfDType)def->dflt;
            break;
        case MF_ATTR_ENUM:
            *FIELD(a, def, int) = (int)def->dflt;
            break;
        case MF_ATTR_AXES:
            if (def->flags & MF_ATTR_ALL_AXES)
                a->all_axes = true;
            break;
        case MF_ATTR_WINDOW:
            for (int k = 0; k < 4; k++)
                FIELD(a, def, int64_t)[k] = 1;
            break;
        case MF_ATTR_AXIS:
        case MF_ATTR_INTS:
        case MF_ATTR_PAIRS:
            break;
        }
    }
}

/* One axis as the face writes it: 0-based 'ax', negative when unresolved. */
static int64_t face_axis(int64_t ax)
{
    return ax >= 0 ? ax + 1 : ax;
}

int mf_attr_face_ints(const MfAttrDef *def, const MfAttrs *a, int64_t *out)
{
    int n = MF_ATTR_CCOUNT(a, def);
    const int64_t *v = CFIELD(a, def, int64_t);
    if (n < 0 || n > 2 * MF_MAX_RANK)
        return 0;
    if (def->flags & (MF_ATTR_FIRST_HALF | MF_ATTR_SECOND_HALF)) {
        n /= 2;
        v += (def->flags & MF_ATTR_SECOND_HALF) ? n : 0;
    }
    for (int i = 0; i < n; i++)
        out[i] = def->type == MF_ATTR_AXES ? face_axis(v[i])
                 : (def->flags & MF_ATTR_ONE_BASED) ? v[i] + 1 : v[i];
    return n;
}

/* Appends to the buffer, keeping it terminated when it fills. */
typedef struct Out {
    char *buf;
    size_t size, len;
} Out;

static void put(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Out *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n < o->size - o->len ? (size_t)n : o->size - o->len - 1;
}

/* A list as the face writes it: "2", "{1,3}", or for pairs "{{1,1},{0,2}}". */
/* Whether the face accepts a bare integer for this list attribute (an axis, a
 * stride): only then is a one-element list shown bare. A shape, per-axis
 * values and pairs keep their braces, so Reshape[shape={1}] does not read
 * like a scalar. */
static bool takes_integer(const MfAttrDef *def)
{
    if (def->type == MF_ATTR_AXES)
        return true;
    return def->type == MF_ATTR_INTS &&
           !(def->flags & (MF_ATTR_SHAPE | MF_ATTR_PER_AXIS | MF_ATTR_ONE_BASED));
}

static void put_list(Out *o, const int64_t *v, int n, const MfAttrDef *def)
{
    bool pairs = def->type == MF_ATTR_PAIRS;
    if (n == 1 && takes_integer(def)) {
        put(o, "%lld", (long long)v[0]);
        return;
    }
    put(o, "{");
    for (int k = 0; pairs && k + 1 < n; k += 2)
        put(o, "%s{%lld,%lld}", k ? "," : "", (long long)v[k], (long long)v[k + 1]);
    for (int k = 0; !pairs && k < n; k++)
        put(o, "%s%lld", k ? "," : "", (long long)v[k]);
    put(o, "}");
}

/* Whether every entry of a PER_AXIS list is its default (slice's size -1). */
static bool all_default(const MfAttrDef *def, const int64_t *v, int n)
{
    for (int k = 0; k < n; k++)
        if (v[k] != (int64_t)def->dflt)
            return false;
    return (def->flags & MF_ATTR_PER_AXIS) != 0;
}

/* The default of an AXIS attribute, 0-based for a tensor of rank 'rank'
 * (-1: unknown), or INT64_MIN when it cannot be told. */
static int64_t axis_default(const MfAttrDef *def, int rank)
{
    int64_t d = (int64_t)def->dflt;
    if (d > 0)
        return d - 1;
    if (rank < 0)
        return INT64_MIN;
    return d + rank + ((def->flags & MF_ATTR_PAST_END) ? 1 : 0);
}

/* A list attribute (axes, ints, pairs) when it differs from its default. */
static bool put_list_attr(Out *o, const MfAttrDef *def, const MfAttrs *a)
{
    int64_t v[2 * MF_MAX_RANK];
    int n = mf_attr_face_ints(def, a, v);
    bool axes = def->type == MF_ATTR_AXES;
    if (axes && (def->flags & MF_ATTR_ALL_AXES) && a->all_axes)
        return false;
    /* An empty shape is a value (a scalar); an empty list elsewhere is "not given". */
    bool shown_empty = (axes && (def->flags & MF_ATTR_ALL_AXES)) || (def->flags & MF_ATTR_SHAPE);
    if ((n == 0 && !shown_empty) || all_default(def, v, n))
        return false;
    put(o, "%s=", def->name);
    if (n == 0)
        put(o, "{}");
    else
        put_list(o, v, n, def);
    return true;
}

/* A pooling window (n, {h, w} or four entries) unless it is all ones. */
static bool put_window(Out *o, const MfAttrDef *def, const MfAttrs *a)
{
    const int64_t *w = CFIELD(a, def, int64_t);
    if (w[0] == 1 && w[1] == 1 && w[2] == 1 && w[3] == 1)
        return false;
    if (w[0] == 1 && w[3] == 1 && w[1] == w[2])
        put(o, "%s=%lld", def->name, (long long)w[1]);
    else if (w[0] == 1 && w[3] == 1)
        put(o, "%s={%lld,%lld}", def->name, (long long)w[1], (long long)w[2]);
    else
        put(o, "%s={%lld,%lld,%lld,%lld}", def->name, (long long)w[0], (long long)w[1],
            (long long)w[2], (long long)w[3]);
    return true;
}

/* Writes attribute 'def' when it differs from its default; returns whether
 * it wrote. */
static bool put_attr(Out *o, const MfAttrDef *def, const MfAttrs *a, int rank)
{
    switch (def->type) {
    case MF_ATTR_BOOL: {
        bool v = *CFIELD(a, def, bool);
        if (v == (def->dflt != 0))
            return false;
        put(o, v ? "%s" : "%s=false", def->name);
        return true;
    }
    case MF_ATTR_INT: {
        int64_t v = *CFIELD(a, def, int64_t);
        if (v == (int64_t)def->dflt)
            return false;
        put(o, "%s=%lld", def->name, (long long)v);
        return true;
    }
    case MF_ATTR_FLOAT: {
        double v = *CFIELD(a, def, double);
        if (v == def->dflt)
            return false;
        put(o, "%s=%g", def->name, v);
        return true;
    }
    case MF_ATTR_DTYPE: {
        MfDType v = *CFIELD(a, def, MfDType);
        if (v == (MfDType)def->dflt && !(def->flags & MF_ATTR_REQUIRED))
            return false;
        put(o, "%s=%s", def->name, mf_dtype_name(v));
        return true;
    }
    case MF_ATTR_ENUM: {
        int v = *CFIELD(a, def, int);
        if (v == (int)def->dflt)
            return false;
        const char *choice = mf_attr_choice(def, v);
        put(o, "%s", choice ? choice : "?");
        return true;
    }
    case MF_ATTR_AXIS: {
        int64_t v = *CFIELD(a, def, int64_t);
        if (v == axis_default(def, rank))
            return false;
        put(o, "%s=%lld", def->name, (long long)face_axis(v));
        return true;
    }
    case MF_ATTR_AXES:
    case MF_ATTR_INTS:
    case MF_ATTR_PAIRS:
        return put_list_attr(o, def, a);
    case MF_ATTR_WINDOW:
        return put_window(o, def, a);
    }
    return false;
}

static int attrs_format(MfOpId op, const MfAttrs *a, int rank, char *buf, size_t size)
{
    Out o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    if ((int)op < 0 || op >= MF_NOPS || !a || !size)
        return 0;
    const MfOpDesc *d = mf_op_table[op];
    for (int i = 0; i < d->nattrs; i++) {
        size_t before = o.len;
        if (o.len > 0)
            put(&o, ", ");
        if (!put_attr(&o, &d->attrs[i], a, rank)) {
            o.len = before;
            buf[o.len] = '\0';
        }
    }
    return (int)o.len;
}

/* An ENUM's choices: "\"VALID\" or \"SAME\"". */
static void put_choices(Out *o, const MfAttrDef *def)
{
    for (int i = 0; def->choices[i]; i++)
        put(o, "%s\"%s\"", i == 0 ? "" : def->choices[i + 1] ? ", " : " or ", def->choices[i]);
}

/* What a value of 'def' is, as help shows it. */
static void put_kind(Out *o, const MfAttrDef *def)
{
    switch (def->type) {
    case MF_ATTR_BOOL:
        put(o, "boolean");
        break;
    case MF_ATTR_INT:
        put(o, "integer");
        break;
    case MF_ATTR_FLOAT:
        put(o, "number");
        break;
    case MF_ATTR_DTYPE:
        put(o, "dtype name");
        break;
    case MF_ATTR_ENUM:
        put_choices(o, def);
        break;
    case MF_ATTR_AXIS:
        put(o, "axis (1-based, negative from the end)");
        break;
    case MF_ATTR_AXES:
        put(o, "axis or array of axes (1-based)");
        break;
    case MF_ATTR_INTS:
        if (def->flags & MF_ATTR_ONE_BASED)
            put(o, "array of 1-based positions, one per axis");
        else if (def->flags & MF_ATTR_PER_AXIS)
            put(o, "array of integers, one per axis");
        else
            put(o, (def->flags & MF_ATTR_SHAPE) ? "shape (array of integers%s)"
                                                : "integer or array of integers%s",
                def->dflt < 0 ? ", one -1 inferred" : "");
        if (def->flags & MF_ATTR_BY_TENSOR)
            put(o, " or a 1-D integer tensor");
        break;
    case MF_ATTR_PAIRS:
        put(o, "array of {before, after} pairs, one per axis");
        break;
    case MF_ATTR_WINDOW:
        put(o, "n, {h, w} or 4 integers in the data format's order");
        break;
    }
}

/* The default of 'def' as help shows it; nothing for a required one. */
static void put_default(Out *o, const MfAttrDef *def)
{
    if (def->flags & MF_ATTR_REQUIRED)
        return;
    switch (def->type) {
    case MF_ATTR_BOOL:
        put(o, ", default %s", def->dflt != 0 ? "true" : "false");
        break;
    case MF_ATTR_INT:
        put(o, ", default %lld", (long long)def->dflt);
        break;
    case MF_ATTR_FLOAT:
        put(o, ", default %g", def->dflt);
        break;
    case MF_ATTR_DTYPE:
        put(o, ", default %s", mf_dtype_name((MfDType)def->dflt));
        break;
    case MF_ATTR_ENUM:
        put(o, ", default \"%s\"", def->choices[(int)def->dflt]);
        break;
    case MF_ATTR_AXIS:
        put(o, ", default %lld", (long long)def->dflt);
        break;
    case MF_ATTR_AXES:
        put(o, (def->flags & MF_ATTR_ALL_AXES) ? ", default every axis" : ", default none");
        break;
    case MF_ATTR_INTS:
        if (def->flags & MF_ATTR_PER_AXIS)
            put(o, ", default %lld per axis", (long long)def->dflt);
        break;
    case MF_ATTR_PAIRS:
        break;
    case MF_ATTR_WINDOW:
        put(o, ", default 1");
        break;
    }
}

static int attrs_describe(const MfOpDesc *d, char *buf, size_t size)
{
    Out o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    if (!d || !size)
        return 0;
    for (int i = 0; i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        put(&o, "%s%s: ", i ? "; " : "", def->name);
        put_kind(&o, def);
        put_default(&o, def);
        if (def->flags & MF_ATTR_REQUIRED)
            put(&o, ", required");
        if (def->alias)
            put(&o, " (also %s)", def->alias);
    }
    return (int)o.len;
}

/* Attribute values take '.' whatever the C locale is (clocale.h). */
int mf_attrs_format(MfOpId op, const MfAttrs *a, int rank, char *buf, size_t size)
{
    MfCLocale loc = mf_c_locale_begin();
    int n = attrs_format(op, a, rank, buf, size);
    mf_c_locale_end(loc);
    return n;
}

int mf_attrs_describe(const MfOpDesc *d, char *buf, size_t size)
{
    MfCLocale loc = mf_c_locale_begin();
    int n = attrs_describe(d, buf, size);
    mf_c_locale_end(loc);
    return n;
}

const char *mf_op_label(MfOpId op, const MfAttrs *a, int rank, char *buf, size_t size)
{
    char attrs[200];
    mf_attrs_format(op, a, rank, attrs, sizeof attrs);
    snprintf(buf, size, attrs[0] ? "%s[%s]" : "%s", mf_op_table[op]->name, attrs);
    return buf;
}

/* ---- the face an op's descriptor declares ------------------------------- */

const char *mf_op_lua_name(const MfOpDesc *d)
{
    return d->lua ? d->lua : (d->flags & MF_OP_SIMPLE) ? d->api : NULL;
}

const char *mf_op_input_name(const MfOpDesc *d, int slot, size_t *len)
{
    const char *s = d->inputs ? d->inputs : "x";
    for (; slot > 0 && s; slot--)
        if ((s = strchr(s, ',')))
            s += strspn(s, ", ");
    *len = s ? strcspn(s, ", ]") : 0;   /* "z [, c_prev]": "c_prev" */
    return s;
}

const MfAttrDef *mf_op_arg_attr(const MfOpDesc *d, int slot)
{
    size_t len;
    const char *s = mf_op_input_name(d, slot, &len);
    for (int i = 0; s && i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        if ((def->flags & MF_ATTR_ARG) && strlen(def->name) == len &&
            strncmp(def->name, s, len) == 0)
            return def;
    }
    return NULL;
}

int mf_op_input_slots(const MfOpDesc *d)
{
    if ((d->flags & MF_OP_VARIADIC) && !d->optional_inputs)
        return 1;
    int n = d->arity + d->optional_inputs;
    for (int i = 0; i < d->nattrs; i++)
        n += (d->attrs[i].flags & MF_ATTR_ARG) != 0;
    return n;
}

bool mf_op_input_is_index(const MfOpDesc *d, int k, int slot)
{
    size_t len;
    const char *s = mf_op_input_name(d, slot, &len);
    return ((d->one_based_inputs | d->index_inputs) & (1u << k)) ||
           (s && len == 7 && strncmp(s, "indices", 7) == 0);
}

bool mf_op_input_gives_dtype(const MfOpDesc *d, int k, int slot)
{
    return d->like_inputs ? (d->like_inputs & (1u << k)) != 0 : !mf_op_input_is_index(d, k, slot);
}

int mf_op_npositional(const MfOpDesc *d)
{
    int n = 0;
    for (int i = 0; i < d->nattrs; i++)
        n += (d->attrs[i].flags & MF_ATTR_POSITIONAL) != 0;
    return n;
}

const MfAttrDef *mf_op_positional(const MfOpDesc *d, int k)
{
    for (int i = 0; i < d->nattrs; i++)
        if ((d->attrs[i].flags & MF_ATTR_POSITIONAL) && k-- == 0)
            return &d->attrs[i];
    return NULL;
}

/* Help's " or x:matmul(...)" for an op that is also a tensor method. */
static void put_method_form(Out *o, const MfOpDesc *d)
{
    const char *lua = mf_op_lua_name(d);
    if ((d->flags & MF_OP_NO_METHOD) || strchr(lua, '.'))
        return;
    const char *in = d->inputs ? d->inputs : "x";
    bool more = d->nattrs > 0 || (d->flags & MF_OP_VARIADIC) || d->arity > 1;
    put(o, " or %.*s:%s(%s)", (int)strcspn(in, ","), in, lua, more ? "..." : "");
}

int mf_op_signature(const MfOpDesc *d, MfSigStyle style, char *buf, size_t size)
{
    Out o = {buf, size, 0};
    if (!size)
        return 0;
    buf[0] = '\0';
    const char *lua = mf_op_lua_name(d);
    if (!lua)
        return 0;
    if (style == MF_SIG_KEYWORDS) {
        for (int i = 0; i < mf_op_input_slots(d); i++) {
            size_t len;
            const char *name = mf_op_input_name(d, i, &len);
            put(&o, "%s%.*s = ...", i ? ", " : "{", (int)len, name);
        }
        put(&o, "}");
        return (int)o.len;
    }
    bool help = style == MF_SIG_HELP;
    const char *dot = strrchr(lua, '.');
    put(&o, "%s%s(%s", help ? "mf." : "", help || !dot ? lua : dot + 1,
        d->inputs ? d->inputs : "x");
    int open = 0, named = 0;
    for (int i = 0; i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        if (help && (def->flags & MF_ATTR_ARG))
            continue;
        named += !(def->flags & (MF_ATTR_POSITIONAL | MF_ATTR_ARG));
        if (!(def->flags & MF_ATTR_POSITIONAL))
            continue;
        bool req = def->flags & MF_ATTR_REQUIRED;
        put(&o, "%s%s", req ? ", " : " [, ", def->name);
        open += !req;
    }
    if (!help && d->nattrs > 0)   /* the call form names every option "{options}" */
        put(&o, " [, {options}]");
    for (; open > 0; open--)
        put(&o, "]");
    for (int i = 0, k = 0; help && i < d->nattrs && named; i++)
        if (!(d->attrs[i].flags & (MF_ATTR_POSITIONAL | MF_ATTR_ARG)))
            put(&o, "%s%s", k++ ? ", " : " [, {", d->attrs[i].name);
    put(&o, help && named ? "}])" : ")");
    if (help)
        put_method_form(&o, d);
    return (int)o.len;
}

const char *mf_attr_want(const MfAttrDef *def, char *buf, size_t size)
{
    static const char *const wants[] = {
        [MF_ATTR_BOOL] = "a boolean",
        [MF_ATTR_INT] = "an integer",
        [MF_ATTR_FLOAT] = "a number",
        [MF_ATTR_DTYPE] = "a dtype name (float32, float64, int32, int64, bool, uint8, float16 or "
                          "bfloat16)",
        [MF_ATTR_AXIS] = "an integer",
        [MF_ATTR_AXES] = "an integer or an array of integers (1-based axes)",
        [MF_ATTR_INTS] = "an integer or an array of integers",
        [MF_ATTR_WINDOW] = "a number or an array of 1, 2 or 4 integers",
        [MF_ATTR_PAIRS] = "an array of {before, after} pairs",
    };
    _Static_assert(MF_COUNTOF(wants) == MF_ATTR_NTYPES, "one description per MfAttrType");
    Out o = {buf, size, 0};
    if (!size)
        return buf;
    buf[0] = '\0';
    if (def->type == MF_ATTR_ENUM)
        put_choices(&o, def);
    else if (def->type == MF_ATTR_INTS && (def->flags & MF_ATTR_SHAPE))
        put(&o, "a shape (an array of integers)");
    else
        put(&o, "%s", (unsigned)def->type < sizeof wants / sizeof *wants && wants[def->type]
                          ? wants[def->type] : "a value");
    return buf;
}

int mf_attr_enum_parse(const MfAttrDef *def, const char *s)
{
    for (int i = 0; s && def->choices[i]; i++) {
        const char *a = s, *b = def->choices[i];
        while (*a && toupper((unsigned char)*a) == toupper((unsigned char)*b))
            a++, b++;
        if (!*a && !*b)
            return i;
    }
    return -1;
}

/* ---- the values a call gives, checked (the binder raises the messages) --- */

MfStatus mf_attr_window(const char *fname, const char *key, const int64_t *v, int n, bool nchw,
                        int64_t out[4])
{
    if (n != 1 && n != 2 && n != 4)
        return mf_err_set(MF_EARG, "%s: %s must be a number or an array of 1, 2 or 4 "
                          "integers, got %d entries", fname, key, n);
    int h = nchw ? 2 : 1;
    for (int i = 0; i < 4; i++)
        out[i] = n == 4 ? v[i] : 1;
    if (n != 4)
        out[h] = v[0], out[h + 1] = v[n - 1];
    for (int i = 0; i < 4; i++)
        if (out[i] < 1)
            return mf_err_set(MF_EARG, "%s: %s must be positive, got %lld at position %d",
                              fname, key, (long long)out[i], i + 1);
    return MF_OK;
}

MfStatus mf_attr_check_ints(const char *fname, const MfAttrDef *def, const MfTensor *x,
                            int64_t *v, int n)
{
    bool unknown = def->dflt < 0;
    for (int i = 0; (def->flags & MF_ATTR_SHAPE) && i < n; i++)
        if (v[i] < 0 && !(unknown && v[i] == -1))
            return mf_err_set(MF_EARG, "%s: %s entry %d must be >= 0%s, got %lld", fname,
                              def->name, i + 1, unknown ? " (or -1, inferred)" : "",
                              (long long)v[i]);
    /* positions checked >= 1 here, where subtracting cannot overflow; the op
     * checks the upper bound */
    for (int i = 0; (def->flags & MF_ATTR_ONE_BASED) && i < n; i++) {
        long long size = x && i < x->rank ? (long long)x->shape[i] : 0;
        if (v[i] < 1)
            return mf_err_set(MF_EARG, "%s: %s %lld out of range for axis %d of size %lld (%s "
                              "is 1-based: 1..%lld)", fname, def->name, (long long)v[i], i + 1,
                              size, def->name, size);
        v[i] -= 1;
    }
    return MF_OK;
}

MfStatus mf_attrs_check_per_axis(const MfOpDesc *d, const char *fname, const MfAttrs *a,
                                 int rank, int first_half)
{
    for (int i = 0; i < d->nattrs; i++) {
        const MfAttrDef *def = &d->attrs[i];
        if (!(def->flags & MF_ATTR_PER_AXIS) || (def->flags & MF_ATTR_FIRST_HALF))
            continue;
        int n = COUNT(a, def);
        if (!(def->flags & MF_ATTR_SECOND_HALF) && n != rank)
            return mf_err_set(MF_EARG, "%s: %s needs %d entries (one per axis), got %d", fname,
                              def->name, rank, n);
        if ((def->flags & MF_ATTR_SECOND_HALF) && (first_half != rank || n - first_half != rank))
            return mf_err_set(MF_EARG, "%s: %s and %s need %d entries each (one per axis), got "
                              "%d and %d", fname, d->attrs[i - 1].name, def->name, rank,
                              first_half, n - first_half);
    }
    return MF_OK;
}

MfStatus mf_positions_zero_based(const char *fname, const char *what, MfTensor *t,
                                 MfTensor **out)
{
    *out = NULL;
    if (!mf_dtype_is_int(t->dtype))
        return mf_err_set(MF_EDTYPE, "%s: %s must be int32 or int64, got %s (convert with "
                          "mf.cast)", fname, what, mf_dtype_name(t->dtype));
    MfTensor *one = mf_tensor_scalar(t->dtype, 1);
    if (!one)
        return mf_err_set(MF_ENOMEM, "%s: out of memory", fname);   /* or the pending one */
    MfStatus st = mf_binary(MF_OP_SUB, t, one, out);
    mf_tensor_release(one);
    if (st != MF_OK)   /* name the function called, not the subtract inside it */
        mf_err_prefix("%s", fname);
    return st;
}
