//===- device.h - the device interface (internal) -------------------------===//
//
// A device allocates memory, moves bytes between itself and the host and
// waits for its work. The CPU device is host memory; a CUDA device implements
// the same interface over streams and device memory (allocate = cudaMalloc,
// copies = cudaMemcpyAsync + synchronize), so sessions and executables do not
// change when it arrives.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_DEVICE_H
#define PADDLE_RUNTIME_DEVICE_H

#include "paddle_runtime/runtime.h"

#include <cstddef>
#include <string>

namespace paddle::runtime {

class Device {
public:
  virtual ~Device() = default;
  virtual paddle_device_kind_t kind() const = 0;
  /// "cpu:0", "cuda:1".
  virtual const std::string &name() const = 0;
  /// Null when out of memory; `alignment` is a power of two.
  virtual void *allocate(size_t bytes, size_t alignment) = 0;
  virtual void deallocate(void *pointer) = 0;
  virtual paddle_status_t copyToHost(void *host, const void *device,
                                     size_t bytes) = 0;
  virtual paddle_status_t copyFromHost(void *device, const void *host,
                                       size_t bytes) = 0;
  /// Waits for all work queued on the device.
  virtual paddle_status_t synchronize() = 0;
};

/// The host CPU (one instance per process is enough; it has no state).
Device &cpuDevice();

} // namespace paddle::runtime

struct paddle_device_s {
  paddle::runtime::Device *device;
};

#endif // PADDLE_RUNTIME_DEVICE_H
