//===- CompleteSharding.cpp - one annotation per value, checked -----------===//
//
// shard-partition reads every value's sharding from the one `shard.shard`
// that consumes its definition, and reads every operand from a
// `shard.shard`; where either is missing it dereferences a null op. This
// pass establishes that shape after propagation (see Passes.td), checks what
// the partition cannot partition, and records the SPMD signature.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "paddle-complete-sharding"

namespace mlir::paddle {
#define GEN_PASS_DEF_COMPLETESHARDINGPASS
#include "paddle/Sharding/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using shard::GridOp;
using shard::ShardOp;

namespace {

bool isSplittable(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() > 0;
}

/// The annotation of `v`'s definition: its one `shard.shard` user without
/// annotate_for_users.
ShardOp definitionAnnotation(Value v) {
  for (Operation *user : v.getUsers())
    if (auto s = dyn_cast<ShardOp>(user); s && !s.getAnnotateForUsers())
      return s;
  return nullptr;
}

struct CompleteShardingPass
    : paddle::impl::CompleteShardingPassBase<CompleteShardingPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(complete(func, symbols)))
        return signalPassFailure();
    }
  }

  /// The mesh of `func`'s annotations; fails unless there is exactly one
  /// of static shape (null when the function has none).
  FailureOr<GridOp> findGrid(func::FuncOp func,
                             SymbolTableCollection &symbols) {
    GridOp grid;
    WalkResult walk = func.walk([&](shard::ShardingOp sharding) {
      GridOp g =
          shard::getGridOrNull(sharding, sharding.getGridAttr(), symbols);
      if (!g) {
        sharding.emitOpError() << "names " << sharding.getGridAttr()
                               << ", which is not a shard.grid of the module";
        return WalkResult::interrupt();
      }
      if (grid && g != grid) {
        sharding.emitOpError()
            << "uses mesh " << sharding.getGridAttr() << " where the function "
            << "already uses @" << grid.getSymName()
            << ": a function runs on one mesh";
        return WalkResult::interrupt();
      }
      if (llvm::any_of(g.getShape(), ShapedType::isDynamic)) {
        g.emitOpError("has a dynamic shape: the mesh size must be known "
                      "when compiling");
        return WalkResult::interrupt();
      }
      grid = g;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    return grid;
  }

  /// Checks one annotation: axes of the mesh, even splits, no halos.
  LogicalResult check(ShardOp op, GridOp grid) {
    shard::Sharding s(op.getSharding());
    if (!s.getStaticHaloSizes().empty() || !s.getDynamicHaloSizes().empty() ||
        !s.getStaticShardedDimsOffsets().empty() ||
        !s.getDynamicShardedDimsOffsets().empty())
      return op.emitOpError("has halos or explicit shard offsets; only even "
                            "splits are supported");
    auto type = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> mesh = grid.getShape();
    if (s.getSplitAxes().size() > static_cast<size_t>(type.getRank()))
      return op.emitOpError()
             << "splits " << s.getSplitAxes().size() << " dims of a rank-"
             << type.getRank() << " tensor";
    for (auto [d, axes] : llvm::enumerate(s.getSplitAxes())) {
      int64_t devices = 1;
      for (shard::GridAxis a : axes.asArrayRef()) {
        if (a < 0 || a >= static_cast<int64_t>(mesh.size()))
          return op.emitOpError()
                 << "splits dim " << d << " over mesh axis " << a << ", but @"
                 << grid.getSymName() << " has " << mesh.size()
                 << (mesh.size() == 1 ? " axis" : " axes");
        devices *= mesh[a];
      }
      int64_t size = type.getDimSize(d);
      if (!ShapedType::isDynamic(size) && size % devices != 0)
        return op.emitOpError()
               << "splits dim " << d << " of size " << size
               << " over mesh axes "
               << "[" << axes.asArrayRef() << "] (" << devices
               << " devices): the size is not a multiple of the device count";
    }
    return success();
  }

  /// Makes `v` have one definition annotation that every other user reads;
  /// one is created (replicated, or the split its users ask for when it is
  /// an argument) where there is none.
  bool annotate(Value v, GridOp grid, OpBuilder &b) {
    ShardOp def = definitionAnnotation(v);
    bool created = !def;
    if (!def) {
      b.setInsertionPointAfterValue(v);
      // An argument that only its users annotate arrives as the first of
      // them asks (a static sharding, recreated here to dominate them).
      Operation *asked = nullptr;
      if (isa<BlockArgument>(v))
        for (Operation *user : v.getUsers())
          if (auto s = dyn_cast<ShardOp>(user)) {
            asked = s.getSharding().getDefiningOp<shard::ShardingOp>();
            break;
          }
      Value sharding =
          asked && asked->getNumOperands() == 0
              ? Value(b.clone(*asked)->getResult(0))
              : shard::ShardingOp::create(
                    b, v.getLoc(),
                    shard::Sharding::get(
                        FlatSymbolRefAttr::get(grid.getSymNameAttr()), {}))
                    .getResult();
      def = ShardOp::create(b, v.getLoc(), v, sharding,
                            /*annotate_for_users=*/false);
    }
    v.replaceAllUsesExcept(def.getResult(), def);
    return created;
  }

  /// Makes every operand of `op` arrive whole (replicated): for an op
  /// that propagation gave no split, whose results are replicated.
  void replicateOperands(Operation *op, GridOp grid, OpBuilder &b) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      auto def = v.getDefiningOp<ShardOp>();
      if (!isSplittable(v) || !def ||
          shard::isFullReplication(shard::Sharding(def.getSharding())))
        continue;
      // Reshard from the definition's annotation: upstream's partition
      // reshards between a definition and a user annotation, not between
      // two user annotations.
      if (def.getAnnotateForUsers()) {
        v = def.getSrc();
        if (!v.getDefiningOp<ShardOp>())
          continue;
      }
      b.setInsertionPoint(op);
      Value replicated = shard::ShardingOp::create(
          b, op->getLoc(),
          shard::Sharding::get(FlatSymbolRefAttr::get(grid.getSymNameAttr()),
                               {}));
      operand.set(ShardOp::create(b, op->getLoc(), v, replicated,
                                  /*annotate_for_users=*/true));
    }
  }

  using Split = SmallVector<SmallVector<shard::GridAxis>>;

  /// The steps from `from` to `to` (after `from`, ending with `to`), each
  /// one mesh axis gathered, sliced or moved between dims: what upstream's
  /// resharding (a pattern per step, meant for 1-D meshes) handles. It
  /// takes one step per pair of annotations and does not check that it
  /// reached the target, so a longer path must be spelled out.
  static SmallVector<Split> reshardSteps(Split from, Split to) {
    size_t rank = std::max(from.size(), to.size());
    from.resize(rank);
    to.resize(rank);
    auto isPrefix = [](ArrayRef<shard::GridAxis> p,
                       ArrayRef<shard::GridAxis> of) {
      return p.size() <= of.size() && llvm::equal(p, of.take_front(p.size()));
    };
    SmallVector<Split> steps;
    Split cur = from;
    // Take off the last axis of every dim that is not on its way to the
    // target's, moving it straight to another dim where that dim wants it
    // next and upstream's move pattern applies.
    for (size_t d = 0; d < rank; ++d) {
      while (!isPrefix(cur[d], to[d])) {
        shard::GridAxis a = cur[d].back();
        SmallVector<shard::GridAxis> rest(cur[d].begin(), cur[d].end() - 1);
        cur[d].pop_back();
        for (size_t e = 0; e < rank; ++e) {
          if (e == d || !isPrefix(cur[e], to[e]) ||
              cur[e].size() >= to[e].size() || to[e][cur[e].size()] != a ||
              !llvm::equal(cur[e], rest))
            continue;
          cur[e].push_back(a);
          break;
        }
        steps.push_back(cur);
      }
    }
    for (size_t d = 0; d < rank; ++d)
      while (cur[d].size() < to[d].size()) {
        cur[d].push_back(to[d][cur[d].size()]);
        steps.push_back(cur);
      }
    return steps;
  }

  static Split splitOf(const shard::Sharding &s) {
    Split split;
    for (shard::GridAxesAttr axes : s.getSplitAxes())
      split.emplace_back(axes.asArrayRef());
    return split;
  }

  /// Spells out a resharding of more than one step as a chain of
  /// annotations, one step each.
  void splitReshard(ShardOp op, OpBuilder &b) {
    auto src = op.getSrc().getDefiningOp<ShardOp>();
    shard::Sharding to(op.getSharding());
    SmallVector<Split> steps =
        reshardSteps(splitOf(shard::Sharding(src.getSharding())), splitOf(to));
    if (steps.size() <= 1)
      return;
    b.setInsertionPoint(op);
    Value value = src.getResult();
    MLIRContext *ctx = op.getContext();
    for (const Split &step : ArrayRef(steps).drop_back()) {
      SmallVector<shard::GridAxesAttr> axes;
      for (const auto &dimAxes : step)
        axes.push_back(shard::GridAxesAttr::get(ctx, dimAxes));
      while (!axes.empty() && axes.back().empty())
        axes.pop_back();
      Value sharding = shard::ShardingOp::create(
          b, op.getLoc(), shard::Sharding::get(to.getGridAttr(), axes));
      value = ShardOp::create(b, op.getLoc(), value, sharding,
                              /*annotate_for_users=*/true);
    }
    op.getSrcMutable().set(value);
  }

  /// Per dim, the mesh axes that split it.
  Attribute signatureAttr(Value sharding, int64_t rank) {
    shard::Sharding s(sharding);
    Builder b(sharding.getContext());
    SmallVector<Attribute> dims;
    for (int64_t d = 0; d < rank; ++d) {
      SmallVector<int64_t> axes;
      if (d < static_cast<int64_t>(s.getSplitAxes().size()))
        for (shard::GridAxis a : s.getSplitAxes()[d].asArrayRef())
          axes.push_back(a);
      dims.push_back(b.getDenseI64ArrayAttr(axes));
    }
    return b.getArrayAttr(dims);
  }

  LogicalResult complete(func::FuncOp func, SymbolTableCollection &symbols) {
    FailureOr<GridOp> grid = findGrid(func, symbols);
    if (failed(grid))
      return failure();
    if (!*grid)
      return success();
    if (!func.getBody().hasOneBlock())
      return func.emitOpError("has several blocks; a sharded function must "
                              "have one");
    WalkResult checked = func.walk([&](ShardOp op) {
      return failed(check(op, *grid)) ? WalkResult::interrupt()
                                      : WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return failure();

    OpBuilder b(func.getContext());
    Block &body = func.getBody().front();
    for (BlockArgument arg : body.getArguments())
      if (isSplittable(arg))
        annotate(arg, *grid, b);
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<ShardOp, shard::ShardingOp>(op) ||
          op.hasTrait<OpTrait::IsTerminator>())
        continue;
      if (op.getNumRegions() != 0)
        return op.emitOpError("has regions; sharded functions hold ops "
                              "without regions");
      bool created = false;
      for (Value r : op.getResults())
        if (isSplittable(r))
          created |= annotate(r, *grid, b);
      if (created && isa<shard::ShardingInterface>(op))
        replicateOperands(&op, *grid, b);
    }

    // Resharding one mesh axis at a time.
    SmallVector<ShardOp> reshards;
    body.walk([&](ShardOp op) {
      if (auto src = op.getSrc().getDefiningOp<ShardOp>())
        if (shard::Sharding(src.getSharding()) !=
            shard::Sharding(op.getSharding()))
          reshards.push_back(op);
    });
    for (ShardOp op : reshards)
      splitReshard(op, b);

    // The SPMD signature, read by the runtime (paddle_spmd_signature_t).
    Builder attrs(func.getContext());
    func->setAttr("paddle.mesh", attrs.getDenseI64ArrayAttr(grid->getShape()));
    for (BlockArgument arg : body.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t)
        continue;
      ShardOp def = definitionAnnotation(arg);
      Attribute a = def ? signatureAttr(def.getSharding(), t.getRank())
                        : attrs.getArrayAttr({});
      func.setArgAttr(arg.getArgNumber(), "paddle.sharding", a);
    }
    Operation *ret = body.getTerminator();
    for (OpOperand &operand : ret->getOpOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!t)
        continue;
      auto def = operand.get().getDefiningOp<ShardOp>();
      Attribute a = def ? signatureAttr(def.getSharding(), t.getRank())
                        : attrs.getArrayAttr({});
      func.setResultAttr(operand.getOperandNumber(), "paddle.sharding", a);
    }
    return success();
  }
};

} // namespace
