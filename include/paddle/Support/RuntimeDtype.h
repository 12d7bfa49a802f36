//===- RuntimeDtype.h - MLIR element types as the runtime's dtypes -*- C++
//-*-===//

#ifndef PADDLE_SUPPORT_RUNTIMEDTYPE_H
#define PADDLE_SUPPORT_RUNTIMEDTYPE_H

#include "paddle_runtime/runtime.h"

#include "mlir/IR/Types.h"

namespace mlir::paddle {

/// The runtime's dtype of element type `t`; PADDLE_DTYPE_INVALID for a type
/// the runtime has none for.
inline paddle_dtype_t toRuntimeDtype(Type t) {
  if (t.isF32())
    return PADDLE_F32;
  if (t.isF16())
    return PADDLE_F16;
  if (t.isBF16())
    return PADDLE_BF16;
  if (t.isF64())
    return PADDLE_F64;
  if (t.isInteger(1))
    return PADDLE_I1;
  if (t.isInteger(8))
    return PADDLE_I8;
  if (t.isInteger(32))
    return PADDLE_I32;
  if (t.isInteger(64))
    return PADDLE_I64;
  return PADDLE_DTYPE_INVALID;
}

} // namespace mlir::paddle

#endif // PADDLE_SUPPORT_RUNTIMEDTYPE_H
