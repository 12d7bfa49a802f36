//===- TileAndVectorize.cpp - tiled, vectorized matmul and elementwise ----===//
//
// Without this pass every linalg op becomes scalar loops (one scf.parallel
// over its parallel dims). Here the ops that matter most for fp32 CPU
// throughput are tiled with upstream linalg tiling, their innermost tile is
// vectorized with linalg::vectorize, and the vector ops are lowered to 1-D
// loads, stores, broadcasts and FMAs that LLVM maps onto the vector
// registers. The outermost tile loop stays an scf.parallel, so
// paddle-async-parallel-for spreads it over the threads as before.
//
// Only static shapes with f32 operands are taken, and only where the tile
// sizes divide the shape (no partial tiles, so no masks); everything else is
// left for convert-linalg-to-parallel-loops.
//
//===----------------------------------------------------------------------===//

#include "TileAndVectorize.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "dialects/Paddle/IR/Target.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#define DEBUG_TYPE "paddle-tile-and-vectorize"

namespace mlir::paddle {
#define GEN_PASS_DEF_TILEANDVECTORIZEPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The side of the blocks transposes are tiled into: 16 f32 rows of 16 are
/// 16 cache lines read and 16 written per block.
static constexpr int64_t kTransposeBlock = 16;

/// Every operand is a statically shaped f32 memref whose innermost dim is
/// contiguous (vector loads and stores need that). With `bf16Inputs`, the
/// inputs may also be bf16 (--precision bf16): the tile extends them to f32
/// before its FMAs, and as a product of two bf16 values is exact in f32, the
/// result equals the scalar loops' bit for bit. With `bf16Outputs`, the
/// output may be bf16 too (an elementwise op that ends in a truncf).
static bool hasStaticF32Operands(linalg::LinalgOp op, bool bf16Inputs = false,
                                 bool bf16Outputs = false) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() == 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0)
      return false;
    Type element = type.getElementType();
    bool init = op.isDpsInit(&operand);
    if (!element.isF32() &&
        !(element.isBF16() && (init ? bf16Outputs : bf16Inputs)))
      return false;
    if (type.getRank() > 0 && !type.isLastDimUnitStride())
      return false;
  }
  return true;
}

/// Tiles `op` by `sizes` into loops of `loopType`; erases `op` and returns
/// the tiled op and its loops.
static FailureOr<linalg::TiledLinalgOp>
tile(RewriterBase &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> sizes,
     linalg::LinalgTilingLoopType loopType) {
  linalg::LinalgTilingOptions options;
  options.setTileSizes(sizes).setLoopType(loopType);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, options);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(op);
  return tiled;
}

/// Vectorizes a statically shaped tile in place. Contractions become one
/// vector.contract (not a broadcast multiply and a multi_reduction over the
/// whole iteration space), which lowers to outer products.
static LogicalResult vectorizeTile(RewriterBase &rewriter,
                                   linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/isa<linalg::ContractionOpInterface>(*op));
  if (failed(result))
    return failure();
  // On buffers the vectorized op writes through transfer_write: no results.
  rewriter.eraseOp(op);
  return success();
}

/// The same values, or constants equal to each other (vectorization makes a
/// constant 0 per transfer op).
static bool sameIndices(ValueRange a, ValueRange b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (x != y && !(cx && cy && *cx == *cy))
      return false;
  }
  return true;
}

/// Keeps the accumulator of a vectorized register tile in registers across
/// its k loop: its transfer_read moves before the loop, its transfer_write
/// after, and the value is carried by the loop. Upstream's
/// hoistRedundantVectorTransfers does this only where it can prove that no
/// other view aliases the accumulator, which it cannot for subviews at
/// dynamic offsets; here the tile's A and B are inputs of the same matmul
/// whose output never aliases them (one-shot bufferization never writes a
/// contraction in place over its operands), so only the pair itself touches
/// the accumulator inside the loop.
static LogicalResult hoistAccumulator(RewriterBase &rewriter,
                                      scf::ForOp kLoop) {
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(kLoop.getOperation()));
  vector::TransferWriteOp write;
  for (Operation &op : kLoop.getBody()->without_terminator()) {
    if (auto w = dyn_cast<vector::TransferWriteOp>(op)) {
      if (write)
        return failure();
      write = w;
    }
  }
  if (!write)
    return failure();
  vector::TransferReadOp read;
  for (Operation &op : kLoop.getBody()->without_terminator()) {
    auto r = dyn_cast<vector::TransferReadOp>(op);
    if (r && r.getBase() == write.getBase() &&
        sameIndices(r.getIndices(), write.getIndices()) &&
        r.getVectorType() == write.getVectorType() &&
        r.getPermutationMap() == write.getPermutationMap())
      read = r;
  }
  if (!read ||
      llvm::any_of(read->getOperands(),
                   [&](Value v) { return !kLoop.isDefinedOutsideOfLoop(v); }) ||
      llvm::any_of(write.getIndices(),
                   [&](Value v) { return !kLoop.isDefinedOutsideOfLoop(v); }))
    return failure();
  // K >= 1 in every tile, so the loop runs at least once.
  kLoop.moveOutOfLoop(read);
  write->moveAfter(kLoop);
  FailureOr<LoopLikeOpInterface> newLoop =
      cast<LoopLikeOpInterface>(kLoop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, read.getVector(),
              /*replaceInitOperandUsesInLoop=*/true,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                return SmallVector<Value>{write.getVector()};
              });
  if (failed(newLoop))
    return failure();
  write.getValueToStoreMutable().assign(
      newLoop->getOperation()->getResults().back());
  return success();
}

/// The ops runOnOperation hands to tileMatmul.
static bool isMatmulCandidate(linalg::LinalgOp op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
         !op.hasUserDefinedMaps() &&
         hasStaticF32Operands(op, /*bf16Inputs=*/true);
}

bool paddle::isTiledMatmul(linalg::LinalgOp op, int64_t vectorBits) {
  if (!isMatmulCandidate(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool batched = ranges.size() == 4;
  return pickMatmulTiles(ranges[batched], ranges[batched + 1],
                         ranges[batched + 2], vectorBits)
      .has_value();
}

/// What tileRowReduction needs to know of a row reduction's body: the op
/// that folds each element into the output, as a vector combining kind, and
/// its neutral element (what the vector accumulator starts from).
struct RowReduction {
  vector::CombiningKind kind;
  TypedAttr identity;
};

/// Whether the dims of `map` are increasing dims of the iteration space
/// (no transposition, which would turn a vector read into a gather).
static bool hasIncreasingDims(AffineMap map) {
  int64_t last = -1;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || static_cast<int64_t>(dim.getPosition()) <= last)
      return false;
    last = dim.getPosition();
  }
  return true;
}

/// A row reduction: static f32 operands, one output, every dim parallel
/// but the innermost, which is reduced and read contiguously, and a body
/// `out = combine(out, f(inputs))` with a combiner that has a neutral
/// element (add, mul, max, min). Softmax's row max and sum of exps, layer
/// norm's sums and reduce_sum/mean/max over the last axis are of this form.
static std::optional<RowReduction> matchRowReduction(linalg::GenericOp op) {
  unsigned numLoops = op.getNumLoops();
  if (numLoops == 0 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      !hasStaticF32Operands(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!hasIncreasingDims(map))
      return std::nullopt;
    // The reduced dim, where read, is the operand's innermost (contiguous)
    // dim; the output does not vary along it.
    bool readsRow = map.isFunctionOfDim(numLoops - 1);
    if (op.isDpsInit(&operand)
            ? readsRow
            : readsRow && map.getResults().back() !=
                              getAffineDimExpr(numLoops - 1, op.getContext()))
      return std::nullopt;
  }
  Block &body = op.getRegion().front();
  BlockArgument out = op.getRegionOutputArgs().front();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != &body ||
      combiner->getNumOperands() != 2 || !combiner->hasOneUse() ||
      !out.hasOneUse() || out.getUses().begin()->getOwner() != combiner)
    return std::nullopt;
  std::optional<vector::CombiningKind> kind =
      linalg::getCombinerOpKind(combiner);
  std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
  if (!kind || !identity || failed(linalg::vectorizeOpPrecondition(op)))
    return std::nullopt;
  return RowReduction{*kind, *identity};
}

/// Rewrites the reads of `op` that index a dim at constant 0 (a value per
/// row read as memref<Rx1> at (d0, 0), as softmax's and layer norm's
/// normalisation read the row statistics) to read a rank-reduced subview
/// without that dim, so that every map of the op is a projected permutation
/// of increasing dims, which vectorizes as a broadcast.
static void dropConstantIndexedDims(RewriterBase &rewriter,
                                    linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = maps[operand->getOperandNumber()];
    if (!type || !type.hasStaticShape() ||
        llvm::none_of(map.getResults(), [](AffineExpr e) {
          auto c = dyn_cast<AffineConstantExpr>(e);
          return c && c.getValue() == 0;
        }))
      continue;
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1), kept;
    SmallVector<AffineExpr> results;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (c && c.getValue() == 0) {
        sizes[i] = 1;
        continue;
      }
      kept.push_back(type.getDimSize(i));
      results.push_back(e);
    }
    if (llvm::any_of(results,
                     [](AffineExpr e) { return !isa<AffineDimExpr>(e); }))
      continue;
    rewriter.setInsertionPoint(op);
    MemRefType reduced = memref::SubViewOp::inferRankReducedResultType(
        kept, type, offsets, sizes, strides);
    Value view = memref::SubViewOp::create(
        rewriter, op.getLoc(), reduced, operand->get(),
        getAsIndexOpFoldResult(rewriter.getContext(), offsets),
        getAsIndexOpFoldResult(rewriter.getContext(), sizes),
        getAsIndexOpFoldResult(rewriter.getContext(), strides));
    rewriter.modifyOpInPlace(op, [&] { operand->set(view); });
    maps[operand->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), 0, results, rewriter.getContext());
    changed = true;
  }
  if (changed)
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
}

namespace {
struct TileAndVectorizePass
    : paddle::impl::TileAndVectorizePassBase<TileAndVectorizePass> {
  using Base::Base;

  /// The register width tiles are sized for: the target's.
  int64_t vectorBits = 512;

  /// matmul [M, N, K] or batch_matmul [B, M, N, K]: block the output over
  /// an scf.parallel, loop over K panels, then over MR x NR register tiles
  /// with a k loop of 1 innermost.
  LogicalResult tileMatmul(RewriterBase &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    bool batched = ranges.size() == 4;
    int64_t m = ranges[batched], n = ranges[batched + 1],
            k = ranges[batched + 2];
    std::optional<paddle::MatmulTiles> tiles =
        paddle::pickMatmulTiles(m, n, k, vectorBits);
    if (!tiles)
      return failure();
    auto [mr, nr, mb, nb, kb] = *tiles;

    auto withBatch = [&](int64_t b, ArrayRef<int64_t> rest) {
      SmallVector<int64_t> sizes;
      if (batched)
        sizes.push_back(b);
      llvm::append_range(sizes, rest);
      return sizes;
    };
    // Only the row blocks (and batches) are parallel: async-parallel-for
    // computed wrong indices for blocks that start inside a row of a 2-D
    // loop whose outer step is not 1 (seen with 9x3 blocks of 8x32), and
    // the row blocks alone give enough tasks for this machine's threads.
    FailureOr<linalg::TiledLinalgOp> blocks =
        tile(rewriter, op, withBatch(1, {mb, 0, 0}),
             linalg::LinalgTilingLoopType::ParallelLoops);
    if (failed(blocks))
      return failure();
    // Each block is MB*NB*K multiply-adds: worth a task of its own.
    blocks->loops.front()->setAttr(
        paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr(),
        rewriter.getI64IntegerAttr(1));
    linalg::LinalgOp inner = blocks->op;
    if (nb < n || kb < k) {
      // Column blocks, then K panels within them.
      FailureOr<linalg::TiledLinalgOp> panels =
          tile(rewriter, inner, withBatch(0, {0, nb, kb}),
               linalg::LinalgTilingLoopType::Loops);
      if (failed(panels))
        return failure();
      inner = panels->op;
    }
    FailureOr<linalg::TiledLinalgOp> registers =
        tile(rewriter, inner, withBatch(0, {mr, nr, 1}),
             linalg::LinalgTilingLoopType::Loops);
    if (failed(registers) || failed(vectorizeTile(rewriter, registers->op)))
      return failure();
    return hoistAccumulator(rewriter,
                            cast<scf::ForOp>(registers->loops.back()));
  }

  /// An all-parallel generic: one scf.parallel over vectors along the
  /// innermost dim.
  LogicalResult tileElementwise(RewriterBase &rewriter, linalg::GenericOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    int64_t width = paddle::pickDivisor(ranges.back(), {lanes, lanes / 2, 4});
    if (!width)
      return failure();
    SmallVector<int64_t> sizes(ranges.size(), 1);
    sizes.back() = width;
    FailureOr<linalg::TiledLinalgOp> tiled =
        tile(rewriter, op, sizes, linalg::LinalgTilingLoopType::ParallelLoops);
    if (failed(tiled))
      return failure();
    tiled->loops.front()->setAttr(
        paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr(),
        rewriter.getI64IntegerAttr(
            std::max<int64_t>(1, paddle::kElementsPerTask / width)));
    return vectorizeTile(rewriter, tiled->op);
  }

  /// A row reduction (matchRowReduction) over rows of K elements: the rows
  /// are tiled by 1 (an scf.parallel, or an scf.for inside a fused group's
  /// tile loop, which is already parallel), and each row is reduced into a
  /// vector accumulator of `width` lanes, `width` dividing K:
  ///
  ///   acc = splat(identity)                        // vector<width>
  ///   for each block of `unroll` chunks of `width` elements of the row:
  ///     acc = combine(acc, f(chunk))               // lanewise
  ///   out = combine(out, reduce(acc))              // one horizontal step
  ///
  /// This is a generic over [rows, K / width (reduction), width (parallel)]
  /// reading the row through a memref.expand_shape, with a [width] output;
  /// linalg::vectorize turns it into a vector.multi_reduction over the middle
  /// dim, which the InnerParallel lowering makes lanewise combines, and the
  /// accumulator is kept in registers across the block loop. Several
  /// vectors per chunk (width up to 4x the vector length) give independent
  /// add chains. The order of the f32 additions differs from the scalar
  /// loop's (docs/fusion.md, "Vectorized reductions").
  LogicalResult tileRowReduction(RewriterBase &rewriter, linalg::GenericOp op,
                                 const RowReduction &reduction) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned n = ranges.size();
    int64_t k = ranges.back();
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    int64_t width =
        paddle::pickDivisor(k, {4 * lanes, 2 * lanes, lanes, lanes / 2, 4});
    if (!width)
      return failure();
    int64_t chunks = k / width;
    // About 16 vector registers of input per step of the block loop: enough
    // to hide latencies, small enough to keep the code short.
    int64_t unroll = 1;
    for (int64_t u = std::max<int64_t>(1, 16 * lanes / width); u >= 1; --u)
      if (chunks % u == 0) {
        unroll = u;
        break;
      }

    linalg::LinalgOp row = op;
    if (n > 1) {
      SmallVector<int64_t> sizes(n, 1);
      sizes.back() = 0;
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      FailureOr<linalg::TiledLinalgOp> rows =
          tile(rewriter, op, sizes,
               nested ? linalg::LinalgTilingLoopType::Loops
                      : linalg::LinalgTilingLoopType::ParallelLoops);
      if (failed(rows))
        return failure();
      if (!nested)
        rows->loops.front()->setAttr(
            paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr(),
            rewriter.getI64IntegerAttr(
                std::max<int64_t>(1, paddle::kElementsPerTask / k)));
      row = rows->op;
    }

    // The split generic: dims [rows..., chunk, lane].
    MLIRContext *ctx = rewriter.getContext();
    Location loc = row.getLoc();
    rewriter.setInsertionPoint(row);
    unsigned dims = n + 1;
    AffineExpr lane = getAffineDimExpr(n, ctx);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *operand : row.getDpsInputOperands()) {
      AffineMap map = row.getMatchingIndexingMap(operand);
      Value value = operand->get();
      SmallVector<AffineExpr> results(map.getResults());
      if (map.isFunctionOfDim(n - 1)) {
        auto type = cast<MemRefType>(value.getType());
        int64_t rank = type.getRank();
        SmallVector<int64_t> shape(type.getShape());
        shape.back() = chunks;
        shape.push_back(width);
        SmallVector<ReassociationIndices> groups;
        for (int64_t i = 0; i + 1 < rank; ++i)
          groups.push_back({i});
        groups.push_back({rank - 1, rank});
        value =
            memref::ExpandShapeOp::create(rewriter, loc, shape, value, groups);
        results.push_back(lane);
      }
      inputs.push_back(value);
      maps.push_back(AffineMap::get(dims, 0, results, ctx));
    }
    // The accumulator: [1, ..., 1, width], indexed by the row dims (all of
    // extent 1 here) and the lane.
    Type f32 = rewriter.getF32Type();
    SmallVector<int64_t> partialShape(n - 1, 1);
    partialShape.push_back(width);
    auto partialType = MemRefType::get(partialShape, f32);
    // A heap buffer only where the forwarding below fails; normally it is
    // gone before lowering.
    Value partial = memref::AllocOp::create(rewriter, loc, partialType);
    SmallVector<AffineExpr> partialResults;
    for (unsigned d = 0; d + 1 < n; ++d)
      partialResults.push_back(getAffineDimExpr(d, ctx));
    partialResults.push_back(lane);
    maps.push_back(AffineMap::get(dims, 0, partialResults, ctx));
    SmallVector<utils::IteratorType> iterators(n - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    iterators.push_back(utils::IteratorType::parallel);

    auto vectorType = VectorType::get(partialShape, f32);
    Value identity = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(vectorType,
                               ArrayRef<Attribute>{reduction.identity}));
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> zeros(partialShape.size(), c0);
    auto init = vector::TransferWriteOp::create(rewriter, loc, identity,
                                                partial, zeros);
    auto split =
        linalg::GenericOp::create(rewriter, loc, TypeRange{}, inputs,
                                  ValueRange{partial}, maps, iterators);
    // Same block arguments (f32 inputs, f32 output): the body carries over.
    rewriter.cloneRegionBefore(row->getRegion(0), split.getRegion(),
                               split.getRegion().end());
    if (failed(linalg::vectorizeOpPrecondition(split))) {
      // Leave the row to the scalar loops.
      SmallVector<Operation *> made = {split, init, partial.getDefiningOp()};
      for (Value input : inputs)
        if (auto expand = input.getDefiningOp<memref::ExpandShapeOp>())
          made.push_back(expand);
      for (Operation *op : made)
        rewriter.eraseOp(op);
      return failure();
    }
    Value out = row.getDpsInits().front();
    rewriter.eraseOp(row);

    // From here on nothing bails out: should a step fail, the split generic
    // stays (scalar loops into the accumulator buffer), which the
    // horizontal step below still reads correctly.
    linalg::LinalgOp vectorized = split;
    scf::ForOp blockLoop;
    if (unroll < chunks) {
      SmallVector<int64_t> sizes(dims, 0);
      sizes[n - 1] = unroll;
      FailureOr<linalg::TiledLinalgOp> blocks =
          tile(rewriter, split, sizes, linalg::LinalgTilingLoopType::Loops);
      if (succeeded(blocks)) {
        vectorized = blocks->op;
        blockLoop = cast<scf::ForOp>(blocks->loops.front());
      }
    }
    // The horizontal step goes where the row's reduction ends.
    Operation *next =
        (blockLoop ? blockLoop.getOperation() : vectorized.getOperation())
            ->getNextNode();
    if (succeeded(vectorizeTile(rewriter, vectorized)) && blockLoop)
      (void)hoistAccumulator(rewriter, blockLoop);

    // Horizontal step: out = combine(out, reduce(acc)).
    // The accumulator's last write, and what is read back from it.
    vector::TransferReadOp read;
    vector::TransferWriteOp last;
    SmallVector<vector::TransferReadOp> reads;
    SmallVector<vector::TransferWriteOp> writes;
    for (Operation *user : partial.getUsers()) {
      SmallVector<Operation *> accesses;
      if (isa<memref::SubViewOp>(user))
        llvm::append_range(accesses, user->getUsers());
      else
        accesses.push_back(user);
      for (Operation *access : accesses) {
        if (auto r = dyn_cast<vector::TransferReadOp>(access))
          reads.push_back(r);
        else if (auto w = dyn_cast<vector::TransferWriteOp>(access))
          writes.push_back(w);
      }
    }
    Block *block = init->getBlock();
    for (vector::TransferWriteOp w : writes)
      if (w != init && w->getBlock() == block)
        last = w;
    for (vector::TransferReadOp r : reads)
      if (r->getBlock() == block)
        read = r;
    rewriter.setInsertionPoint(next);
    SmallVector<Value> outIndices(cast<MemRefType>(out.getType()).getRank(),
                                  c0);
    bool forwarded = reads.size() == 1 && writes.size() == 2 && read && last &&
                     read->getBlock() == block &&
                     read.getVectorType() == vectorType &&
                     last.getVectorType() == vectorType;
    Value acc;
    if (forwarded) {
      // The accumulator lives in registers only: the hoisted read starts
      // from the identity, and the last write's value is reduced directly.
      rewriter.replaceAllUsesWith(read.getResult(), identity);
      acc = last.getVector();
    } else {
      acc = vector::TransferReadOp::create(rewriter, loc, vectorType, partial,
                                           zeros, /*padding=*/std::nullopt);
    }
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({width}, f32), acc);
    Value previous = memref::LoadOp::create(rewriter, loc, out, outIndices);
    Value combined = vector::ReductionOp::create(rewriter, loc, reduction.kind,
                                                 flat, previous);
    memref::StoreOp::create(rewriter, loc, combined, out, outIndices);
    if (forwarded) {
      for (Operation *op :
           {last.getOperation(), read.getOperation(), init.getOperation()})
        rewriter.eraseOp(op);
      for (Operation *user : llvm::make_early_inc_range(partial.getUsers()))
        if (user->use_empty())
          rewriter.eraseOp(user);
      if (partial.use_empty())
        rewriter.eraseOp(partial.getDefiningOp());
      return success();
    }
    memref::DeallocOp::create(rewriter, loc, partial);
    return success();
  }

  /// A transpose that moves the innermost dim (out[.., j, .., i] =
  /// in[.., i, .., j]): one loop over the output reads the input with a
  /// stride of a whole row per element, a new cache line each time, and
  /// rows a multiple of 4 KiB apart fall into the same L1 sets. Tiled into
  /// kTransposeBlock x kTransposeBlock blocks (the two dims that the
  /// input's and the output's innermost dims index; 1 for the others), the
  /// lines a block reads stay in L1 while they are used. The blocks are an
  /// scf.parallel. A whole block is vectorized (row loads, the transpose in
  /// registers, row stores); a partial one at an edge stays scalar loops.
  LogicalResult tileTranspose(RewriterBase &rewriter, linalg::TransposeOp op) {
    auto type = dyn_cast<MemRefType>(op.getInit().getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 2)
      return failure();
    ArrayRef<int64_t> perm = op.getPermutation();
    int64_t rank = type.getRank();
    // Output dim d reads input dim perm[d]; the input's innermost dim is
    // read by the output dim `inner`.
    int64_t inner = llvm::find(perm, rank - 1) - perm.begin();
    if (inner == rank - 1)
      return failure();
    SmallVector<int64_t> sizes(rank, 1);
    sizes[inner] = kTransposeBlock;
    sizes[rank - 1] = kTransposeBlock;
    if (type.getDimSize(inner) < kTransposeBlock ||
        type.getDimSize(rank - 1) < kTransposeBlock)
      return failure();
    FailureOr<linalg::TiledLinalgOp> tiled =
        tile(rewriter, op, sizes, linalg::LinalgTilingLoopType::ParallelLoops);
    if (failed(tiled))
      return failure();
    tiled->loops.front()->setAttr(
        paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr(),
        rewriter.getI64IntegerAttr(
            std::max<int64_t>(1, paddle::kElementsPerTask /
                                     (kTransposeBlock * kTransposeBlock))));
    if (cast<MemRefType>(tiled->op->getOperand(1).getType()).hasStaticShape())
      (void)vectorizeTile(rewriter, tiled->op);
    return success();
  }

  /// Generics this pass vectorizes: all dims parallel, identity outputs
  /// (one, or several after multi-output fusion), inputs that read the
  /// innermost dim contiguously or not at all (the outer dims, tiled by 1,
  /// may come in any order: a transpose of the outer dims, or a
  /// broadcast), and a body linalg::vectorize accepts.
  static bool isSimpleElementwise(linalg::GenericOp op) {
    if (op.getNumLoops() == 0 || !op.isAllParallelLoops() ||
        op.getNumDpsInits() == 0 ||
        !hasStaticF32Operands(op, /*bf16Inputs=*/true, /*bf16Outputs=*/true))
      return false;
    // bf16 values (the casts of --precision bf16) are only converted: the
    // arithmetic is f32, and arith-expand lowers the vector conversions.
    auto isBF16 = [](Type t) { return t.isBF16(); };
    for (Operation &inner : op.getBlock()->without_terminator())
      if (!isa<arith::ExtFOp, arith::TruncFOp>(inner) &&
          (llvm::any_of(inner.getOperandTypes(), isBF16) ||
           llvm::any_of(inner.getResultTypes(), isBF16)))
        return false;
    unsigned innermost = op.getNumLoops() - 1;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (op.isDpsInit(&operand) ? !map.isIdentity()
                                 : !map.isProjectedPermutation())
        return false;
      std::optional<unsigned> at =
          map.getResultPosition(getAffineDimExpr(innermost, op.getContext()));
      if (at && *at != map.getNumResults() - 1)
        return false;
    }
    return succeeded(linalg::vectorizeOpPrecondition(op));
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    vectorBits = paddle::getTargetOrDefault(func).getVectorBits();
    IRRewriter rewriter(&getContext());
    func.walk([&](linalg::GenericOp op) {
      if (op.isAllParallelLoops())
        dropConstantIndexedDims(rewriter, op);
    });
    SmallVector<linalg::LinalgOp> matmuls;
    SmallVector<linalg::GenericOp> elementwise;
    SmallVector<std::pair<linalg::GenericOp, RowReduction>> reductions;
    SmallVector<linalg::TransposeOp> transposes, keepsRows;
    func.walk([&](linalg::LinalgOp op) {
      if (auto transpose = dyn_cast<linalg::TransposeOp>(*op)) {
        if (!transpose.hasPureBufferSemantics() ||
            op->getParentOfType<scf::ParallelOp>())
          return;
        // One that keeps the innermost dim copies whole rows: an
        // elementwise copy with its outer dims permuted.
        ArrayRef<int64_t> perm = transpose.getPermutation();
        if (!perm.empty() && perm.back() == int64_t(perm.size()) - 1) {
          if (hasStaticF32Operands(op))
            keepsRows.push_back(transpose);
          return;
        }
        transposes.push_back(transpose);
      } else if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
        if (isMatmulCandidate(op))
          matmuls.push_back(op);
      } else if (auto generic = dyn_cast<linalg::GenericOp>(*op)) {
        if (isSimpleElementwise(generic))
          elementwise.push_back(generic);
        else if (std::optional<RowReduction> reduction =
                     matchRowReduction(generic))
          reductions.emplace_back(generic, *reduction);
      }
    });
    // A copy from or to a strided view (a slice, a view of a gathered
    // row) is lowered as a call to the generic element-by-element copy of
    // the runtime library; one whose rows are contiguous is an elementwise
    // copy here. Contiguous copies stay memcpys.
    SmallVector<memref::CopyOp> stridedCopies;
    func.walk([&](memref::CopyOp copy) {
      auto from = dyn_cast<MemRefType>(copy.getSource().getType());
      auto to = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (from && to &&
          (!from.getLayout().isIdentity() || !to.getLayout().isIdentity()))
        stridedCopies.push_back(copy);
    });
    for (memref::CopyOp copy : stridedCopies) {
      auto type = cast<MemRefType>(copy.getTarget().getType());
      if (type.getRank() == 0)
        continue;
      rewriter.setInsertionPoint(copy);
      AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
      auto generic = linalg::GenericOp::create(
          rewriter, copy.getLoc(), TypeRange{}, ValueRange{copy.getSource()},
          ValueRange{copy.getTarget()}, ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(b, loc, args[0]);
          });
      if (!isSimpleElementwise(generic)) {
        rewriter.eraseOp(generic);
        continue;
      }
      rewriter.eraseOp(copy);
      elementwise.push_back(generic);
    }
    for (linalg::TransposeOp op : keepsRows) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (succeeded(generic) && isSimpleElementwise(*generic))
        elementwise.push_back(*generic);
    }
    if (matmuls.empty() && elementwise.empty() && reductions.empty() &&
        transposes.empty())
      return;

    // A failure here leaves the op (or, past the first tiling, the tiled
    // op in its loops) to the scalar path: still correct, only slower.
    for (linalg::LinalgOp op : matmuls)
      (void)tileMatmul(rewriter, op);
    for (linalg::GenericOp op : elementwise)
      (void)tileElementwise(rewriter, op);
    for (auto &[op, reduction] : reductions)
      (void)tileRowReduction(rewriter, op, reduction);
    for (linalg::TransposeOp op : transposes)
      (void)tileTranspose(rewriter, op);

    // Subviews and constants that tiling made inside the loops.
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });

    // Transcendentals of vectors as polynomials in vector instructions
    // (upstream's approximations: range reduction, then a polynomial or a
    // rational function), rather than one libm call per lane, which is what
    // LLVM makes of llvm.exp (or of math-to-libm's calls) on a vector. exp
    // bounds softmax; tanh and erf the gelus and their gradients; log
    // log_softmax and cross-entropy. Scalar ops keep libm. Accuracy:
    // docs/fusion.md, "Vectorized transcendentals".
    static constexpr llvm::StringLiteral approximated[] = {
        "math.exp",  "math.expm1", "math.log", "math.log1p",
        "math.log2", "math.tanh",  "math.erf"};
    auto isApproximated = [](StringRef name) {
      return llvm::is_contained(approximated, name);
    };
    SmallVector<Operation *> vectorMath;
    func.walk([&](Operation *op) {
      if (op->getNumResults() == 1 &&
          isApproximated(op->getName().getStringRef()))
        if (auto type = dyn_cast<VectorType>(op->getResult(0).getType());
            type && type.getElementType().isF32())
          vectorMath.push_back(op);
    });
    if (!vectorMath.empty()) {
      RewritePatternSet approximations(&getContext());
      populateMathPolynomialApproximationPatterns(approximations,
                                                  isApproximated);
      if (failed(
              applyOpPatternsGreedily(vectorMath, std::move(approximations))))
        return signalPassFailure();
    }

    // Vector ops -> 1-D loads, stores, broadcasts and FMAs, which
    // convert-vector-to-llvm maps onto LLVM vectors. In stages, as the
    // pattern sets of one stage undo each other's forms when mixed.
    MLIRContext *ctx = &getContext();
    // 1. Unit dims away, in-bounds transfers, contractions to FMAs.
    RewritePatternSet shapes(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(shapes);
    vector::TransferReadOp::getCanonicalizationPatterns(shapes, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(shapes, ctx);
    vector::populateVectorContractLoweringPatterns(
        shapes, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(shapes);
    if (failed(applyPatternsGreedily(func, std::move(shapes))))
      return signalPassFailure();
    // 2. Transfers -> 1-D loads and stores (+ broadcasts for broadcast
    //    reads).
    RewritePatternSet transfers(ctx);
    vector::populateVectorTransferPermutationMapLoweringPatterns(transfers);
    populateVectorToSCFConversionPatterns(
        transfers, VectorTransferToSCFOptions().enableFullUnroll());
    vector::populateVectorTransferLoweringPatterns(transfers,
                                                   /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(func, std::move(transfers))))
      return signalPassFailure();
    // 3. What is left of n-D vector ops -> 1-D ones. A transpose block
    //    (16x16 f32) becomes 4 rounds of 16 two-input shuffles (unpacks and
    //    lane permutes on AVX-512); lane by lane it was 256 extracts and
    //    inserts, and a 1024x512 transpose took 0.51 ms instead of 0.27.
    //    Other shapes are still transposed lane by lane.
    RewritePatternSet rest(ctx);
    vector::populateVectorTransposeLoweringPatterns(
        rest, vector::VectorTransposeLowering::Shuffle16x16);
    vector::populateVectorShapeCastLoweringPatterns(rest);
    vector::populateVectorBroadcastLoweringPatterns(rest);
    vector::populateVectorMultiReductionLoweringPatterns(
        rest, vector::VectorMultiReductionLowering::InnerParallel);
    if (failed(applyPatternsGreedily(func, std::move(rest))))
      return signalPassFailure();
  }
};
} // namespace
