//===- executable.cpp - function tables from the JIT or a shared object ---===//

#include "executable.h"
#include "file_io.h"
#include "paddle_runtime/async.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <new>
#include <string>

using paddle::runtime::Executable;

namespace {
paddle_status_t outOfMemory() {
  return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                              "out of memory creating an executable");
}

template <typename T> const T *symbol(void *handle, const char *name) {
  return reinterpret_cast<const T *>(dlsym(handle, name));
}
} // namespace

extern "C" paddle_status_t
paddle_executable_create(const paddle_exported_function_t *functions,
                         int32_t count, const char *const *kernelNames,
                         int32_t kernelCount, void (*release)(void *),
                         void *user, paddle_executable_t *out) {
  if (!out || (count > 0 && !functions) || count < 0 ||
      (kernelCount > 0 && !kernelNames) || kernelCount < 0)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_executable_create: invalid arguments");
  *out = nullptr;
  auto *exe = new (std::nothrow) paddle_executable_s();
  if (!exe)
    return outOfMemory();
  for (int32_t i = 0; i < count; ++i) {
    if (!functions[i].signature || !functions[i].entry) {
      delete exe;
      return paddle_status_create(
          PADDLE_INVALID_ARGUMENT,
          "paddle_executable_create: function %d has no signature or entry", i);
    }
    exe->functions.push_back(functions[i]);
  }
  for (int32_t i = 0; i < kernelCount; ++i)
    exe->kernelNames.emplace_back(kernelNames[i] ? kernelNames[i] : "kernel");
  exe->release = release;
  exe->user = user;
  *out = exe;
  return nullptr;
}

extern "C" paddle_status_t paddle_executable_load(const char *path,
                                                  paddle_executable_t *out) {
  if (!out || !path)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_executable_load: null argument");
  *out = nullptr;
  // Check the file before dlopen, which trusts its headers.
  {
    paddle::runtime::InputFile f;
    if (paddle_status_t s = f.open(path, "cannot load"))
      return s;
    // dlopen maps files: a library is a regular file (and never endless).
    if (!f.regular())
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "cannot load '%s': not a regular file", path);
    std::string bytes;
    std::string what = std::string("'") + path + "'";
    if (paddle_status_t s = f.readRest(bytes, f.remaining(), what.c_str()))
      return s;
    if (paddle_status_t s =
            paddle_check_shared_object(bytes.data(), bytes.size(), path))
      return s;
  }
  // dlopen searches the library path for a bare name; a user means a file.
  std::string file = strchr(path, '/') ? path : std::string("./") + path;
  dlerror();
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return paddle_status_create(PADDLE_IO_ERROR, "cannot load '%s': %s", path,
                                why ? why : "unknown error");
  }
  auto fail = [&](paddle_status_t status) {
    dlclose(handle);
    return status;
  };
  const auto *version = symbol<int32_t>(handle, "paddle_module_abi_version");
  const auto *functions =
      symbol<paddle_exported_function_t>(handle, "paddle_module_functions");
  const auto *count = symbol<int32_t>(handle, "paddle_module_function_count");
  const auto *imports =
      symbol<paddle_module_import_t>(handle, "paddle_module_imports");
  const auto *importCount =
      symbol<int32_t>(handle, "paddle_module_import_count");
  if (!version || !functions || !count || !imports || !importCount)
    return fail(paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "'%s' is not a module compiled with paddle-compile --emit so (it "
        "lacks paddle_module_abi_version, paddle_module_functions or "
        "paddle_module_imports)",
        path));
  if (*version != PADDLE_RUNTIME_ABI_VERSION)
    return fail(paddle_status_create(
        PADDLE_UNSUPPORTED,
        "'%s' was compiled for runtime ABI version %d; this runtime has "
        "version %d (recompile it with this paddle-compile)",
        path, *version, PADDLE_RUNTIME_ABI_VERSION));

  // Check every import before binding any, so a failure changes nothing.
  int32_t symbolCount = 0;
  const paddle_runtime_symbol_t *table = paddle_runtime_symbols(&symbolCount);
  std::vector<void *> addresses;
  for (int32_t i = 0; i < *importCount; ++i) {
    void *address = nullptr;
    for (int32_t k = 0; k < symbolCount && imports[i].name; ++k)
      if (strcmp(table[k].runtime_name, imports[i].name) == 0)
        address = table[k].address;
    if (!address || !imports[i].slot)
      return fail(paddle_status_create(
          PADDLE_UNSUPPORTED,
          "'%s' calls the runtime function '%s', which this runtime does not "
          "have",
          path, imports[i].name ? imports[i].name : "(null)"));
    addresses.push_back(address);
  }
  for (int32_t i = 0; i < *importCount; ++i)
    *imports[i].slot = addresses[i];

  // Optional: names of the kernels of an instrumented module.
  const auto *kernelNames =
      symbol<const char *>(handle, "paddle_module_kernel_names");
  const auto *kernelCount =
      symbol<int32_t>(handle, "paddle_module_kernel_count");
  paddle_status_t status = paddle_executable_create(
      functions, *count, kernelNames && kernelCount ? kernelNames : nullptr,
      kernelNames && kernelCount ? *kernelCount : 0,
      [](void *h) {
        // Workers may still be leaving the library's coroutines.
        paddle_async_wait_idle();
        dlclose(h);
      },
      handle, out);
  return status ? fail(status) : nullptr;
}

extern "C" int32_t
paddle_executable_function_count(paddle_executable_t executable) {
  return executable ? static_cast<int32_t>(executable->functions.size()) : 0;
}

extern "C" const paddle_function_signature_t *
paddle_executable_function(paddle_executable_t executable, int32_t index) {
  if (index < 0 || index >= paddle_executable_function_count(executable))
    return nullptr;
  return executable->functions[index].signature;
}

extern "C" paddle_status_t paddle_executable_find(paddle_executable_t exe,
                                                  const char *name,
                                                  int32_t *index) {
  if (!exe || !index)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_executable_find: null argument");
  std::string names;
  for (const auto &f : exe->functions)
    names += (names.empty() ? "" : ", ") + std::string(f.signature->name);
  int32_t n = paddle_executable_function_count(exe);
  if (!name || !*name) {
    if (n == 1) {
      *index = 0;
      return nullptr;
    }
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        n == 0 ? "the module has no public function"
               : "the module has several public functions (%s); choose one",
        names.c_str());
  }
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(exe->functions[i].signature->name, name) == 0) {
      *index = i;
      return nullptr;
    }
  return paddle_status_create(PADDLE_NOT_FOUND,
                              "no public function '%s' in the module (it "
                              "has: %s)",
                              name, names.c_str());
}

extern "C" void paddle_executable_free(paddle_executable_t executable) {
  if (!executable)
    return;
  if (executable->release)
    executable->release(executable->user);
  delete executable;
}
