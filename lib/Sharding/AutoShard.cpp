//===- AutoShard.cpp - the cost model chooses every value's split ---------===//
//
// paddle-auto-shard plans a function on a mesh as an integer linear program
// (Alpa's intra-op formulation, XLA's auto-sharding):
//
// - Every paddle op is a node with a set of strategies: each mesh axis
//   splits one loop of its sharding rule, or none. A strategy costs the
//   op's roofline time on its per-device share (FLOPs over the devices that
//   split it, the bytes of its per-device operands and results) plus the
//   all-reduce of partial results when it splits a reduction loop. Each
//   function argument is a node whose strategies split its dims.
// - Every use of a value is an edge: when the producer's split differs
//   from the one the user's strategy reads, the partition reshards (an
//   all-gather per axis the user wants whole, an all-to-all per axis that
//   moves to another dim), priced by the link of the mesh axis: the
//   target's link, or a cluster's link inside or between nodes.
// - Memory: at each op, the values alive there (arguments throughout,
//   results from their op to their last use) must fit the per-device limit.
//
// Binary s[v][i] picks strategy i of node v (one per node); e[k][i][j] in
// [0, 1] with row and column sums s[u][i], s[v][j] picks the pair on edge k,
// so the objective sum(cost s) + sum(R e) is the plan's predicted time.
// The plan becomes `shard.shard` annotations (each result split as its
// strategy says, each operand read as its user's strategy says), which the
// SPMD pipeline propagates, partitions and lowers as user shardings.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/Passes.h"

#include "ShardingRules.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "dialects/Paddle/IR/Target.h"
#include "paddle/CostModel/CostModel.h"
#include "paddle/Sharding/Ilp.h"
#include "paddle/Support/Location.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>

#define DEBUG_TYPE "paddle-auto-shard"

namespace mlir::paddle {
#define GEN_PASS_DEF_AUTOSHARDPASS
#include "paddle/Sharding/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

constexpr int64_t kNone = -1;

/// Per mesh axis, the tensor dim it splits, or kNone.
using Split = SmallVector<int64_t>;

struct Strategy {
  /// Per mesh axis, the loop of the rule it splits, or kNone.
  SmallVector<int64_t> axisLoop;
  /// Per operand, then per result (the rule's order): the value's split.
  SmallVector<Split> splits;
  double seconds = 0;
  /// The part of `seconds` in collectives (partial results all-reduced).
  double communicationS = 0;
  /// Per result: bytes on each device.
  SmallVector<double> resultBytes;
};

struct Node {
  /// The op, or null for a function argument.
  Operation *op = nullptr;
  Value arg;
  ShardingRule rule;
  SmallVector<Strategy> strategies;
  /// The first ILP column of its strategies.
  int column = 0;
};

/// Bytes of a tensor, a dynamic dim counted as `dynamicSize` (0: the
/// tensor counts as nothing).
double tensorBytes(Value v, int64_t dynamicSize) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return 0;
  double elements = 1;
  for (int64_t size : type.getShape())
    elements *=
        ShapedType::isDynamic(size) ? double(dynamicSize) : double(size);
  unsigned bits = type.getElementTypeBitWidth();
  return elements * std::max(1u, bits / 8);
}

/// The number of devices `split` divides a value over.
int64_t parts(const Split &split, ArrayRef<int64_t> mesh) {
  int64_t n = 1;
  for (auto [a, d] : llvm::enumerate(split))
    if (d != kNone)
      n *= mesh[a];
  return n;
}

std::string splitText(const Split &split, int64_t rank) {
  std::string text = "[";
  for (int64_t d = 0; d < rank; ++d) {
    text += d ? ", [" : "[";
    bool first = true;
    for (auto [a, dim] : llvm::enumerate(split))
      if (dim == d) {
        text += (first ? "" : ", ") + std::to_string(a);
        first = false;
      }
    text += "]";
  }
  return text + "]";
}

struct Planner {
  ArrayRef<int64_t> mesh;
  const DeviceSpec &device;
  const ClusterSpec *cluster;
  CostOptions costOptions;
  /// A dynamic dim's size for pricing, and the number its sizes are
  /// declared multiples of (a split must divide it; 1: never split).
  int64_t dynamicSize = 0;
  int64_t dynamicMultiple = 1;

  double bytes(Value v) const { return tensorBytes(v, dynamicSize); }

  /// The link of a collective over mesh `axes`.
  LinkSpec link(ArrayRef<int64_t> axes) const {
    return cluster ? cluster->linkFor(mesh, axes) : device.link;
  }

  int64_t groupSize(ArrayRef<int64_t> axes) const {
    int64_t n = 1;
    for (int64_t a : axes)
      n *= mesh[a];
    return n;
  }

  /// The predicted time of resharding a value of `bytes` from `from` to
  /// `to`, one mesh axis at a time as the partition does.
  double reshardSeconds(const Split &from, const Split &to,
                        double bytes) const {
    // The part both splits agree on stays local throughout.
    double local = bytes;
    for (auto [a, d] : llvm::enumerate(from))
      if (d != kNone && d == to[a])
        local /= mesh[a];
    double seconds = 0;
    for (auto [a, d] : llvm::enumerate(from)) {
      if (d == to[a] || d == kNone)
        continue; // the same split, or a local slice
      int64_t axis = a;
      Collective kind =
          to[a] == kNone ? Collective::AllGather : Collective::AllToAll;
      seconds += estimateCollective(kind, mesh[a], local, link({axis}));
    }
    return seconds;
  }

  /// Whether `loops` (per mesh axis) splits every dim it touches evenly.
  bool divides(const ShardingRule &rule, ArrayRef<Value> values,
               ArrayRef<int64_t> axisLoop) const {
    for (auto [i, dims] : llvm::enumerate(rule.dims)) {
      auto type = dyn_cast<RankedTensorType>(values[i].getType());
      if (!type)
        continue;
      for (auto [d, loop] : llvm::enumerate(dims)) {
        if (loop == ShardingRule::kWhole)
          continue;
        int64_t n = 1;
        for (auto [a, l] : llvm::enumerate(axisLoop))
          if (l == loop)
            n *= mesh[a];
        if (n == 1)
          continue;
        int64_t size = type.getDimSize(d);
        if (ShapedType::isDynamic(size) ? dynamicMultiple % n != 0
                                        : size % n != 0)
          return false;
      }
    }
    return true;
  }

  /// Every strategy of an op (or an argument: `rule` with one result).
  void enumerate(Node &node, ArrayRef<Value> values) const {
    const ShardingRule &rule = node.rule;
    int64_t numLoops = rule.loops.size();
    // Loops some tensor dim runs along: splitting another does nothing.
    llvm::SmallBitVector used(numLoops);
    for (ArrayRef<int64_t> dims : rule.dims)
      for (int64_t loop : dims)
        if (loop != ShardingRule::kWhole)
          used.set(loop);
    SmallVector<int64_t> axisLoop(mesh.size(), kNone);
    std::function<void(size_t)> visit = [&](size_t a) {
      if (a == mesh.size()) {
        if (divides(rule, values, axisLoop))
          node.strategies.push_back(makeStrategy(node, values, axisLoop));
        return;
      }
      axisLoop[a] = kNone;
      visit(a + 1);
      if (mesh[a] == 1)
        return;
      for (int64_t l = 0; l < numLoops; ++l) {
        if (!used.test(l))
          continue;
        axisLoop[a] = l;
        visit(a + 1);
      }
      axisLoop[a] = kNone;
    };
    visit(0);
  }

  Strategy makeStrategy(const Node &node, ArrayRef<Value> values,
                        ArrayRef<int64_t> axisLoop) const {
    const ShardingRule &rule = node.rule;
    Strategy s;
    s.axisLoop.assign(axisLoop.begin(), axisLoop.end());
    double bytes = 0;
    size_t numOperands = node.op ? node.op->getNumOperands() : 0;
    for (auto [i, dims] : llvm::enumerate(rule.dims)) {
      Split split(mesh.size(), kNone);
      for (auto [a, loop] : llvm::enumerate(axisLoop))
        for (auto [d, l] : llvm::enumerate(dims))
          if (loop != kNone && l == loop)
            split[a] = d;
      double b = this->bytes(values[i]) / parts(split, mesh);
      bytes += b;
      if (i >= numOperands)
        s.resultBytes.push_back(b);
      s.splits.push_back(std::move(split));
    }
    if (!node.op)
      return s;
    OpCost cost = estimateOp(node.op, costOptions);
    if (!cost.known || !cost.isKernel)
      return s;
    int64_t work = 1;
    SmallVector<int64_t> reduced;
    for (auto [a, loop] : llvm::enumerate(axisLoop)) {
      if (loop == kNone)
        continue;
      work *= mesh[a];
      if (rule.loops[loop] == utils::IteratorType::reduction)
        reduced.push_back(a);
    }
    OpCost local = cost;
    local.flops = cost.flops / work;
    local.bytes = bytes;
    s.seconds = estimateTime(local, device).seconds;
    if (!reduced.empty()) {
      double partial = 0;
      for (double b : s.resultBytes)
        partial += b;
      s.communicationS = estimateCollective(
          Collective::AllReduce, groupSize(reduced), partial, link(reduced));
      s.seconds += s.communicationS;
    }
    return s;
  }
};

/// The rule of an argument: one parallel loop per dim.
ShardingRule argumentRule(Value arg) {
  ShardingRule rule;
  SmallVector<int64_t> dims;
  auto type = cast<RankedTensorType>(arg.getType());
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(rule.addLoop());
  rule.dims.push_back(dims);
  return rule;
}

bool isPlanned(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() > 0;
}

/// "16GB", "512MiB", "1e9": bytes.
std::optional<double> parseBytes(StringRef text) {
  text = text.trim();
  static const std::pair<const char *, double> kSuffixes[] = {
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"B", 1}};
  double scale = 1;
  for (auto [suffix, s] : kSuffixes)
    if (text.consume_back(suffix)) {
      scale = s;
      break;
    }
  double x;
  if (text.trim().getAsDouble(x) || !(x > 0) || !std::isfinite(x))
    return std::nullopt;
  return x * scale;
}

std::string bytesText(double bytes) {
  if (bytes >= 1e9)
    return llvm::formatv("{0:f2} GB", bytes / 1e9).str();
  if (bytes >= 1e6)
    return llvm::formatv("{0:f2} MB", bytes / 1e6).str();
  if (bytes >= 1e3)
    return llvm::formatv("{0:f2} KB", bytes / 1e3).str();
  return llvm::formatv("{0:f0} B", bytes).str();
}

/// A use of a planned value by a paddle op: value `index` of node
/// `producer` read as operand `operand` of node `consumer`.
struct Use {
  int producer, index, consumer, operand;
  double bytes;
};

/// A strategy as the splits of the op's operands and results.
std::string describe(const Node &node, int j) {
  const Strategy &s = node.strategies[j];
  std::string text;
  unsigned numOperands = node.op->getNumOperands();
  for (auto [i, split] : llvm::enumerate(s.splits)) {
    Value v = i < numOperands ? node.op->getOperand(i)
                              : node.op->getResult(i - numOperands);
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (!text.empty())
      text += ", ";
    text += (i < numOperands ? "operand " + std::to_string(i)
                             : "result " + std::to_string(i - numOperands)) +
            " " + splitText(split, type.getRank());
  }
  return text;
}

/// For each op whose chosen strategy communicates (an all-reduce of
/// partial results, or a reshard of an operand or of a result for a
/// user), the cheapest other strategy with every other op as chosen, and
/// why the plan does not take it: more time, or more memory than the
/// limit.
SmallVector<Attribute>
explain(ArrayRef<Node> nodes, ArrayRef<int> chosen, ArrayRef<Use> uses,
        ArrayRef<Use> gathered, const Planner &planner, double limit,
        bool optimal, llvm::function_ref<double(ArrayRef<int>)> peakOf) {
  Split whole(planner.mesh.size(), kNone);
  auto local = [&](int v, int j, double *collectives) {
    const Strategy &s = nodes[v].strategies[j];
    double comm = s.communicationS, total = s.seconds;
    for (const Use &use : uses) {
      double t = 0;
      if (use.consumer == v)
        t = planner.reshardSeconds(nodes[use.producer]
                                       .strategies[chosen[use.producer]]
                                       .splits[use.index],
                                   s.splits[use.operand], use.bytes);
      else if (use.producer == v)
        t = planner.reshardSeconds(s.splits[use.index],
                                   nodes[use.consumer]
                                       .strategies[chosen[use.consumer]]
                                       .splits[use.operand],
                                   use.bytes);
      comm += t;
      total += t;
    }
    for (const Use &result : gathered)
      if (result.producer == v) {
        double t =
            planner.reshardSeconds(s.splits[result.index], whole, result.bytes);
        comm += t;
        total += t;
      }
    if (collectives)
      *collectives = comm;
    return total;
  };
  Builder b(nodes.front().op ? nodes.front().op->getContext()
                             : nodes.front().arg.getContext());
  SmallVector<Attribute> decisions;
  for (auto [v, node] : llvm::enumerate(nodes)) {
    if (!node.op || node.strategies.size() < 2)
      continue;
    double comm = 0;
    double mine = local(v, chosen[v], &comm);
    if (comm <= 0)
      continue;
    int best = -1;
    double bestSeconds = 0;
    for (size_t j = 0; j < node.strategies.size(); ++j) {
      if (static_cast<int>(j) == chosen[v])
        continue;
      double t = local(v, j, nullptr);
      if (best < 0 || t < bestSeconds) {
        best = j;
        bestSeconds = t;
      }
    }
    SmallVector<int> other(chosen.begin(), chosen.end());
    other[v] = best;
    double otherPeak = peakOf(other);
    std::string reason;
    if (limit > 0 && otherPeak > limit)
      reason = "memory: a peak of " + bytesText(otherPeak) +
               " per device, over the limit of " + bytesText(limit);
    else if (bestSeconds >= mine - 1e-12)
      reason = bestSeconds > mine + 1e-12
                   ? llvm::formatv("time: {0:F3} us more",
                                   (bestSeconds - mine) * 1e6)
                         .str()
                   : "the same time, and no less memory";
    else if (!optimal)
      reason = "the search stopped before it proved the plan optimal";
    else
      reason = "it fits no memory row of the plan";
    decisions.push_back(b.getDictionaryAttr({
        b.getNamedAttr("op",
                       b.getStringAttr(node.op->getName().getStringRef())),
        b.getNamedAttr("location",
                       b.getStringAttr(describeLocation(node.op->getLoc()))),
        b.getNamedAttr("chosen", b.getStringAttr(describe(node, chosen[v]))),
        b.getNamedAttr("collective_s", b.getF64FloatAttr(comm)),
        b.getNamedAttr("alternative", b.getStringAttr(describe(node, best))),
        b.getNamedAttr("alternative_extra_s",
                       b.getF64FloatAttr(bestSeconds - mine)),
        b.getNamedAttr("rejected_for", b.getStringAttr(reason)),
    }));
  }
  return decisions;
}

struct AutoShardPass : paddle::impl::AutoShardPassBase<AutoShardPass> {
  using AutoShardPassBase::AutoShardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          (!markedOnly ||
           func->hasAttr(PaddleDialect::AutoShardAttrHelper::getNameStr())))
        functions.push_back(func);
    if (functions.empty())
      return;

    // The cluster, its device and memory; else the module's target.
    std::optional<ClusterSpec> clusterSpec;
    if (!cluster.empty()) {
      auto spec = resolveClusterSpec(cluster);
      if (!spec) {
        module.emitError() << "paddle-auto-shard: "
                           << llvm::toString(spec.takeError());
        return signalPassFailure();
      }
      clusterSpec = *spec;
    }
    std::optional<DeviceSpec> device;
    if (clusterSpec) {
      auto spec = resolveDeviceSpec(clusterSpec->device);
      if (!spec) {
        module.emitError() << "paddle-auto-shard: cluster '"
                           << clusterSpec->name
                           << "': " << llvm::toString(spec.takeError());
        return signalPassFailure();
      }
      device = *spec;
    } else {
      device = getTargetOrDefault(module).getDeviceSpec();
      if (!device) {
        module.emitError("paddle-auto-shard: the module's target has no "
                         "device spec to price ops with");
        return signalPassFailure();
      }
    }
    double limit = clusterSpec ? clusterSpec->memoryBytesPerDevice : 0;
    if (!memoryLimit.empty()) {
      std::optional<double> bytes = parseBytes(memoryLimit);
      if (!bytes) {
        module.emitError() << "paddle-auto-shard: memory-limit='" << memoryLimit
                           << "' is not a size (e.g. 16GB, 512MiB, 1e9)";
        return signalPassFailure();
      }
      limit = *bytes;
    }

    if (dynamicDimMultiple < 1 || dynamicDimSize < 0) {
      module.emitError() << "paddle-auto-shard: dynamic-dim-multiple must be "
                            ">= 1 and dynamic-dim-size >= 0, got "
                         << dynamicDimMultiple << " and " << dynamicDimSize;
      return signalPassFailure();
    }
    FailureOr<shard::GridOp> grid = findOrCreateGrid(module, clusterSpec);
    if (failed(grid))
      return signalPassFailure();
    SmallVector<int64_t> shape((*grid).getShape());

    for (func::FuncOp func : functions) {
      Planner planner{
          shape, *device, clusterSpec ? &*clusterSpec : nullptr, {}};
      if (dynamicDimSize > 0) {
        planner.costOptions.dynamicDimSize = dynamicDimSize;
        planner.dynamicSize = dynamicDimSize;
      }
      planner.dynamicMultiple = dynamicDimMultiple;
      if (failed(plan(func, *grid, planner, limit)))
        return signalPassFailure();
      func->removeAttr(PaddleDialect::AutoShardAttrHelper::getNameStr());
    }
  }

  FailureOr<shard::GridOp>
  findOrCreateGrid(ModuleOp module,
                   const std::optional<ClusterSpec> &clusterSpec) {
    SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
    SmallVector<int64_t> shape;
    if (!mesh.empty()) {
      SmallVector<StringRef> parts;
      StringRef(mesh).split(parts, 'x');
      for (StringRef p : parts) {
        int64_t n;
        if (p.trim().getAsInteger(10, n) || n <= 0) {
          module.emitError() << "paddle-auto-shard: mesh='" << mesh
                             << "' is not a mesh shape (e.g. 8, 2x4)";
          return failure();
        }
        shape.push_back(n);
      }
    }
    shard::GridOp grid;
    if (grids.size() > 1) {
      module.emitError("paddle-auto-shard: the module has several meshes "
                       "(shard.grid); plan one at a time");
      return failure();
    }
    if (!grids.empty()) {
      grid = grids.front();
      if (!shape.empty() && !llvm::equal(grid.getShape(), shape)) {
        module.emitError() << "paddle-auto-shard: mesh='" << mesh
                           << "' differs from the module's @"
                           << grid.getSymName() << " of shape "
                           << llvm::join(
                                  llvm::map_range(grid.getShape(),
                                                  [](int64_t n) {
                                                    return std::to_string(n);
                                                  }),
                                  "x");
        return failure();
      }
      if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
        module.emitError("paddle-auto-shard: the mesh has a dynamic shape");
        return failure();
      }
    } else {
      if (shape.empty() && clusterSpec) {
        // The whole cluster: its nodes by the devices of a node.
        if (clusterSpec->nodes > 1)
          shape.push_back(clusterSpec->nodes);
        shape.push_back(clusterSpec->devicesPerNode);
      }
      if (shape.empty()) {
        module.emitError("paddle-auto-shard: no mesh: give mesh=SHAPE "
                         "(e.g. mesh=2x4), a cluster or a shard.grid in the "
                         "module");
        return failure();
      }
      OpBuilder b(module.getBodyRegion());
      grid = shard::GridOp::create(b, module.getLoc(), "mesh", shape);
    }
    int64_t devices = 1;
    for (int64_t n : grid.getShape())
      devices *= n;
    if (clusterSpec && devices > clusterSpec->numDevices()) {
      module.emitError() << "paddle-auto-shard: the mesh has " << devices
                         << " devices; cluster '" << clusterSpec->name
                         << "' has " << clusterSpec->numDevices();
      return failure();
    }
    return grid;
  }

  LogicalResult plan(func::FuncOp func, shard::GridOp grid, Planner &planner,
                     double limit) {
    // The user's shardings are constraints: collected, then taken out
    // (the plan annotates every value again).
    Constraints constraints;
    if (failed(collectConstraints(func, grid, constraints)))
      return failure();

    // Nodes: arguments, then paddle ops in order.
    std::vector<Node> nodes;
    DenseMap<Value, std::pair<int, int>> producer; // value -> node, value#
    for (BlockArgument arg : func.getArguments()) {
      if (!isPlanned(arg))
        continue;
      Node node;
      node.arg = arg;
      node.rule = argumentRule(arg);
      planner.enumerate(node, {arg});
      if (failed(constrain(node, constraints)))
        return failure();
      producer[arg] = {static_cast<int>(nodes.size()), 0};
      nodes.push_back(std::move(node));
    }
    SmallVector<Operation *> order;
    WalkResult walk = func.walk([&](Operation *op) {
      if (op == func)
        return WalkResult::advance();
      order.push_back(op);
      if (!isa<PaddleDialect>(op->getDialect()))
        return WalkResult::advance();
      if (op->getParentOp() != func) {
        op->emitOpError("paddle-auto-shard: paddle ops inside regions are "
                        "not planned yet");
        return WalkResult::interrupt();
      }
      Node node;
      node.op = op;
      node.rule = getShardingRule(op);
      SmallVector<Value> values(op->getOperands());
      llvm::append_range(values, op->getResults());
      planner.enumerate(node, values);
      if (failed(constrain(node, constraints)))
        return WalkResult::interrupt();
      for (OpResult r : op->getResults())
        producer[r] = {
            static_cast<int>(nodes.size()),
            static_cast<int>(op->getNumOperands() + r.getResultNumber())};
      nodes.push_back(std::move(node));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // The objective in microseconds (the solver's tolerances are absolute),
    // plus 1 ns per MB held: among plans of the same time, the least
    // memory.
    constexpr double kScale = 1e6, kPerByte = 1e-15 * kScale;
    IlpProblem ilp;
    for (Node &node : nodes) {
      node.column = ilp.columns.size();
      SmallVector<std::pair<int, double>> one;
      for (const Strategy &s : node.strategies) {
        double bytes = 0;
        for (double b : s.resultBytes)
          bytes += b;
        one.push_back(
            {ilp.addBinary(s.seconds * kScale + bytes * kPerByte), 1.0});
      }
      ilp.addRow(one, 1, 1);
    }
    // Edges: each use of a planned value by a paddle op.
    int edges = 0;
    std::vector<Use> uses;
    for (auto [v, node] : llvm::enumerate(nodes)) {
      if (!node.op)
        continue;
      for (OpOperand &operand : node.op->getOpOperands()) {
        auto it = producer.find(operand.get());
        if (it == producer.end())
          continue;
        auto [u, index] = it->second;
        Node &from = nodes[u];
        double bytes = planner.bytes(operand.get());
        unsigned k = operand.getOperandNumber();
        uses.push_back(
            {u, index, static_cast<int>(v), static_cast<int>(k), bytes});
        size_t nu = from.strategies.size(), nv = node.strategies.size();
        std::vector<double> cost(nu * nv);
        bool any = false;
        for (size_t i = 0; i < nu; ++i)
          for (size_t j = 0; j < nv; ++j) {
            cost[i * nv + j] =
                kScale *
                planner.reshardSeconds(from.strategies[i].splits[index],
                                       node.strategies[j].splits[k], bytes);
            any |= cost[i * nv + j] > 0;
          }
        if (!any)
          continue;
        ++edges;
        if (nu == 1 || nv == 1) {
          // A fixed end: the cost falls on the other end's strategies.
          for (size_t i = 0; i < nu; ++i)
            for (size_t j = 0; j < nv; ++j) {
              int column = nu == 1 ? node.column + j : from.column + i;
              ilp.columns[column].cost += cost[i * nv + j];
            }
          continue;
        }
        std::vector<SmallVector<std::pair<int, double>>> rows(nu + nv);
        for (size_t i = 0; i < nu; ++i)
          rows[i].push_back({from.column + static_cast<int>(i), -1.0});
        for (size_t j = 0; j < nv; ++j)
          rows[nu + j].push_back({node.column + static_cast<int>(j), -1.0});
        for (size_t i = 0; i < nu; ++i)
          for (size_t j = 0; j < nv; ++j) {
            int e = ilp.addContinuous(0, 1, cost[i * nv + j]);
            rows[i].push_back({e, 1.0});
            rows[nu + j].push_back({e, 1.0});
          }
        for (auto &row : rows)
          ilp.addRow(row, 0, 0);
      }
    }

    // The runtime returns every result whole: a split result is gathered
    // after the call, priced on its producer's strategies.
    std::vector<Use> gathered;
    if (gatherResults)
      func.walk([&](func::ReturnOp ret) {
        for (Value v : ret.getOperands())
          if (auto it = producer.find(v); it != producer.end())
            gathered.push_back({it->second.first, it->second.second, -1, -1,
                                planner.bytes(v)});
      });
    Split whole(planner.mesh.size(), kNone);
    for (const Use &result : gathered)
      for (auto [i, s] : llvm::enumerate(nodes[result.producer].strategies))
        ilp.columns[nodes[result.producer].column + i].cost +=
            kScale *
            planner.reshardSeconds(s.splits[result.index], whole, result.bytes);

    // Memory: the values alive at each op. Arguments live throughout.
    DenseMap<Operation *, int> position;
    for (auto [i, op] : llvm::enumerate(order))
      position[op] = i;
    struct Live {
      int node, index, first, last;
    };
    std::vector<Live> live;
    for (auto &[v, where] : producer) {
      Live l{where.first, where.second, 0, static_cast<int>(order.size())};
      if (Operation *def = v.getDefiningOp()) {
        l.first = l.last = position[def];
        for (Operation *user : v.getUsers()) {
          Operation *top = func.getBody().front().findAncestorOpInBlock(*user);
          if (top)
            l.last = std::max(l.last, position[top]);
        }
      }
      live.push_back(l);
    }
    auto memoryRows = [&](IlpProblem &problem, int bound) {
      // Peaks come right after a definition: one row per op that defines
      // a planned value.
      std::vector<int> points;
      for (const Live &l : live)
        if (l.first > 0 || nodes[l.node].op)
          points.push_back(l.first);
      llvm::sort(points);
      points.erase(std::unique(points.begin(), points.end()), points.end());
      if (points.empty())
        points.push_back(0);
      for (int t : points) {
        std::map<int, double> terms;
        for (const Live &l : live) {
          if (t < l.first || t > l.last)
            continue;
          const Node &node = nodes[l.node];
          size_t numOperands = node.op ? node.op->getNumOperands() : 0;
          for (auto [i, s] : llvm::enumerate(node.strategies))
            terms[node.column + i] += s.resultBytes[l.index - numOperands];
        }
        SmallVector<std::pair<int, double>> row(terms.begin(), terms.end());
        if (bound >= 0) {
          row.push_back({bound, -1.0});
          problem.addRow(row, -IlpProblem::kInf, 0);
        } else {
          problem.addRow(row, -IlpProblem::kInf, limit);
        }
      }
    };
    size_t baseRows = ilp.rows.size();
    if (limit > 0)
      memoryRows(ilp, -1);

    IlpResult result = solveIlp(ilp, timeLimit);
    if (result.status == IlpStatus::Infeasible) {
      // The smallest peak any plan reaches: minimize it instead.
      IlpProblem least = ilp;
      least.rows.resize(baseRows);
      for (auto &c : least.columns)
        c.cost = 0;
      int bound = least.addContinuous(0, IlpProblem::kInf, 1.0);
      memoryRows(least, bound);
      IlpResult smallest = solveIlp(least, timeLimit);
      InFlightDiagnostic diag = func.emitError();
      diag << "paddle-auto-shard: no plan of @" << func.getName() << " fits in "
           << bytesText(limit) << " per device on mesh " << meshText(grid);
      if (smallest.status == IlpStatus::Optimal ||
          smallest.status == IlpStatus::Feasible)
        diag << "; the smallest peak memory any plan reaches is "
             << bytesText(smallest.objective)
             << (smallest.status == IlpStatus::Optimal ? ""
                                                       : " (not proven least)");
      return failure();
    }
    if (result.status == IlpStatus::NoSolution)
      return func.emitError()
             << "paddle-auto-shard: no plan of @" << func.getName()
             << " found within " << timeLimit << " s (time-limit)";
    if (result.status == IlpStatus::Feasible)
      func.emitWarning() << "paddle-auto-shard: the plan of @" << func.getName()
                         << " is the best found in " << timeLimit
                         << " s, not proven optimal: "
                         << llvm::formatv("{0:e3}", result.objective / kScale)
                         << " s predicted, no plan below "
                         << llvm::formatv("{0:e3}", result.bound / kScale)
                         << " s";

    // The chosen strategies.
    std::vector<int> chosen(nodes.size(), 0);
    for (auto [v, node] : llvm::enumerate(nodes))
      for (size_t i = 0; i < node.strategies.size(); ++i)
        if (result.values[node.column + i] > 0.5)
          chosen[v] = i;
    auto peakOf = [&](ArrayRef<int> choice) {
      double peak = 0;
      for (const Live &at : live) {
        double bytes = 0;
        for (const Live &l : live)
          if (at.first >= l.first && at.first <= l.last) {
            const Node &node = nodes[l.node];
            size_t numOperands = node.op ? node.op->getNumOperands() : 0;
            bytes += node.strategies[choice[l.node]]
                         .resultBytes[l.index - numOperands];
          }
        peak = std::max(peak, bytes);
      }
      return peak;
    };
    double peak = peakOf(chosen);
    // The predicted time, and its part in collectives (partial results
    // and reshards).
    double predicted = 0, communication = 0;
    for (auto [v, node] : llvm::enumerate(nodes)) {
      predicted += node.strategies[chosen[v]].seconds;
      communication += node.strategies[chosen[v]].communicationS;
    }
    double compute = predicted - communication;
    for (const Use &use : uses)
      communication +=
          planner.reshardSeconds(nodes[use.producer]
                                     .strategies[chosen[use.producer]]
                                     .splits[use.index],
                                 nodes[use.consumer]
                                     .strategies[chosen[use.consumer]]
                                     .splits[use.operand],
                                 use.bytes);
    for (const Use &result : gathered)
      communication +=
          planner.reshardSeconds(nodes[result.producer]
                                     .strategies[chosen[result.producer]]
                                     .splits[result.index],
                                 whole, result.bytes);
    predicted = compute + communication;
    Builder b(func.getContext());
    SmallVector<Attribute> decisions =
        explain(nodes, chosen, uses, gathered, planner, limit,
                result.status == IlpStatus::Optimal, peakOf);
    SmallVector<Attribute> argumentBytes(func.getNumArguments(),
                                         b.getF64FloatAttr(0));
    for (auto [v, node] : llvm::enumerate(nodes))
      if (!node.op)
        argumentBytes[cast<BlockArgument>(node.arg).getArgNumber()] =
            b.getF64FloatAttr(node.strategies[chosen[v]].resultBytes[0]);
    annotate(func, grid, nodes, chosen);

    int64_t numStrategies = 0;
    for (const Node &node : nodes)
      numStrategies += node.strategies.size();
    func->setAttr(
        PaddleDialect::PlanAttrHelper::getNameStr(),
        b.getDictionaryAttr({
            b.getNamedAttr("predicted_s", b.getF64FloatAttr(predicted)),
            b.getNamedAttr("communication_s", b.getF64FloatAttr(communication)),
            b.getNamedAttr("peak_bytes", b.getF64FloatAttr(peak)),
            b.getNamedAttr("argument_bytes", b.getArrayAttr(argumentBytes)),
            b.getNamedAttr("decisions", b.getArrayAttr(decisions)),
            b.getNamedAttr("memory_limit_bytes", b.getF64FloatAttr(limit)),
            b.getNamedAttr("status",
                           b.getStringAttr(result.status == IlpStatus::Optimal
                                               ? "optimal"
                                               : "not proven optimal")),
            b.getNamedAttr("solver", b.getStringAttr(ilpSolverName())),
            b.getNamedAttr("solve_s", b.getF64FloatAttr(result.seconds)),
            b.getNamedAttr("nodes", b.getI64IntegerAttr(nodes.size())),
            b.getNamedAttr("strategies", b.getI64IntegerAttr(numStrategies)),
            b.getNamedAttr("edges", b.getI64IntegerAttr(edges)),
            b.getNamedAttr("device", b.getStringAttr(planner.device.name)),
            b.getNamedAttr("cluster",
                           b.getStringAttr(planner.cluster
                                               ? planner.cluster->name
                                               : std::string())),
        }));
    return success();
  }

  struct Constraint {
    Split split;
    Location loc;
  };
  struct Constraints {
    /// A value's split where it is defined (an argument or an op result).
    DenseMap<Value, Constraint> definitions;
    /// The split a paddle op reads an operand with.
    DenseMap<OpOperand *, Constraint> uses;
  };

  /// The user's `shard.shard` annotations of `func` as constraints; each is
  /// erased, except one read by an op the plan does not cover (a return).
  LogicalResult collectConstraints(func::FuncOp func, shard::GridOp grid,
                                   Constraints &constraints) {
    SmallVector<shard::ShardOp> annotations;
    func.walk([&](shard::ShardOp op) { annotations.push_back(op); });
    ArrayRef<int64_t> shape = grid.getShape();
    for (shard::ShardOp op : annotations) {
      shard::Sharding sharding(op.getSharding());
      if (sharding.getGridAttr() &&
          sharding.getGridAttr().getValue() != grid.getSymName())
        return op.emitOpError()
               << "names mesh " << sharding.getGridAttr()
               << "; paddle-auto-shard plans on @" << grid.getSymName();
      if (!sharding.getStaticHaloSizes().empty() ||
          !sharding.getStaticShardedDimsOffsets().empty() ||
          !sharding.getDynamicHaloSizes().empty() ||
          !sharding.getDynamicShardedDimsOffsets().empty())
        return op.emitOpError("has halos or explicit shard offsets, which "
                              "paddle-auto-shard does not plan with");
      Split split(shape.size(), kNone);
      for (auto [d, axes] : llvm::enumerate(sharding.getSplitAxes())) {
        int64_t previous = -1;
        for (shard::GridAxis a : axes.asArrayRef()) {
          if (a < 0 || a >= static_cast<int64_t>(shape.size()))
            return op.emitOpError()
                   << "splits dim " << d << " over mesh axis " << a
                   << ", which @" << grid.getSymName() << " does not have";
          if (a <= previous)
            return op.emitOpError()
                   << "splits dim " << d << " over mesh axes out of order; "
                   << "paddle-auto-shard plans splits major axis first";
          previous = a;
          if (shape[a] > 1)
            split[a] = d;
        }
      }
      Value source = op.getSrc();
      Constraint c{split, op.getLoc()};
      if (!op.getAnnotateForUsers()) {
        auto [it, inserted] = constraints.definitions.try_emplace(source, c);
        if (!inserted && it->second.split != split)
          return op.emitOpError("asks for another split of a value that an "
                                "earlier annotation already splits");
        op.getResult().replaceAllUsesWith(source);
        op.erase();
        continue;
      }
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        if (!isa<PaddleDialect>(use.getOwner()->getDialect()))
          continue;
        constraints.uses.try_emplace(&use, c);
        use.set(source);
      }
      if (op->use_empty())
        op.erase();
    }
    return success();
  }

  /// Keeps the strategies of `node` that split its values as the user's
  /// annotations ask.
  LogicalResult constrain(Node &node, const Constraints &constraints) {
    SmallVector<std::tuple<size_t, Constraint, std::string>> asks;
    if (!node.op) {
      if (auto it = constraints.definitions.find(node.arg);
          it != constraints.definitions.end())
        asks.push_back({0, it->second, "the argument"});
    } else {
      for (OpOperand &operand : node.op->getOpOperands())
        if (auto it = constraints.uses.find(&operand);
            it != constraints.uses.end())
          asks.push_back(
              {operand.getOperandNumber(), it->second,
               "operand " + std::to_string(operand.getOperandNumber())});
      for (OpResult r : node.op->getResults())
        if (auto it = constraints.definitions.find(r);
            it != constraints.definitions.end())
          asks.push_back({node.op->getNumOperands() + r.getResultNumber(),
                          it->second,
                          "result " + std::to_string(r.getResultNumber())});
    }
    for (auto &ask : asks) {
      size_t index = std::get<0>(ask);
      const Constraint &c = std::get<1>(ask);
      const std::string &what = std::get<2>(ask);
      llvm::erase_if(node.strategies, [&](const Strategy &s) {
        return s.splits[index] != c.split;
      });
      if (node.strategies.empty()) {
        Value v =
            node.op
                ? (index < node.op->getNumOperands()
                       ? node.op->getOperand(index)
                       : node.op->getResult(index - node.op->getNumOperands()))
                : node.arg;
        InFlightDiagnostic diag = emitError(c.loc);
        diag << "paddle-auto-shard: the split "
             << splitText(c.split,
                          cast<RankedTensorType>(v.getType()).getRank())
             << " asked here cannot be taken by " << what << " of ";
        if (node.op)
          diag << "'" << node.op->getName() << "'";
        else
          diag << "the function";
        diag << " (a dim it keeps whole, or a size the mesh axes do not "
                "divide)";
        if (node.op)
          diag.attachNote(node.op->getLoc()) << "the op";
        return failure();
      }
    }
    return success();
  }

  std::string meshText(shard::GridOp grid) {
    return llvm::join(
        llvm::map_range(grid.getShape(),
                        [](int64_t n) { return std::to_string(n); }),
        "x");
  }

  /// The plan as annotations: arguments and results split as their
  /// strategies say, operands read as their users' strategies say.
  void annotate(func::FuncOp func, shard::GridOp grid, ArrayRef<Node> nodes,
                ArrayRef<int> chosen) {
    MLIRContext *ctx = func.getContext();
    auto gridRef = FlatSymbolRefAttr::get(grid.getSymNameAttr());
    auto sharding = [&](const Split &split, int64_t rank) {
      SmallVector<shard::GridAxesAttr> axes;
      for (int64_t d = 0; d < rank; ++d) {
        SmallVector<shard::GridAxis> dimAxes;
        for (auto [a, dim] : llvm::enumerate(split))
          if (dim == d)
            dimAxes.push_back(a);
        axes.push_back(shard::GridAxesAttr::get(ctx, dimAxes));
      }
      // Whole: one empty entry, not none (upstream prints `split_axes = []`
      // for none, which its parser rejects).
      while (axes.size() > 1 && axes.back().empty())
        axes.pop_back();
      return shard::Sharding::get(gridRef, axes);
    };
    auto rank = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    OpBuilder b(ctx);
    // Arguments in order at the top.
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    for (auto [v, node] : llvm::enumerate(nodes)) {
      const Strategy &s = node.strategies[chosen[v]];
      if (!node.op) {
        Value arg = node.arg;
        Value sh = shard::ShardingOp::create(top, arg.getLoc(),
                                             sharding(s.splits[0], rank(arg)));
        auto def = shard::ShardOp::create(top, arg.getLoc(), arg, sh,
                                          /*annotate_for_users=*/false);
        arg.replaceAllUsesExcept(def.getResult(), def);
        continue;
      }
      Operation *op = node.op;
      unsigned numOperands = op->getNumOperands();
      for (OpOperand &operand : op->getOpOperands()) {
        Value in = operand.get();
        if (!isPlanned(in))
          continue;
        b.setInsertionPoint(op);
        Value sh = shard::ShardingOp::create(
            b, op->getLoc(),
            sharding(s.splits[operand.getOperandNumber()], rank(in)));
        operand.set(shard::ShardOp::create(b, op->getLoc(), in, sh,
                                           /*annotate_for_users=*/true));
      }
      b.setInsertionPointAfter(op);
      for (OpResult r : op->getResults()) {
        if (!isPlanned(r))
          continue;
        Value sh = shard::ShardingOp::create(
            b, op->getLoc(),
            sharding(s.splits[numOperands + r.getResultNumber()], rank(r)));
        auto def = shard::ShardOp::create(b, op->getLoc(), r, sh,
                                          /*annotate_for_users=*/false);
        r.replaceAllUsesExcept(def.getResult(), def);
      }
    }
  }
};

} // namespace
