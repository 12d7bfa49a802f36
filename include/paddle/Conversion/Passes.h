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

/// The same for the linalg.generic that pads a max_pool2d's NCHW input with
/// the max's identity (-inf; the lowest integer), when every padding size
/// is static:
/// [top, left, bottom, right], bottom and right including the extra rows a
/// ceil-mode window needs. paddle-use-onednn folds it into a library
/// pooling's own padding, which no window's maximum ever takes.
inline constexpr llvm::StringLiteral kMaxPoolPadAttr = "paddle.max_pool_pad";

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
