//===- ShardingRules.cpp - the loop nest of each paddle op ----------------===//
//
// See ShardingRules.h. Rules follow the ops' semantics in the ODS
// descriptions; each comment names the dims that stay whole and why.
//
//===----------------------------------------------------------------------===//

#include "ShardingRules.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::paddle;
using utils::IteratorType;

namespace {

constexpr int64_t kWhole = ShardingRule::kWhole;

int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

int64_t positiveAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Every dim of `v` whole (or no entry for a value that is not a tensor).
SmallVector<int64_t> whole(Value v) {
  int64_t rank = rankOf(v);
  return SmallVector<int64_t>(std::max<int64_t>(rank, 0), kWhole);
}

/// The dims of `operand`, right-aligned with `loops` (the dims of the
/// result it broadcasts to, NumPy style): a dim of static size 1 that the
/// result enlarges broadcasts, and stays whole.
SmallVector<int64_t> broadcastDims(Value operand, RankedTensorType result,
                                   ArrayRef<int64_t> loops) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type)
    return {};
  SmallVector<int64_t> dims(type.getRank(), kWhole);
  int64_t lead = result.getRank() - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t r = d + lead;
    if (r < 0)
      continue;
    if (type.getDimSize(d) == 1 && result.getDimSize(r) != 1)
      continue;
    dims[d] = loops[r];
  }
  return dims;
}

/// One parallel loop per dim of the first result; operands broadcast.
ShardingRule elementwise(Operation *op) {
  ShardingRule rule;
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> loops;
  for (int64_t d = 0; d < result.getRank(); ++d)
    loops.push_back(rule.addLoop());
  for (Value operand : op->getOperands())
    rule.dims.push_back(broadcastDims(operand, result, loops));
  rule.dims.push_back(loops);
  return rule;
}

/// Dims of `x` along their own parallel loop, except those in `wholeDims`;
/// the result (same shape) runs along the same loops.
ShardingRule sameShape(Operation *op, Value x, ArrayRef<int64_t> wholeDims) {
  ShardingRule rule;
  SmallVector<int64_t> loops;
  for (int64_t d = 0; d < rankOf(x); ++d)
    loops.push_back(llvm::is_contained(wholeDims, d) ? kWhole : rule.addLoop());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  for (Value operand : op->getOperands())
    rule.dims.push_back(operand == x ? loops
                                     : broadcastDims(operand, result, loops));
  rule.dims.push_back(loops);
  return rule;
}

/// Every dim whole: the op runs unsplit on every device.
ShardingRule replicated(Operation *op) {
  ShardingRule rule;
  for (Value v : op->getOperands())
    rule.dims.push_back(whole(v));
  for (Value v : op->getResults())
    rule.dims.push_back(whole(v));
  return rule;
}

/// `[..., M, K] @ [..., K, N]`: batch dims and M, N parallel, K a sum. A
/// rank-1 operand has no M (or N); batch dims broadcast.
ShardingRule matmul(MatmulOp op) {
  ShardingRule rule;
  auto result = cast<RankedTensorType>(op.getType());
  int64_t lhsRank = rankOf(op.getLhs()), rhsRank = rankOf(op.getRhs());
  int64_t rank = result.getRank();
  // Result dims: batch..., M (if lhs rank >= 2), N (if rhs rank >= 2).
  SmallVector<int64_t> resultLoops;
  for (int64_t d = 0; d < rank; ++d)
    resultLoops.push_back(rule.addLoop());
  int64_t k = rule.addLoop(IteratorType::reduction, shard::ReductionKind::Sum);
  int64_t n = rhsRank >= 2 ? resultLoops[rank - 1] : kWhole;
  int64_t m =
      lhsRank >= 2 ? resultLoops[rank - (rhsRank >= 2 ? 2 : 1)] : kWhole;
  int64_t batch = rank - (lhsRank >= 2) - (rhsRank >= 2);
  ArrayRef<int64_t> batchLoops = ArrayRef(resultLoops).take_front(batch);
  auto operandDims = [&](Value v, int64_t rows, int64_t cols) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> dims(type.getRank(), kWhole);
    if (type.getRank() == 1) {
      dims[0] = rows == k ? rows : cols;
      return dims;
    }
    dims[type.getRank() - 2] = rows;
    dims[type.getRank() - 1] = cols;
    int64_t lead = batch - (type.getRank() - 2);
    for (int64_t d = 0; d + 2 < type.getRank(); ++d) {
      int64_t r = d + lead;
      if (r < 0 || (type.getDimSize(d) == 1 && result.getDimSize(r) != 1))
        continue;
      dims[d] = batchLoops[r];
    }
    return dims;
  };
  rule.dims.push_back(operandDims(op.getLhs(), m, k));
  rule.dims.push_back(operandDims(op.getRhs(), k, n));
  rule.dims.push_back(resultLoops);
  return rule;
}

/// Reduced dims are reductions of `kind` (a split one gives partial
/// results that an all_reduce combines); the others parallel.
ShardingRule reduction(Operation *op, Value x, ArrayRef<int64_t> axes,
                       bool keepdims, shard::ReductionKind kind) {
  ShardingRule rule;
  int64_t rank = rankOf(x);
  SmallVector<int64_t> xDims, resultDims;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    int64_t loop = rule.addLoop(
        reduced ? IteratorType::reduction : IteratorType::parallel, kind);
    xDims.push_back(loop);
    if (!reduced)
      resultDims.push_back(loop);
    else if (keepdims)
      resultDims.push_back(kWhole);
  }
  rule.dims.push_back(xDims);
  rule.dims.push_back(resultDims);
  return rule;
}

template <typename ReduceOp>
ShardingRule reduceRule(ReduceOp op, shard::ReductionKind kind) {
  int64_t rank = rankOf(op.getX());
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> given = op.getAxes()) {
    for (int64_t a : *given)
      axes.push_back(positiveAxis(a, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  return reduction(op, op.getX(), axes, op.getKeepdims(), kind);
}

/// `[N, C, H, W] * [O, C/groups, KH, KW]`: N and O parallel, C a sum (for
/// one group); the spatial dims stay whole (a split would need halos).
ShardingRule conv2d(Conv2DOp op) {
  ShardingRule rule;
  int64_t n = rule.addLoop();
  bool oneGroup = op.getGroups() == 1;
  int64_t o = oneGroup ? rule.addLoop() : kWhole;
  int64_t c = oneGroup ? rule.addLoop(IteratorType::reduction) : kWhole;
  rule.dims.push_back({n, c, kWhole, kWhole});
  rule.dims.push_back({o, c, kWhole, kWhole});
  rule.dims.push_back({n, o, kWhole, kWhole});
  return rule;
}

/// Pooling over `[N, C, H, W]`: N and C split, the window dims whole.
ShardingRule pool2d(Operation *op) {
  ShardingRule rule;
  int64_t n = rule.addLoop(), c = rule.addLoop();
  rule.dims.push_back({n, c, kWhole, kWhole});
  rule.dims.push_back({n, c, kWhole, kWhole});
  return rule;
}

ShardingRule transpose(TransposeOp op) {
  ShardingRule rule;
  SmallVector<int64_t> xDims, resultDims;
  for (int64_t d = 0; d < rankOf(op.getX()); ++d)
    xDims.push_back(rule.addLoop());
  for (int64_t p : op.getPerm())
    resultDims.push_back(xDims[p]);
  rule.dims.push_back(xDims);
  rule.dims.push_back(resultDims);
  return rule;
}

/// A reshape keeps the split of a dim that it leaves alone, and of the
/// major dim of a group it merges or splits: splitting [H, D] -> [H*D] at
/// H cuts H*D into the same contiguous blocks (the partition checks that
/// the sizes divide). Dims past a dynamic size that is not matched one to
/// one stay whole.
ShardingRule reshape(ReshapeOp op) {
  ShardingRule rule;
  auto xType = cast<RankedTensorType>(op.getX().getType());
  auto rType = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> xs = xType.getShape(), rs = rType.getShape();
  SmallVector<int64_t> xDims(xs.size(), kWhole), rDims(rs.size(), kWhole);
  size_t i = 0, j = 0;
  while (i < xs.size() && j < rs.size()) {
    if (ShapedType::isDynamic(xs[i]) || ShapedType::isDynamic(rs[j])) {
      if (!ShapedType::isDynamic(xs[i]) || !ShapedType::isDynamic(rs[j]))
        break;
      xDims[i++] = rDims[j++] = rule.addLoop();
      continue;
    }
    // Grow the two groups until their element counts agree.
    size_t i0 = i, j0 = j;
    int64_t xp = xs[i++], rp = rs[j++];
    bool dynamic = false;
    while (xp != rp) {
      if (xp < rp && i < xs.size() && !ShapedType::isDynamic(xs[i]))
        xp *= xs[i++];
      else if (rp < xp && j < rs.size() && !ShapedType::isDynamic(rs[j]))
        rp *= rs[j++];
      else {
        dynamic = true;
        break;
      }
    }
    if (dynamic)
      break;
    // The major non-unit dim of each group.
    while (i0 + 1 < i && xs[i0] == 1)
      ++i0;
    while (j0 + 1 < j && rs[j0] == 1)
      ++j0;
    if (xs[i0] != 1 && rs[j0] != 1)
      xDims[i0] = rDims[j0] = rule.addLoop();
  }
  rule.dims.push_back(xDims);
  rule.dims.push_back(rDims);
  return rule;
}

ShardingRule broadcastTo(BroadcastToOp op) {
  ShardingRule rule;
  auto result = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> loops;
  for (int64_t d = 0; d < result.getRank(); ++d)
    loops.push_back(rule.addLoop());
  rule.dims.push_back(broadcastDims(op.getX(), result, loops));
  rule.dims.push_back(loops);
  return rule;
}

/// A slice splits the dims it takes whole (start 0, stride 1, to the end).
ShardingRule slice(SliceOp op) {
  auto type = cast<RankedTensorType>(op.getX().getType());
  SmallVector<int64_t> cut;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool all = op.getStart()[d] == 0 && op.getStride()[d] == 1 &&
               !type.isDynamicDim(d) && op.getLimit()[d] >= type.getDimSize(d);
    if (!all)
      cut.push_back(d);
  }
  return sameShape(op, op.getX(), cut);
}

ShardingRule concat(ConcatOp op) {
  ShardingRule rule;
  int64_t rank = rankOf(op.getResult());
  int64_t axis = positiveAxis(op.getAxis(), rank);
  SmallVector<int64_t> loops;
  for (int64_t d = 0; d < rank; ++d)
    loops.push_back(d == axis ? kWhole : rule.addLoop());
  for (size_t i = 0; i <= op.getInputs().size(); ++i)
    rule.dims.push_back(loops);
  return rule;
}

ShardingRule pad(PadOp op) {
  SmallVector<int64_t> padded;
  for (int64_t d = 0; d < rankOf(op.getX()); ++d)
    if (op.getLow()[d] != 0 || op.getHigh()[d] != 0)
      padded.push_back(d);
  return sameShape(op, op.getX(), padded);
}

/// `x[..., indices, ...]` along `axis`: the result is x's dims before the
/// axis, the indices' dims, x's dims after it. The gathered dim of x is a
/// sum: split (a vocabulary-parallel embedding), each device gathers the
/// rows it holds and zeros for the others, and an all_reduce adds them.
ShardingRule gather(GatherOp op) {
  ShardingRule rule;
  int64_t xRank = rankOf(op.getX()), iRank = rankOf(op.getIndices());
  int64_t axis = positiveAxis(op.getAxis(), xRank);
  SmallVector<int64_t> xDims, iDims, rDims;
  for (int64_t d = 0; d < xRank; ++d)
    xDims.push_back(d == axis ? rule.addLoop(IteratorType::reduction)
                              : rule.addLoop());
  for (int64_t d = 0; d < iRank; ++d)
    iDims.push_back(rule.addLoop());
  llvm::append_range(rDims, ArrayRef(xDims).take_front(axis));
  llvm::append_range(rDims, iDims);
  llvm::append_range(rDims, ArrayRef(xDims).drop_front(axis + 1));
  rule.dims.push_back(xDims);
  rule.dims.push_back(iDims);
  rule.dims.push_back(rDims);
  return rule;
}

/// scatter_add: x and the result share their loops, the scattered dim
/// (axis) included: split (the gradient of a vocabulary-parallel
/// embedding), each device adds the updates whose index falls in the rows
/// it holds. The indices' dims are a sum: updates split along them give
/// partial results that an all_reduce adds (x counted on one device).
ShardingRule scatterAdd(ScatterAddOp op) {
  ShardingRule rule;
  int64_t xRank = rankOf(op.getX()), iRank = rankOf(op.getIndices());
  int64_t axis = positiveAxis(op.getAxis(), xRank);
  SmallVector<int64_t> xDims, iDims, uDims;
  for (int64_t d = 0; d < xRank; ++d)
    xDims.push_back(rule.addLoop());
  for (int64_t d = 0; d < iRank; ++d)
    iDims.push_back(rule.addLoop(IteratorType::reduction));
  llvm::append_range(uDims, ArrayRef(xDims).take_front(axis));
  llvm::append_range(uDims, iDims);
  llvm::append_range(uDims, ArrayRef(xDims).drop_front(axis + 1));
  rule.dims = {xDims, iDims, uDims, xDims};
  return rule;
}

/// rng_uniform of a static shape: one parallel loop per dim. A split
/// device draws its block only (paddle.rng_uniform_block), numbers equal
/// to the unsharded ones. With dynamic sizes it runs whole.
ShardingRule rngUniform(RngUniformOp op) {
  if (!op.getType().hasStaticShape())
    return replicated(op);
  ShardingRule rule;
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < op.getType().getRank(); ++d)
    dims.push_back(rule.addLoop());
  rule.dims.push_back({}); // the seed: rank 0
  rule.dims.push_back(dims);
  return rule;
}

} // namespace

ShardingRule mlir::paddle::getShardingRule(Operation *op) {
  // Unary ops and casts have the Elementwise trait; the binary ops,
  // compare and select broadcast, which the trait does not allow.
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, RemOp, AndOp,
          OrOp, XorOp, CompareOp, SelectOp>(op))
    return elementwise(op);
  return llvm::TypeSwitch<Operation *, ShardingRule>(op)
      .Case([](MatmulOp op) { return matmul(op); })
      .Case([](ReduceSumOp op) {
        return reduceRule(op, shard::ReductionKind::Sum);
      })
      .Case([](ReduceMeanOp op) {
        return reduceRule(op, shard::ReductionKind::Average);
      })
      .Case([](ReduceProdOp op) {
        return reduceRule(op, shard::ReductionKind::Product);
      })
      .Case([](ReduceMaxOp op) {
        return reduceRule(op, shard::ReductionKind::Max);
      })
      .Case([](ReduceMinOp op) {
        return reduceRule(op, shard::ReductionKind::Min);
      })
      .Case([](ArgmaxOp op) {
        int64_t rank = rankOf(op.getX());
        int64_t axis = positiveAxis(static_cast<int64_t>(op.getAxis()), rank);
        // The arg of a split dim is not a partial result: it stays whole.
        ShardingRule rule = sameShape(op, op.getX(), {axis});
        SmallVector<int64_t> &result = rule.dims.back();
        if (!op.getKeepdims())
          result.erase(result.begin() + axis);
        return rule;
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([](auto op) {
        int64_t rank = rankOf(op.getX());
        return sameShape(
            op, op.getX(),
            {positiveAxis(static_cast<int64_t>(op.getAxis()), rank)});
      })
      .Case([](LayerNormOp op) {
        int64_t rank = rankOf(op.getX());
        SmallVector<int64_t> axes;
        for (int64_t a : op.getAxes())
          axes.push_back(positiveAxis(a, rank));
        return sameShape(op, op.getX(), axes);
      })
      .Case([](BatchNormInferenceOp op) {
        ShardingRule rule;
        SmallVector<int64_t> loops;
        for (int64_t d = 0; d < rankOf(op.getX()); ++d)
          loops.push_back(rule.addLoop());
        rule.dims.push_back(loops);
        for (int i = 0; i < 4; ++i)
          rule.dims.push_back({loops[1]});
        rule.dims.push_back(loops);
        return rule;
      })
      .Case([](Conv2DOp op) { return conv2d(op); })
      .Case<MaxPool2DOp, AvgPool2DOp>([](Operation *op) { return pool2d(op); })
      .Case([](TransposeOp op) { return transpose(op); })
      .Case([](ReshapeOp op) { return reshape(op); })
      .Case([](BroadcastToOp op) { return broadcastTo(op); })
      .Case([](SliceOp op) { return slice(op); })
      .Case([](ConcatOp op) { return concat(op); })
      .Case([](PadOp op) { return pad(op); })
      .Case([](GatherOp op) { return gather(op); })
      .Case([](ScatterAddOp op) { return scatterAdd(op); })
      .Case([](RngUniformOp op) { return rngUniform(op); })
      .Default([](Operation *op) { return replicated(op); });
}
