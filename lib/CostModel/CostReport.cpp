//===- CostReport.cpp - print predicted op costs on a device --------------===//
//
// A table per function on stdout, one line per paddle op (location, op,
// FLOPs, bytes, predicted microseconds, bound) and the function's total.
// Times are sums of per-op roofline times: what the module costs when every
// op is its own kernel, the baseline fusion improves on. Where the spec has
// a oneDNN path, each f32 matmul and conv2d gets a second line with both
// predicted times and the path paddle-use-onednn would pick.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/CostModel.h"
#include "paddle/CostModel/MatmulTiles.h"
#include "paddle/CostModel/Passes.h"
#include "paddle/Support/Location.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "dialects/Paddle/IR/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "paddle-cost-report"

namespace mlir::paddle {
#define GEN_PASS_DEF_COSTREPORTPASS
#include "paddle/CostModel/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// `op` as paddle-use-onednn will see it after lowering, or nullopt for an
/// op it does not consider (not a matmul or conv2d with an f32 result and
/// two f32 or two bf16 inputs, dynamic dims).
/// A matmul of two 2-D (or equally batched 3-D) operands lowers to
/// linalg.matmul (batch_matmul), which is tiled when the tiles divide it;
/// broadcasts lower to generic contractions (scalar loops).
std::optional<ContractionCost> contractionOf(Operation *op, const OpCost &cost,
                                             int64_t vectorBits) {
  if (!isa<MatmulOp, Conv2DOp>(op))
    return std::nullopt;
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Type in = typeOf(op->getOperand(0)).getElementType();
  if (!(in.isF32() || in.isBF16()) ||
      typeOf(op->getOperand(1)).getElementType() != in ||
      !typeOf(op->getResult(0)).getElementType().isF32() ||
      !llvm::all_of(op->getOperands(),
                    [&](Value v) { return typeOf(v).hasStaticShape(); }) ||
      !typeOf(op->getResult(0)).hasStaticShape())
    return std::nullopt;
  auto bytes = [&](Value v) {
    RankedTensorType type = typeOf(v);
    return double(type.getNumElements()) *
           double(type.getElementTypeBitWidth() / 8);
  };
  ContractionCost c;
  c.flops = cost.flops;
  c.bytes = cost.bytes;
  c.inputType = in.isBF16() ? SpecDType::BF16 : SpecDType::F32;
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    ArrayRef<int64_t> a =
        cast<RankedTensorType>(mm.getLhs().getType()).getShape();
    ArrayRef<int64_t> b =
        cast<RankedTensorType>(mm.getRhs().getType()).getShape();
    bool plain = (a.size() == 2 && b.size() == 2) ||
                 (a.size() == 3 && b.size() == 3 && a[0] == b[0]);
    c.tiled = plain &&
              pickMatmulTiles(a[a.size() - 2], b.back(), a.back(), vectorBits)
                  .has_value();
    return c;
  }
  auto conv = cast<Conv2DOp>(op);
  c.reorderBytes = bytes(conv.getInput()) + bytes(conv->getResult(0));
  if (!conv.getFilter().getDefiningOp<ConstantOp>())
    c.reorderBytes += bytes(conv.getFilter());
  return c;
}

/// A `shard` collective as the cost model prices it: the kind, the group
/// size and the bytes of the full buffer on each device.
struct CollectiveCall {
  Collective kind;
  int64_t devices;
  double bytes;
};

std::optional<CollectiveCall> collectiveOf(Operation *op) {
  auto bytesOf = [](Value v) -> std::optional<double> {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    return double(t.getNumElements()) *
           double((t.getElementTypeBitWidth() + 7) / 8);
  };
  auto group = [&](Operation *o, FlatSymbolRefAttr gridName,
                   ArrayRef<shard::GridAxis> axes) -> std::optional<int64_t> {
    SymbolTableCollection symbols;
    shard::GridOp grid = shard::getGridOrNull(o, gridName, symbols);
    if (!grid)
      return std::nullopt;
    int64_t n = 1;
    for (shard::GridAxis a : axes) {
      int64_t size = grid.getShape()[a];
      if (ShapedType::isDynamic(size))
        return std::nullopt;
      n *= size;
    }
    return n;
  };
  auto make = [&](Collective kind, Operation *o, FlatSymbolRefAttr gridName,
                  ArrayRef<shard::GridAxis> axes,
                  Value buffer) -> std::optional<CollectiveCall> {
    std::optional<int64_t> n = group(o, gridName, axes);
    std::optional<double> b = bytesOf(buffer);
    if (!n || !b)
      return std::nullopt;
    return CollectiveCall{kind, *n, *b};
  };
  if (auto c = dyn_cast<shard::AllReduceOp>(op))
    return make(Collective::AllReduce, op, c.getGridAttr(), c.getGridAxes(),
                c.getInput());
  if (auto c = dyn_cast<shard::AllGatherOp>(op))
    return make(Collective::AllGather, op, c.getGridAttr(), c.getGridAxes(),
                c.getResult());
  if (auto c = dyn_cast<shard::ReduceScatterOp>(op))
    return make(Collective::ReduceScatter, op, c.getGridAttr(), c.getGridAxes(),
                c.getInput());
  if (auto c = dyn_cast<shard::AllToAllOp>(op))
    return make(Collective::AllToAll, op, c.getGridAttr(), c.getGridAxes(),
                c.getInput());
  return std::nullopt;
}

struct CostReportPass : paddle::impl::CostReportPassBase<CostReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The report leaves the IR as it is: no default target is attached.
    TargetAttr target = getTargetOrDefault(module);
    std::optional<DeviceSpec> spec = target.getDeviceSpec();
    if (dynamicDimSize < 0) {
      module.emitError() << "paddle-cost-report: dynamic-dim-size must be "
                            ">= 0, got "
                         << static_cast<int64_t>(dynamicDimSize);
      return signalPassFailure();
    }
    CostOptions options;
    if (dynamicDimSize > 0)
      options.dynamicDimSize = dynamicDimSize;

    llvm::raw_ostream &os = llvm::outs();
    os << "cost report: device " << spec->name << " ("
       << (spec->kind == DeviceKind::Cpu ? "cpu" : "gpu") << ", " << spec->cores
       << " cores, f32 peak "
       << llvm::format("%.4g", spec->peakFlops(SpecDType::F32))
       << " FLOP/s, memory "
       << llvm::format("%.4g", spec->memoryBandwidthBytesPerS)
       << " B/s, call overhead "
       << llvm::format("%.4g", spec->callOverheadS * 1e6) << " us)\n";
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      os << "func @" << func.getName() << "\n";
      os << llvm::format("  %-32s %-26s %14s %14s %12s  %s\n", "location", "op",
                         "FLOPs", "bytes", "time (us)", "bound");
      double flops = 0, bytes = 0, seconds = 0;
      int64_t ops = 0, unknown = 0;
      // One line per op; a fused group (paddle.fusion) is one kernel: its
      // line counts in the total and its members follow, indented, for
      // reference.
      auto line = [&](Operation *op, StringRef name, const OpCost &cost,
                      StringRef indent) {
        std::string where = describeLocation(op->getLoc());
        if (!cost.known) {
          os << llvm::format("  %s%-32s %-26s ", indent.str().c_str(),
                             where.c_str(), name.str().c_str())
             << "unknown: " << cost.reason << "\n";
          return std::optional<TimeEstimate>();
        }
        TimeEstimate t = estimateTime(cost, *spec);
        os << llvm::format(
            "  %s%-32s %-26s %14.0f %14.0f %12.3f  %s\n", indent.str().c_str(),
            where.c_str(), name.str().c_str(), cost.flops, cost.bytes,
            t.seconds * 1e6, stringifyBound(t.bound).str().c_str());
        return std::optional<TimeEstimate>(t);
      };
      auto count = [&](const OpCost &cost, std::optional<TimeEstimate> time) {
        ++ops;
        if (!time) {
          ++unknown;
          return;
        }
        flops += cost.flops;
        bytes += cost.bytes;
        seconds += time->seconds;
      };
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto fusion = dyn_cast<FusionOp>(op)) {
          SmallVector<Operation *> members;
          for (Operation &member :
               fusion.getBody().front().without_terminator())
            if (hasCostModel(&member))
              members.push_back(&member);
          OpCost cost = estimateGroup(members, options);
          std::string name = ("group " + fusion.getKind()).str();
          count(cost, line(op, name, cost, ""));
          for (Operation *member : members)
            line(member, member->getName().getStringRef(),
                 estimateOp(member, options), "  ");
          return WalkResult::skip();
        }
        if (std::optional<CollectiveCall> c = collectiveOf(op)) {
          // A collective of a partitioned function (shard-partition):
          // alpha-beta over the spec's link.
          std::string where = describeLocation(op->getLoc());
          std::optional<double> t =
              estimateCollective(c->kind, c->devices, c->bytes, *spec);
          ++ops;
          if (!t) {
            ++unknown;
            os << llvm::format("  %-32s %-26s ", where.c_str(),
                               op->getName().getStringRef().str().c_str())
               << "unknown: the device spec has no link\n";
            return WalkResult::advance();
          }
          bytes += c->bytes;
          seconds += *t;
          os << llvm::format("  %-32s %-26s %14.0f %14.0f %12.3f  %s\n",
                             where.c_str(),
                             op->getName().getStringRef().str().c_str(), 0.0,
                             c->bytes, *t * 1e6, "link");
          return WalkResult::advance();
        }
        if (!hasCostModel(op))
          return WalkResult::advance();
        OpCost cost = estimateOp(op, options);
        count(cost, line(op, op->getName().getStringRef(), cost, ""));
        if (std::optional<ContractionCost> c =
                cost.known ? contractionOf(op, cost, target.getVectorBits())
                           : std::nullopt)
          if (std::optional<PathEstimate> t = estimatePaths(*c, *spec))
            os << llvm::format("    library choice: onednn %.3f us, codegen "
                               "(%s) %.3f us -> %s\n",
                               t->librarySeconds * 1e6,
                               c->tiled ? "tiled" : "scalar",
                               t->codegenSeconds * 1e6,
                               t->libraryIsFaster() ? "onednn" : "codegen");
        return WalkResult::advance();
      });
      os << llvm::format("  total @%s: %.0f FLOPs, %.0f bytes, %.3f us "
                         "(%lld ops",
                         func.getName().str().c_str(), flops, bytes,
                         seconds * 1e6, (long long)ops);
      if (unknown)
        os << ", " << unknown << " unknown, not in the total";
      os << ")\n";
    }
  }
};

} // namespace
