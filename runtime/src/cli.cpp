//===- cli.cpp - the command line that runs a compiled function -----------===//
//
// paddle-run and the executables of `paddle-compile --emit exe` run a
// function the same way, through paddle_cli_run: one parser for the run
// flags, one loop for reading inputs, calling, benchmarking and writing
// results. What differs is where the executable comes from, which the
// host supplies from the arguments the driver leaves (paddle-run: a module
// and compile flags; an executable: its function table and --weights).
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"
#include "paddle_runtime/runtime.h"
#include "spmd_run.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <vector>

namespace {

// Bounds of the counting flags: a count past them is a typo, not a plan
// (and a bench run keeps one number per run).
constexpr int64_t kMaxBenchRuns = 10000000;
constexpr int64_t kMaxConcurrency = 1024;
constexpr int64_t kMaxThreads = 4096;

std::string programName(int argc, char **argv) {
  std::string p = argc > 0 && argv[0] ? argv[0] : "paddle";
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string takeMessage(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

struct Tensors {
  std::vector<paddle_tensor_t> list;
  explicit Tensors(size_t n = 0) : list(n) {}
  Tensors(const Tensors &) = delete;
  ~Tensors() { clear(); }
  void clear() {
    for (auto &t : list)
      paddle_tensor_free(&t);
  }
};

/// Owns the executable and session on every exit path.
struct Runtime {
  paddle_executable_t executable = nullptr;
  paddle_session_t session = nullptr;
  ~Runtime() {
    paddle_session_free(session);
    paddle_executable_free(executable);
  }
};

struct RunFlags {
  std::string function, outputDir, trace, memoryLimit;
  std::vector<std::string> inputs;
  int64_t bench = 0, concurrency = 0;
  /// --mesh N: run an SPMD function on N in-process devices.
  int64_t mesh = 0;
  double collectiveTimeout = 300;
};

constexpr int64_t kMaxMeshDevices = 1024;

/// Parses a whole number in [min, max] (no sign, no suffix, no overflow).
bool parseCount(const std::string &text, int64_t min, int64_t max,
                int64_t &value) {
  if (text.empty() || text.size() > 19)
    return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max)
    return false;
  value = v;
  return true;
}

const char *const kUsage =
    "Run flags:\n"
    "  --function F        the function to run (optional when there is one)\n"
    "  --input A.npy       an input, in order (repeat the flag)\n"
    "  --output-dir D      write results as D/<F>_<i>.npy, all or none "
    "(without it\n"
    "                      small results are printed)\n"
    "  --bench N           run N more times; print the median and min ms\n"
    "  --threads N         threads for parallel loops (default: "
    "PADDLE_NUM_THREADS,\n"
    "                      else the number of cores)\n"
    "  --concurrency N     also run from N threads at once in one session and\n"
    "                      check every result equals the first run's\n"
    "  --memory-limit B    bytes one call may hold at once (suffixes K, M, "
    "G)\n"
    "  --trace T.json      write per-call and per-kernel timings (Chrome "
    "trace)\n"
    "  --mesh N            run a function partitioned for a device mesh on N\n"
    "                      in-process devices (under mpirun: one per "
    "process)\n"
    "  --collective-timeout S  seconds a device waits for the others in a\n"
    "                      collective before failing (default 300)\n";

class Driver {
public:
  Driver(int argc, char **argv) : argc(argc), argv(argv) {
    program = programName(argc, argv);
  }

  int run(paddle_cli_host_fn_t host, void *user);

private:
  int fail(const std::string &message) {
    fprintf(stderr, "%s: error: %s\n", program.c_str(), message.c_str());
    return 1;
  }
  /// Parses the run flags; returns -1 to go on, else the exit code.
  int parseFlags(std::vector<char *> &rest, bool &help);
  int callAndCheck(paddle_session_t session, int32_t index,
                   const paddle_function_signature_t &sig);
  /// Chooses how an SPMD function runs (--mesh or mpirun); -1 to go on.
  int setUpMesh(const paddle_function_signature_t &sig);

  int argc;
  char **argv;
  std::string program;
  RunFlags flags;
  bool functionGiven = false;
  Tensors args;
  /// Under mpirun: this process's communicator; only rank 0 writes.
  paddle_comm_t world = nullptr;
  bool writer = true;

public:
  ~Driver() { paddle_comm_release(world); }
};

int Driver::parseFlags(std::vector<char *> &rest, bool &help) {
  rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      while (i < argc)
        rest.push_back(argv[i++]);
      break;
    }
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      help = true;
      rest.push_back(argv[i]);
      continue;
    }
    // --flag value, --flag=value, and one dash as LLVM's tools take them.
    std::string name, value;
    bool inlineValue = false;
    if (arg.size() > 1 && arg[0] == '-') {
      name = arg.substr(arg[1] == '-' ? 2 : 1);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
        inlineValue = true;
      }
    }
    static const char *const kTaken[] = {"function",     "input",
                                         "output-dir",   "bench",
                                         "threads",      "concurrency",
                                         "memory-limit", "trace",
                                         "mesh",         "collective-timeout"};
    if (std::find_if(std::begin(kTaken), std::end(kTaken), [&](const char *f) {
          return name == f;
        }) == std::end(kTaken)) {
      rest.push_back(argv[i]);
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= argc)
        return fail("--" + name + " expects a value (see --help)");
      value = argv[++i];
    }
    int64_t n = 0;
    if (name == "function") {
      flags.function = value;
      functionGiven = true;
    } else if (name == "input")
      flags.inputs.push_back(value);
    else if (name == "output-dir")
      flags.outputDir = value;
    else if (name == "trace")
      flags.trace = value;
    else if (name == "memory-limit")
      flags.memoryLimit = value;
    else if (name == "bench") {
      if (!parseCount(value, 0, kMaxBenchRuns, flags.bench))
        return fail("--bench expects a number of runs from 0 to " +
                    std::to_string(kMaxBenchRuns) + ", got '" + value + "'");
    } else if (name == "concurrency") {
      if (!parseCount(value, 0, kMaxConcurrency, flags.concurrency))
        return fail("--concurrency expects a number of threads from 0 to " +
                    std::to_string(kMaxConcurrency) + ", got '" + value + "'");
    } else if (name == "mesh") {
      if (!parseCount(value, 1, kMaxMeshDevices, flags.mesh))
        return fail("--mesh expects a number of devices from 1 to " +
                    std::to_string(kMaxMeshDevices) + ", got '" + value + "'");
    } else if (name == "collective-timeout") {
      char *end = nullptr;
      double t = strtod(value.c_str(), &end);
      if (value.empty() || *end || !(t > 0) || t > 86400)
        return fail("--collective-timeout expects seconds above 0 (at most "
                    "86400), got '" +
                    value + "'");
      flags.collectiveTimeout = t;
    } else if (name == "threads") {
      if (!parseCount(value, 1, kMaxThreads, n))
        return fail("--threads expects a count from 1 to " +
                    std::to_string(kMaxThreads) + ", got '" + value + "'");
      if (paddle_status_t s = paddle_set_num_threads((int32_t)n))
        return fail("--threads: " + takeMessage(s));
    }
  }
  if (functionGiven && flags.function.empty())
    return fail("--function expects a function name, got ''");
  return -1;
}

bool sameTensor(const paddle_tensor_t &a, const paddle_tensor_t &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int32_t d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d])
      return false;
  size_t bytes = paddle_tensor_num_elements(&a) * paddle_dtype_size(a.dtype);
  return bytes == 0 || memcmp(a.data, b.data, bytes) == 0;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = mantissa * (1.0f / (1 << 24)); // subnormal or zero
  else if (exponent == 31) {
    uint32_t bits = 0x7f800000u | (mantissa << 13);
    memcpy(&value, &bits, 4);
  } else {
    uint32_t bits = ((exponent + 112) << 23) | (mantissa << 13);
    memcpy(&value, &bits, 4);
  }
  return sign ? -value : value;
}

void printTensor(const paddle_tensor_t &t, int index) {
  printf("result %d: %s [", index, paddle_dtype_name(t.dtype));
  for (int32_t d = 0; d < t.rank; ++d)
    printf("%s%" PRId64, d ? ", " : "", t.shape[d]);
  printf("]");
  int64_t n = paddle_tensor_num_elements(&t);
  if (n > 64) {
    printf(" (%" PRId64 " elements; use --output-dir to save)\n", n);
    return;
  }
  printf(" = {");
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      printf(", ");
    switch (t.dtype) {
    case PADDLE_F32:
      printf("%e", ((const float *)t.data)[i]);
      break;
    case PADDLE_F64:
      printf("%e", ((const double *)t.data)[i]);
      break;
    case PADDLE_F16:
      printf("%e", halfToFloat(((const uint16_t *)t.data)[i]));
      break;
    case PADDLE_BF16: {
      uint32_t bits = (uint32_t)((const uint16_t *)t.data)[i] << 16;
      float f;
      memcpy(&f, &bits, 4);
      printf("%e", f);
      break;
    }
    case PADDLE_I1:
      printf("%s", ((const uint8_t *)t.data)[i] ? "true" : "false");
      break;
    case PADDLE_I8:
      printf("%d", (int)((const int8_t *)t.data)[i]);
      break;
    case PADDLE_I32:
      printf("%d", ((const int32_t *)t.data)[i]);
      break;
    case PADDLE_I64:
      printf("%" PRId64, ((const int64_t *)t.data)[i]);
      break;
    default:
      printf("?");
      break;
    }
  }
  printf("}\n");
}

/// mkdir -p; false with errno set.
bool makeFolders(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return true;
    errno = ENOTDIR;
    return false;
  }
  size_t slash = path.find_last_of('/', path.size() > 1 ? path.size() - 2
                                                        : std::string::npos);
  if (slash != std::string::npos && slash > 0 &&
      !makeFolders(path.substr(0, slash)))
    return false;
  return mkdir(path.c_str(), 0777) == 0 || errno == EEXIST;
}

int Driver::run(paddle_cli_host_fn_t host, void *user) {
  std::vector<char *> rest;
  bool help = false;
  if (int rc = parseFlags(rest, help); rc >= 0)
    return rc;
  paddle_cli_run_options_t options{};
  options.trace = !flags.trace.empty();
  Runtime runtime;
  if (help) {
    printf("%s", kUsage);
    fflush(stdout);
  }
  rest.push_back(nullptr);
  if (host(user, (int)rest.size() - 1, rest.data(), &options,
           &runtime.executable) != 0)
    return 1;
  if (help)
    return 0;
  if (!runtime.executable)
    return fail("no executable to run");

  int64_t memoryLimit = 0;
  if (!flags.memoryLimit.empty() &&
      paddle_parse_byte_count(flags.memoryLimit.c_str(), &memoryLimit) != 0)
    return fail("--memory-limit: '" + flags.memoryLimit +
                "' is not a byte count (like 1048576, 512K, 16M or 2G)");
  int32_t index = 0;
  if (paddle_status_t s = paddle_executable_find(
          runtime.executable, flags.function.c_str(), &index))
    return fail(takeMessage(s) +
                (flags.function.empty() ? " with --function" : ""));
  const paddle_function_signature_t &sig =
      *paddle_executable_function(runtime.executable, index);
  if ((int32_t)flags.inputs.size() != sig.num_inputs)
    return fail(std::string("function '") + sig.name + "' takes " +
                std::to_string(sig.num_inputs) + " inputs, " +
                std::to_string(flags.inputs.size()) + " given with --input");
  for (const std::string &path : flags.inputs) {
    paddle_tensor_t t{};
    if (paddle_status_t s = paddle_npy_read(path.c_str(), &t))
      return fail(takeMessage(s));
    args.list.push_back(t);
  }
  if (int rc = setUpMesh(sig); rc >= 0)
    return rc;
  paddle_session_options_t sessionOptions{};
  sessionOptions.memory_limit_bytes = memoryLimit;
  sessionOptions.enable_trace = options.trace;
  if (paddle_status_t s = paddle_session_create(
          runtime.executable, &sessionOptions, &runtime.session))
    return fail(takeMessage(s));
  return callAndCheck(runtime.session, index, sig);
}

int Driver::setUpMesh(const paddle_function_signature_t &sig) {
  if (!sig.spmd) {
    if (flags.mesh)
      return fail(std::string("--mesh: function '") + sig.name +
                  "' has no device mesh (a module with shard annotations "
                  "has one)");
    return -1;
  }
  int64_t devices = paddle_runtime::meshDevices(*sig.spmd);
  std::string mesh = paddle_runtime::meshName(*sig.spmd);
  if (flags.concurrency > 0)
    return fail("--concurrency is not supported for a function on a device "
                "mesh");
  if (flags.mesh) {
    if (flags.mesh != devices)
      return fail(std::string("function '") + sig.name +
                  "' is partitioned for a " + mesh + " (" +
                  std::to_string(devices) + " devices), --mesh " +
                  std::to_string(flags.mesh) + " given");
    return -1;
  }
  if (!paddle_mpi_launched())
    return fail(std::string("function '") + sig.name + "' runs on a " + mesh +
                ": give --mesh " + std::to_string(devices) +
                " (devices in this process) or run it under mpirun -np " +
                std::to_string(devices));
  if (paddle_status_t s = paddle_mpi_world(flags.collectiveTimeout, &world)) {
    bool missing = paddle_status_code(s) == PADDLE_UNSUPPORTED;
    std::string why = takeMessage(s);
    return fail(missing ? why + "; run the mesh in this process with --mesh " +
                              std::to_string(devices)
                        : why);
  }
  writer = paddle_comm_rank(world) == 0;
  if (paddle_comm_size(world) != devices)
    return fail(std::string("function '") + sig.name +
                "' is partitioned for a " + mesh + " (" +
                std::to_string(devices) + " devices), but mpirun started " +
                std::to_string(paddle_comm_size(world)) + " processes");
  return -1;
}

int Driver::callAndCheck(paddle_session_t session, int32_t index,
                         const paddle_function_signature_t &sig) {
  auto call = [&](Tensors &into) -> paddle_status_t {
    into.clear();
    if (sig.spmd)
      return paddle_runtime::runOnMesh(session, index, sig, args.list.data(),
                                       into.list.data(), world,
                                       flags.collectiveTimeout);
    return paddle_session_run(session, index, args.list.data(),
                              (int32_t)args.list.size(), into.list.data(),
                              (int32_t)into.list.size());
  };
  Tensors results(sig.num_outputs);
  if (paddle_status_t s = call(results))
    return fail(takeMessage(s));

  if (flags.concurrency > 0) {
    // Every thread runs the function a few times in the one session; all
    // results must equal the first run's, bit for bit.
    size_t threads = (size_t)flags.concurrency;
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    try {
      for (size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          try {
            for (int round = 0; round < 4 && errors[t].empty(); ++round) {
              Tensors mine(sig.num_outputs);
              if (paddle_status_t s = call(mine)) {
                errors[t] = takeMessage(s);
                break;
              }
              for (size_t r = 0; r < mine.list.size(); ++r)
                if (!sameTensor(mine.list[r], results.list[r]))
                  errors[t] = "result " + std::to_string(r) + " of thread " +
                              std::to_string(t) +
                              " differs from the single-threaded run";
            }
          } catch (const std::bad_alloc &) {
            errors[t] = "out of memory";
          }
        });
    } catch (const std::system_error &e) {
      errors[pool.size()] = std::string("cannot start a thread: ") + e.what();
    }
    for (auto &thread : pool)
      thread.join();
    for (const std::string &e : errors)
      if (!e.empty())
        return fail("concurrent runs: " + e);
    printf("concurrency %zu: %zu runs match\n", threads, threads * 4);
  }

  if (flags.bench > 0) {
    std::vector<double> ms;
    ms.reserve((size_t)flags.bench);
    for (int64_t i = 0; i < flags.bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      paddle_status_t s = call(results);
      auto end = std::chrono::steady_clock::now();
      if (s)
        return fail(takeMessage(s));
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    if (writer)
      printf("bench %s: %" PRId64 " runs, median %.4f ms, min %.4f ms\n",
             sig.name, flags.bench, median, ms.front());
  }

  if (!writer)
    return 0;
  if (!flags.outputDir.empty()) {
    if (!makeFolders(flags.outputDir))
      return fail("cannot create '" + flags.outputDir +
                  "': " + strerror(errno));
    std::vector<std::string> paths;
    for (int32_t o = 0; o < sig.num_outputs; ++o)
      paths.push_back(flags.outputDir + "/" + sig.name + "_" +
                      std::to_string(o) + ".npy");
    std::vector<const char *> pathPointers;
    for (const std::string &p : paths)
      pathPointers.push_back(p.c_str());
    if (paddle_status_t s = paddle_npy_write_all(
            pathPointers.data(), results.list.data(), sig.num_outputs))
      return fail(takeMessage(s));
  } else if (flags.bench == 0) {
    for (int32_t o = 0; o < sig.num_outputs; ++o)
      printTensor(results.list[o], o);
  }
  fflush(stdout);
  if (!flags.trace.empty())
    if (paddle_status_t s =
            paddle_session_write_trace(session, flags.trace.c_str()))
      return fail(takeMessage(s));
  return 0;
}

/// The host of a compiled executable: its own function table, and
/// --weights W where the weights are in a file.
struct ModuleHost {
  const paddle_exported_function_t *functions;
  int32_t count;
  paddle_load_weights_fn_t loadWeights;
  const char *const *kernelNames;
  int32_t kernelCount;

  static int make(void *user, int argc, char **argv,
                  const paddle_cli_run_options_t *, paddle_executable_t *out) {
    auto *self = static_cast<ModuleHost *>(user);
    std::string program = programName(argc, argv);
    std::string weights;
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-help" || arg == "-h") {
        printf("usage: %s [run flags]%s\n", program.c_str(),
               self->loadWeights
                   ? " [--weights W]\n  --weights W         load the "
                     "weights from W (default: this program's path + "
                     "\".weights\")"
                   : "");
        printf("functions:");
        for (int32_t f = 0; f < self->count; ++f)
          printf(" %s", self->functions[f].signature->name);
        printf("\n");
        return 0;
      }
      if ((arg == "--weights" || arg == "-weights") && i + 1 < argc &&
          self->loadWeights) {
        weights = argv[++i];
        continue;
      }
      if (arg == "--weights" && !self->loadWeights) {
        fprintf(stderr,
                "%s: error: this model's weights are embedded; it takes no "
                "--weights file\n",
                program.c_str());
        return 1;
      }
      fprintf(stderr,
              "%s: error: unknown or incomplete argument '%s' (see "
              "--help)\n",
              program.c_str(), arg.c_str());
      return 1;
    }
    // An explicit weights file replaces the default one
    // (`<program>.weights`), which the module otherwise loads before its
    // first call.
    if (!weights.empty())
      if (paddle_status_t s = self->loadWeights(weights.c_str())) {
        fprintf(stderr, "%s: error: %s\n", program.c_str(),
                takeMessage(s).c_str());
        return 1;
      }
    if (paddle_status_t s = paddle_executable_create(
            self->functions, self->count, self->kernelNames, self->kernelCount,
            nullptr, nullptr, out)) {
      fprintf(stderr, "%s: error: %s\n", program.c_str(),
              takeMessage(s).c_str());
      return 1;
    }
    return 0;
  }
};

} // namespace

extern "C" int paddle_cli_run(int argc, char **argv, paddle_cli_host_fn_t host,
                              void *user) {
  if (argc < 1 || !argv || !host) {
    fprintf(stderr, "paddle_cli_run: no arguments or no host\n");
    return 1;
  }
  // Inputs, results and traces are allocated from what the user passes; an
  // allocation that fails is an error message, not std::terminate.
  try {
    Driver driver(argc, argv);
    return driver.run(host, user);
  } catch (const std::bad_alloc &) {
    fprintf(stderr, "%s: error: out of memory\n",
            programName(argc, argv).c_str());
    return 1;
  }
}

extern "C" int paddle_cli_main(int argc, char **argv,
                               const paddle_exported_function_t *functions,
                               int32_t count,
                               paddle_load_weights_fn_t load_weights,
                               const char *const *kernelNames,
                               int32_t kernelCount) {
  ModuleHost host{functions, count, load_weights, kernelNames, kernelCount};
  return paddle_cli_run(argc, argv, ModuleHost::make, &host);
}

extern "C" int paddle_parse_byte_count(const char *text, int64_t *bytes) {
  if (!text || !*text || !bytes)
    return -1;
  int64_t value = 0;
  const char *p = text;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (value > (INT64_MAX - (*p - '0')) / 10)
      return -1;
    value = value * 10 + (*p - '0');
  }
  if (p == text)
    return -1;
  int shift = 0;
  switch (*p) {
  case '\0':
    break;
  case 'k':
  case 'K':
    shift = 10;
    break;
  case 'm':
  case 'M':
    shift = 20;
    break;
  case 'g':
  case 'G':
    shift = 30;
    break;
  default:
    return -1;
  }
  if (*p && p[1])
    return -1;
  if (value > (INT64_MAX >> shift))
    return -1;
  *bytes = value << shift;
  return 0;
}
