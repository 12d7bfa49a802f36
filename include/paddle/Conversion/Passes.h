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
