//===- LowerFusion.cpp - paddle.fusion groups to fused loops --------------===//
//
// After paddle-convert-paddle-to-linalg the body of every paddle.fusion op is
// linalg on tensors. Elementwise chains already collapse into one
// linalg.generic by upstream elementwise fusion (the isolated region keeps it
// inside the group), except where that would recompute a value for every
// element that reads it broadcast (recomputesNothing), or evaluate a
// transcendental function once per reader (fuseInsideGroups). What is left
// to fuse is a reduction with its producers and consumers: softmax is max,
// exp, sum and a normalising generic; layer norm is two sums and a
// normalising generic. Those are tiled at the group's last op along the dims
// every reduction keeps (rows) and the rest of the group is fused into that
// tile loop, so each tile's rows are reduced and normalised while in cache
// (softmax's exp is written into the output tile and normalised in place:
// shareOutputTile). The group's body then replaces the op.
//
// Outside the groups, elementwise fusion runs with a conservative rule: a
// producer with one use is fused unless its consumer reads it broadcast and
// it computes more than a copy (paddle-fuse made the cost-based choices),
// and so is one whose other uses return its value, which the fused op then
// writes as a result of its own (multi-output fusion); linalg ops on constants
// (transposed weights) are folded. Last, inits that CSE shared between ops (a
// zero-filled accumulator) are cloned per op, so that bufferization writes each
// in place instead of copying it.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>
#include <vector>

#define DEBUG_TYPE "paddle-lower-fusion"

namespace mlir::paddle {
#define GEN_PASS_DEF_LOWERFUSIONPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

bool hasReduction(linalg::LinalgOp op) { return op.getNumReductionLoops() > 0; }

bool isContraction(linalg::LinalgOp op) {
  return linalg::isaContractionOpInterface(op) ||
         linalg::isaConvolutionOpInterface(op);
}

/// Whether the body of `op` only moves its input (a broadcast or transpose):
/// fusing it where it is read broadcast recomputes nothing.
bool isCopy(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return false;
  Block &body = generic.getRegion().front();
  return body.getOperations().size() == 1 &&
         isa<BlockArgument>(body.getTerminator()->getOperand(0));
}

/// Whether fusing the producer of `operand` into its consumer recomputes
/// nothing but copies: the consumer reads each of its elements once (a
/// permutation), or the producer only moves data. A map of a row's
/// statistics (layer norm's 1 / sqrt(var + eps)) read broadcast along the
/// row would be computed again for every element of it.
bool recomputesNothing(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!producer || !consumer)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  return map.isPermutation() || isCopy(producer);
}

/// Whether `op` evaluates a transcendental function (exp, log, tanh, erf,
/// ...) per element: tens of instructions, against one for arithmetic.
bool computesTranscendental(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    // The math ops that are one or a few instructions are left out.
    found |= isa_and_nonnull<math::MathDialect>(inner->getDialect()) &&
             !isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::ClampFOp,
                  math::CopySignOp, math::CountLeadingZerosOp,
                  math::CountTrailingZerosOp, math::CtPopOp, math::FloorOp,
                  math::FmaOp, math::IsFiniteOp, math::IsInfOp, math::IsNaNOp,
                  math::IsNormalOp, math::RoundEvenOp, math::RoundOp,
                  math::RsqrtOp, math::SqrtOp, math::TruncOp>(inner);
  });
  return found;
}

/// The elementwise fusion used inside a group: what recomputes nothing,
/// except that a producer evaluating a transcendental function for several
/// consumers stays one op. Softmax's exp(x - max) is read by the row sum
/// and by the normalisation; fused into both it was computed twice per
/// element. Tiled, the row tile computes it once and both read it from
/// cache (CSE merges the clones tile-and-fuse makes for each reader).
bool fuseInsideGroups(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  return recomputesNothing(operand) &&
         (producer->hasOneUse() || !computesTranscendental(producer));
}

/// The elementwise fusion used outside the groups: single-use producers,
/// and no recomputation of anything but copies.
bool fuseOutsideGroups(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  return producer && producer->hasOneUse() && recomputesNothing(operand);
}

/// Reshapes moved through an elementwise op outside the groups (by
/// expanding it), except into the epilogue of a matmul or conv: that one
/// stays in its contraction's shape, which the library path needs to take
/// it as post-ops (see simplify).
bool expandOutsideGroups(OpOperand *operand) {
  if (!fuseOutsideGroups(operand))
    return false;
  auto consumer = cast<linalg::LinalgOp>(operand->getOwner());
  return llvm::none_of(consumer.getDpsInputs(), [](Value input) {
    auto producer = input.getDefiningOp<linalg::LinalgOp>();
    return producer && isContraction(producer);
  });
}

/// Tile sizes for the group's last op: only parallel dims, and only those
/// along which every operand computed inside the group varies (a computed
/// operand read broadcast along a dim, such as a row's max, would be
/// recomputed per tile of that dim). Sizes aim at `tileElements` elements
/// per tile and divide the dims; all zeros means "do not tile".
SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp root, Block &body,
                                     int64_t tileElements) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 0);
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return sizes;
  llvm::SmallBitVector candidate(ranges.size(), false);
  for (auto [i, type] : llvm::enumerate(root.getIteratorTypesArray()))
    candidate[i] = type == utils::IteratorType::parallel;
  for (OpOperand *operand : root.getDpsInputOperands()) {
    Value value = operand->get();
    if (isa<BlockArgument>(value) || !value.getDefiningOp() ||
        value.getDefiningOp()->getBlock() != &body ||
        matchPattern(value, m_Constant()))
      continue;
    AffineMap map = root.getMatchingIndexingMap(operand);
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (!map.isFunctionOfDim(d))
        candidate[d] = false;
  }
  // Dims not tiled are whole in every tile.
  int64_t whole = 1;
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (!candidate[d])
      whole *= ranges[d];
  int64_t budget =
      std::max<int64_t>(1, tileElements / std::max<int64_t>(1, whole));
  bool tiled = false;
  for (int d = int(ranges.size()) - 1; d >= 0; --d) {
    if (!candidate[d])
      continue;
    int64_t size = std::min(budget, ranges[d]);
    while (ranges[d] % size != 0)
      --size;
    budget = std::max<int64_t>(1, budget / size);
    if (size < ranges[d]) {
      sizes[d] = size;
      tiled = true;
    } else {
      sizes[d] = 0; // whole
    }
  }
  if (!tiled)
    return SmallVector<int64_t>(ranges.size(), 0);
  return sizes;
}

/// Multi-output fusion outside the groups: a producer whose other uses
/// return its value from the function is fused into its consumer anyway,
/// and the fused op writes that value as a result of its own, which the
/// return then reads. An optimizer's step returns the new moments and also
/// reads them for the parameter update: one pass over the parameter's
/// arrays instead of three. (Upstream's elementwise fusion pattern leaves
/// such a producer for its other uses and computes its value a second time
/// inside the consumer.) Both ops are all-parallel and the consumer reads
/// the value elementwise, so each element is computed and written once.
struct FuseReturnedProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!consumer.isAllParallelLoops())
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          !producer.isAllParallelLoops() || consumer.isDpsInit(&operand) ||
          !consumer.getMatchingIndexingMap(&operand).isPermutation() ||
          // The consumer reads it once (the fused op must not read a value
          // it produces), the others return it.
          !llvm::all_of(producer->getUses(),
                        [&](OpOperand &use) {
                          return &use == &operand ||
                                 isa<func::ReturnOp>(use.getOwner());
                        }) ||
          !linalg::areElementwiseOpsFusable(&operand))
        continue;
      // Every returned result of the producer must come out of the fused
      // op, or it would stay and be computed twice.
      llvm::SmallDenseSet<int> kept =
          linalg::getPreservedProducerResults(producer, consumer, &operand);
      if (!llvm::all_of(producer->getOpResults(), [&](OpResult result) {
            return kept.contains(result.getResultNumber()) ||
                   llvm::all_of(result.getUsers(), [&](Operation *user) {
                     return user == consumer;
                   });
          }))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [from, to] : fused->replacements)
        rewriter.replaceAllUsesWith(from, to);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// Folds a linalg op that only permutes a constant (linalg.transpose or a
/// generic copy: a transposed weight, ONNX Gemm's transB) into a constant,
/// moving raw bytes. Upstream's constant folding does the same through one
/// APFloat per element: 0.17 s for ResNet-50's 2048x1000 classifier, a few
/// ms here. Element types that are not whole bytes (i1 is bit-packed) are
/// left to it.
struct FoldConstantPermutation : OpInterfaceRewritePattern<linalg::LinalgOp> {
  FoldConstantPermutation(MLIRContext *ctx)
      : OpInterfaceRewritePattern<linalg::LinalgOp>(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1)
      return failure();
    Block *body = op.getBlock();
    auto yielded =
        body->getOperations().size() == 1
            ? dyn_cast<BlockArgument>(body->getTerminator()->getOperand(0))
            : BlockArgument();
    if (!yielded || yielded.getArgNumber() != 0)
      return failure();
    DenseIntOrFPElementsAttr input;
    if (!matchPattern(op.getDpsInputs()[0], m_Constant(&input)))
      return failure();
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto inType = cast<ShapedType>(input.getType());
    Type element = inType.getElementType();
    if (!outType || !outType.hasStaticShape() || outType.getRank() == 0 ||
        outType.getElementType() != element || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() % 8 != 0)
      return failure();
    AffineMap inMap = op.getIndexingMapsArray()[0];
    AffineMap outMap = op.getIndexingMapsArray()[1];
    if (!inMap.isPermutation() || !outMap.isPermutation())
      return failure();
    if (input.isSplat()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op,
          DenseElementsAttr::get(outType, input.getSplatValue<Attribute>()));
      return success();
    }
    // For each output dim, the input's stride along it (in elements).
    int64_t rank = outType.getRank();
    ArrayRef<int64_t> inShape = inType.getShape();
    SmallVector<int64_t> inStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * inShape[d + 1];
    SmallVector<int64_t> strideAlong(rank);
    for (int64_t k = 0; k < rank; ++k) {
      unsigned loop = outMap.getDimPosition(k);
      for (int64_t j = 0; j < rank; ++j)
        if (inMap.getDimPosition(j) == loop)
          strideAlong[k] = inStrides[j];
    }
    size_t bytes = element.getIntOrFloatBitWidth() / 8;
    ArrayRef<char> src = input.getRawData();
    std::vector<char> dst(src.size());
    ArrayRef<int64_t> outShape = outType.getShape();
    // Walks the output in order, the input index following it.
    SmallVector<int64_t> index(rank, 0);
    int64_t from = 0, inner = outShape[rank - 1], step = strideAlong[rank - 1];
    auto copyRow = [&](auto element, const char *s, char *d) {
      using T = decltype(element);
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(d + i * sizeof(T), s + i * step * sizeof(T), sizeof(T));
    };
    for (size_t to = 0; to < dst.size(); to += inner * bytes) {
      const char *s = src.data() + from * bytes;
      char *d = dst.data() + to;
      switch (bytes) {
      case 1:
        copyRow(uint8_t(), s, d);
        break;
      case 2:
        copyRow(uint16_t(), s, d);
        break;
      case 4:
        copyRow(uint32_t(), s, d);
        break;
      case 8:
        copyRow(uint64_t(), s, d);
        break;
      default:
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(d + i * bytes, s + i * step * bytes, bytes);
      }
      for (int64_t k = rank - 2; k >= 0; --k) {
        from += strideAlong[k];
        if (++index[k] < outShape[k])
          break;
        from -= strideAlong[k] * outShape[k];
        index[k] = 0;
      }
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::getFromRawBuffer(outType, dst));
    return success();
  }
};

/// Gives every destination-passing linalg op its own init where CSE made
/// one `tensor.empty` or `linalg.fill` (the zeros of a matmul's
/// accumulator) the init of several ops of equal shape. Each such op
/// writes its init in place, so bufferization would copy the shared value
/// for all but one of them: BERT's twelve layers shared one zero-filled
/// [12, 128, 128] accumulator and copied it (786 KB) before each score
/// matmul. A fill per op writes the zeros instead of copying them.
void unshareInits(func::FuncOp func) {
  SmallVector<OpOperand *> shared;
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Operation *def = init.get().getDefiningOp();
      if (isa_and_nonnull<tensor::EmptyOp, linalg::FillOp>(def) &&
          !def->hasOneUse())
        shared.push_back(&init);
    }
  });
  for (OpOperand *init : shared) {
    Operation *def = init->get().getDefiningOp();
    if (def->hasOneUse())
      continue; // the last user keeps the original
    OpBuilder b(init->getOwner());
    IRMapping mapping;
    // A fill's own init is an empty tensor shared the same way.
    if (auto fill = dyn_cast<linalg::FillOp>(def))
      if (auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        mapping.map(empty.getResult(), b.clone(*empty)->getResult(0));
    init->set(b.clone(*def, mapping)->getResult(0));
  }
}

struct LowerFusionPass : paddle::impl::LowerFusionPassBase<LowerFusionPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult simplify(FusionOp fusion);
  LogicalResult tileAndFuse(FusionOp fusion);
};

} // namespace

/// Unit dims out, then elementwise producers into consumers, inside one
/// group. (Two rounds: reshape propagation by expansion and unit-dim
/// folding undo each other in one greedy driver.)
LogicalResult LowerFusionPass::simplify(FusionOp fusion) {
  MLIRContext *ctx = &getContext();
  bool hasContraction = false;
  fusion.getBody().walk(
      [&](linalg::LinalgOp op) { hasContraction |= isContraction(op); });
  auto addCleanups = [&](RewritePatternSet &patterns) {
    tensor::populateFoldTensorEmptyPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, ctx);
  };
  // Dropping a conv's unit batch dim would turn it into a generic that the
  // library path no longer recognises.
  if (!hasContraction) {
    RewritePatternSet unitDims(ctx);
    linalg::ControlDropUnitDims options;
    linalg::populateFoldUnitExtentDimsPatterns(unitDims, options);
    addCleanups(unitDims);
    if (failed(applyPatternsGreedily(fusion.getBody(), std::move(unitDims))))
      return failure();
  }
  RewritePatternSet fusionPatterns(ctx);
  linalg::populateElementwiseOpsFusionPatterns(fusionPatterns,
                                               fuseInsideGroups);
  addCleanups(fusionPatterns);
  if (failed(
          applyPatternsGreedily(fusion.getBody(), std::move(fusionPatterns))))
    return failure();
  if (!hasContraction)
    return success();
  // A matmul over folded rows ([b, m] -> b*m) comes back through an
  // expand_shape, and its epilogue reads that view. Collapsing the
  // epilogue's loops the same way lets it read the matmul's own result, as
  // the library path needs to take it as post-ops.
  RewritePatternSet collapse(ctx);
  linalg::populateFoldReshapeOpsByCollapsingPatterns(
      collapse, [](OpOperand *operand) {
        auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
        auto producer = expand
                            ? expand.getSrc().getDefiningOp<linalg::LinalgOp>()
                            : linalg::LinalgOp();
        return producer && isContraction(producer);
      });
  addCleanups(collapse);
  return applyPatternsGreedily(fusion.getBody(), std::move(collapse));
}

/// In the row tile `loop`, lets an elementwise producer of the tile's last
/// op (softmax's exp(x - max), read by the row sum and the normalisation)
/// write the tile's output, and the last op update it in place, instead of
/// filling a buffer of its own per tile (a heap allocation each: 16 KiB for
/// 32 rows of 128). Only where the last op does not read its own init,
/// reads the producer as it writes its output, and every other reader of
/// the producer comes before it.
static void shareOutputTile(scf::ForallOp loop, RewriterBase &rewriter) {
  Block *body = loop.getBody();
  for (Operation &yielding : loop.getTerminator().getYieldingOps()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(&yielding);
    auto root = insert ? insert.getSource().getDefiningOp<linalg::GenericOp>()
                       : linalg::GenericOp();
    if (!root || root->getBlock() != body || root.getNumDpsInits() != 1)
      continue;
    OpOperand *init = root.getDpsInitOperand(0);
    if (root.payloadUsesValueFromOperand(init) ||
        !root.getMatchingIndexingMap(init).isIdentity())
      continue;
    for (OpOperand *input : root.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->getBlock() != body ||
          producer.getNumDpsInits() != 1 ||
          !root.getMatchingIndexingMap(input).isIdentity() ||
          input->get().getType() != init->get().getType())
        continue;
      OpOperand *producerInit = producer.getDpsInitOperand(0);
      if (producer.payloadUsesValueFromOperand(producerInit) ||
          !producer.getMatchingIndexingMap(producerInit).isIdentity())
        continue;
      if (!llvm::all_of(producer->getUsers(), [&](Operation *user) {
            return user == root.getOperation() ||
                   (user->getBlock() == body && user->isBeforeInBlock(root));
          }))
        continue;
      // The producer comes first: the output tile (a tensor.empty, or a
      // slice of the loop's shared output) moves before it.
      Value output = init->get();
      if (Operation *def = output.getDefiningOp();
          def && def->getBlock() == body && !def->isBeforeInBlock(producer)) {
        bool movable = isa<tensor::EmptyOp, tensor::ExtractSliceOp>(def) &&
                       llvm::all_of(def->getOperands(), [&](Value v) {
                         Operation *d = v.getDefiningOp();
                         return !d || d->getBlock() != body ||
                                d->isBeforeInBlock(producer);
                       });
        if (!movable)
          continue;
        rewriter.moveOpBefore(def, producer);
      }
      rewriter.modifyOpInPlace(producer, [&] { producerInit->set(output); });
      rewriter.modifyOpInPlace(root,
                               [&] { init->set(producer->getResult(0)); });
      break;
    }
  }
}

LogicalResult LowerFusionPass::tileAndFuse(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  SmallVector<linalg::LinalgOp> linalgOps(body.getOps<linalg::LinalgOp>());
  auto isComputation = [](linalg::LinalgOp op) {
    return !isa<linalg::FillOp>(op);
  };
  if (llvm::count_if(linalgOps, isComputation) < 2 ||
      llvm::none_of(linalgOps, hasReduction))
    return success();
  // A matmul/conv group stays whole: the library path takes the contraction
  // with its epilogue as post-ops, and paddle-tile-and-vectorize tiles the
  // contraction itself (a row loop here would split it into small calls).
  if (llvm::any_of(linalgOps, isContraction))
    return success();
  YieldOp yield = fusion.getYield();
  if (yield.getNumOperands() != 1)
    return success();
  // The last op may come back through a reshape: unit-dim folding leaves
  // [1, 12, 128, 128] softmaxes and [1, 128, 768] layer norms computed on
  // the collapsed shape and expanded at the end.
  Value last = yield.getOperand(0);
  while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      last.getDefiningOp()))
    last = last.getDefiningOp()->getOperand(0);
  auto root = last.getDefiningOp<linalg::LinalgOp>();
  if (!root || root->getBlock() != &body)
    return success();
  SmallVector<int64_t> sizes = chooseTileSizes(root, body, tileElements);
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return success();

  IRRewriter rewriter(&getContext());
  rewriter.setInsertionPoint(root);
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
  if (failed(result))
    return fusion.emitError("paddle-lower-fusion: cannot tile the group's "
                            "last op ")
           << root->getName();
  // Each tile is a task worth starting (about tileElements elements):
  // paddle-async-parallel-for's default minimum of 32768 iterations per
  // block counts elements, and would run a loop of 32 row tiles as one
  // block on one thread.
  result->loops.front()->setAttr(
      paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr(),
      rewriter.getI64IntegerAttr(1));
  for (OpResult value : root->getResults())
    rewriter.replaceAllUsesWith(value, result->replacements.lookup(value));
  // The fused producers are clones: drop the now-dead originals, and let
  // CSE merge the copies of one producer fused for several users.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (&op != yield && isOpTriviallyDead(&op))
      rewriter.eraseOp(&op);
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, fusion);
  return success();
}

void LowerFusionPass::runOnOperation() {
  func::FuncOp func = getOperation();
  SmallVector<FusionOp> fusions;
  func.walk([&](FusionOp op) { fusions.push_back(op); });
  for (FusionOp fusion : fusions) {
    if (fusion.getBody()
            .walk([](Operation *op) {
              return op->getDialect() && isa<PaddleDialect>(op->getDialect()) &&
                             !isa<YieldOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted()) {
      fusion.emitError("paddle-lower-fusion: the group still holds paddle "
                       "ops; run paddle-convert-paddle-to-linalg first");
      return signalPassFailure();
    }
    if (failed(simplify(fusion)) || failed(tileAndFuse(fusion)))
      return signalPassFailure();
    // The body replaces the op.
    IRRewriter rewriter(fusion);
    YieldOp yield = fusion.getYield();
    SmallVector<Value> results(yield.getValues());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&fusion.getBody().front(), fusion,
                               fusion.getInputs());
    rewriter.replaceOp(fusion, results);
  }

  // Elementwise fusion between what the groups left.
  RewritePatternSet patterns(&getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, fuseOutsideGroups);
  patterns.add<FuseReturnedProducer>(&getContext());
  // Transposes and reshapes of constant weights (ONNX Gemm's transB) fold
  // at compile time instead of running on every call.
  patterns.add<FoldConstantPermutation>(&getContext());
  linalg::populateConstantFoldLinalgOperations(
      patterns, [](OpOperand *) { return true; });
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                    expandOutsideGroups);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return signalPassFailure();
  unshareInits(func);
  // After the patterns above: elementwise fusion's cleanups give an op
  // whose payload does not read its init a tensor.empty again. The row
  // tile loops are the ones tileAndFuse marked with a minimum task size.
  IRRewriter rewriter(&getContext());
  func.walk([&](scf::ForallOp loop) {
    if (loop->hasAttr(
            paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr()))
      shareOutputTile(loop, rewriter);
  });
}
