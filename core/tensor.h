/* tensor.h — tensors: a refcounted header over a refcounted storage.
 *
 * A tensor header holds dtype, rank, shape, strides (in elements) and an
 * offset (in elements) into its storage. Views (reshape, transpose, slice,
 * t[i]) are new headers over the same storage. Tensors are immutable once an
 * op has produced them; only Variables (built on top) change which tensor they
 * hold.
 *
 * A symbolic tensor (graph mode) has no storage: 'node' names the graph node
 * that produces it and 'node_output' which output. Unknown dims are -1.
 *
 * Ownership: '_new', '_view', '_clone' and '_contiguous' return a reference
 * the caller owns; getters borrow; 'mf_tensor_retain' / 'mf_tensor_release'
 * change the count. Constructors return NULL with a message set (err.h). */
#ifndef MF_TENSOR_H
#define MF_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "err.h"

#define MF_MAX_RANK 8

/* Tensors larger than this are refused with a clear message instead of
 * letting the system allocator thrash or overflow size arithmetic. */
#define MF_MAX_TENSOR_BYTES ((int64_t)1 << 40)
/* The product of a shape's non-zero dims is at most this, even for an empty
 * tensor ((0, 2^50) is fine, (0, 2^40, 2^40) is refused), so kernels can
 * multiply dims and element sizes in int64 without overflow. */
#define MF_MAX_EXTENT ((int64_t)1 << 56)

typedef struct MfStorage {
    int64_t refcount;
    size_t nbytes;
    void *data;
} MfStorage;

typedef struct MfTensor {
    int64_t refcount;
    int64_t id;                   /* unique per process, increasing */
    MfDType dtype;
    int rank;
    int64_t shape[MF_MAX_RANK];   /* -1: unknown (symbolic tensors only) */
    int64_t strides[MF_MAX_RANK]; /* in elements */
    int64_t offset;               /* in elements */
    MfStorage *storage;           /* NULL for symbolic tensors */
    void *node;                   /* graph mode: the producing node, else NULL */
    int node_output;
} MfTensor;

/* A new contiguous tensor with uninitialised contents. Fails with MF_ENOMEM
 * (absurd or unavailable sizes) or MF_ESHAPE (negative dims, rank > 8). */
MfTensor *mf_tensor_new(MfDType dt, int rank, const int64_t *shape);

/* Same, filled with zeros. */
MfTensor *mf_tensor_zeros(MfDType dt, int rank, const int64_t *shape);

/* A contiguous tensor whose elements are copied from 'data' (row-major). */
MfTensor *mf_tensor_from_data(MfDType dt, int rank, const int64_t *shape, const void *data);

/* A rank-0 tensor holding 'value' converted to 'dt'. */
MfTensor *mf_tensor_scalar(MfDType dt, double value);

/* A header over 't's storage with the given geometry (no bounds check: the
 * caller derives it from 't'). */
MfTensor *mf_tensor_view(const MfTensor *t, int rank, const int64_t *shape,
                         const int64_t *strides, int64_t offset);

/* 't' itself (retained) when contiguous, else a contiguous copy. */
MfTensor *mf_tensor_contiguous(MfTensor *t);

/* A contiguous copy with its own storage. */
MfTensor *mf_tensor_clone(const MfTensor *t);

/* A symbolic tensor (graph mode) with no storage. */
MfTensor *mf_tensor_symbolic(MfDType dt, int rank, const int64_t *shape, void *node,
                             int output);

void mf_tensor_retain(MfTensor *t);
void mf_tensor_release(MfTensor *t);

/* Graph mode registers what to do with 'node' when a symbolic tensor dies. */
void mf_tensor_set_node_hooks(void (*retain)(void *node), void (*release)(void *node));

/* Forward mode registers what to do when a tensor is freed (its id): drop
 * the tangent it kept for it (eager/forward.c). NULL: nothing. */
void mf_tensor_set_free_hook(void (*on_free)(int64_t id));

/* Number of elements (1 for rank 0). Unknown dims count as 0. */
int64_t mf_tensor_numel(const MfTensor *t);
int64_t mf_shape_numel(int rank, const int64_t *shape);

/* The id the next tensor made will get (ids only grow): a tape marks where
 * it stopped with it, without allocating. */
int64_t mf_tensor_next_id(void);

/* The size rule of every shape (dims >= 0): the product of its nonzero dims
 * (what kernels multiply for strides and loop counts) is at most
 * MF_MAX_EXTENT, and a tensor with elements holds at most
 * MF_MAX_TENSOR_BYTES. A zero dim anywhere makes the tensor empty: (0,2^40)
 * and (2^40,0) are both legal, (0,2^57) and (2^57,0) both too large. Sets
 * '*numel' and returns true when the shape fits. */
bool mf_shape_fits(MfDType dt, int rank, const int64_t *shape, int64_t *numel);

/* Checks a shape a tensor could take, -1 (unknown) dims allowed: rank, dims
 * >= -1, and the size limits mf_tensor_new applies to the known dims
 * (MF_MAX_TENSOR_BYTES, MF_MAX_EXTENT). Graph nodes check their outputs with
 * it, so a symbolic tensor's numel never overflows. MF_OK or MF_ESHAPE with
 * "tensor: ..." pending. */
MfStatus mf_shape_check(MfDType dt, int rank, const int64_t *shape);

bool mf_tensor_is_contiguous(const MfTensor *t);

/* Fills 'strides' with row-major strides for 'shape'. */
void mf_shape_strides(int rank, const int64_t *shape, int64_t *strides);

/* Pointer to the first element (storage data plus offset). */
void *mf_tensor_data(const MfTensor *t);

/* Element 'i' in row-major order (works for views), converted to double. */
double mf_tensor_get(const MfTensor *t, int64_t i);

/* Element 'i' of an integer or bool tensor, exactly (no trip through double). */
int64_t mf_tensor_get_int(const MfTensor *t, int64_t i);

/* Sets element 'i' in row-major order (works for views) to 'v' converted
 * to the dtype (bool: v != 0); the '_int' form stores an int64 tensor's
 * element exactly (past 2^53 too). The caller checked that 'v' fits. */
void mf_tensor_set(MfTensor *t, int64_t i, double v);
void mf_tensor_set_int(MfTensor *t, int64_t i, int64_t v);

/* Whether the values of 't' can be read now, for 'who' (t:item(),
 * t:totable()): MF_EARG "WHO: a symbolic (graph) tensor has no values yet;
 * run it in a Session"; with 'one', also "WHO: expected a tensor with one
 * element, got shape (2,3)". */
MfStatus mf_tensor_check_values(const MfTensor *t, const char *who, bool one);

/* t[i] as Lua indexes: 'i' is 1-based along axis 1, or from the end when
 * negative (-1 the last). Returns MF_OK with '*k' the 0-based position and,
 * for rank >= 2, '*view' a new view of that slice (NULL for rank 1: element
 * '*k'). MF_EARG "index: ..." for a symbolic tensor (no values), a scalar,
 * or an index out of range; MF_ENOMEM. */
MfStatus mf_tensor_index(MfTensor *t, int64_t i, int64_t *k, MfTensor **view);

/* Copies 'src' element by element into contiguous 'dst' of the same shape
 * and dtype. */
void mf_tensor_copy_into(MfTensor *dst, const MfTensor *src);

/* No element of 't' is NaN or +-Inf, float16 and bfloat16 included (always
 * true for integer and bool tensors, and for symbolic ones, which hold no
 * values). */
bool mf_tensor_all_finite(const MfTensor *t);

/* Tensor headers alive now (tests assert 0 at teardown). */
int64_t mf_tensor_live_count(void);

/* Writes "(2,3)" (unknown dims as "?") into 'buf'; returns 'buf'. */
char *mf_shape_str(int rank, const int64_t *shape, char *buf, int cap);

#endif
