//===- Passes.h - paddle conversion passes -----------------------*- C++
//-*-===//

#ifndef PADDLE_CONVERSION_PASSES_H
#define PADDLE_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace paddle {

#define GEN_PASS_DECL
#include "paddle/Conversion/Passes.h.inc"

/// On the linalg.generic that zero-pads a conv2d's NCHW input in its
/// spatial dims: the padding, [top, left, bottom, right]. The generic reads
/// its source with one tensor.extract (memref.load once bufferized);
/// paddle-use-onednn folds such a copy into a library convolution's own
/// padding.
inline constexpr llvm::StringLiteral kZeroPadAttr = "paddle.zero_pad";

/// Patterns lowering paddle ops to linalg/tensor/arith/math, by category.
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
void populateShapeToLinalgPatterns(RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(RewritePatternSet &patterns);
void populateNNToLinalgPatterns(RewritePatternSet &patterns);
void populateNormalizationToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "paddle/Conversion/Passes.h.inc"

} // namespace paddle
} // namespace mlir

#endif // PADDLE_CONVERSION_PASSES_H
