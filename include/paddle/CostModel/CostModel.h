//===- CostModel.h - FLOPs, bytes and predicted time of ops ------*- C++
//-*-===//
//
// The cost of a paddle op is the arithmetic it does (FLOPs) and the bytes its
// kernel reads and writes (operands + results); its time on a device is the
// roofline max(FLOPs / peak, bytes / bandwidth) plus one kernel call. A fused
// group costs its total FLOPs but only the bytes that cross its boundary.
// Collectives use an alpha-beta model of ring algorithms.
//
// Costs are a function of the op kind dispatched in one place (CostModel.cpp)
// rather than an op interface: the model needs only types and attributes, the
// rules stay side by side where their FLOP conventions can be compared, and
// the dialect does not depend on the cost model.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_COSTMODEL_COSTMODEL_H
#define PADDLE_COSTMODEL_COSTMODEL_H

#include "paddle/CostModel/DeviceSpec.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>

namespace mlir::paddle {

struct CostOptions {
  /// The size assumed for every dynamic dim; without it, an op with a
  /// dynamic dim has an unknown cost.
  std::optional<int64_t> dynamicDimSize;
};

struct OpCost {
  /// False when the cost cannot be computed (a dynamic dim without a size
  /// hint); `reason` then says why.
  bool known = true;
  std::string reason;
  double flops = 0;
  double bytes = 0;
  /// The element type the arithmetic runs in (selects the peak).
  SpecDType computeType = SpecDType::F32;
  /// Whether the op runs a kernel at all (false for views such as reshape
  /// and for constants): only kernels pay the call overhead.
  bool isKernel = true;
};

enum class Bound { Compute, Memory, Overhead };
llvm::StringRef stringifyBound(Bound bound);

struct TimeEstimate {
  double seconds = 0;
  double computeSeconds = 0;
  double memorySeconds = 0;
  double overheadSeconds = 0;
  /// Which term of max(compute, memory) won; Overhead when both are 0.
  Bound bound = Bound::Overhead;
};

/// Whether `op` is one the model has a rule for (every paddle op).
bool hasCostModel(Operation *op);

/// FLOPs and bytes of one paddle op. Ops of other dialects (func.return,
/// tensor.dim, ...) cost nothing and are not kernels.
OpCost estimateOp(Operation *op, const CostOptions &options = {});

/// FLOPs of the ops together and the bytes of the values that cross the
/// boundary of the set: operands defined outside it and results used
/// outside it, each counted once. The compute type is the one of the op
/// with the most FLOPs.
OpCost estimateGroup(llvm::ArrayRef<Operation *> ops,
                     const CostOptions &options = {});

/// Roofline time of a cost on a device. Bytes are charged at the bandwidth
/// of the smallest cache level that holds them all, or of main memory.
TimeEstimate estimateTime(const OpCost &cost, const DeviceSpec &device);

/// The bandwidth the roofline charges `bytes` at (see estimateTime).
double bandwidthFor(double bytes, const DeviceSpec &device);

/// A matmul or convolution as the library-vs-codegen choice sees it
/// (docs/onednn.md, "Choosing").
struct ContractionCost {
  double flops = 0;
  /// Bytes of the operands and the result, each once.
  double bytes = 0;
  /// Bytes oneDNN converts between layouts on every call (each read and
  /// written once): a convolution's activations to and from its blocked
  /// layout, and weights that are not constant. Constant weights are
  /// reordered once per module and cost nothing per call.
  double reorderBytes = 0;
  /// Whether our code generation tiles and vectorizes the op
  /// (paddle-tile-and-vectorize), or runs it as scalar loops.
  bool tiled = false;
  /// Bytes of operand copies that our code reads (each read and written
  /// once, on every call) and oneDNN does without: a transposed operand it
  /// reads through permuted strides, a conv input it pads itself
  /// (paddle-use-onednn absorbs the transpose, folds the padding).
  double copyBytes = 0;
  /// The element type of the inputs (the result is f32). oneDNN computes
  /// at the spec's peak for it (bf16: AMX where the CPU has it); our code
  /// extends bf16 inputs to f32 (at a cost) and runs at the f32 peak.
  SpecDType inputType = SpecDType::F32;
};

/// Predicted time of one op on each path.
struct PathEstimate {
  /// call_overhead_s + onednn.call_overhead_s + roofline at
  /// onednn.f32_efficiency x the input type's peak + reorderBytes at the
  /// roofline bandwidth.
  double librarySeconds = 0;
  /// call_overhead_s + roofline at the codegen efficiency (tiled or
  /// scalar) x peak and codegen.memory_efficiency x bandwidth, + the
  /// operand copies (copyBytes) at the roofline bandwidth.
  double codegenSeconds = 0;
  bool libraryIsFaster() const { return librarySeconds < codegenSeconds; }
};

/// Both paths of `cost` on `device`; nullopt when the spec has no oneDNN
/// path ("onednn" absent: GPUs), where generated code is the only choice.
std::optional<PathEstimate> estimatePaths(const ContractionCost &cost,
                                          const DeviceSpec &device);

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll };
llvm::StringRef stringifyCollective(Collective kind);

/// Alpha-beta time of a ring collective over `devices` devices, with
/// `bytes` the size of the full buffer on each device (the input of an
/// all-reduce, reduce-scatter and all-to-all, the output of an all-gather):
///   all-reduce:     2 (n-1) alpha + 2 (n-1)/n bytes / beta
///   all-gather, reduce-scatter, all-to-all:
///                     (n-1) alpha +   (n-1)/n bytes / beta
/// with alpha the link latency and beta its bandwidth. Fails (nullopt) when
/// the spec has no link; one device costs 0.
std::optional<double> estimateCollective(Collective kind, int64_t devices,
                                         double bytes,
                                         const DeviceSpec &device);
/// The same over `link` (bandwidth > 0), e.g. one tier of a cluster.
double estimateCollective(Collective kind, int64_t devices, double bytes,
                          const LinkSpec &link);

} // namespace mlir::paddle

#endif // PADDLE_COSTMODEL_COSTMODEL_H
