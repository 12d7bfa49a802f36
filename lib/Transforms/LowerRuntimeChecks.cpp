//===- LowerRuntimeChecks.cpp - cf.assert to runtime error calls ----------===//

#include "paddle/Transforms/CheckMessages.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "paddle-lower-runtime-checks"

namespace mlir::paddle {
#define GEN_PASS_DEF_LOWERRUNTIMECHECKSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The runtime's handler; see paddle_runtime/runtime.h.
static constexpr llvm::StringLiteral kCheckFailed =
    "paddle_runtime_check_failed";

namespace {
struct LowerRuntimeChecksPass
    : paddle::impl::LowerRuntimeChecksPassBase<LowerRuntimeChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;

    OpBuilder b(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    auto handler =
        LLVM::lookupOrCreateFn(b, module, kCheckFailed, {ptrType},
                               LLVM::LLVMVoidType::get(module.getContext()));
    if (failed(handler)) {
      module.emitError() << "'" << kCheckFailed
                         << "' is already declared with another type";
      return signalPassFailure();
    }

    llvm::StringMap<std::string> globalNames;
    for (cf::AssertOp op : asserts) {
      // Splitting blocks needs a CFG region: run after convert-scf-to-cf.
      if (!isa<FunctionOpInterface>(op->getParentOp())) {
        op.emitError() << "paddle-lower-runtime-checks expects cf.assert "
                          "directly in a function body (run it after "
                          "convert-scf-to-cf)";
        return signalPassFailure();
      }
      Block *before = op->getBlock();
      Block *cont = before->splitBlock(std::next(op->getIterator()));
      Region *region = before->getParent();
      Block *fail = new Block();
      region->getBlocks().insert(cont->getIterator(), fail);

      b.setInsertionPointToStart(fail);
      std::string &name = globalNames[op.getMsg()];
      if (name.empty())
        name = (paddle::kCheckMessagePrefix + Twine(globalNames.size())).str();
      Value message;
      if (auto global = module.lookupSymbol<LLVM::GlobalOp>(name)) {
        message = LLVM::AddressOfOp::create(b, op.getLoc(), global);
      } else {
        // The runtime reads a C string: keep the terminating NUL.
        std::string text = op.getMsg().str();
        text.push_back('\0');
        message = LLVM::createGlobalString(op.getLoc(), b, name, text,
                                           LLVM::Linkage::Internal);
      }
      LLVM::CallOp::create(b, op.getLoc(), *handler, ValueRange{message});
      LLVM::UnreachableOp::create(b, op.getLoc());

      b.setInsertionPoint(op);
      cf::CondBranchOp::create(b, op.getLoc(), op.getArg(), cont, ValueRange{},
                               fail, ValueRange{});
      op.erase();
    }
  }
};
} // namespace
