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
#include "paddle/Transforms/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

/// Read by paddle-async-parallel-for: the minimum number of iterations of
/// this scf.parallel per block.
static constexpr llvm::StringLiteral kMinTaskSizeAttr = "paddle.min_task_size";
/// Elementwise iterations per block that make a block worth starting; the
/// same figure as the pipeline's min-task-size for scalar loops.
static constexpr int64_t kElementsPerTask = 4096;

/// Every operand is a statically shaped f32 memref whose innermost dim is
/// contiguous (vector loads and stores need that). With `bf16Inputs`, the
/// inputs may also be bf16 (--precision bf16): the tile extends them to f32
/// before its FMAs, and as a product of two bf16 values is exact in f32, the
/// result equals the scalar loops' bit for bit.
static bool hasStaticF32Operands(linalg::LinalgOp op, bool bf16Inputs = false) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() == 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0)
      return false;
    Type element = type.getElementType();
    if (!element.isF32() &&
        !(bf16Inputs && element.isBF16() && !op.isDpsInit(&operand)))
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

namespace {
struct TileAndVectorizePass
    : paddle::impl::TileAndVectorizePassBase<TileAndVectorizePass> {
  using Base::Base;

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
    blocks->loops.front()->setAttr(kMinTaskSizeAttr,
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
        kMinTaskSizeAttr, rewriter.getI64IntegerAttr(
                              std::max<int64_t>(1, kElementsPerTask / width)));
    return vectorizeTile(rewriter, tiled->op);
  }

  /// Generics this pass vectorizes: all dims parallel, an identity output,
  /// inputs read without transposition (broadcasts are fine), and a body
  /// linalg::vectorize accepts.
  static bool isSimpleElementwise(linalg::GenericOp op) {
    if (op.getNumLoops() == 0 || !op.isAllParallelLoops() ||
        op.getNumDpsInits() != 1 || !hasStaticF32Operands(op))
      return false;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (op.isDpsInit(&operand) ? !map.isIdentity()
                                 : !map.isProjectedPermutation())
        return false;
      // Increasing dims only: a transposed read would become a gather.
      int64_t last = -1;
      for (AffineExpr expr : map.getResults()) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || static_cast<int64_t>(dim.getPosition()) <= last)
          return false;
        last = dim.getPosition();
      }
    }
    return succeeded(linalg::vectorizeOpPrecondition(op));
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> matmuls;
    SmallVector<linalg::GenericOp> elementwise;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
        if (isMatmulCandidate(op))
          matmuls.push_back(op);
      } else if (auto generic = dyn_cast<linalg::GenericOp>(*op)) {
        if (isSimpleElementwise(generic))
          elementwise.push_back(generic);
      }
    });
    if (matmuls.empty() && elementwise.empty())
      return;

    IRRewriter rewriter(&getContext());
    // A failure here leaves the op (or, past the first tiling, the tiled
    // op in its loops) to the scalar path: still correct, only slower.
    for (linalg::LinalgOp op : matmuls)
      (void)tileMatmul(rewriter, op);
    for (linalg::GenericOp op : elementwise)
      (void)tileElementwise(rewriter, op);

    // Subviews and constants that tiling made inside the loops.
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });

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
    // 3. What is left of n-D vector ops -> 1-D ones.
    RewritePatternSet rest(ctx);
    vector::populateVectorTransposeLoweringPatterns(
        rest, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorShapeCastLoweringPatterns(rest);
    vector::populateVectorBroadcastLoweringPatterns(rest);
    vector::populateVectorMultiReductionLoweringPatterns(
        rest, vector::VectorMultiReductionLowering::InnerParallel);
    if (failed(applyPatternsGreedily(func, std::move(rest))))
      return signalPassFailure();
  }
};
} // namespace
