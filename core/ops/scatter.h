/* scatter.h — UnsortedSegmentSum from C: the scatter-add that is the
 * gradient of GatherV2 (as in TensorFlow). It goes through 'mf_op_call', so
 * it works in eager and graph mode and tapes record it. */
#ifndef MF_OPS_SCATTER_H
#define MF_OPS_SCATTER_H

#include <stdint.h>

#include "../op.h"

/* out[k, ...] = sum of data[j..., ...] over the positions j where
 * ids[j...] == k, for k in 0..n-1 (0-based ids, int32 or int64). 'ids' has
 * the shape of a leading part of 'data'; the result has shape
 * (n,) + data.shape[ids.rank:]. Segments no id names are zero. On success
 * '*out' is owned. Errors: MF_EARG (an id outside 0..n-1, n < 0), MF_ESHAPE
 * (ids not a leading part of data's shape), MF_EDTYPE, MF_ENOMEM. */
MfStatus mf_unsorted_segment_sum(MfTensor *data, MfTensor *ids, int64_t n, MfTensor **out);

#endif
