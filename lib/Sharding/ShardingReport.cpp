//===- ShardingReport.cpp - how a module is split, and its collectives ----===//
//
// See Passes.td. The report partitions a clone, so that what it lists is
// what paddle-partition makes of the module.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "dialects/Paddle/IR/Target.h"
#include "paddle/CostModel/CostModel.h"
#include "paddle/Execution/OutputFile.h"
#include "paddle/Support/Location.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#define DEBUG_TYPE "paddle-sharding-report"

namespace mlir::paddle {
#define GEN_PASS_DEF_SHARDINGREPORTPASS
#include "paddle/Sharding/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

namespace {

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// "[[0], []]" from a paddle.sharding attribute.
std::string splitText(Attribute attr) {
  std::string s = "[";
  auto dims = dyn_cast_or_null<ArrayAttr>(attr);
  for (auto [d, axes] : llvm::enumerate(dims ? dims : ArrayAttr())) {
    s += d ? ", [" : "[";
    for (auto [k, a] :
         llvm::enumerate(cast<DenseI64ArrayAttr>(axes).asArrayRef()))
      s += (k ? ", " : "") + std::to_string(a);
    s += "]";
  }
  return s + "]";
}

/// The full (unsplit) type of a per-device `local` type split as `attr`.
Type globalType(Type local, Attribute attr, ArrayRef<int64_t> mesh) {
  auto t = dyn_cast<RankedTensorType>(local);
  auto dims = dyn_cast_or_null<ArrayAttr>(attr);
  if (!t || !dims)
    return local;
  SmallVector<int64_t> shape(t.getShape());
  for (auto [d, axes] : llvm::enumerate(dims))
    for (int64_t a : cast<DenseI64ArrayAttr>(axes).asArrayRef())
      if (!ShapedType::isDynamic(shape[d]))
        shape[d] *= mesh[a];
  return t.clone(shape);
}

struct Collective {
  std::string kind, axes, location;
  double bytes = 0;
  std::optional<double> seconds;
};

struct ShardingReportPass
    : paddle::impl::ShardingReportPassBase<ShardingReportPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildPartition(pm);
    pm.getDependentDialects(registry);
  }

  static void buildPartition(OpPassManager &pm) {
    paddle::AutoShardPassOptions autoShard;
    autoShard.markedOnly = true;
    pm.addPass(paddle::createAutoShardPass(autoShard));
    pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation());
    pm.addPass(paddle::createCompleteShardingPass());
    pm.addNestedPass<func::FuncOp>(shard::createPartition());
  }

  /// A plan attribute as JSON.
  static llvm::json::Object toJson(DictionaryAttr dict) {
    llvm::json::Object out;
    for (NamedAttribute entry : dict)
      out[entry.getName().str()] = toJson(entry.getValue());
    return out;
  }
  static llvm::json::Value toJson(Attribute attr) {
    if (auto f = dyn_cast<FloatAttr>(attr))
      return f.getValueAsDouble();
    if (auto i = dyn_cast<IntegerAttr>(attr))
      return i.getInt();
    if (auto t = dyn_cast<StringAttr>(attr))
      return t.getValue().str();
    if (auto d = dyn_cast<DictionaryAttr>(attr))
      return toJson(d);
    if (auto a = dyn_cast<ArrayAttr>(attr)) {
      llvm::json::Array list;
      for (Attribute element : a)
        list.push_back(toJson(element));
      return list;
    }
    return nullptr;
  }

  void runOnOperation() override {
    ModuleOp original = getOperation();
    llvm::raw_ostream &os = llvm::outs();
    if (!paddle::isShardedModule(original)) {
      os << "sharding report: the module has no device mesh (shard.grid)\n";
      return;
    }
    // A copy, partitioned by a pass manager of its own (a dynamic pipeline
    // runs only on ops nested in this one).
    OwningOpRef<ModuleOp> clone = original.clone();
    PassManager pm(&getContext());
    buildPartition(pm);
    if (failed(pm.run(*clone)))
      return signalPassFailure();
    std::optional<paddle::DeviceSpec> spec =
        paddle::getTargetOrDefault(original).getDeviceSpec();

    llvm::json::Array functions;
    SymbolTableCollection symbols;
    for (auto func : clone->getOps<func::FuncOp>()) {
      auto meshAttr = func->getAttrOfType<DenseI64ArrayAttr>(
          paddle::PaddleDialect::MeshAttrHelper::getNameStr());
      if (func.isExternal() || !meshAttr)
        continue;
      ArrayRef<int64_t> mesh = meshAttr.asArrayRef();
      StringRef key = paddle::PaddleDialect::ShardingAttrHelper::getNameStr();
      os << "func @" << func.getName() << " on mesh [";
      llvm::interleaveComma(mesh, os);
      os << "]\n";
      llvm::json::Object planJson;
      if (auto plan = func->getAttrOfType<DictionaryAttr>(
              paddle::PaddleDialect::PlanAttrHelper::getNameStr())) {
        auto number = [&](StringRef key) {
          auto f = plan.getAs<FloatAttr>(key);
          return f ? f.getValueAsDouble() : 0.0;
        };
        auto integer = [&](StringRef key) {
          auto i = plan.getAs<IntegerAttr>(key);
          return i ? i.getInt() : int64_t(0);
        };
        auto text = [&](StringRef key) {
          auto t = plan.getAs<StringAttr>(key);
          return t ? t.getValue().str() : std::string();
        };
        os << llvm::formatv("  auto-sharded plan: predicted {0:F3} us, peak "
                            "memory {1:F0} B per device",
                            number("predicted_s") * 1e6, number("peak_bytes"));
        if (number("memory_limit_bytes") > 0)
          os << llvm::formatv(" (limit {0:F0} B)",
                              number("memory_limit_bytes"));
        os << llvm::formatv(
            "\n    {0} {1} in {2:F3} s: {3} nodes, {4} "
            "strategies, {5} edges; priced on {6}{7}\n",
            text("solver"), text("status"), number("solve_s"), integer("nodes"),
            integer("strategies"), integer("edges"), text("device"),
            text("cluster").empty() ? std::string()
                                    : " in cluster " + text("cluster"));
        if (auto decisions = plan.getAs<ArrayAttr>("decisions")) {
          for (auto d : decisions.getAsRange<DictionaryAttr>()) {
            auto str = [&](StringRef key) {
              auto t = d.getAs<StringAttr>(key);
              return t ? t.getValue().str() : std::string();
            };
            auto num = [&](StringRef key) {
              auto f = d.getAs<FloatAttr>(key);
              return f ? f.getValueAsDouble() : 0.0;
            };
            os << llvm::formatv("    {0} at {1}: collectives {2:F3} us with "
                                "{3}\n      rather than {4}: {5}\n",
                                str("op"), str("location"),
                                num("collective_s") * 1e6, str("chosen"),
                                str("alternative"), str("rejected_for"));
          }
        }
        planJson = toJson(plan);
      }
      llvm::json::Array values;
      auto value = [&](StringRef what, unsigned i, Type local,
                       Attribute split) {
        Type full = globalType(local, split, mesh);
        os << llvm::formatv("  {0,-9} {1,-2} {2,-26} split {3,-16} per device "
                            "{4}\n",
                            what, i, typeText(full), splitText(split),
                            typeText(local));
        values.push_back(llvm::json::Object{{"kind", what},
                                            {"index", i},
                                            {"type", typeText(full)},
                                            {"split", splitText(split)},
                                            {"local_type", typeText(local)}});
      };
      FunctionType type = func.getFunctionType();
      for (unsigned i = 0; i < type.getNumInputs(); ++i)
        value("argument", i, type.getInput(i), func.getArgAttr(i, key));
      for (unsigned i = 0; i < type.getNumResults(); ++i)
        value("result", i, type.getResult(i), func.getResultAttr(i, key));

      std::vector<Collective> collectives;
      double total = 0;
      func.walk([&](Operation *op) {
        Collective c;
        ArrayRef<shard::GridAxis> axes;
        Value buffer;
        std::optional<paddle::Collective> kind;
        if (auto o = dyn_cast<shard::AllReduceOp>(op)) {
          c.kind = "all_reduce";
          axes = o.getGridAxes();
          buffer = o.getInput();
          kind = paddle::Collective::AllReduce;
        } else if (auto o = dyn_cast<shard::AllGatherOp>(op)) {
          c.kind = "all_gather";
          axes = o.getGridAxes();
          buffer = o.getResult();
          kind = paddle::Collective::AllGather;
        } else if (auto o = dyn_cast<shard::ReduceScatterOp>(op)) {
          c.kind = "reduce_scatter";
          axes = o.getGridAxes();
          buffer = o.getInput();
          kind = paddle::Collective::ReduceScatter;
        } else if (auto o = dyn_cast<shard::AllToAllOp>(op)) {
          c.kind = "all_to_all";
          axes = o.getGridAxes();
          buffer = o.getInput();
          kind = paddle::Collective::AllToAll;
        } else if (auto o = dyn_cast<shard::AllSliceOp>(op)) {
          c.kind = "all_slice (no communication)";
          axes = o.getGridAxes();
          buffer = o.getInput();
        } else {
          return;
        }
        c.axes = "[";
        int64_t devices = 1;
        for (auto [k, a] : llvm::enumerate(axes)) {
          c.axes += (k ? ", " : "") + std::to_string(a);
          devices *= mesh[a];
        }
        c.axes += "]";
        auto t = cast<RankedTensorType>(buffer.getType());
        c.bytes = t.hasStaticShape()
                      ? double(t.getNumElements()) *
                            double((t.getElementTypeBitWidth() + 7) / 8)
                      : 0;
        c.location = paddle::describeLocation(op->getLoc());
        if (kind && spec)
          c.seconds =
              paddle::estimateCollective(*kind, devices, c.bytes, *spec);
        if (c.seconds)
          total += *c.seconds;
        collectives.push_back(c);
      });
      os << "  " << collectives.size() << " collective"
         << (collectives.size() == 1 ? "" : "s") << ":\n";
      llvm::json::Array list;
      for (const Collective &c : collectives) {
        os << llvm::formatv("    {0,-28} axes {1,-8} {2,12:F0} B  {3}", c.kind,
                            c.axes, c.bytes, c.location);
        if (c.seconds)
          os << llvm::formatv("  {0:F3} us", *c.seconds * 1e6);
        os << "\n";
        llvm::json::Object o{{"kind", c.kind},
                             {"axes", c.axes},
                             {"bytes", c.bytes},
                             {"location", c.location}};
        if (c.seconds)
          o["predicted_s"] = *c.seconds;
        list.push_back(std::move(o));
      }
      if (spec)
        os << llvm::formatv("  predicted collective time on {0}: {1:F3} us\n",
                            spec->name, total * 1e6);
      functions.push_back(
          llvm::json::Object{{"name", func.getName().str()},
                             {"mesh", llvm::json::Array(mesh)},
                             {"values", std::move(values)},
                             {"collectives", std::move(list)},
                             {"predicted_collective_s", total}});
      if (!planJson.empty())
        (*functions.back().getAsObject())["plan"] = std::move(planJson);
    }
    os.flush();
    if (json.empty())
      return;
    llvm::json::Value document =
        llvm::json::Object{{"functions", std::move(functions)}};
    if (llvm::Error err =
            paddle::writeOutputFile(json, [&](llvm::raw_ostream &out) {
              out << llvm::formatv("{0:2}", document) << "\n";
            })) {
      original.emitError() << "cannot write the sharding report to '" << json
                           << "': " << llvm::toString(std::move(err));
      signalPassFailure();
    }
  }
};

} // namespace
