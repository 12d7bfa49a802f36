//===- PaddleShapeOps.td - ops that move data ------------------*- tablegen -*-===//
//
// Reshaping, broadcasting, permuting, slicing, joining, padding, gathering
// and scattering. These ops never compute new values (scatter_add adds), so
// their lowerings and execution tests are exact.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_SHAPE_OPS_TD
#define PADDLE_SHAPE_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Paddle_ReshapeOp : Paddle_Op<"reshape", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferReshape(location, adaptor.getX().getType(),
          adaptor.getShape(), inferredReturnTypes);
    }]>]> {
  let summary = "Gives a tensor a new shape with the same elements.";
  let description = [{
    `numpy.reshape(x, shape)` in row-major order. `shape` lists the sizes of
    the result; every entry is non-negative except at most one `-1`, which
    stands for the size that keeps the element count (it must divide evenly,
    and the other entries must then have a non-zero product).

    When `x` has dynamic dims, the `-1` dim of the result is dynamic and its
    size is computed at run time; without a `-1` the result is static and the
    element counts must agree at run time (checked by an assertion in the
    lowered code).

    ```mlir
    %r = paddle.reshape %x shape = [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
    %d = paddle.reshape %y shape = [-1, 4] : tensor<?x8xf32> -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, DenseI64ArrayAttr:$shape);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `shape` `=` $shape attr-dict `:` type($x) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_BroadcastToOp : Paddle_Op<"broadcast_to", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferBroadcastTo(location,
          adaptor.getX().getType(), adaptor.getShape(), inferredReturnTypes);
    }]>]> {
  let summary = "Broadcasts a tensor to a given shape.";
  let description = [{
    `numpy.broadcast_to(x, shape)`: `x` is aligned with `shape` at the
    trailing dims, and each dim of `x` must equal the target size or be 1
    (then it is repeated). `shape` may have more dims than `x` (leading dims
    are added). A `-1` in `shape` keeps the size of the aligned dim of `x`,
    which may be dynamic; there must be such a dim.

    A dynamic dim of `x` is never assumed to be 1: against a static target
    size it must equal that size at run time (checked by an assertion in the
    lowered code), as for the broadcasting elementwise ops.

    ```mlir
    %r = paddle.broadcast_to %x shape = [2, 3, 4] : tensor<3x1xf32> -> tensor<2x3x4xf32>
    %d = paddle.broadcast_to %y shape = [5, -1] : tensor<?xf32> -> tensor<5x?xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, DenseI64ArrayAttr:$shape);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `shape` `=` $shape attr-dict `:` type($x) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_TransposeOp : Paddle_Op<"transpose", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferTranspose(location,
          adaptor.getX().getType(), adaptor.getPerm(), inferredReturnTypes);
    }]>]> {
  let summary = "Permutes the dims of a tensor.";
  let description = [{
    `numpy.transpose(x, perm)`: `result.shape[i] = x.shape[perm[i]]` and
    `result[j0, ..., jn] = x[i0, ..., in]` with `i_perm[k] = j_k`. `perm`
    must be a permutation of `0 .. rank-1`.

    ```mlir
    %r = paddle.transpose %x perm = [2, 0, 1] : tensor<2x3x?xf32> -> tensor<?x2x3xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `perm` `=` $perm attr-dict `:` type($x) `->` type($result)
  }];
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// True when `x` is static and the permutation keeps its dims of size
    /// other than 1 in their order: the result has x's elements in x's
    /// order, a reshape.
    bool movesOnlyUnitDims();
  }];
}

def Paddle_SliceOp : Paddle_Op<"slice", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferSlice(location, adaptor.getX().getType(),
          adaptor.getStart(), adaptor.getLimit(), adaptor.getStride(),
          inferredReturnTypes);
    }]>]> {
  let summary = "A strided slice of a tensor.";
  let description = [{
    `x[start0:limit0:stride0, ..., startn:limitn:striden]` as in numpy, with
    one entry per dim in each of `start`, `limit` and `stride`. Starts and
    limits are non-negative and are clamped to the size of their dim (so a
    limit past the end means "to the end"); strides are positive. Dim `d` of
    the result has `max(0, ceil((min(limit, n) - min(start, n)) / stride))`
    elements, `n` the size of dim `d` of `x`; it is dynamic when `n` is.

    ```mlir
    %r = paddle.slice %x start = [0, 1] limit = [4, 100] stride = [2, 1]
        : tensor<5x6xf32> -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `start` `=` $start `limit` `=` $limit `stride` `=` $stride attr-dict
    `:` type($x) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_ConcatOp : Paddle_Op<"concat", [Pure,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferConcat(location,
          adaptor.getInputs().getTypes(),
          static_cast<int64_t>(adaptor.getAxis()), inferredReturnTypes);
    }]>]> {
  let summary = "Joins tensors along one dim.";
  let description = [{
    `numpy.concatenate(inputs, axis)`. There is at least one input; all have
    the same element type and rank, and the same sizes in every dim but
    `axis` (dynamic sizes must agree at run time, checked by an assertion in
    the lowered code). A negative `axis` counts from the end. The size along
    `axis` is the sum of the inputs' sizes, dynamic when any of them is.

    ```mlir
    %r = paddle.concat %a, %b axis = -1
        : tensor<2x3xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
    ```
  }];
  let arguments = (ins Variadic<Paddle_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_PadOp : Paddle_Op<"pad", [Pure,
    SameOperandsAndResultElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferPad(location, adaptor.getX().getType(),
          adaptor.getLow(), adaptor.getHigh(), inferredReturnTypes);
    }]>]> {
  let summary = "Pads a tensor with a constant.";
  let description = [{
    `numpy.pad(x, list(zip(low, high)), constant_values=value)`: dim `d`
    gets `low[d]` elements of `value` before the data and `high[d]` after
    it. `low` and `high` have one non-negative entry per dim; `value` is an
    integer or float attribute of the element type.

    ```mlir
    %r = paddle.pad %x low = [1, 0] high = [2, 3] value = 0.0 : f32
        : tensor<2x?xf32> -> tensor<5x?xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, TypedAttrInterface:$value);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `low` `=` $low `high` `=` $high `value` `=` $value attr-dict
    `:` type($x) `->` type($result)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Paddle_GatherOp : Paddle_Op<"gather", [Pure,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferGather(location, adaptor.getX().getType(),
          adaptor.getIndices().getType(),
          static_cast<int64_t>(adaptor.getAxis()), inferredReturnTypes);
    }]>]> {
  let summary = "Takes elements along one dim by index.";
  let description = [{
    `numpy.take(x, indices, axis)`: the result has shape
    `x.shape[:axis] + indices.shape + x.shape[axis+1:]` and
    `result[a..., i..., b...] = x[a..., indices[i...], b...]`. A negative
    `axis` counts from the end. Indices are `i32` or `i64` in `[-size, size)`
    of the dim, as in numpy and ONNX: a negative index counts from the end.
    Any other index is an error, checked before the gather in one pass over
    the indices (none for constant indices in range): the call fails with a
    message naming the op's location. So gathering from an empty dim is an
    error unless there are no indices (rejected by the verifier when both
    are static).

    ```mlir
    %r = paddle.gather %x, %i axis = 1
        : tensor<4x5xf32>, tensor<2x3xi64> -> tensor<4x2x3xf32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x, Paddle_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $x `,` $indices `axis` `=` $axis attr-dict `:` type($x) `,` type($indices)
    `->` type($result)
  }];
}

def Paddle_ScatterAddOp : Paddle_Op<"scatter_add", [Pure,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferScatterAdd(location,
          adaptor.getX().getType(), adaptor.getIndices().getType(),
          adaptor.getUpdates().getType(),
          static_cast<int64_t>(adaptor.getAxis()), inferredReturnTypes);
    }]>]> {
  let summary = "Adds updates into a copy of a tensor at indices.";
  let description = [{
    `r = x.copy(); numpy.add.at(r, (slice(None),) * axis + (indices,),
    updates)`: for every position `(a..., i..., b...)` of `updates`,
    `r[a..., indices[i...], b...] += updates[a..., i..., b...]`, where
    repeated indices add up. `updates` has shape
    `x.shape[:axis] + indices.shape + x.shape[axis+1:]` and the element type
    of `x`. A negative `axis` counts from the end. Indices are in
    `[-size, size)` of the dim, a negative one counting from the end; any
    other is an error at run time, as for `paddle.gather`. Dynamic sizes of
    `updates` must agree with `x` and `indices` at run time (checked by
    assertions in the lowered code).

    ```mlir
    %r = paddle.scatter_add %x, %i, %u axis = 0
        : tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32> -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins Paddle_NumericTensor:$x, Paddle_IndexTensor:$indices,
                       Paddle_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Paddle_NumericTensor:$result);
  let assemblyFormat = [{
    $x `,` $indices `,` $updates `axis` `=` $axis attr-dict `:` type($x) `,`
    type($indices) `,` type($updates) `->` type($result)
  }];
}

#endif // PADDLE_SHAPE_OPS_TD
