//===- Passes.h - paddle transformation passes -------------------*- C++
//-*-===//

#ifndef PADDLE_TRANSFORMS_PASSES_H
#define PADDLE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::paddle {

/// Elementwise iterations that make a block of a parallel loop worth
/// starting: the CPU pipeline's min-task-size, and what
/// paddle-tile-and-vectorize's elementwise, row and transpose tiles aim at.
/// Below about this many the cost of starting a block (a coroutine frame,
/// a queue push, a wake-up, and on another core the operands' cache lines)
/// exceeds the work. On the Xeon VM a 1-D add of 8k-128k elements ran
/// 1.4-2.8x slower on 2 threads than on 1 with 4096, and a vectorized tanh
/// takes about 0.26 ns per element, so a 32k block is 8 us, about what a
/// block costs to start (docs/performance.md, "Minimum task size").
inline constexpr int64_t kElementsPerTask = 32768;

#define GEN_PASS_DECL
#include "paddle/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "paddle/Transforms/Passes.h.inc"

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_PASSES_H
