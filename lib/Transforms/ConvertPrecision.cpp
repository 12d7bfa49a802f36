//===- ConvertPrecision.cpp - bf16 inputs for matmul and conv2d -----------===//
//
// See ConvertPrecisionPass in Passes.td and docs/bf16.md.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "dialects/Paddle/IR/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/bit.h"

#include <cmath>

namespace mlir::paddle {
#define GEN_PASS_DEF_CONVERTPRECISIONPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// The bf16 bit pattern nearest to `value` (ties to even), as
/// `APFloat::convert` with rmNearestTiesToEven gives it, but fast enough for
/// weights of tens of millions of elements. NaNs stay (quiet) NaNs.
uint16_t roundToBf16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7fff + lsb) >> 16);
}

/// Ops that only move elements: converting their input converts their
/// result, so a conversion can move above them to a constant.
bool isDataMovement(Operation *op) {
  return isa<TransposeOp, ReshapeOp, BroadcastToOp>(op);
}

/// True when `v` is a constant whose values this pass can read, possibly
/// behind data-movement ops.
bool isConstantRooted(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && isDataMovement(def))
    def = def->getOperand(0).getDefiningOp();
  auto constant = dyn_cast_or_null<ConstantOp>(def);
  return constant && constant.getValue().tryGetValues<float>().has_value();
}

RankedTensorType withElementType(Value v, Type elementType) {
  return cast<RankedTensorType>(v.getType()).clone(elementType);
}

class Converter {
public:
  explicit Converter(MLIRContext *ctx) : bf16(BFloat16Type::get(ctx)) {}

  /// `v` (f32) rounded to bf16; one value per `v`, however many ops read it.
  Value toBf16(Value v) {
    if (Value done = converted.lookup(v))
      return done;
    OpBuilder b(v.getContext());
    Value result;
    Operation *def = v.getDefiningOp();
    if (isConstantRooted(v) && isa<ConstantOp>(def)) {
      auto constant = cast<ConstantOp>(def);
      b.setInsertionPointAfter(def);
      result = ConstantOp::create(b, def->getLoc(), convertConstant(constant));
      replaced.push_back(def);
    } else if (isConstantRooted(v)) {
      // Convert the constant below, then move it as the original did.
      Value source = toBf16(def->getOperand(0));
      b.setInsertionPointAfter(def);
      Operation *clone = b.clone(*def);
      clone->setOperand(0, source);
      clone->getResult(0).setType(withElementType(v, bf16));
      result = clone->getResult(0);
      replaced.push_back(def);
    } else {
      if (def)
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
      Location loc = def ? def->getLoc() : v.getLoc();
      result = CastOp::create(b, loc, withElementType(v, bf16), v);
    }
    converted[v] = result;
    return result;
  }

  /// Erases the f32 constants (and the moves of them) that nothing reads
  /// any more, users before their operands.
  void eraseDeadOriginals() {
    for (Operation *op : llvm::reverse(replaced))
      if (op->use_empty())
        op->erase();
  }

private:
  DenseElementsAttr convertConstant(ConstantOp constant) {
    auto type = cast<RankedTensorType>(constant.getType());
    auto values = *constant.getValue().tryGetValues<float>();
    SmallVector<uint16_t> data;
    if (constant.getValue().isSplat())
      data.push_back(roundToBf16(*values.begin()));
    else
      for (float value : values)
        data.push_back(roundToBf16(value));
    return DenseElementsAttr::getFromRawBuffer(
        type.clone(bf16),
        ArrayRef<char>(reinterpret_cast<const char *>(data.data()),
                       data.size() * sizeof(uint16_t)));
  }

  Type bf16;
  DenseMap<Value, Value> converted;
  SmallVector<Operation *> replaced;
};

/// An f32 matmul or conv2d: f32 operands and result. Depthwise
/// convolutions (one input channel per group) stay f32: with no sum over
/// channels there is nothing for bf16 dot products (AMX tiles, VNNI pairs)
/// to speed up, the op is memory-bound, and the casts around it only add
/// passes over the activations (MobileNetV2 took 11.1 ms per call with its
/// depthwise convolutions in bf16 against 6.2 ms in f32; docs/bf16.md).
bool isF32Contraction(Operation *op) {
  if (!isa<MatmulOp, Conv2DOp>(op))
    return false;
  if (auto conv = dyn_cast<Conv2DOp>(op))
    if (conv.getGroups() > 1 &&
        cast<RankedTensorType>(conv.getFilter().getType()).getDimSize(1) == 1)
      return false;
  auto isF32 = [](Type t) {
    return cast<RankedTensorType>(t).getElementType().isF32();
  };
  return llvm::all_of(op->getOperandTypes(), isF32) &&
         isF32(op->getResult(0).getType());
}

struct ConvertPrecisionPass
    : paddle::impl::ConvertPrecisionPassBase<ConvertPrecisionPass> {
  using ConvertPrecisionPassBase::ConvertPrecisionPassBase;

  void runOnOperation() override {
    if (getTargetOrDefault(getOperation()).getPrecision() != Precision::BF16)
      return;
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isF32Contraction(op))
        ops.push_back(op);
    });
    Converter converter(&getContext());
    // The result type stays f32: the ops accept bf16 operands with an f32
    // result (areCompatibleAccumulatorReturnTypes).
    for (Operation *op : ops)
      for (OpOperand &operand : op->getOpOperands())
        operand.set(converter.toBf16(operand.get()));
    converter.eraseDeadOriginals();
  }
};

} // namespace
