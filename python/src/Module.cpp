//===- Module.cpp - paddle_mlir._core.Module ------------------------------===//
//
// Parsing, printing, saving, verifying and transforming a module. Every entry
// point captures the context's diagnostics and raises them as MLIRError.
//
//===----------------------------------------------------------------------===//

#include "Core.h"

#include "paddle/CostModel/CostModel.h"
#include "paddle/CostModel/DeviceSpec.h"
#include "paddle/Execution/OutputFile.h"
#include "paddle/Execution/SourceModule.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/stl.h>

using namespace mlir;

namespace paddle_py {

[[noreturn]] static void throwOSError(const std::string &message) {
  PyErr_SetString(PyExc_OSError, message.c_str());
  throw py::error_already_set();
}

/// The func.func named `name`; ValueError listing the functions otherwise.
static func::FuncOp lookupFunction(PaddleModule &m, const std::string &name) {
  if (auto f = llvm::dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupSymbolIn(m.get(), name)))
    return f;
  std::string names;
  for (auto f : m.get().getOps<func::FuncOp>())
    names += (names.empty() ? "" : ", ") + f.getSymName().str();
  throw py::value_error("no function '" + name + "' in the module (it has: " +
                        (names.empty() ? "none" : names) + ")");
}

static std::string print(ModuleOp module, bool debugInfo, bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.enableDebugInfo(debugInfo);
  if (generic)
    flags.printGenericOpForm();
  module->print(os, flags);
  return text;
}

static ModuleRef parse(ContextRef context, const std::string &text,
                       const std::string &name) {
  MLIRContext *ctx = &context->context;
  // Untrusted bytes: nesting bounded, bytecode read in a child process
  // first (paddle/Execution/SourceModule.h), as the tools do. Bytecode is
  // recognised by its magic number, so bytes parse too.
  auto buffer = [&] {
    py::gil_scoped_release release; // bytecode: waits for a child process
    return paddle::sanitizeModuleBuffer(
        // std::string keeps a NUL after its text, which the lexer needs.
        llvm::MemoryBuffer::getMemBuffer(text, name,
                                         /*RequiresNullTerminator=*/true),
        ctx->getDialectRegistry());
  }();
  if (!buffer)
    throw MLIRError{llvm::toString(buffer.takeError()), {}};
  DiagnosticCapture capture(ctx);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(ctx));
  if (!module)
    capture.fail("cannot parse '" + name + "'");
  return std::make_shared<PaddleModule>(context, std::move(module));
}

static ModuleRef load(ContextRef context, const std::string &path) {
  auto file = paddle::readModuleFile(path);
  if (!file)
    throwOSError(llvm::toString(file.takeError()));
  MLIRContext *ctx = &context->context;
  auto buffer = [&] {
    py::gil_scoped_release release; // bytecode: waits for a child process
    return paddle::sanitizeModuleBuffer(std::move(*file),
                                        ctx->getDialectRegistry());
  }();
  if (!buffer)
    throw MLIRError{llvm::toString(buffer.takeError()), {}};
  DiagnosticCapture capture(ctx);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(ctx));
  if (!module)
    capture.fail("cannot load '" + path + "'");
  return std::make_shared<PaddleModule>(context, std::move(module));
}

static std::string toBytecode(ModuleOp module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(writeBytecodeToFile(module, os)))
    throw MLIRError{"cannot write the module as bytecode", {}};
  return bytes;
}

/// Writes `path` through the runtime's output files, as the tools do: a
/// temporary file published by a rename (a device node or FIFO is written
/// into, not replaced), removed by a failure or a signal.
static void writeFile(const std::string &path, llvm::StringRef contents) {
  if (llvm::Error error = mlir::paddle::writeOutputFile(
          path, [&](llvm::raw_ostream &os) { os << contents; })) {
    // A signal that interrupted the write (SIGINT) is the error to raise:
    // KeyboardInterrupt rather than "Interrupted system call".
    if (PyErr_CheckSignals() != 0) {
      llvm::consumeError(std::move(error));
      throw py::error_already_set();
    }
    throwOSError(llvm::toString(std::move(error)));
  }
}

static void save(PaddleModule &m, const std::string &path) {
  bool bytecode = llvm::StringRef(path).ends_with(".mlirbc");
  std::string contents =
      bytecode ? toBytecode(m.get()) : print(m.get(), true, false);
  writeFile(path, contents);
}

static void runPasses(PaddleModule &m, const std::string &pipeline) {
  MLIRContext *ctx = m.ctx();
  DiagnosticCapture capture(ctx);
  // Accept "builtin.module(a,b)" and the bare "a,b".
  std::string anchored = pipeline;
  if (!llvm::StringRef(pipeline).trim().starts_with("builtin.module("))
    anchored = "builtin.module(" + pipeline + ")";
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(anchored, errorStream);
  if (failed(parsed))
    throw MLIRError{"invalid pass pipeline '" + pipeline +
                        "': " + llvm::StringRef(errors).trim().str(),
                    capture.take()};
  PassManager pm(ctx);
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  // Passes may erase IR that Values of this module point to.
  ++m.epoch;
  if (failed(pm.run(m.get())))
    capture.fail("pass pipeline '" + pipeline + "' failed");
}

/// An attribute as a Python value: dictionaries, arrays, numbers, strings
/// and unit (True); anything else as its text.
static py::object toPython(Attribute attr) {
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    py::dict out;
    for (NamedAttribute entry : d)
      out[py::str(entry.getName().str())] = toPython(entry.getValue());
    return std::move(out);
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    py::list out;
    for (Attribute element : a)
      out.append(toPython(element));
    return std::move(out);
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return py::float_(f.getValueAsDouble());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return py::int_(i.getInt());
  if (auto t = dyn_cast<StringAttr>(attr))
    return py::str(t.getValue().str());
  if (isa<UnitAttr>(attr))
    return py::bool_(true);
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return py::str(text);
}

void bindModule(py::module_ &mod) {
  py::class_<PaddleModule, ModuleRef>(mod, "Module", "A builtin.module")
      .def(py::init([](ContextRef context) {
             return std::make_shared<PaddleModule>(
                 context, ModuleOp::create(UnknownLoc::get(&context->context)));
           }),
           py::arg("context"))
      .def_static("parse", &parse, py::arg("context"), py::arg("text"),
                  py::arg("name") = "<string>",
                  "Parses MLIR text (or bytecode bytes); MLIRError names "
                  "`name` and the position of each error")
      .def_static("load", &load, py::arg("context"), py::arg("path"),
                  "Reads a .mlir or .mlirbc file")
      .def_property_readonly("context",
                             [](PaddleModule &m) { return m.context; })
      .def(
          "to_text",
          [](PaddleModule &m, bool debugInfo, bool generic) {
            return print(m.get(), debugInfo, generic);
          },
          py::arg("debug_info") = false, py::arg("generic") = false)
      .def("__str__",
           [](PaddleModule &m) { return print(m.get(), false, false); })
      .def("to_bytecode",
           [](PaddleModule &m) { return py::bytes(toBytecode(m.get())); })
      .def("save", &save, py::arg("path"),
           "Bytecode when `path` ends in .mlirbc, text (with locations) "
           "otherwise; written atomically")
      .def("verify",
           [](PaddleModule &m) {
             DiagnosticCapture capture(m.ctx());
             if (failed(mlir::verify(m.get())))
               capture.fail("the module does not verify");
           })
      .def("run_passes", &runPasses, py::arg("pipeline"))
      .def("clone",
           [](PaddleModule &m) {
             return std::make_shared<PaddleModule>(m.context, m.get().clone());
           })
      .def("function_names",
           [](PaddleModule &m) {
             std::vector<std::string> names;
             for (auto f : m.get().getOps<func::FuncOp>())
               names.push_back(f.getSymName().str());
             return names;
           })
      .def(
          "erase_function",
          [](PaddleModule &m, const std::string &name) {
            func::FuncOp f = lookupFunction(m, name);
            ++m.epoch;
            f->remove();
            m.graveyard.emplace_back(f.getOperation());
          },
          py::arg("name"))
      .def(
          "set_function_attr",
          [](PaddleModule &m, const std::string &func, const std::string &name,
             const std::string &attrText) {
            func::FuncOp f = lookupFunction(m, func);
            f->setAttr(name, parseAttrOrThrow(m.ctx(), attrText,
                                              "attribute '" + name + "'"));
          },
          py::arg("func"), py::arg("name"), py::arg("attr"))
      .def(
          "function_attr",
          [](PaddleModule &m, const std::string &func,
             const std::string &name) -> py::object {
            Attribute attr = lookupFunction(m, func)->getAttr(name);
            return attr ? toPython(attr) : py::none();
          },
          py::arg("func"), py::arg("name"),
          "A function's attribute as Python values (None when absent)")
      .def(
          "set_arg_attr",
          [](PaddleModule &m, const std::string &func, int64_t index,
             const std::string &name, const std::string &attrText) {
            func::FuncOp f = lookupFunction(m, func);
            if (index < 0 || index >= (int64_t)f.getNumArguments())
              throw py::index_error("function '" + func + "' has " +
                                    std::to_string(f.getNumArguments()) +
                                    " arguments; no argument " +
                                    std::to_string(index));
            f.setArgAttr(index, name,
                         parseAttrOrThrow(m.ctx(), attrText,
                                          "attribute '" + name + "'"));
          },
          py::arg("func"), py::arg("index"), py::arg("name"), py::arg("attr"))
      .def(
          "add_grid",
          [](PaddleModule &m, const std::string &name,
             const std::vector<int64_t> &shape) {
            if (SymbolTable::lookupSymbolIn(m.get(), name))
              throw py::value_error("the module already has a symbol '" + name +
                                    "'");
            if (shape.empty())
              throw py::value_error("a device mesh has at least one axis");
            for (int64_t size : shape)
              if (size < 1)
                throw py::value_error("mesh axis sizes must be >= 1");
            OpBuilder b = OpBuilder::atBlockBegin(m.get().getBody());
            mlir::shard::GridOp::create(b, UnknownLoc::get(m.ctx()), name,
                                        shape);
          },
          py::arg("name"), py::arg("shape"),
          "Adds a device mesh (shard.grid) the module's shardings name")
      .def(
          "add_declaration",
          [](PaddleModule &m, const std::string &name,
             const std::vector<std::string> &argTypes,
             const std::vector<std::string> &resultTypes) {
            if (SymbolTable::lookupSymbolIn(m.get(), name))
              throw py::value_error("the module already has a symbol '" + name +
                                    "'");
            MLIRContext *ctx = m.ctx();
            SmallVector<Type> args, results;
            for (size_t i = 0; i < argTypes.size(); ++i)
              args.push_back(parseTypeOrThrow(ctx, argTypes[i],
                                              "argument " + std::to_string(i)));
            for (size_t i = 0; i < resultTypes.size(); ++i)
              results.push_back(parseTypeOrThrow(
                  ctx, resultTypes[i], "result " + std::to_string(i)));
            OpBuilder b = OpBuilder::atBlockEnd(m.get().getBody());
            auto f =
                func::FuncOp::create(b, UnknownLoc::get(ctx), name,
                                     FunctionType::get(ctx, args, results));
            f.setPrivate();
          },
          py::arg("name"), py::arg("arg_types"), py::arg("result_types"),
          "Adds a private func.func declaration (no body)");
  mod.def(
      "cluster_spec",
      [](const std::string &nameOrPath) {
        auto spec = mlir::paddle::resolveClusterSpec(nameOrPath);
        if (!spec)
          throw py::value_error(llvm::toString(spec.takeError()));
        auto link = [](const mlir::paddle::LinkSpec &l) {
          py::dict d;
          d["bandwidth_bytes_per_s"] = l.bandwidthBytesPerS;
          d["latency_s"] = l.latencyS;
          return d;
        };
        py::dict d;
        d["name"] = spec->name;
        d["device"] = spec->device;
        d["nodes"] = spec->nodes;
        d["devices_per_node"] = spec->devicesPerNode;
        d["memory_bytes_per_device"] = spec->memoryBytesPerDevice;
        d["intra_node"] = link(spec->intraNode);
        d["inter_node"] = link(spec->interNode);
        auto device = mlir::paddle::resolveDeviceSpec(spec->device);
        if (!device)
          throw py::value_error("cluster '" + spec->name +
                                "': " + llvm::toString(device.takeError()));
        d["device_memory_bandwidth_bytes_per_s"] =
            device->memoryBandwidthBytesPerS;
        return d;
      },
      py::arg("name_or_path"),
      "A cluster spec (a built-in name of specs/clusters or a JSON path) as "
      "a dict; ValueError names what is wrong");
  mod.def(
      "cluster_link",
      [](const std::string &nameOrPath, const std::vector<int64_t> &mesh,
         const std::vector<int64_t> &axes) {
        auto spec = mlir::paddle::resolveClusterSpec(nameOrPath);
        if (!spec)
          throw py::value_error(llvm::toString(spec.takeError()));
        for (int64_t a : axes)
          if (a < 0 || a >= (int64_t)mesh.size())
            throw py::value_error("mesh axis " + std::to_string(a) +
                                  " out of range");
        const mlir::paddle::LinkSpec &l = spec->linkFor(mesh, axes);
        return py::make_tuple(l.bandwidthBytesPerS, l.latencyS);
      },
      py::arg("cluster"), py::arg("mesh"), py::arg("axes"),
      "(bandwidth, latency) of a collective over mesh `axes` of a mesh laid "
      "out row-major on the cluster's devices");
  mod.def(
      "estimate_collective",
      [](const std::string &kind, int64_t devices, double bytes,
         double bandwidth, double latency) {
        using mlir::paddle::Collective;
        std::optional<Collective> k =
            kind == "all_reduce"   ? std::optional(Collective::AllReduce)
            : kind == "all_gather" ? std::optional(Collective::AllGather)
            : kind == "reduce_scatter"
                ? std::optional(Collective::ReduceScatter)
            : kind == "all_to_all" ? std::optional(Collective::AllToAll)
                                   : std::nullopt;
        if (!k)
          throw py::value_error("unknown collective '" + kind +
                                "' (all_reduce, all_gather, reduce_scatter, "
                                "all_to_all)");
        if (!(bandwidth > 0) || latency < 0 || devices < 1)
          throw py::value_error("a link needs bandwidth > 0 and latency >= "
                                "0, and a collective at least one device");
        return mlir::paddle::estimateCollective(*k, devices, bytes,
                                                {bandwidth, latency});
      },
      py::arg("kind"), py::arg("devices"), py::arg("bytes"),
      py::arg("bandwidth"), py::arg("latency"),
      "The cost model's alpha-beta time of a ring collective "
      "(CostModel.h estimateCollective) over a link");
  mod.def(
      "write_file",
      [](const std::string &path, const py::bytes &data) {
        std::string contents = data;
        writeFile(path, contents);
      },
      py::arg("path"), py::arg("data"),
      "Writes `data` to `path` whole or not at all, as the tools write "
      "files: a temporary file renamed over a regular file, a device node "
      "or FIFO written into (never replaced), removed by a failure or a "
      "signal; OSError names the path and the reason");
}

} // namespace paddle_py
