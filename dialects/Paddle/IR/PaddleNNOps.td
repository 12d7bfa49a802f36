//===- PaddleNNOps.td - neural network ops ------------------*- tablegen -*-===//
//
// Matrix products, convolution, pooling and random numbers.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_NN_OPS_TD
#define PADDLE_NN_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

def Paddle_MatmulOp : Paddle_Op<"matmul", [Pure,
    SameOperandsElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferMatmul(location, adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), inferredReturnTypes);
    }], "areCompatibleAccumulatorReturnTypes">]> {
  let summary = "Matrix product with NumPy matmul semantics.";
  let description = [{
    `result = numpy.matmul(lhs, rhs)`. Both operands have rank >= 1. The last
    two dims of each operand are the matrix dims (`lhs` is `[..., M, K]`,
    `rhs` is `[..., K, N]`) and the dims before them are batch dims, which
    broadcast as NumPy does. A rank-1 `lhs` `[K]` is read as `[1, K]` and a
    rank-1 `rhs` `[K]` as `[K, 1]`; the added dim is then dropped from the
    result, so vector @ vector gives a rank-0 tensor. The contracted sizes
    `K` must agree.

    Integers multiply and accumulate in the element type (wrapping, as
    NumPy); f16 and bf16 accumulate in f32 and round once at the end, or,
    when the written result type is f32, return the f32 sums unrounded
    (mixed precision: bf16 x bf16 -> f32, what AMX and oneDNN compute;
    `paddle-convert-precision` writes such ops). The result has the
    operands' element type otherwise.

    ```mlir
    %r = paddle.matmul %a, %b : tensor<?x2x3x4xf32>, tensor<4x5xf32>
        -> tensor<?x2x3x5xf32>
    ```
  }];
  let arguments = (ins Paddle_NumericTensor:$lhs, Paddle_NumericTensor:$rhs);
  let results = (outs Paddle_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Paddle_Conv2DOp : Paddle_Op<"conv2d", [Pure,
    SameOperandsElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferConv2D(location, adaptor.getInput().getType(),
          adaptor.getFilter().getType(), adaptor.getStrides(),
          adaptor.getPadding(), adaptor.getDilations(), adaptor.getGroups(),
          inferredReturnTypes);
    }], "areCompatibleAccumulatorReturnTypes">]> {
  let summary = "2-D convolution (cross-correlation), NCHW / OIHW.";
  let description = [{
    `input` is `[N, C, H, W]` and `filter` is `[O, C / groups, KH, KW]`; the
    result is `[N, O, OH, OW]`. Attributes (all optional):

    - `strides` `[sh, sw]` (default `[1, 1]`), each > 0;
    - `padding` `[top, left, bottom, right]` (ONNX `pads` order, default
      zeros), each >= 0: zeros are added around the input;
    - `dilations` `[dh, dw]` (default `[1, 1]`), each > 0;
    - `groups` (default 1): the channels split into `groups` groups, output
      channel `o` seeing only the input channels of group
      `o / (O / groups)`. `C` and `O` must be divisible by `groups`.

    `OH = (H + top + bottom - dh * (KH - 1) - 1) / sh + 1` (floor), likewise
    `OW`; both must be > 0 (the padded input holds the dilated kernel),
    checked by the verifier for static sizes and at run time for dynamic
    ones.
    `result[n, o, y, x] = sum_{c, i, j} padded[n, g * C/groups + c,
    y * sh + i * dh, x * sw + j * dw] * filter[o, c, i, j]` with `g` the group
    of `o`. f16 and bf16 accumulate in f32; as for `paddle.matmul`, an f32
    result type with f16 or bf16 operands keeps the f32 sums unrounded.

    ```mlir
    %r = paddle.conv2d %x, %w {strides = array<i64: 2, 2>,
                               padding = array<i64: 1, 1, 1, 1>, groups = 2}
        : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x5xf32>
    ```
  }];
  let arguments = (ins Paddle_FloatTensor:$input, Paddle_FloatTensor:$filter,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` type($input) `,` type($filter) `->`
    type($result)
  }];
}

class Paddle_Pool2DOp<string mnemonic, Type tensorType, dag extraArgs,
                      string semantics>
    : Paddle_Op<mnemonic, [Pure, SameOperandsAndResultElementType,
        Paddle_InferTypesWith<[{
          return ::mlir::paddle::inferPool2D(location,
              adaptor.getInput().getType(), adaptor.getKernel(),
              adaptor.getStrides(), adaptor.getPadding(),
              adaptor.getCeilMode(), inferredReturnTypes);
        }]>]> {
  let summary = "2-D " # semantics # " pooling over NCHW.";
  let arguments = !con((ins tensorType:$input,
      DenseI64ArrayAttr:$kernel,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      UnitAttr:$ceil_mode), extraArgs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Paddle_MaxPool2DOp : Paddle_Pool2DOp<"max_pool2d", Paddle_NumericTensor,
                                         (ins), "max"> {
  let description = [{
    Takes the maximum over windows of the H and W dims of `input`
    `[N, C, H, W]`. Attributes:

    - `kernel` `[kh, kw]` (required), each > 0;
    - `strides` `[sh, sw]` (default `[1, 1]`), each > 0;
    - `padding` `[top, left, bottom, right]` (ONNX order, default zeros),
      each >= 0 and at most half the kernel size of its dim; padded
      positions never win (they hold -inf, or the lowest integer);
    - `ceil_mode`: round the output size up instead of down.

    The output size follows PyTorch: `OH = floor((H + top + bottom - kh) /
    sh) + 1` (ceil with `ceil_mode`); in ceil mode a last window that would
    start at or after `H + top` (inside the bottom padding only) is dropped.
    Same for `OW`. Output sizes must be > 0. NaN propagates.

    ```mlir
    %r = paddle.max_pool2d %x {kernel = array<i64: 3, 3>,
                               strides = array<i64: 2, 2>, ceil_mode}
        : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    ```
  }];
}

def Paddle_AvgPool2DOp : Paddle_Pool2DOp<"avg_pool2d", Paddle_FloatTensor,
                                         (ins UnitAttr:$count_include_pad),
                                         "average"> {
  let description = [{
    Averages windows of the H and W dims of `input` `[N, C, H, W]`, with
    the attributes of `paddle.max_pool2d` (`kernel`, `strides`, `padding`,
    `ceil_mode`, same output size) and `count_include_pad`.

    The sum covers the input elements in the window (padding adds 0). The
    divisor follows PyTorch: with `count_include_pad`, the size of the window
    clipped to the padded input `[-top, H + bottom) x [-left, W + right)`
    (ceil mode windows may reach past it); without, the number of input
    elements in the window. f16 and bf16 sum in f32.

    ```mlir
    %r = paddle.avg_pool2d %x {kernel = array<i64: 2, 2>,
                               strides = array<i64: 2, 2>,
                               padding = array<i64: 1, 1, 1, 1>}
        : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
    ```
  }];
}

def Paddle_RngUniformOp : Paddle_Op<"rng_uniform", [Pure]> {
  let summary = "Deterministic uniform random numbers from a seed.";
  let description = [{
    Fills the result with numbers in `[low, high)` (attributes, F64,
    defaults 0 and 1; `low <= high`, both finite), a pure function of the
    rank-0 i64 `seed` and of the position. Each dynamic dim of the result
    takes its size from one `index` operand, in order, checked at run time
    as `paddle.iota`'s.

    The element with row-major linear index `i` is, in uint64 arithmetic
    (wrapping):

    ```
    z = seed ^ (i * 0x9E3779B97F4A7C15)
    z = z + 0x9E3779B97F4A7C15            // splitmix64 finalizer from here
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    z = z ^ (z >> 31)
    u = (z >> 11) * 2^-53                 // f64
    u = (z >> 40) * 2^-24                 // f32, f16, bf16
    v = low + (high - low) * u            // in f64
    ```

    and `v` is rounded to the element type (f16 and bf16 through f32). The
    rounding can give `high` itself when `high - low` is large relative to
    the precision of the element type.

    ```mlir
    %r = paddle.rng_uniform %seed [%n] {low = -1.0, high = 1.0}
        : tensor<i64> -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$seed,
                       Variadic<Index>:$dynamic_sizes,
                       DefaultValuedAttr<F64Attr, "0.0">:$low,
                       DefaultValuedAttr<F64Attr, "1.0">:$high);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $seed (`[` $dynamic_sizes^ `]`)? attr-dict `:` type($seed) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Paddle_RngUniformBlockOp : Paddle_Op<"rng_uniform_block", [Pure]> {
  let summary = "A block of paddle.rng_uniform's numbers.";
  let description = [{
    The block at `offsets` (one `index` per dim) of
    `paddle.rng_uniform %seed` with the static shape `whole_shape` and the
    same `low` and `high`: result element `(j...)` is the whole tensor's
    element `(offsets + j...)`, hashed from its row-major linear index in
    the whole tensor. A device of a mesh makes its block of a split
    rng_uniform this way (the partition of `paddle.rng_uniform`): each
    device draws only its own numbers, and together they are the unsharded
    run's. The block must lie inside the whole tensor (offsets are checked
    at run time).

    ```mlir
    %r = paddle.rng_uniform_block %seed [%o0, %c0] of [8, 6]
        : tensor<i64> -> tensor<4x6xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$seed,
                       Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$whole_shape,
                       DefaultValuedAttr<F64Attr, "0.0">:$low,
                       DefaultValuedAttr<F64Attr, "1.0">:$high);
  let results = (outs Paddle_FloatTensor:$result);
  let assemblyFormat = [{
    $seed `[` $offsets `]` `of` $whole_shape attr-dict `:` type($seed) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // PADDLE_NN_OPS_TD
