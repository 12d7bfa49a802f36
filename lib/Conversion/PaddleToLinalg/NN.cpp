//===- NN.cpp - lower matmul, convolution, pooling and rng_uniform --------===//
//
// Matmul becomes linalg.matmul / linalg.batch_matmul, conv2d the linalg
// convolution named ops, pooling the linalg pooling named ops on a padded
// input, and rng_uniform a linalg.generic hashing each element's linear
// index. f16 and bf16 accumulate in f32 (LLVM has no bf16 arithmetic here)
// and are rounded once at the end, unless the op's result is f32 (mixed
// precision): then the linalg op reads bf16 and accumulates into f32.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::paddle;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value toValue(OpBuilder &b, Location loc, OpFoldResult ofr) {
  return getValueOrCreateConstantIndexOp(b, loc, ofr);
}

/// The dynamic entries of `sizes` for a tensor of `type`.
SmallVector<Value> dynamicSizesOf(OpBuilder &b, Location loc,
                                  RankedTensorType type,
                                  ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(toValue(b, loc, sizes[i]));
  return dyn;
}

/// A fresh tensor of `type` (sizes `sizes`) filled with `value`.
Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> sizes, Value value) {
  Value empty = buildEmpty(b, loc, type, dynamicSizesOf(b, loc, type, sizes));
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// Rounds an f32 accumulator back to f16/bf16; other types pass through.
Value truncateTo(OpBuilder &b, Location loc, Value acc, Type elementType) {
  auto type = cast<RankedTensorType>(acc.getType());
  if (type.getElementType() == elementType)
    return acc;
  return buildBroadcastElementwise(
      b, loc, type.clone(elementType), ValueRange{acc},
      [&](OpBuilder &nb, Location l, ValueRange s) -> Value {
        return arith::TruncFOp::create(nb, l, elementType, s[0]);
      });
}

/// The lowered value may know more or fewer static sizes than the op's
/// written result type; a tensor.cast reconciles them.
Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

SmallVector<int64_t> staticSizes(ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes) {
    std::optional<int64_t> c = getConstantIntValue(s);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  return shape;
}

Value expandShape(OpBuilder &b, Location loc, Value src,
                  ArrayRef<ReassociationIndices> reassociation,
                  ArrayRef<OpFoldResult> sizes) {
  auto type = RankedTensorType::get(
      staticSizes(sizes),
      cast<RankedTensorType>(src.getType()).getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, src, reassociation, sizes);
}

DenseIntElementsAttr i64Vector(OpBuilder &b, ArrayRef<int64_t> values) {
  return b.getI64TensorAttr(values);
}

/// Index arithmetic on values, for the sizes that are only known at run
/// time and for the divisor computed inside a linalg.generic.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return indexConst(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value ge(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x, y);
  }
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Broadcasts `v` (`[batch..., X, Y]`, fewer or size-1 batch dims allowed)
/// to `[batch..., X, Y]` with the full batch sizes, unless nothing stretches.
Value broadcastBatch(OpBuilder &b, Location loc, Value v,
                     ArrayRef<int64_t> batchShape,
                     ArrayRef<OpFoldResult> batchSizes) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t nb = batchShape.size(), rank = nb + 2;
  int64_t own = type.getRank() - 2, offset = nb - own;
  bool stretches = offset != 0;
  for (int64_t d = 0; d < own; ++d)
    stretches |= type.getDimSize(d) == 1 && batchShape[d + offset] != 1;
  if (!stretches) {
    // Take the static batch sizes the other operand knows, so that folding
    // and re-splitting the batch dims sees the same static sizes.
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t d = 0; d < nb; ++d)
      if (!ShapedType::isDynamic(batchShape[d]))
        shape[d] = batchShape[d];
    return castTo(b, loc, v, type.clone(shape));
  }

  SmallVector<OpFoldResult> sizes(batchSizes);
  SmallVector<OpFoldResult> ownSizes = getMixedSizes(b, loc, v);
  sizes.append({ownSizes[own], ownSizes[own + 1]});
  auto resultType =
      RankedTensorType::get(staticSizes(sizes), type.getElementType());
  Value init =
      buildEmpty(b, loc, resultType, dynamicSizesOf(b, loc, resultType, sizes));
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < own; ++d)
    exprs.push_back(type.getDimSize(d) == 1 && batchShape[d + offset] != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(d + offset));
  exprs.push_back(b.getAffineDimExpr(nb));
  exprs.push_back(b.getAffineDimExpr(nb + 1));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, b.getContext()),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{v}, ValueRange{init},
             maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// `out[b..., m, n] = sum_k lhs[b..., m, k] * rhs[b..., k, n]` as a
/// linalg.generic, accumulating in `accType`; both operands have the full
/// batch dims.
Value buildBatchedContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              ArrayRef<OpFoldResult> sizes, Type accType) {
  int64_t rank = sizes.size(), nb = rank - 2;
  auto type = RankedTensorType::get(staticSizes(sizes), accType);
  Value init =
      buildFilled(b, loc, type, sizes, buildScalarConstant(b, loc, accType, 0));
  SmallVector<AffineExpr> batch, lhsExprs, rhsExprs, outExprs;
  for (int64_t d = 0; d < nb; ++d)
    batch.push_back(b.getAffineDimExpr(d));
  AffineExpr m = b.getAffineDimExpr(nb), n = b.getAffineDimExpr(nb + 1),
             k = b.getAffineDimExpr(nb + 2);
  lhsExprs = batch, rhsExprs = batch, outExprs = batch;
  lhsExprs.append({m, k});
  rhsExprs.append({k, n});
  outExprs.append({m, n});
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, lhsExprs, ctx),
                                 AffineMap::get(rank + 1, 0, rhsExprs, ctx),
                                 AffineMap::get(rank + 1, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &bb, Location l, ValueRange args) {
               Value x = buildScalarCast(bb, l, args[0], accType);
               Value y = buildScalarCast(bb, l, args[1], accType);
               Value v =
                   isa<FloatType>(accType)
                       ? arith::AddFOp::create(
                             bb, l, args[2], arith::MulFOp::create(bb, l, x, y))
                             .getResult()
                       : arith::AddIOp::create(
                             bb, l, args[2], arith::MulIOp::create(bb, l, x, y))
                             .getResult();
               linalg::YieldOp::create(bb, l, v);
             })
      .getResult(0);
}

/// Whether `t` is a matrix: rank 2, or only size-1 dims before the last two.
bool isMatrix(RankedTensorType t) {
  return llvm::all_of(t.getShape().drop_back(2),
                      [](int64_t s) { return s == 1; });
}

/// `lhs [b..., m, k] @ rhs [1..., k, n]` (a Linear layer on [batch, seq,
/// features]) as one linalg.matmul over `b... * m` rows: the lhs rows are
/// contiguous, so folding the batch dims into M is a view. Broadcasting the
/// matrix to every batch element instead would copy it that many times and
/// leave a batch_matmul of small, skinny matrices. `sizes` are the result's
/// sizes; at most one of the lhs dims folded may be dynamic.
Value buildMatmulOverRows(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          ArrayRef<OpFoldResult> sizes, Type accType) {
  auto allButLast = [](int64_t rank) {
    ReassociationIndices rows;
    for (int64_t d = 0; d + 1 < rank; ++d)
      rows.push_back(d);
    return SmallVector<ReassociationIndices>{rows, {rank - 1}};
  };
  int64_t lhsRank = cast<RankedTensorType>(lhs.getType()).getRank();
  int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
  lhs = tensor::CollapseShapeOp::create(b, loc, lhs, allButLast(lhsRank));
  if (rhsRank > 2)
    rhs = tensor::CollapseShapeOp::create(b, loc, rhs, allButLast(rhsRank));
  SmallVector<OpFoldResult> flat = {getMixedSizes(b, loc, lhs)[0],
                                    sizes.back()};
  auto type = RankedTensorType::get(staticSizes(flat), accType);
  Value init =
      buildFilled(b, loc, type, flat, buildScalarConstant(b, loc, accType, 0));
  Value result =
      linalg::MatmulOp::create(b, loc, TypeRange{type}, ValueRange{lhs, rhs},
                               ValueRange{init})
          .getResult(0);
  return expandShape(b, loc, result, allButLast(sizes.size()), sizes);
}

struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    Type elementType = op.getType().getElementType();
    Type accType = getComputeType(elementType);

    // NumPy promotes vectors to matrices: [K] @ . -> [1, K], . @ [K] -> [K, 1].
    bool lhsVector = cast<RankedTensorType>(lhs.getType()).getRank() == 1;
    bool rhsVector = cast<RankedTensorType>(rhs.getType()).getRank() == 1;
    OpFoldResult one = rewriter.getIndexAttr(1);
    if (lhsVector)
      lhs = expandShape(rewriter, loc, lhs, {{0, 1}},
                        {one, getMixedSizes(rewriter, loc, lhs)[0]});
    if (rhsVector)
      rhs = expandShape(rewriter, loc, rhs, {{0, 1}},
                        {getMixedSizes(rewriter, loc, rhs)[0], one});

    auto lt = cast<RankedTensorType>(lhs.getType());
    auto rt = cast<RankedTensorType>(rhs.getType());
    SmallVector<OpFoldResult> ls = getMixedSizes(rewriter, loc, lhs);
    SmallVector<OpFoldResult> rs = getMixedSizes(rewriter, loc, rhs);
    int64_t lb = lt.getRank() - 2, rb = rt.getRank() - 2;
    int64_t nb = std::max(lb, rb);

    // Broadcast batch sizes: a static size other than 1 wins, then a
    // dynamic one (the other side must then match at run time), then 1.
    SmallVector<int64_t> batchShape;
    SmallVector<OpFoldResult> batchSizes;
    for (int64_t d = 0; d < nb; ++d) {
      int64_t shape = 1;
      OpFoldResult size = one;
      auto consider = [&](RankedTensorType t, ArrayRef<OpFoldResult> sizes,
                          int64_t i) {
        if (i < 0)
          return;
        int64_t s = t.getDimSize(i);
        bool better =
            ShapedType::isDynamic(s)
                ? shape == 1
                : (s != 1 && (shape == 1 || ShapedType::isDynamic(shape)));
        if (better) {
          shape = s;
          size = sizes[i];
        }
      };
      consider(lt, ls, d - (nb - lb));
      consider(rt, rs, d - (nb - rb));
      // A dynamic operand dim never stretches: it must match.
      for (auto [t, sizes, i] :
           {std::make_tuple(lt, ArrayRef(ls), d - (nb - lb)),
            std::make_tuple(rt, ArrayRef(rs), d - (nb - rb))})
        if (i >= 0 && t.isDynamicDim(i))
          buildSameSizeCheck(rewriter, loc, sizes[i], size,
                             "batch dims do not broadcast");
      batchShape.push_back(shape);
      batchSizes.push_back(size);
    }
    buildSameSizeCheck(rewriter, loc, ls[lb + 1], rs[rb],
                       "contracted dims differ");

    OpFoldResult m = ls[lb], n = rs[rb + 1];
    Value zero = buildScalarConstant(rewriter, loc, accType, 0);
    Value result;
    if (lb > 0 && isMatrix(rt) &&
        llvm::count_if(lt.getShape().drop_back(), ShapedType::isDynamic) <= 1) {
      SmallVector<OpFoldResult> sizes(batchSizes);
      sizes.append({m, n});
      result = buildMatmulOverRows(rewriter, loc, lhs, rhs, sizes, accType);
    } else if (nb == 0) {
      SmallVector<OpFoldResult> sizes = {m, n};
      auto type = RankedTensorType::get(staticSizes(sizes), accType);
      Value init = buildFilled(rewriter, loc, type, sizes, zero);
      result = linalg::MatmulOp::create(rewriter, loc, TypeRange{type},
                                        ValueRange{lhs, rhs}, ValueRange{init})
                   .getResult(0);
    } else if (nb > 1 &&
               llvm::count_if(batchShape, ShapedType::isDynamic) > 1) {
      // Folding two dynamic dims into one and splitting them again trips
      // memref's expand-strided-metadata in this LLVM, so this case keeps
      // its batch dims in a linalg.generic contraction.
      lhs = broadcastBatch(rewriter, loc, lhs, batchShape, batchSizes);
      rhs = broadcastBatch(rewriter, loc, rhs, batchShape, batchSizes);
      SmallVector<OpFoldResult> sizes(batchSizes);
      sizes.append({m, n});
      result = buildBatchedContraction(rewriter, loc, lhs, rhs, sizes, accType);
    } else {
      // batch_matmul has one batch dim: fold all of them into it.
      lhs = broadcastBatch(rewriter, loc, lhs, batchShape, batchSizes);
      rhs = broadcastBatch(rewriter, loc, rhs, batchShape, batchSizes);
      SmallVector<ReassociationIndices> reassociation;
      ReassociationIndices batchGroup;
      for (int64_t d = 0; d < nb; ++d)
        batchGroup.push_back(d);
      reassociation = {batchGroup, {nb}, {nb + 1}};
      if (nb > 1) {
        lhs =
            tensor::CollapseShapeOp::create(rewriter, loc, lhs, reassociation);
        rhs =
            tensor::CollapseShapeOp::create(rewriter, loc, rhs, reassociation);
      }
      OpFoldResult flatBatch = getMixedSizes(rewriter, loc, lhs)[0];
      SmallVector<OpFoldResult> sizes = {flatBatch, m, n};
      auto type = RankedTensorType::get(staticSizes(sizes), accType);
      Value init = buildFilled(rewriter, loc, type, sizes, zero);
      result =
          linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{type},
                                        ValueRange{lhs, rhs}, ValueRange{init})
              .getResult(0);
      if (nb > 1) {
        SmallVector<OpFoldResult> fullSizes(batchSizes);
        fullSizes.append({m, n});
        result = expandShape(rewriter, loc, result, reassociation, fullSizes);
      }
    }
    result = truncateTo(rewriter, loc, result, elementType);

    // Drop the dims added for vector operands.
    if (lhsVector || rhsVector) {
      int64_t rank = nb + 2;
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      for (int64_t d = 0; d < rank; ++d) {
        pending.push_back(d);
        bool dropped = (d == nb && lhsVector) || (d == nb + 1 && rhsVector);
        if (!dropped) {
          groups.push_back(pending);
          pending.clear();
        }
      }
      if (!pending.empty() && !groups.empty())
        groups.back().append(pending.begin(), pending.end());
      result = tensor::CollapseShapeOp::create(rewriter, loc, result, groups);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

/// `src` (NCHW) padded in its last two dims with `value`: `low` before and
/// `high` after. Built as a gather in a linalg.generic rather than as
/// tensor.pad, whose bufferization copies into a strided subview through
/// the `memrefCopy` runtime function, which the JIT does not link.
Value padSpatial(OpBuilder &b, Location loc, Value src, ArrayRef<int64_t> low,
                 ArrayRef<OpFoldResult> high, Value value) {
  auto srcType = cast<RankedTensorType>(src.getType());
  SmallVector<OpFoldResult> srcSizes = getMixedSizes(b, loc, src);
  SmallVector<OpFoldResult> sizes = {srcSizes[0], srcSizes[1]};
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> s = getConstantIntValue(srcSizes[2 + i]);
    std::optional<int64_t> h = getConstantIntValue(high[i]);
    if (s && h) {
      sizes.push_back(b.getIndexAttr(*s + low[i] + *h));
      continue;
    }
    sizes.push_back(
        arith::AddIOp::create(b, loc, toValue(b, loc, srcSizes[2 + i]),
                              arith::AddIOp::create(b, loc,
                                                    indexConst(b, loc, low[i]),
                                                    toValue(b, loc, high[i])))
            .getResult());
  }
  auto type =
      RankedTensorType::get(staticSizes(sizes), srcType.getElementType());
  Value init = buildEmpty(b, loc, type, dynamicSizesOf(b, loc, type, sizes));
  Value srcDims[2] = {toValue(b, loc, srcSizes[2]),
                      toValue(b, loc, srcSizes[3])};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(4)}, iterators,
             [&](OpBuilder &bb, Location l, ValueRange) {
               Value zero = indexConst(bb, l, 0);
               SmallVector<Value> indices = {linalg::IndexOp::create(bb, l, 0),
                                             linalg::IndexOp::create(bb, l, 1)};
               Value inside;
               for (int i = 0; i < 2; ++i) {
                 Value at = arith::SubIOp::create(
                     bb, l, linalg::IndexOp::create(bb, l, 2 + i),
                     indexConst(bb, l, low[i]));
                 Value ok = arith::AndIOp::create(
                     bb, l,
                     arith::CmpIOp::create(bb, l, arith::CmpIPredicate::sge, at,
                                           zero),
                     arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt, at,
                                           srcDims[i]));
                 inside =
                     inside
                         ? arith::AndIOp::create(bb, l, inside, ok).getResult()
                         : ok;
                 // Clamp so the load stays in bounds; its value is unused
                 // outside the input.
                 Value last = arith::SubIOp::create(bb, l, srcDims[i],
                                                    indexConst(bb, l, 1));
                 indices.push_back(arith::MaxSIOp::create(
                     bb, l, zero, arith::MinSIOp::create(bb, l, at, last)));
               }
               Value v = tensor::ExtractOp::create(bb, l, src, indices);
               linalg::YieldOp::create(
                   bb, l,
                   arith::SelectOp::create(bb, l, inside, v, value)
                       .getResult());
             })
      .getResult(0);
}

struct Conv2DLowering : OpConversionPattern<Conv2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    ArrayRef<int64_t> strides = op.getStrides(), padding = op.getPadding(),
                      dilations = op.getDilations();
    int64_t groups = op.getGroups();
    Type elementType = op.getType().getElementType();
    Type accType = getComputeType(elementType);
    SmallVector<Type> inferred;
    if (failed(inferConv2D(std::nullopt, input.getType(), filter.getType(),
                           strides, padding, dilations, groups, inferred)))
      return rewriter.notifyMatchFailure(op, "invalid conv2d");
    auto resultType = cast<RankedTensorType>(inferred[0]);

    // The result may be f32 for bf16 operands (mixed precision): padding
    // is in the input's type.
    Value zero = buildScalarConstant(
        rewriter, loc, cast<RankedTensorType>(input.getType()).getElementType(),
        0);
    if (llvm::any_of(padding, [](int64_t p) { return p != 0; })) {
      input = padSpatial(rewriter, loc, input, {padding[0], padding[1]},
                         {rewriter.getIndexAttr(padding[2]),
                          rewriter.getIndexAttr(padding[3])},
                         zero);
      // The library path folds this copy into the convolution's own
      // padding (paddle-use-onednn).
      input.getDefiningOp()->setAttr(
          paddle::PaddleDialect::ZeroPadAttrHelper::getNameStr(),
          rewriter.getDenseI64ArrayAttr(padding));
    }

    SmallVector<OpFoldResult> in = getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> f = getMixedSizes(rewriter, loc, filter);
    if (!getConstantIntValue(in[1]) || !getConstantIntValue(f[1])) {
      Value expected =
          arith::MulIOp::create(rewriter, loc, toValue(rewriter, loc, f[1]),
                                indexConst(rewriter, loc, groups));
      buildSameSizeCheck(rewriter, loc, in[1], expected,
                         "input channels do not match the filter");
    }
    SmallVector<OpFoldResult> outSizes = {in[0], f[0]};
    for (int i = 0; i < 2; ++i) {
      if (!resultType.isDynamicDim(2 + i)) {
        outSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(2 + i)));
        continue;
      }
      // (padded - dilation * (k - 1) - 1) / stride + 1, for a padded input
      // no smaller than the dilated kernel (as the verifier requires of
      // static sizes) and a kernel of at least one element.
      IndexMath im{rewriter, loc};
      Value k = toValue(rewriter, loc, f[2 + i]);
      if (!getConstantIntValue(f[2 + i]))
        buildRuntimeCheck(rewriter, loc, im.ge(k, im.c(1)),
                          "the filter has a spatial size of 0");
      Value span = im.mul(im.c(dilations[i]), im.sub(k, im.c(1)));
      Value extent =
          im.sub(im.sub(toValue(rewriter, loc, in[2 + i]), span), im.c(1));
      buildRuntimeCheck(rewriter, loc, im.ge(extent, im.c(0)),
                        "the padded input is smaller than the dilated kernel");
      outSizes.push_back(im.add(im.div(extent, im.c(strides[i])), im.c(1)));
    }

    DenseIntElementsAttr stridesAttr = i64Vector(rewriter, strides);
    DenseIntElementsAttr dilationsAttr = i64Vector(rewriter, dilations);
    Value accZero = buildScalarConstant(rewriter, loc, accType, 0);
    Value result;
    if (groups == 1) {
      auto type = RankedTensorType::get(staticSizes(outSizes), accType);
      Value init = buildFilled(rewriter, loc, type, outSizes, accZero);
      result = linalg::Conv2DNchwFchwOp::create(
                   rewriter, loc, TypeRange{type}, ValueRange{input, filter},
                   ValueRange{init}, stridesAttr, dilationsAttr)
                   .getResult(0);
    } else {
      // Split the channel dims into (group, channel in group): input
      // [N, G, C/G, H, W], filter [G, O/G, C/G, KH, KW].
      OpFoldResult g = rewriter.getIndexAttr(groups);
      auto perGroup = [&](OpFoldResult total) -> OpFoldResult {
        if (std::optional<int64_t> c = getConstantIntValue(total))
          return rewriter.getIndexAttr(*c / groups);
        return arith::DivUIOp::create(rewriter, loc,
                                      toValue(rewriter, loc, total),
                                      indexConst(rewriter, loc, groups))
            .getResult();
      };
      OpFoldResult cPerGroup =
          getConstantIntValue(f[1]) ? f[1] : perGroup(in[1]);
      if (!getConstantIntValue(f[0])) {
        Value rem =
            arith::RemUIOp::create(rewriter, loc, toValue(rewriter, loc, f[0]),
                                   indexConst(rewriter, loc, groups));
        buildSameSizeCheck(rewriter, loc, rem, rewriter.getIndexAttr(0),
                           "output channels are not divisible by groups");
      }
      OpFoldResult oPerGroup = perGroup(f[0]);
      // A static channels-per-group with dynamic channels: make the input's
      // channel dim static (checked above) so the split is consistent.
      if (std::optional<int64_t> cg = getConstantIntValue(cPerGroup)) {
        auto it = cast<RankedTensorType>(input.getType());
        SmallVector<int64_t> shape(it.getShape());
        shape[1] = *cg * groups;
        input = castTo(rewriter, loc, input, it.clone(shape));
        in[1] = rewriter.getIndexAttr(shape[1]);
      }
      Value input5 = expandShape(rewriter, loc, input, {{0}, {1, 2}, {3}, {4}},
                                 {in[0], g, cPerGroup, in[2], in[3]});
      Value filter5 =
          expandShape(rewriter, loc, filter, {{0, 1}, {2}, {3}, {4}},
                      {g, oPerGroup, f[1], f[2], f[3]});
      SmallVector<OpFoldResult> sizes5 = {outSizes[0], g, oPerGroup,
                                          outSizes[2], outSizes[3]};
      auto type = RankedTensorType::get(staticSizes(sizes5), accType);
      Value init = buildFilled(rewriter, loc, type, sizes5, accZero);
      result = linalg::Conv2DNgchwGfchwOp::create(
                   rewriter, loc, TypeRange{type}, ValueRange{input5, filter5},
                   ValueRange{init}, stridesAttr, dilationsAttr)
                   .getResult(0);
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, result,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    }
    result = truncateTo(rewriter, loc, result, elementType);
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// max_pool2d, avg_pool2d
//===----------------------------------------------------------------------===//

template <typename OpTy> struct Pool2DLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool isMax = std::is_same_v<OpTy, MaxPool2DOp>;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      padding = op.getPadding();
    bool ceilMode = op.getCeilMode();
    Type elementType = op.getType().getElementType();
    Type accType = getComputeType(elementType);
    SmallVector<Type> inferred;
    if (failed(inferPool2D(std::nullopt, input.getType(), kernel, strides,
                           padding, ceilMode, inferred)))
      return rewriter.notifyMatchFailure(op, "invalid pooling");
    auto resultType = cast<RankedTensorType>(inferred[0]);
    IndexMath im{rewriter, loc};

    // Output sizes, and the bottom/right padding that makes every window
    // (ceil mode ones too) fit: the padded extent is (out - 1) * s + k.
    SmallVector<OpFoldResult> in = getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> outSizes = {in[0], in[1]};
    SmallVector<OpFoldResult> highPad;
    for (int i = 0; i < 2; ++i) {
      int64_t k = kernel[i], s = strides[i], lo = padding[i],
              hi = padding[2 + i];
      if (!resultType.isDynamicDim(2 + i)) {
        int64_t size = *getConstantIntValue(in[2 + i]);
        int64_t out = resultType.getDimSize(2 + i);
        outSizes.push_back(rewriter.getIndexAttr(out));
        highPad.push_back(
            rewriter.getIndexAttr(std::max(hi, (out - 1) * s + k - size - lo)));
        continue;
      }
      Value size = toValue(rewriter, loc, in[2 + i]);
      Value span = im.sub(im.add(size, im.c(lo + hi)), im.c(k));
      buildRuntimeCheck(rewriter, loc, im.ge(span, im.c(0)),
                        "input is smaller than the kernel");
      Value out;
      if (ceilMode) {
        out = im.add(im.div(im.add(span, im.c(s - 1)), im.c(s)), im.c(1));
        Value startsInPad = im.ge(im.mul(im.sub(out, im.c(1)), im.c(s)),
                                  im.add(size, im.c(lo)));
        out = arith::SelectOp::create(rewriter, loc, startsInPad,
                                      im.sub(out, im.c(1)), out);
      } else {
        out = im.add(im.div(span, im.c(s)), im.c(1));
      }
      outSizes.push_back(out);
      Value needed = im.add(im.mul(im.sub(out, im.c(1)), im.c(s)), im.c(k));
      highPad.push_back(
          im.max(im.c(hi), im.sub(needed, im.add(size, im.c(lo)))));
    }

    // Padded positions never win a max and add nothing to a sum.
    Value padValue = isMax ? buildReductionInit(rewriter, loc, elementType,
                                                ReductionKind::Max)
                           : buildScalarConstant(rewriter, loc, elementType, 0);
    bool noPad = padding[0] == 0 && padding[1] == 0 &&
                 llvm::all_of(highPad, [](OpFoldResult p) {
                   return isConstantIntValue(p, 0);
                 });
    Value padded = input;
    if (!noPad) {
      padded = padSpatial(rewriter, loc, input, {padding[0], padding[1]},
                          highPad, padValue);
      std::optional<int64_t> bottom = getConstantIntValue(highPad[0]),
                             right = getConstantIntValue(highPad[1]);
      if (isMax && bottom && right)
        padded.getDefiningOp()->setAttr(
            paddle::PaddleDialect::MaxPoolPadAttrHelper::getNameStr(),
            rewriter.getDenseI64ArrayAttr(
                {padding[0], padding[1], *bottom, *right}));
    }

    auto accTensorType = RankedTensorType::get(staticSizes(outSizes), accType);
    Value init = buildFilled(
        rewriter, loc, accTensorType, outSizes,
        isMax ? buildReductionInit(rewriter, loc, accType, ReductionKind::Max)
              : buildScalarConstant(rewriter, loc, accType, 0));
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, accType);
    DenseIntElementsAttr stridesAttr = i64Vector(rewriter, strides);
    DenseIntElementsAttr dilationsAttr = i64Vector(rewriter, {1, 1});
    Value result;
    if constexpr (isMax) {
      result = linalg::PoolingNchwMaxOp::create(
                   rewriter, loc, TypeRange{accTensorType},
                   ValueRange{padded, window}, ValueRange{init}, stridesAttr,
                   dilationsAttr)
                   .getResult(0);
      result = truncateTo(rewriter, loc, result, elementType);
    } else {
      Value sum = linalg::PoolingNchwSumOp::create(
                      rewriter, loc, TypeRange{accTensorType},
                      ValueRange{padded, window}, ValueRange{init}, stridesAttr,
                      dilationsAttr)
                      .getResult(0);
      result = divideByWindowSize(rewriter, loc, op, sum, in, outSizes);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }

  /// sum / divisor, the divisor as PyTorch's avg_pool2d computes it from the
  /// output position.
  static Value divideByWindowSize(OpBuilder &b, Location loc, OpTy op,
                                  Value sum, ArrayRef<OpFoldResult> in,
                                  ArrayRef<OpFoldResult> outSizes) {
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      padding = op.getPadding();
    bool includePad = false;
    if constexpr (!isMax)
      includePad = op.getCountIncludePad();
    Type elementType = op.getType().getElementType();
    auto type = RankedTensorType::get(staticSizes(outSizes), elementType);
    Value init =
        buildEmpty(b, loc, type, dynamicSizesOf(b, loc, type, outSizes));
    Value sizes[2] = {toValue(b, loc, in[2]), toValue(b, loc, in[3])};
    SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(4));
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{sum}, ValueRange{init}, maps,
               iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 IndexMath im{nb, l};
                 Value count = im.c(1);
                 for (int i = 0; i < 2; ++i) {
                   Value o = linalg::IndexOp::create(nb, l, 2 + i);
                   Value start =
                       im.sub(im.mul(o, im.c(strides[i])), im.c(padding[i]));
                   Value end = im.min(im.add(start, im.c(kernel[i])),
                                      im.add(sizes[i], im.c(padding[2 + i])));
                   Value extent = includePad ? im.sub(end, start)
                                             : im.sub(im.min(end, sizes[i]),
                                                      im.max(start, im.c(0)));
                   count = im.mul(count, extent);
                 }
                 Type accType = args[0].getType();
                 Value count64 =
                     arith::IndexCastOp::create(nb, l, nb.getI64Type(), count);
                 Value divisor =
                     arith::SIToFPOp::create(nb, l, accType, count64);
                 Value v = arith::DivFOp::create(nb, l, args[0], divisor);
                 if (accType != elementType)
                   v = arith::TruncFOp::create(nb, l, elementType, v);
                 linalg::YieldOp::create(nb, l, v);
               })
        .getResult(0);
  }
};

//===----------------------------------------------------------------------===//
// rng_uniform
//===----------------------------------------------------------------------===//

/// The linalg.generic of rng_uniform's numbers for a result of `type`
/// (into `init`) from the i64 `seed`, at `offsets` (one per dim, or none)
/// of a whole tensor of `whole` sizes: element j hashes the row-major
/// linear index of offsets + j in the whole tensor (PaddleNNOps.td).
Value buildRngUniform(OpBuilder &rewriter, Location loc, Value seed,
                      RankedTensorType type, Value init, ArrayRef<Value> whole,
                      ArrayRef<Value> offsets, double low, double high) {
  Type elementType = type.getElementType();
  int64_t rank = type.getRank();
  double range = high - low;
  bool isF64 = elementType.isF64();

  auto body = [&](OpBuilder &b, Location l, ValueRange) {
    auto i64 = [&](uint64_t v) -> Value {
      return arith::ConstantOp::create(
          b, l, b.getI64IntegerAttr(static_cast<int64_t>(v)));
    };
    auto xorShift = [&](Value z, uint64_t shift) -> Value {
      return arith::XOrIOp::create(b, l, z,
                                   arith::ShRUIOp::create(b, l, z, i64(shift)));
    };
    // Row-major linear index of the element in the whole tensor.
    Value linear = indexConst(b, l, 0);
    for (int64_t d = 0; d < rank; ++d) {
      Value at = linalg::IndexOp::create(b, l, d);
      if (!offsets.empty())
        at = arith::AddIOp::create(b, l, at, offsets[d]);
      linear = arith::AddIOp::create(
          b, l, arith::MulIOp::create(b, l, linear, whole[d]), at);
    }
    Value i = arith::IndexCastUIOp::create(b, l, b.getI64Type(), linear);
    Value golden = i64(0x9E3779B97F4A7C15ull);
    Value z = arith::XOrIOp::create(b, l, seed,
                                    arith::MulIOp::create(b, l, i, golden));
    z = arith::AddIOp::create(b, l, z, golden);
    z = arith::MulIOp::create(b, l, xorShift(z, 30),
                              i64(0xBF58476D1CE4E5B9ull));
    z = arith::MulIOp::create(b, l, xorShift(z, 27),
                              i64(0x94D049BB133111EBull));
    z = xorShift(z, 31);
    // The top bits as an integer below 2^53 (or 2^24) convert exactly.
    int bits = isF64 ? 53 : 24;
    Value top = arith::ShRUIOp::create(b, l, z, i64(64 - bits));
    Type f64 = b.getF64Type();
    Value u = arith::MulFOp::create(
        b, l, arith::UIToFPOp::create(b, l, f64, top),
        buildScalarConstant(b, l, f64, std::ldexp(1.0, -bits)));
    Value v = arith::AddFOp::create(
        b, l, buildScalarConstant(b, l, f64, low),
        arith::MulFOp::create(b, l, buildScalarConstant(b, l, f64, range), u));
    if (!isF64) {
      v = arith::TruncFOp::create(b, l, b.getF32Type(), v);
      if (!elementType.isF32())
        v = arith::TruncFOp::create(b, l, elementType, v);
    }
    linalg::YieldOp::create(b, l, v);
  };
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)}, iterators,
      body);
  return generic.getResult(0);
}

struct RngUniformLowering : OpConversionPattern<RngUniformOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RngUniformOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value seed = tensor::ExtractOp::create(rewriter, loc, adaptor.getSeed(),
                                           ValueRange{});
    SmallVector<Value> sizes;
    auto dynamicSizes = adaptor.getDynamicSizes();
    for (int64_t d = 0, next = 0; d < type.getRank(); ++d)
      sizes.push_back(type.isDynamicDim(d)
                          ? dynamicSizes[next++]
                          : indexConst(rewriter, loc, type.getDimSize(d)));
    Value init = buildEmpty(rewriter, loc, type, dynamicSizes);
    rewriter.replaceOp(
        op, buildRngUniform(rewriter, loc, seed, type, init, sizes,
                            /*offsets=*/{}, op.getLow().convertToDouble(),
                            op.getHigh().convertToDouble()));
    return success();
  }
};

struct RngUniformBlockLowering : OpConversionPattern<RngUniformBlockOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RngUniformBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value seed = tensor::ExtractOp::create(rewriter, loc, adaptor.getSeed(),
                                           ValueRange{});
    SmallVector<Value> whole, offsets(adaptor.getOffsets());
    for (auto [d, size] : llvm::enumerate(op.getWholeShape())) {
      whole.push_back(indexConst(rewriter, loc, size));
      // The block lies inside the whole tensor.
      Value fits = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ule, offsets[d],
          indexConst(rewriter, loc, size - type.getDimSize(d)));
      buildRuntimeCheck(rewriter, loc, fits,
                        "offset " + Twine(d) +
                            " puts the block outside the whole tensor");
    }
    Value init = buildEmpty(rewriter, loc, type, {});
    rewriter.replaceOp(op,
                       buildRngUniform(rewriter, loc, seed, type, init, whole,
                                       offsets, op.getLow().convertToDouble(),
                                       op.getHigh().convertToDouble()));
    return success();
  }
};

} // namespace

void mlir::paddle::populateNNToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulLowering, Conv2DLowering, Pool2DLowering<MaxPool2DOp>,
               Pool2DLowering<AvgPool2DOp>, RngUniformLowering,
               RngUniformBlockLowering>(ctx);
}
