//===- CheckMessages.h - names of run-time check messages -------*- C++ -*-===//
//
// Only a name, so that LLVM-level code (paddle-compile's sidecar weights)
// can include it without the MLIR pass headers.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_CHECKMESSAGES_H
#define PADDLE_TRANSFORMS_CHECKMESSAGES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::paddle {

/// The names of the C strings paddle-lower-runtime-checks makes for the
/// messages of failed checks (`<prefix><n>`): part of the code, not data,
/// so paddle-compile --weights sidecar leaves them in the artifact.
inline constexpr llvm::StringLiteral kCheckMessagePrefix =
    "paddle_check_message_";

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_CHECKMESSAGES_H
