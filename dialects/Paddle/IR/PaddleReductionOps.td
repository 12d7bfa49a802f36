//===- PaddleReductionOps.td - reductions --------------------*- tablegen -*-===//

#ifndef PADDLE_REDUCTION_OPS_TD
#define PADDLE_REDUCTION_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

//===----------------------------------------------------------------------===//
// Reductions over a set of axes
//===----------------------------------------------------------------------===//

/// `hasIdentity`: reducing nothing gives the op's neutral value (sum 0,
/// product 1; mean divides by 0). Without one (max, min) a reduced dim of
/// size 0 is an error unless `allow_empty` is set.
class Paddle_ReduceOp<string mnemonic, Type operandType, string semantics,
                      string numpyName, bit hasIdentity = 1>
    : Paddle_Op<mnemonic, [Pure, SameOperandsAndResultElementType,
        Paddle_InferTypesWith<[{
          return ::mlir::paddle::inferReduction(location,
              adaptor.getX().getType(), adaptor.getAxes(),
              adaptor.getKeepdims(), /*resultElementType=*/nullptr,
              inferredReturnTypes);
        }]>]> {
  let summary = "Reduces a tensor by " # semantics # " over some axes.";
  let description = "Computes the " # semantics # " of `x` over the dims"
      # " listed in `axes`, as `numpy." # numpyName # "(x, axis=axes,"
      # " keepdims=keepdims)`.\n\n"
      # "- `axes` (optional, `array<i64>`): the reduced dims; negative values"
      # " count from the end; a repeated axis is an error. Absent means every"
      # " axis; an empty list reduces nothing.\n"
      # "- `keepdims` (unit): keep each reduced dim with size 1 instead of"
      # " dropping it.\n"
      # !if(hasIdentity, "",
          "- `allow_empty` (unit): reducing a dim of size 0 gives the neutral"
          # " value (-inf / the smallest integer for max, +inf / the largest"
          # " for min), as ONNX's ReduceMax and ReduceMin do.\n")
      # "\n"
      # "Integer sums and products accumulate in the element type and wrap"
      # " (numpy with `dtype=x.dtype`). f16 and bf16 accumulate in f32."
      # " Float max and min propagate NaN as numpy does. "
      # !if(hasIdentity,
          "Reducing a dim of size 0 gives the neutral value (0 for sum, 1 for"
          # " product, NaN for mean) as numpy does.",
          "A reduced dim of size 0 has no " # semantics # " and, as in numpy,"
          # " is an error unless `allow_empty` is set: rejected by the"
          # " verifier when the dim is static, a run-time error naming the"
          # " op's location when it is dynamic.")
      # "\n\n"
      # "```mlir\n"
      # "%r = paddle." # mnemonic # " %x axes = [1, -1] keepdims"
      # " : tensor<4x?x8xf32> -> tensor<4x1x1xf32>\n"
      # "%s = paddle." # mnemonic # " %x : tensor<4x?x8xf32> -> tensor<f32>\n"
      # "```";
  let arguments = !con(
      (ins operandType:$x, OptionalAttr<DenseI64ArrayAttr>:$axes,
           UnitAttr:$keepdims),
      !if(hasIdentity, (ins), (ins UnitAttr:$allow_empty)));
  let results = (outs operandType:$result);
  let assemblyFormat = "$x (`axes` `=` $axes^)? (`keepdims` $keepdims^)? "
      # !if(hasIdentity, "", "(`allow_empty` $allow_empty^)? ")
      # "attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = !not(hasIdentity);
}

def Paddle_ReduceSumOp
    : Paddle_ReduceOp<"reduce_sum", Paddle_NumericTensor, "sum", "sum">;
def Paddle_ReduceProdOp
    : Paddle_ReduceOp<"reduce_prod", Paddle_NumericTensor, "product", "prod">;
def Paddle_ReduceMaxOp
    : Paddle_ReduceOp<"reduce_max", Paddle_NumericTensor, "maximum", "max",
                      /*hasIdentity=*/0>;
def Paddle_ReduceMinOp
    : Paddle_ReduceOp<"reduce_min", Paddle_NumericTensor, "minimum", "min",
                      /*hasIdentity=*/0>;
def Paddle_ReduceMeanOp
    : Paddle_ReduceOp<"reduce_mean", Paddle_FloatTensor, "mean", "mean">;

//===----------------------------------------------------------------------===//
// Index of the maximum
//===----------------------------------------------------------------------===//

def Paddle_ArgmaxOp : Paddle_Op<"argmax", [Pure,
    Paddle_InferTypesWith<[{
      int64_t axis = adaptor.getAxis();
      return ::mlir::paddle::inferReduction(location,
          adaptor.getX().getType(), ::llvm::ArrayRef<int64_t>(axis),
          adaptor.getKeepdims(), ::mlir::IntegerType::get(context, 64),
          inferredReturnTypes);
    }]>]> {
  let summary = "Index of the largest element along one axis.";
  let description = [{
    The position along `axis` of the largest element of `x`, as
    `numpy.argmax(x, axis=axis, keepdims=keepdims)`: the first occurrence
    wins ties, and NaN counts as larger than any number (so the first NaN
    wins). The result is `i64`. A dim of size 0 has no largest element: as
    in numpy, reducing one is an error (rejected by the verifier when the
    dim is static, a run-time error naming the op's location when it is
    dynamic).

    - `axis` (`i64`): the reduced dim; negative values count from the end.
    - `keepdims` (unit): keep the reduced dim with size 1.

    ```mlir
    %i = paddle.argmax %x axis = -1 : tensor<?x10xf32> -> tensor<?xi64>
    %j = paddle.argmax %x axis = 1 keepdims : tensor<?x10xf32> -> tensor<?x1xi64>
    ```
  }];
  let arguments = (ins Paddle_NumericTensor:$x, I64Attr:$axis,
                       UnitAttr:$keepdims);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $x `axis` `=` $axis (`keepdims` $keepdims^)? attr-dict `:` type($x) `->`
    type($result)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

#endif // PADDLE_REDUCTION_OPS_TD
