//===- Simplify.cpp - layout and scalar rewrites on paddle ops ------------===//
//
// See SimplifyPass in Passes.td. Each pattern leaves fewer or smaller
// kernels than it found; the folders of the paddle ops (run by the greedy
// driver) finish what the patterns start: transpose(transpose) composes,
// reshape(reshape) merges, small constants fold.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_SIMPLIFYPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// A gather of one constant index (a rank-0 index tensor): it drops its
/// axis and reads one slice.
bool isScalarConstantGather(Operation *op) {
  auto gather = dyn_cast<GatherOp>(op);
  return gather &&
         cast<RankedTensorType>(gather.getIndices().getType()).getRank() == 0 &&
         matchPattern(gather.getIndices(), m_Constant());
}

/// The positions of the dims of `shape` other than those of size 1.
SmallVector<int64_t> nonUnitDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1)
      dims.push_back(d);
  return dims;
}

/// True when `from` and `to` are static and have the same sizes other than
/// 1 in the same order: a reshape between them only adds or drops unit
/// dims.
bool onlyUnitDimsDiffer(RankedTensorType from, RankedTensorType to) {
  if (!from.hasStaticShape() || !to.hasStaticShape())
    return false;
  auto sizes = [](RankedTensorType t) {
    SmallVector<int64_t> s;
    for (int64_t d : nonUnitDims(t.getShape()))
      s.push_back(t.getDimSize(d));
    return s;
  };
  return sizes(from) == sizes(to);
}

/// For types that onlyUnitDimsDiffer: the dim of `to` that is dim `d` of
/// `from` (of size other than 1), the same in the order of such dims.
int64_t sameNonUnitDim(RankedTensorType from, int64_t d, RankedTensorType to) {
  SmallVector<int64_t> fromDims = nonUnitDims(from.getShape());
  return nonUnitDims(to.getShape())[llvm::find(fromDims, d) - fromDims.begin()];
}

/// gather(transpose(x, perm), i, axis a) = transpose(gather(x, i, perm[a]),
/// perm without a), also with a reshape that only adds or drops unit dims
/// between the transpose and the gathers. Only when every user of the
/// transpose (or of that reshape, the transpose's only user) is such a
/// gather: then the gathers read slices of x in place (views) and the
/// transposes move a fraction each instead of the whole tensor, often only
/// unit dims. ONNX exports of attention pick q, k and v this way from the
/// QKV projection.
struct GatherOfTranspose : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    if (!isScalarConstantGather(op))
      return failure();
    auto reshape = op.getX().getDefiningOp<ReshapeOp>();
    auto transpose =
        (reshape ? reshape.getX() : op.getX()).getDefiningOp<TransposeOp>();
    if (!transpose)
      return failure();
    Operation *gathered = reshape ? reshape.getOperation() : transpose;
    auto xType = cast<RankedTensorType>(transpose.getX().getType());
    auto tType = cast<RankedTensorType>(transpose.getType());
    auto yType = cast<RankedTensorType>(op.getX().getType());
    auto type = cast<RankedTensorType>(op.getType());
    // Static types: the rewritten result then has the type of the gather.
    if (!xType.hasStaticShape() || !type.hasStaticShape() ||
        !llvm::all_of(gathered->getUsers(), isScalarConstantGather) ||
        (reshape &&
         (!transpose->hasOneUse() || !onlyUnitDimsDiffer(tType, yType))))
      return failure();
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += yType.getRank();
    // The transposed dim the gather takes: through a reshape, the one of
    // the same rank among the dims of size other than 1.
    int64_t taken = axis;
    if (reshape) {
      if (yType.getDimSize(axis) == 1)
        return failure();
      taken = sameNonUnitDim(yType, axis, tType);
    }
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t source = perm[taken];
    SmallVector<int64_t> rest;
    for (auto [d, p] : llvm::enumerate(perm))
      if (static_cast<int64_t>(d) != taken)
        rest.push_back(p - (p > source ? 1 : 0));
    Location loc = op.getLoc();
    Value slice =
        GatherOp::create(rewriter, loc, transpose.getX(), op.getIndices(),
                         rewriter.getI64IntegerAttr(source));
    Value result = TransposeOp::create(rewriter, loc, slice,
                                       rewriter.getDenseI64ArrayAttr(rest));
    if (result.getType() != type)
      result =
          ReshapeOp::create(rewriter, loc, type, result,
                            rewriter.getDenseI64ArrayAttr(type.getShape()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A transpose that keeps the order of the dims other than those of size 1
/// is a reshape (a view after lowering, not a copy).
struct TransposeOfUnitDims : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!op.movesOnlyUnitDims() || !type || !type.hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, type, op.getX(), rewriter.getDenseI64ArrayAttr(type.getShape()));
    return success();
  }
};

/// transpose(reshape(transpose(y))), where the reshape only adds or drops
/// dims of size 1, is reshape(transpose(y)): the transpose moves to the
/// other side of the reshape and composes with the inner one. Attention
/// exports transpose k to heads-major, add a unit batch dim, then
/// transpose the last two dims.
struct TransposeThroughUnitReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getX().getDefiningOp<ReshapeOp>();
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!reshape || !reshape.getX().getDefiningOp<TransposeOp>() || !type ||
        !type.hasStaticShape())
      return failure();
    auto inner = cast<RankedTensorType>(reshape.getX().getType());
    auto middle = cast<RankedTensorType>(reshape.getType());
    if (!onlyUnitDimsDiffer(inner, middle))
      return failure();
    // The dims of the result other than those of size 1, as dims of the
    // inner value; its unit dims go last.
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      if (middle.getDimSize(p) != 1)
        perm.push_back(sameNonUnitDim(middle, p, inner));
    for (auto [d, size] : llvm::enumerate(inner.getShape()))
      if (size == 1)
        perm.push_back(d);
    Location loc = op.getLoc();
    Value moved = TransposeOp::create(rewriter, loc, reshape.getX(),
                                      rewriter.getDenseI64ArrayAttr(perm));
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, type, moved, rewriter.getDenseI64ArrayAttr(type.getShape()));
    return success();
  }
};

/// A tensor of one element whose broadcast against a value of `rank` dims
/// adds no dims: multiplying by it scales each element.
bool isScalar(Value v, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1 &&
         type.getRank() <= rank;
}

/// The operand of `mul` other than the one-element `scale`, with the scale,
/// when `mul` scales a value of `rank` dims without changing its type.
std::optional<std::pair<Value, Value>> matchScale(MulOp mul, int64_t rank) {
  if (!mul)
    return std::nullopt;
  for (int swap = 0; swap < 2; ++swap) {
    Value x = mul->getOperand(swap), scale = mul->getOperand(1 - swap);
    if (isScalar(scale, rank) && x.getType() == mul.getType())
      return std::make_pair(x, scale);
  }
  return std::nullopt;
}

/// Whether scaling `x` is a kernel of its own: x comes from an op that
/// only moves data (or is an argument). After an elementwise op or a
/// matmul the scale joins that op's group or epilogue for free, and
/// moving it would break patterns there (GELU's 0.5 as a oneDNN post-op).
bool scaleIsOwnKernel(Value x) {
  Operation *def = x.getDefiningOp();
  return !def || isa<TransposeOp, ReshapeOp, GatherOp, SliceOp, ConcatOp, PadOp,
                     BroadcastToOp>(def);
}

/// matmul(a * s, b) = matmul(a, b) * s for a one-element s (either
/// operand) where scaling a is a kernel of its own (scaleIsOwnKernel) that
/// only the matmul reads: the
/// scale becomes an epilogue of the matmul (a oneDNN post-op or a fused
/// loop). Attention exports scale q and k by 1/sqrt(sqrt(d)) each; with
/// the rule below the two become one 1/sqrt(d).
struct ScaleOutOfMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value operand = op->getOperand(i);
      auto scaled =
          matchScale(operand.getDefiningOp<MulOp>(),
                     cast<RankedTensorType>(operand.getType()).getRank());
      // With other users the scaling kernel stays, and the scale after the
      // matmul would be extra work.
      if (!scaled || !operand.hasOneUse() || !scaleIsOwnKernel(scaled->first) ||
          getElementTypeOrSelf(scaled->second.getType()) !=
              type.getElementType() ||
          !isScalar(scaled->second, type.getRank()))
        continue;
      Location loc = op.getLoc();
      SmallVector<Value> operands(op->getOperands());
      operands[i] = scaled->first;
      Value product =
          MatmulOp::create(rewriter, loc, type, operands[0], operands[1]);
      rewriter.replaceOpWithNewOp<MulOp>(op, type, product, scaled->second);
      return success();
    }
    return failure();
  }
};

/// (x * s) * t = x * (s * t) for one-element s and t: one scale over x.
struct MergeScales : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return failure();
    auto outer = matchScale(op, type.getRank());
    if (!outer)
      return failure();
    auto inner =
        matchScale(outer->first.getDefiningOp<MulOp>(), type.getRank());
    if (!inner)
      return failure();
    Location loc = op.getLoc();
    // One element of at most type's rank, as both factors are.
    Value scale = MulOp::create(rewriter, loc, inner->second, outer->second);
    rewriter.replaceOpWithNewOp<MulOp>(op, type, inner->first, scale);
    return success();
  }
};

/// Whether `perm` swaps the last two dims and keeps the others in place.
bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  if (n < 2 || perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
    return false;
  for (int64_t i = 0; i + 2 < n; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

std::optional<int64_t> staticElements(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getNumElements();
}

/// transpose(matmul(a, b)) = matmul(transpose(b), transpose(a)), every
/// transpose swapping the last two dims, where that moves fewer elements:
/// a transpose of a transpose composes away, and a transposed operand that
/// only the matmul reads is not needed any more. Reverse-mode autodiff of
/// x @ transpose(W) (a Linear layer with torch's [out, in] weight) gives
/// the weight's gradient as transpose(transpose(x) @ dy): copies of x and
/// of the whole gradient, where matmul(transpose(dy), x) copies dy once
/// (the train MLP's first layer: 250K elements moved per step, then 16K).
struct TransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getX().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !swapsLastTwo(op.getPerm()))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op.getType());
    Value a = matmul->getOperand(0), b = matmul->getOperand(1);
    std::optional<int64_t> out = staticElements(op), sizeA = staticElements(a),
                           sizeB = staticElements(b);
    // Operands of the result's rank: no batch dims broadcast in.
    if (!type || !out || !sizeA || !sizeB ||
        cast<RankedTensorType>(a.getType()).getRank() != type.getRank() ||
        cast<RankedTensorType>(b.getType()).getRank() != type.getRank())
      return failure();
    auto isSwap = [](Value v) {
      auto t = v.getDefiningOp<TransposeOp>();
      return t && swapsLastTwo(t.getPerm());
    };
    // Elements moved by transposes now and after the rewrite.
    int64_t before = *out, after = 0;
    for (auto [v, size] : {std::pair(a, *sizeA), std::pair(b, *sizeB)}) {
      if (isSwap(v))
        before += v.hasOneUse() ? size : 0;
      else
        after += size;
    }
    if (after >= before)
      return failure();
    Location loc = op.getLoc();
    DenseI64ArrayAttr swap = op.getPermAttr();
    Value bT = TransposeOp::create(rewriter, loc, b, swap);
    Value aT = TransposeOp::create(rewriter, loc, a, swap);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, type, bT, aT);
    return success();
  }
};

struct SimplifyPass : paddle::impl::SimplifyPassBase<SimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GatherOfTranspose, TransposeOfUnitDims,
                 TransposeThroughUnitReshape, ScaleOutOfMatmul, MergeScales,
                 TransposeOfMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
