//===- PaddleToLinalg.cpp - the paddle-convert-paddle-to-linalg pass ------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "paddle-convert-paddle-to-linalg"

namespace mlir::paddle {
#define GEN_PASS_DEF_CONVERTPADDLETOLINALGPASS
#include "paddle/Conversion/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {
struct ConvertPaddleToLinalgPass
    : paddle::impl::ConvertPaddleToLinalgPassBase<ConvertPaddleToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<PaddleDialect>();
    // Fused groups keep their boundary; paddle-lower-fusion removes it.
    target.addLegalOp<FusionOp, YieldOp>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect, cf::ControlFlowDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateElementwiseToLinalgPatterns(patterns);
    populateShapeToLinalgPatterns(patterns);
    populateReductionToLinalgPatterns(patterns);
    populateNNToLinalgPatterns(patterns);
    populateNormalizationToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
