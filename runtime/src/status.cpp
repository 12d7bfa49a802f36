//===- status.cpp - runtime status objects --------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

struct paddle_status_s {
  paddle_status_code_t code;
  std::string message;
};

// Returned when a status itself cannot be allocated; never freed.
static paddle_status_s outOfMemoryStatus{PADDLE_OUT_OF_MEMORY,
                                         "out of memory creating a status"};

extern "C" paddle_status_t paddle_status_create(paddle_status_code_t code,
                                                const char *format, ...) {
  // Failing to allocate a status must still report an error, not success.
  auto *status = new (std::nothrow) paddle_status_s;
  if (!status)
    return &outOfMemoryStatus;
  status->code = code == PADDLE_OK ? PADDLE_INTERNAL : code;
  va_list args;
  va_start(args, format);
  char buffer[1024];
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  status->message = buffer;
  return status;
}

extern "C" paddle_status_code_t paddle_status_code(paddle_status_t status) {
  return status ? status->code : PADDLE_OK;
}

extern "C" const char *paddle_status_message(paddle_status_t status) {
  return status ? status->message.c_str() : "ok";
}

extern "C" void paddle_status_free(paddle_status_t status) {
  if (status != &outOfMemoryStatus)
    delete status;
}
