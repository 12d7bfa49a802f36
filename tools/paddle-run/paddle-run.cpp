//===- paddle-run.cpp - run a paddle module: JIT or compiled library ------===//
//
//   paddle-run FILE(.mlir|.mlirbc|.so) [--function F] --input a.npy ...
//              [--output-dir D] [--bench N] [--threads N] [--trace T.json]
//              [--memory-limit BYTES] [--concurrency N]
//
// Compiles FILE with paddle-cpu-pipeline (or loads a `paddle-compile --emit
// so` library), reads the inputs, calls the function in a runtime session
// and writes each result as D/<F>_<i>.npy (or prints small results when no
// directory is given). Every failure is a message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "ToolFlags.h"
#include "paddle/Execution/Jit.h"
#include "paddle/Execution/SourceModule.h"
#include "paddle/InitAll.h"
#include "paddle/Transforms/Donation.h"
#include "paddle_runtime/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<module .mlir, .mlirbc or .so>"),
              cl::Required);
static cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to run (optional when the module has "
                          "one public function)"),
                 cl::init(""));
static cl::list<std::string> inputs("input",
                                    cl::desc("An input .npy file, in order"));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write results as <dir>/<function>_<i>.npy"),
              cl::init(""));
static cl::opt<unsigned>
    benchRuns("bench", cl::desc("Run N more times and print median and min ms"),
              cl::init(0));
static cl::opt<std::string> tracePath(
    "trace",
    cl::desc("Write per-call and per-kernel timings as Chrome trace JSON "
             "(compiles with kernel instrumentation)"),
    cl::init(""));
static cl::opt<std::string> memoryLimit(
    "memory-limit",
    cl::desc("Bytes one call may hold at once (suffixes K, M, G); exceeding "
             "it is an out-of-memory error"),
    cl::init(""));
static cl::opt<unsigned> concurrency(
    "concurrency",
    cl::desc("Also run the function from N threads at once in the same "
             "session and check that every result equals the first run's"),
    cl::init(0));
static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads LLVM compiles the module on, each taking a part of it "
             "(default 0: one per core)"),
    cl::init(0));
// libMLIR already registers a hidden cl::opt named "threads", so --threads
// is taken out of argv before LLVM parses it (see takeThreadsFlag).
static cl::extrahelp
    threadsHelp("\n  --threads N  Threads for parallel loops (default: "
                "PADDLE_NUM_THREADS, else the number of cores)\n");

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "paddle-run: error: " << message << "\n";
  return 1;
}

std::string takeMessage(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

/// True for an ELF file (a `paddle-compile --emit so` library); anything
/// else is parsed as MLIR.
bool isSharedObject(const std::string &path) {
  char magic[4] = {};
  FILE *f = fopen(path.c_str(), "rb");
  if (!f)
    return false;
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  return n == 4 && memcmp(magic,
                          "\x7f"
                          "ELF",
                          4) == 0;
}

/// Owns the executable and session on every exit path.
struct Runtime {
  paddle_executable_t executable = nullptr;
  paddle_session_t session = nullptr;
  ~Runtime() {
    paddle_session_free(session);
    paddle_executable_free(executable);
  }
};

bool sameTensor(const paddle_tensor_t &a, const paddle_tensor_t &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int32_t d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d])
      return false;
  size_t bytes = paddle_tensor_num_elements(&a) * paddle_dtype_size(a.dtype);
  return bytes == 0 || memcmp(a.data, b.data, bytes) == 0;
}

/// Frees runtime tensors on every exit path.
struct TensorList {
  std::vector<paddle_tensor_t> tensors;
  ~TensorList() {
    for (auto &t : tensors)
      paddle_tensor_free(&t);
  }
};

void printTensor(const paddle_tensor_t &t, unsigned index) {
  llvm::outs() << "result " << index << ": " << paddle_dtype_name(t.dtype)
               << " [";
  for (int32_t d = 0; d < t.rank; ++d)
    llvm::outs() << (d ? ", " : "") << t.shape[d];
  llvm::outs() << "]";
  int64_t n = paddle_tensor_num_elements(&t);
  if (n > 64) {
    llvm::outs() << " (" << n << " elements; use --output-dir to save)\n";
    return;
  }
  llvm::outs() << " = {";
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      llvm::outs() << ", ";
    switch (t.dtype) {
    case PADDLE_F32:
      llvm::outs() << ((float *)t.data)[i];
      break;
    case PADDLE_F64:
      llvm::outs() << ((double *)t.data)[i];
      break;
    case PADDLE_I1:
      llvm::outs() << (((uint8_t *)t.data)[i] ? "true" : "false");
      break;
    case PADDLE_I8:
      llvm::outs() << (int)((int8_t *)t.data)[i];
      break;
    case PADDLE_I32:
      llvm::outs() << ((int32_t *)t.data)[i];
      break;
    case PADDLE_I64:
      llvm::outs() << ((int64_t *)t.data)[i];
      break;
    default:
      llvm::outs() << "?";
      break;
    }
  }
  llvm::outs() << "}\n";
}

/// Removes `--threads N` / `--threads=N` (or one dash) from argv and sets
/// the runtime's thread count; returns false after printing an error.
bool takeThreadsFlag(int &argc, char **argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--") {
      while (i < argc)
        argv[out++] = argv[i++];
      break;
    }
    llvm::StringRef flag = arg.starts_with("--")  ? arg.drop_front(2)
                           : arg.starts_with("-") ? arg.drop_front(1)
                                                  : llvm::StringRef();
    std::string value;
    if (flag == "threads") {
      if (i + 1 >= argc) {
        fail("--threads expects a count");
        return false;
      }
      value = argv[++i];
    } else if (flag.consume_front("threads=")) {
      value = flag.str();
    } else {
      argv[out++] = argv[i];
      continue;
    }
    int n = 0;
    if (llvm::StringRef(value).getAsInteger(10, n) || n < 1) {
      fail("--threads expects a count of at least 1, got '" + value + "'");
      return false;
    }
    if (paddle_status_t s = paddle_set_num_threads(n)) {
      std::string m = paddle_status_message(s);
      paddle_status_free(s);
      fail("--threads: " + m);
      return false;
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (!takeThreadsFlag(argc, argv))
    return 1;
  cl::ParseCommandLineOptions(argc, argv,
                              "paddle-run: JIT-compile and run a paddle "
                              "module on the CPU\n");

  int64_t limit = 0;
  if (!memoryLimit.empty() &&
      paddle_parse_byte_count(memoryLimit.c_str(), &limit) != 0)
    return fail("--memory-limit: '" + memoryLimit +
                "' is not a byte count (like 1048576, 512K, 16M or 2G)");

  llvm::Expected<paddle::PipelineFlags> flags = paddle::readPipelineFlags();
  if (!flags)
    return fail(llvm::toString(flags.takeError()));

  Runtime runtime;
  if (isSharedObject(inputFile)) {
    // A library is compiled already: its precision was chosen then.
    if (flags->precision != paddle::Precision::F32)
      return fail("--precision applies when compiling a module; '" + inputFile +
                  "' is a compiled library (use paddle-compile "
                  "--precision)");
    if (paddle_status_t s =
            paddle_executable_load(inputFile.c_str(), &runtime.executable))
      return fail(takeMessage(s));
  } else {
    DialectRegistry registry;
    paddle::registerAllDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    auto source = paddle::SourceModule::load(inputFile, context);
    if (!source)
      return fail(llvm::toString(source.takeError()));
    // paddle-run writes every result, and --bench and --concurrency call the
    // function repeatedly on the same inputs: run without donation.
    paddle::dropDonationRequests((*source)->get());
    paddle::JitOptions options;
    options.instrumentKernels = !tracePath.empty();
    options.compileThreads = compileThreads;
    flags->applyTo(options);
    auto jit = paddle::JitModule::create((*source)->get(), options);
    if (!jit)
      return fail(llvm::toString(jit.takeError()));
    auto executable = paddle::JitModule::toExecutable(std::move(*jit));
    if (!executable)
      return fail(llvm::toString(executable.takeError()));
    runtime.executable = *executable;
  }

  int32_t index = 0;
  if (paddle_status_t s = paddle_executable_find(runtime.executable,
                                                 functionName.c_str(), &index))
    return fail(takeMessage(s) +
                (functionName.empty() ? " with --function" : ""));
  const paddle_function_signature_t &f =
      *paddle_executable_function(runtime.executable, index);
  std::string name = f.name;

  if (inputs.size() != (size_t)f.num_inputs)
    return fail("function '" + name + "' takes " + llvm::Twine(f.num_inputs) +
                " inputs, " + llvm::Twine(inputs.size()) +
                " given with --input");
  TensorList args;
  for (const std::string &path : inputs) {
    paddle_tensor_t t{};
    if (paddle_status_t s = paddle_npy_read(path.c_str(), &t))
      return fail(takeMessage(s));
    args.tensors.push_back(t);
  }

  paddle_session_options_t options{};
  options.memory_limit_bytes = limit;
  options.enable_trace = !tracePath.empty();
  if (paddle_status_t s =
          paddle_session_create(runtime.executable, &options, &runtime.session))
    return fail(takeMessage(s));

  TensorList results;
  results.tensors.resize(f.num_outputs);
  auto call = [&](TensorList &into) -> paddle_status_t {
    for (auto &t : into.tensors)
      paddle_tensor_free(&t);
    return paddle_session_run(runtime.session, index, args.tensors.data(),
                              args.tensors.size(), into.tensors.data(),
                              into.tensors.size());
  };
  if (paddle_status_t s = call(results))
    return fail(takeMessage(s));

  if (concurrency > 0) {
    // Every thread runs the function a few times in the one session; all
    // results must equal the first run's, bit for bit.
    unsigned threads = concurrency;
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int round = 0; round < 4 && errors[t].empty(); ++round) {
          TensorList mine;
          mine.tensors.resize(f.num_outputs);
          if (paddle_status_t s = call(mine)) {
            errors[t] = takeMessage(s);
            break;
          }
          for (size_t r = 0; r < mine.tensors.size(); ++r)
            if (!sameTensor(mine.tensors[r], results.tensors[r]))
              errors[t] = "result " + std::to_string(r) + " of thread " +
                          std::to_string(t) +
                          " differs from the single-threaded run";
        }
      });
    for (auto &thread : pool)
      thread.join();
    for (const std::string &e : errors)
      if (!e.empty())
        return fail("concurrent runs: " + e);
    llvm::outs() << "concurrency " << threads << ": " << threads * 4
                 << " runs match\n";
  }

  if (benchRuns > 0) {
    std::vector<double> ms;
    for (unsigned i = 0; i < benchRuns; ++i) {
      auto start = std::chrono::steady_clock::now();
      paddle_status_t s = call(results);
      auto end = std::chrono::steady_clock::now();
      if (s) {
        std::string m = paddle_status_message(s);
        paddle_status_free(s);
        return fail(m);
      }
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    llvm::outs() << llvm::format(
        "bench %s: %u runs, median %.4f ms, min %.4f ms\n", name.c_str(),
        benchRuns.getValue(), median, ms.front());
  }

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + ec.message());
    for (size_t i = 0; i < results.tensors.size(); ++i) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, name + "_" + std::to_string(i) + ".npy");
      if (paddle_status_t s =
              paddle_npy_write(path.c_str(), &results.tensors[i])) {
        std::string m = paddle_status_message(s);
        paddle_status_free(s);
        return fail(m);
      }
    }
  } else if (benchRuns == 0) {
    for (size_t i = 0; i < results.tensors.size(); ++i)
      printTensor(results.tensors[i], i);
  }
  if (!tracePath.empty())
    if (paddle_status_t s =
            paddle_session_write_trace(runtime.session, tracePath.c_str()))
      return fail(takeMessage(s));
  return 0;
}
