//===- MemoryReport.cpp - print the plan of paddle-plan-memory ------------===//
//
// Reads what paddle-plan-memory recorded in the IR (`paddle.memory` on each
// function, `paddle.buffer` on each planned view, `paddle.unplanned` on each
// remaining alloc) and prints it for people (a table on stdout) and for the
// picture tool (JSON).
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Execution/OutputFile.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "paddle-print-memory-plan"

namespace mlir::paddle {
#define GEN_PASS_DEF_PRINTMEMORYPLANPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

namespace {

int64_t intField(DictionaryAttr dict, StringRef name) {
  if (auto value = dict.getAs<IntegerAttr>(name))
    return value.getInt();
  return 0;
}

std::string print(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

std::string print(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

std::string ratio(int64_t numerator, int64_t denominator) {
  if (denominator == 0)
    return "-";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.3f", double(numerator) / double(denominator));
  return text;
}

struct PrintMemoryPlanPass
    : paddle::impl::PrintMemoryPlanPassBase<PrintMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::json::Array functions;
    if (llvm::none_of(module.getOps<func::FuncOp>(), [](func::FuncOp func) {
          return func->hasAttr(
              paddle::PaddleDialect::MemoryAttrHelper::getNameStr());
        })) {
      module.emitError() << "no memory plan to report: run paddle-plan-memory "
                            "first (or use the paddle-memory-report pipeline "
                            "on a paddle-level model)";
      return signalPassFailure();
    }
    llvm::raw_ostream &os = llvm::outs();
    os << llvm::format("%-24s %12s %12s %12s %9s %9s %8s %8s %10s\n",
                       "function", "naive B", "planned B", "lower bd B",
                       "pl/lb", "nv/pl", "planned", "in-place", "unplanned");
    SmallVector<std::string> reasons;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto plan = func->getAttrOfType<DictionaryAttr>(
          paddle::PaddleDialect::MemoryAttrHelper::getNameStr());
      if (!plan)
        continue;
      int64_t naive = intField(plan, "naive");
      int64_t planned = intField(plan, "planned");
      int64_t lowerBound = intField(plan, "lower_bound");
      int64_t buffers = intField(plan, "buffers");
      int64_t inPlace = intField(plan, "in_place");
      int64_t unplanned = intField(plan, "unplanned");
      os << llvm::format("%-24s %12lld %12lld %12lld %9s %9s %8lld %8lld "
                         "%10lld\n",
                         ("@" + func.getName()).str().c_str(), (long long)naive,
                         (long long)planned, (long long)lowerBound,
                         ratio(planned, lowerBound).c_str(),
                         ratio(naive, planned).c_str(), (long long)buffers,
                         (long long)inPlace, (long long)unplanned);

      llvm::json::Array bufferList, unplannedList;
      func.walk([&](memref::ViewOp view) {
        auto info = view->getAttrOfType<DictionaryAttr>(
            paddle::PaddleDialect::BufferAttrHelper::getNameStr());
        if (!info)
          return;
        llvm::json::Object buffer{{"id", intField(info, "id")},
                                  {"type", print(view.getType())},
                                  {"size", intField(info, "size")},
                                  {"offset", intField(info, "offset")},
                                  {"first", intField(info, "first")},
                                  {"last", intField(info, "last")},
                                  {"loc", print(view.getLoc())}};
        if (auto writer = info.getAs<StringAttr>("writer"))
          buffer["writer"] = writer.getValue().str();
        if (auto of = info.getAs<IntegerAttr>("in_place_of"))
          buffer["in_place_of"] = of.getInt();
        bufferList.push_back(std::move(buffer));
      });
      func.walk([&](memref::AllocOp alloc) {
        auto reason = alloc->getAttrOfType<StringAttr>(
            paddle::PaddleDialect::UnplannedAttrHelper::getNameStr());
        if (!reason)
          return;
        reasons.push_back(
            "  @" + func.getName().str() + ": " + print(alloc.getType()) +
            " at " + print(alloc.getLoc()) + ": " + reason.getValue().str());
        unplannedList.push_back(
            llvm::json::Object{{"type", print(alloc.getType())},
                               {"loc", print(alloc.getLoc())},
                               {"reason", reason.getValue().str()}});
      });
      functions.push_back(
          llvm::json::Object{{"name", func.getName().str()},
                             {"naive", naive},
                             {"planned", planned},
                             {"lower_bound", lowerBound},
                             {"positions", intField(plan, "positions")},
                             {"in_place", inPlace},
                             {"buffers", std::move(bufferList)},
                             {"unplanned", std::move(unplannedList)}});
    }
    if (!reasons.empty()) {
      os << "unplanned buffers (kept as malloc):\n";
      for (const std::string &line : reasons)
        os << line << "\n";
    }
    os.flush();

    if (json.empty())
      return;
    llvm::json::Value document = llvm::json::Object{
        {"alignment", 64}, {"functions", std::move(functions)}};
    // Whole or not at all, as every output (paddle/Execution/OutputFile.h).
    if (llvm::Error err =
            paddle::writeOutputFile(json, [&](llvm::raw_ostream &out) {
              out << llvm::formatv("{0:2}", document) << "\n";
            })) {
      module.emitError() << "cannot write the memory plan to '" << json
                         << "': " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
  }
};

} // namespace
