//===- LoweringUtils.cpp - helpers shared by the paddle lowerings ---------===//

#include "LoweringUtils.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Support/Location.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::paddle;

/// "file:line:col: paddle.op: ": the patterns build at the op they lower
/// (the conversion driver's insertion point), so that op is the one at the
/// insertion point.
static std::string describeCheckSite(OpBuilder &b, Location loc) {
  std::string site = describeLocation(loc) + ": ";
  Block *block = b.getInsertionBlock();
  if (block && b.getInsertionPoint() != block->end()) {
    Operation *op = &*b.getInsertionPoint();
    if (isa_and_nonnull<PaddleDialect>(op->getDialect()))
      site += op->getName().getStringRef().str() + ": ";
  }
  return site;
}

void mlir::paddle::buildRuntimeCheck(OpBuilder &b, Location loc,
                                     Value condition, const Twine &message) {
  cf::AssertOp::create(b, loc, condition,
                       describeCheckSite(b, loc) + message.str());
}

void mlir::paddle::buildSameSizeCheck(OpBuilder &b, Location loc,
                                      OpFoldResult x, OpFoldResult y,
                                      const Twine &message) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (x == y || (cx && cy))
    return;
  auto toValue = [&](OpFoldResult v) -> Value {
    if (auto value = dyn_cast<Value>(v))
      return value;
    return arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(v));
  };
  Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, toValue(x),
                                   toValue(y));
  buildRuntimeCheck(b, loc, eq, message);
}

SmallVector<OpFoldResult> mlir::paddle::getMixedSizes(OpBuilder &b,
                                                      Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (type.isDynamicDim(i))
      sizes.push_back(tensor::DimOp::create(b, loc, v, i).getResult());
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
  }
  return sizes;
}

SmallVector<Value>
mlir::paddle::getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                       RankedTensorType resultType,
                                       ValueRange operands) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    // The result size of dim d: a static size when any operand has one other
    // than 1, else the first dynamic operand dim.
    Value size;
    int64_t staticSize = resultType.isDynamicDim(d) ? ShapedType::kDynamic
                                                    : resultType.getDimSize(d);
    for (Value operand : operands) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - t.getRank());
      if (od < 0)
        continue;
      int64_t s = t.getDimSize(od);
      if (!ShapedType::isDynamic(s) && s != 1 &&
          ShapedType::isDynamic(staticSize))
        staticSize = s;
    }
    if (!ShapedType::isDynamic(staticSize))
      size = arith::ConstantIndexOp::create(b, loc, staticSize);
    for (Value operand : operands) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - t.getRank());
      if (od < 0 || !t.isDynamicDim(od))
        continue;
      Value dim = tensor::DimOp::create(b, loc, operand, od);
      if (!size) {
        size = dim;
        continue;
      }
      Value eq =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim, size);
      buildRuntimeCheck(
          b, loc, eq,
          "operand dim " + std::to_string(d) +
              " does not match the broadcast size at run "
              "time (a dynamic dim never broadcasts: sizes must be equal)");
    }
    if (!size) // Every operand has size 1 (or lacks the dim).
      size = arith::ConstantIndexOp::create(b, loc, 1);
    if (resultType.isDynamicDim(d))
      sizes.push_back(size);
  }
  return sizes;
}

/// The tensor and dim that `size` is the size of, when it is a tensor.dim.
static std::optional<std::pair<Value, int64_t>> getTensorDim(Value size) {
  auto dim = size.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return std::nullopt;
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!index)
    return std::nullopt;
  return std::make_pair(dim.getSource(), *index);
}

/// Bytes of the static part of `type` (its static sizes times the element
/// size); none when that overflows.
static std::optional<int64_t> getStaticBytes(RankedTensorType type) {
  int64_t bytes =
      std::max<int64_t>(getElementByteSize(type.getElementType()), 1);
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  return bytes;
}

/// Whether a tensor of `type` with `dynamicSizes` is no larger than one that
/// exists: its dynamic sizes are the dynamic dims of one tensor, each once,
/// and its static part is no larger than that tensor's. (Elementwise results
/// are, and reductions over static dims; sizes the lowering computes, takes
/// from several operands or from the user are not.)
static bool isBoundedByExistingTensor(RankedTensorType type,
                                      ValueRange dynamicSizes) {
  Value source;
  SmallVector<int64_t> dims;
  for (Value size : dynamicSizes) {
    auto dim = getTensorDim(size);
    if (!dim || (source && dim->first != source))
      return false;
    source = dim->first;
    dims.push_back(dim->second);
  }
  auto sourceType =
      dyn_cast_or_null<RankedTensorType>(source ? source.getType() : Type());
  if (!sourceType)
    return false;
  SmallVector<int64_t> sourceDims;
  for (int64_t d = 0; d < sourceType.getRank(); ++d)
    if (sourceType.isDynamicDim(d))
      sourceDims.push_back(d);
  llvm::sort(dims);
  std::optional<int64_t> bytes = getStaticBytes(type),
                         sourceBytes = getStaticBytes(sourceType);
  return dims == sourceDims && bytes && sourceBytes && *bytes <= *sourceBytes;
}

void mlir::paddle::buildSizeChecks(OpBuilder &b, Location loc,
                                   RankedTensorType type,
                                   ValueRange dynamicSizes) {
  if (dynamicSizes.empty())
    return;
  auto describe = [&] {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  };
  Value zero;
  unsigned next = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size = dynamicSizes[next++];
    std::optional<int64_t> constant = getConstantIntValue(size);
    if (getTensorDim(size) || (constant && *constant >= 0))
      continue;
    if (!zero)
      zero = arith::ConstantIndexOp::create(b, loc, 0);
    buildRuntimeCheck(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, zero),
        "dim " + Twine(d) + " of " + describe() + " has a negative size");
  }
  // The verifier bounded the static part; the dynamic sizes multiply it.
  std::optional<int64_t> staticBytes = getStaticBytes(type);
  if (!staticBytes || *staticBytes == 0 ||
      isBoundedByExistingTensor(type, dynamicSizes))
    return;
  // 128-bit products: an overflow shows in the high half, and a product in
  // [2^63, 2^64) as a negative low half. A size of 0 makes any product fit.
  Type i64 = b.getI64Type();
  Value bytes = arith::ConstantIntOp::create(b, loc, i64, *staticBytes);
  Value zero64 = arith::ConstantIntOp::create(b, loc, i64, 0);
  Value overflow = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  Value anyZero = overflow;
  for (Value size : dynamicSizes) {
    Value s = arith::IndexCastOp::create(b, loc, i64, size);
    auto product = arith::MulUIExtendedOp::create(b, loc, bytes, s);
    overflow = arith::OrIOp::create(
        b, loc, overflow,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              product.getHigh(), zero64));
    anyZero = arith::OrIOp::create(
        b, loc, anyZero,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, zero64));
    bytes = product.getLow();
  }
  Value noOverflow = arith::XOrIOp::create(
      b, loc, overflow, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  Value below63 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, bytes, zero64);
  Value fits = arith::AndIOp::create(b, loc, noOverflow, below63);
  buildRuntimeCheck(b, loc, arith::OrIOp::create(b, loc, anyZero, fits),
                    "the sizes of " + describe() +
                        " make more than 2^63 - 1 bytes");
}

Value mlir::paddle::buildEmpty(OpBuilder &b, Location loc,
                               RankedTensorType type, ValueRange dynamicSizes) {
  buildSizeChecks(b, loc, type, dynamicSizes);
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

Value mlir::paddle::buildEmptyLike(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value like) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, like, i));
  return buildEmpty(b, loc, type, dyn);
}

Value mlir::paddle::buildBroadcastElementwise(OpBuilder &b, Location loc,
                                              RankedTensorType resultType,
                                              ValueRange operands,
                                              ScalarBody body) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dyn =
      getBroadcastDynamicSizes(b, loc, resultType, operands);
  Value init = buildEmpty(b, loc, resultType, dyn);

  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    auto t = cast<RankedTensorType>(operand.getType());
    SmallVector<AffineExpr> exprs;
    for (int64_t od = 0; od < t.getRank(); ++od) {
      int64_t d = od + (rank - t.getRank());
      bool broadcasts = t.getDimSize(od) == 1 && resultType.getDimSize(d) != 1;
      exprs.push_back(broadcasts ? b.getAffineConstantExpr(0)
                                 : b.getAffineDimExpr(d));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

Value mlir::paddle::buildScalarConstant(OpBuilder &b, Location loc, Type type,
                                        double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Type mlir::paddle::getComputeType(Type type) {
  if (type.isF16() || type.isBF16())
    return Float32Type::get(type.getContext());
  return type;
}

Value mlir::paddle::buildScalarCast(OpBuilder &b, Location loc, Value v,
                                    Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    if (fromF.getWidth() == toF.getWidth()) { // f16 <-> bf16, through f32.
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
      return arith::TruncFOp::create(b, loc, to, v);
    }
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    return arith::TruncFOp::create(b, loc, to, v);
  }
  if (fromF) { // float -> int
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   buildScalarConstant(b, loc, from, 0));
    return arith::FPToSIOp::create(b, loc, to, v);
  }
  if (toF) { // int -> float
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (tw == 1)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 buildScalarConstant(b, loc, from, 0));
  if (fw == 1)
    return arith::ExtUIOp::create(b, loc, to, v);
  if (fw < tw)
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

Value mlir::paddle::buildReductionInit(OpBuilder &b, Location loc, Type type,
                                       ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return buildScalarConstant(b, loc, type, 0);
  case ReductionKind::Prod:
    return buildScalarConstant(b, loc, type, 1);
  case ReductionKind::Max:
  case ReductionKind::Min: {
    bool isMax = kind == ReductionKind::Max;
    if (auto ft = dyn_cast<FloatType>(type))
      return arith::ConstantOp::create(
          b, loc,
          b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), isMax)));
    unsigned w = type.getIntOrFloatBitWidth();
    APInt v = isMax ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w);
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  }
  }
  llvm_unreachable("unknown reduction kind");
}

Value mlir::paddle::buildReductionCombine(OpBuilder &b, Location loc, Value acc,
                                          Value v, ReductionKind kind) {
  bool isFloat = isa<FloatType>(v.getType());
  switch (kind) {
  case ReductionKind::Sum:
    return isFloat ? arith::AddFOp::create(b, loc, acc, v).getResult()
                   : arith::AddIOp::create(b, loc, acc, v).getResult();
  case ReductionKind::Prod:
    return isFloat ? arith::MulFOp::create(b, loc, acc, v).getResult()
                   : arith::MulIOp::create(b, loc, acc, v).getResult();
  case ReductionKind::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, acc, v).getResult()
                   : arith::MaxSIOp::create(b, loc, acc, v).getResult();
  case ReductionKind::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, acc, v).getResult()
                   : arith::MinSIOp::create(b, loc, acc, v).getResult();
  }
  llvm_unreachable("unknown reduction kind");
}

Value mlir::paddle::buildMap(
    OpBuilder &b, Location loc, Value v, Type elementType,
    function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto vt = cast<RankedTensorType>(v.getType());
  auto type = RankedTensorType::get(vt.getShape(), elementType);
  Value init = buildEmptyLike(b, loc, type, v);
  int64_t rank = vt.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{v}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, fn(nb, nloc, args[0]));
      });
  return generic.getResult(0);
}

Value mlir::paddle::buildCount(OpBuilder &b, Location loc, Value x,
                               ArrayRef<int64_t> dims, Type type) {
  auto xt = cast<RankedTensorType>(x.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d : dims) {
    Value size = xt.isDynamicDim(d)
                     ? tensor::DimOp::create(b, loc, x, d).getResult()
                     : arith::ConstantIndexOp::create(b, loc, xt.getDimSize(d))
                           .getResult();
    count = arith::MulIOp::create(b, loc, count, size);
  }
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return arith::SIToFPOp::create(b, loc, type, i64);
}

Value mlir::paddle::buildExpandReducedDims(OpBuilder &b, Location loc, Value v,
                                           Value x, ArrayRef<int64_t> dims) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    bool isReduced = llvm::is_contained(dims, d);
    shape.push_back(isReduced ? 1 : xt.getDimSize(d));
    if (isReduced)
      sizes.push_back(b.getIndexAttr(1));
    else if (xt.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, x, d).getResult());
    else
      sizes.push_back(b.getIndexAttr(xt.getDimSize(d)));
    // Size-1 dims join the group of the next kept dim, trailing ones that
    // of the last kept dim.
    pending.push_back(d);
    if (!isReduced) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, vt.getElementType()), v, groups,
      sizes);
}
