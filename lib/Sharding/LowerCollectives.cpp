//===- LowerCollectives.cpp - shard collectives to runtime calls ----------===//
//
// See Passes.td. The runtime's entry points (paddle_runtime/spmd.h) take
// MLIR unranked memref descriptors, whose layout does not depend on the
// element type; a declaration per element type (`_f32`, `_i64`, ...) gives
// each a well-typed MLIR signature, and the runtime binds every one of
// them to the same function, which reads the type from its `dtype`
// argument.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/Passes.h"

#include "../Transforms/RuntimeFunctions.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Support/RuntimeDtype.h"
#include "paddle_runtime/collectives.h"
#include "paddle_runtime/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "paddle-lower-collectives"

namespace mlir::paddle {
#define GEN_PASS_DEF_LOWERCOLLECTIVESPASS
#include "paddle/Sharding/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using shard::GridAxis;

namespace {

std::string typeSuffix(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

FailureOr<paddle_reduce_op_t> reduceOpOf(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
  case shard::ReductionKind::Average:
    return PADDLE_REDUCE_SUM;
  case shard::ReductionKind::Product:
    return PADDLE_REDUCE_PROD;
  case shard::ReductionKind::Max:
    return PADDLE_REDUCE_MAX;
  case shard::ReductionKind::Min:
    return PADDLE_REDUCE_MIN;
  default:
    return failure();
  }
}

struct Lowering {
  ModuleOp module;
  SymbolTable &symbols;
  SymbolTableCollection &tables;

  Type i64() { return IntegerType::get(module.getContext(), 64); }
  Type unranked(Type element) {
    return UnrankedMemRefType::get(element, Attribute());
  }

  /// A constant global i64 vector `values`, as an unranked memref.
  Value constantVector(OpBuilder &b, Location loc, StringRef prefix,
                       ArrayRef<int64_t> values) {
    std::string name = prefix.str();
    for (int64_t v : values)
      name += "_" + std::to_string(v);
    auto type = MemRefType::get({static_cast<int64_t>(values.size())}, i64());
    auto global = symbols.lookup<memref::GlobalOp>(name);
    if (!global) {
      OpBuilder g = OpBuilder::atBlockBegin(module.getBody());
      global = memref::GlobalOp::create(
          g, module.getLoc(), name, g.getStringAttr("private"), type,
          DenseElementsAttr::get(RankedTensorType::get(type.getShape(), i64()),
                                 values),
          /*constant=*/true, /*alignment=*/IntegerAttr());
      symbols.insert(global);
    }
    Value get = memref::GetGlobalOp::create(b, loc, type, name);
    return memref::CastOp::create(b, loc, unranked(i64()), get);
  }

  FailureOr<shard::GridOp> gridOf(Operation *op, FlatSymbolRefAttr name) {
    shard::GridOp grid = shard::getGridOrNull(op, name, tables);
    if (!grid)
      return op->emitOpError()
             << "names " << name << ", which is not a shard.grid of the module";
    return grid;
  }

  Value meshVector(OpBuilder &b, Location loc, shard::GridOp grid) {
    return constantVector(b, loc, "__paddle_spmd_mesh", grid.getShape());
  }

  /// `tensor` as a dense buffer the callee reads, cast to unranked.
  Value readBuffer(OpBuilder &b, Location loc, Value tensor) {
    auto t = cast<RankedTensorType>(tensor.getType());
    auto type = MemRefType::get(t.getShape(), t.getElementType());
    Value buffer =
        bufferization::ToBufferOp::create(b, loc, type, tensor, true);
    return memref::CastOp::create(b, loc, unranked(t.getElementType()), buffer);
  }

  /// A new dense buffer for a result of `type`, whose dynamic sizes are
  /// those of `like` (a tensor of the same rank) where `sameDims` says so.
  Value allocFor(OpBuilder &b, Location loc, RankedTensorType type,
                 Value like) {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b, loc, like, d));
    return memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), sizes);
  }

  /// The call `paddle_spmd_<name>_<type>(in, out, mesh, axes, scalars...)`
  /// writing a result of `resultType` from `input`.
  FailureOr<Value> call(Operation *op, StringRef name, Value input,
                        RankedTensorType resultType, FlatSymbolRefAttr gridName,
                        ArrayRef<GridAxis> axes, ArrayRef<Value> scalars) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    FailureOr<shard::GridOp> grid = gridOf(op, gridName);
    if (failed(grid))
      return failure();
    // Over axes of size 1 (a one-device mesh, or a 2x1 one's second axis)
    // every collective is the identity: no call, no copy.
    int64_t groupSize = 1;
    for (GridAxis a : axes)
      groupSize *= grid->getShape()[a];
    if (groupSize == 1 && input.getType() == resultType)
      return input;
    Type element = resultType.getElementType();
    paddle_dtype_t dtype = paddle::toRuntimeDtype(element);
    if (dtype == PADDLE_DTYPE_INVALID)
      return op->emitOpError() << "has element type " << element
                               << ", which the runtime's collectives lack";
    if (llvm::any_of(resultType.getShape(), ShapedType::isDynamic) &&
        cast<RankedTensorType>(input.getType()).getShape() !=
            resultType.getShape())
      return op->emitOpError("changes a dynamic dim; only static shapes "
                             "are gathered or scattered");
    SmallVector<Type> inputs = {unranked(element), unranked(element),
                                unranked(i64()), unranked(i64()),
                                b.getI32Type()};
    for (Value s : scalars)
      inputs.push_back(s.getType());
    std::string symbol =
        ("paddle_spmd_" + name + "_" + typeSuffix(element)).str();
    FailureOr<func::FuncOp> decl = paddle::declareRuntimeFunction(
        module, symbol, b.getFunctionType(inputs, {}));
    if (failed(decl))
      return failure();
    Value in = readBuffer(b, loc, input);
    Value out = allocFor(b, loc, resultType, input);
    SmallVector<int64_t> axisList(axes.begin(), axes.end());
    SmallVector<Value> args = {
        in, memref::CastOp::create(b, loc, unranked(element), out),
        meshVector(b, loc, *grid),
        constantVector(b, loc, "__paddle_spmd_axes", axisList),
        arith::ConstantIntOp::create(b, loc, dtype, 32)};
    llvm::append_range(args, scalars);
    func::CallOp::create(b, loc, *decl, args);
    return bufferization::ToTensorOp::create(b, loc, resultType, out,
                                             /*restrict=*/true,
                                             /*writable=*/true)
        .getResult();
  }

  Value i32(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value i64Const(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }

  LogicalResult lower(shard::AllReduceOp op) {
    OpBuilder b(op);
    FailureOr<paddle_reduce_op_t> kind = reduceOpOf(op.getReduction());
    if (failed(kind))
      return op.emitOpError("has a reduction the runtime lacks (sum, "
                            "average, product, max, min)");
    auto type = cast<RankedTensorType>(op.getType());
    FailureOr<Value> r =
        call(op, "all_reduce", op.getInput(), type, op.getGridAttr(),
             op.getGridAxes(), {i32(b, op.getLoc(), *kind)});
    if (failed(r))
      return failure();
    Value result = *r;
    if (op.getReduction() == shard::ReductionKind::Average &&
        result != op.getInput()) {
      if (!isa<FloatType>(type.getElementType()))
        return op.emitOpError("averages integers");
      FailureOr<shard::GridOp> grid = gridOf(op, op.getGridAttr());
      if (failed(grid))
        return failure();
      int64_t n = 1;
      for (GridAxis a : op.getGridAxes())
        n *= grid->getShape()[a];
      b.setInsertionPointAfterValue(result);
      auto scalar = RankedTensorType::get({}, type.getElementType());
      Value count = arith::ConstantOp::create(
          b, op.getLoc(),
          DenseElementsAttr::get(
              scalar, b.getFloatAttr(type.getElementType(), double(n))));
      result = paddle::DivOp::create(b, op.getLoc(), type, result, count);
    }
    op.replaceAllUsesWith(result);
    op.erase();
    return success();
  }

  LogicalResult lower(shard::AllGatherOp op) {
    OpBuilder b(op);
    FailureOr<Value> r = call(
        op, "all_gather", op.getInput(), cast<RankedTensorType>(op.getType()),
        op.getGridAttr(), op.getGridAxes(),
        {i64Const(b, op.getLoc(), op.getGatherAxis().getSExtValue())});
    if (failed(r))
      return failure();
    op.replaceAllUsesWith(*r);
    op.erase();
    return success();
  }

  LogicalResult lower(shard::ReduceScatterOp op) {
    OpBuilder b(op);
    FailureOr<paddle_reduce_op_t> kind = reduceOpOf(op.getReduction());
    if (failed(kind) || op.getReduction() == shard::ReductionKind::Average)
      return op.emitOpError("has a reduction the runtime lacks (sum, "
                            "product, max, min)");
    FailureOr<Value> r =
        call(op, "reduce_scatter", op.getInput(),
             cast<RankedTensorType>(op.getType()), op.getGridAttr(),
             op.getGridAxes(),
             {i32(b, op.getLoc(), *kind),
              i64Const(b, op.getLoc(), op.getScatterAxis().getSExtValue())});
    if (failed(r))
      return failure();
    op.replaceAllUsesWith(*r);
    op.erase();
    return success();
  }

  LogicalResult lower(shard::AllToAllOp op) {
    OpBuilder b(op);
    FailureOr<Value> r = call(
        op, "all_to_all", op.getInput(), cast<RankedTensorType>(op.getType()),
        op.getGridAttr(), op.getGridAxes(),
        {i64Const(b, op.getLoc(), op.getSplitAxis().getSExtValue()),
         i64Const(b, op.getLoc(), op.getConcatAxis().getSExtValue())});
    if (failed(r))
      return failure();
    op.replaceAllUsesWith(*r);
    op.erase();
    return success();
  }

  /// `axes`, or every axis of `grid` when it lists none.
  static SmallVector<GridAxis> axesOrAll(shard::GridOp grid,
                                         ArrayRef<GridAxis> axes) {
    SmallVector<GridAxis> all(axes);
    if (all.empty())
      for (size_t a = 0; a < grid.getShape().size(); ++a)
        all.push_back(a);
    return all;
  }

  /// This device's coordinate along `axis` of `grid`, as an index.
  FailureOr<Value> processIndex(OpBuilder &b, Location loc, shard::GridOp grid,
                                GridAxis axis) {
    Type i64Type = i64();
    FailureOr<func::FuncOp> decl = paddle::declareRuntimeFunction(
        module, "paddle_spmd_process_index",
        b.getFunctionType({unranked(i64Type), i64Type}, {i64Type}));
    if (failed(decl))
      return failure();
    Value mesh = meshVector(b, loc, grid);
    Value index = func::CallOp::create(b, loc, *decl,
                                       ValueRange{mesh, i64Const(b, loc, axis)})
                      .getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), index)
        .getResult();
  }

  LogicalResult lower(shard::ProcessMultiIndexOp op) {
    OpBuilder b(op);
    FailureOr<shard::GridOp> grid = gridOf(op, op.getGridAttr());
    if (failed(grid))
      return failure();
    SmallVector<Value> indices;
    for (GridAxis a : axesOrAll(*grid, op.getAxes())) {
      FailureOr<Value> index = processIndex(b, op.getLoc(), *grid, a);
      if (failed(index))
        return failure();
      indices.push_back(*index);
    }
    op.replaceAllUsesWith(indices);
    op.erase();
    return success();
  }

  LogicalResult lower(shard::ProcessLinearIndexOp op) {
    OpBuilder b(op);
    FailureOr<shard::GridOp> grid = gridOf(op, op.getGridAttr());
    if (failed(grid))
      return failure();
    Value linear = arith::ConstantIndexOp::create(b, op.getLoc(), 0);
    for (auto [a, size] : llvm::enumerate(grid->getShape())) {
      FailureOr<Value> index = processIndex(b, op.getLoc(), *grid, a);
      if (failed(index))
        return failure();
      Value s = arith::ConstantIndexOp::create(b, op.getLoc(), size);
      linear = arith::AddIOp::create(
          b, op.getLoc(), arith::MulIOp::create(b, op.getLoc(), linear, s),
          *index);
    }
    op.replaceAllUsesWith(linear);
    op.erase();
    return success();
  }

  LogicalResult lower(shard::GridShapeOp op) {
    OpBuilder b(op);
    FailureOr<shard::GridOp> grid = gridOf(op, op.getGridAttr());
    if (failed(grid))
      return failure();
    SmallVector<Value> sizes;
    for (GridAxis a : axesOrAll(*grid, op.getAxes()))
      sizes.push_back(
          arith::ConstantIndexOp::create(b, op.getLoc(), grid->getShape()[a]));
    op.replaceAllUsesWith(sizes);
    op.erase();
    return success();
  }
};

struct LowerCollectivesPass
    : paddle::impl::LowerCollectivesPassBase<LowerCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    SymbolTableCollection tables;
    // An all_slice over axes of size 1 keeps the whole tensor: left alone
    // it would become a slice at a run-time offset that hides a constant
    // or a fusion behind it.
    WalkResult unknownGrid = module.walk([&](shard::AllSliceOp op) {
      shard::GridOp grid = shard::getGridOrNull(op, op.getGridAttr(), tables);
      if (!grid) {
        op.emitOpError() << "names " << op.getGridAttr()
                         << ", which is not a shard.grid of the module";
        return WalkResult::interrupt();
      }
      int64_t groupSize = 1;
      for (GridAxis a : op.getGridAxes())
        groupSize *= grid.getShape()[a];
      if (groupSize == 1 && op.getInput().getType() == op.getType()) {
        op.replaceAllUsesWith(op.getInput());
        op.erase();
      }
      return WalkResult::advance();
    });
    if (unknownGrid.wasInterrupted())
      return signalPassFailure();

    // all_slice to process_multi_index and extract_slice (upstream).
    RewritePatternSet patterns(ctx);
    shard::populateAllSliceOpLoweringPatterns(patterns, tables);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    SymbolTable symbols(module);
    Lowering lowering{module, symbols, tables};
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult done =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<shard::AllReduceOp, shard::AllGatherOp,
                    shard::ReduceScatterOp, shard::AllToAllOp,
                    shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp,
                    shard::GridShapeOp>(
                  [&](auto op) { return lowering.lower(op); })
              .Default([](Operation *op) {
                return op->emitOpError(
                    "has no lowering to the runtime yet (lowered: "
                    "all_reduce, all_gather, all_slice, reduce_scatter, "
                    "all_to_all, process indices, grid_shape); was the "
                    "module partitioned (shard-partition)?");
              });
      if (failed(done))
        return signalPassFailure();
    }
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }
};

} // namespace
