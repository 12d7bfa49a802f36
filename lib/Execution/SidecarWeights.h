//===- SidecarWeights.h - moving constants into a weights file --*- C++ -*-===//
//
// `paddle-compile --weights sidecar`: the large constants of a module leave
// the artifact's .rodata for a checked file next to it, which the artifact
// loads at run time (runtime/src/weights.cpp; format in
// docs/weights-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_LIB_EXECUTION_SIDECARWEIGHTS_H
#define PADDLE_LIB_EXECUTION_SIDECARWEIGHTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::paddle {

/// Symbols the module exports: the table of its weights, their count and
/// the model fingerprint.
inline constexpr llvm::StringLiteral kWeightsTable = "paddle_weights_table";
inline constexpr llvm::StringLiteral kWeightsCount = "paddle_weights_count";
inline constexpr llvm::StringLiteral kWeightsFingerprint =
    "paddle_weights_fingerprint";
/// The generated C glue refers to the same globals through these hidden
/// names, which bind inside the artifact: another model's .so in the same
/// process exports the public names too and could otherwise interpose them.
inline constexpr llvm::StringLiteral kLocalSuffix = "_local";

struct SidecarWeights {
  /// The weights file, ready to write.
  std::string file;
  uint64_t fingerprint = 0;
  uint32_t count = 0;
  /// Bytes of weight data moved out of the module.
  uint64_t bytes = 0;
};

/// Turns every module-local constant global whose initializer is plain data
/// of at least `threshold` bytes (and not all zeros) into a writable,
/// zero-initialized global, and returns those initializers as a weights
/// file. Adds the exported table {pointer, byte size} of the moved globals
/// in file order (`paddle_weights_table`, layout of paddle_weight_slot_t),
/// their count and the model fingerprint that the file carries too.
SidecarWeights moveWeightsToSidecar(llvm::Module &module, uint64_t threshold);

} // namespace mlir::paddle

#endif // PADDLE_LIB_EXECUTION_SIDECARWEIGHTS_H
