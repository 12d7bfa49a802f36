//===- Passes.h - paddle transformation passes -------------------*- C++
//-*-===//

#ifndef PADDLE_TRANSFORMS_PASSES_H
#define PADDLE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::paddle {

/// The minimum number of iterations per block of an scf.parallel, read by
/// paddle-async-parallel-for (default: its min-task-size option). Set by
/// the passes that make loops of few, large iterations: matmul and
/// elementwise tiles (paddle-tile-and-vectorize), a fused group's row tiles
/// (paddle-lower-fusion).
inline constexpr llvm::StringLiteral kMinTaskSizeAttr = "paddle.min_task_size";

#define GEN_PASS_DECL
#include "paddle/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "paddle/Transforms/Passes.h.inc"

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_PASSES_H
