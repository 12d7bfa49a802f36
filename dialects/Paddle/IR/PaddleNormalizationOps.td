//===- PaddleNormalizationOps.td - softmax and normalization -*- tablegen -*-===//

#ifndef PADDLE_NORMALIZATION_OPS_TD
#define PADDLE_NORMALIZATION_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

class Paddle_SoftmaxBaseOp<string mnemonic, string semantics>
    : Paddle_Op<mnemonic, [Pure, SameOperandsAndResultElementType,
        Paddle_InferTypesWith<[{
          return ::mlir::paddle::inferSoftmax(location,
              adaptor.getX().getType(), adaptor.getAxis(),
              inferredReturnTypes);
        }]>]> {
  let summary = "Computes " # mnemonic # " along one axis.";
  let description = "`result = " # semantics # "`, where `m` is the maximum"
      # " of `x` along `axis` and the sum runs along `axis` too. Subtracting"
      # " `m` keeps the exponentials from overflowing; the result is the"
      # " mathematical " # mnemonic # ". f16 and bf16 compute in f32.\n\n"
      # "- `axis` (`i64`): the normalized dim; negative values count from"
      # " the end.\n\n"
      # "```mlir\n"
      # "%r = paddle." # mnemonic # " %x axis = -1 : tensor<?x10xf32> ->"
      # " tensor<?x10xf32>\n"
      # "```";
  let arguments = (ins Paddle_FloatTensor:$x, I64Attr:$axis);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $x `axis` `=` $axis attr-dict `:` type($x) `->` type($result)
  }];
}

def Paddle_SoftmaxOp
    : Paddle_SoftmaxBaseOp<"softmax", "exp(x - m) / sum(exp(x - m))">;
def Paddle_LogSoftmaxOp
    : Paddle_SoftmaxBaseOp<"log_softmax", "(x - m) - log(sum(exp(x - m)))">;

//===----------------------------------------------------------------------===//
// Layer and batch normalization
//===----------------------------------------------------------------------===//

def Paddle_LayerNormOp : Paddle_Op<"layer_norm", [Pure,
    AttrSizedOperandSegments, SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      ::mlir::Value scale = adaptor.getScale(), bias = adaptor.getBias();
      return ::mlir::paddle::inferLayerNorm(location, adaptor.getX().getType(),
          scale ? scale.getType() : ::mlir::Type(),
          bias ? bias.getType() : ::mlir::Type(), adaptor.getAxes(),
          inferredReturnTypes);
    }]>]> {
  let summary = "Layer normalization over some axes.";
  let description = [{
    Normalizes `x` over the dims in `axes`:

    `result = (x - mean) / sqrt(var + epsilon) * scale + bias`

    where `mean` and `var` (the biased variance, dividing by the count) are
    taken over `axes` and broadcast back. `scale` and `bias` are optional;
    each broadcasts to the shape of `x` as in numpy (it may not enlarge it).
    f16 and bf16 compute in f32.

    - `axes` (`array<i64>`): the normalized dims, at least one; negative
      values count from the end; a repeated axis is an error.
    - `epsilon` (`f64`, default 1e-5): added to the variance; must be
      finite and non-negative.

    ```mlir
    %y = paddle.layer_norm %x scale %g bias %b axes = [-1]
        : tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %z = paddle.layer_norm %x axes = [1, 2] {epsilon = 1.0e-6 : f64}
        : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Paddle_FloatTensor:$x,
                       Optional<Paddle_FloatTensor>:$scale,
                       Optional<Paddle_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`scale` $scale^)? (`bias` $bias^)? `axes` `=` $axes attr-dict `:`
    type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Paddle_BatchNormInferenceOp : Paddle_Op<"batch_norm_inference", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferBatchNormInference(location,
          adaptor.getX().getType(),
          {adaptor.getScale().getType(), adaptor.getBias().getType(),
           adaptor.getMean().getType(), adaptor.getVariance().getType()},
          inferredReturnTypes);
    }]>]> {
  let summary = "Batch normalization with given statistics.";
  let description = [{
    Normalizes `x` of shape `[N, C, ...]` per channel (dim 1) with running
    statistics, as at inference time:

    `result = (x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + bias[c]`

    `scale`, `bias`, `mean` and `variance` are 1-D tensors of size C. f16 and
    bf16 compute in f32.

    - `epsilon` (`f64`, default 1e-5): added to the variance; must be
      finite and non-negative.

    ```mlir
    %y = paddle.batch_norm_inference %x, %scale, %bias, %mean, %var
        {epsilon = 1.0e-3 : f64}
        : tensor<?x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>,
          tensor<3xf32> -> tensor<?x3x8x8xf32>
    ```
  }];
  let arguments = (ins Paddle_FloatTensor:$x, Paddle_FloatTensor:$scale,
                       Paddle_FloatTensor:$bias, Paddle_FloatTensor:$mean,
                       Paddle_FloatTensor:$variance,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` type($x) `,`
    type($scale) `,` type($bias) `,` type($mean) `,` type($variance) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // PADDLE_NORMALIZATION_OPS_TD
