//===- Signature.h - runtime signatures of a module's functions --*- C++
//-*-===//
//
// The public functions of a paddle module, described in the runtime's terms
// (paddle_tensor_spec_t), shared by the JIT and by paddle-compile so both
// call compiled code with the same checks.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_EXECUTION_SIGNATURE_H
#define PADDLE_EXECUTION_SIGNATURE_H

#include "paddle_runtime/runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::paddle {

/// One public function: its name and tensor types, and (once compiled) its
/// packed entry point.
struct FunctionSignature {
  std::string name;
  std::vector<paddle_tensor_spec_t> inputs, outputs;
  /// Donated arguments (`paddle.aliasing_output = N` on the argument): the
  /// call writes result N of the paddle-level function into argument
  /// `input`'s buffer and no longer returns it, so `outputs` omits it.
  /// Sorted by `input`; `output` indexes the paddle-level results.
  struct Alias {
    int64_t input;
    int64_t output;
  };
  std::vector<Alias> aliases;
  /// An SPMD function (`paddle.mesh`): the mesh shape (empty otherwise)
  /// and how each input and output is split; `inputs` and `outputs` are
  /// then the per-device types.
  std::vector<int64_t> mesh;
  std::vector<paddle_tensor_sharding_t> inputShardings, outputShardings;
  paddle_function_signature_t signature{};
  paddle_packed_fn_t entry = nullptr;

  /// A runtime view of this signature; valid while this object lives and is
  /// not moved.
  paddle_function_signature_t view() const {
    paddle_function_signature_t v = {
        name.c_str(),   static_cast<int32_t>(inputs.size()),
        inputs.data(),  static_cast<int32_t>(outputs.size()),
        outputs.data(), nullptr};
    if (!mesh.empty()) {
      spmd = {};
      spmd.mesh_rank = static_cast<int32_t>(mesh.size());
      for (size_t a = 0; a < mesh.size(); ++a)
        spmd.mesh_shape[a] = mesh[a];
      spmd.inputs = inputShardings.data();
      spmd.outputs = outputShardings.data();
      v.spmd = &spmd;
    }
    return v;
  }

private:
  mutable paddle_spmd_signature_t spmd{};
};

/// The signatures of the public functions of `module`, in order. Every
/// argument and result must be a ranked tensor of a supported element type;
/// errors name the function and the argument. A module without public
/// functions is an error.
llvm::Expected<std::vector<FunctionSignature>>
collectSignatures(ModuleOp module);

/// Partitions `module` for its device mesh (paddle-partition) when it has
/// one, so that its signatures are those of the per-device program. The
/// diagnostics go to the context's handlers, as the caller's pipeline's do.
llvm::Error partitionForMesh(ModuleOp module);

/// Removes the SPMD signature attributes (paddle.mesh, paddle.sharding)
/// once collectSignatures has read them: LLVM translation does not know
/// them.
void dropSpmdSignatureAttributes(ModuleOp module);

/// The kernel names paddle-instrument-kernels recorded (by id), removed
/// from the module so that it translates to LLVM IR; empty without them.
std::vector<std::string> takeKernelNames(ModuleOp module);

} // namespace mlir::paddle

#endif // PADDLE_EXECUTION_SIGNATURE_H
