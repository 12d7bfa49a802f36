//===- spmd_run.h - running an SPMD function on every device --*- C++ -*-===//
//
// The host side of an SPMD function (paddle_spmd_signature_t): it takes
// each device's block of the full inputs, runs the function once per
// device (threads of an in-process mesh, or this process's rank under
// MPI), and puts the devices' result blocks back together.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_SPMD_RUN_H
#define PADDLE_RUNTIME_SPMD_RUN_H

#include "paddle_runtime/collectives.h"
#include "paddle_runtime/runtime.h"

#include <string>
#include <vector>

namespace paddle_runtime {

/// A status with `message` (taken as it is, not as a format).
paddle_status_t error(paddle_status_code_t code, const std::string &message);

/// "mesh of shape [2, 2]".
std::string meshName(const paddle_spmd_signature_t &spmd);

/// The number of devices of the mesh.
int64_t meshDevices(const paddle_spmd_signature_t &spmd);

/// Runs function `index` of `session` on all devices of its mesh for the
/// full (global) `inputs`, and fills `outputs` (signature->num_outputs of
/// them, freed by the caller) with the full results.
///
/// In-process (`world` null): one thread per device on a new in-process
/// mesh whose collectives time out after `timeout_s`. Otherwise this
/// process is the device `paddle_comm_rank(world)` of a world of the
/// mesh's size (MPI): it runs its block, and every rank receives the full
/// results. A device that fails aborts the others; the error names it.
paddle_status_t runOnMesh(paddle_session_t session, int32_t index,
                          const paddle_function_signature_t &signature,
                          const paddle_tensor_t *inputs,
                          paddle_tensor_t *outputs, paddle_comm_t world,
                          double timeout_s);

} // namespace paddle_runtime

#endif // PADDLE_RUNTIME_SPMD_RUN_H
