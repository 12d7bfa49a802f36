//===- CostModel.cpp - FLOPs, bytes and predicted time of ops -------------===//
//
// FLOP conventions (one place, so they can be compared):
//   - an add, multiply, compare, select or conversion of one element is 1
//     FLOP, and a fused multiply-add is 2 (matmul and conv: 2 per MAC);
//   - a transcendental function (exp, log, tanh, sigmoid, erf, sin, cos, pow)
//     is kTranscendentalFlops: MLIR's math expansions and libm evaluate
//     each as a polynomial of about that many vector operations, and the
//     roofline must see that an exp chain costs more than an add chain;
//   - data movement (transpose, slice, concat, pad, gather, broadcast_to) is
//     0 FLOPs: only bytes. reshape is a view of the same buffer (it lowers to
//     expand/collapse_shape), so it moves no bytes and runs no kernel.
// Bytes are the sizes of all operands plus all results: what a kernel that
// reads each input once and writes each output once moves.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/CostModel.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::paddle;

namespace {

constexpr double kTranscendentalFlops = 10;

/// Sizes of shaped values with dynamic dims replaced by the hint; records
/// why when a size is unknown.
struct Sizer {
  const CostOptions &options;
  std::string reason;

  std::optional<double> elements(Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped)
      return 1.0; // scalars (index operands) are one element
    if (!shaped.hasRank()) {
      fail(type, "is unranked");
      return std::nullopt;
    }
    double n = 1;
    for (int64_t dim : shaped.getShape()) {
      if (ShapedType::isDynamic(dim)) {
        if (!options.dynamicDimSize) {
          fail(type, "has a dynamic dim and no size hint was given "
                     "(dynamic-dim-size=N)");
          return std::nullopt;
        }
        dim = *options.dynamicDimSize;
      }
      n *= double(dim);
    }
    return n;
  }

  std::optional<double> bytes(Value value) {
    std::optional<double> n = elements(value.getType());
    if (!n)
      return std::nullopt;
    return *n * elementBytes(value.getType());
  }

  static double elementBytes(Type type) {
    Type element = getElementTypeOrSelf(type);
    if (element.isIndex())
      return 8;
    if (element.isIntOrFloat())
      return double((element.getIntOrFloatBitWidth() + 7) / 8);
    return 8;
  }

  void fail(Type type, StringRef why) {
    if (!reason.empty())
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type << " " << why;
    reason = text;
  }
};

SpecDType specTypeOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF64())
    return SpecDType::F64;
  if (element.isF16())
    return SpecDType::F16;
  if (element.isBF16())
    return SpecDType::BF16;
  if (element.isInteger(1) || element.isInteger(8))
    return SpecDType::I8;
  if (element.isInteger(32))
    return SpecDType::I32;
  if (element.isInteger(64) || element.isIndex())
    return SpecDType::I64;
  return SpecDType::F32;
}

/// FLOPs per result element of an elementwise op.
std::optional<double> elementwiseFlops(Operation *op) {
  return TypeSwitch<Operation *, std::optional<double>>(op)
      .Case<ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, SinOp, CosOp>(
          [](Operation *) { return kTranscendentalFlops; })
      // pow = exp(rhs * log(lhs)).
      .Case<PowOp>([](Operation *) { return 2 * kTranscendentalFlops + 1; })
      // Exact: 0.5 x (1 + erf(x / sqrt 2)); approximate: the tanh form.
      .Case<GeluOp>([](GeluOp op) {
        return kTranscendentalFlops + (op.getApproximate() ? 7.0 : 4.0);
      })
      .Case<NegOp, AbsOp, SqrtOp, RsqrtOp, ReluOp, FloorOp, CeilOp, RoundOp,
            SignOp, NotOp, AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp,
            RemOp, AndOp, OrOp, XorOp, CompareOp, SelectOp, CastOp>(
          [](Operation *) { return 1.0; })
      .Default([](Operation *) { return std::nullopt; });
}

double product(ArrayRef<int64_t> values) {
  double p = 1;
  for (int64_t v : values)
    p *= double(v);
  return p;
}

} // namespace

StringRef mlir::paddle::stringifyBound(Bound bound) {
  switch (bound) {
  case Bound::Compute:
    return "compute";
  case Bound::Memory:
    return "memory";
  case Bound::Overhead:
    return "overhead";
  }
  llvm_unreachable("unknown bound");
}

StringRef mlir::paddle::stringifyCollective(Collective kind) {
  switch (kind) {
  case Collective::AllReduce:
    return "all-reduce";
  case Collective::AllGather:
    return "all-gather";
  case Collective::ReduceScatter:
    return "reduce-scatter";
  case Collective::AllToAll:
    return "all-to-all";
  }
  llvm_unreachable("unknown collective");
}

bool mlir::paddle::hasCostModel(Operation *op) {
  return isa_and_nonnull<PaddleDialect>(op->getDialect());
}

OpCost mlir::paddle::estimateOp(Operation *op, const CostOptions &options) {
  OpCost cost;
  if (!hasCostModel(op)) {
    cost.isKernel = false;
    return cost;
  }
  Sizer sizer{options, {}};
  auto unknown = [&]() {
    OpCost u;
    u.known = false;
    u.reason = sizer.reason;
    return u;
  };

  for (Value operand : op->getOperands()) {
    std::optional<double> b = sizer.bytes(operand);
    if (!b)
      return unknown();
    cost.bytes += *b;
  }
  double resultElements = 0;
  for (Value result : op->getResults()) {
    std::optional<double> b = sizer.bytes(result);
    std::optional<double> n = sizer.elements(result.getType());
    if (!b || !n)
      return unknown();
    cost.bytes += *b;
    resultElements += *n;
  }
  Type firstType = op->getNumOperands() ? op->getOperand(0).getType()
                                        : op->getResult(0).getType();
  cost.computeType = specTypeOf(firstType);
  std::optional<double> inputElements = sizer.elements(firstType);
  if (!inputElements)
    return unknown();

  if (std::optional<double> perElement = elementwiseFlops(op)) {
    cost.flops = *perElement * resultElements;
    // compare/select/cast: the compared (not the produced) type computes.
    if (isa<SelectOp>(op))
      cost.computeType = specTypeOf(op->getOperand(1).getType());
    return cost;
  }

  bool handled =
      TypeSwitch<Operation *, bool>(op)
          .Case<MatmulOp>([&](MatmulOp mm) {
            // Each result element is a dot product of length K.
            auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
            int64_t k = lhs.getShape().back();
            if (ShapedType::isDynamic(k))
              k = *options.dynamicDimSize; // sizer checked it is set
            cost.flops = 2 * resultElements * double(k);
            return true;
          })
          .Case<Conv2DOp>([&](Conv2DOp conv) {
            // Each output element sums (C / groups) * KH * KW products.
            auto filter = cast<RankedTensorType>(conv.getFilter().getType());
            SmallVector<int64_t> window(filter.getShape().drop_front());
            for (int64_t &d : window)
              if (ShapedType::isDynamic(d))
                d = *options.dynamicDimSize;
            cost.flops = 2 * resultElements * product(window);
            return true;
          })
          .Case<MaxPool2DOp>([&](MaxPool2DOp pool) {
            cost.flops = resultElements * product(pool.getKernel());
            return true;
          })
          .Case<AvgPool2DOp>([&](AvgPool2DOp pool) {
            // The window's adds and one divide.
            cost.flops = resultElements * (product(pool.getKernel()) + 1);
            return true;
          })
          .Case<SoftmaxOp>([&](Operation *) {
            // max, subtract, exp, sum, divide.
            cost.flops = *inputElements * (4 + kTranscendentalFlops);
            return true;
          })
          .Case<LogSoftmaxOp>([&](Operation *) {
            // max, subtract, exp, sum, subtract (the log is once per row).
            cost.flops = *inputElements * (4 + kTranscendentalFlops);
            return true;
          })
          .Case<LayerNormOp>([&](LayerNormOp ln) {
            // mean (1), x - mean (1), square and sum (2), normalize (2), and
            // the optional scale and bias (1 each).
            cost.flops = *inputElements *
                         (6 + (ln.getScale() ? 1 : 0) + (ln.getBias() ? 1 : 0));
            return true;
          })
          .Case<BatchNormInferenceOp>([&](Operation *) {
            // (x - mean) * (scale / sqrt(var + eps)) + bias.
            cost.flops = *inputElements * 3;
            return true;
          })
          .Case<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp>(
              [&](Operation *) {
                cost.flops = *inputElements;
                return true;
              })
          .Case<ReduceMeanOp>([&](Operation *) {
            cost.flops = *inputElements + resultElements;
            return true;
          })
          .Case<ScatterAddOp>([&](ScatterAddOp scatter) {
            std::optional<double> updates =
                sizer.elements(scatter->getOperand(2).getType());
            cost.flops = updates ? *updates : 0;
            return true;
          })
          .Case<IotaOp>([&](Operation *) {
            cost.flops = resultElements;
            cost.computeType = SpecDType::I64;
            return true;
          })
          .Case<RngUniformOp, RngUniformBlockOp>([&](Operation *) {
            // splitmix64: about 12 integer ops, then a scale and shift.
            cost.flops = resultElements * 14;
            cost.computeType = SpecDType::I64;
            return true;
          })
          .Case<ReshapeOp>([&](Operation *) {
            cost.bytes = 0;
            cost.isKernel = false;
            return true;
          })
          .Case<ConstantOp>([&](Operation *) {
            // Data of the compiled module: no kernel writes it.
            cost.bytes = 0;
            cost.isKernel = false;
            return true;
          })
          .Case<BroadcastToOp, TransposeOp, SliceOp, ConcatOp, PadOp, GatherOp>(
              [&](Operation *) { return true; })
          .Default([](Operation *) { return false; });
  if (!handled) {
    OpCost u;
    u.known = false;
    u.reason = "no cost rule for '" + op->getName().getStringRef().str() + "'";
    return u;
  }
  return cost;
}

OpCost mlir::paddle::estimateGroup(ArrayRef<Operation *> ops,
                                   const CostOptions &options) {
  OpCost total;
  total.isKernel = false;
  // Views and constants run no kernel: a value they produce is read by the
  // kernels that use it, so only kernel members hide their values.
  llvm::SmallPtrSet<Operation *, 16> kernels;
  double mostFlops = -1;
  for (Operation *op : ops) {
    OpCost cost = estimateOp(op, options);
    if (!cost.known)
      return cost;
    total.flops += cost.flops;
    if (cost.isKernel)
      kernels.insert(op);
    if (cost.flops > mostFlops) {
      mostFlops = cost.flops;
      total.computeType = cost.computeType;
    }
  }
  total.isKernel = !kernels.empty();

  llvm::DenseSet<Value> counted;
  Sizer sizer{options, {}};
  auto add = [&](Value value) {
    if (!counted.insert(value).second)
      return true;
    std::optional<double> b = sizer.bytes(value);
    if (!b)
      return false;
    total.bytes += *b;
    return true;
  };
  for (Operation *op : ops) {
    if (!kernels.contains(op))
      continue;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && kernels.contains(def))
        continue;
      if (!add(operand))
        break;
    }
    for (Value result : op->getResults()) {
      bool usedOutside =
          result.use_empty() || llvm::any_of(result.getUsers(), [&](auto *u) {
            return !kernels.contains(u);
          });
      if (usedOutside && !add(result))
        break;
    }
    if (!sizer.reason.empty()) {
      OpCost u;
      u.known = false;
      u.reason = sizer.reason;
      return u;
    }
  }
  return total;
}

double mlir::paddle::bandwidthFor(double bytes, const DeviceSpec &device) {
  for (const CacheLevel &cache : device.caches)
    if (bytes <= cache.sizeBytes)
      return cache.bandwidthBytesPerS;
  return device.memoryBandwidthBytesPerS;
}

TimeEstimate mlir::paddle::estimateTime(const OpCost &cost,
                                        const DeviceSpec &device) {
  TimeEstimate t;
  t.computeSeconds = cost.flops / device.peakFlops(cost.computeType);
  t.memorySeconds =
      cost.bytes > 0 ? cost.bytes / bandwidthFor(cost.bytes, device) : 0;
  t.overheadSeconds = cost.isKernel ? device.callOverheadS : 0;
  t.seconds = std::max(t.computeSeconds, t.memorySeconds) + t.overheadSeconds;
  if (t.computeSeconds == 0 && t.memorySeconds == 0)
    t.bound = Bound::Overhead;
  else if (t.computeSeconds >= t.memorySeconds)
    t.bound = Bound::Compute;
  else
    t.bound = Bound::Memory;
  return t;
}

std::optional<PathEstimate>
mlir::paddle::estimatePaths(const ContractionCost &cost,
                            const DeviceSpec &device) {
  if (!device.onednn || !device.codegen)
    return std::nullopt;
  // Efficiencies are measured per core (paddle-calibrate) and scale the
  // whole device's peak, as the roofline assumes every core works.
  double peak = device.peakFlops(SpecDType::F32);
  double memory =
      cost.bytes > 0 ? cost.bytes / bandwidthFor(cost.bytes, device) : 0;
  auto roofline = [&](double flopsPerS, double efficiency,
                      double memoryEfficiency) {
    return std::max(cost.flops / (flopsPerS * efficiency),
                    memory / memoryEfficiency);
  };
  PathEstimate t;
  // A reorder reads and writes its bytes once; it streams, so it is charged
  // at the bandwidth of where that traffic fits.
  double reorder =
      cost.reorderBytes > 0
          ? 2 * cost.reorderBytes / bandwidthFor(2 * cost.reorderBytes, device)
          : 0;
  double libraryEfficiency =
      cost.inputType == SpecDType::BF16 && device.onednn->bf16Efficiency
          ? *device.onednn->bf16Efficiency
          : device.onednn->f32Efficiency;
  t.librarySeconds =
      device.callOverheadS + device.onednn->callOverheadS +
      roofline(device.peakFlops(cost.inputType), libraryEfficiency, 1.0) +
      reorder;
  double copies =
      cost.copyBytes > 0
          ? 2 * cost.copyBytes / bandwidthFor(2 * cost.copyBytes, device)
          : 0;
  // Our code extends bf16 inputs to f32 in registers with integer shifts
  // and masks (arith-expand), several instructions per element read: a
  // tiled bf16 matmul took 1.4-2.9x the time of the f32 one (64^3..512^3,
  // 1 thread, the Xeon VM; docs/bf16.md).
  constexpr double kBF16ExtendSlowdown = 2.5;
  double efficiency = cost.tiled ? device.codegen->tiledF32Efficiency
                                 : device.codegen->scalarF32Efficiency;
  if (cost.inputType == SpecDType::BF16)
    efficiency /= kBF16ExtendSlowdown;
  t.codegenSeconds =
      device.callOverheadS +
      roofline(peak, efficiency, device.codegen->memoryEfficiency) + copies;
  return t;
}

std::optional<double>
mlir::paddle::estimateCollective(Collective kind, int64_t devices, double bytes,
                                 const DeviceSpec &device) {
  if (devices <= 1)
    return 0.0;
  if (device.link.bandwidthBytesPerS <= 0)
    return std::nullopt;
  return estimateCollective(kind, devices, bytes, device.link);
}

double mlir::paddle::estimateCollective(Collective kind, int64_t devices,
                                        double bytes, const LinkSpec &link) {
  if (devices <= 1)
    return 0.0;
  double n = double(devices);
  double alpha = link.latencyS;
  double beta = link.bandwidthBytesPerS;
  // A ring all-reduce is a reduce-scatter followed by an all-gather.
  double steps = kind == Collective::AllReduce ? 2 : 1;
  return steps * ((n - 1) * alpha + (n - 1) / n * bytes / beta);
}
