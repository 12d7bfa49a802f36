//===- device.cpp - devices: the CPU --------------------------------------===//

#include "device.h"

#include <cstdlib>
#include <cstring>
#include <new>

using namespace paddle::runtime;

namespace {
class CpuDevice final : public Device {
public:
  paddle_device_kind_t kind() const override { return PADDLE_DEVICE_CPU; }
  const std::string &name() const override { return name_; }
  void *allocate(size_t bytes, size_t alignment) override {
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return aligned_alloc(alignment, rounded ? rounded : alignment);
  }
  void deallocate(void *pointer) override { free(pointer); }
  paddle_status_t copyToHost(void *host, const void *device,
                             size_t bytes) override {
    memcpy(host, device, bytes);
    return nullptr;
  }
  paddle_status_t copyFromHost(void *device, const void *host,
                               size_t bytes) override {
    memcpy(device, host, bytes);
    return nullptr;
  }
  paddle_status_t synchronize() override { return nullptr; }

private:
  std::string name_ = "cpu:0";
};
} // namespace

Device &paddle::runtime::cpuDevice() {
  static CpuDevice cpu;
  return cpu;
}

extern "C" paddle_status_t paddle_device_create(paddle_device_kind_t kind,
                                                int32_t ordinal,
                                                paddle_device_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_device_create: null output");
  *out = nullptr;
  switch (kind) {
  case PADDLE_DEVICE_CPU:
    if (ordinal != 0)
      return paddle_status_create(PADDLE_NOT_FOUND,
                                  "there is one CPU device (cpu:0); cpu:%d "
                                  "does not exist",
                                  ordinal);
    *out = new (std::nothrow) paddle_device_s{&cpuDevice()};
    return *out ? nullptr
                : paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                       "paddle_device_create: out of memory");
  case PADDLE_DEVICE_CUDA:
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                "cuda:%d: this runtime was built without CUDA "
                                "support",
                                ordinal);
  }
  return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                              "paddle_device_create: unknown device kind %d",
                              (int)kind);
}

extern "C" paddle_device_kind_t paddle_device_kind(paddle_device_t device) {
  return device->device->kind();
}

extern "C" const char *paddle_device_name(paddle_device_t device) {
  return device->device->name().c_str();
}

extern "C" void paddle_device_free(paddle_device_t device) { delete device; }
