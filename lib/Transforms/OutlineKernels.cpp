//===- OutlineKernels.cpp - one private function per kernel ---------------===//

#include "paddle/Transforms/Passes.h"

#include "Outlining.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#define DEBUG_TYPE "paddle-outline-kernels"

namespace mlir::paddle {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The ops that lower to loops of their own: what a trace calls a kernel
/// (paddle-instrument-kernels) and a fused group's tile loop.
static bool isKernel(Operation *op) {
  return isa<linalg::LinalgOp, memref::CopyOp, scf::ParallelOp, scf::ForallOp,
             scf::ForOp>(op);
}

namespace {
struct OutlineKernelsPass
    : paddle::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isKernel(op))
          return WalkResult::advance();
        kernels.push_back(op);
        return WalkResult::skip();
      });
    paddle::SymbolNamer namer(module);
    for (Operation *kernel : kernels)
      paddle::outlineIntoFunction(kernel, module, namer.unique("kernel"),
                                  [](Value) { return true; });
  }
};
} // namespace
