//===- PaddleInterfaces.td - paddle op interfaces ------------*- tablegen -*-===//
//
// Interfaces of our own that paddle ops implement. Rules live in C++ files
// next to the ops (Gradient*.cpp) and are attached as external models when
// the dialect is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_INTERFACES_TD
#define PADDLE_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Paddle_GradientOpInterface : OpInterface<"PaddleGradientOpInterface"> {
  let cppNamespace = "::mlir::paddle";
  let description = [{
    The reverse-mode gradient rule (vector-Jacobian product) of an op, used
    by the `paddle-autodiff` pass. Given one cotangent per result of the op
    (a null value stands for a zero cotangent; the pass calls the rule only
    when at least one is non-null), the rule builds, at the builder's
    insertion point, one gradient per operand with the operand's type, or a
    null value where the operand gets no gradient (integer and boolean
    operands, operands the op's output does not depend on smoothly).

    Rules build only `paddle` ops (and `tensor.dim` / `tensor.splat` /
    `tensor.cast` for dynamic shapes) so that the functions the pass
    generates can be differentiated again. A rule may read the op's operands
    and results: the pass calls it on the primal op it cloned into the
    gradient function. A rule that cannot handle a case (for example a
    dynamic dim where it needs a static size) emits an error at the op's
    location and fails.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the operand gradients from the result cotangents.",
      "::llvm::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // PADDLE_INTERFACES_TD
