//===- tensor_check.h - validating tensors at the C API (internal) --------===//
//
// A paddle_tensor_t comes from the caller: its rank indexes a fixed array,
// its dims multiply into a byte count and its data is read. Every function
// that takes one from outside checks it here first, so a rank of 100000,
// a negative dim or dims whose product wraps to 0 is an error status, never
// a read past `shape` or a call on a buffer of the wrong size.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_TENSOR_CHECK_H
#define PADDLE_RUNTIME_TENSOR_CHECK_H

#include "paddle_runtime/runtime.h"

namespace paddle::runtime {

/// Null when `t` is a well-formed tensor: not null, a known dtype, a rank
/// in [0, PADDLE_MAX_RANK], dims >= 0 whose byte count fits int64, and data
/// unless it is empty. `what` names it in the message ("add: input 1").
paddle_status_t checkTensor(const paddle_tensor_t *t, const char *what);

} // namespace paddle::runtime

#endif // PADDLE_RUNTIME_TENSOR_CHECK_H
