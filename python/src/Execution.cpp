//===- Execution.cpp - compile and run modules from Python ----------------===//
//
// compile() JIT-compiles a clone of a module; Executable.run calls it in a
// runtime session (one per Executable, so memory plans reuse their
// workspaces) with the numpy inputs' memory and returns numpy arrays that own
// the runtime's result buffers: no copy either way.
//
//===----------------------------------------------------------------------===//

#include "Core.h"

#include "paddle/CostModel/Passes.h"
#include "paddle/Execution/Aot.h"
#include "paddle/Execution/Jit.h"
#include "paddle/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "paddle_runtime/runtime.h"
#include "paddle_runtime/spmd.h"

#include <mutex>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

using namespace mlir;
using mlir::paddle::JitFunction;
using mlir::paddle::JitModule;

namespace paddle_py {
namespace {

/// Raises the Python exception for a failed runtime call (and frees it).
[[noreturn]] void raiseStatus(paddle_status_t status,
                              const std::string &prefix) {
  paddle_status_code_t code = paddle_status_code(status);
  std::string message = prefix + paddle_status_message(status);
  paddle_status_free(status);
  switch (code) {
  case PADDLE_INVALID_ARGUMENT:
    throw py::value_error(message);
  case PADDLE_OUT_OF_MEMORY:
    PyErr_SetString(PyExc_MemoryError, message.c_str());
    throw py::error_already_set();
  case PADDLE_NOT_FOUND:
    throw py::value_error(message);
  default:
    throw std::runtime_error(message);
  }
}

/// The numpy dtype that carries `dtype`. bf16 has none in numpy: its
/// tensors cross as uint16 bit patterns.
py::dtype numpyDtype(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
    return py::dtype::of<float>();
  case PADDLE_F16:
    return py::dtype("float16");
  case PADDLE_BF16:
    return py::dtype::of<uint16_t>();
  case PADDLE_F64:
    return py::dtype::of<double>();
  case PADDLE_I1:
    return py::dtype::of<bool>();
  case PADDLE_I8:
    return py::dtype::of<int8_t>();
  case PADDLE_I32:
    return py::dtype::of<int32_t>();
  case PADDLE_I64:
    return py::dtype::of<int64_t>();
  default:
    throw std::runtime_error("unsupported dtype in a signature");
  }
}

py::tuple specShape(const paddle_tensor_spec_t &spec) {
  py::list dims;
  for (int32_t i = 0; i < spec.rank; ++i)
    dims.append(spec.shape[i] == PADDLE_DYNAMIC_DIM
                    ? py::object(py::none())
                    : py::object(py::int_(spec.shape[i])));
  return py::tuple(dims);
}

std::string describe(const paddle_tensor_spec_t &spec) {
  std::string text = "tensor<";
  for (int32_t i = 0; i < spec.rank; ++i)
    text +=
        (spec.shape[i] == PADDLE_DYNAMIC_DIM ? std::string("?")
                                             : std::to_string(spec.shape[i])) +
        "x";
  return text + paddle_dtype_name(spec.dtype) + ">";
}

/// Frees result tensors not handed to numpy yet (on every exit path).
struct Results {
  std::vector<paddle_tensor_t> tensors;
  ~Results() {
    for (paddle_tensor_t &t : tensors)
      paddle_tensor_free(&t);
  }
};

/// A numpy array that owns `tensor`'s buffer; `tensor` is emptied.
py::array adopt(paddle_tensor_t &tensor) {
  py::dtype dtype = numpyDtype(tensor.dtype);
  std::vector<py::ssize_t> shape(tensor.shape, tensor.shape + tensor.rank);
  // Explicit strides: pybind11 2.10 would compute them from the descriptor
  // struct, whose layout changed in numpy 2.
  std::vector<py::ssize_t> strides(tensor.rank);
  py::ssize_t stride = paddle_dtype_size(tensor.dtype);
  for (int32_t d = tensor.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= tensor.shape[d];
  }
  auto *owned = new paddle_tensor_t(tensor);
  tensor = paddle_tensor_t{};
  py::capsule base(owned, [](void *p) {
    auto *t = static_cast<paddle_tensor_t *>(p);
    paddle_tensor_free(t);
    delete t;
  });
  return py::array(dtype, shape, strides, owned->data, base);
}

/// This process's communicator over MPI_COMM_WORLD when mpirun started it
/// (each process one device of a mesh), created on first use and kept
/// for the life of the process; null otherwise.
paddle_comm_t processWorld(double timeoutSeconds) {
  static std::mutex mu;
  static paddle_comm_t world = nullptr;
  if (!paddle_mpi_launched())
    return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!world)
    if (paddle_status_t s = paddle_mpi_world(timeoutSeconds, &world))
      raiseStatus(s, "under mpirun: ");
  return world;
}

struct Executable {
  paddle_executable_t executable = nullptr;
  paddle_session_t session = nullptr;
  /// Owned by the executable (the JIT module lives as long as it does).
  const std::vector<JitFunction> *functions = nullptr;
  /// How long a device of an in-process mesh waits for the others in a
  /// collective before failing.
  double collectiveTimeout = 300;
  /// JitModule::constantBytes and compileParts.
  uint64_t constantBytes = 0;
  unsigned compileParts = 1;

  Executable() = default;
  Executable(const Executable &) = delete;
  ~Executable() {
    paddle_session_free(session);
    paddle_executable_free(executable);
  }

  int32_t find(const std::string &name) {
    int32_t index = 0;
    if (paddle_status_t s =
            paddle_executable_find(executable, name.c_str(), &index))
      raiseStatus(s, "");
    return index;
  }

  py::dict signature(const std::string &name) {
    const JitFunction &f = (*functions)[find(name)];
    py::list inputs, outputs;
    for (const paddle_tensor_spec_t &s : f.inputs)
      inputs.append(py::make_tuple(paddle_dtype_name(s.dtype), specShape(s)));
    for (const paddle_tensor_spec_t &s : f.outputs)
      outputs.append(py::make_tuple(paddle_dtype_name(s.dtype), specShape(s)));
    py::dict aliases;
    for (const JitFunction::Alias &a : f.aliases)
      aliases[py::int_(a.input)] = py::int_(a.output);
    py::dict result;
    result["inputs"] = inputs;
    result["outputs"] = outputs;
    result["aliases"] = aliases;
    if (!f.mesh.empty()) {
      // Per input and output, per dim, the mesh axes that split it.
      auto splits = [](const std::vector<paddle_tensor_sharding_t> &list,
                       const std::vector<paddle_tensor_spec_t> &specs) {
        py::list out;
        for (size_t i = 0; i < list.size(); ++i) {
          py::list dims;
          for (int32_t d = 0; d < specs[i].rank; ++d) {
            py::list axes;
            for (int k = 0;
                 k < PADDLE_MAX_MESH_RANK && list[i].split[d][k] >= 0; ++k)
              axes.append(list[i].split[d][k]);
            dims.append(py::tuple(axes));
          }
          out.append(py::tuple(dims));
        }
        return out;
      };
      result["mesh"] = py::tuple(py::cast(f.mesh));
      result["input_shardings"] = splits(f.inputShardings, f.inputs);
      result["output_shardings"] = splits(f.outputShardings, f.outputs);
    }
    return result;
  }

  py::list run(const std::string &name, const py::object &inputs) {
    // An array is a sequence too: iterating it would pass its rows.
    if (py::isinstance<py::array>(inputs) ||
        !py::isinstance<py::sequence>(inputs) ||
        py::isinstance<py::str>(inputs))
      throw py::type_error("inputs must be a list of arrays");
    auto args = py::reinterpret_borrow<py::sequence>(inputs);
    int32_t index = find(name);
    const JitFunction &f = (*functions)[index];
    std::string fn = "'" + f.name + "'";
    if (args.size() != f.inputs.size())
      throw py::value_error("function " + fn + " takes " +
                            std::to_string(f.inputs.size()) + " inputs, " +
                            std::to_string(args.size()) + " given");
    std::vector<bool> donated(f.inputs.size(), false);
    for (const JitFunction::Alias &a : f.aliases)
      donated[a.input] = true;

    py::module_ numpy = py::module_::import("numpy");
    std::vector<py::array> arrays;
    std::vector<std::vector<int64_t>> strides(f.inputs.size());
    std::vector<paddle_tensor_t> tensors(f.inputs.size());
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const paddle_tensor_spec_t &spec = f.inputs[i];
      std::string what = "argument " + std::to_string(i) + " of " + fn;
      py::dtype dtype = numpyDtype(spec.dtype);
      py::object arg = args[i];
      py::array array;
      if (py::isinstance<py::array>(arg)) {
        array = py::reinterpret_borrow<py::array>(arg);
        // No silent conversion of arrays: a float64 array passed for f32
        // is more often a bug than an intent, and a copy would hide it.
        if (!array.dtype().equal(dtype))
          throw py::value_error(what + ": expected a " +
                                py::cast<std::string>(py::str(dtype)) +
                                " array for " + describe(spec) + ", got " +
                                py::cast<std::string>(py::str(array.dtype())));
      } else {
        if (donated[i])
          throw py::value_error(what + " is donated: pass a numpy array");
        array = numpy.attr("asarray")(arg, dtype);
      }
      if (array.ndim() != spec.rank)
        throw py::value_error(what + ": expected rank " +
                              std::to_string(spec.rank) + " (" +
                              describe(spec) + "), got an array of rank " +
                              std::to_string(array.ndim()));
      bool contiguous = array.flags() & py::array::c_style;
      bool aligned = array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_;
      if (donated[i]) {
        // The compiled code writes the result into this buffer in place:
        // packing or copying it would lose the write.
        if (!contiguous || !aligned)
          throw py::value_error(what + " is donated: it must be a "
                                       "C-contiguous, aligned array");
        if (!array.writeable())
          throw py::value_error(what + " is donated: it must be writable");
      }
      if (!aligned)
        array = numpy.attr("ascontiguousarray")(array);
      paddle_tensor_t &t = tensors[i];
      t.dtype = spec.dtype;
      t.rank = spec.rank;
      for (int32_t d = 0; d < spec.rank; ++d)
        t.shape[d] = array.shape(d);
      if (!(array.flags() & py::array::c_style)) {
        // A strided view (transposed, sliced): the runtime packs it.
        // Not array.itemsize(): see Builder.cpp on numpy 2 descriptors.
        auto item = py::cast<py::ssize_t>(array.dtype().attr("itemsize"));
        bool elementStrides = true;
        for (int32_t d = 0; d < spec.rank; ++d)
          elementStrides &= array.strides(d) % item == 0;
        if (!elementStrides)
          array = numpy.attr("ascontiguousarray")(array);
        else
          for (int32_t d = 0; d < spec.rank; ++d)
            strides[i].push_back(array.strides(d) / item);
      }
      t.strides = strides[i].empty() ? nullptr : strides[i].data();
      t.data = const_cast<void *>(array.data());
      arrays.push_back(array);
    }

    Results results;
    results.tensors.resize(f.outputs.size());
    // Under mpirun this process is one device of the mesh.
    paddle_comm_t world =
        f.mesh.empty() ? nullptr : processWorld(collectiveTimeout);
    paddle_status_t status;
    {
      py::gil_scoped_release release;
      // A function partitioned for a mesh runs on every device of it (one
      // thread each, or one process each under mpirun), from the full
      // inputs.
      status = f.mesh.empty()
                   ? paddle_session_run(session, index, tensors.data(),
                                        tensors.size(), results.tensors.data(),
                                        results.tensors.size())
                   : paddle_session_run_spmd(
                         session, index, tensors.data(), tensors.size(),
                         results.tensors.data(), results.tensors.size(), world,
                         collectiveTimeout);
    }
    if (status)
      raiseStatus(status, "");
    py::list outputs;
    for (paddle_tensor_t &t : results.tensors)
      outputs.append(adopt(t));
    return outputs;
  }
};

/// An in-process group of ranks (paddle_local_group_*): the links between
/// the stages of a pipeline, each stage a thread of this process.
struct LocalGroup {
  LocalGroup(int size, double timeoutSeconds) {
    if (paddle_status_t s =
            paddle_local_group_create(size, timeoutSeconds, &group))
      raiseStatus(s, "LocalGroup: ");
  }
  ~LocalGroup() { paddle_local_group_release(group); }
  LocalGroup(const LocalGroup &) = delete;
  LocalGroup &operator=(const LocalGroup &) = delete;
  paddle_local_group_t group = nullptr;
};

/// One rank's communicator; it keeps its group alive.
struct Comm {
  std::shared_ptr<LocalGroup> owner;
  paddle_comm_t comm = nullptr;

  /// Calls `transfer(data, bytes)` on the bytes of `array` without the
  /// GIL; `array` must be C-contiguous (and writable to receive into).
  template <typename Transfer>
  static void withBytes(py::array &array, bool writable, const char *what,
                        Transfer transfer) {
    if (!(array.flags() & py::array::c_style))
      throw py::value_error(std::string(what) +
                            ": the array must be C-contiguous");
    if (writable && !array.writeable())
      throw py::value_error(std::string(what) + ": the array must be writable");
    void *data = const_cast<void *>(array.data());
    // Not array.nbytes(): see Builder.cpp on numpy 2 descriptors.
    auto size = py::cast<size_t>(array.attr("nbytes"));
    paddle_status_t s;
    {
      py::gil_scoped_release release;
      s = transfer(data, size);
    }
    if (s)
      raiseStatus(s, "");
  }
  void send(py::array array, int dest, int tag) {
    withBytes(array, /*writable=*/false, "send", [&](void *data, size_t n) {
      return paddle_comm_send(comm, data, n, PADDLE_I8, dest, tag);
    });
  }
  void broadcast(py::array array, int root) {
    withBytes(array, /*writable=*/true, "broadcast", [&](void *data, size_t n) {
      return paddle_comm_broadcast(comm, data, n, PADDLE_I8, root);
    });
  }
  void recv(py::array array, int source, int tag) {
    withBytes(array, /*writable=*/true, "recv", [&](void *data, size_t n) {
      return paddle_comm_recv(comm, data, n, PADDLE_I8, source, tag);
    });
  }
};

/// `text` parsed as compile options; a ValueError names what is wrong.
mlir::paddle::CompileOptions parseCompileOptions(const std::string &text) {
  mlir::paddle::CompileOptions options;
  if (llvm::Error error = options.parse(text))
    throw py::value_error("bad compile options '" + text +
                          "': " + llvm::toString(std::move(error)));
  return options;
}

/// Runs `build`'s passes on `module` in place; a failure raises with the
/// diagnostics.
void runPasses(PaddleModule &m, mlir::ModuleOp module, const std::string &what,
               llvm::function_ref<void(mlir::OpPassManager &)> build) {
  DiagnosticCapture capture(m.ctx());
  mlir::PassManager pm(m.ctx());
  build(pm);
  if (mlir::failed(pm.run(module)))
    capture.fail(what + " failed");
}

std::unique_ptr<Executable> compile(PaddleModule &m, unsigned optLevel,
                                    int64_t memoryLimit,
                                    const std::string &optionsText,
                                    unsigned compileThreads) {
  if (optLevel > 3)
    throw py::value_error("opt_level must be 0, 1, 2 or 3");
  mlir::paddle::CompileOptions compileOptions =
      parseCompileOptions(optionsText);
  if (memoryLimit < 0)
    throw py::value_error("memory_limit must be a byte count >= 0");
  DiagnosticCapture capture(m.ctx());
  // JitModule::create lowers in place: the caller's module stays
  // paddle-level.
  OwningOpRef<ModuleOp> clone = m.get().clone();
  mlir::paddle::JitOptions jitOptions;
  jitOptions.optLevel = optLevel;
  jitOptions.compileThreads = compileThreads;
  auto jit = JitModule::create(*clone, compileOptions, jitOptions);
  if (!jit)
    capture.fail("compilation failed: " + llvm::toString(jit.takeError()));
  auto result = std::make_unique<Executable>();
  result->functions = &(*jit)->functions();
  result->constantBytes = (*jit)->constantBytes();
  result->compileParts = (*jit)->compileParts();
  auto executable = JitModule::toExecutable(std::move(*jit));
  if (!executable)
    capture.fail("compilation failed: " +
                 llvm::toString(executable.takeError()));
  result->executable = *executable;
  paddle_session_options_t options{};
  options.memory_limit_bytes = memoryLimit;
  if (paddle_status_t s =
          paddle_session_create(result->executable, &options, &result->session))
    raiseStatus(s, "cannot create a session: ");
  return result;
}

} // namespace

void bindExecution(py::module_ &m) {
  py::class_<Executable>(m, "Executable",
                         "A JIT-compiled module with its runtime session")
      .def("functions",
           [](Executable &e) {
             std::vector<std::string> names;
             for (const JitFunction &f : *e.functions)
               names.push_back(f.name);
             return names;
           })
      .def("signature", &Executable::signature, py::arg("name"))
      .def("run", &Executable::run, py::arg("name"), py::arg("inputs"))
      .def("compile_parts", [](Executable &e) { return e.compileParts; })
      .def("memory_stats", [](Executable &e) {
        int64_t peak = 0, reserved = 0;
        paddle_session_memory_stats(e.session, &peak, &reserved);
        py::dict stats;
        stats["peak_call_bytes"] = peak;
        stats["reserved_bytes"] = reserved;
        stats["constant_bytes"] = e.constantBytes;
        return stats;
      });
  m.def("compile", &compile, py::arg("module"), py::arg("opt_level") = 3,
        py::arg("memory_limit") = 0, py::arg("options") = "",
        py::arg("compile_threads") = 0,
        "Lowers a clone of `module` with the CPU pipeline and JIT-compiles "
        "it. `options` is compile option text, as paddle-opt's "
        "--paddle-cpu-pipeline takes it: \"device=h200 library=onednn\"");
  m.def(
      "check_compile_options",
      [](const std::string &text) { parseCompileOptions(text); },
      py::arg("options"),
      "Raises ValueError unless `options` is valid compile option text");
  m.def(
      "set_target",
      [](PaddleModule &m, const std::string &text) {
        mlir::paddle::CompileOptions options = parseCompileOptions(text);
        runPasses(m, m.get(), "paddle-set-target", [&](auto &pm) {
          pm.addPass(
              mlir::paddle::createSetTargetPass(options.target.getChanges()));
        });
      },
      py::arg("module"), py::arg("options"),
      "Attaches the target the compile options name (paddle-set-target)");
  m.def(
      "lower",
      [](PaddleModule &m, const std::string &text) {
        mlir::paddle::CompileOptions options = parseCompileOptions(text);
        mlir::OwningOpRef<mlir::ModuleOp> clone = m.get().clone();
        runPasses(m, *clone, "paddle-cpu-pipeline", [&](auto &pm) {
          mlir::paddle::buildCpuPipeline(pm, options);
        });
        std::string out;
        llvm::raw_string_ostream os(out);
        clone->print(os);
        return out;
      },
      py::arg("module"), py::arg("options") = "",
      "The LLVM-dialect IR of a clone of `module` after the CPU pipeline "
      "with the compile options, as text");
  m.def(
      "compile_aot",
      [](PaddleModule &m, const std::string &path, const std::string &emit,
         const std::string &text, const std::string &weights,
         uint64_t sidecarThreshold, std::optional<std::string> symbolPrefix) {
        mlir::paddle::CompileOptions compile = parseCompileOptions(text);
        mlir::paddle::AotOptions options;
        std::optional<mlir::paddle::ArtifactKind> kind =
            mlir::paddle::parseArtifactKind(emit);
        if (!kind)
          throw py::value_error("emit must be 'so', 'exe', 'obj' or 'mlir'; "
                                "got '" +
                                emit + "'");
        options.kind = *kind;
        if (weights != "embed" && weights != "sidecar")
          throw py::value_error("weights must be 'embed' or 'sidecar'; got '" +
                                weights + "'");
        options.sidecarWeights = weights == "sidecar";
        options.sidecarThreshold = sidecarThreshold;
        options.symbolPrefix = std::move(symbolPrefix);
        DiagnosticCapture capture(m.ctx());
        // Compilation lowers in place: the caller's module stays
        // paddle-level.
        mlir::OwningOpRef<mlir::ModuleOp> clone = m.get().clone();
        llvm::Error error = [&] {
          py::gil_scoped_release release;
          return mlir::paddle::compileAheadOfTime(*clone, compile, options,
                                                  path);
        }();
        if (error)
          capture.fail(llvm::toString(std::move(error)));
      },
      py::arg("module"), py::arg("path"), py::arg("emit") = "so",
      py::arg("options") = "", py::arg("weights") = "embed",
      py::arg("sidecar_threshold") = 256, py::arg("symbol_prefix") = py::none(),
      "Compiles a clone of `module` ahead of time into `path`, as "
      "paddle-compile does: emit 'so' (plus PATH.h), 'exe', 'obj' or 'mlir'; "
      "weights 'sidecar' puts large constants in PATH.weights");
  m.def(
      "set_num_threads",
      [](int32_t n) {
        if (paddle_status_t s = paddle_set_num_threads(n))
          raiseStatus(s, "");
      },
      py::arg("n"));
  m.def("get_num_threads", [] { return paddle_get_num_threads(); });

  m.def(
      "mpi_launched", [] { return paddle_mpi_launched() != 0; },
      "Whether mpirun started this process");
  m.def(
      "mpi_world",
      [](double timeout) {
        paddle_comm_t world = processWorld(timeout);
        if (!world)
          throw py::value_error("mpi_world: this process was not started by "
                                "mpirun");
        return Comm{nullptr, world};
      },
      py::arg("timeout") = 300.0,
      "This process's communicator over every process mpirun started "
      "(created at the first use, with that call's timeout)");
  py::class_<LocalGroup, std::shared_ptr<LocalGroup>>(
      m, "LocalGroup",
      "`size` ranks in this process, each a thread with its own Comm; every "
      "wait of theirs times out after `timeout` seconds")
      .def(py::init<int, double>(), py::arg("size"), py::arg("timeout"))
      .def("comm", [](std::shared_ptr<LocalGroup> &g, int rank) {
        Comm c{g, nullptr};
        if (paddle_status_t s =
                paddle_local_group_comm(g->group, rank, &c.comm))
          raiseStatus(s, "LocalGroup.comm: ");
        return c;
      });
  py::class_<Comm>(m, "Comm",
                   "One rank's communicator (collectives.h): point to point "
                   "between ranks, matched by (source, tag) in order")
      .def_property_readonly("rank",
                             [](Comm &c) { return paddle_comm_rank(c.comm); })
      .def_property_readonly("size",
                             [](Comm &c) { return paddle_comm_size(c.comm); })
      .def("send", &Comm::send, py::arg("array"), py::arg("dest"),
           py::arg("tag") = 0,
           "Sends the bytes of a C-contiguous array; returns once they are "
           "copied out")
      .def("recv", &Comm::recv, py::arg("array"), py::arg("source"),
           py::arg("tag") = 0,
           "Receives into a writable C-contiguous array of the sent size")
      .def("broadcast", &Comm::broadcast, py::arg("array"), py::arg("root"),
           "Every rank's array (writable, C-contiguous, of one size) "
           "becomes the root's")
      .def(
          "abort",
          [](Comm &c, const std::string &reason) {
            paddle_comm_abort(c.comm, reason.c_str());
          },
          py::arg("reason"),
          "This rank failed: the others' pending and next calls fail, "
          "naming it and `reason`");
}

} // namespace paddle_py
