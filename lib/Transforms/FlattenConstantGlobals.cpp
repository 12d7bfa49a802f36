//===- FlattenConstantGlobals.cpp - constant globals as byte arrays -------===//

#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "paddle-flatten-constant-globals"

namespace mlir::paddle {
#define GEN_PASS_DEF_FLATTENCONSTANTGLOBALSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The least alignment of a flattened global. An i8 array alone would be
/// placed at any byte; LLVM gives the float arrays it replaces at least 16
/// on x86-64, and the vectorized kernels read them.
static constexpr uint64_t kMinAlignment = 16;

/// The bytes of `global`'s initial value when it can be stored as a flat i8
/// array and read back through memref.view; null otherwise.
static DenseElementsAttr getFlattenableValue(memref::GlobalOp global) {
  // Public globals are part of the module's interface: their type stays.
  if (!global.getConstant() || !global.isPrivate())
    return nullptr;
  MemRefType type = global.getType();
  // memref.view makes contiguous, identity-layout memrefs of the default
  // memory space.
  if (type.getRank() == 0 || !type.hasStaticShape() ||
      !type.getLayout().isIdentity() || type.getMemorySpace())
    return nullptr;
  auto value =
      dyn_cast_or_null<DenseElementsAttr>(global.getConstantInitValue());
  // A splat is one element in the attribute and cheap to translate.
  if (!value || value.isSplat())
    return nullptr;
  // Only whole-byte scalars, whose raw data is laid out as in memory (i1 is
  // bit-packed in the attribute; index has no fixed width).
  Type element = type.getElementType();
  if (!isa<IntegerType, FloatType>(element) ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return nullptr;
  int64_t bytes = type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  if (static_cast<int64_t>(value.getRawData().size()) != bytes)
    return nullptr;
  return value;
}

namespace {
struct FlattenConstantGlobalsPass
    : paddle::impl::FlattenConstantGlobalsPassBase<FlattenConstantGlobalsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    IntegerType i8 = IntegerType::get(context, 8);
    // The get_globals of each global, found in one walk; a global referenced
    // by anything else keeps its type.
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses)
      return; // A symbol reference we cannot see: leave the module as it is.
    llvm::StringMap<SmallVector<memref::GetGlobalOp>> getGlobals;
    llvm::StringSet<> otherUses;
    for (const SymbolTable::SymbolUse &use : *uses) {
      if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(use.getUser()))
        getGlobals[getGlobal.getName()].push_back(getGlobal);
      else
        otherUses.insert(use.getSymbolRef().getRootReference().getValue());
    }

    for (auto global : module.getOps<memref::GlobalOp>()) {
      DenseElementsAttr value = getFlattenableValue(global);
      if (!value || otherUses.contains(global.getSymName()) ||
          (maxBytes > 0 &&
           static_cast<int64_t>(value.getRawData().size()) > maxBytes))
        continue;

      MemRefType type = global.getType();
      ArrayRef<char> raw = value.getRawData();
      int64_t size = static_cast<int64_t>(raw.size());
      auto bytesType = MemRefType::get({size}, i8);
      global.setType(bytesType);
      global.setInitialValueAttr(DenseElementsAttr::getFromRawBuffer(
          RankedTensorType::get({size}, i8), raw));
      uint64_t elementBytes = type.getElementTypeBitWidth() / 8;
      uint64_t alignment =
          std::max({global.getAlignment().value_or(0),
                    llvm::PowerOf2Ceil(elementBytes), kMinAlignment});
      global.setAlignment(alignment);

      for (memref::GetGlobalOp getGlobal :
           getGlobals.lookup(global.getSymName())) {
        OpBuilder b(getGlobal);
        Location loc = getGlobal.getLoc();
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value bytes =
            memref::GetGlobalOp::create(b, loc, bytesType, global.getSymName());
        Value view = memref::ViewOp::create(b, loc, type, bytes, zero,
                                            /*sizes=*/ValueRange());
        getGlobal.replaceAllUsesWith(view);
        getGlobal.erase();
      }
    }
  }
};
} // namespace
