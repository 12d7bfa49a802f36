//===- DonateBuffers.cpp - results written into donated arguments ---------===//
//
// See DonateBuffersPass and DropDonatedResultsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Donation.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_DONATEBUFFERSPASS
#define GEN_PASS_DEF_DROPDONATEDRESULTSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

FailureOr<SmallVector<DonatedArgument>> mlir::paddle::getDonatedArguments(
    func::FuncOp func, llvm::function_ref<void(const llvm::Twine &)> error) {
  SmallVector<DonatedArgument> donated;
  FunctionType type = func.getFunctionType();
  llvm::BitVector taken(type.getNumResults());
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i) {
    Attribute attr = func.getArgAttr(
        i, paddle::PaddleDialect::AliasingOutputAttrHelper::getNameStr());
    if (!attr)
      continue;
    std::string where =
        ("function '" + func.getName() + "', argument " + Twine(i)).str();
    auto index = dyn_cast<IntegerAttr>(attr);
    if (!index || !index.getType().isInteger(64)) {
      error(where + ": " +
            paddle::PaddleDialect::AliasingOutputAttrHelper::getNameStr() +
            " must be an i64 result index");
      return failure();
    }
    int64_t result = index.getInt();
    if (result < 0 || result >= type.getNumResults()) {
      error(where + ": donated to result " + Twine(result) +
            ", but the function has " + Twine(type.getNumResults()) +
            " results");
      return failure();
    }
    if (taken.test(result)) {
      error(where + ": result " + Twine(result) +
            " is already donated to by an earlier argument");
      return failure();
    }
    taken.set(result);
    Type argType = type.getInput(i), resultType = type.getResult(result);
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!tensor || !tensor.hasStaticShape()) {
      std::string text;
      llvm::raw_string_ostream(text) << argType;
      error(where + ": a donated argument needs a static shape, not " + text);
      return failure();
    }
    if (argType != resultType) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << argType << " vs " << resultType;
      error(where + ": donated to result " + Twine(result) +
            " of another type (" + text + ")");
      return failure();
    }
    donated.push_back({i, result});
  }
  return donated;
}

void mlir::paddle::dropDonationRequests(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.removeArgAttr(
          i, paddle::PaddleDialect::AliasingOutputAttrHelper::getNameStr());
}

namespace {

struct DonateBuffersPass
    : paddle::impl::DonateBuffersPassBase<DonateBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      auto donated = getDonatedArguments(
          func, [&](const Twine &message) { func.emitError(message); });
      if (failed(donated))
        return signalPassFailure();
      rewrite(func, *donated);
    }
  }

  static void rewrite(func::FuncOp func, ArrayRef<DonatedArgument> donated) {
    MLIRContext *ctx = func.getContext();
    StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
    // Arguments that are not donated are the caller's: never written. (A
    // function argument is writable by default in one-shot bufferization.)
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i, writable, BoolAttr::get(ctx, false));
    if (donated.empty())
      return;

    SmallVector<int64_t> results;
    for (const DonatedArgument &d : donated) {
      func.setArgAttr(d.argument, writable, BoolAttr::get(ctx, true));
      results.push_back(d.result);
    }
    llvm::sort(results);
    func->setAttr(paddle::PaddleDialect::DonatedResultsAttrHelper::getNameStr(),
                  DenseI64ArrayAttr::get(ctx, results));

    func.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      for (const DonatedArgument &d : donated) {
        Value value = ret.getOperand(d.result);
        Value dest = func.getArgument(d.argument);
        auto materialize = bufferization::MaterializeInDestinationOp::create(
            b, ret.getLoc(), value, dest);
        // The value may be returned again as another result: return the
        // materialized one there too, or the update could not be computed
        // in place (one-shot bufferization sees a conflict).
        for (OpOperand &operand : ret->getOpOperands())
          if (operand.get() == value)
            operand.set(materialize.getResult());
      }
    });
  }
};

/// `value` with memref.cast ops looked through.
static Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

struct DropDonatedResultsPass
    : paddle::impl::DropDonatedResultsPassBase<DropDonatedResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto attr = func->getAttrOfType<DenseI64ArrayAttr>(
          paddle::PaddleDialect::DonatedResultsAttrHelper::getNameStr());
      if (!attr)
        continue;
      func->removeAttr(
          paddle::PaddleDialect::DonatedResultsAttrHelper::getNameStr());
      llvm::BitVector drop(func.getNumResults());
      for (int64_t result : attr.asArrayRef())
        drop.set(result);

      // Each dropped result must be a donated argument's buffer: that is
      // what the materialization into it bufferized to.
      bool ok = true;
      func.walk([&](func::ReturnOp ret) {
        for (int64_t result : attr.asArrayRef()) {
          auto arg =
              dyn_cast<BlockArgument>(stripCasts(ret.getOperand(result)));
          if (!arg || arg.getOwner() != &func.getBody().front()) {
            ret.emitError("donated result ")
                << result << " was not written into its argument's buffer";
            ok = false;
            continue;
          }
        }
        if (ok)
          ret->eraseOperands(drop);
      });
      if (!ok)
        return signalPassFailure();
      if (failed(func.eraseResults(drop)))
        return signalPassFailure();
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.removeArgAttr(
            i, paddle::PaddleDialect::AliasingOutputAttrHelper::getNameStr());
    }
  }
};

} // namespace
