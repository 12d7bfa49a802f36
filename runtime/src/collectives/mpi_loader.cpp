//===- mpi_loader.cpp - the MPI backend, linked in or loaded on demand ----===//
//
// paddle_mpi_world: paddle_mpi_comm_create where the program links
// paddle_runtime_mpi (SPMD executables); elsewhere (paddle-run, the Python
// extension) the same backend built as a module, loaded only when a run
// needs it, so that MPI and its transport (UCX installs signal handlers as
// it loads) never load in a run that does not use them.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>

#pragma weak paddle_mpi_comm_create

namespace {

using CreateFn = paddle_status_t (*)(double, paddle_comm_t *);

/// The backend's paddle_mpi_comm_create, or null with `why`.
CreateFn loadBackend(std::string &why) {
  if (&paddle_mpi_comm_create)
    return paddle_mpi_comm_create;
  const char *path = getenv("PADDLE_RUNTIME_MPI_LIBRARY");
#ifdef PADDLE_RUNTIME_MPI_MODULE
  if (!path || !*path)
    path = PADDLE_RUNTIME_MPI_MODULE;
#endif
  if (!path || !*path) {
    why = "this program was built without MPI";
    return nullptr;
  }
  // The module's runtime symbols resolve against the object that holds
  // this runtime: a program exports them; a library loaded with
  // RTLD_LOCAL (a Python extension) must first be made global.
  Dl_info self;
  if (dladdr(reinterpret_cast<void *>(&paddle_comm_send), &self) &&
      self.dli_fname)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  void *module = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!module) {
    const char *error = dlerror();
    why = std::string("cannot load the MPI backend: ") + (error ? error : path);
    return nullptr;
  }
  auto fn = reinterpret_cast<CreateFn>(dlsym(module, "paddle_mpi_comm_create"));
  if (!fn)
    why = std::string("'") + path + "' has no paddle_mpi_comm_create";
  return fn;
}

} // namespace

extern "C" int paddle_mpi_launched(void) {
  return getenv("PMI_RANK") || getenv("PMI_SIZE") ||
         getenv("OMPI_COMM_WORLD_SIZE");
}

extern "C" paddle_status_t paddle_mpi_world(double timeout_s,
                                            paddle_comm_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_mpi_world: null out");
  *out = nullptr;
  static std::mutex mu;
  static CreateFn create = nullptr;
  static std::string why;
  std::lock_guard<std::mutex> lock(mu);
  if (!create && why.empty())
    create = loadBackend(why);
  if (!create)
    return paddle_status_create(PADDLE_UNSUPPORTED, "%s", why.c_str());
  return create(timeout_s, out);
}
