//===- Target.h - the target a module is compiled for ------------*- C++
//-*-===//
//
// A module's `paddle.target` attribute (#paddle.target, PaddleTarget.td) names
// the device, holds its cost-model spec and says how code is generated for
// it. Passes that need the device read it from there (lookupTarget); the
// pipelines attach it first (paddle-set-target), from the target options
// declared once below. docs/architecture.md, "Targets".
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_DIALECT_PADDLE_IR_TARGET_H
#define PADDLE_DIALECT_PADDLE_IR_TARGET_H

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/CostModel/DeviceSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <type_traits>

namespace mlir::paddle {

/// The device spec a module compiles for when nothing names one and no
/// calibrated host spec is installed (getDefaultTarget). The only place the
/// default is written.
inline constexpr llvm::StringLiteral kDefaultDevice = "xeon-amx-2c";

/// The widest vector registers of the host CPU, which the JIT and
/// paddle-compile generate code for: 512 with AVX-512, else 256.
int64_t getHostVectorBits();

/// The target of a module that names none: this machine's spec if
/// `paddle-calibrate --install` measured this CPU (loadInstalledHostSpec),
/// else the kDefaultDevice spec; the host's vector width, library `auto`,
/// precision `f32`.
TargetAttr getDefaultTarget(MLIRContext *context);

/// The target of the module that holds `op` (or is `op`), or null.
TargetAttr lookupTarget(Operation *op);

/// lookupTarget, or the default target when the module has none (a pass
/// that runs on functions cannot attach it; the pipelines always have).
TargetAttr getTargetOrDefault(Operation *op);

/// The module's target; a module without one gets the default target
/// attached here, so the IR shows what was compiled for.
TargetAttr getOrAttachTarget(ModuleOp module);

/// Requested changes to a target, as option text gives them: an empty
/// string or 0 keeps the field.
struct TargetChanges {
  std::string device;
  std::string library;
  std::string precision;
  int64_t vectorBits = 0;
};

/// `base` with `changes` applied. A device is a built-in spec name or the
/// path of a spec file (read here). Errors name the option, what it accepts
/// and what was given, e.g. "library must be auto, onednn or none; got
/// 'mkl'".
llvm::Expected<TargetAttr> applyTargetChanges(TargetAttr base,
                                              const TargetChanges &changes);

/// Checks `changes` without a module (the tools check their flags before
/// they read the input): the same errors as applyTargetChanges.
llvm::Error checkTargetChanges(const TargetChanges &changes);

/// The target options, declared once: the compile options (Pipelines.h)
/// and the paddle-set-target pass both hold one. `Owner` is what they
/// register with: `Pass` (a pass's options) or `mlir::detail::PassOptions`
/// (pipeline options).
template <typename Owner> struct TargetOptions {
  template <typename T>
  using Option =
      std::conditional_t<std::is_same_v<Owner, Pass>, Pass::Option<T>,
                         ::mlir::detail::PassOptions::Option<T>>;

  explicit TargetOptions(Owner &owner)
      : device(owner, "device",
               llvm::cl::desc("Device spec to compile for: a built-in name "
                              "(xeon-amx-2c, h200, a100) or the path of a "
                              "JSON spec (paddle-calibrate -o FILE); empty: "
                              "the module's target, else the default")),
        library(owner, "library",
                llvm::cl::desc("Who runs f32 matmuls and convolutions: auto "
                               "(per op, the path the cost model predicts "
                               "faster), onednn (oneDNN for all it "
                               "supports), none (generated code only); "
                               "empty: the module's target, else auto")),
        precision(owner, "precision",
                  llvm::cl::desc("Input precision of matmuls and "
                                 "convolutions: f32, or bf16 (bf16 inputs, "
                                 "f32 accumulation); empty: the module's "
                                 "target, else f32")),
        vectorBits(owner, "vector-bits",
                   llvm::cl::desc("Vector register width code is tiled for "
                                  "(128, 256 or 512; 0: the module's target, "
                                  "else the host CPU's)"),
                   llvm::cl::init(0)) {}
  TargetOptions(const TargetOptions &) = delete;

  Option<std::string> device;
  Option<std::string> library;
  Option<std::string> precision;
  Option<int64_t> vectorBits;

  TargetChanges getChanges() const {
    return {device, library, precision, vectorBits};
  }
  void setChanges(const TargetChanges &changes) {
    device = changes.device;
    library = changes.library;
    precision = changes.precision;
    vectorBits = changes.vectorBits;
  }
};

} // namespace mlir::paddle

#endif // PADDLE_DIALECT_PADDLE_IR_TARGET_H
