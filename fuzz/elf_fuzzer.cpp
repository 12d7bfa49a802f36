//===- elf_fuzzer.cpp - libFuzzer target for the shared-object check ------===//
//
// paddle_check_shared_object reads untrusted bytes (a file handed to
// paddle-run or paddle_executable_load) before dlopen sees them. Every input
// must give an OK or an error status, never a crash or an out-of-bounds read
// (built with AddressSanitizer by scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  paddle_status_free(paddle_check_shared_object(data, size, "input"));
  return 0;
}
