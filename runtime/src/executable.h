//===- executable.h - compiled function tables (internal) -----------------===//

#ifndef PADDLE_RUNTIME_EXECUTABLE_H
#define PADDLE_RUNTIME_EXECUTABLE_H

#include "paddle_runtime/runtime.h"

#include <string>
#include <vector>

namespace paddle::runtime {
struct Executable {
  std::vector<paddle_exported_function_t> functions;
  /// Names of instrumented kernels, by id (empty without instrumentation).
  std::vector<std::string> kernelNames;
  void (*release)(void *) = nullptr;
  void *user = nullptr;
};
} // namespace paddle::runtime

struct paddle_executable_s : paddle::runtime::Executable {};

#endif // PADDLE_RUNTIME_EXECUTABLE_H
