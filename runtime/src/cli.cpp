//===- cli.cpp - the command line of compiled executables -----------------===//
//
// `paddle-compile --emit exe` links this main loop with the model: it reads
// .npy inputs, calls one exported function in a runtime session and writes
// the results, like paddle-run but without a compiler. A model compiled with
// --weights sidecar also takes `--weights W` (its weights file).
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {
int fail(const char *program, const std::string &message) {
  fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  return 1;
}

std::string takeMessage(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

struct Tensors {
  std::vector<paddle_tensor_t> list;
  ~Tensors() {
    for (auto &t : list)
      paddle_tensor_free(&t);
  }
};
} // namespace

extern "C" int paddle_cli_main(int argc, char **argv,
                               const paddle_exported_function_t *functions,
                               int32_t count,
                               paddle_load_weights_fn_t load_weights,
                               const char *const *kernelNames,
                               int32_t kernelCount) {
  const char *program = argc > 0 ? argv[0] : "model";
  std::string name, outputDir, weights, tracePath;
  int64_t memoryLimit = 0;
  std::vector<std::string> inputs;
  long bench = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc)
        return nullptr;
      (void)flag;
      return argv[++i];
    };
    const char *v = nullptr;
    if (arg == "--help" || arg == "-h") {
      printf("usage: %s [--function F] --input a.npy ... [--output-dir D] "
             "[--bench N] [--threads N] [--memory-limit BYTES] "
             "[--trace T.json]%s\nfunctions:",
             program, load_weights ? " [--weights W]" : "");
      for (int32_t f = 0; f < count; ++f)
        printf(" %s", functions[f].signature->name);
      printf("\n");
      return 0;
    }
    if (arg == "--function" && (v = value("--function")))
      name = v;
    else if (arg == "--input" && (v = value("--input")))
      inputs.push_back(v);
    else if (arg == "--output-dir" && (v = value("--output-dir")))
      outputDir = v;
    else if (arg == "--trace" && (v = value("--trace")))
      tracePath = v;
    else if (arg == "--memory-limit" && (v = value("--memory-limit"))) {
      if (paddle_parse_byte_count(v, &memoryLimit) != 0)
        return fail(program, "--memory-limit: '" + std::string(v) +
                                 "' is not a byte count (like 1048576, 512K, "
                                 "16M or 2G)");
    } else if (arg == "--weights" && (v = value("--weights"))) {
      if (!load_weights)
        return fail(program, "this model's weights are embedded; it takes no "
                             "--weights file");
      weights = v;
    } else if (arg == "--bench" && (v = value("--bench"))) {
      char *end = nullptr;
      bench = strtol(v, &end, 10);
      if (!*v || *end || bench < 0)
        return fail(program,
                    "--bench expects a count, got '" + std::string(v) + "'");
    } else if (arg == "--threads" && (v = value("--threads"))) {
      char *end = nullptr;
      long threads = strtol(v, &end, 10);
      if (!*v || *end || threads < 1 || threads > INT32_MAX)
        return fail(program, "--threads expects a count of at least 1, got '" +
                                 std::string(v) + "'");
      if (paddle_status_t s = paddle_set_num_threads((int32_t)threads))
        return fail(program, "--threads: " + takeMessage(s));
    } else
      return fail(program,
                  "unknown or incomplete argument '" + arg + "' (see --help)");
  }

  // One session, as paddle-run uses: the same checks, limits and traces.
  struct Runtime {
    paddle_executable_t executable = nullptr;
    paddle_session_t session = nullptr;
    ~Runtime() {
      paddle_session_free(session);
      paddle_executable_free(executable);
    }
  } runtime;
  if (paddle_status_t s =
          paddle_executable_create(functions, count, kernelNames, kernelCount,
                                   nullptr, nullptr, &runtime.executable))
    return fail(program, takeMessage(s));
  int32_t index = 0;
  if (paddle_status_t s =
          paddle_executable_find(runtime.executable, name.c_str(), &index))
    return fail(program,
                takeMessage(s) + (name.empty() ? " with --function" : ""));
  paddle_session_options_t options{};
  options.memory_limit_bytes = memoryLimit;
  options.enable_trace = !tracePath.empty();
  if (paddle_status_t s =
          paddle_session_create(runtime.executable, &options, &runtime.session))
    return fail(program, takeMessage(s));
  const paddle_exported_function_t *fn = &functions[index];
  const paddle_function_signature_t *sig = fn->signature;
  if ((int32_t)inputs.size() != sig->num_inputs)
    return fail(program, std::string("function '") + sig->name + "' takes " +
                             std::to_string(sig->num_inputs) + " inputs, " +
                             std::to_string(inputs.size()) +
                             " given with --input");
  // An explicit weights file replaces the default one (`<program>.weights`),
  // which the module otherwise loads before its first call.
  if (!weights.empty())
    if (paddle_status_t s = load_weights(weights.c_str()))
      return fail(program, takeMessage(s));
  Tensors args;
  for (const std::string &path : inputs) {
    paddle_tensor_t t{};
    if (paddle_status_t s = paddle_npy_read(path.c_str(), &t))
      return fail(program, takeMessage(s));
    args.list.push_back(t);
  }
  Tensors results;
  results.list.resize(sig->num_outputs);
  auto call = [&]() -> paddle_status_t {
    for (auto &t : results.list)
      paddle_tensor_free(&t);
    return paddle_session_run(runtime.session, index, args.list.data(),
                              sig->num_inputs, results.list.data(),
                              sig->num_outputs);
  };
  if (paddle_status_t s = call())
    return fail(program, takeMessage(s));
  if (bench > 0) {
    std::vector<double> ms;
    for (long i = 0; i < bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      paddle_status_t s = call();
      auto end = std::chrono::steady_clock::now();
      if (s)
        return fail(program, takeMessage(s));
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    printf("bench %s: %ld runs, median %.4f ms, min %.4f ms\n", sig->name,
           bench, median, ms.front());
  }
  if (!outputDir.empty()) {
    mkdir(outputDir.c_str(), 0777); // an existing folder is fine
    for (int32_t o = 0; o < sig->num_outputs; ++o) {
      std::string path =
          outputDir + "/" + sig->name + "_" + std::to_string(o) + ".npy";
      if (paddle_status_t s = paddle_npy_write(path.c_str(), &results.list[o]))
        return fail(program, takeMessage(s));
    }
  }
  if (!tracePath.empty())
    if (paddle_status_t s =
            paddle_session_write_trace(runtime.session, tracePath.c_str()))
      return fail(program, takeMessage(s));
  return 0;
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
