//===- PaddleToLinalg.cpp - the paddle-convert-paddle-to-linalg pass ------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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
    if (failed(verifySizes()))
      return signalPassFailure();
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

  /// Paddle ops verify their own types (verifyTensorSizes); the rest of the
  /// module, function signatures and upstream ops written by hand, is
  /// checked here, before the lowering computes sizes from it.
  LogicalResult verifySizes() {
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (isa_and_nonnull<PaddleDialect>(op->getDialect()))
        return WalkResult::advance();
      if (auto func = dyn_cast<FunctionOpInterface>(op)) {
        auto emit = [&] { return func.emitError(); };
        for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
          if (failed(verifyTensorSize(emit, type, "argument #" + Twine(i))))
            return WalkResult::interrupt();
        for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
          if (failed(verifyTensorSize(emit, type, "result #" + Twine(i))))
            return WalkResult::interrupt();
        return WalkResult::advance();
      }
      return failed(verifyTensorSizes(op)) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};
} // namespace
