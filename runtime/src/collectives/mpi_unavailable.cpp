//===- mpi_unavailable.cpp - paddle_mpi_comm_create without MPI -----------===//
//
// Built in place of mpi.cpp when CMake finds no MPI, so that programs link
// the same way and say why at run time.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"

extern "C" paddle_status_t paddle_mpi_comm_create(double, paddle_comm_t *out) {
  if (out)
    *out = nullptr;
  return paddle_status_create(
      PADDLE_UNSUPPORTED,
      "this runtime was built without MPI (install libmpich-dev and rebuild)");
}
