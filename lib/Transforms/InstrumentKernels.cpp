//===- InstrumentKernels.cpp - trace calls around every kernel ------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "paddle/Support/Location.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_INSTRUMENTKERNELSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The runtime's event functions; see paddle_runtime/runtime.h.
static constexpr llvm::StringLiteral kBegin = "paddle_trace_kernel_begin";
static constexpr llvm::StringLiteral kEnd = "paddle_trace_kernel_end";
/// Where the kernel names go; the JIT and paddle-compile read it.
namespace {
struct InstrumentKernelsPass
    : paddle::impl::InstrumentKernelsPassBase<InstrumentKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SmallVector<Operation *> kernels;
    module.walk([&](Operation *op) {
      if (isa<linalg::LinalgOp, memref::CopyOp>(op) &&
          op->getParentOfType<func::FuncOp>())
        kernels.push_back(op);
    });
    if (kernels.empty())
      return;

    // Declare the event functions (or check existing declarations).
    auto i64 = IntegerType::get(ctx, 64);
    auto type = FunctionType::get(ctx, {i64}, {});
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    for (StringRef name : {kBegin, kEnd}) {
      if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
        if (existing.getFunctionType() != type) {
          existing.emitError() << "'" << name
                               << "' is reserved for the runtime and must "
                                  "have type (i64) -> ()";
          return signalPassFailure();
        }
        continue;
      }
      if (Operation *other = module.lookupSymbol(name)) {
        other->emitError() << "'" << name << "' is reserved for the runtime";
        return signalPassFailure();
      }
      auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
      decl.setPrivate();
    }

    SmallVector<Attribute> names;
    if (auto existing = module->getAttrOfType<ArrayAttr>(
            paddle::PaddleDialect::KernelNamesAttrHelper::getNameStr()))
      names.append(existing.begin(), existing.end());
    for (Operation *op : kernels) {
      int64_t id = names.size();
      std::string source = paddle::fileLineCol(op->getLoc());
      names.push_back(
          StringAttr::get(ctx, op->getName().getStringRef() +
                                   (source.empty() ? "" : " " + source)));
      b.setInsertionPoint(op);
      Value idValue = arith::ConstantIntOp::create(b, op->getLoc(), id, 64);
      func::CallOp::create(b, op->getLoc(), kBegin, TypeRange{},
                           ValueRange{idValue});
      b.setInsertionPointAfter(op);
      func::CallOp::create(b, op->getLoc(), kEnd, TypeRange{},
                           ValueRange{idValue});
    }
    module->setAttr(paddle::PaddleDialect::KernelNamesAttrHelper::getNameStr(),
                    ArrayAttr::get(ctx, names));
  }
};
} // namespace
