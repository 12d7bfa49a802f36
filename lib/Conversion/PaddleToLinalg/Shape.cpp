//===- Shape.cpp - lower reshape, transpose, slice, gather, ... -----------===//
//
// The shape ops lower to tensor ops (reshape, extract/insert_slice), linalg
// (transpose, broadcast, copy, fill, gather) and, for scatter_add, an scf.for
// nest whose accumulated order matches numpy.add.at. Each lowering builds the
// inferred result type and casts to the written one where that is more
// dynamic.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// The single type an inference function gives (it has already succeeded
/// in the verifier, so it cannot fail here).
RankedTensorType inferredType(LogicalResult result, ArrayRef<Type> types) {
  (void)result;
  assert(succeeded(result) && types.size() == 1 && "verified op");
  return cast<RankedTensorType>(types.front());
}

Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value toValue(OpBuilder &b, Location loc, OpFoldResult ofr) {
  if (auto v = dyn_cast<Value>(ofr))
    return v;
  return constIndex(b, loc, *getConstantIntValue(ofr));
}

Value product(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  Value p = constIndex(b, loc, 1);
  for (OpFoldResult s : sizes)
    p = arith::MulIOp::create(b, loc, p, toValue(b, loc, s));
  return p;
}

Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value l,
          Value r) {
  return arith::CmpIOp::create(b, loc, p, l, r);
}

/// A negative index counts from the end of a dim of size `n` (numpy).
Value wrapIndex(OpBuilder &b, Location loc, Value idx, Value n) {
  Value zero = constIndex(b, loc, 0);
  Value negative = cmp(b, loc, arith::CmpIPredicate::slt, idx, zero);
  Value wrapped = arith::AddIOp::create(b, loc, idx, n);
  return arith::SelectOp::create(b, loc, negative, wrapped, idx);
}

/// Reads an i32/i64 index from `indices` as an `index` value.
Value readIndex(OpBuilder &b, Location loc, Value scalar) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar);
}

/// Fails at run time unless every index in `indices` is in [-n, n), the
/// range numpy and ONNX accept for a dim of size `n` (a negative index
/// counts from the end): one min/max reduction over the indices before the
/// op rather than a branch per element in its loop, and nothing at all for
/// constant indices in range.
void buildIndexRangeCheck(OpBuilder &b, Location loc, Value indices,
                          OpFoldResult n, int64_t axis) {
  auto type = cast<RankedTensorType>(indices.getType());
  std::optional<int64_t> size = getConstantIntValue(n);
  DenseIntElementsAttr constant;
  if (size && matchPattern(indices, m_Constant(&constant)) &&
      llvm::all_of(constant.getValues<APInt>(), [&](const APInt &v) {
        return v.getSExtValue() >= -*size && v.getSExtValue() < *size;
      }))
    return;
  Type element = type.getElementType();
  unsigned width = element.getIntOrFloatBitWidth();
  Value lowest, highest;
  if (type.getRank() == 0) {
    lowest = highest = tensor::ExtractOp::create(b, loc, indices, ValueRange{});
  } else {
    auto scalarType = RankedTensorType::get({}, element);
    auto filled = [&](const APInt &v) {
      Value c = arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, v));
      Value empty = buildEmpty(b, loc, scalarType, {});
      return linalg::FillOp::create(b, loc, c, empty).getResult(0);
    };
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, b.getContext()),
                                   AffineMap::get(rank, 0, b.getContext())};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    auto minMax = linalg::GenericOp::create(
        b, loc, TypeRange{scalarType, scalarType}, ValueRange{indices},
        ValueRange{filled(APInt::getSignedMaxValue(width)),
                   filled(APInt::getSignedMinValue(width))},
        maps, iterators, [](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::MinSIOp::create(nb, l, args[0], args[1]),
                         arith::MaxSIOp::create(nb, l, args[0], args[2])});
        });
    lowest =
        tensor::ExtractOp::create(b, loc, minMax.getResult(0), ValueRange{});
    highest =
        tensor::ExtractOp::create(b, loc, minMax.getResult(1), ValueRange{});
  }
  Value bound = toValue(b, loc, n);
  Value negBound = arith::SubIOp::create(b, loc, constIndex(b, loc, 0), bound);
  Value aboveLow = cmp(b, loc, arith::CmpIPredicate::sge,
                       readIndex(b, loc, lowest), negBound);
  Value belowHigh =
      cmp(b, loc, arith::CmpIPredicate::slt, readIndex(b, loc, highest), bound);
  Value inRange = arith::AndIOp::create(b, loc, aboveLow, belowHigh);
  std::string sizeText = size ? " (size " + std::to_string(*size) + ")" : "";
  buildRuntimeCheck(b, loc, inRange,
                    "an index is out of range for dim " + Twine(axis) +
                        " of x" + sizeText +
                        ": valid indices are -size to size - 1");
}

/// True when some dim of `type` is statically 0: the tensor has no elements
/// and no slice of it can be taken (a subview offset must be in bounds).
bool isStaticallyEmpty(RankedTensorType type) {
  return llvm::is_contained(type.getShape(), 0);
}

// The CPU JIT has no memrefCopy runtime function, which bufferization calls
// for a memref.copy from or into a strided view. So data moves into and out
// of slices through linalg.copy (lowered to loops), never through a
// tensor-level copy that bufferizes to memref.copy.

/// `dest` with `src` written at `offsets` (sizes those of `src`, stride 1),
/// in place after bufferization.
Value insertByCopy(OpBuilder &b, Location loc, Value src, Value dest,
                   ArrayRef<OpFoldResult> offsets) {
  auto srcType = cast<RankedTensorType>(src.getType());
  if (isStaticallyEmpty(srcType))
    return dest;
  SmallVector<OpFoldResult> sizes = getMixedSizes(b, loc, src);
  SmallVector<OpFoldResult> ones(srcType.getRank(), b.getIndexAttr(1));
  Value slot = tensor::ExtractSliceOp::create(b, loc, srcType, dest, offsets,
                                              sizes, ones);
  Value copied = linalg::CopyOp::create(b, loc, src, slot).getResult(0);
  return tensor::InsertSliceOp::create(b, loc, copied, dest, offsets, sizes,
                                       ones);
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<Type> types;
    RankedTensorType type = inferredType(
        inferReshape(std::nullopt, xType, op.getShape(), types), types);
    rewriter.replaceOp(op, castTo(rewriter, loc,
                                  build(rewriter, loc, x, type, op.getShape()),
                                  op.getType()));
    return success();
  }

  static Value build(OpBuilder &b, Location loc, Value x, RankedTensorType type,
                     ArrayRef<int64_t> shape) {
    auto xType = cast<RankedTensorType>(x.getType());
    if (xType.hasStaticShape() && type.hasStaticShape()) {
      if (xType.getShape() == type.getShape())
        return x;
      // Static reshapes that only merge or split neighbouring dims are views.
      if (type.getRank() < xType.getRank())
        if (auto re = getReassociationIndicesForCollapse(xType.getShape(),
                                                         type.getShape()))
          return tensor::CollapseShapeOp::create(b, loc, type, x, *re);
      if (type.getRank() > xType.getRank())
        if (auto re = getReassociationIndicesForCollapse(type.getShape(),
                                                         xType.getShape()))
          return tensor::ExpandShapeOp::create(b, loc, type, x, *re);
      // Any other static reshape merges the dims of x into the runs both
      // shapes share, then splits those runs: [128, 1, 768] -> [128, 768]
      // -> [128, 12, 64]. Both steps are views where x's layout allows
      // (a slice of a wider row, say), where tensor.reshape bufferizes to
      // a copy into an identity layout.
      if (auto merged = commonRuns(xType.getShape(), type.getShape())) {
        auto mergedType = RankedTensorType::get(*merged, type.getElementType());
        auto collapse = getReassociationIndicesForCollapse(
            xType.getShape(), mergedType.getShape());
        auto expand = getReassociationIndicesForCollapse(type.getShape(),
                                                         mergedType.getShape());
        if (collapse && expand) {
          Value view = x;
          if (xType != mergedType)
            view = tensor::CollapseShapeOp::create(b, loc, mergedType, x,
                                                   *collapse);
          if (mergedType == type)
            return view;
          return tensor::ExpandShapeOp::create(b, loc, type, view, *expand);
        }
      }
    }
    // Otherwise tensor.reshape with the sizes computed at run time.
    if (type.hasStaticShape()) {
      SmallVector<Value> sizes;
      for (int64_t s : type.getShape())
        sizes.push_back(constIndex(b, loc, s));
      if (!xType.hasStaticShape())
        buildRuntimeCheck(b, loc,
                          cmp(b, loc, arith::CmpIPredicate::eq,
                              product(b, loc, getMixedSizes(b, loc, x)),
                              constIndex(b, loc, type.getNumElements())),
                          "the element count does not match the shape");
      return buildReshape(b, loc, x, type, sizes);
    }
    // Only a -1 entry of the target is dynamic.
    Value count = product(b, loc, getMixedSizes(b, loc, x));
    int64_t known = 1;
    for (int64_t s : shape)
      if (s != -1)
        known *= s;
    Value knownV = constIndex(b, loc, known);
    // The verifier rejects a -1 with a zero size, so known > 0.
    Value rem = arith::RemUIOp::create(b, loc, count, knownV);
    buildRuntimeCheck(
        b, loc,
        cmp(b, loc, arith::CmpIPredicate::eq, rem, constIndex(b, loc, 0)),
        "the element count is not a multiple of the known sizes");
    SmallVector<Value> sizes;
    for (int64_t s : shape)
      sizes.push_back(
          s == -1 ? arith::DivUIOp::create(b, loc, count, knownV).getResult()
                  : constIndex(b, loc, s));
    return buildReshape(b, loc, x, type, sizes);
  }

  /// The sizes of the shortest runs of dims of `from` and `to` that have
  /// equal products, in order: [128, 1, 768] and [128, 12, 64] give
  /// [128, 768]. None for shapes with no elements.
  static std::optional<SmallVector<int64_t>> commonRuns(ArrayRef<int64_t> from,
                                                        ArrayRef<int64_t> to) {
    if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0))
      return std::nullopt;
    SmallVector<int64_t> runs;
    int64_t pf = 1, pt = 1, done = 1;
    size_t i = 0, j = 0;
    while (i < from.size() || j < to.size()) {
      if (j == to.size() || (i < from.size() && pf <= pt))
        pf *= from[i++];
      else
        pt *= to[j++];
      if (pf == pt && pf != done) {
        runs.push_back(pf / done);
        done = pf;
      }
    }
    return runs;
  }

  static Value buildReshape(OpBuilder &b, Location loc, Value x,
                            RankedTensorType type, ValueRange sizes) {
    Value shapeTensor = tensor::FromElementsOp::create(
        b, loc,
        RankedTensorType::get({static_cast<int64_t>(sizes.size())},
                              b.getIndexType()),
        sizes);
    return tensor::ReshapeOp::create(b, loc, type, x, shapeTensor);
  }
};

//===----------------------------------------------------------------------===//
// broadcast_to, transpose
//===----------------------------------------------------------------------===//

struct BroadcastToLowering : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    SmallVector<Type> types;
    RankedTensorType type = inferredType(
        inferBroadcastTo(std::nullopt, x.getType(), op.getShape(), types),
        types);
    // The elementwise helper already broadcasts size-1 dims, adds leading
    // dims and asserts that dynamic dims match static targets.
    Value result = buildBroadcastElementwise(
        rewriter, loc, type, ValueRange{x},
        [](OpBuilder &, Location, ValueRange s) { return s[0]; });
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    SmallVector<Type> types;
    RankedTensorType type = inferredType(
        inferTranspose(std::nullopt, x.getType(), op.getPerm(), types), types);
    if (op.movesOnlyUnitDims()) {
      // The same elements in the same order: a reshape, which is a view,
      // not a copy (BERT's [1, 128, 768] <-> [128, 1, 768] around each
      // attention).
      Value view =
          ReshapeLowering::build(rewriter, loc, x, type, type.getShape());
      rewriter.replaceOp(op, castTo(rewriter, loc, view, op.getType()));
      return success();
    }
    SmallVector<Value> dyn;
    for (auto [i, p] : llvm::enumerate(op.getPerm()))
      if (type.isDynamicDim(i))
        dyn.push_back(tensor::DimOp::create(rewriter, loc, x, p));
    Value init = buildEmpty(rewriter, loc, type, dyn);
    auto transpose =
        linalg::TransposeOp::create(rewriter, loc, x, init, op.getPerm());
    rewriter.replaceOp(
        op, castTo(rewriter, loc, transpose->getResult(0), op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// slice, concat, pad
//===----------------------------------------------------------------------===//

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<Type> types;
    RankedTensorType type =
        inferredType(inferSlice(std::nullopt, xType, op.getStart(),
                                op.getLimit(), op.getStride(), types),
                     types);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < xType.getRank(); ++d) {
      int64_t start = op.getStart()[d], limit = op.getLimit()[d],
              stride = op.getStride()[d];
      strides.push_back(rewriter.getIndexAttr(stride));
      if (!xType.isDynamicDim(d)) {
        // An empty slice starts at 0: an offset must stay inside the dim.
        int64_t size = type.getDimSize(d);
        offsets.push_back(rewriter.getIndexAttr(size == 0 ? 0 : start));
        sizes.push_back(rewriter.getIndexAttr(size));
        continue;
      }
      // The same clamping as sliceDimSize, at run time.
      Value n = tensor::DimOp::create(rewriter, loc, x, d);
      Value lo = arith::MinSIOp::create(rewriter, loc,
                                        constIndex(rewriter, loc, start), n);
      Value hi = arith::MinSIOp::create(rewriter, loc,
                                        constIndex(rewriter, loc, limit), n);
      Value span = arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, hi, lo),
          constIndex(rewriter, loc, 0));
      Value size = arith::CeilDivSIOp::create(
          rewriter, loc, span, constIndex(rewriter, loc, stride));
      Value empty = cmp(rewriter, loc, arith::CmpIPredicate::eq, size,
                        constIndex(rewriter, loc, 0));
      offsets.push_back(arith::SelectOp::create(rewriter, loc, empty,
                                                constIndex(rewriter, loc, 0),
                                                lo)
                            .getResult());
      sizes.push_back(size);
    }
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dyn.push_back(cast<Value>(sizes[d]));
    Value result = buildEmpty(rewriter, loc, type, dyn);
    if (!isStaticallyEmpty(type)) {
      // Copy the strided view into a dense tensor (see insertByCopy).
      Value view = tensor::ExtractSliceOp::create(rewriter, loc, type, x,
                                                  offsets, sizes, strides);
      result = linalg::CopyOp::create(rewriter, loc, view, result).getResult(0);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange inputs = adaptor.getInputs();
    SmallVector<Type> types;
    RankedTensorType type =
        inferredType(inferConcat(std::nullopt, inputs.getTypes(),
                                 static_cast<int64_t>(op.getAxis()), types),
                     types);
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;

    SmallVector<SmallVector<OpFoldResult>> inputSizes;
    for (Value in : inputs)
      inputSizes.push_back(getMixedSizes(rewriter, loc, in));
    // Other dims: a static size where any input has one, and every dynamic
    // size must equal it at run time.
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        if (type.isDynamicDim(d)) {
          Value total = constIndex(rewriter, loc, 0);
          for (auto &sizes : inputSizes)
            total = arith::AddIOp::create(rewriter, loc, total,
                                          toValue(rewriter, loc, sizes[d]));
          dyn.push_back(total);
        }
        continue;
      }
      OpFoldResult size = type.isDynamicDim(d)
                              ? inputSizes.front()[d]
                              : rewriter.getIndexAttr(type.getDimSize(d));
      for (auto &sizes : inputSizes)
        if (sizes[d] != size)
          buildSameSizeCheck(rewriter, loc, sizes[d], size,
                             "input sizes differ in dim " + std::to_string(d));
      if (type.isDynamicDim(d))
        dyn.push_back(toValue(rewriter, loc, size));
    }
    Value result = buildEmpty(rewriter, loc, type, dyn);
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (auto [in, sizes] : llvm::zip(inputs, inputSizes)) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = offset;
      result = insertByCopy(rewriter, loc, in, result, offsets);
      // Offsets stay constants while the sizes before them are static.
      auto a = getConstantIntValue(offset),
           b = getConstantIntValue(sizes[axis]);
      if (a && b)
        offset = rewriter.getIndexAttr(*a + *b);
      else
        offset =
            arith::AddIOp::create(rewriter, loc, toValue(rewriter, loc, offset),
                                  toValue(rewriter, loc, sizes[axis]))
                .getResult();
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    SmallVector<Type> types;
    RankedTensorType type = inferredType(
        inferPad(std::nullopt, x.getType(), op.getLow(), op.getHigh(), types),
        types);
    // A fill and a copy of x at the low offsets, rather than tensor.pad,
    // whose bufferization copies through memref.copy (see insertByCopy) and
    // takes out-of-bounds views of empty inputs.
    SmallVector<OpFoldResult> low;
    for (int64_t l : op.getLow())
      low.push_back(rewriter.getIndexAttr(l));
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      Value n = tensor::DimOp::create(rewriter, loc, x, d);
      dyn.push_back(arith::AddIOp::create(
          rewriter, loc, n,
          constIndex(rewriter, loc, op.getLow()[d] + op.getHigh()[d])));
    }
    Value value = arith::ConstantOp::create(rewriter, loc,
                                            cast<TypedAttr>(op.getValue()));
    Value filled = linalg::FillOp::create(rewriter, loc, value,
                                          buildEmpty(rewriter, loc, type, dyn))
                       .getResult(0);
    Value result = insertByCopy(rewriter, loc, x, filled, low);
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// gather, scatter_add
//===----------------------------------------------------------------------===//

struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), indices = adaptor.getIndices();
    auto xType = cast<RankedTensorType>(x.getType());
    auto iType = cast<RankedTensorType>(indices.getType());
    SmallVector<Type> types;
    RankedTensorType type =
        inferredType(inferGather(std::nullopt, xType, iType,
                                 static_cast<int64_t>(op.getAxis()), types),
                     types);
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += xType.getRank();
    int64_t k = iType.getRank(), rank = type.getRank();

    // One constant index in range of a static dim (ONNX exports pick q, k
    // and v from a stacked tensor this way): a slice of x without that dim,
    // which bufferizes to a view instead of a copy by loops that read x by
    // index. The index wraps as below.
    DenseIntElementsAttr constant;
    int64_t n0 = xType.getDimSize(axis);
    std::optional<int64_t> constantIndex;
    if (k == 0 && !ShapedType::isDynamic(n0) &&
        matchPattern(indices, m_Constant(&constant)))
      constantIndex = (*constant.begin()).getSExtValue();
    if (constantIndex && *constantIndex >= -n0 && *constantIndex < n0) {
      int64_t i = *constantIndex < 0 ? *constantIndex + n0 : *constantIndex;
      SmallVector<OpFoldResult> offsets(xType.getRank(),
                                        rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = getMixedSizes(rewriter, loc, x);
      SmallVector<OpFoldResult> strides(xType.getRank(),
                                        rewriter.getIndexAttr(1));
      offsets[axis] = rewriter.getIndexAttr(i);
      sizes[axis] = rewriter.getIndexAttr(1);
      Value slice = tensor::ExtractSliceOp::create(rewriter, loc, type, x,
                                                   offsets, sizes, strides);
      rewriter.replaceOp(op, castTo(rewriter, loc, slice, op.getType()));
      return success();
    }

    // Result dim d comes from x before the axis, from indices inside it and
    // from x after it.
    SmallVector<OpFoldResult> xSizes = getMixedSizes(rewriter, loc, x);
    SmallVector<OpFoldResult> iSizes = getMixedSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> sizes(xSizes.begin(), xSizes.begin() + axis);
    llvm::append_range(sizes, iSizes);
    sizes.append(xSizes.begin() + axis + 1, xSizes.end());
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        dyn.push_back(toValue(rewriter, loc, sizes[d]));
    Value init = buildEmpty(rewriter, loc, type, dyn);

    // Checked before the loop, so the loop reads in bounds without a
    // branch or a clamp per element.
    buildIndexRangeCheck(rewriter, loc, indices, xSizes[axis], axis);
    Value n = toValue(rewriter, loc, xSizes[axis]);

    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < k; ++i)
      idxExprs.push_back(rewriter.getAffineDimExpr(axis + i));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, idxExprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{indices}, ValueRange{init},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = wrapIndex(b, l, readIndex(b, l, args[0]), n);
          SmallVector<Value> at;
          for (int64_t d = 0; d < axis; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          at.push_back(i);
          for (int64_t d = axis + k; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, x, at).getResult());
        });
    rewriter.replaceOp(
        op, castTo(rewriter, loc, generic.getResult(0), op.getType()));
    return success();
  }
};

/// Loops over every element of `updates` in row-major order (the order of
/// numpy.add.at), carrying the result through the loops, and adds each
/// update at its index (all checked to be in range first).
struct ScatterAddLowering : OpConversionPattern<ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += xType.getRank();
    int64_t k = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t rank = cast<RankedTensorType>(updates.getType()).getRank();

    SmallVector<OpFoldResult> xSizes = getMixedSizes(rewriter, loc, x);
    SmallVector<OpFoldResult> iSizes = getMixedSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> uSizes = getMixedSizes(rewriter, loc, updates);
    SmallVector<OpFoldResult> expected(xSizes.begin(), xSizes.begin() + axis);
    llvm::append_range(expected, iSizes);
    expected.append(xSizes.begin() + axis + 1, xSizes.end());
    for (int64_t d = 0; d < rank; ++d)
      buildSameSizeCheck(rewriter, loc, uSizes[d], expected[d],
                         "dim " + std::to_string(d) +
                             " of updates does not match x and indices");

    buildIndexRangeCheck(rewriter, loc, indices, xSizes[axis], axis);
    Value n = toValue(rewriter, loc, xSizes[axis]);
    Value zero = constIndex(rewriter, loc, 0),
          one = constIndex(rewriter, loc, 1);
    SmallVector<Value> lbs(rank, zero), steps(rank, one), ubs;
    for (OpFoldResult s : uSizes)
      ubs.push_back(toValue(rewriter, loc, s));
    Type elementType = xType.getElementType();

    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{x},
        [&](OpBuilder &b, Location l, ValueRange ivs,
            ValueRange acc) -> scf::ValueVector {
          Value idx = readIndex(
              b, l,
              tensor::ExtractOp::create(b, l, indices, ivs.slice(axis, k)));
          idx = wrapIndex(b, l, idx, n);
          SmallVector<Value> at(ivs.take_front(axis));
          at.push_back(idx);
          llvm::append_range(at, ivs.drop_front(axis + k));
          Value old = tensor::ExtractOp::create(b, l, acc[0], at);
          Value u = tensor::ExtractOp::create(b, l, updates, ivs);
          Value sum;
          if (isa<FloatType>(elementType)) {
            // f16/bf16 add in f32 (no native arithmetic for them).
            Type ct = getComputeType(elementType);
            Value a = buildScalarCast(b, l, old, ct);
            Value c = buildScalarCast(b, l, u, ct);
            sum = buildScalarCast(b, l, arith::AddFOp::create(b, l, a, c),
                                  elementType);
          } else {
            sum = arith::AddIOp::create(b, l, old, u);
          }
          return {tensor::InsertOp::create(b, l, sum, acc[0], at).getResult()};
        });
    rewriter.replaceOp(
        op, castTo(rewriter, loc, nest.results.front(), op.getType()));
    return success();
  }
};

} // namespace

void mlir::paddle::populateShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, BroadcastToLowering, TransposeLowering,
               SliceLowering, ConcatLowering, PadLowering, GatherLowering,
               ScatterAddLowering>(patterns.getContext());
}
