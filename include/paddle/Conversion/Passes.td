//===- Passes.td - paddle conversion passes ------------------*- tablegen -*-===//

#ifndef PADDLE_CONVERSION_PASSES_TD
#define PADDLE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertPaddleToLinalgPass : Pass<"paddle-convert-paddle-to-linalg"> {
  let summary = "Lower every paddle op to linalg, tensor, arith and math.";
  let description = [{
    Rewrites each `paddle` op into upstream dialects on tensors: elementwise
    ops and broadcasting into `linalg.generic`, contractions into named linalg
    ops, shape ops into `tensor` ops. Static and dynamic shapes are handled;
    where two dynamic dims must agree at run time a `cf.assert` checks it.
    An op that cannot be lowered is reported with its location.

    ```mlir
    %r = paddle.add %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
    ```
    becomes a `linalg.generic` over a `tensor.empty` of the result shape, with
    `%b` read through a map that drops the leading dim.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // PADDLE_CONVERSION_PASSES_TD
