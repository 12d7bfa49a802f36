//===- npy_fuzzer.cpp - libFuzzer target for the .npy reader -------------===//
//
// The .npy reader takes untrusted bytes. Every input must give a tensor or
// an error status, never a crash, a leak or an out-of-bounds read (built
// with AddressSanitizer by scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  paddle_tensor_t tensor{};
  paddle_status_t status = paddle_npy_parse(data, size, &tensor);
  if (status) {
    if (tensor.data)
      abort(); // an error must not hand out memory
    paddle_status_free(status);
    return 0;
  }
  // A parsed tensor's buffer holds exactly its elements: touch all of it.
  size_t bytes = (size_t)paddle_tensor_num_elements(&tensor) *
                 paddle_dtype_size(tensor.dtype);
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < bytes; ++i)
    sink ^= static_cast<uint8_t *>(tensor.data)[i];
  (void)sink;
  paddle_tensor_free(&tensor);
  return 0;
}
