//===- PaddleFusionOps.td - fused groups -----------------------*- tablegen -*-===//
//
// `paddle-fuse` wraps the ops that should run as one kernel in a
// `paddle.fusion` op. The group is isolated from above: everything it reads
// comes in as an operand, so later passes (elementwise fusion, tile-and-fuse)
// work inside one group without reaching across its boundary.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_FUSION_OPS_TD
#define PADDLE_FUSION_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Paddle_FusionOp : Paddle_Op<"fusion", [IsolatedFromAbove,
    RecursiveMemoryEffects, RecursivelySpeculatable,
    SingleBlockImplicitTerminator<"::mlir::paddle::YieldOp">]> {
  let summary = "A group of ops that runs as one fused kernel.";
  let description = [{
    The body computes the results from the block arguments, which are the
    `inputs` in order; `paddle.yield` returns them. `kind` names the pattern
    the group was formed around: `elementwise` (a chain of elementwise and
    broadcast ops), `reduction` (a reduction with the elementwise ops that
    feed it and consume its result), `softmax`, `layer_norm` (the op with its
    elementwise neighbours), `matmul` and `conv` (the contraction with its
    bias, activation and residual epilogue); any other kind is an error.

    Made by `paddle-fuse` from a cost-model decision and lowered by
    `paddle-lower-fusion` (docs/fusion.md); the group itself computes exactly
    what its body's ops compute.

    ```mlir
    %r = paddle.fusion "elementwise"(%x, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<8xf32>):
      %0 = paddle.add %a0, %a1 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %1 = paddle.relu %0 : tensor<4x8xf32> -> tensor<4x8xf32>
      paddle.yield %1 : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind (`(` $inputs^ `:` type($inputs) `)`)? (`->` type($results)^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op whose result the group yields (the last op of the body).
    ::mlir::paddle::YieldOp getYield();
  }];
}

def Paddle_YieldOp : Paddle_Op<"yield", [Pure, ReturnLike, Terminator,
    HasParent<"FusionOp">]> {
  let summary = "Returns the results of a `paddle.fusion` group.";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

#endif // PADDLE_FUSION_OPS_TD
