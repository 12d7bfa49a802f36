//===- ShardingInterfaceImpl.cpp - ShardingInterface for paddle ops -------===//
//
// One external model of the `shard` dialect's ShardingInterface, shared by
// every paddle op, derived from the op's ShardingRule (ShardingRules.h).
//
// It implements the interface's methods itself instead of using upstream's
// defaults, which read indexing maps: those accept only projected
// permutations for results and no constant (broadcast) dims for operands,
// and assert where a dim has no loop. A rule's whole dims take no split
// instead, and an annotation that asks to split one is simply not taken
// (the partition reshards the value).
//
// Partition clones the op on the local operands with local result types,
// fixes the attributes that spell out shapes (reshape, broadcast_to,
// slice), and combines partial results of split reduction loops with a
// `shard.all_reduce`. A split gathered dim (vocabulary-parallel embedding)
// gathers the rows this device holds, zeros the others, and all_reduces.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/ShardingInterfaceImpl.h"

#include "ShardingRules.h"
#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::paddle;
using shard::GridAxesAttr;
using shard::GridAxis;
using shard::Sharding;
using shard::ShardingArray;

namespace {

/// The split axes of dim `d` of a sharding (empty when not split).
ArrayRef<GridAxis> splitAxesOf(const Sharding &s, int64_t d) {
  if (!s || d >= static_cast<int64_t>(s.getSplitAxes().size()))
    return {};
  return s.getSplitAxes()[d].asArrayRef();
}

/// Assigns `axes` to `loop` in `option`; fails where the loop has other
/// axes already or an axis is taken by another loop.
LogicalResult assign(ShardingArray &loops, int64_t loop,
                     ArrayRef<GridAxis> axes) {
  if (!loops[loop].empty())
    return success(llvm::equal(loops[loop], axes));
  for (const auto &other : loops)
    for (GridAxis a : axes)
      if (llvm::is_contained(other, a))
        return failure();
  loops[loop].assign(axes.begin(), axes.end());
  return success();
}

/// The sharding a value with `dims` (ShardingRule) gets from loop axes.
Sharding shardingFor(MLIRContext *ctx, FlatSymbolRefAttr grid,
                     ArrayRef<int64_t> dims, const ShardingArray &loops) {
  SmallVector<GridAxesAttr> split;
  for (int64_t loop : dims)
    split.push_back(GridAxesAttr::get(
        ctx, loop == ShardingRule::kWhole || loop >= (int64_t)loops.size()
                 ? ArrayRef<GridAxis>{}
                 : ArrayRef<GridAxis>(loops[loop])));
  while (!split.empty() && split.back().empty())
    split.pop_back();
  return Sharding::get(grid, split);
}

/// The loop axes the given shardings imply (operands first, then results),
/// ignoring splits of whole dims; fails on a conflict.
FailureOr<ShardingArray> loopAxes(const ShardingRule &rule,
                                  ArrayRef<Sharding> operands,
                                  ArrayRef<Sharding> results,
                                  FlatSymbolRefAttr &grid) {
  ShardingArray loops(rule.loops.size());
  std::vector<Sharding> all(operands.begin(), operands.end());
  all.insert(all.end(), results.begin(), results.end());
  for (auto [i, s] : llvm::enumerate(all)) {
    if (!s)
      continue;
    if (grid && s.getGridAttr() && grid != s.getGridAttr())
      return failure();
    if (!grid)
      grid = s.getGridAttr();
    ArrayRef<int64_t> dims = rule.dims[i];
    for (auto [d, loop] : llvm::enumerate(dims)) {
      ArrayRef<GridAxis> axes = splitAxesOf(s, d);
      if (axes.empty() || loop == ShardingRule::kWhole)
        continue;
      if (failed(assign(loops, loop, axes)))
        return failure();
    }
  }
  return loops;
}

/// The grid axes of the reduction loops, in loop order, with their kind
/// (one kind per op: every reduction loop of a rule has the same).
SmallVector<GridAxis> reductionAxes(const ShardingRule &rule,
                                    const ShardingArray &loops,
                                    shard::ReductionKind &kind) {
  SmallVector<GridAxis> axes;
  for (auto [i, type] : llvm::enumerate(rule.loops)) {
    if (type != utils::IteratorType::reduction || loops[i].empty())
      continue;
    llvm::append_range(axes, loops[i]);
    kind = rule.kinds[i];
  }
  return axes;
}

/// Rewrites the attributes of a cloned op that spell out its shape.
void setLocalShapeAttributes(Operation *op) {
  auto local = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    SmallVector<int64_t> shape(reshape.getShape());
    for (auto [d, size] : llvm::enumerate(local(reshape.getResult())))
      if (shape[d] != -1 && !ShapedType::isDynamic(size))
        shape[d] = size;
    reshape.setShape(shape);
  } else if (auto broadcast = dyn_cast<BroadcastToOp>(op)) {
    SmallVector<int64_t> shape(broadcast.getShape());
    for (auto [d, size] : llvm::enumerate(local(broadcast.getResult())))
      if (!ShapedType::isDynamic(size))
        shape[d] = size;
    broadcast.setShape(shape);
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    // Only whole dims are split (ShardingRules.cpp): their limit is the
    // local size.
    SmallVector<int64_t> limit(slice.getLimit());
    for (auto [d, size] : llvm::enumerate(local(slice.getX())))
      if (slice.getStart()[d] == 0 && slice.getStride()[d] == 1 &&
          !ShapedType::isDynamic(size) && limit[d] > size)
        limit[d] = size;
    slice.setLimit(limit);
  }
}

/// This device's position in the group of grid `axes` (row-major, the
/// first axis major), as an index.
Value groupIndex(OpBuilder &b, Location loc, shard::GridOp grid,
                 ArrayRef<GridAxis> axes) {
  SmallVector<GridAxis> list(axes);
  auto index =
      shard::ProcessMultiIndexOp::create(b, loc, grid.getSymName(), list);
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [i, a] : llvm::enumerate(axes)) {
    Value size = arith::ConstantIndexOp::create(b, loc, grid.getShape()[a]);
    linear = arith::MulIOp::create(b, loc, linear, size);
    linear = arith::AddIOp::create(b, loc, linear, index.getResult()[i]);
  }
  return linear;
}

/// A rank-0 tensor of `type` holding `v` (an index).
Value scalarTensor(OpBuilder &b, Location loc, Value v, Type type) {
  Value cast = arith::IndexCastOp::create(b, loc, type, v);
  return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, type),
                                        cast);
}

/// A device's view of global `indices` into a dim split over grid `axes`
/// (this device holds `rows` of them, from group index x rows): the local
/// index to use, and whether it is one of this device's rows. Negative
/// indices count from the end of the whole dim (`rows` x group size); one
/// outside the whole dim stays out of the local range, so the local op's
/// run-time check still reports it; other devices' rows read row 0.
std::pair<Value, Value> vocabularyIndices(OpBuilder &b, Location loc,
                                          Value indices, int64_t rows,
                                          shard::GridOp grid,
                                          ArrayRef<GridAxis> axes) {
  auto iType = cast<RankedTensorType>(indices.getType());
  Type element = iType.getElementType();
  auto boolType = iType.clone(b.getI1Type());
  int64_t parts = 1;
  for (GridAxis a : axes)
    parts *= grid.getShape()[a];
  auto constant = [&](Value index) {
    return scalarTensor(b, loc, index, element);
  };
  auto index = [&](int64_t v) {
    return constant(arith::ConstantIndexOp::create(b, loc, v));
  };
  auto compare = [&](CompareDirection dir, Value l, Value r) {
    return CompareOp::create(b, loc, boolType, dir, l, r).getResult();
  };
  Value zero = index(0), all = index(rows * parts), local = index(rows);
  Value global = SelectOp::create(
      b, loc, iType, compare(CompareDirection::LT, indices, zero),
      AddOp::create(b, loc, iType, indices, all), indices);
  Value offset = constant(
      arith::MulIOp::create(b, loc, groupIndex(b, loc, grid, axes),
                            arith::ConstantIndexOp::create(b, loc, rows)));
  Value shifted = SubOp::create(b, loc, iType, global, offset);
  Value mine = AndOp::create(b, loc, boolType,
                             compare(CompareDirection::GE, shifted, zero),
                             compare(CompareDirection::LT, shifted, local));
  Value outside = OrOp::create(b, loc, boolType,
                               compare(CompareDirection::LT, global, zero),
                               compare(CompareDirection::GE, global, all));
  Value keep = OrOp::create(b, loc, boolType, mine, outside);
  Value safe = SelectOp::create(b, loc, iType, keep, shifted, zero);
  return {safe, mine};
}

/// `mask` (the indices' shape) reshaped to broadcast against a tensor of
/// `type` whose dims axis.. are the indices' dims (size 1 elsewhere); at
/// most one dim may be dynamic.
FailureOr<Value> broadcastMask(OpBuilder &b, Operation *op, Value mask,
                               RankedTensorType type, int64_t axis) {
  auto mType = cast<RankedTensorType>(mask.getType());
  SmallVector<int64_t> shape(type.getRank(), 1);
  for (int64_t d = 0; d < mType.getRank(); ++d)
    shape[axis + d] = mType.getDimSize(d);
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return op->emitOpError("a split vocabulary dim needs indices with at most "
                           "one dynamic dim");
  SmallVector<int64_t> attr(shape);
  for (int64_t &size : attr)
    if (ShapedType::isDynamic(size))
      size = -1;
  return ReshapeOp::create(b, op->getLoc(),
                           RankedTensorType::get(shape, b.getI1Type()), mask,
                           b.getDenseI64ArrayAttr(attr))
      .getResult();
}

/// `v` where `mask` holds, zero elsewhere.
Value zeroUnless(OpBuilder &b, Location loc, Value mask, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Value zeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, type.getElementType()),
                             b.getZeroAttr(type.getElementType())));
  return SelectOp::create(b, loc, type, mask, v, zeros).getResult();
}

/// Vocabulary-parallel gather: `x` holds this device's rows of the
/// gathered dim; indices of other devices' rows gather row 0, zeroed.
FailureOr<Value> partitionGather(OpBuilder &b, GatherOp op, Value x,
                                 Value indices, RankedTensorType resultType,
                                 shard::GridOp grid, ArrayRef<GridAxis> axes) {
  Location loc = op.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + xType.getRank()
                                  : static_cast<int64_t>(op.getAxis());
  auto [safe, mine] =
      vocabularyIndices(b, loc, indices, xType.getDimSize(axis), grid, axes);
  Value gathered =
      GatherOp::create(b, loc, resultType, x, safe, op.getAxisAttr());
  FailureOr<Value> mask = broadcastMask(b, op, mine, resultType, axis);
  if (failed(mask))
    return failure();
  return zeroUnless(b, loc, *mask, gathered);
}

/// scatter_add split along its scattered dim (`vocabAxes`, possibly none)
/// and/or along the indices' dims (`partialAxes`: its result is then a
/// partial sum, and x is added on the first device of each group only).
FailureOr<Value> partitionScatterAdd(OpBuilder &b, ScatterAddOp op, Value x,
                                     Value indices, Value updates,
                                     RankedTensorType resultType,
                                     shard::GridOp grid,
                                     ArrayRef<GridAxis> vocabAxes,
                                     ArrayRef<GridAxis> partialAxes) {
  Location loc = op.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + xType.getRank()
                                  : static_cast<int64_t>(op.getAxis());
  if (!partialAxes.empty()) {
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, groupIndex(b, loc, grid, partialAxes),
        arith::ConstantIndexOp::create(b, loc, 0));
    Value flag = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), first);
    x = zeroUnless(b, loc, flag, x);
  }
  if (!vocabAxes.empty()) {
    auto [safe, mine] = vocabularyIndices(
        b, loc, indices, xType.getDimSize(axis), grid, vocabAxes);
    FailureOr<Value> mask = broadcastMask(
        b, op, mine, cast<RankedTensorType>(updates.getType()), axis);
    if (failed(mask))
      return failure();
    indices = safe;
    updates = zeroUnless(b, loc, *mask, updates);
  }
  return ScatterAddOp::create(b, loc, resultType, x, indices, updates,
                              op.getAxisAttr())
      .getResult();
}

struct PaddleShardingModel
    : public shard::ShardingInterface::FallbackModel<PaddleShardingModel> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return getShardingRule(op).loops;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    ShardingRule rule = getShardingRule(op);
    SmallVector<shard::ReductionKind> kinds;
    for (auto [type, kind] : llvm::zip_equal(rule.loops, rule.kinds))
      if (type == utils::IteratorType::reduction)
        kinds.push_back(kind);
    return kinds;
  }

  /// For printing (upstream's debug output): whole dims read as 0.
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    ShardingRule rule = getShardingRule(op);
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps;
    for (ArrayRef<int64_t> dims : rule.dims) {
      SmallVector<AffineExpr> exprs;
      for (int64_t loop : dims)
        exprs.push_back(loop == ShardingRule::kWhole
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(loop, ctx));
      maps.push_back(AffineMap::get(rule.loops.size(), 0, exprs, ctx));
    }
    return maps;
  }

  FailureOr<shard::ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    ShardingRule rule = getShardingRule(op);
    FlatSymbolRefAttr grid;
    FailureOr<ShardingArray> loops =
        loopAxes(rule, operandShardings, resultShardings, grid);

    if (failed(loops))
      return failure();
    if (!grid)
      return shard::ShardingOption::makeEmpty();
    shard::ShardingOption option(std::move(*loops), grid);
    shard::removeTrailingEmptySubArray(option.shardingArray);
    return option;
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op,
                         const shard::ShardingOption &option) const {
    ShardingRule rule = getShardingRule(op);
    std::vector<Sharding> result;
    for (auto [i, dims] : llvm::enumerate(rule.dims)) {
      Value v = i < op->getNumOperands()
                    ? op->getOperand(i)
                    : op->getResult(i - op->getNumOperands());
      if (!isa<RankedTensorType>(v.getType())) {
        result.push_back(Sharding());
        continue;
      }
      result.push_back(shardingFor(op->getContext(), option.grid, dims,
                                   option.shardingArray));
    }
    return result;
  }

  LogicalResult
  addShardingAnnotations(Operation *op, OpBuilder &b,
                         const shard::ShardingOption &option) const {
    FailureOr<std::vector<Sharding>> shardings =
        getShardingAnnotations(op, option);
    if (failed(shardings))
      return failure();
    unsigned numOperands = op->getNumOperands();
    for (OpResult result : op->getResults())
      if (Sharding s = (*shardings)[numOperands + result.getResultNumber()])
        shard::maybeInsertTargetShardingAnnotation(s, result, b);
    for (OpOperand &operand : op->getOpOperands()) {
      OpBuilder::InsertionGuard guard(b);
      if (Sharding s = (*shardings)[operand.getOperandNumber()])
        shard::maybeInsertSourceShardingAnnotation(s, operand, b);
    }
    return success();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    // Upstream's resharding gives no value where it has no pattern for a
    // step (paddle-complete-sharding spells out steps it has).
    for (auto [i, v] : llvm::enumerate(partitionedOperands))
      if (!v)
        return op->emitOpError()
               << "operand " << i << " could not be resharded";
    ShardingRule rule = getShardingRule(op);
    FlatSymbolRefAttr gridName;
    // The loops of the results' splits (a broadcast dim runs along a loop
    // no operand has), then those only operands have (reductions).
    FailureOr<ShardingArray> loops =
        loopAxes(rule, operandShardings, resultShardings, gridName);
    if (failed(loops))
      return op->emitOpError("its operands and results are split over the "
                             "same mesh axes along different loops");
    shard::GridOp grid =
        gridName ? shard::getGridOrNull(op, gridName, symbols) : nullptr;
    // Every operand must arrive split as the loops say (propagation and
    // paddle-complete-sharding annotate them so).
    for (auto [i, s] : llvm::enumerate(operandShardings)) {
      if (!grid || !isa<RankedTensorType>(op->getOperand(i).getType()))
        continue;
      Sharding want =
          shardingFor(op->getContext(), gridName, rule.dims[i], *loops);
      if (!s ? !shard::isFullReplication(want) : !s.equalSplitAxes(want))
        return op->emitOpError()
               << "operand " << i << " arrives split differently from what "
               << "the op's other operands and results need";
    }

    shard::ReductionKind kind = shard::ReductionKind::Sum;
    SmallVector<GridAxis> partialAxes = reductionAxes(rule, *loops, kind);
    // Local result types: the rule's split of each result (a split
    // reduction loop leaves partial results the size of the whole).
    SmallVector<Type> localTypes;
    for (OpResult r : op->getResults()) {
      Sharding s =
          grid ? shardingFor(
                     op->getContext(), gridName,
                     rule.dims[op->getNumOperands() + r.getResultNumber()],
                     *loops)
               : Sharding();
      localTypes.push_back(grid && s ? shard::shardType(r.getType(), grid, s)
                                     : r.getType());
    }

    SmallVector<Value> results;
    auto gatherOp = dyn_cast<GatherOp>(op);
    auto scatterOp = dyn_cast<ScatterAddOp>(op);
    SmallVector<GridAxis> vocabAxes;
    if (scatterOp && grid) {
      int64_t axis = scatterOp.getAxis() < 0
                         ? scatterOp.getAxis() + rule.dims[0].size()
                         : static_cast<int64_t>(scatterOp.getAxis());
      llvm::append_range(vocabAxes, (*loops)[rule.dims[0][axis]]);
    }
    auto rngOp = dyn_cast<RngUniformOp>(op);
    bool rngSplit =
        rngOp && grid && llvm::any_of(rule.dims[1], [&](int64_t loop) {
          return !(*loops)[loop].empty();
        });
    if (rngSplit) {
      // This device's block of the whole tensor's numbers.
      Location loc = op->getLoc();
      auto local = cast<RankedTensorType>(localTypes[0]);
      SmallVector<Value> offsets;
      for (auto [d, loop] : llvm::enumerate(rule.dims[1])) {
        Value size =
            arith::ConstantIndexOp::create(builder, loc, local.getDimSize(d));
        offsets.push_back(
            (*loops)[loop].empty()
                ? arith::ConstantIndexOp::create(builder, loc, 0).getResult()
                : arith::MulIOp::create(
                      builder, loc,
                      groupIndex(builder, loc, grid, (*loops)[loop]), size)
                      .getResult());
      }
      results.push_back(RngUniformBlockOp::create(
          builder, loc, local, partitionedOperands[0], offsets,
          builder.getDenseI64ArrayAttr(rngOp.getType().getShape()),
          rngOp.getLowAttr(), rngOp.getHighAttr()));
    } else if (scatterOp && (!vocabAxes.empty() || !partialAxes.empty())) {
      FailureOr<Value> scattered = partitionScatterAdd(
          builder, scatterOp, partitionedOperands[0], partitionedOperands[1],
          partitionedOperands[2], cast<RankedTensorType>(localTypes[0]), grid,
          vocabAxes, partialAxes);
      if (failed(scattered))
        return failure();
      results.push_back(*scattered);
    } else if (gatherOp && !partialAxes.empty()) {
      FailureOr<Value> gathered = partitionGather(
          builder, gatherOp, partitionedOperands[0], partitionedOperands[1],
          cast<RankedTensorType>(localTypes[0]), grid, partialAxes);
      if (failed(gathered))
        return failure();
      results.push_back(*gathered);
    } else {
      IRMapping operands;
      operands.map(op->getOperands(), partitionedOperands);
      Operation *clone = builder.clone(*op, operands);
      for (auto [r, t] : llvm::zip_equal(clone->getResults(), localTypes))
        r.setType(t);
      setLocalShapeAttributes(clone);
      llvm::append_range(results, clone->getResults());
    }
    if (!partialAxes.empty()) {
      for (Value &r : results)
        r = shard::AllReduceOp::create(builder, op->getLoc(), r.getType(),
                                       gridName.getValue(), partialAxes, r,
                                       kind);
    }
    // The annotation after the op may want another split than the rule's
    // (it never does after paddle-complete-sharding); the partition pass
    // reshards from the annotation, so the value must match it.
    for (auto [old, r, s] :
         llvm::zip_equal(op->getResults(), results, resultShardings)) {
      Type want =
          grid && s ? shard::shardType(old.getType(), grid, s) : old.getType();
      if (want != r.getType())
        return op->emitOpError()
               << "partitioned result has type " << r.getType()
               << " where its sharding needs " << want;
      partitionMap.map(old, r);
    }
    return success();
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<PaddleShardingModel>(*ctx), ...);
}

} // namespace

void mlir::paddle::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, PaddleDialect *) {
    attach<
#define GET_OP_LIST
#include "dialects/Paddle/IR/PaddleOps.cpp.inc"
        >(ctx);
  });
}
